import Foundation
import Testing
@testable import EncoderLab

/// A failing statement's error keeps what SQLite said, as GRDB's `DatabaseError` does: the primary result code, the
/// extended one and the statement. The codes are sqlite.org/rescode.html's (SQLITE_CONSTRAINT 19,
/// SQLITE_CONSTRAINT_CHECK 19 | 1 << 8 = 275, SQLITE_CONSTRAINT_PRIMARYKEY 19 | 6 << 8 = 1555, SQLITE_BUSY 5, SQLITE_ERROR 1);
/// SQLite's messages are those the sqlite3 CLI prints for the same statements.
@Suite("SQLite errors: result code, extended code and statement")
struct DatabaseErrorTests {
    @Test("a CHECK constraint failure says its extended code 275 and the statement, and keeps result code 19 beside them")
    func checkConstraint() throws {
        let scratch = Scratch()
        let path = scratch.file("e.sqlite")
        let db = try Database(path: path, busyTimeoutMilliseconds: 0)
        try db.execute("CREATE TABLE t (x INTEGER PRIMARY KEY, y INTEGER CHECK (y > 0))")
        // sqlite3 CLI 3.40 on the same statement: "CHECK constraint failed: y > 0 (19)".
        let statement = "INSERT INTO t (x, y) VALUES (1, ?)"
        #expect(throws: LabError(.software, "\(path): CHECK constraint failed: y > 0 (SQLite code 275) in: \(statement)")) {
            try db.prepare("INSERT INTO t (x, y)\n    VALUES (1, ?)").run([.integer(-1)])
        }
        do {
            try db.prepare("INSERT INTO t (x, y)\n    VALUES (1, ?)").run([.integer(-1)])
            Issue.record("the insert did not fail")
        } catch let e as LabError {
            #expect(e.sqlite == DatabaseError(resultCode: 19, extendedResultCode: 275, message: "CHECK constraint failed: y > 0", statement: statement))
            #expect(e.sqlite?.description == "SQLite error 19 (extended code 275): CHECK constraint failed: y > 0 - while executing `\(statement)`")
        }
        try db.execute("INSERT INTO t (x, y) VALUES (1, 1)")
        do {
            try db.execute("INSERT INTO t (x, y) VALUES (1, 2)")
            Issue.record("the second row 1 was stored")
        } catch let e as LabError {
            #expect(e.sqlite == DatabaseError(resultCode: 19, extendedResultCode: 1555, message: "UNIQUE constraint failed: t.x",
                                              statement: "INSERT INTO t (x, y) VALUES (1, 2)"))
        }
    }

    @Test("a statement SQLite cannot prepare keeps result code 1 and the statement")
    func prepareFailure() throws {
        let scratch = Scratch()
        let path = scratch.file("e.sqlite")
        let db = try Database(path: path, busyTimeoutMilliseconds: 0)
        #expect(throws: LabError(.software, "\(path): no such table: nowhere (SQLite code 1) in: SELECT a FROM nowhere")) {
            try db.query("SELECT a FROM nowhere")
        }
    }

    @Test("a lock keeps its message (75, named file and wait) and SQLite's code 5 with the statement beside it")
    func lockedKeepsStatement() throws {
        let scratch = Scratch()
        let path = scratch.file("e.sqlite")
        let holder = try Database(path: path, busyTimeoutMilliseconds: 0)
        try holder.execute("CREATE TABLE t (x INTEGER); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
        let other = try Database(path: path, busyTimeoutMilliseconds: 0)
        do {
            try other.execute("INSERT INTO t VALUES (2)")
            Issue.record("the second writer was not refused")
        } catch let e as LabError {
            #expect(e == LabError(.tempFail, "\(path): database is locked by another process (waited 0 s)"))
            #expect(e.sqlite?.resultCode == 5)
            #expect(e.sqlite?.extendedResultCode == 5)
            #expect(e.sqlite?.statement == "INSERT INTO t VALUES (2)")
        }
        try holder.execute("ROLLBACK")
    }
}
