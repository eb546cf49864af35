import Foundation
import Testing
@testable import EncoderLab

/// Schema version 7 (issue 17, item 2): `runs.repeatable`, and repeats of a run that is not repeatable done
/// under one key. Read back with the sqlite3 CLI.
@Suite struct RepeatableMigrationTests {
    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    @Test("a version 6 database gets runs.repeatable from each run's stored settings; a second done run of a key is refused unless the run is not repeatable")
    func migrate() throws {
        let scratch = Scratch()
        let db = scratch.file("v6.sqlite")
        let (k1, k2, k3, k4) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64), String(repeating: "c", count: 64), String(repeating: "d", count: 64))
        func run(_ key: String, _ settings: String) -> String {
            "INSERT INTO runs (run_key, experiment, clip, settings, status, lab_version, machine, created_at) VALUES ('\(key)', 'e', 'c.y4m', '\(settings)', 'done', '0.1.0', '{}', '2026-12-01T00:00:00Z');"
        }
        // x264's SEI options strings as x264 0.164 writes them (threads, sliced_threads, vbv_bufsize only with VBV).
        _ = try Self.sqlite(db, LabStore.schemaVersion6 + "PRAGMA user_version = 6;"
            + run(k1, #"{"x264_options": "cabac=1 threads=2 lookahead_threads=1 sliced_threads=0 vbv_maxrate=150 vbv_bufsize=150", "options": []}"#)
            + run(k2, #"{"x264_options": "cabac=1 threads=1 lookahead_threads=1 sliced_threads=0 vbv_maxrate=150 vbv_bufsize=150", "options": []}"#)
            + run(k3, #"{"x264_options": "cabac=1 threads=1 lookahead_threads=1 sliced_threads=0", "options": [["non-deterministic", null]]}"#)
            + run(k4, #"{"resolved": {"rc_method": "unknown"}}"#))
        _ = try LabStore(path: db, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(db, "PRAGMA user_version; SELECT run_id || '|' || ifnull(repeatable, 'NULL') FROM runs ORDER BY run_id")
                == ["9", "1|0", "2|1", "3|0", "4|NULL"])
        // A repeat of run 1 (not repeatable) is stored; one of run 2 (repeatable) or of run 4 (not known) is refused.
        _ = try Self.sqlite(db, run(k1, "{}").replacingOccurrences(of: "created_at)", with: "created_at, repeatable)")
                                               .replacingOccurrences(of: "Z')", with: "Z', 0)"))
        #expect(try Self.sqlite(db, "SELECT count(*) FROM runs WHERE run_key = '\(k1)' AND status = 'done'") == ["2"])
        #expect(throws: LabError.self) { try Self.sqlite(db, run(k2, "{}")) }
        #expect(throws: LabError.self) { try Self.sqlite(db, run(k4, "{}")) }
    }
}
