import Foundation

/// Opening a database file: what it is (read only), then the migrations that take it to ``LabStore/schemaVersion``.
extension LabStore {
    /// One step of the schema, from version `from` to `from + 1`. Each runs in one transaction (`BEGIN
    /// IMMEDIATE`) that sets `user_version` too: a file is at one version or the next, never between.
    struct Migration: Sendable {
        let from: Int32
        /// What the step does, for the README and error messages.
        let summary: String
        /// Whether `PRAGMA foreign_keys` must be off while it runs (a table rebuild drops a table that others
        /// reference; SQLite ignores the pragma inside a transaction, so it is switched around it).
        let foreignKeysOff: Bool
        let body: @Sendable (Database) throws -> Void
    }

    /// The migrations in order; ``migrations``[i] takes version i to i + 1.
    static let migrations: [Migration] = [
        Migration(from: 0, summary: "give a database of commit aef06d9 (no user_version) any table it lacks",
                  foreignKeysOff: false) { db in
            try db.execute(schemaVersion1)
        },
        Migration(from: 1, summary: "runs.run_key, runs.clip_sha256, nullable x264_version and frames.qp, clip_hashes; running runs failed",
                  foreignKeysOff: true) { db in try migrateVersion1To2(db) },
        Migration(from: 2, summary: "frames.sse_*, frames.psnr_* the lab's (x264's moved to x264_psnr_*), x264_psnr_differs; parameter_sets keyed by occurrence",
                  foreignKeysOff: true) { db in try migrateVersion2To3(db) },
        Migration(from: 3, summary: "frames.input_pts (set to pts), timestamp_analysis, frame_durations",
                  foreignKeysOff: true) { db in try migrateAddTimestamps(db) },
        Migration(from: 4, summary: "keyframe_analysis, keyframe_violations (VideoToolbox's keyframe limits)",
                  foreignKeysOff: false) { db in try migrateAddKeyframes(db) },
        Migration(from: 5, summary: "run_metrics, run_gops (empty: enclab analyze fills them)",
                  foreignKeysOff: false) { db in try migrateAddRunMetrics(db) },
        Migration(from: 6, summary: "runs.repeatable (from each run's stored settings); runs_done_by_key lets a run that is not repeatable be done again under its key",
                  foreignKeysOff: true) { db in try migrateAddRepeatable(db) },
    ]

