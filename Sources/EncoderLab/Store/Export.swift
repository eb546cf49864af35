import Foundation

/// `enclab export`: one table of a lab database as CSV or JSON Lines, for pandas, R and spreadsheets.
///
/// - Tables: `frames` (one row per frame, ordered by run_id and coded_index; `run_key` from `runs` follows
///   `run_id` when the database has keys, so rows join to `runs` by either), `runs` (one row per run, by run_id) and
///   `metrics` (the table `run_metrics` that `enclab analyze` writes, exported whatever its columns, ordered by its
///   primary key; then `max_delay_frames` from `run_delay` where the file has that table, empty for a run without it, `skipped_frames`, the count of the run's `skipped_frames` rows (0 for none), where the file has that table, and the RTP stage's `rtp_runs` columns prefixed `rtp_` where the file has that table, empty for a run without the stage). The columns of each are the table's own, in the table's order (`PRAGMA table_info`), so an older
///   schema version exports what it has.
/// - CSV (RFC 4180): a header row of column names, then one record per row; records end with CRLF, as RFC 4180
///   section 2 says (Python's csv module, pandas, R and spreadsheets read it); a field with
///   a comma, a double quote, CR or LF is enclosed in double quotes with each double quote doubled; NULL is an empty
///   field, empty text `""` (a quoted empty field), so the two stay apart for a reader that looks.
/// - JSONL: one JSON object per line (LF), keys in column order; NULL is `null`, text a JSON string (control
///   characters, U+2028 and U+2029 escaped, other characters as UTF-8).
/// - `frames` also has `pts_time` and `dts_time` beside `pts` and `dts`: the ticks in seconds, exact from the run's
///   rational timebase (`runs.timebase_num`/`timebase_den`) and rounded to 6 decimals (a tie to even), written
///   as ffprobe writes `pkt_pts_time` (`0.033367`, `2.000000`; a number in CSV and JSONL); empty/null when the run
///   has no timebase.
/// - `frames` ends with the perceptual quality of `frame_quality_metrics` (schema 8, `--metrics`, `enclab measure`)
///   joined by run and display index: `vmaf`, `vmaf_neg`, `vmaf_4k`, `psnr_hvs`, `float_ssim`, `ms_ssim`,
///   `ciede2000`, `xpsnr`, empty/null where not scored (`ssim` stays x264's).
/// - Numbers as SQLite stores them: an INTEGER in decimal; a REAL in the shortest decimal that reads back to the same
///   double (Swift's description: `36.41`, `36.0`, `1e-05`), so `float()` in Python gives the stored value exactly.
///   An infinite REAL is `inf`/`-inf` in CSV (as Python and pandas read it) and `null` in JSONL (JSON has no
///   infinity); SQLite stores no NaN. The lab's tables hold no BLOBs (one would be written as NULL).
///
/// The database is opened read-only (SQLITE_OPEN_READONLY) and never changed (a database in WAL mode keeps the
/// `-wal` and `-shm` files SQLite makes beside it for any reader, the `-wal` empty when no writer is active); rows
/// are streamed from SQLite to the output through a 64 KiB buffer, so a table of millions of frames is not held in
/// memory.
public enum Export {
    /// The tables `export` writes; `metrics` is the database table `run_metrics`.
    public enum Table: String, CaseIterable, Sendable {
        case frames, runs, metrics

        /// The table's name in the database.
        public var sqlName: String { self == .metrics ? "run_metrics" : rawValue }
    }

    /// The output formats.
    public enum Format: String, CaseIterable, Sendable {
        /// RFC 4180 comma-separated values, CRLF record ends, a header row.
        case csv
        /// JSON Lines: one object a line.
        case jsonl
    }

