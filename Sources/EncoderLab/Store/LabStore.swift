import Foundation

/// The lab's version, recorded with every run.
public let labVersion = "0.1.0"

/// The lab's SQLite database: the only place that writes runs and frames. The schema is a public interface,
/// documented table by table in the README ("Database schema").
public final class LabStore {
    public let database: Database

    /// The `runs` and `frames` tables (README, "Database schema"). pts/dts are in the run's timebase.
    static let schema = """
    CREATE TABLE IF NOT EXISTS runs (
        run_id          INTEGER PRIMARY KEY AUTOINCREMENT,
        experiment      TEXT NOT NULL,
        clip            TEXT NOT NULL,
        settings        TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        frames          INTEGER,
        bytes           INTEGER,
        duration_s      REAL,
        timebase_num    INTEGER,
        timebase_den    INTEGER,
        stream_path     TEXT,
        crop            TEXT,
        x264_version    TEXT NOT NULL,
        lab_version     TEXT NOT NULL,
        ffmpeg_version  TEXT,
        machine         TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        finished_at     TEXT,
        width           INTEGER,
        height          INTEGER,
        fps_num         INTEGER,
        fps_den         INTEGER,
        input_frames    INTEGER,
        truncated_bytes INTEGER,
        warnings        TEXT,
        error           TEXT
    );
    CREATE TABLE IF NOT EXISTS frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id),
        coded_index   INTEGER NOT NULL,
        display_index INTEGER NOT NULL,
        type          TEXT NOT NULL CHECK (type IN ('IDR', 'I', 'P', 'Bref', 'B')),
        keyframe      INTEGER NOT NULL,
        size_bytes    INTEGER NOT NULL,
        header_bytes  INTEGER NOT NULL,
        filler_bytes  INTEGER NOT NULL,
        pts           INTEGER NOT NULL,
        dts           INTEGER NOT NULL,
        qp            REAL NOT NULL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        psnr_avg      REAL,
        ssim          REAL,
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, status);
    CREATE TABLE IF NOT EXISTS parameter_sets (
        run_id                   INTEGER NOT NULL REFERENCES runs(run_id),
        kind                     TEXT NOT NULL CHECK (kind IN ('sps', 'pps')),
        id                       INTEGER NOT NULL,
        profile_idc              INTEGER,
        level_idc                INTEGER,
        width                    INTEGER,
        height                   INTEGER,
        entropy_coding_mode_flag INTEGER,
        max_num_reorder_frames   INTEGER,
        fields                   TEXT NOT NULL,
        PRIMARY KEY (run_id, kind, id)
    );
    CREATE TABLE IF NOT EXISTS bitstream_checks (
        run_id   INTEGER NOT NULL REFERENCES runs(run_id),
        name     TEXT NOT NULL,
        expected TEXT NOT NULL,
        actual   TEXT NOT NULL,
        passed   INTEGER NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE IF NOT EXISTS decoded_frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id),
        source        TEXT NOT NULL CHECK (source IN ('stream', 'packets')),
        display_index INTEGER NOT NULL,
        sse_y         INTEGER NOT NULL,
        sse_u         INTEGER NOT NULL,
        sse_v         INTEGER NOT NULL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        matches_x264  INTEGER NOT NULL,
        PRIMARY KEY (run_id, source, display_index)
    );
    """

    /// The schema's version, kept in `PRAGMA user_version`: 1 is ``schema`` as it stands. A database written
    /// before versions were kept (user_version 0, with `runs` and `frames` holding every column of version 1)
    /// is the same schema and is given version 1 when opened.
    public static let schemaVersion: Int32 = 1