    /// Version 6 → 7, a table rebuild as in ``migrateVersion1To2(_:)`` (new table, copy, drop, rename), so that a
    /// migrated file has the very schema of a new one: `runs` gets `repeatable`, set for every run whose stored
    /// settings hold x264's options string (``Repeatability/reason(settingsJSON:)``: 1 or 0; NULL for a stream the lab
    /// did not encode); its indexes are made again, `runs_done_by_key` as ``doneByKeyIndexVersion7``. Every other
    /// table, every run id and the AUTOINCREMENT counter are kept. Foreign keys must be off (``Migration/foreignKeysOff``).
    /// - Throws: `.software` when the copy would leave more rows pointing at a missing run than before.
    static func migrateAddRepeatable(_ db: Database) throws {
        // A version 6 file may lack a table or index of its version: it is made first.
        try db.execute(schemaVersion6)
        let violationsBefore = try db.query("PRAGMA foreign_key_check").count
        let counter = try db.rows("SELECT seq FROM sqlite_sequence WHERE name = 'runs'").first?["seq"].int
        let columns = shapeVersion6.columns["runs"]!.joined(separator: ", ")
        try db.execute(runsTable("new_runs", ifNotExists: false, repeatable: true))
        try db.execute("INSERT INTO new_runs (\(columns)) SELECT \(columns) FROM runs")
        try db.execute("DROP TABLE runs")
        try db.execute("ALTER TABLE new_runs RENAME TO runs")
        if let counter {
            try db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?1) WHERE name = 'runs'").run([.integer(counter)])
            try db.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT 'runs', ?1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs')")
                .run([.integer(counter)])
        }
        let update = try db.prepare("UPDATE runs SET repeatable = ? WHERE run_id = ?")
        // One run at a time: the settings are read by run id, not all at once.
        for id in try db.rows("SELECT run_id FROM runs ORDER BY run_id").map({ try $0.integer("run_id") }) {
            guard case .text(let settings)? = try db.query("SELECT settings FROM runs WHERE run_id = ?", [.integer(id)]).first?.first,
                  let found = Repeatability.reason(settingsJSON: settings) else { continue }
            try update.run([.integer(found.repeatable ? 1 : 0), .integer(id)])
        }
        try db.execute(schema)
        let violationsAfter = try db.query("PRAGMA foreign_key_check").count
        if violationsAfter > violationsBefore {
            throw LabError.software("\(db.path): migrating to schema version 7 would leave \(violationsAfter - violationsBefore) rows pointing at a missing run; nothing was changed")
        }
    }

    /// Version 1 → 2, the documented way to change a table's constraints (sqlite.org/lang_altertable.html,
    /// "Making Other Kinds Of Table Schema Changes"): for `runs` and `frames` a new table, the rows copied
    /// column by column, the old table dropped, the new one renamed; then the indexes and `clip_hashes`.
    ///
    /// `running` rows become `failed` with ``interruptedRunError`` (their `finished_at` stays NULL); `run_key` and
    /// `clip_sha256` are NULL for every row; the AUTOINCREMENT counter of `runs` is kept, so a run id is never
    /// reused. Foreign keys must be off (``Migration/foreignKeysOff``).
    /// - Throws: `.software` when the copy would leave more rows pointing at a missing run than before.
    static func migrateVersion1To2(_ db: Database) throws {
        // A version 1 file may lack a table the lab writes beside runs and frames: it is made first.
        try db.execute(schemaVersion1)
        let violationsBefore = try db.query("PRAGMA foreign_key_check").count
        let counter = try db.rows("SELECT seq FROM sqlite_sequence WHERE name = 'runs'").first?["seq"].int
        try db.prepare("UPDATE runs SET status = 'failed', error = ? WHERE status = 'running'").run([.text(interruptedRunError)])
        for (table, create) in [("runs", { runsTable($0, ifNotExists: $1) }), ("frames", framesTableVersion2)] as [(String, (String, Bool) -> String)] {
            let columns = shapeVersion1.columns[table]!.joined(separator: ", ")
            try db.execute(create("new_\(table)", false))
            try db.execute("INSERT INTO new_\(table) (\(columns)) SELECT \(columns) FROM \(table)")
            try db.execute("DROP TABLE \(table)")
            try db.execute("ALTER TABLE new_\(table) RENAME TO \(table)")
        }
        // The dropped runs took its counter with it; the renamed table's counter is the highest run_id copied.
        if let counter {
            try db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?1) WHERE name = 'runs'").run([.integer(counter)])
            try db.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT 'runs', ?1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs')")
                .run([.integer(counter)])
        }
        try db.execute(schemaVersion2Rest)
        let violationsAfter = try db.query("PRAGMA foreign_key_check").count
        if violationsAfter > violationsBefore {
            throw LabError.software("\(db.path): migrating to schema version 2 would leave \(violationsAfter - violationsBefore) rows pointing at a missing run; nothing was changed")
        }
    }

    /// Version 2 → 3, table rebuilds as in ``migrateVersion1To2(_:)`` (new table, copy, drop, rename):
    ///
    /// - `frames`: x264's `psnr_y/u/v/avg` are copied to `x264_psnr_y/u/v/avg`. A frame whose run has a
    ///   `decoded_frames` row of source `stream` for its display index gets that row's `sse_y/u/v`, `psnr_*`
    ///   derived from them (``PSNR/picture(_:width:height:)`` over the run's `width` × `height`; NULL where the error
    ///   is 0) and `x264_psnr_differs` (``FrameQuality``); any other frame keeps `sse_*`, `psnr_*` and
    ///   `x264_psnr_differs` NULL, its x264 values only in `x264_psnr_*` (a frame of a run without a picture size,
    ///   which no done run lacks, gets `sse_*` and keeps the other two NULL).
    /// - `parameter_sets`: version 2 kept the last set of each id; each row becomes occurrence 0, 1, ... of its
    ///   run and kind in id order, with `new_content` 1 and `nal_unit_index` NULL (not recorded before).
    ///
    /// Every other table and every run id is kept as it was. Foreign keys must be off (``Migration/foreignKeysOff``).
    /// - Throws: `.software` when the copy would leave more rows pointing at a missing run than before.
    static func migrateVersion2To3(_ db: Database) throws {
        // A version 2 file may lack a table or index of its version (decoded_frames): it is made first.
        try db.execute(schemaVersion2)
        let violationsBefore = try db.query("PRAGMA foreign_key_check").count
        let old = shapeVersion2.columns["frames"]!.filter { !$0.hasPrefix("psnr_") }
        try db.execute(framesTable("new_frames", ifNotExists: false, inputPTS: false))
        let kept = old.joined(separator: ", ")
        try db.execute("""
            INSERT INTO new_frames (\(kept), x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg, sse_y, sse_u, sse_v)
            SELECT \(old.map { "f.\($0)" }.joined(separator: ", ")), f.psnr_y, f.psnr_u, f.psnr_v, f.psnr_avg, d.sse_y, d.sse_u, d.sse_v
            FROM frames f LEFT JOIN decoded_frames d
                ON d.run_id = f.run_id AND d.source = 'stream' AND d.display_index = f.display_index
            """)
        // The lab's PSNRs from the squared errors, by the lab's one formula.
        let update = try db.prepare("""
            UPDATE new_frames SET psnr_y = ?, psnr_u = ?, psnr_v = ?, psnr_avg = ?, x264_psnr_differs = ?
            WHERE run_id = ? AND coded_index = ?
            """)
        func real(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        // One run at a time, so a large database is not read into memory whole.
        for run in try db.rows("SELECT run_id, width, height FROM runs WHERE width > 0 AND height > 0 ORDER BY run_id") {
            let (runID, width, height) = (try run.integer("run_id"), Int(try run.integer("width")), Int(try run.integer("height")))
            let measured = try db.rows("""
                SELECT coded_index, sse_y, sse_u, sse_v, x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg
                FROM new_frames WHERE run_id = ? AND sse_y IS NOT NULL
                """, [.integer(runID)])
            for row in measured {
                let errors = PlaneErrors(sseY: try row.integer("sse_y"), sseU: try row.integer("sse_u"), sseV: try row.integer("sse_v"))
                let x264 = PSNR.Picture(y: row["x264_psnr_y"].double, u: row["x264_psnr_u"].double, v: row["x264_psnr_v"].double,
                                        avg: row["x264_psnr_avg"].double)
                let q = FrameQuality(errors: errors, x264: x264, width: width, height: height)
                try update.run([real(q.psnr.y), real(q.psnr.u), real(q.psnr.v), real(q.psnr.avg), .integer(q.x264Differs ? 1 : 0),
                                .integer(runID), .integer(try row.integer("coded_index"))])
            }
        }
        try db.execute("DROP TABLE frames")
        try db.execute("ALTER TABLE new_frames RENAME TO frames")

        let setColumns = shapeVersion2.columns["parameter_sets"]!
        try db.execute(parameterSetsTable("new_parameter_sets", ifNotExists: false))
        try db.execute("""
            INSERT INTO new_parameter_sets (\(setColumns.joined(separator: ", ")), occurrence, new_content)
            SELECT \(setColumns.joined(separator: ", ")), row_number() OVER (PARTITION BY run_id, kind ORDER BY id) - 1, 1
            FROM parameter_sets
            """)
        try db.execute("DROP TABLE parameter_sets")
        try db.execute("ALTER TABLE new_parameter_sets RENAME TO parameter_sets")
        try db.execute(schemaVersion3Rest)
        let violationsAfter = try db.query("PRAGMA foreign_key_check").count
        if violationsAfter > violationsBefore {
            throw LabError.software("\(db.path): migrating to schema version 3 would leave \(violationsAfter - violationsBefore) rows pointing at a missing run; nothing was changed")
        }
    }

    /// What ``inspect(_:)`` found in a file.
    enum Found: Equatable {
        /// No object at all and user_version 0: the lab creates its schema.
        case new
        /// The lab's database of this version (0 ... ``schemaVersion``); `complete` when it has every table and
        /// index of that version.
        case lab(version: Int32, complete: Bool)
    }

    /// Decides, by reading only, what the open file is.
    /// - Throws: `.data` for a file of a newer schema version, or one that is not the lab's: without `runs` and
    ///   `frames`, or with a table of the lab's name lacking a column of the file's version.
    static func inspect(_ database: Database) throws -> Found {
        let path = database.path
        let version = try userVersion(database)
        // Every object (table, index, view, trigger) but SQLite's own: only a file with none is new.
        let objects = try database.rows("""
            SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        let tables = try objects.filter { try $0.text("type") == "table" }.map { try $0.text("name") }
        let indexes = try objects.filter { try $0.text("type") == "index" }.map { try $0.text("name") }
        if version > Int64(schemaVersion) {
            throw LabError.data("\(path): written by a newer enclab (schema version \(version); this enclab knows version \(schemaVersion) and older)")
        }
        if version == 0 && objects.isEmpty { return .new }
        let shape = shape(ofVersion: version)
        var lacking: [String] = []
        for table in tables {
            guard let wanted = shape.columns[table] else { continue }
            let columns = Set(try database.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).map { try $0.text("name") })
            let names = Set(wanted).subtracting(columns).sorted()
            if !names.isEmpty {
                lacking.append("\(table) lacks \(names.prefix(4).joined(separator: ", "))\(names.count > 4 ? " and \(names.count - 4) more" : "")")
            }
        }
        guard version >= 0, tables.contains("runs"), tables.contains("frames"), lacking.isEmpty else {
            let shown = tables.count > 12 ? tables.prefix(12).joined(separator: ", ") + ", ... (\(tables.count) in all)" : tables.joined(separator: ", ")
            let versionNote = version == 0 ? "" : "user_version \(version), "
            throw LabError.data("\(path): not an enclab database (\(versionNote)tables: \(shown.isEmpty ? "none" : shown)\(lacking.isEmpty ? "" : "; " + lacking.joined(separator: "; ")))")
        }
        let complete = Set(tables).isSuperset(of: shape.tables) && Set(indexes).isSuperset(of: shape.indexes)
        return .lab(version: Int32(version), complete: complete)
    }

    /// `PRAGMA user_version` of the open file.
    static func userVersion(_ database: Database) throws -> Int64 {
        try database.rows("PRAGMA user_version").first?["user_version"].int ?? 0
    }

    /// Brings an inspected file to ``schemaVersion``: a new file gets ``schema``; an older one every migration
    /// from its version on, each in its own transaction; a file of this version missing a table or index gets
    /// it. Each transaction reads the file again first: another process may have done the step meanwhile.
    /// - Throws: `.data` when a file found new has meanwhile been given tables that are not the lab's (as
    ///   ``inspect(_:)``); a migration's errors; the database's.
    static func bringUpToDate(_ database: Database, found: Found) throws {
        switch found {
        case .new:
            let created = try database.transaction { () -> Bool in
                // Another process may have made tables since the file was inspected (an older enclab, version 1):
                // then it is inspected again and migrated like any file of its version.
                let objects = try database.rows("SELECT count(*) AS n FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
                guard objects.first?["n"].int == 0 else { return false }
                try database.execute(schema)
                try database.execute("PRAGMA user_version = \(schemaVersion)")
                return true
            }
            if !created { try bringUpToDate(database, found: try inspect(database)) }
        case .lab(let version, let complete):
            for migration in migrations where migration.from >= version {
                if migration.foreignKeysOff { try database.execute("PRAGMA foreign_keys = OFF") }
                do {
                    try database.transaction {
                        guard try userVersion(database) == Int64(migration.from) else { return }
                        try migration.body(database)
                        try database.execute("PRAGMA user_version = \(migration.from + 1)")
                    }
                } catch {
                    if migration.foreignKeysOff { try? database.execute("PRAGMA foreign_keys = ON") }
                    throw error
                }
                if migration.foreignKeysOff { try database.execute("PRAGMA foreign_keys = ON") }
            }
            if version == schemaVersion && !complete {
                try database.transaction { try database.execute(schema) }
            }
        }
    }
}
