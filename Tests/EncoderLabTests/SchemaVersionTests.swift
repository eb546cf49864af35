import Foundation
import Testing
@testable import EncoderLab

/// Frozen schemas and migrations (issue 18, item 4): a database written by each earlier version of the lab
/// (Tests/EncoderLabTests/Fixtures, made by the real binaries of those versions: Fixtures/README.md) has the literal
/// schema of its version (SchemaVersions.swift), and migrates to the very schema of a new database without changing a
/// frame. The sqlite3 CLI reads the untouched fixtures; every test works on a copy.
@Suite("SQLite store: frozen schemas, a database of every earlier version migrated")
struct SchemaVersionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// The fixtures, one per schema version 0 ... 8, each written by the last commit of main with that version
    /// (version 3: the commit that introduced it, merged as version 3 in 3c8b8fa).
    static let versions: [(file: String, version: Int32)] = [
        ("aef06d9.sqlite", 0), ("v1-0dea841.sqlite", 1), ("v2-ad1e90e.sqlite", 2), ("v3-e6c4661.sqlite", 3), ("v4-18965e2.sqlite", 4), ("v5-e8c29d0.sqlite", 5), ("v6-3eff049.sqlite", 6),
        ("v7-2251b96.sqlite", 7), ("v8-889fbaa.sqlite", 8),
    ]

    /// `sqlite_master` of `db` as `type|name|tbl_name|sql` lines by name, SQLite's own objects left out. A table
    /// renamed by a migration is kept by SQLite as `CREATE TABLE "name"` (quoted), a new one as written: the quotes
    /// are taken off, nothing else.
    static func schema(_ db: String) throws -> [String] {
        let lines = try Witness.run("sqlite3", ["-separator", "|", "-newline", "\u{1e}", db, """
            SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name
            """])
        guard lines.status == 0 else { throw LabError.software("sqlite3 \(db): \(lines.stderr)") }
        return lines.stdout.split(separator: "\u{1e}").map {
            $0.replacingOccurrences(of: #"CREATE TABLE "(\w+)""#, with: "CREATE TABLE $1", options: .regularExpression)
        }
    }

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    /// The columns of `table` in `db`, in order.
    static func columns(_ db: String, _ table: String) throws -> [String] {
        try sqlite(db, "SELECT name FROM pragma_table_info('\(table)') ORDER BY cid")
    }

    @Test("each fixture is of its version and has exactly the literal schema of that version")
    func fixturesHaveTheFrozenSchema() throws {
        let scratch = Scratch()
        for (file, version) in Self.versions {
            let path = Self.fixtures + "/" + file
            #expect(try Self.sqlite(path, "PRAGMA user_version") == [String(version)], "\(file)")
            let literal = [1: LabStore.schemaVersion1, 2: LabStore.schemaVersion2, 3: LabStore.schemaVersion3, 4: LabStore.schemaVersion4,
                           5: LabStore.schemaVersion5, 6: LabStore.schemaVersion6, 7: LabStore.schemaVersion7,
                           8: LabStore.schemaVersion8][max(version, 1)]!
            let made = scratch.file("literal-\(version).sqlite")
            try Database(path: made, busyTimeoutMilliseconds: 0).execute(literal)
            #expect(try Self.schema(made) == Self.schema(path), "\(file)")
        }
    }

    @Test("each fixture migrates to the schema of a new database, every frame kept (x264's PSNRs moved to x264_psnr_* from version 2)")
    func everyVersionMigrates() throws {
        let scratch = Scratch()
        let fresh = scratch.file("new.sqlite")
        _ = try LabStore(path: fresh, busyTimeoutMilliseconds: 0)
        let newSchema = try Self.schema(fresh)
        #expect(newSchema.count == 25)  // 23 tables (version 9's rtp_frames, rtp_loss_frames, rtp_runs), 2 indexes
        for (file, version) in Self.versions {
            let fixture = Self.fixtures + "/" + file
            let path = scratch.file("copy-\(file)")
            try FileManager.default.copyItem(atPath: fixture, toPath: path)
            let old = try Self.columns(fixture, "frames")
            let renamed = old.map { version <= 2 && $0.hasPrefix("psnr_") ? "x264_" + $0 : $0 }
            func frames(_ db: String, _ columns: [String]) throws -> [String] {
                try StoreMigrationTests.quoted(db, "SELECT \(columns.joined(separator: ", ")) FROM frames ORDER BY run_id, coded_index")
            }
            let before = try frames(fixture, old)
            let runsBefore = try Self.sqlite(fixture, "SELECT run_id, clip, settings, frames, bytes FROM runs ORDER BY run_id")
            #expect(before.count >= 8, "\(file)")

            _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
            #expect(try Self.sqlite(path, "PRAGMA user_version") == ["9"], "\(file)")
            // A version 4 file too (its timestamp_analysis rebuilt by the migration from version 7).
            #expect(try Self.schema(path) == newSchema, "\(file)")
            if version >= 4 {
                #expect(try Self.timestampRows(path) == Self.timestampRows(fixture), "\(file)")
                #expect(try Self.timestampRows(fixture).count == 3, "\(file)")
            }
            #expect(try frames(path, renamed) == before, "\(file)")
            #expect(try Self.sqlite(path, "SELECT run_id, clip, settings, frames, bytes FROM runs ORDER BY run_id") == runsBefore, "\(file)")
            if version <= 3 {
                #expect(try Self.sqlite(path, "SELECT count(*) FROM frames WHERE input_pts IS NOT pts") == ["0"], "\(file)")
            }
            #expect(try Self.sqlite(path, "SELECT count(*) FROM pragma_foreign_key_check") == ["0"], "\(file)")
        }
    }

    /// Every row of `timestamp_analysis` in `db`, each value as `sqlite3 -quote` writes it (its type shown: 8 and 8.0
    /// differ), in run order.
    static func timestampRows(_ db: String) throws -> [String] {
        try StoreMigrationTests.quoted(db, "SELECT * FROM timestamp_analysis ORDER BY run_id")
    }

    @Test("a version 4 file's timestamp_analysis loses NOT NULL on span_ticks, span_s, achieved_kbps, so a run without a span can be stored")
    func versionFourTimestampsNullable() throws {
        let scratch = Scratch()
        let fixture = Self.fixtures + "/v4-18965e2.sqlite"
        let path = scratch.file("v4.sqlite")
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        let notNull = "SELECT name || ' ' || \"notnull\" FROM pragma_table_info('timestamp_analysis') WHERE name IN ('span_ticks', 'span_s', 'achieved_kbps') ORDER BY cid"
        #expect(try Self.sqlite(fixture, notNull) == ["span_ticks 1", "span_s 1", "achieved_kbps 1"])
        // The row a run whose span is not positive writes (TimestampAnalysis: span nil), refused before the migration.
        let spanless = """
            INSERT INTO timestamp_analysis (run_id, source, frames, non_increasing_input_pts, duplicate_dts, decreasing_dts,
                pts_before_dts, min_composition_offset, max_composition_offset, span_ticks, span_s, achieved_kbps,
                x264_timestamp_warnings) VALUES (4, 'file', 1, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0)
            """
        let run4 = "INSERT INTO runs (run_id, experiment, clip, settings, status, lab_version, machine, created_at) VALUES (4, 'e', 'c', '{}', 'done', 'v', 'm', 't');"
        let refused = try Witness.run("sqlite3", [scratch.file("v4.sqlite"), "PRAGMA foreign_keys = ON; " + run4 + spanless])
        #expect(refused.stderr.contains("NOT NULL constraint failed: timestamp_analysis.span_ticks"), "\(refused.stderr)")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(path, notNull) == ["span_ticks 0", "span_s 0", "achieved_kbps 0"])
        #expect(try Self.timestampRows(path) == Self.timestampRows(fixture))
        _ = try Self.sqlite(path, "PRAGMA foreign_keys = ON; " + run4 + spanless)
        #expect(try Self.sqlite(path, "SELECT run_id, quote(span_ticks), quote(span_s), quote(achieved_kbps) FROM timestamp_analysis WHERE run_id = 4")
                == ["4|NULL|NULL|NULL"])
        #expect(try Self.sqlite(path, "SELECT count(*) FROM pragma_foreign_key_check") == ["0"])
    }

    @Test("the migration from version 7 leaves a timestamp_analysis that is nullable already as it was (no rebuild: its SQL unquoted)")
    func nullableTimestampsNotRebuilt() throws {
        let scratch = Scratch()
        for file in ["v5-e8c29d0.sqlite", "v6-3eff049.sqlite", "v7-2251b96.sqlite", "v8-889fbaa.sqlite"] {
            let fixture = Self.fixtures + "/" + file
            let path = scratch.file(file)
            try FileManager.default.copyItem(atPath: fixture, toPath: path)
            let sql = "SELECT sql FROM sqlite_master WHERE name = 'timestamp_analysis'"
            let before = try Self.sqlite(fixture, sql)
            #expect(before.first?.hasPrefix("CREATE TABLE timestamp_analysis (") == true, "\(file)")
            _ = try LabStore(path: path, busyTimeoutMilliseconds: 0)
            #expect(try Self.sqlite(path, sql) == before, "\(file)")
            #expect(try Self.timestampRows(path) == Self.timestampRows(fixture), "\(file)")
        }
        // The version 4 file's table is rebuilt: SQLite keeps a renamed table's name quoted.
        let v4 = scratch.file("v4.sqlite")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/v4-18965e2.sqlite", toPath: v4)
        _ = try LabStore(path: v4, busyTimeoutMilliseconds: 0)
        #expect(try Self.sqlite(v4, "SELECT sql FROM sqlite_master WHERE name = 'timestamp_analysis'").first?.hasPrefix("CREATE TABLE \"timestamp_analysis\" (") == true)
    }

    @Test("the reading commands (report, plot, check --run, compare, export) read an older database without changing it: every byte as it was, user_version as it was, its runs read through a migrated copy")
    func readingLeavesOlderDatabases() throws {
        let scratch = Scratch()
        for (file, version) in Self.versions where version >= 5 {
            let path = scratch.file(file)
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + file, toPath: path)
            let before = FileManager.default.contents(atPath: path)
            let runs = try Self.sqlite(path, "SELECT count(*) FROM runs")
            do {
                let store = try LabStore.reading(path: path)
                #expect(try store.database.query("SELECT count(*) FROM runs").first?.first?.int.map(String.init) == runs.first, "\(file)")
            }
            #expect(FileManager.default.contents(atPath: path) == before, "\(file) changed")
            #expect(try Self.sqlite(path, "PRAGMA user_version") == ["\(version)"], "\(file)")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "\(file)")
        }
    }

    @Test("run_metrics of the frozen schema has the columns runMetricsColumns names, in order, with their types")
    func metricsColumnsMatchTheSchema() throws {
        let scratch = Scratch()
        let path = scratch.file("m.sqlite")
        try Database(path: path, busyTimeoutMilliseconds: 0).execute(LabStore.version6Tables)
        let table = try Self.sqlite(path, "SELECT name || ' ' || type FROM pragma_table_info('run_metrics') ORDER BY cid")
        #expect(table == ["run_id INTEGER"] + LabStore.runMetricsColumns.map { "\($0.name) \($0.type.split(separator: " ")[0])" })
        for (name, type) in LabStore.runMetricsColumns {
            #expect(LabStore.version6Tables.contains("\n    \(name) \(type)"), "\(name)")
        }
    }

    @Test("the migration runner refuses a step that leaves rows pointing at a missing run, and keeps the file as it was")
    func runnerChecksForeignKeys() throws {
        let scratch = Scratch()
        let path = scratch.file("fk.sqlite")
        try FileManager.default.copyItem(atPath: Self.fixtures + "/v6-3eff049.sqlite", toPath: path)
        let frames = try Self.sqlite(path, "SELECT count(*) FROM frames WHERE run_id = 1")
        #expect(frames == ["8"])
        let database = try Database(path: path, busyTimeoutMilliseconds: 0)
        let step = LabStore.Migration(from: 6, summary: "a step that loses run 1", foreignKeysOff: true) { db in
            try db.execute("DELETE FROM runs WHERE run_id = 1")
        }
        // Run 1 had 8 frames, 16 decoded_frames, 1 timestamp_analysis, 3 frame_durations, 2 parameter sets,
        // bitstream checks, 1 run_metrics and run_gops rows: every one of them points at nothing after the step.
        let dependants = try Self.sqlite(path, """
            SELECT (SELECT count(*) FROM frames WHERE run_id = 1) + (SELECT count(*) FROM decoded_frames WHERE run_id = 1)
                + (SELECT count(*) FROM parameter_sets WHERE run_id = 1) + (SELECT count(*) FROM bitstream_checks WHERE run_id = 1)
                + (SELECT count(*) FROM timestamp_analysis WHERE run_id = 1) + (SELECT count(*) FROM frame_durations WHERE run_id = 1)
                + (SELECT count(*) FROM run_metrics WHERE run_id = 1) + (SELECT count(*) FROM run_gops WHERE run_id = 1)
            """)[0]
        #expect(throws: LabError(.software, "\(path): migrating to schema version 7 would leave \(dependants) rows pointing at a missing run; nothing was changed")) {
            try LabStore.bringUpToDate(database, found: .lab(version: 6, complete: true), steps: [step])
        }
        #expect(try Self.sqlite(path, "PRAGMA user_version; SELECT count(*) FROM runs WHERE run_id = 1") == ["6", "1"])
        #expect(try database.query("PRAGMA foreign_keys") == [[.integer(1)]])
    }
}