    /// Writes `table` of the database at `databasePath` in `format` to `outPath`, or to standard output when nil.
    ///
    /// - Parameters:
    ///   - runs: the runs whose rows are written, each a run id (`12`, `run-12`), a run key or a prefix of one of at
    ///     least 8 hex digits, as `enclab plot --run` takes them; empty writes every row. Rows stay in the table's
    ///     order whatever the order of `runs`.
    ///   - outPath: see ``destination(_:databasePath:)``: a new file or an existing regular file is written
    ///     atomically, into a temporary file in the folder of the file (symbolic links followed), flushed (fsync),
    ///     then renamed onto it (never onto anything but a regular file: checked by swapping and undone when it is
    ///     not one); on any failure the temporary file is removed and the file is left as it was. An existing
    ///     character device (`/dev/null`, `/dev/stdout` on a terminal, `/dev/full`) or FIFO (`/dev/stdout` on a pipe,
    ///     a named pipe, which is waited on until a reader opens it) is opened and written as it is: no temporary
    ///     file, nothing renamed or removed. The folder must exist: none is made.
    /// - Returns: the number of rows written (the header not counted).
    /// - Throws: `.usage` for an empty path, a bad `runs` entry (as `plot`), or an `outPath` that is the database
    ///   or its `-wal`, `-shm` or `-journal` file (by real path, or by device and inode when it exists);
    ///   `.noInput` when the database does not exist or is a folder, an entry of `runs` names no run, or `metrics`
    ///   is asked of a database without `run_metrics` (made by `enclab analyze --db FILE`); `.data` for a file that
    ///   is not an enclab database, or `runs` given for a `run_metrics` without a `run_id` column; `.cantCreate`
    ///   naming the folder when `outPath`'s folder does not exist or is not a folder, and naming `outPath` when it
    ///   (or its temporary file) cannot be made, is a folder, a socket, a block device or a dangling symbolic
    ///   link; `.ioError` when a write fails (a full disk, `/dev/full`, a closed standard output); `.tempFail` when
    ///   the database is locked past the busy timeout; `.interrupted` after SIGINT/SIGTERM (checked every 4096 rows).
    @discardableResult
    public static func export(databasePath: String, table: Table, format: Format, runs selectors: [String] = [],
                              outPath: String?) throws -> Int {
        if databasePath.isEmpty { throw LabError.usage("--db needs a database file path") }
        if let outPath, outPath.isEmpty { throw LabError.usage("--out needs a file path") }
        try LabStore.requireDatabaseFile(databasePath)
        try LabStore.requireLabDatabase(path: databasePath)
        let database = try Database.openForReading(databasePath)
        let query = try self.query(database, table: table, selectors: selectors)

        guard let outPath else {
            let sink = Sink(name: "standard output") { bytes in try OutputFiles.writeAll(1, bytes, name: "standard output") }
            return try write(query, format: format, to: sink)
        }
        let target: String
        switch try destination(outPath, databasePath: databasePath) {
        case .device:
            // Written as it is: a failed write leaves what was written (a device keeps nothing to restore).
            let file = try OutputFile(outPath)
            let count = try write(query, format: format, to: Sink(name: outPath) { try file.write($0) })
            try file.close()
            return count
        case .regularFile(let path):
            target = path
        }
        let folder = Paths.parent(target)
        let name = Paths.fileName(target)
        let temporary = (folder.isEmpty ? "" : folder + "/") + ".\(name).enclab-export-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let file = try OutputFile(temporary)
        var temporaryIsOurs = true
        do {
            let count = try write(query, format: format, to: Sink(name: outPath) { try file.write($0) })
            try file.close()
            try moveIntoPlace(temporary, target, shown: outPath, temporaryIsOurs: &temporaryIsOurs)
            return count
        } catch {
            try? file.close()
            if temporaryIsOurs { unlink(temporary) }
            throw error
        }
    }

    /// What `--out` names, as ``destination(_:databasePath:)`` finds it.
    enum Destination: Equatable {
        /// A new file, or an existing regular file, at this path (symbolic links resolved): written atomically.
        case regularFile(String)
        /// An existing character device or FIFO: opened and written as it is.
        case device
    }

