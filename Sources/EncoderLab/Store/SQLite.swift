internal import CSQLite3
import Foundation

/// What SQLite said of a failure, kept in the lab's error (``LabError/sqlite``) as GRDB's `DatabaseError` keeps it:
/// the primary result code (`SQLITE_CONSTRAINT`, 19), the extended one (`SQLITE_CONSTRAINT_CHECK`, 275), SQLite's
/// message (`sqlite3_errmsg`) and the statement that failed (nil when opening the file failed). sqlite.org/rescode.html.
public struct DatabaseError: Equatable, Sendable, CustomStringConvertible {
    /// The primary result code: the extended code's low 8 bits.
    public var resultCode: Int32
    /// The extended result code (`sqlite3_extended_errcode`); equal to `resultCode` when SQLite gives none finer.
    public var extendedResultCode: Int32
    /// SQLite's own message.
    public var message: String
    /// The statement that failed, its runs of white space made one space; nil for a failure outside a statement.
    public var statement: String?

    /// "SQLite error 19 (extended code 275): CHECK constraint failed: ... - while executing `INSERT ...`", as GRDB
    /// describes its `DatabaseError`.
    public var description: String {
        "SQLite error \(resultCode) (extended code \(extendedResultCode)): \(message)" + (statement.map { " - while executing `\($0)`" } ?? "")
    }
}

/// One SQLite connection (`sqlite3*`), closed with `sqlite3_close_v2` in `deinit`, even when opening failed.
///
/// Every failure is a `LabError` whose kind follows SQLite's primary result code (`extended code & 0xff`, see
/// ``Database/kind(ofResultCode:)``), with SQLite's codes and the failing statement in its ``LabError/sqlite``
/// (``DatabaseError``); the extended code also stays in ``lastResultCode``. Messages are one line and name the
/// database file; one of the lab's own failures (`.software`) names the extended code and the statement too.
///
/// Once any statement reports `SQLITE_CORRUPT` or `SQLITE_NOTADB`, the connection rolls back its open
/// transaction (undoing only its own changes) and refuses every later statement that would write: the file is
/// not written further by this connection. Reads are still allowed.
public final class Database {
    fileprivate let handle: OpaquePointer?
    /// The file path, for error messages.
    public let path: String
    /// How long a statement waits for another connection's lock before failing with `.tempFail`, in milliseconds.
    public let busyTimeoutMilliseconds: Int32
    /// SQLite's extended result code of the last failure on this connection (`SQLITE_OK` before any).
    public private(set) var lastResultCode: Int32 = SQLITE_OK
    /// The error that marked the file damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`); rethrown for every later write.
    public private(set) var damage: LabError?

    /// The busy timeout when neither the caller nor the environment sets one: 10 s.
    public static let defaultBusyTimeoutMilliseconds: Int32 = 10_000