    /// Every table of ``schema`` and its columns, read from the schema itself in an in-memory database.
    static let schemaColumns: [String: Set<String>] = {
        do {
            let memory = try Database(path: ":memory:", busyTimeoutMilliseconds: 0)
            try memory.execute(schema)
            var tables: [String: Set<String>] = [:]
            for row in try memory.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                guard let table = row[0].string else { continue }
                tables[table] = Set(try memory.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0[0].string })
            }
            return tables
        } catch {
            preconditionFailure("the lab's own schema does not load: \(error)")
        }
    }()

    /// Opens (creating if needed) the database and its tables; creates the parent folder.
    ///
    /// The file is inspected before anything is written to it (no WAL switch, no table): a database of a newer
    /// schema version, or one that is not the lab's, is refused untouched. Then it is switched to WAL, and a new
    /// database (or one of the version before user_version was kept) gets the tables and `user_version` 1 in
    /// one transaction.
    /// - Parameter busyTimeoutMilliseconds: how long to wait for another process's lock; nil takes
    ///   `ENCLAB_DB_TIMEOUT_MS` from the environment, else 10 s (``Database/busyTimeout(environment:)``).
    /// - Throws: `.usage` for an empty path or an SQLite special name (`:memory:`, `file:` URIs) that would keep
    ///   nothing, or a bad `ENCLAB_DB_TIMEOUT_MS`;
    ///   `.data` for a file that is not an SQLite database or is damaged, one written by a newer enclab
    ///   (user_version > 1), or one that is not enclab's ("not an enclab database (tables: a, b)");
    ///   `.cantCreate` when the file or its folder cannot be created or written (a read-only mount, an immutable
    ///   file); `.tempFail` when another process holds the database locked past the busy timeout;
    ///   `.ioError` for a full disk or an I/O error.
    public init(path: String, busyTimeoutMilliseconds: Int32? = nil) throws {
        if path.isEmpty || path.hasPrefix(":") || path.hasPrefix("file:") {
            throw LabError.usage("--db needs a database file path, got '\(path)' (SQLite would keep nothing there)")
        }
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        database = try Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // Only reads until the file is known to be the lab's (or new).
        let needsTables = try Self.inspect(database)
        if database.isReadOnly {
            throw LabError.cantCreate("\(path): cannot write the database: SQLite could open it only for reading\(Self.writeProblem(path).map { " (\($0))" } ?? "")")
        }
        try database.execute("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;")
        if needsTables {
            try database.transaction {
                try database.execute(Self.schema)
                try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
            }
        }
    }

    /// Why `path` cannot be written, as `access(2)` says (a read-only mount, an immutable file; root too).
    private static func writeProblem(_ path: String) -> String? {
        access(path, W_OK) == 0 ? nil : String(cString: strerror(errno))
    }

    /// Decides, by reading only, whether the open file is the lab's: returns true when tables must be created
    /// (a new database, or user_version 0 with the lab's runs and frames), false for a complete version 1.
    /// - Throws: `.data` for a newer version or a database that is not the lab's.
    static func inspect(_ database: Database) throws -> Bool {
        let path = database.path
        let version = try database.query("PRAGMA user_version").first?.first?.int ?? 0
        // Every object (table, index, view, trigger) but SQLite's own: only a file with none is new.
        let objects = try database.query("""
            SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        let tables = objects.filter { $0[0] == .text("table") }.compactMap { $0[1].string }
        if version > Int64(schemaVersion) {
            throw LabError.data("\(path): written by a newer enclab (schema version \(version); this enclab knows version \(schemaVersion) and older)")
        }
        if version == 0 && objects.isEmpty { return true }
        var lacking: [String] = []
        for table in tables.filter({ schemaColumns[$0] != nil }) {
            let columns = Set(try database.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0[0].string })
            let names = schemaColumns[table]!.subtracting(columns).sorted()
            if !names.isEmpty {
                lacking.append("\(table) lacks \(names.prefix(4).joined(separator: ", "))\(names.count > 4 ? " and \(names.count - 4) more" : "")")
            }
        }
        guard version >= 0, tables.contains("runs"), tables.contains("frames"), lacking.isEmpty else {
            let shown = tables.count > 12 ? tables.prefix(12).joined(separator: ", ") + ", ... (\(tables.count) in all)" : tables.joined(separator: ", ")
            let versionNote = version == 0 ? "" : "user_version \(version), "
            throw LabError.data("\(path): not an enclab database (\(versionNote)tables: \(shown.isEmpty ? "none" : shown)\(lacking.isEmpty ? "" : "; " + lacking.joined(separator: "; ")))")
        }
        return version == 0 || !Set(tables).isSuperset(of: schemaColumns.keys)
    }

    /// What is known of a run when it starts.
    public struct RunStart: Sendable {
        public var experiment: String
        public var clip: String
        /// The settings as JSON text.
        public var settingsJSON: String
        public var crop: String?
        public var ffmpegVersion: String?
        public var width: Int
        public var height: Int
        public var fpsNum: Int
        public var fpsDen: Int
    }

    /// Records a run as `running` and returns its run_id.
    public func beginRun(_ start: RunStart) throws -> Int64 {
        let statement = try database.prepare("""
            INSERT INTO runs (experiment, clip, settings, status, crop, x264_version, lab_version, ffmpeg_version,
                              machine, created_at, width, height, fps_num, fps_den)
            VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try statement.run([.text(start.experiment), .text(start.clip), .text(start.settingsJSON),
                           start.crop.map(SQLValue.text) ?? .null, .text(x264Version), .text(labVersion),
                           start.ffmpegVersion.map(SQLValue.text) ?? .null, .text(Machine.current.json),
                           .text(Self.timestamp()), .integer(Int64(start.width)), .integer(Int64(start.height)),
                           .integer(Int64(start.fpsNum)), .integer(Int64(start.fpsDen))])
        return database.lastInsertRowID
    }

    /// What is known of a run when it ends well.
    public struct RunEnd {
        public var frames: [EncodedFrame]
        public var timebaseNum: Int
        public var timebaseDen: Int
        public var durationSeconds: Double
        public var streamPath: String
        /// Encoded picture size (for the decoded PSNRs).
        public var width: Int
        public var height: Int
        public var inputFrames: Int
        public var truncatedBytes: Int?
        public var warnings: [String]
        /// The settings JSON completed with what x264 resolved.
        public var settingsJSON: String
        /// The stream parsed back: checks and parameter sets.
        public var verification: StreamVerification?
        /// The independent decodes: (source, display index, errors, PSNRs, agrees with x264).
        public var decoded: [DecodedFrameRecord]
    }

    /// One picture of an independent decode, as the `decoded_frames` table holds it.
    public struct DecodedFrameRecord: Sendable {
        /// `stream` (the written Annex B file) or `packets` (the stream rebuilt from packets).
        public var source: String
        public var displayIndex: Int
        public var errors: PlaneErrors
        /// Whether x264's per-plane squared error (from its PSNR; 0 for lossless) equals this one.
        public var matchesX264: Bool
    }

    /// Writes all of a run's frames and marks it `done`, in one transaction: either all of it lands or none.
    public func finishRun(_ runID: Int64, _ end: RunEnd) throws {
        try database.transaction {
            try insertFrames(runID, end.frames)
            try insertVerification(runID, end.verification, end.decoded, width: end.width, height: end.height)
            let warnings = end.warnings.isEmpty ? SQLValue.null : .text(JSON.string(end.warnings))
            try database.prepare("""
                UPDATE runs SET status = 'done', frames = ?, bytes = ?, duration_s = ?, timebase_num = ?,
                    timebase_den = ?, stream_path = ?, input_frames = ?, truncated_bytes = ?, warnings = ?,
                    settings = ?, finished_at = ?
                WHERE run_id = ?
                """).run([.integer(Int64(end.frames.count)), .integer(Int64(end.frames.reduce(0) { $0 + $1.sizeBytes })),
                          .real(end.durationSeconds), .integer(Int64(end.timebaseNum)), .integer(Int64(end.timebaseDen)),
                          .text(end.streamPath), .integer(Int64(end.inputFrames)),
                          end.truncatedBytes.map { .integer(Int64($0)) } ?? .null,
                          warnings, .text(end.settingsJSON), .text(Self.timestamp()), .integer(runID)])
        }
    }

    /// Everything recorded of one run, written at once by ``recordRun(_:beforeCommit:)``.
    public struct RunRecord: Sendable {
        /// What was known when the run started (experiment, clip, settings as given, picture size, rate).
        public var start: RunStart
        /// When the run started (`runs.created_at`); `runs.finished_at` is the time of the write.
        public var createdAt: Date
        /// Warnings reported during the run (x264's, a partial last frame), in order; stored for either status
        /// as a JSON array, NULL when there are none.
        public var warnings: [String]
        public var outcome: Outcome

        /// How the run ended: `done` with everything it measured, or `failed` with the error's message.
        public enum Outcome: Sendable {
            case done(Finished)
            /// A failed run keeps its `runs` row only (no frames, no checks): `error` is the one-line message.
            case failed(error: String)
        }

        /// What a `done` run measured. The encoded picture size is `start.width` × `start.height`.
        public struct Finished: Sendable {
            /// The frames in decode order (their NAL payloads are not read).
            public var frames: [EncodedFrame]
            public var timebaseNum: Int
            public var timebaseDen: Int
            /// Input frames × fpsDen / fpsNum, in seconds.
            public var durationSeconds: Double
            /// The stream's final path for a run id (e.g. `{ "OUT/run-\($0)/stream.264" }`): stored as
            /// `runs.stream_path`, called once inside the transaction.
            public var streamPath: @Sendable (Int64) -> String
            public var inputFrames: Int
            public var truncatedBytes: Int?
            /// The settings JSON completed with what x264 resolved (replaces `start.settingsJSON`).
            public var settingsJSON: String
            /// The stream parsed back: checks and parameter sets.
            public var verification: StreamVerification?
            /// The independent decodes.
            public var decoded: [DecodedFrameRecord]

            public init(frames: [EncodedFrame], timebaseNum: Int, timebaseDen: Int, durationSeconds: Double,
                        streamPath: @escaping @Sendable (Int64) -> String, inputFrames: Int, truncatedBytes: Int?,
                        settingsJSON: String, verification: StreamVerification?, decoded: [DecodedFrameRecord]) {
                self.frames = frames
                self.timebaseNum = timebaseNum
                self.timebaseDen = timebaseDen
                self.durationSeconds = durationSeconds
                self.streamPath = streamPath
                self.inputFrames = inputFrames
                self.truncatedBytes = truncatedBytes
                self.settingsJSON = settingsJSON
                self.verification = verification
                self.decoded = decoded
            }
        }

        public init(start: RunStart, createdAt: Date, warnings: [String], outcome: Outcome) {
            self.start = start
            self.createdAt = createdAt
            self.warnings = warnings
            self.outcome = outcome
        }
    }

    /// Writes a whole run in ONE transaction and returns its run_id: the `runs` row (`done` or `failed`,
    /// inserted with `INSERT ... RETURNING run_id`), then for a done run its stream path, frames, parameter
    /// sets, bitstream checks and decoded frames; then calls `beforeCommit(runID)`, then commits.
    ///
    /// `beforeCommit` is where the caller puts the run's files in place (renames its temporary folder to
    /// `run-ID`); when it throws, the transaction is rolled back (no row, no frames; the run id is free again)
    /// and its error is rethrown. If the COMMIT itself then fails, whatever `beforeCommit` did stays done: undo it.
    /// - Throws: `beforeCommit`'s error, or the database's (``Database/kind(ofResultCode:)``: `.tempFail` when
    ///   another process holds the write lock past the busy timeout).
    @discardableResult
    public func recordRun(_ record: RunRecord, beforeCommit: (Int64) throws -> Void) throws -> Int64 {
        let start = record.start
        func int(_ v: Int) -> SQLValue { .integer(Int64(v)) }
        return try database.transaction {
            let insert = try database.prepare("""
                INSERT INTO runs (experiment, clip, settings, status, frames, bytes, duration_s, timebase_num,
                                  timebase_den, crop, x264_version, lab_version, ffmpeg_version, machine, created_at,
                                  finished_at, width, height, fps_num, fps_den, input_frames, truncated_bytes, warnings,
                                  error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                RETURNING run_id
                """)
            var values: [SQLValue] = [.text(start.experiment), .text(start.clip)]
            switch record.outcome {
            case .done(let f):
                values += [.text(f.settingsJSON), .text("done"), int(f.frames.count), int(f.frames.reduce(0) { $0 + $1.sizeBytes }),
                           .real(f.durationSeconds), int(f.timebaseNum), int(f.timebaseDen)]
            case .failed:
                values += [.text(start.settingsJSON), .text("failed"), .null, .null, .null, .null, .null]
            }
            values += [start.crop.map(SQLValue.text) ?? .null, .text(x264Version), .text(labVersion),
                       start.ffmpegVersion.map(SQLValue.text) ?? .null, .text(Machine.current.json),
                       .text(Self.timestamp(record.createdAt)), .text(Self.timestamp()), int(start.width), int(start.height),
                       int(start.fpsNum), int(start.fpsDen)]
            switch record.outcome {
            case .done(let f): values += [int(f.inputFrames), f.truncatedBytes.map(int) ?? .null]
            case .failed: values += [.null, .null]
            }
            values.append(record.warnings.isEmpty ? .null : .text(JSON.string(record.warnings)))
            if case .failed(let error) = record.outcome { values.append(.text(error)) } else { values.append(.null) }
            try insert.bind(values)
            guard try insert.step(), let runID = insert.row().first?.int else {
                throw LabError.software("\(database.path): INSERT INTO runs returned no run_id")
            }
            while try insert.step() {}
            if case .done(let f) = record.outcome {
                try database.prepare("UPDATE runs SET stream_path = ? WHERE run_id = ?").run([.text(f.streamPath(runID)), .integer(runID)])
                try insertFrames(runID, f.frames)
                try insertVerification(runID, f.verification, f.decoded, width: start.width, height: start.height)
            }
            try beforeCommit(runID)
            return runID
        }
    }

    private func insertFrames(_ runID: Int64, _ frames: [EncodedFrame]) throws {
        let insert = try database.prepare("""
            INSERT INTO frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes,
                                filler_bytes, pts, dts, qp, psnr_y, psnr_u, psnr_v, psnr_avg, ssim)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        func opt(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        for f in frames {
            try insert.run([.integer(runID), .integer(Int64(f.codedIndex)), .integer(Int64(f.displayIndex)),
                            .text(f.type.rawValue), .integer(f.keyframe ? 1 : 0), .integer(Int64(f.sizeBytes)),
                            .integer(Int64(f.headerBytes)), .integer(Int64(f.fillerBytes)), .integer(f.pts),
                            .integer(f.dts), .real(f.qp), opt(f.psnrY), opt(f.psnrU), opt(f.psnrV),
                            opt(f.psnrAvg), opt(f.ssim)])
        }
    }

    /// Parameter sets, bitstream checks and decoded frames; `width` × `height` is the encoded picture size
    /// (luma samples) the decoded PSNRs are computed over.
    private func insertVerification(_ runID: Int64, _ verification: StreamVerification?, _ decodedFrames: [DecodedFrameRecord],
                                    width: Int, height: Int) throws {
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        if let v = verification {
            let sets = try database.prepare("""
                INSERT INTO parameter_sets (run_id, kind, id, profile_idc, level_idc, width, height,
                                            entropy_coding_mode_flag, max_num_reorder_frames, fields)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for p in v.parameterSets {
                try sets.run([.integer(runID), .text(p.kind), .integer(Int64(p.id)), int(p.profileIdc), int(p.levelIdc),
                              int(p.width), int(p.height), int(p.entropyCodingModeFlag), int(p.maxNumReorderFrames),
                              .text(p.fieldsJSON)])
            }
            let checks = try database.prepare("INSERT INTO bitstream_checks (run_id, name, expected, actual, passed) VALUES (?, ?, ?, ?, ?)")
            for c in v.checks {
                try checks.run([.integer(runID), .text(c.name), .text(c.expected), .text(c.actual), .integer(c.passed ? 1 : 0)])
            }
        }
        let decoded = try database.prepare("""
            INSERT INTO decoded_frames (run_id, source, display_index, sse_y, sse_u, sse_v, psnr_y, psnr_u, psnr_v, matches_x264)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let luma = Double(width * height)
        func psnr(_ sse: Int64, _ samples: Double) -> SQLValue {
            sse == 0 ? .null : .real(10 * log10(255 * 255 * samples / Double(sse)))
        }
        for d in decodedFrames {
            try decoded.run([.integer(runID), .text(d.source), .integer(Int64(d.displayIndex)), .integer(d.errors.sseY),
                             .integer(d.errors.sseU), .integer(d.errors.sseV), psnr(d.errors.sseY, luma),
                             psnr(d.errors.sseU, luma / 4), psnr(d.errors.sseV, luma / 4), .integer(d.matchesX264 ? 1 : 0)])
        }
    }

    /// Removes a run that never held frames (its row only), as if it had not been started.
    public func forgetRun(_ runID: Int64) throws {
        try database.prepare("DELETE FROM runs WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM frames WHERE run_id = ?)")
            .run([.integer(runID), .integer(runID)])
    }

    /// Marks a run `failed` with the error's message; it keeps no frames.
    public func failRun(_ runID: Int64, error: String) throws {
        try database.transaction {
            for table in ["frames", "parameter_sets", "bitstream_checks", "decoded_frames"] {
                try database.prepare("DELETE FROM \(table) WHERE run_id = ?").run([.integer(runID)])
            }
            try database.prepare("UPDATE runs SET status = 'failed', error = ?, finished_at = ? WHERE run_id = ?")
                .run([.text(error), .text(Self.timestamp()), .integer(runID)])
        }
    }

    /// ISO-8601 UTC with seconds, e.g. "2026-11-29T22:27:02Z".
    static func timestamp(_ date: Date = Date()) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }

    /// A stored frame row, as analysis and plots read it back. Nullable columns read NULL as nil.
    public struct FrameRow: Sendable {
        public var codedIndex: Int
        public var displayIndex: Int
        public var type: String
        public var sizeBytes: Int
        public var pts: Int64
        public var dts: Int64
        public var qp: Double
        public var psnrY: Double?
        public var psnrAvg: Double?
        public var ssim: Double?
    }

    /// A run's frames in decode order, columns read by name.
    /// - Throws: `.data` when a NOT NULL column holds NULL or the wrong type, naming the file and column.
    public func frames(run runID: Int64) throws -> [FrameRow] {
        try database.rows("""
            SELECT coded_index, display_index, type, size_bytes, pts, dts, qp, psnr_y, psnr_avg, ssim
            FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).map { r in
            FrameRow(codedIndex: Int(try r.integer("coded_index")), displayIndex: Int(try r.integer("display_index")),
                     type: try r.text("type"), sizeBytes: Int(try r.integer("size_bytes")), pts: try r.integer("pts"),
                     dts: try r.integer("dts"), qp: try r.real("qp"), psnrY: r["psnr_y"].double,
                     psnrAvg: r["psnr_avg"].double, ssim: r["ssim"].double)
        }
    }

    /// A stored `runs` row (README, "Database schema"); a NULL column reads as nil.
    public struct RunRow: Sendable {
        public var runID: Int64
        public var experiment: String
        public var clip: String
        /// The settings as JSON text.
        public var settingsJSON: String
        /// `running` (a run of an older enclab that never finished), `done` or `failed`.
        public var status: String
        public var frames: Int?
        public var bytes: Int?
        public var durationSeconds: Double?
        public var timebaseNum: Int?
        public var timebaseDen: Int?
        public var streamPath: String?
        public var crop: String?
        public var x264Version: String
        public var labVersion: String
        public var ffmpegVersion: String?
        /// `{"cpu": "...", "cores": N}`.
        public var machineJSON: String
        /// ISO-8601 UTC, e.g. "2026-11-29T22:27:02Z".
        public var createdAt: String
        public var finishedAt: String?
        public var width: Int?
        public var height: Int?
        public var fpsNum: Int?
        public var fpsDen: Int?
        public var inputFrames: Int?
        public var truncatedBytes: Int?
        /// The warnings as a JSON array of strings.
        public var warningsJSON: String?
        public var error: String?
    }

    /// Every run, by run_id, columns read by name.
    /// - Throws: `.data` when a NOT NULL column holds NULL or the wrong type, naming the file and column.
    public func runs() throws -> [RunRow] {
        try database.rows("SELECT * FROM runs ORDER BY run_id").map { r in
            func int(_ name: String) -> Int? { r[name].int.map { Int($0) } }
            return RunRow(runID: try r.integer("run_id"), experiment: try r.text("experiment"), clip: try r.text("clip"),
                          settingsJSON: try r.text("settings"), status: try r.text("status"), frames: int("frames"),
                          bytes: int("bytes"), durationSeconds: r["duration_s"].double, timebaseNum: int("timebase_num"),
                          timebaseDen: int("timebase_den"), streamPath: r["stream_path"].string, crop: r["crop"].string,
                          x264Version: try r.text("x264_version"), labVersion: try r.text("lab_version"),
                          ffmpegVersion: r["ffmpeg_version"].string, machineJSON: try r.text("machine"),
                          createdAt: try r.text("created_at"), finishedAt: r["finished_at"].string, width: int("width"),
                          height: int("height"), fpsNum: int("fps_num"), fpsDen: int("fps_den"),
                          inputFrames: int("input_frames"), truncatedBytes: int("truncated_bytes"),
                          warningsJSON: r["warnings"].string, error: r["error"].string)
        }
    }
}

/// The machine a run ran on: CPU model (from /proc/cpuinfo) and logical cores.
struct Machine {
    var cpu: String
    var cores: Int

    static let current: Machine = {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = info.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        return Machine(cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount)
    }()

    /// `{"cpu": "...", "cores": N}`.
    var json: String { JSON.string(["cpu": cpu, "cores": cores]) }
}

/// Compact JSON text with sorted keys, for values stored in the database.
enum JSON {
    static func string(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
            preconditionFailure("value is not JSON-serialisable")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

extension LabStore.FrameRow {
    /// The row the store writes for an encoded frame (`frames` columns of the same names), so a run's plots can be
    /// drawn from exactly what it records before the record commits.
    init(_ frame: EncodedFrame) {
        self.init(codedIndex: frame.codedIndex, displayIndex: frame.displayIndex, type: frame.type.rawValue,
                  sizeBytes: frame.sizeBytes, pts: frame.pts, dts: frame.dts, qp: frame.qp, psnrY: frame.psnrY,
                  psnrAvg: frame.psnrAvg, ssim: frame.ssim)
    }
}
