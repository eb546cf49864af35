import Foundation
import Testing
@testable import EncoderLab

/// Schema migrations on a database written by the real previous version (Fixtures/aef06d9.sqlite, see
/// Fixtures/README.md), always on a copy. The sqlite3 CLI reads the untouched fixture as the reference.
@Suite("SQLite store: migrations")
struct StoreMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/aef06d9.sqlite").path

    @discardableResult
    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    /// Runs SQL in sqlite3 with `-quote` (every value as an SQL literal: text quoted, REALs to 17+ digits).
    static func quoted(_ db: String, _ sql: String) throws -> [String] {
        let out = try Witness.run("sqlite3", ["-quote", db, sql])
        guard out.status == 0 else { throw LabError.software("sqlite3 \(db): \(out.stderr)") }
        return out.stdout.split(separator: "\n").map(String.init)
    }

    /// A copy of the fixture in `scratch`.
    static func copy(_ scratch: Scratch, _ name: String = "old.sqlite") throws -> String {
        let path = scratch.file(name)
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        return path
    }

    /// A REAL as sqlite3 gives its IEEE 754 bits (16 hex digits; empty for NULL), and the same for a Double.
    static func bits(_ column: String) -> String { "hex(ieee754_to_blob(\(column)))" }
    static func bits(_ value: Double?) -> String { value.map { String(format: "%016llX", $0.bitPattern) } ?? "" }

    @Test("the fixture is what its README says: version 0, runs 1 and 2 done (run 2 without PSNRs), run 3 running")
    func fixtureAsDescribed() throws {
        #expect(try Self.sqlite(Self.fixture, """
            PRAGMA user_version; PRAGMA journal_mode;
            SELECT r.run_id, r.status, r.frames, count(f.run_id), total(f.psnr_y IS NULL AND f.run_id IS NOT NULL)
            FROM runs r LEFT JOIN frames f USING (run_id) GROUP BY r.run_id;
            """) == ["0", "delete", "1|done|4|4|0.0", "2|done|4|4|4.0", "3|running||0|0.0"])
    }

    @Test("the fixture migrates to version 8: x264's values bit for bit in x264_psnr_*, the lab's PSNR from the stored decode, other tables as they were")
    func framesKept() throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: Self.fixture))
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(path, "PRAGMA user_version; PRAGMA journal_mode") == ["9", "wal"])
        let reference = try Self.sqlite(Self.fixture, """
            SELECT run_id, coded_index, display_index, type, size_bytes, pts, dts, \(Self.bits("qp")), \(Self.bits("ssim"))
            FROM frames ORDER BY run_id, coded_index
            """)
        var read: [String] = []
        for run in [1, 2] as [Int64] {
            for f in try store.frames(run: run) {
                read.append("\(run)|\(f.codedIndex)|\(f.displayIndex)|\(f.type)|\(f.sizeBytes)|\(f.pts)|\(f.dts)|" +
                            [f.qp, f.ssim].map(Self.bits).joined(separator: "|"))
            }
        }
        #expect(reference.count == 8)
        #expect(read == reference)
        // x264's PSNRs moved, each REAL as it was: the old columns under their new names.
        let v2 = LabStore.shapeVersion2.columns["frames"]!
        #expect(v2.count == 16)
        let moved = v2.map { $0.hasPrefix("psnr_") ? "x264_\($0)" : $0 }.joined(separator: ", ")
        let old = try Self.quoted(Self.fixture, "SELECT * FROM frames ORDER BY run_id, coded_index")
        #expect(try Self.quoted(path, "SELECT \(moved) FROM frames ORDER BY run_id, coded_index") == old)
        // The lab's values: the stream decode's squared errors, and PSNR = 10 log10(255^2 samples / sse) over 64x48
        // (3072 luma samples, 768 per chroma plane); run 2 (--qp 0) decoded without error: NULL PSNRs.
        let decoded = try Self.sqlite(Self.fixture, "SELECT run_id, display_index, sse_y, sse_u, sse_v FROM decoded_frames WHERE source = 'stream' ORDER BY run_id, display_index")
        #expect(decoded.count == 8)
        #expect(try Self.sqlite(path, "SELECT run_id, display_index, sse_y, sse_u, sse_v FROM frames ORDER BY run_id, display_index") == decoded)
        func db(_ sse: Int64, _ samples: Double) -> Double? { sse == 0 ? nil : 10 * log10(255 * 255 * samples / Double(sse)) }
        for line in decoded {
            let v = line.split(separator: "|").map { Int64($0)! }
            let row = try store.database.rows("SELECT psnr_y, psnr_u, psnr_v, psnr_avg, x264_psnr_differs FROM frames WHERE run_id = ? AND display_index = ?",
                                              [.integer(v[0]), .integer(v[1])])[0]
            #expect(row["psnr_y"].double == db(v[2], 3072) && row["psnr_u"].double == db(v[3], 768) && row["psnr_v"].double == db(v[4], 768))
            #expect(row["psnr_avg"].double == db(v[2] + v[3] + v[4], 3072 + 2 * 768))
            // The fixture's decodes matched x264's error (matches_x264 1): no frame differs.
            #expect(row["x264_psnr_differs"].int == 0)
        }
        // Parameter sets: each the occurrence 0 of its kind (one id each), no NAL unit index known, new content.
        let setColumns = LabStore.shapeVersion2.columns["parameter_sets"]!.joined(separator: ", ")
        #expect(try Self.quoted(path, "SELECT \(setColumns) FROM parameter_sets ORDER BY run_id, kind, id")
                == Self.quoted(Self.fixture, "SELECT * FROM parameter_sets ORDER BY run_id, kind, id"))
        #expect(try Self.sqlite(path, "SELECT DISTINCT occurrence, nal_unit_index IS NULL, new_content FROM parameter_sets") == ["0|1|1"])
        // Every column of the other tables, as sqlite3 prints them exactly (.mode quote), is unchanged.
        let dump = """
            SELECT * FROM bitstream_checks ORDER BY run_id, name; SELECT * FROM decoded_frames ORDER BY run_id, source, display_index;
            """
        let unchanged = try Self.quoted(Self.fixture, dump)
        #expect(unchanged.count == 32 + 16)
        #expect(try Self.quoted(path, dump) == unchanged)
        // The fixture itself was not written.
        #expect(try Data(contentsOf: URL(fileURLWithPath: Self.fixture)) == before)
    }

    @Test("migrated runs: the running run is failed as interrupted (finished_at NULL), run_key and clip_sha256 NULL, the rest as it was")
    func runsMigrated() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        let columns = LabStore.shapeVersion1.columns["runs"]!
        #expect(columns.count == 26)
        // The expected rows, computed by sqlite3 from the untouched fixture.
        let expected = try Self.quoted(Self.fixture, """
            SELECT \(columns.map { c in
                c == "status" ? "CASE status WHEN 'running' THEN 'failed' ELSE status END"
                    : c == "error" ? "CASE status WHEN 'running' THEN 'interrupted (found running when the database was opened)' ELSE error END"
                    : c }.joined(separator: ", "))
            FROM runs ORDER BY run_id
            """)
        #expect(try Self.quoted(path, "SELECT \(columns.joined(separator: ", ")) FROM runs ORDER BY run_id") == expected)
        #expect(try Self.sqlite(path, "SELECT run_id, run_key IS NULL, clip_sha256 IS NULL, finished_at IS NULL FROM runs") ==
                ["1|1|1|0", "2|1|1|0", "3|1|1|1"])
        let runs = try store.runs()
        #expect(runs.map(\.status) == ["done", "done", "failed"])
        #expect(runs[2].error == "interrupted (found running when the database was opened)" && runs[2].finishedAt == nil)
        #expect(runs.allSatisfy { $0.runKey == nil && $0.clipSHA256 == nil })
        // Nothing points at a missing run, the file is sound, and run ids are not reused: the next run is 4.
        #expect(try Self.sqlite(path, "PRAGMA foreign_key_check; PRAGMA integrity_check; SELECT seq FROM sqlite_sequence WHERE name = 'runs'") == ["ok", "3"])
        #expect(try store.recordRun(RecordRunTests.failedRecord, beforeCommit: { _ in }) == 4)
    }

    @Test("the AUTOINCREMENT counter survives the rebuild of runs: the id of a run deleted before migrating is not reused")
    func counterKept() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        try Self.sqlite(path, "DELETE FROM runs WHERE run_id = 3")
        #expect(try Self.sqlite(path, "SELECT max(run_id) FROM runs; SELECT seq FROM sqlite_sequence WHERE name = 'runs'") == ["2", "3"])
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(path, "SELECT name, seq FROM sqlite_sequence") == ["runs|3"])
        #expect(try store.recordRun(RecordRunTests.failedRecord, beforeCommit: { _ in }) == 4)
    }

    /// A database's whole schema as sqlite3 lists it: objects with their SQL, every table's columns, foreign keys and
    /// indexes, and the version. A table made under another name and renamed keeps its name quoted in its CREATE
    /// statement, so that quoting is taken out.
    static let schemaQuery = """
        SELECT type, name, tbl_name, replace(sql, 'CREATE TABLE "' || name || '"', 'CREATE TABLE ' || name)
        FROM sqlite_master ORDER BY type, name;
        SELECT m.name, p.* FROM sqlite_master m, pragma_table_xinfo(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid;
        SELECT m.name, p.* FROM sqlite_master m, pragma_foreign_key_list(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.id;
        SELECT m.name, p.* FROM sqlite_master m, pragma_index_list(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.name;
        PRAGMA user_version;
        """

    @Test("a migrated database has the schema of a new one: tables, columns, constraints, indexes")
    func sameSchemaAsNew() throws {
        let scratch = Scratch()
        let migrated = try Self.copy(scratch)
        let fresh = scratch.file("new.sqlite")
        _ = try LabStore(path: migrated, busyTimeoutMilliseconds: 0)
        _ = try LabStore(path: fresh, busyTimeoutMilliseconds: 0)
        let schema = Self.schemaQuery
        let expected = try Self.sqlite(fresh, schema)
        #expect(expected.contains("table|runs|runs|CREATE TABLE runs (") && expected.contains("    x264_version    TEXT,"))
        #expect(try Self.sqlite(migrated, schema) == expected)
    }

    @Test("a migration that fails is rolled back whole: the file stays at version 1 with its rows and tables as they were")
    func failedMigrationRolledBack() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        // A table of the name the migration builds frames under makes its CREATE TABLE fail, after runs was rebuilt.
        try Self.sqlite(path, "PRAGMA user_version = 1; CREATE TABLE new_frames (x);")
        let dump = ".dump"
        let before = try Self.sqlite(path, dump)
        do {
            _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
            Issue.record("the migration did not fail")
        } catch let error as LabError {
            #expect(error.kind == .software && error.message.hasPrefix("\(path): table new_frames already exists (SQLite code 1) in: CREATE TABLE new_frames ("))
        }
        #expect(try Self.sqlite(path, dump) == before)
        #expect(try Self.sqlite(path, "PRAGMA user_version; SELECT status FROM runs WHERE run_id = 3") == ["1", "running"])
    }

    @Test("a step another process took meanwhile is not taken again (each migration reads user_version inside its transaction)")
    func stepAlreadyTaken() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        try store.recordRun(StoreKeyTests.done(key: RecordRunTests.key("7")), beforeCommit: { _ in })
        let before = try Self.sqlite(path, ".dump")
        // As if this connection had inspected the file at version 0 before another process migrated it.
        let db = try Database(path: path, busyTimeoutMilliseconds: 0)
        try LabStore.bringUpToDate(db, found: .lab(version: 0, complete: true))
        #expect(try Self.sqlite(path, ".dump") == before)
        #expect(try Self.sqlite(path, "SELECT run_id FROM runs WHERE run_key IS NOT NULL") == ["4"])
    }

    @Test("a file found new that another process gave version 1 tables meanwhile is migrated, not stamped version 9")
    func newFileFilledMeanwhile() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        let db = try Database(path: path, busyTimeoutMilliseconds: 0)
        try LabStore.bringUpToDate(db, found: .new)
        #expect(try Self.sqlite(path, "PRAGMA user_version; SELECT status FROM runs WHERE run_id = 3; SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'run_key'") ==
                ["9", "failed", "1"])
    }

    @Test("rows that already pointed at a missing run do not stop the migration; the migration adds none")
    func danglingRowsKept() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        try Self.sqlite(path, "INSERT INTO bitstream_checks VALUES (99, 'n', 'e', 'a', 1);")
        let dangling = "SELECT \"table\", parent, count(*) FROM pragma_foreign_key_check GROUP BY 1, 2"
        #expect(try Self.sqlite(path, dangling) == ["bitstream_checks|runs|1"])
        _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(path, "PRAGMA user_version; " + dangling) == ["9", "bitstream_checks|runs|1"])
    }

    @Test("the migrations of version 1 to 2, 2 to 3, 3 to 4, 6 to 7 and 7 to 8 need foreign keys off, and the connection has them on again afterwards")
    func foreignKeysBackOn() throws {
        #expect(LabStore.migrations.map(\.from) == [0, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(LabStore.migrations.map(\.foreignKeysOff) == [false, true, true, true, false, false, true, true, false])
        let scratch = Scratch()
        let store = try LabStore(path: try Self.copy(scratch), busyTimeoutMilliseconds: 0)
        #expect(try store.database.query("PRAGMA foreign_keys") == [[.integer(1)]])
    }
}
