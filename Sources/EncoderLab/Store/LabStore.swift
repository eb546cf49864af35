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

    /// Opens (creating if needed) the database and its tables; creates the parent folder.
    /// - Throws: `.noInput` when the file cannot be opened, `.software` for SQLite errors.
    /// - Throws: `.usage` for an empty path or an SQLite special name (`:memory:`, `file:` URIs) that would
    ///   keep nothing; `.data` for a file that is not an SQLite database, or one whose `runs` or `frames`
    ///   table is not the lab's (nothing is changed in it).
    public init(path: String) throws {
        if path.isEmpty || path.hasPrefix(":") || path.hasPrefix("file:") {
            throw LabError.usage("--db needs a database file path, got '\(path)' (SQLite would keep nothing there)")
        }
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        database = try Database(path: path)
        do {
            // A foreign file fails here, before anything is written.
            let existing = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('runs', 'frames')")
            for row in existing {
                guard let table = row[0].string else { continue }
                let columns = Set(try database.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0[0].string })
                let needed: Set<String> = table == "runs" ? ["run_id", "experiment", "status", "settings"] : ["run_id", "coded_index", "size_bytes"]
                if !needed.isSubset(of: columns) {
                    throw LabError.data("\(path): has a table '\(table)' that is not enclab's (no \(needed.subtracting(columns).sorted().joined(separator: ", "))); use another --db")
                }
            }
        } catch let e as LabError where e.kind == .software {
            throw LabError.data("\(path): not an SQLite database enclab can use (\(e.message.replacingOccurrences(of: "\(path): ", with: "").components(separatedBy: " in: ")[0]))")
        }
        try database.execute("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;")
        try database.execute(Self.schema)
    }

    /// What is known of a run when it starts.
    public struct RunStart {
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
            let insert = try database.prepare("""
                INSERT INTO frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes,
                                    filler_bytes, pts, dts, qp, psnr_y, psnr_u, psnr_v, psnr_avg, ssim)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            func opt(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
            var total = 0
            for f in end.frames {
                total += f.sizeBytes
                try insert.run([.integer(runID), .integer(Int64(f.codedIndex)), .integer(Int64(f.displayIndex)),
                                .text(f.type.rawValue), .integer(f.keyframe ? 1 : 0), .integer(Int64(f.sizeBytes)),
                                .integer(Int64(f.headerBytes)), .integer(Int64(f.fillerBytes)), .integer(f.pts),
                                .integer(f.dts), .real(f.qp), opt(f.psnrY), opt(f.psnrU), opt(f.psnrV),
                                opt(f.psnrAvg), opt(f.ssim)])
            }
            try insertVerification(runID, end)
            let warnings = end.warnings.isEmpty ? SQLValue.null : .text(JSON.string(end.warnings))
            try database.prepare("""
                UPDATE runs SET status = 'done', frames = ?, bytes = ?, duration_s = ?, timebase_num = ?,
                    timebase_den = ?, stream_path = ?, input_frames = ?, truncated_bytes = ?, warnings = ?,
                    settings = ?, finished_at = ?
                WHERE run_id = ?
                """).run([.integer(Int64(end.frames.count)), .integer(Int64(total)), .real(end.durationSeconds),
                          .integer(Int64(end.timebaseNum)), .integer(Int64(end.timebaseDen)), .text(end.streamPath),
                          .integer(Int64(end.inputFrames)), end.truncatedBytes.map { .integer(Int64($0)) } ?? .null,
                          warnings, .text(end.settingsJSON), .text(Self.timestamp()), .integer(runID)])
        }
    }

    private func insertVerification(_ runID: Int64, _ end: RunEnd) throws {
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        if let v = end.verification {
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
        let luma = Double(end.width * end.height)
        func psnr(_ sse: Int64, _ samples: Double) -> SQLValue {
            sse == 0 ? .null : .real(10 * log10(255 * 255 * samples / Double(sse)))
        }
        for d in end.decoded {
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

    /// A stored frame row, as analysis and plots read it back.
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

    /// A run's frames in decode order.
    public func frames(run runID: Int64) throws -> [FrameRow] {
        try database.query("""
            SELECT coded_index, display_index, type, size_bytes, pts, dts, qp, psnr_y, psnr_avg, ssim
            FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).map { r in
            FrameRow(codedIndex: Int(r[0].int ?? 0), displayIndex: Int(r[1].int ?? 0), type: r[2].string ?? "",
                     sizeBytes: Int(r[3].int ?? 0), pts: r[4].int ?? 0, dts: r[5].int ?? 0, qp: r[6].double ?? 0,
                     psnrY: r[7].double, psnrAvg: r[8].double, ssim: r[9].double)
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
