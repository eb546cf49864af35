import Foundation

/// `enclab export`: one table of a lab database as CSV or JSON Lines, for pandas, R and spreadsheets.
///
/// - Tables: `frames` (one row per frame, ordered by run_id and coded_index; `run_key` from `runs` follows
///   `run_id` when the database has keys, so rows join to `runs` by either), `runs` (one row per run, by run_id) and
///   `metrics` (the table `run_metrics` that `enclab analyze` writes, exported whatever its columns, ordered by its
///   primary key). The columns of each are the table's own, in the table's order (`PRAGMA table_info`), so an older
///   schema version exports what it has.
/// - CSV (RFC 4180): a header row of column names, then one record per row; records end with CRLF, as RFC 4180
///   section 2 says (Python's csv module, pandas, R and spreadsheets read it); a field with
///   a comma, a double quote, CR or LF is enclosed in double quotes with each double quote doubled; NULL is an empty
///   field, empty text `""` (a quoted empty field), so the two stay apart for a reader that looks.
/// - JSONL: one JSON object per line (LF), keys in column order; NULL is `null`, text a JSON string (control
///   characters, U+2028 and U+2029 escaped, other characters as UTF-8).
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
    ///   - outPath: written atomically: into a temporary file in the same folder (missing folders are made), flushed
    ///     (fsync), then renamed over `outPath`; on any failure the temporary file is removed and `outPath` is left as
    ///     it was.
    /// - Returns: the number of rows written (the header not counted).
    /// - Throws: `.usage` for an empty path or a bad `runs` entry (as `plot`); `.noInput` when the database does not
    ///   exist or is a folder, an entry of `runs` names no run, or `metrics` is asked of a database without
    ///   `run_metrics` (made by `enclab analyze --db FILE`); `.data` for a file that is not an enclab database, or
    ///   `runs` given for a `run_metrics` without a `run_id` column; `.cantCreate` when `outPath` (or its
    ///   temporary file) cannot be made or is a folder; `.ioError` when a write fails (a full disk, a closed
    ///   standard output); `.tempFail` when the database is locked past the busy timeout; `.interrupted` after
    ///   SIGINT/SIGTERM (checked every 4096 rows).
    @discardableResult
    public static func export(databasePath: String, table: Table, format: Format, runs selectors: [String] = [],
                              outPath: String?) throws -> Int {
        if databasePath.isEmpty { throw LabError.usage("--db needs a database file path") }
        if let outPath, outPath.isEmpty { throw LabError.usage("--out needs a file path") }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: databasePath, isDirectory: &isFolder) else {
            throw LabError.noInput("\(databasePath): no such database")
        }
        if isFolder.boolValue { throw LabError.noInput("\(databasePath): is a folder, not a database") }
        try LabStore.requireLabDatabase(path: databasePath)
        let database = try Database(path: databasePath, readOnly: true)
        let query = try self.query(database, table: table, selectors: selectors)

        guard let outPath else {
            let sink = Sink(name: "standard output") { bytes in try writeAll(1, bytes, name: "standard output") }
            return try write(query, format: format, to: sink)
        }
        if FileManager.default.fileExists(atPath: outPath, isDirectory: &isFolder), isFolder.boolValue {
            throw LabError.cantCreate("\(outPath): is a folder, not a file to write")
        }
        let folder = Paths.parent(outPath)
        if !folder.isEmpty { try OutputFiles.makeDirectory(folder) }
        let name = outPath.split(separator: "/").last.map(String.init) ?? outPath
        let temporary = (folder.isEmpty ? "" : folder + "/") + ".\(name).enclab-export-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let file = try OutputFile(temporary)
        do {
            let count = try write(query, format: format, to: Sink(name: outPath) { try file.write($0) })
            try file.close()
            if rename(temporary, outPath) != 0 {
                let code = errno
                throw OutputFiles.creationError("\(outPath): cannot move the export into place: \(OutputFiles.reason(code))", code)
            }
            return count
        } catch {
            try? file.close()
            unlink(temporary)
            throw error
        }
    }

    /// The column names and the statement, prepared and bound, whose rows are the export.
    struct Query {
        let columns: [String]
        let statement: Statement
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
        if table == .frames, hasKeys, let at = columns.firstIndex(of: "run_id"), !columns.contains("run_key") {
            selected.insert("r.run_key", at: at + 1)
            names.insert("run_key", at: at + 1)
            from += " LEFT JOIN runs AS r ON r.run_id = t.run_id"
        }
        let order = primaryKey.isEmpty ? (columns.contains("run_id") ? ["run_id"] : []) : primaryKey
        let orderBy = order.isEmpty ? "" : " ORDER BY " + order.map { "t." + identifier($0) }.joined(separator: ", ")
        let statement = try database.prepare("SELECT \(selected.joined(separator: ", ")) FROM \(from)\(filter)\(orderBy)")
        try statement.bind(ids.map { .integer($0) })
        return Query(columns: names, statement: statement)
    }

    /// The run ids `selectors` name (``PlotFromStore/select(_:rows:keys:databasePath:)``'s rules), in run_id order.
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
        return try PlotFromStore.select(selectors, rows: runs, keys: keys, databasePath: database.path).map(\.runID).sorted()
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

    /// write(2) of all of `bytes` to `fd`.
    /// - Throws: `.ioError` naming `name` and the reason.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], name: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LabError.ioError("\(name): write failed: \(OutputFiles.reason(errno))")
            }
            offset += n
        }
    }

    /// Streams the query's rows to `sink` in `format`; returns the number of rows.
    static func write(_ query: Query, format: Format, to sink: Sink) throws -> Int {
        if format == .csv { try sink.append(query.columns.map { csvField(.text($0)) }.joined(separator: ",") + "\r\n") }
        let keys = query.columns.map { jsonString($0) + ":" }
        var count = 0
        while try query.statement.step() {
            let values = query.statement.row()
            switch format {
            case .csv:
                try sink.append(values.map(csvField).joined(separator: ",") + "\r\n")
            case .jsonl:
                try sink.append("{" + zip(keys, values).map { $0 + jsonValue($1) }.joined(separator: ",") + "}\n")
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
        case .null: return ""
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
        case .null: return "null"
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