    /// The busy timeout from the environment variable `ENCLAB_DB_TIMEOUT_MS` (whole milliseconds, 0 to
    /// 2147483647; 0 fails at once on a lock), or ``defaultBusyTimeoutMilliseconds`` when it is unset.
    /// - Throws: `.usage` when the variable is set to anything else, naming it and its value.
    public static func busyTimeout(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int32 {
        guard let text = environment["ENCLAB_DB_TIMEOUT_MS"] else { return defaultBusyTimeoutMilliseconds }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int32(text) else {
            throw LabError.usage("ENCLAB_DB_TIMEOUT_MS must be a whole number of milliseconds from 0 to \(Int32.max), got '\(text)'")
        }
        return value
    }

    /// Opens or creates the database file.
    /// - Parameters:
    ///   - busyTimeoutMilliseconds: how long to wait for another process's lock; nil takes `ENCLAB_DB_TIMEOUT_MS`
    ///     from the environment, else 10 000 ms (see ``busyTimeout(environment:)``).
    ///   - readOnly: open with `SQLITE_OPEN_READONLY` (never creates the file).
    /// - Throws: `.cantCreate` when the file cannot be opened or created (`SQLITE_CANTOPEN`, `SQLITE_PERM`),
    ///   `.usage` for a bad `ENCLAB_DB_TIMEOUT_MS`, otherwise the kind of SQLite's result code.
    ///   - uri: `opening` is an SQLite URI filename (`file:...?immutable=1`), opened with `SQLITE_OPEN_URI`; `path`
    ///     still names the file in messages.
    public init(path: String, busyTimeoutMilliseconds: Int32? = nil, readOnly: Bool = false, uri opening: String? = nil) throws {
        self.path = path
        self.busyTimeoutMilliseconds = try busyTimeoutMilliseconds ?? Self.busyTimeout()
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_FULLMUTEX
            | (opening != nil ? SQLITE_OPEN_URI : 0)
        let status = sqlite3_open_v2(opening ?? path, &db, flags, nil)
        handle = db
        guard let db else { throw LabError.software("\(path): cannot open database: out of memory") }
        sqlite3_extended_result_codes(db, 1)
        if status != SQLITE_OK { throw failure(status) }
        sqlite3_busy_timeout(db, self.busyTimeoutMilliseconds)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Opens an existing database file to read it only, wherever it is: `SQLITE_OPEN_READONLY`, and its first read
    /// tried at once. When that read fails because nothing can be written beside the file (SQLite needs to create
    /// the `-shm` file of a WAL database, or a lock, in the file's folder: a read-only mount, a folder without write
    /// permission, an immutable folder), the file is opened again as immutable (`file:PATH?immutable=1`: no lock and
    /// no file beside it; exact, since nothing can write there either), unless it has a `-wal` file with content
    /// (commits not yet in the file, which immutable reading would miss).
    /// - Parameter path: the path as SQLite is to open it (``LabStore/openingPath(_:)``); `shownPath` names it.
    /// - Throws: the database's errors; `.cantCreate` naming the file when it has a non-empty `-wal` in a place where
    ///   it cannot be replayed.
    static func openForReading(_ path: String, shownPath: String? = nil, busyTimeoutMilliseconds: Int32? = nil) throws -> Database {
        let shown = shownPath ?? path
        let first = try Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnly: true)
        do {
            _ = try first.query("SELECT count(*) FROM sqlite_master")
            return first
        } catch let e as LabError where e.kind == .cantCreate {
            var st = stat()
            if stat(path + "-wal", &st) == 0 && st.st_size > 0 {
                throw LabError.cantCreate("\(shown): cannot read the database here: its write-ahead log \(shown)-wal holds commits, and SQLite cannot open it in this place (\(e.message)); copy the database with its -wal file to a folder that can be written")
            }
            let absolute = Paths.absolute(path)
            var allowed = CharacterSet.urlPathAllowed
            allowed.remove(charactersIn: "?#%")
            let escaped = absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
            return try Database(path: shown, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnly: true,
                                uri: "file:\(escaped)?immutable=1")
        }
    }

    var message: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection" }

    /// Whether the connection can only read (opened read-only, or SQLite fell back to reading a file it could
    /// not open for writing: a read-only file system, an immutable file).
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// The exit class of an SQLite result code (primary code = `code & 0xff`): `SQLITE_BUSY`, `SQLITE_LOCKED` →
    /// `.tempFail`; `SQLITE_READONLY`, `SQLITE_CANTOPEN`, `SQLITE_PERM` → `.cantCreate`; `SQLITE_CORRUPT`,
    /// `SQLITE_NOTADB` → `.data`; `SQLITE_FULL`, `SQLITE_IOERR` → `.ioError`; anything else → `.software`.
    public static func kind(ofResultCode code: Int32) -> LabError.Kind {
        switch code & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: return .tempFail
        case SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM: return .cantCreate
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .data
        case SQLITE_FULL, SQLITE_IOERR: return .ioError
        default: return .software
        }
    }

