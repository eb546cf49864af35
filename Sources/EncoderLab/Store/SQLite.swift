import CSQLite3
import Foundation

/// A value bound to or read from an SQLite statement.
public enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    public var int: Int64? { if case .integer(let v) = self { return v }; return nil }
    public var double: Double? {
        switch self { case .real(let v): return v; case .integer(let v): return Double(v); default: return nil }
    }
    public var string: String? { if case .text(let v) = self { return v }; return nil }
}

/// One SQLite connection (`sqlite3*`), closed with `sqlite3_close_v2` in `deinit`, even when opening failed.
public final class Database {
    fileprivate let handle: OpaquePointer?
    /// The file path, for error messages.
    public let path: String

    /// Opens or creates the database file.
    /// - Throws: `.noInput` when the file cannot be opened or created, naming the path and SQLite's reason.
    public init(path: String) throws {
        self.path = path
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        handle = db
        if status != SQLITE_OK {
            let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            throw LabError.noInput("\(path): cannot open database: \(reason)")
        }
        sqlite3_busy_timeout(db, 10_000)
    }

    deinit { sqlite3_close_v2(handle) }

    var message: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection" }

    /// Runs one or more statements without results.
    /// - Throws: `.software` with SQLite's message.
    public func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let text = error.map { String(cString: $0) } ?? message
            sqlite3_free(error)
            throw LabError.software("\(path): \(text)")
        }
    }

    /// Prepares a statement (finalized when the returned value is released).
    public func prepare(_ sql: String) throws -> Statement { try Statement(self, sql) }

    /// Runs `sql` with `bindings` and returns every row as an array of values.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [[SQLValue]] {
        let statement = try prepare(sql)
        try statement.bind(bindings)
        var rows: [[SQLValue]] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }

    /// Runs `body` inside one transaction: committed when it returns, rolled back when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The rowid of the last insert on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

/// One prepared statement (`sqlite3_stmt*`), finalized in `deinit`.
public final class Statement {
    private let handle: OpaquePointer?
    private let database: Database

    fileprivate init(_ database: Database, _ sql: String) throws {
        self.database = database
        var stmt: OpaquePointer?
        let status = sqlite3_prepare_v2(database.handle, sql, -1, &stmt, nil)
        handle = stmt
        if status != SQLITE_OK { throw LabError.software("\(database.path): \(database.message) in: \(sql)") }
    }

    deinit { sqlite3_finalize(handle) }

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
            }
            if status != SQLITE_OK { throw LabError.software("\(database.path): \(database.message)") }
        }
    }

    /// Steps once: true when a row is available, false when done.
    public func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw LabError.software("\(database.path): \(database.message)")
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
            default: return .null
            }
        }
    }
}