    /// Decides where the export goes before a byte is written, refusing what must not be written:
    /// - the database itself or its `-wal`, `-shm` or `-journal` file, compared by real path (realpath(3) of the folder
    ///   for a name that does not exist yet) and, for an existing file, by device and inode (a hard link, a symbolic
    ///   link, `./db.sqlite`, an absolute path): `.usage`;
    /// - a missing folder, or a path through something that is not a folder: `.cantCreate` naming the folder (export
    ///   makes no folders, as `enclab convert -o` and `enclab encode -o` make none for their files);
    /// - a folder, a socket, a block device, a dangling symbolic link: `.cantCreate` naming `outPath`.
    /// A regular file (or a name not taken) is ``Destination/regularFile(_:)`` at its real path, so a symbolic link is
    /// kept and its target replaced; a character device or a FIFO is ``Destination/device``.
    static func destination(_ outPath: String, databasePath: String) throws -> Destination {
        func real(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        func identity(_ path: String) -> (dev: UInt64, ino: UInt64)? {
            var st = stat()
            return stat(path, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
        }
        let databaseFiles = [("", "the database being exported"), ("-wal", "the database's write-ahead log"),
                             ("-shm", "the database's shared-memory index"), ("-journal", "the database's rollback journal")]
        func refuseDatabase(_ suffix: String, _ what: String) -> LabError {
            LabError.usage("--out \(outPath) is \(what) (\(databasePath)\(suffix)); export only reads it: name another file")
        }
        let databaseReal = real(databasePath)

        var link = stat()
        guard lstat(outPath, &link) == 0 else {
            let code = errno
            let folder = Paths.parent(outPath).isEmpty ? "." : Paths.parent(outPath)
            var st = stat()
            if code == ENOENT || code == ENOTDIR {
                if stat(folder, &st) != 0 {
                    let why = errno
                    throw LabError.cantCreate("\(folder): \(why == ENOENT ? "no such folder" : "not a folder (\(OutputFiles.reason(why)))") for --out \(outPath) (export makes no folders)")
                }
                if st.st_mode & S_IFMT != S_IFDIR {
                    throw LabError.cantCreate("\(folder): not a folder, so --out \(outPath) cannot be made in it")
                }
            }
            // A new name: it must not be one SQLite would take as the database's own file.
            if let folderReal = real(folder), let databaseReal {
                let candidate = (folderReal == "/" ? "" : folderReal) + "/" + Paths.fileName(outPath)
                for (suffix, what) in databaseFiles where candidate == databaseReal + suffix { throw refuseDatabase(suffix, what) }
            }
            return .regularFile(outPath)
        }
        var st = link
        if link.st_mode & S_IFMT == S_IFLNK && stat(outPath, &st) != 0 {
            throw LabError.cantCreate("\(outPath): a symbolic link to nothing (\(OutputFiles.reason(errno))); not followed, not replaced")
        }
        for (suffix, what) in databaseFiles {
            if let d = identity(databasePath + suffix), d.dev == UInt64(st.st_dev), d.ino == UInt64(st.st_ino) { throw refuseDatabase(suffix, what) }
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            guard link.st_mode & S_IFMT == S_IFLNK else { return .regularFile(outPath) }
            guard let target = real(outPath) else {
                throw LabError.cantCreate("\(outPath): cannot resolve the symbolic link: \(OutputFiles.reason(errno))")
            }
            return .regularFile(target)
        case S_IFDIR: throw LabError.cantCreate("\(outPath): is a folder, not a file to write")
        case S_IFCHR, S_IFIFO: return .device
        case S_IFSOCK: throw LabError.cantCreate("\(outPath): is a socket, not a file, character device or FIFO to write")
        case S_IFBLK: throw LabError.cantCreate("\(outPath): is a block device; export writes files, character devices and FIFOs only")
        default: throw LabError.cantCreate("\(outPath): is not a regular file, character device or FIFO")
        }
    }

    /// Renames `temporary` onto `target`: at once when `target` does not exist (RENAME_NOREPLACE); else by swapping
    /// the two (RENAME_EXCHANGE) and removing what was there when it is a regular file, or swapping back and refusing
    /// when it is not (it was replaced while the export was written): never over a folder, device, FIFO or link.
    /// `temporaryIsOurs` is false when `temporary` holds something else than the export (a swap back that failed).
    /// - Throws: `.cantCreate` naming `shown`.
    static func moveIntoPlace(_ temporary: String, _ target: String, shown: String, temporaryIsOurs: inout Bool) throws {
        if try OutputFiles.renameNoReplace(temporary, target) { return }
        try OutputFiles.exchange(temporary, target)
        var st = stat()
        if lstat(temporary, &st) == 0 && st.st_mode & S_IFMT == S_IFREG {
            unlink(temporary)
            return
        }
        if (try? OutputFiles.exchange(temporary, target)) == nil { temporaryIsOurs = false }
        throw LabError.cantCreate("\(shown): is no longer a regular file (replaced while the export was written); left as it is")
    }

    /// The column names and the statement, prepared and bound, whose rows are the export.
    struct Query {
        let columns: [String]
        let statement: Statement
        /// For `frames`: where `pts` and `dts` are in the selected row; the timebase is its last two values
        /// (selected, not written), and `pts_time`/`dts_time` follow `pts` and `dts`.
        var times: (pts: Int, dts: Int)? = nil
    }

    /// `ticks` × `num` / `den` seconds as a decimal of 6 places, exact then rounded (a tie to even, as printf(3)
    /// rounds the `%.6f` with which ffprobe writes `pkt_pts_time`): `-0.033367`, `2.000000`; nil when a value is NULL, not an integer, or `den` not above 0 or
    /// `num` below 1.
    static func seconds(_ ticks: SQLValue, num: SQLValue, den: SQLValue) -> String? {
        guard let t = ticks.int, let n = num.int, let d = den.int, n > 0, d > 0 else { return nil }
        // t × n fits Int128 (each below 2^63); × 10^6 may not, for ticks far outside the lab's range (2^60): NULL then.
        let (scaled, overflow) = (Int128(t) * Int128(n)).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        let d128 = Int128(d)
        let magnitude = scaled.magnitude, dm = UInt128(d128)
        var micro = magnitude / dm
        let twice = (magnitude % dm) * 2
        if twice > dm || (twice == dm && micro % 2 == 1) { micro += 1 }
        let whole = micro / 1_000_000, fraction = String(micro % 1_000_000)
        return (scaled < 0 && micro > 0 ? "-" : "") + String(whole) + "." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// `"name"` with any double quote doubled: an SQL identifier read from the database's own schema.
    static func identifier(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The SELECT for `table`, its rows limited to the selected runs.
    static func query(_ database: Database, table: Table, selectors: [String]) throws -> Query {
        let path = database.path
        let found = try database.rows("SELECT type FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", [.text(table.sqlName)])
        guard !found.isEmpty else {
            if table == .metrics {
                throw LabError.noInput("\(path): no run_metrics table (run 'enclab analyze --db FILE' on it to compute the run metrics)")
            }
            throw LabError.data("\(path): no \(table.sqlName) table")
        }
        // cid, name, type, notnull, dflt_value, pk
        let info = try database.rows("SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", [.text(table.sqlName)])
        let columns = try info.map { try $0.text("name") }
        let primaryKey = try info.filter { try $0.integer("pk") > 0 }.sorted { try $0.integer("pk") < $1.integer("pk") }
            .map { try $0.text("name") }
        let runColumns = Set(try database.rows("SELECT name FROM pragma_table_info('runs')").map { try $0.text("name") })
        let hasKeys = runColumns.contains("run_key")

        var ids: [Int64] = []
        if !selectors.isEmpty {
            if table != .runs && !columns.contains("run_id") {
                throw LabError.data("\(path): \(table.sqlName) has no run_id column, so --run cannot select its rows")
            }
            ids = try selectRuns(database, selectors: selectors, hasKeys: hasKeys)
        }
        let filter = ids.isEmpty ? "" : " WHERE t.run_id IN (\(ids.map { _ in "?" }.joined(separator: ", ")))"
        var selected = columns.map { "t." + identifier($0) }
        var names = columns
        var from = "\(identifier(table.sqlName)) AS t"
        var joined = false
        if table == .frames, hasKeys, let at = columns.firstIndex(of: "run_id"), !columns.contains("run_key") {
            selected.insert("r.run_key", at: at + 1)
            names.insert("run_key", at: at + 1)
            from += " LEFT JOIN runs AS r ON r.run_id = t.run_id"
            joined = true
        }
        // The perceptual quality of each frame (`frame_quality_metrics`, by display index), NULL where not scored;
        // before the timebase columns, which must stay last.
        let qualityTable = try !database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'frame_quality_metrics'").isEmpty
        if table == .frames, qualityTable, columns.contains("run_id"), columns.contains("display_index") {
            let quality = ["vmaf", "vmaf_neg", "vmaf_4k", "psnr_hvs", "float_ssim", "ms_ssim", "ciede2000", "xpsnr"].filter { !names.contains($0) }
            selected += quality.map { "q." + identifier($0) }
            names += quality
            from += " LEFT JOIN frame_quality_metrics AS q ON q.run_id = t.run_id AND q.display_index = t.display_index"
        }
        var times: (pts: Int, dts: Int)?
        if table == .frames, columns.contains("run_id"), runColumns.contains("timebase_num"), runColumns.contains("timebase_den"),
           !columns.contains("pts_time"), !columns.contains("dts_time"),
           let pts = selected.firstIndex(of: "t." + identifier("pts")), let dts = selected.firstIndex(of: "t." + identifier("dts")) {
            if !joined { from += " LEFT JOIN runs AS r ON r.run_id = t.run_id" }
            selected += ["r.timebase_num", "r.timebase_den"]
            times = (pts, dts)
            names.insert("pts_time", at: names.firstIndex(of: "pts")! + 1)
            names.insert("dts_time", at: names.firstIndex(of: "dts")! + 1)
        }
        // The metrics gain each run's largest encoder delay (`run_delay`, schema 8) when the file has it.
        if table == .metrics, columns.contains("run_id"), !columns.contains("max_delay_frames"),
           !(try database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_delay'")).isEmpty {
            selected.append("d.max_delay_frames")
            names.append("max_delay_frames")
            from += " LEFT JOIN run_delay AS d ON d.run_id = t.run_id"
        }
        // ... and each run's count of pictures the encoder dropped (`skipped_frames`, schema 8), 0 for a run without any.
        if table == .metrics, columns.contains("run_id"), !columns.contains("skipped_frames"),
           !(try database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'skipped_frames'")).isEmpty {
            selected.append("coalesce(k.skipped_frames, 0)")
            names.append("skipped_frames")
            from += " LEFT JOIN (SELECT run_id, count(*) AS skipped_frames FROM skipped_frames GROUP BY run_id) AS k ON k.run_id = t.run_id"
        }
        // Then each run's RTP stage (`rtp_runs`, schema 9) when the file has it, each column prefixed `rtp_`; empty
        // for a run without the stage.
        if table == .metrics, columns.contains("run_id"), !columns.contains("rtp_packets"),
           !(try database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rtp_runs'")).isEmpty {
            let rtp = ["packets", "max_packets_per_frame", "largest_burst_bytes", "rtp_overhead_bytes", "loss", "packets_lost",
                       "frames_broken", "frames_frozen", "loss_events", "mean_recovery_frames", "max_recovery_frames",
                       "unrecovered_events", "mean_psnr_y"]
            selected += rtp.map { "p." + identifier($0) }
            names += rtp.map { $0.hasPrefix("rtp_") ? $0 : "rtp_" + $0 }
            from += " LEFT JOIN rtp_runs AS p ON p.run_id = t.run_id"
        }
        let order = primaryKey.isEmpty ? (columns.contains("run_id") ? ["run_id"] : []) : primaryKey
        let orderBy = order.isEmpty ? "" : " ORDER BY " + order.map { "t." + identifier($0) }.joined(separator: ", ")
        let statement = try database.prepare("SELECT \(selected.joined(separator: ", ")) FROM \(from)\(filter)\(orderBy)")
        try statement.bind(ids.map { .integer($0) })
        return Query(columns: names, statement: statement, times: times)
    }

    /// The run ids `selectors` name (``LabStore/select(_:rows:keys:databasePath:label:)``'s rules), in run_id order.
    static func selectRuns(_ database: Database, selectors: [String], hasKeys: Bool) throws -> [Int64] {
        let rows = try database.rows(hasKeys ? "SELECT run_id, run_key FROM runs ORDER BY run_id" : "SELECT run_id FROM runs ORDER BY run_id")
        var keys: [Int64: String] = [:]
        var runs: [LabStore.RunRow] = []
        for row in rows {
            let id = try row.integer("run_id")
            if hasKeys, let key = row["run_key"].string { keys[id] = key }
            // Only the id counts for selection; the other fields are placeholders, never read.
            runs.append(LabStore.RunRow(runID: id, experiment: "", clip: "", settingsJSON: "", status: "", frames: nil, bytes: nil,
                                        durationSeconds: nil, timebaseNum: nil, timebaseDen: nil, streamPath: nil, crop: nil,
                                        x264Version: nil, labVersion: "", ffmpegVersion: nil, machineJSON: "", createdAt: "",
                                        finishedAt: nil, width: nil, height: nil, fpsNum: nil, fpsDen: nil, inputFrames: nil,
                                        truncatedBytes: nil, warningsJSON: nil, error: nil))
        }
        return try LabStore.select(selectors, rows: runs, keys: keys, databasePath: database.path).map(\.runID).sorted()
    }

    /// Where the bytes go, through a buffer.
    final class Sink {
        let name: String
        let flush: ([UInt8]) throws -> Void
        var buffer: [UInt8] = []

        init(name: String, flush: @escaping ([UInt8]) throws -> Void) {
            self.name = name
            self.flush = flush
            buffer.reserveCapacity(1 << 16 + 4096)
        }

        func append(_ text: String) throws {
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 16 { try drain() }
        }

        func drain() throws {
            guard !buffer.isEmpty else { return }
            try flush(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Streams the query's rows to `sink` in `format`; returns the number of rows.
    static func write(_ query: Query, format: Format, to sink: Sink) throws -> Int {
        if format == .csv { try sink.append(query.columns.map { csvField(.text($0)) }.joined(separator: ",") + "\r\n") }
        let keys = query.columns.map { jsonString($0) + ":" }
        var count = 0
        while try query.statement.step() {
            let row = query.statement.row()
            var fields: [String]
            switch format {
            case .csv: fields = row.map(csvField)
            case .jsonl: fields = row.map(jsonValue)
            }
            if let t = query.times {
                // The timebase (the last two values) is not written; each time follows its ticks (dts after pts).
                let num = row[row.count - 2], den = row[row.count - 1]
                let none = format == .csv ? "" : "null"
                fields.removeLast(2)
                fields.insert(seconds(row[t.dts], num: num, den: den) ?? none, at: t.dts + 1)
                fields.insert(seconds(row[t.pts], num: num, den: den) ?? none, at: t.pts + 1 + (t.dts < t.pts ? 1 : 0))
            }
            switch format {
            case .csv:
                try sink.append(fields.joined(separator: ",") + "\r\n")
            case .jsonl:
                try sink.append("{" + zip(keys, fields).map { $0 + $1 }.joined(separator: ",") + "}\n")
            }
            count += 1
            if count % 4096 == 0 { try Interruption.check() }
        }
        try sink.drain()
        return count
    }

    /// A number as written: an integer in decimal, a real in Swift's shortest round-trip form (`inf`, `-inf`).
    static func number(_ value: SQLValue) -> String? {
        switch value {
        case .integer(let v): return String(v)
        case .real(let v): return v.description
        default: return nil
        }
    }

    /// One CSV field (RFC 4180 section 2, rules 5-7): NULL empty, empty text `""`, text with `,` `"` CR or LF
    /// quoted with `"` doubled, anything else as it is.
    static func csvField(_ value: SQLValue) -> String {
        switch value {
        case .null, .blob: return ""
        case .integer, .real: return number(value)!
        case .text(let s):
            if s.isEmpty { return "\"\"" }
            guard s.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return s }
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
    }

    /// One JSON value: `null`, a number (`null` for an infinite real), or a string.
    static func jsonValue(_ value: SQLValue) -> String {
        switch value {
        case .null, .blob: return "null"
        case .integer: return number(value)!
        case .real(let v): return v.isFinite ? v.description : "null"
        case .text(let s): return jsonString(s)
        }
    }

    /// A JSON string (RFC 8259 section 7): `"` and `\` escaped, control characters as `\n`, `\r`, `\t`, `\b`,
    /// `\f` or `\u00XX`, U+2028 and U+2029 as `\u2028`, `\u2029` (JavaScript before ES2019 refuses them raw).
    static func jsonString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