    /// Whole milliseconds as seconds without trailing zeros: 10000 → "10", 200 → "0.2", 1250 → "1.25".
    static func seconds(milliseconds ms: Int32) -> String {
        let whole = ms / 1000, fraction = ms % 1000
        if fraction == 0 { return "\(whole)" }
        var digits = String(format: "%03d", fraction)
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// Turns a failing result code into the lab's error (and records it), SQLite's account of it in
    /// ``LabError/sqlite``; the message names `sql` and the codes only for `.software`.
    /// A `SQLITE_CORRUPT`/`SQLITE_NOTADB` marks the connection damaged and rolls back its open transaction.
    func failure(_ status: Int32, sql: String? = nil) -> LabError {
        // The connection's extended code, when it is about this failure (same primary code); else the status.
        let code = handle.map { sqlite3_extended_errcode($0) }.flatMap { $0 & 0xff == status & 0xff ? $0 : nil } ?? status
        lastResultCode = code
        let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        var error = labError(code: code, reason: reason, sql: sql)
        error.sqlite = DatabaseError(resultCode: code & 0xff, extendedResultCode: code, message: reason, statement: sql.map(Self.oneLine))
        if error.kind == .data && damage == nil {
            damage = error
            // Undo this connection's own uncommitted changes; nothing else is written from here on.
            if let handle, sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        }
        return error
    }

    /// `sql` on one line: each run of white space one space.
    static func oneLine(_ sql: String) -> String { sql.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    /// The lab's message of a failure with extended result code `code` and SQLite's message `reason`.
    private func labError(code: Int32, reason: String, sql: String?) -> LabError {
        let kind = Self.kind(ofResultCode: code)
        switch kind {
        case .tempFail:
            return LabError.tempFail("\(path): database is locked by another process (waited \(Self.seconds(milliseconds: busyTimeoutMilliseconds)) s)")
        case .cantCreate:
            let action = code & 0xff == SQLITE_READONLY ? "cannot write the database" : "cannot open or create the database"
            return LabError.cantCreate("\(path): \(action): \(reason)\(systemReason.map { " (\($0))" } ?? "")")
        case .data:
            return LabError.data("\(path): \(reason) (damaged or not a database)")
        case .ioError:
            return LabError.ioError("\(path): cannot write the database: \(reason)")
        default:
            let statement = sql.map { " in: " + Self.oneLine($0) } ?? ""
            return LabError.software("\(path): \(reason) (SQLite code \(code))\(statement)")
        }
    }

    /// Why the file (or, when it does not exist, its folder) cannot be written, as the file system says
    /// (`access(2)`, which reports a read-only mount or an immutable file even to root); nil when it can.
    private var systemReason: String? {
        let folder = Paths.parent(path)
        let target = FileManager.default.fileExists(atPath: path) ? path : (folder.isEmpty ? "." : folder)
        return access(target, W_OK) == 0 ? nil : String(cString: strerror(errno))
    }

    /// Runs one or more statements without results, each through ``prepare(_:)`` (so a damaged file refuses
    /// them the same way).
    /// - Throws: the kind of SQLite's result code (``kind(ofResultCode:)``).
    ///
    /// The text is copied to C once and prepared from SQLite's tail offset statement after statement, so a schema of
    /// many statements costs time in proportion to its length (not to its length times its statement count).
    public func execute(_ sql: String) throws {
        let utf8 = Array(sql.utf8CString)
        var offset = 0
        while !Self.onlyWhiteSpace(utf8, from: offset) {
            let (statement, tail) = try Statement.prepare(self, utf8, from: offset)
            guard let statement else { break }
            while try statement.step() {}
            offset = tail
        }
    }

    /// Whether the NUL-terminated `utf8` holds only white space (Foundation's `.whitespacesAndNewlines`) from
    /// `offset` on: ASCII on its bytes, anything else through Foundation.
    private static func onlyWhiteSpace(_ utf8: [CChar], from offset: Int) -> Bool {
        let end = utf8.count - 1
        guard let first = utf8[offset..<end].firstIndex(where: { $0 != 0x20 && !(0x09...0x0D).contains($0) }) else { return true }
        if utf8[first] >= 0 { return false }
        let rest = String(decoding: utf8[first..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return rest.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    /// Prepares a statement (finalized when the returned value is released).
    /// - Throws: the kind of SQLite's result code; a file not an SQLite database fails here with `.data`.
    public func prepare(_ sql: String) throws -> Statement {
        let (statement, _) = try Statement.prepare(self, sql)
        guard let statement else { throw LabError.software("\(path): no SQL statement in: \(sql)") }
        return statement
    }

    /// Runs `sql` with `bindings` and returns every row as an array of values.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [[SQLValue]] {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        var rows: [[SQLValue]] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }

    /// Runs `sql` with `bindings` and returns every row, its columns read by name (``Row``).
    public func rows(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        let names = statement.columnIndexes
        var rows: [Row] = []
        while try statement.step() { rows.append(Row(path: path, indexes: names, values: statement.row())) }
        return rows
    }

    /// Runs `body` inside one transaction (`BEGIN IMMEDIATE`: the write lock is taken, or waited for, at the
    /// start): committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            if let damage { throw damage }
            try execute("COMMIT")
            return result
        } catch {
            if let handle, sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }
}

/// One result row whose columns are read by name (as GRDB's `Row["coded_index"]`); NULL reads as nil.
public struct Row {
    let path: String
    let indexes: [String: Int]
    /// The columns in the statement's order.
    public let values: [SQLValue]
    /// Where the row is, for messages ("run 3, frame 7 in coded order"); nil when the file is all they name.
    var place: String?

    init(path: String, indexes: [String: Int], values: [SQLValue]) {
        self.path = path; self.indexes = indexes; self.values = values
    }

    /// The row with `place` named in its messages: "FILE: PLACE: column C holds ...".
    public func at(_ place: String) -> Row {
        var r = self
        r.place = place
        return r
    }

    /// The value of the column named `name`; asking for a column the query did not select is the lab's bug.
    public subscript(_ name: String) -> SQLValue {
        guard let index = indexes[name] else { preconditionFailure("no column '\(name)' in the query's result") }
        return values[index]
    }

    /// Whether the query selected a column named `name` (a table of an older schema version may lack it).
    public func has(_ name: String) -> Bool { indexes[name] != nil }

    /// A NOT NULL integer column. - Throws: `.data` naming the file and column when it holds anything else.
    public func integer(_ name: String) throws -> Int64 {
        guard let v = self[name].int else { throw mismatch(name, "an integer") }
        return v
    }

    /// A NOT NULL real column (an integer value reads as its Double). - Throws: `.data` for NULL, text, a BLOB or a
    /// real that is not finite.
    public func real(_ name: String) throws -> Double {
        guard case .some(.some(let v)) = self[name].measurement else { throw mismatch(name, "a finite number") }
        return v
    }

    /// A NOT NULL text column. - Throws: `.data` for NULL or a number.
    public func text(_ name: String) throws -> String {
        guard let v = self[name].string else { throw mismatch(name, "text") }
        return v
    }

    /// A column that may be NULL but otherwise holds a finite number (an integer reads as its Double): a PSNR, a
    /// QP, an SSIM (``SQLValue/measurement``).
    /// - Throws: `.data` naming the file, the row's place and the column for text or a BLOB (which plots would draw
    ///   as NaN and averages read as 0), or for a real that is not finite (an Inf mean, a point off the axis).
    public func optionalNumber(_ name: String) throws -> Double? {
        guard let v = self[name].measurement else { throw mismatch(name, "a finite number or NULL") }
        return v
    }

    private func mismatch(_ name: String, _ expected: String) -> LabError {
        let found: String
        switch self[name] {
        case .null: found = "NULL"
        case .integer(let v): found = "the integer \(v)"
        case .real(let v): found = "the real \(v)"
        case .text(let t): found = "the text '\(Shown.text(t, limit: 40))'"
        case .blob(let b): found = "a BLOB of \(b.count) bytes"
        }
        return LabError.data("\(path): \(place.map { "\($0): " } ?? "")column \(name) holds \(found), expected \(expected)")
    }
}

/// One prepared statement (`sqlite3_stmt*`), finalized in `deinit`.
public final class Statement {
    private let handle: OpaquePointer
    private let database: Database
    private let sql: String

    private init(_ database: Database, _ handle: OpaquePointer, _ sql: String) {
        self.database = database
        self.handle = handle
        self.sql = sql
    }

    /// Prepares the first statement of `sql`; returns it (nil for only comments or spaces) and the rest of `sql`.
    fileprivate static func prepare(_ database: Database, _ sql: String) throws -> (Statement?, String) {
        let utf8 = Array(sql.utf8CString)
        let (statement, tailOffset) = try prepare(database, utf8, from: 0)
        return (statement, text(utf8, tailOffset..<max(tailOffset, utf8.count - 1)))
    }

    /// Prepares the first statement of the NUL-terminated `utf8` from `offset` on; returns it (nil for only comments
    /// or spaces) and the offset in `utf8` where the rest begins.
    fileprivate static func prepare(_ database: Database, _ utf8: [CChar], from offset: Int) throws -> (Statement?, Int) {
        var stmt: OpaquePointer?
        var tailOffset = offset
        let status = utf8.withUnsafeBufferPointer { buffer -> Int32 in
            var tail: UnsafePointer<CChar>?
            let status = sqlite3_prepare_v2(database.handle, buffer.baseAddress! + offset, -1, &stmt, &tail)
            if let tail, let base = buffer.baseAddress { tailOffset = tail - base }
            return status
        }
        if status != SQLITE_OK {
            sqlite3_finalize(stmt)
            throw database.failure(status, sql: text(utf8, offset..<max(offset, utf8.count - 1)))
        }
        guard let stmt else { return (nil, tailOffset) }
        return (Statement(database, stmt, text(utf8, offset..<tailOffset)), tailOffset)
    }

    private static func text(_ utf8: [CChar], _ range: Range<Int>) -> String {
        String(decoding: utf8[range].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { sqlite3_finalize(handle) }

    /// Column name → index, for ``Row``.
    var columnIndexes: [String: Int] {
        var names: [String: Int] = [:]
        for i in 0..<sqlite3_column_count(handle) {
            if let name = sqlite3_column_name(handle, i) { names[String(cString: name)] = names[String(cString: name)] ?? Int(i) }
        }
        return names
    }

    /// Binds values to ?1, ?2, ... after resetting the statement.
    public func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(handle, index)
            case .integer(let v): status = sqlite3_bind_int64(handle, index, v)
            case .real(let v): status = v.isFinite ? sqlite3_bind_double(handle, index, v) : sqlite3_bind_null(handle, index)
            case .text(let v): status = sqlite3_bind_text(handle, index, v, -1, enclab_sqlite_transient())
            case .blob(let v):
                status = v.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32(v.count), enclab_sqlite_transient()) }
            }
            if status != SQLITE_OK { throw database.failure(status, sql: sql) }
        }
    }

    /// Steps once: true when a row is available, false when done.
    /// - Throws: the kind of SQLite's result code; on a damaged file, the damage error for any statement that
    ///   would write (``Database/damage``).
    public func step() throws -> Bool {
        if let damage = database.damage, sqlite3_stmt_readonly(handle) == 0 { throw damage }
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.failure(status, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds and runs a statement that returns no rows.
    public func run(_ values: [SQLValue]) throws {
        try bind(values)
        while try step() {}
    }

    /// The current row's columns.
    public func row() -> [SQLValue] {
        (0..<sqlite3_column_count(handle)).map { i in
            switch sqlite3_column_type(handle, i) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, i))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, i))
            case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(handle, i)))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(handle, i))
                guard count > 0, let bytes = sqlite3_column_blob(handle, i) else { return .blob([]) }
                return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
            default: return .null
            }
        }
    }
}
