import Foundation
import Testing
import EncoderLab

/// The database's failure classes as a user meets them: the built `enclab` against a database locked by another
/// process (the sqlite3 CLI) and one on a read-only mount. Exit statuses and stderr are checked exactly.
@Suite("enclab and its database, end to end")
struct DatabaseCommandTests {
    typealias CLI = CommandLineTests

    /// A second process, the sqlite3 CLI, holding `BEGIN EXCLUSIVE` on a database until `release()`.
    final class LockHolder {
        let process = Process()
        let input = Pipe(), output = Pipe()

        /// Returns once sqlite3 has printed what it prints after `BEGIN EXCLUSIVE` succeeded (no clock involved).
        init(_ db: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [db]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // .bail stops at an error, so "held" is printed only when the lock was taken.
            input.fileHandleForWriting.write(Data(".bail on\nBEGIN EXCLUSIVE;\nSELECT 'held';\n".utf8))
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains("held\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { throw LabError(.software, "sqlite3 could not lock \(db)") }
                seen += chunk
            }
        }

        func release() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try CLI.process("/usr/bin/sqlite3", [db, sql], in: "/").stdout.split(separator: "\n").map(String.init)
    }

    /// A folder with a 4-frame clip and a database holding one run, made by `enclab encode`.
    func labWithOneRun() throws -> String {
        let dir = CLI().scratch()
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 3).write(to: "\(dir)/c.y4m")
        let first = try CLI.process(CLI.binary, ["encode", "c.y4m", "--preset", "ultrafast", "--db", "lab.sqlite"], in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        return dir
    }

    @Test("a database locked by another process: enclab waits ENCLAB_DB_TIMEOUT_MS, then exits 75 naming the file and the wait")
    func locked() throws {
        let dir = try labWithOneRun()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let holder = try LockHolder("\(dir)/lab.sqlite")
        let r = try CLI.process("/usr/bin/env", ["ENCLAB_DB_TIMEOUT_MS=300", CLI.binary, "encode", "c.y4m", "--db", "lab.sqlite"], in: dir)
        holder.release()
        #expect(r.status == 75)
        #expect(r.stderr == "enclab: lab.sqlite: database is locked by another process (waited 0.3 s)\n")
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs") == ["1"])
        // Released, the same command records its run.
        let again = try CLI.process("/usr/bin/env", ["ENCLAB_DB_TIMEOUT_MS=300", CLI.binary, "encode", "c.y4m", "--db", "lab.sqlite"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["2"])
    }

    @Test("a bad ENCLAB_DB_TIMEOUT_MS is a usage error (64)")
    func badTimeout() throws {
        let dir = try labWithOneRun()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CLI.process("/usr/bin/env", ["ENCLAB_DB_TIMEOUT_MS=ten", CLI.binary, "encode", "c.y4m", "--db", "lab.sqlite"], in: dir)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: ENCLAB_DB_TIMEOUT_MS must be a whole number of milliseconds from 0 to 2147483647, got 'ten' (see 'enclab encode --help')\n")
    }

    /// Whether a private mount namespace with a read-only bind mount can be made here (root with CAP_SYS_ADMIN).
    static let readOnlyMountsWork: Bool = {
        let dir = NSTemporaryDirectory() + "enclab-ro-probe-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        // Succeeds only when the mount is made and then refuses a new file.
        let r = try? CLI.process("/usr/bin/unshare", ["-m", "sh", "-c", "mount --bind -o ro \"$0\" \"$0\" && ! touch \"$0/x\" 2>/dev/null", dir], in: "/")
        return r?.status == 0
    }()

    @Test("a good database on a read-only mount is 73 naming the file and the reason, not 65, and stays as it was",
          .enabled(if: readOnlyMountsWork, "read-only bind mounts (unshare -m, mount --bind -o ro) are not permitted here"))
    func readOnlyMount() throws {
        let dir = try labWithOneRun()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/ro", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: "\(dir)/lab.sqlite", toPath: "\(dir)/ro/lab.sqlite")
        // A second, rollback-journal copy: SQLite opens it read-only instead of failing to open it.
        try FileManager.default.copyItem(atPath: "\(dir)/ro/lab.sqlite", toPath: "\(dir)/ro/delete.sqlite")
        #expect(try sqlite("\(dir)/ro/delete.sqlite", "PRAGMA journal_mode=DELETE") == ["delete"])
        let before = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/ro").sorted().map {
            ($0, try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ro/\($0)")))
        }
        // In a private mount namespace (nothing leaks out of it), "ro" becomes read-only, then enclab runs.
        func encode(_ db: String) throws -> CommandLineTests.Result {
            try CLI.process("/usr/bin/unshare", ["-m", "sh", "-c", "mount --bind -o ro ro ro && exec \"$0\" encode c.y4m --db \"$1\"",
                                                 CLI.binary, db], in: dir)
        }
        let wal = try encode("ro/lab.sqlite")
        #expect(wal.status == 73)
        #expect(wal.stderr == "enclab: ro/lab.sqlite: cannot open or create the database: unable to open database file (Read-only file system)\n")
        let rollback = try encode("ro/delete.sqlite")
        #expect(rollback.status == 73)
        #expect(rollback.stderr == "enclab: ro/delete.sqlite: cannot write the database: SQLite could open it only for reading (Read-only file system)\n")
        let fresh = try encode("ro/new.sqlite")
        #expect(fresh.status == 73)
        #expect(fresh.stderr == "enclab: ro/new.sqlite: cannot open or create the database: unable to open database file (Read-only file system)\n")
        let after = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/ro").sorted().map {
            ($0, try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ro/\($0)")))
        }
        #expect(after.map(\.0) == before.map(\.0) && after.map(\.1) == before.map(\.1))
    }

    /// The database the real enclab of commit aef06d9 wrote (Tests/EncoderLabTests/Fixtures/README.md).
    static let previousVersionFixture = "\(CLI.root)/Tests/EncoderLabTests/Fixtures/aef06d9.sqlite"

    @Test("enclab on a database of commit aef06d9: it is migrated to version 9, its running run failed as interrupted, and the new run is run 4")
    func previousVersionDatabase() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: Self.previousVersionFixture, toPath: "\(dir)/old.sqlite")
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 3).write(to: "\(dir)/c.y4m")
        let r = try CLI.process(CLI.binary, ["encode", "c.y4m", "--preset", "ultrafast", "--db", "old.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try sqlite("\(dir)/old.sqlite", """
            PRAGMA user_version;
            SELECT run_id, status, clip, coalesce(error, '-'), count(f.run_id) FROM runs LEFT JOIN frames f USING (run_id) GROUP BY run_id;
            """) == ["9", "1|done|small.y4m|-|4", "2|done|small.y4m|-|4",
                     "3|failed|big.y4m|interrupted (found running when the database was opened)|0", "4|done|c.y4m|-|4"])
    }

    @Test("a database of a newer schema version: enclab exits 65 naming both versions, and the file stays as it was")
    func newerDatabase() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 3).write(to: "\(dir)/c.y4m")
        _ = try sqlite("\(dir)/new.sqlite", "CREATE TABLE runs (run_id); CREATE TABLE frames (run_id); PRAGMA user_version = 10;")
        let before = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/new.sqlite"))
        let r = try CLI.process(CLI.binary, ["encode", "c.y4m", "--db", "new.sqlite"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr == "enclab: new.sqlite: written by a newer enclab (schema version 10; this enclab knows version 9 and older)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/new.sqlite")) == before)
        // No journal or WAL file was made beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("new.sqlite") } == ["new.sqlite"])
    }
}
