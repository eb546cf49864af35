import Foundation

/// The lab's version, recorded with every run.
public let labVersion = "0.1.0"

/// The lab's SQLite database: the only place that writes runs and frames. The schema is a public interface,
/// documented table by table in the README ("Database schema"); its versions and migrations are in Schema.swift
/// and Migrations.swift.
public final class LabStore {
    public let database: Database
    /// A temporary copy this store reads (``reading(path:)`` of an older database in a read-only place), removed
    /// with the store.
    var scratch: String?

    /// A store on a database already opened and inspected (read-only: ``reading(path:)``).
    init(database: Database) { self.database = database }

    deinit { if let scratch { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) } } }

    /// Opens (creating if needed) the database and brings it to ``schemaVersion``; creates the parent folder.
    ///
    /// The file is inspected before anything is written to it (no WAL switch, no table): a database of a newer
    /// schema version, or one that is not the lab's, is refused untouched. Then it is switched to WAL (commits not
    /// synced one by one: `synchronous=NORMAL`, a run's own commit aside); a new
    /// database gets ``schema`` and `user_version` ``schemaVersion`` (8) in one transaction, an older one each
    /// migration from its version on (``migrations``), each in one transaction.
    /// - Parameter busyTimeoutMilliseconds: how long to wait for another process's lock; nil takes
    ///   `ENCLAB_DB_TIMEOUT_MS` from the environment, else 10 s (``Database/busyTimeout(environment:)``).
    /// A relative path that SQLite could read as a URI (`file:y.sqlite`) is opened by its absolute path, which
    /// SQLite never reads as one (and which its error messages then name); any other path is opened as given.
    /// - Throws: `.usage` for a path ``checkPath(_:)`` refuses, or a bad `ENCLAB_DB_TIMEOUT_MS`;
    ///   `.data` for a file that is not an SQLite database or is damaged, one written by a newer enclab
    ///   (user_version above ``schemaVersion``), or one that is not enclab's ("not an enclab database (tables: a, b)");
    ///   `.cantCreate` when the file or its folder cannot be created or written (a read-only mount, an immutable
    ///   file); `.tempFail` when another process holds the database locked past the busy timeout;
    ///   `.ioError` for a full disk or an I/O error.
    public init(path: String, busyTimeoutMilliseconds: Int32? = nil) throws {
        try Self.checkPath(path)
        let dir = Paths.parent(path)
        if !dir.isEmpty { try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        database = try Database(path: Self.openingPath(path), busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // Only reads until the file is known to be the lab's (or new).
        let found = try Self.inspect(database)
        if database.isReadOnly {
            throw LabError.cantCreate("\(path): cannot write the database: SQLite could open it only for reading\(Self.writeProblem(path).map { " (\($0))" } ?? "")")
        }
        try Self.useWriteAheadLog(database)
        // SQLite's recommendation for WAL: a commit appends to the WAL without syncing it, and checkpoints (at
        // close, `wal_checkpoint`) sync. A commit stays atomic; only a power loss (not a killed process) may roll
        // back the last commits. A run's own commit is synced all the same (``recordRun(_:replacing:beforeCommit:)``).
        try database.execute("PRAGMA synchronous=NORMAL")
        try database.execute("PRAGMA foreign_keys=ON;")
        try Self.bringUpToDate(database, found: found)
    }

    /// Puts the file in WAL journal mode (it stays so: the mode is kept in the file).
    ///
    /// Switching the journal mode needs the file to itself, and SQLite reports `SQLITE_BUSY` at once, without
    /// its busy handler, when another connection has it open meanwhile: two processes creating one new
    /// database both try the switch. So the switch is tried again every 10 ms until it is made (by either
    /// process) or the busy timeout has passed.
    /// - Throws: `.tempFail` after the busy timeout; other SQLite failures as their kind.
    static func useWriteAheadLog(_ database: Database) throws {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, database.busyTimeoutMilliseconds)) * 1_000_000
        while true {
            do {
                // The pragma answers with the mode the file is in afterwards.
                if case .text(let mode)? = try database.query("PRAGMA journal_mode=WAL").first?.first, mode.lowercased() == "wal" { return }
                if DispatchTime.now().uptimeNanoseconds >= deadline {
                    throw LabError.tempFail("\(database.path): database is locked by another process (could not switch it to WAL journal mode)")
                }
                usleep(10_000)
            } catch let error as LabError where error.kind == .tempFail && DispatchTime.now().uptimeNanoseconds < deadline {
                usleep(10_000)
            }
        }
    }

    /// Checks that `path` can name the lab's database file, creating and opening nothing.
    /// - Parameter operand: how messages name the path: `--db` (the default) or, for a command without that flag,
    ///   its operand (`merge OUT.sqlite`).
    /// - Throws: `.usage` for the empty path or SQLite's special name `:memory:` (SQLite would keep nothing
    ///   there), for a device, fifo or socket (`/dev/null`: SQLite would create `/dev/null-journal` beside it), and for
    ///   a path that names a folder: one ending in `/`, `/.` or `/..` (SQLite would create a file
    ///   named like the folder), `.` or `..`, or an existing folder (symbolic links followed).
    public static func checkPath(_ path: String, operand: String = "--db") throws {
        if path.isEmpty || path == ":memory:" {
            throw LabError.usage("\(operand) needs a database file path, got '\(path)' (SQLite would keep nothing there)")
        }
        if path.utf8.contains(0) {
            throw LabError.usage("\(operand) needs a database file path, got '\(EncodeSettings.visible(path))' (holds a NUL character)")
        }
        // A device, fifo or socket: SQLite would read it as an empty database and create a journal beside it.
        if let kind = notRegularFile(path), kind != "a folder" {
            throw LabError.usage("\(operand) needs a database file path, got '\(path)' (\(kind), not a regular file)")
        }
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        var isFolder: ObjCBool = false
        if last.isEmpty || last == "." || last == ".."
            || (FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue) {
            throw LabError.usage("\(operand) needs a database file path, got '\(path)' (a folder)")
        }
    }

    /// The path SQLite is given for `path`: its absolute form when SQLite could read it as a URI (it starts
    /// with `file:`), else `path` itself, so that error messages and ``Database/path`` keep the path as given.
    static func openingPath(_ path: String) -> String {
        path.hasPrefix("file:") ? FileManager.default.currentDirectoryPath + "/" + path : path
    }

    /// Why `path` cannot be written, as `access(2)` says (a read-only mount, an immutable file; root too).
    private static func writeProblem(_ path: String) -> String? {
        access(path, W_OK) == 0 ? nil : String(cString: strerror(errno))
    }

    /// The tables that hold a run's rows beside `runs`, each keyed by `run_id`.
    static let runChildTables = ["frames", "parameter_sets", "bitstream_checks", "decoded_frames", "timestamp_analysis", "frame_durations",
                                 "keyframe_analysis", "keyframe_violations", "data_rate_windows", "run_metrics", "run_gops",
                                 "frame_delays", "run_delay",
                                 "frame_quality_metrics", "run_quality_metrics",
                                 "rate_changes", "step_response",
                                 "skipped_frames",
                                 "rtp_frames", "rtp_loss_frames", "rtp_runs"]

    /// Writes a whole run in ONE transaction and returns its run_id: the `runs` row (`done` or `failed`,
    /// inserted with `INSERT ... RETURNING run_id`), then for a done run its stream path, frames, timestamps,
    /// keyframe and DataRateLimits analyses, parameter sets, bitstream checks and decoded frames; then calls
    /// `beforeCommit(runID)`, then commits.
    ///
    /// A done run's measurements are written as given (``RunMeasurements``), nothing computed again: each frame's
    /// `sse_*`, `psnr_*` and `x264_psnr_differs` are its ``RunMeasurements/quality`` (NULL for a frame without
    /// one), x264's PSNRs go to `x264_psnr_*`; each `decoded_frames` row's PSNRs are its picture's.
    ///
    /// A done run with a `runKey` must be the only done run with that key (the partial unique index
    /// `runs_done_by_key`): when one is stored already, `replacing` deletes it first, in the same transaction,
    /// with all its rows in frames, parameter_sets, bitstream_checks and decoded_frames (its run id is not
    /// reused); without `replacing` the record is refused. A failed run never replaces anything: it is stored
    /// beside a done run with its key.
    ///
    /// `beforeCommit` runs inside the transaction, after the run's rows are written: the lab's writer checks there
    /// that the run's final folder is still free and records the run's metrics (``RunWriter``); it moves the
    /// folder into place only after the commit. When `beforeCommit` throws, the transaction is rolled back (no row,
    /// no frames, a replaced run still there; the run id is free again) and its error is rethrown. If the COMMIT
    /// itself then fails, whatever `beforeCommit` did stays done: undo it.
    /// - Throws: `.usage` when a done run with the record's key is stored and `replacing` is false, naming the
    ///   key and that run; `beforeCommit`'s error; or the database's (``Database/kind(ofResultCode:)``:
    ///   `.tempFail` when another process holds the write lock past the busy timeout; `.software` for a key or
    ///   digest that is not 64 lowercase hex digits, refused by the table's CHECK).
    @discardableResult
    public func recordRun(_ record: RunRecord, replacing: Bool = false, beforeCommit: (Int64) throws -> Void) throws -> Int64 {
        let start = record.start
        func int(_ v: Int) -> SQLValue { .integer(Int64(v)) }
        func text(_ v: String?) -> SQLValue { v.map(SQLValue.text) ?? .null }
        // This commit is synced to disk whatever the connection's level (NORMAL, ``init(path:busyTimeoutMilliseconds:)``):
        // the run's folder is renamed into place after it (``RunWriter/record(_:_:)``), and a power loss must not
        // leave that folder without its row (the next run of the key would take it for another database's).
        try database.execute("PRAGMA synchronous=FULL")
        defer { try? database.execute("PRAGMA synchronous=NORMAL") }
        return try database.transaction {
            if case .done = record.outcome, let key = record.runKey, let stored = try doneRun(key: key) {
                guard replacing else {
                    throw LabError.usage("\(database.path): run \(stored.runID) of \(stored.createdAt) has run key \(key) already (the same clip and settings); --force replaces it")
                }
                // Every done run of the key: a merged database may hold repeats of a run that is not repeatable.
                for id in try doneRuns(key: key).map(\.runID) { try deleteRun(id) }
            }
            let insert = try database.prepare("""
                INSERT INTO runs (run_key, experiment, clip, clip_sha256, settings, status, frames, bytes, duration_s,
                                  timebase_num, timebase_den, crop, x264_version, lab_version, ffmpeg_version, machine,
                                  created_at, finished_at, width, height, fps_num, fps_den, input_frames, truncated_bytes,
                                  warnings, error, repeatable)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                RETURNING run_id
                """)
            var values: [SQLValue] = [text(record.runKey), .text(start.experiment), .text(start.clip), text(record.clipSHA256)]
            switch record.outcome {
            case .done(let f):
                values += [.text(f.settingsJSON), .text("done"), int(f.frames.count), int(f.frames.reduce(0) { $0 + $1.sizeBytes }),
                           .real(f.durationSeconds), int(f.timebaseNum), int(f.timebaseDen)]
            case .failed:
                values += [.text(start.settingsJSON), .text("failed"), .null, .null, .null, .null, .null]
            }
            values += [text(start.crop), text(record.x264Version), .text(labVersion), text(start.ffmpegVersion),
                       .text(Machine.current.json), .text(Self.timestamp(record.createdAt)), .text(Self.timestamp()),
                       int(start.width), int(start.height), int(start.fpsNum), int(start.fpsDen)]
            switch record.outcome {
            case .done(let f): values += [int(f.inputFrames), f.truncatedBytes.map(int) ?? .null]
            case .failed: values += [.null, .null]
            }
            values.append(record.warnings.isEmpty ? .null : .text(JSON.string(record.warnings)))
            if case .failed(let error) = record.outcome { values.append(.text(error)) } else { values.append(.null) }
            values.append(record.repeatable.map { .integer($0 ? 1 : 0) } ?? .null)
            try insert.bind(values)
            guard try insert.step(), let runID = insert.row().first?.int else {
                throw LabError.software("\(database.path): INSERT INTO runs returned no run_id")
            }
            while try insert.step() {}
            if case .done(let f) = record.outcome {
                if let streamPath = record.streamPath {
                    try database.prepare("UPDATE runs SET stream_path = ? WHERE run_id = ?").run([.text(streamPath(runID)), .integer(runID)])
                }
                try insertFrames(runID, f.frames, f.quality, inputPTS: f.inputPTS, qpKnown: f.qpKnown)
                if let a = f.timestampAnalysis { try insertTimestampAnalysis(runID, source: f.timestampSource, a) }
                if let k = f.keyframes { try insertKeyframeAnalysis(runID, k) }
                if let w = f.dataRateWindows { try insertDataRateWindows(runID, w, vtCompat: f.dataRateLimitsVTCompat) }
                if let d = f.encoderDelay { try insertEncoderDelay(runID, d) }
                if let r = f.rtp { try insertRTP(runID, r) }
                if let c = f.rateChanges { try insertRateChanges(runID, c) }
                try insertVerification(runID, f.verification, f.decoded)
                if let q = f.perceptual { try insertQualityScores(runID, q) }
                try insertSkippedFrames(runID, f.skipped, width: start.width, height: start.height)
            }
            try beforeCommit(runID)
            return runID
        }
    }

    /// Deletes a run's rows from every table, children first (foreign keys are on), in one transaction: a run the
    /// writer gives up after its commit (its folder could not be moved into place).
    func removeRun(_ runID: Int64) throws {
        try database.transaction { try deleteRun(runID) }
    }

    /// Deletes a run's rows from every table, children first (foreign keys are on), inside the caller's transaction.
    private func deleteRun(_ runID: Int64) throws {
        for table in Self.runChildTables + ["runs"] {
            try database.prepare("DELETE FROM \(table) WHERE run_id = ?").run([.integer(runID)])
        }
    }

    /// The frames with their quality as given (``RunMeasurements/quality``, one per frame): x264's PSNRs go to
    /// `x264_psnr_*`; `sse_*`, `psnr_*` and `x264_psnr_differs` are the lab's, NULL for a frame without a measurement.
    /// - Parameter inputPTS: the PTS handed to x264 by display index (`frames.input_pts`); a frame without one
    ///   stores NULL.
    /// - Parameter qpKnown: false when no QP is known (a stream from elsewhere, OpenH264 without the decode): `qp` is stored NULL.
    private func insertFrames(_ runID: Int64, _ frames: [EncodedFrame], _ qualities: [FrameQuality?], inputPTS: [Int64],
                              qpKnown: Bool) throws {
        precondition(frames.count == qualities.count, "one quality per frame")
        let insert = try database.prepare("""
            INSERT INTO frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes,
                                filler_bytes, pts, dts, qp, sse_y, sse_u, sse_v, psnr_y, psnr_u, psnr_v, psnr_avg, ssim,
                                x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg, x264_psnr_differs, input_pts)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        func opt(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        func int(_ v: Int64?) -> SQLValue { v.map(SQLValue.integer) ?? .null }
        for (f, q) in zip(frames, qualities) {
            try insert.run([.integer(runID), .integer(Int64(f.codedIndex)), .integer(Int64(f.displayIndex)),
                            .text(f.type.rawValue), .integer(f.keyframe ? 1 : 0), .integer(Int64(f.sizeBytes)),
                            .integer(Int64(f.headerBytes)), .integer(Int64(f.fillerBytes)), .integer(f.pts),
                            .integer(f.dts), qpKnown ? .real(f.qp) : .null, int(q?.errors.sseY), int(q?.errors.sseU), int(q?.errors.sseV),
                            opt(q?.psnr.y), opt(q?.psnr.u), opt(q?.psnr.v), opt(q?.psnr.avg), opt(f.ssim),
                            opt(f.psnrY), opt(f.psnrU), opt(f.psnrV), opt(f.psnrAvg), int(q.map { $0.x264Differs ? 1 : 0 }),
                            inputPTS.indices.contains(f.displayIndex) ? .integer(inputPTS[f.displayIndex]) : .null])
        }
    }

    /// The input indexes of the pictures the encoder dropped in a run (`skipped_frames.input_index`), ascending.
    public func skippedInputIndexes(run runID: Int64) throws -> [Int] {
        try database.rows("SELECT input_index FROM skipped_frames WHERE run_id = ? ORDER BY input_index", [.integer(runID)]).map {
            Int(try $0.integer("input_index"))
        }
    }

    /// The pictures the encoder dropped (`skipped_frames`), as given, with the held picture's PSNR over the run's size.
    private func insertSkippedFrames(_ runID: Int64, _ skipped: [SkippedFrame], width: Int, height: Int) throws {
        guard !skipped.isEmpty else { return }
        let insert = try database.prepare("""
            INSERT INTO skipped_frames (run_id, input_index, pts, held_sse_y, held_sse_u, held_sse_v, held_psnr_y, held_psnr_u,
                                        held_psnr_v, held_psnr_avg)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        func opt(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        for s in skipped {
            let psnr = s.held.map { PSNR.picture($0, width: width, height: height) }
            try insert.run([.integer(runID), .integer(Int64(s.inputIndex)), .integer(s.pts),
                            s.held.map { .integer($0.sseY) } ?? .null, s.held.map { .integer($0.sseU) } ?? .null,
                            s.held.map { .integer($0.sseV) } ?? .null,
                            opt(psnr?.y), opt(psnr?.u), opt(psnr?.v), opt(psnr?.avg)])
        }
    }

    /// Parameter sets (in stream order: ``StreamVerification/parameterSets``), bitstream checks and decoded frames
    /// with their PSNRs as given (``RunMeasurements/DecodedPicture``).
    private func insertVerification(_ runID: Int64, _ verification: StreamVerification?,
                                    _ decodedFrames: [RunMeasurements.DecodedPicture]) throws {
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        if let v = verification {
            let sets = try database.prepare("""
                INSERT INTO parameter_sets (run_id, kind, occurrence, id, nal_unit_index, new_content, profile_idc, level_idc,
                                            width, height, entropy_coding_mode_flag, max_num_reorder_frames, fields)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            // Occurrences count per kind in the order given (stream order); new content: the first set of its id, or
            // one whose syntax elements differ from the previous set of that id.
            var occurrences: [String: Int] = [:]
            var last: [String: String] = [:]
            for p in v.parameterSets {
                let occurrence = occurrences[p.kind, default: 0]
                occurrences[p.kind] = occurrence + 1
                let key = "\(p.kind) \(p.id)"
                let isNew = last[key] != p.fieldsJSON
                last[key] = p.fieldsJSON
                try sets.run([.integer(runID), .text(p.kind), .integer(Int64(occurrence)), .integer(Int64(p.id)),
                              int(p.nalUnitIndex), .integer(isNew ? 1 : 0), int(p.profileIdc), int(p.levelIdc),
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
        func opt(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        for picture in decodedFrames {
            let d = picture.record
            try decoded.run([.integer(runID), .text(d.source), .integer(Int64(d.displayIndex)), .integer(d.errors.sseY),
                             .integer(d.errors.sseU), .integer(d.errors.sseV), opt(picture.psnr.y), opt(picture.psnr.u),
                             opt(picture.psnr.v), .integer(d.matchesX264 ? 1 : 0)])
        }
    }

    /// ISO-8601 UTC with seconds, e.g. "2026-11-29T22:27:02Z".
    static func timestamp(_ date: Date = Date()) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }

    /// A run's frames in decode order, columns read by name.
    /// - Throws: `.data` naming the file, the run, the frame and the column when a NOT NULL column holds NULL or the
    ///   wrong type, or a number column (qp, PSNR, SSIM) holds text or a BLOB.
    public func frames(run runID: Int64) throws -> [FrameRow] {
        try database.rows("""
            SELECT coded_index, display_index, type, size_bytes, pts, dts, qp, psnr_y, psnr_avg, ssim
            FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).enumerated().map { k, row in
            // A damaged value is named with its run and frame; a PSNR that is text or a BLOB is refused, not drawn as NaN.
            let r = row.at("run \(runID), frame \(k) in coded order")
            return FrameRow(codedIndex: Int(try r.integer("coded_index")), displayIndex: Int(try r.integer("display_index")),
                            type: try r.text("type"), sizeBytes: Int(try r.integer("size_bytes")), pts: try r.integer("pts"),
                            dts: try r.integer("dts"), qp: try r.optionalNumber("qp"), psnrY: try r.optionalNumber("psnr_y"),
                            psnrAvg: try r.optionalNumber("psnr_avg"), ssim: try r.optionalNumber("ssim"))
        }
    }

    /// Every run, by run_id, columns read by name.
    /// - Throws: `.data` when a NOT NULL column holds NULL or the wrong type, naming the file and column.
    public func runs() throws -> [RunRow] {
        try database.rows("SELECT * FROM runs ORDER BY run_id").map(RunRow.init)
    }

    /// The first `done` run stored with `key` (`runs.run_key`), or nil: the only one of a repeatable run (by the
    /// index `runs_done_by_key`); of a run that is not repeatable the lowest run id of its repeats (``doneRuns(key:)``).
    /// - Throws: `.data` when a NOT NULL column holds NULL or the wrong type; the database's errors.
    public func doneRun(key: String) throws -> RunRow? {
        try database.rows("SELECT * FROM runs WHERE run_key = ? AND status = 'done' ORDER BY run_id LIMIT 1", [.text(key)]).first.map(RunRow.init)
    }

    /// Every `done` run stored with `key`, by run id: one, or the repeats of a run that is not repeatable
    /// (``Repeatability``; `enclab merge` keeps them).
    /// - Throws: `.data` when a NOT NULL column holds NULL or the wrong type; the database's errors.
    public func doneRuns(key: String) throws -> [RunRow] {
        try database.rows("SELECT * FROM runs WHERE run_key = ? AND status = 'done' ORDER BY run_id", [.text(key)]).map(RunRow.init)
    }

    /// How many runs the database holds, done or failed.
    public func runCount() throws -> Int {
        Int(try database.query("SELECT count(*) FROM runs").first?.first?.int ?? 0)
    }

    /// How many `frames` rows a run has.
    public func frameCount(run runID: Int64) throws -> Int {
        Int(try database.query("SELECT count(*) FROM frames WHERE run_id = ?", [.integer(runID)]).first?.first?.int ?? 0)
    }

    /// The mean of a run's `frames.psnr_avg` (NULLs left out), nil when it has none.
    public func meanPSNR(run runID: Int64) throws -> Double? {
        try database.query("SELECT avg(psnr_avg) FROM frames WHERE run_id = ?", [.integer(runID)]).first?.first?.double
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
