import Foundation
import Testing
@testable import EncoderLab

/// The migration of schema version 2 to 3 on a database written by the real last version 2 (Fixtures/v2-ad1e90e.sqlite,
/// see Fixtures/README.md), always on a copy. The sqlite3 CLI reads the untouched fixture as the reference.
@Suite("SQLite store: migration of version 2 to 3")
struct StoreMigrationVersion2Tests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/v2-ad1e90e.sqlite").path

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }
    static func quoted(_ db: String, _ sql: String) throws -> [String] { try StoreMigrationTests.quoted(db, sql) }

    /// A copy of the fixture in `scratch`.
    static func copy(_ scratch: Scratch) throws -> String {
        let path = scratch.file("v2.sqlite")
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        return path
    }

    /// 426x240: 102,240 luma samples, 25,560 per chroma plane, 153,360 in all.
    static let (luma, chroma) = (102_240.0, 25_560.0)

    /// PSNR = 10 log10(255^2 samples / sse), NULL (nil) for no error.
    static func decibels(_ sse: Int64, _ samples: Double) -> Double? { sse == 0 ? nil : 10 * log10(255 * 255 * samples / Double(sse)) }

    @Test("the fixture is what its README says: version 2, runs 1 (--qp 30, x264's chroma PSNR off) and 2 (--qp 0) of 4 frames at 426x240")
    func fixtureAsDescribed() throws {
        #expect(try Self.sqlite(Self.fixture, """
            PRAGMA user_version; PRAGMA journal_mode;
            SELECT r.run_id, r.status, r.width, r.height, count(f.run_id), total(f.psnr_y IS NULL),
                   (SELECT sum(matches_x264) FROM decoded_frames d WHERE d.run_id = r.run_id AND d.source = 'stream')
            FROM runs r LEFT JOIN frames f USING (run_id) GROUP BY r.run_id;
            """) == ["2", "delete", "1|done|426|240|4|0.0|0", "2|done|426|240|4|4.0|4"])
    }

    @Test("frames: x264's PSNRs move to x264_psnr_* bit for bit; sse_* are the stream decode's; psnr_* derive from them; all 4 frames of run 1 differ")
    func framesMigrated() throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: Self.fixture))
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(path, "PRAGMA user_version") == ["9"])
        let v2 = LabStore.shapeVersion2.columns["frames"]!
        let moved = v2.map { $0.hasPrefix("psnr_") ? "x264_\($0)" : $0 }.joined(separator: ", ")
        let old = try Self.quoted(Self.fixture, "SELECT * FROM frames ORDER BY run_id, coded_index")
        #expect(old.count == 8)
        #expect(try Self.quoted(path, "SELECT \(moved) FROM frames ORDER BY run_id, coded_index") == old)
        // Run 1's x264 chroma PSNR at display frame 0 is the x264 CLI's 43.00 and 43.17 (avg 44.98).
        #expect(try Self.sqlite(path, "SELECT printf('%.2f %.2f %.2f', x264_psnr_u, x264_psnr_v, x264_psnr_avg) FROM frames WHERE run_id = 1 AND display_index = 0") == ["43.00 43.17 44.98"])
        let decoded = try Self.sqlite(Self.fixture, "SELECT run_id, display_index, sse_y, sse_u, sse_v FROM decoded_frames WHERE source = 'stream' ORDER BY run_id, display_index")
        #expect(try Self.sqlite(path, "SELECT run_id, display_index, sse_y, sse_u, sse_v FROM frames ORDER BY run_id, display_index") == decoded)
        for line in decoded {
            let v = line.split(separator: "|").map { Int64($0)! }
            let row = try store.database.rows("SELECT psnr_y, psnr_u, psnr_v, psnr_avg, x264_psnr_differs FROM frames WHERE run_id = ? AND display_index = ?",
                                              [.integer(v[0]), .integer(v[1])])[0]
            #expect(row["psnr_y"].double == Self.decibels(v[2], Self.luma) && row["psnr_u"].double == Self.decibels(v[3], Self.chroma))
            #expect(row["psnr_v"].double == Self.decibels(v[4], Self.chroma))
            #expect(row["psnr_avg"].double == Self.decibels(v[2] + v[3] + v[4], Self.luma + 2 * Self.chroma))
            // Run 1: x264's chroma error is not the decode's (the fixture's matches_x264 0); run 2: both none.
            #expect(row["x264_psnr_differs"].int == (v[0] == 1 ? 1 : 0), "\(line)")
        }
        // Frame 0 of run 1 as FFmpeg's psnr filter gave it on the decoded stream (43.09, 43.29, 45.03).
        #expect(try Self.sqlite(path, "SELECT printf('%.2f %.2f %.2f %.2f', psnr_y, psnr_u, psnr_v, psnr_avg) FROM frames WHERE run_id = 1 AND display_index = 0") == ["46.37 43.09 43.29 45.03"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: Self.fixture)) == before)
    }

    @Test("a frame without a stored decode keeps x264's values in x264_psnr_* only: sse_*, psnr_* and x264_psnr_differs NULL")
    func framesWithoutDecode() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        _ = try Self.sqlite(path, "DELETE FROM decoded_frames WHERE run_id = 1 AND source = 'stream' AND display_index IN (1, 2)")
        _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(path, """
            SELECT display_index, sse_y IS NULL, psnr_y IS NULL, psnr_avg IS NULL, x264_psnr_differs IS NULL, x264_psnr_y IS NOT NULL
            FROM frames WHERE run_id = 1 ORDER BY display_index
            """) == ["0|0|0|0|0|1", "1|1|1|1|1|1", "2|1|1|1|1|1", "3|0|0|0|0|1"])
    }

    @Test("parameter_sets: each row kept, numbered occurrence 0... per run and kind in id order, new_content 1, nal_unit_index NULL")
    func parameterSetsMigrated() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        // A second SPS id in run 1, as version 2 could hold it: it becomes occurrence 1.
        _ = try Self.sqlite(path, "INSERT INTO parameter_sets (run_id, kind, id, fields) VALUES (1, 'sps', 3, '{}')")
        let reference = try Self.quoted(path, "SELECT * FROM parameter_sets ORDER BY run_id, kind, id")
        _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        let columns = LabStore.shapeVersion2.columns["parameter_sets"]!.joined(separator: ", ")
        #expect(try Self.quoted(path, "SELECT \(columns) FROM parameter_sets ORDER BY run_id, kind, id") == reference)
        #expect(try Self.sqlite(path, "SELECT run_id, kind, id, occurrence, nal_unit_index IS NULL, new_content FROM parameter_sets ORDER BY run_id, kind, occurrence")
                == ["1|pps|0|0|1|1", "1|sps|0|0|1|1", "1|sps|3|1|1|1", "2|pps|0|0|1|1", "2|sps|0|0|1|1"])
        // The key is the occurrence: a second SPS 0 in run 1 fits now.
        _ = try Self.sqlite(path, "INSERT INTO parameter_sets (run_id, kind, occurrence, id, new_content, fields) VALUES (1, 'sps', 2, 0, 1, '{}')")
        #expect(try Self.sqlite(path, "SELECT count(*) FROM parameter_sets WHERE run_id = 1 AND kind = 'sps' AND id = 0") == ["2"])
    }

    @Test("runs, bitstream_checks, decoded_frames and clip_hashes are unchanged; the run id counter too")
    func otherTablesKept() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        let dump = """
            SELECT \(LabStore.shapeVersion2.columns["runs"]!.joined(separator: ", ")) FROM runs ORDER BY run_id; SELECT * FROM bitstream_checks ORDER BY run_id, name;
            SELECT * FROM decoded_frames ORDER BY run_id, source, display_index; SELECT * FROM clip_hashes ORDER BY sha256;
            SELECT name, seq FROM sqlite_sequence;
            """
        let before = try Self.quoted(path, dump)
        _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.quoted(path, dump) == before)
        #expect(try Self.sqlite(path, "PRAGMA foreign_key_check; PRAGMA integrity_check") == ["ok"])
    }

    @Test("a migrated version 2 database has the schema of a new one: tables, columns, constraints, indexes")
    func sameSchemaAsNew() throws {
        let scratch = Scratch()
        let migrated = try Self.copy(scratch)
        let fresh = scratch.file("new.sqlite")
        _ = try LabStore(path: migrated, busyTimeoutMilliseconds: 0)
        _ = try LabStore(path: fresh, busyTimeoutMilliseconds: 0)
        let schema = StoreMigrationTests.schemaQuery
        let expected = try Self.sqlite(fresh, schema)
        #expect(expected.contains("    x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),"))
        #expect(try Self.sqlite(migrated, schema) == expected)
    }

    @Test("a migration to version 3 that fails is rolled back whole: the file stays at version 2 as it was")
    func failedMigrationRolledBack() throws {
        let scratch = Scratch()
        let path = try Self.copy(scratch)
        // A table of the name the migration builds parameter_sets under: its CREATE fails after frames was rebuilt.
        _ = try Self.sqlite(path, "CREATE TABLE new_parameter_sets (x);")
        let before = try Self.sqlite(path, ".dump")
        do {
            _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
            Issue.record("the migration did not fail")
        } catch let error as LabError {
            #expect(error.kind == .software && error.message.hasPrefix("\(path): table new_parameter_sets already exists (SQLite code 1) in: CREATE TABLE new_parameter_sets ("))
        }
        #expect(try Self.sqlite(path, ".dump") == before)
        #expect(try Self.sqlite(path, "PRAGMA user_version") == ["2"])
    }
}
