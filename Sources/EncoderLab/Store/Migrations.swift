import Foundation

/// Opening a database file: what it is (read only), then the migrations that take it to ``LabStore/schemaVersion``.
extension LabStore {
    /// One step of the schema, from version `from` to `from + 1`. Each runs in one transaction (`BEGIN
    /// IMMEDIATE`) that sets `user_version` too: a file is at one version or the next, never between.
    ///
    /// A step is frozen: its SQL is literal and it reads only the literal schemas of SchemaVersions.swift and
    /// computations copied into this file, never a table builder or a measurement of
    /// today's code, so no later change alters what an old migration does. A new schema version adds a literal
    /// schema and a step; it edits none.
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
                  foreignKeysOff: false) { db in try db.execute(schemaVersion1) },
        Migration(from: 1, summary: "runs.run_key, runs.clip_sha256, nullable x264_version and frames.qp, clip_hashes; running runs failed",
                  foreignKeysOff: true) { db in try migrateVersion1To2(db) },
        Migration(from: 2, summary: "frames.sse_*, frames.psnr_* the lab's (x264's moved to x264_psnr_*), x264_psnr_differs; parameter_sets keyed by occurrence",
                  foreignKeysOff: true) { db in try migrateVersion2To3(db) },
        Migration(from: 3, summary: "frames.input_pts (set to pts), timestamp_analysis, frame_durations",
                  foreignKeysOff: true) { db in try migrateVersion3To4(db) },
        Migration(from: 4, summary: "keyframe_analysis, keyframe_violations, data_rate_windows (VideoToolbox's keyframe and data-rate limits)",
                  foreignKeysOff: false) { db in try db.execute(version5Tables) },
        Migration(from: 5, summary: "run_metrics, run_gops (empty: enclab analyze fills them)",
                  foreignKeysOff: false) { db in try db.execute(version6Tables) },
        Migration(from: 6, summary: "runs.repeatable (from each run's stored settings); runs_done_by_key lets a run that is not repeatable be done again under its key",
                  foreignKeysOff: true) { db in try migrateVersion6To7(db) },
        Migration(from: 7, summary: "timestamp_analysis.span_ticks, span_s, achieved_kbps nullable in a file version 4 made; frame_delays, run_delay (encoder delay per frame); frame_quality_metrics, run_quality_metrics (--metrics and enclab measure fill them); rate_changes, step_response (rate schedules); skipped_frames (pictures the encoder dropped: OpenH264's frame skip)",
                  foreignKeysOff: true) { db in
            try migrateVersion7To8TimestampAnalysis(db)
            try db.execute(version8Tables)
        },
        Migration(from: 8, summary: "rtp_frames, rtp_loss_frames, rtp_runs (a run's RTP stage: --rtp, --loss)",
                  foreignKeysOff: false) { db in try db.execute(version9Tables) },
    ]

    /// Runs `migration` inside the caller's transaction, then checks that it left no more rows pointing at a missing
    /// parent row than there were before (`PRAGMA foreign_key_check`: rows a damaged file held already do not stop
    /// it; the steps that rebuild a table run with foreign keys off, where SQLite checks nothing itself).
    /// - Throws: `.software` naming the file and the version when it would; the step's own errors.
    static func run(_ migration: Migration, on db: Database) throws {
        let violationsBefore = try db.query("PRAGMA foreign_key_check").count
        try migration.body(db)
        let violationsAfter = try db.query("PRAGMA foreign_key_check").count
        if violationsAfter > violationsBefore {
            throw LabError.software("\(db.path): migrating to schema version \(migration.from + 1) would leave \(violationsAfter - violationsBefore) rows pointing at a missing run; nothing was changed")
        }
    }

    /// Keeps the AUTOINCREMENT counter of `runs` across a rebuild: the dropped table took its `sqlite_sequence` row
    /// with it, and the renamed one's counter is the highest run id copied; `counter` (read before) is put back, so
    /// a run id is never reused.
    private static func keepRunsCounter(_ db: Database, _ counter: Int64?) throws {
        guard let counter else { return }
        try db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?1) WHERE name = 'runs'").run([.integer(counter)])
        try db.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT 'runs', ?1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'runs')")
            .run([.integer(counter)])
    }

    /// `sqlite_sequence`'s counter of `runs`, nil without one.
    private static func runsCounter(_ db: Database) throws -> Int64? {
        try db.rows("SELECT seq FROM sqlite_sequence WHERE name = 'runs'").first?["seq"].int
    }

    /// Version 1 → 2, the documented way to change a table's constraints (sqlite.org/lang_altertable.html,
    /// "Making Other Kinds Of Table Schema Changes"): for `runs` and `frames` a new table, the rows copied
    /// column by column, the old table dropped, the new one renamed; then the indexes and `clip_hashes`.
    ///
    /// `running` rows become `failed` with the error "interrupted (found running when the database was opened)"
    /// (``LabStore/interruptedRunError`` when this was written; their `finished_at` stays NULL); `run_key` and
    /// `clip_sha256` are NULL for every row; the AUTOINCREMENT counter of `runs` is kept, so a run id is never
    /// reused. Foreign keys must be off (``Migration/foreignKeysOff``).
    static func migrateVersion1To2(_ db: Database) throws {
        // A version 1 file may lack a table the lab writes beside runs and frames: it is made first.
        try db.execute(schemaVersion1)
        let counter = try runsCounter(db)
        try db.prepare("UPDATE runs SET status = 'failed', error = ? WHERE status = 'running'")
            .run([.text("interrupted (found running when the database was opened)")])
        try db.execute(version2Runs)
        try db.execute("""
            INSERT INTO new_runs (run_id, experiment, clip, settings, status, frames, bytes, duration_s, timebase_num, timebase_den,
                stream_path, crop, x264_version, lab_version, ffmpeg_version, machine, created_at, finished_at, width, height,
                fps_num, fps_den, input_frames, truncated_bytes, warnings, error)
            SELECT run_id, experiment, clip, settings, status, frames, bytes, duration_s, timebase_num, timebase_den,
                stream_path, crop, x264_version, lab_version, ffmpeg_version, machine, created_at, finished_at, width, height,
                fps_num, fps_den, input_frames, truncated_bytes, warnings, error
            FROM runs;
            DROP TABLE runs;
            ALTER TABLE new_runs RENAME TO runs;
            """)
        try db.execute(version2Frames)
        try db.execute("""
            INSERT INTO new_frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes,
                pts, dts, qp, psnr_y, psnr_u, psnr_v, psnr_avg, ssim)
            SELECT run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes,
                pts, dts, qp, psnr_y, psnr_u, psnr_v, psnr_avg, ssim
            FROM frames;
            DROP TABLE frames;
            ALTER TABLE new_frames RENAME TO frames;
            """)
        try keepRunsCounter(db, counter)
        try db.execute(version2Rest)
    }

    /// Version 2 → 3, table rebuilds as in ``migrateVersion1To2(_:)`` (new table, copy, drop, rename):
    ///
    /// - `frames`: x264's `psnr_y/u/v/avg` are copied to `x264_psnr_y/u/v/avg`. A frame whose run has a
    ///   `decoded_frames` row of source `stream` for its display index gets that row's `sse_y/u/v`, `psnr_*`
    ///   derived from them over the run's `width` × `height` (NULL where the error is 0) and `x264_psnr_differs`
    ///   (``Version3Quality``, the lab's formulas of version 3 frozen here); any other frame keeps `sse_*`, `psnr_*`
    ///   and `x264_psnr_differs` NULL, its x264 values only in `x264_psnr_*` (a frame of a run without a picture
    ///   size, which no done run lacks, gets `sse_*` and keeps the other two NULL).
    /// - `parameter_sets`: version 2 kept the last set of each id; each row becomes occurrence 0, 1, ... of its
    ///   run and kind in id order, with `new_content` 1 and `nal_unit_index` NULL (not recorded before).
    ///
    /// Every other table and every run id is kept as it was. Foreign keys must be off (``Migration/foreignKeysOff``).
    static func migrateVersion2To3(_ db: Database) throws {
        // A version 2 file may lack a table or index of its version (decoded_frames): it is made first.
        try db.execute(schemaVersion2)
        try db.execute(version3Frames)
        try db.execute("""
            INSERT INTO new_frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes,
                pts, dts, qp, ssim, x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg, sse_y, sse_u, sse_v)
            SELECT f.run_id, f.coded_index, f.display_index, f.type, f.keyframe, f.size_bytes, f.header_bytes, f.filler_bytes,
                f.pts, f.dts, f.qp, f.ssim, f.psnr_y, f.psnr_u, f.psnr_v, f.psnr_avg, d.sse_y, d.sse_u, d.sse_v
            FROM frames f LEFT JOIN decoded_frames d
                ON d.run_id = f.run_id AND d.source = 'stream' AND d.display_index = f.display_index
            """)
        let update = try db.prepare("""
            UPDATE new_frames SET psnr_y = ?, psnr_u = ?, psnr_v = ?, psnr_avg = ?, x264_psnr_differs = ?
            WHERE run_id = ? AND coded_index = ?
            """)
        func real(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        // One run at a time, so a large database is not read into memory whole.
        for run in try db.rows("SELECT run_id, width, height FROM runs WHERE width > 0 AND height > 0 ORDER BY run_id") {
            let (runID, width, height) = (try run.integer("run_id"), Int(try run.integer("width")), Int(try run.integer("height")))
            let measured = try db.rows("""
                SELECT coded_index, sse_y, sse_u, sse_v, x264_psnr_y, x264_psnr_u, x264_psnr_v
                FROM new_frames WHERE run_id = ? AND sse_y IS NOT NULL
                """, [.integer(runID)])
            for row in measured {
                let q = Version3Quality(sse: (try row.integer("sse_y"), try row.integer("sse_u"), try row.integer("sse_v")),
                                        x264: (row["x264_psnr_y"].double, row["x264_psnr_u"].double, row["x264_psnr_v"].double),
                                        width: width, height: height)
                try update.run([real(q.psnrY), real(q.psnrU), real(q.psnrV), real(q.psnrAvg), .integer(q.x264Differs ? 1 : 0),
                                .integer(runID), .integer(try row.integer("coded_index"))])
            }
        }
        try db.execute("""
            DROP TABLE frames;
            ALTER TABLE new_frames RENAME TO frames;
            """)
        try db.execute(version3ParameterSets)
        try db.execute("""
            INSERT INTO new_parameter_sets (run_id, kind, id, profile_idc, level_idc, width, height, entropy_coding_mode_flag,
                max_num_reorder_frames, fields, occurrence, new_content)
            SELECT run_id, kind, id, profile_idc, level_idc, width, height, entropy_coding_mode_flag,
                max_num_reorder_frames, fields, row_number() OVER (PARTITION BY run_id, kind ORDER BY id) - 1, 1
            FROM parameter_sets;
            DROP TABLE parameter_sets;
            ALTER TABLE new_parameter_sets RENAME TO parameter_sets;
            """)
        try db.execute(version3Rest)
    }

    /// The lab's quality of one frame as schema version 3 defined it (commit e6c4661: `PSNR.decibels`, `PSNR.sse`,
    /// `PSNR.picture`, `PlaneErrors.x264` and `FrameQuality.x264Differs` of that commit), copied here so the
    /// migration from version 2 computes what it computed then whatever the lab's own code becomes.
    ///
    /// PSNR = 10 log10(255² · samples / sse) dB, nil for sse 0, over a 4:2:0 picture of `width` × `height` (luma
    /// `width·height` samples, each chroma plane a quarter); `psnrAvg` of the three planes' summed error over all
    /// their samples. `x264Differs`: the squared errors x264's PSNRs stand for (sse = 255² · samples · 10^(-psnr/10),
    /// rounded; 0 at 100 dB or more; all 0 when x264 reported none; none at all when it reported some planes only)
    /// are not `sse`.
    struct Version3Quality {
        var psnrY: Double?, psnrU: Double?, psnrV: Double?, psnrAvg: Double?
        var x264Differs: Bool

        init(sse: (y: Int64, u: Int64, v: Int64), x264: (y: Double?, u: Double?, v: Double?), width: Int, height: Int) {
            func decibels(_ sse: Int64, _ samples: Int) -> Double? { sse == 0 ? nil : 10 * log10(255 * 255 * Double(samples) / Double(sse)) }
            func error(_ psnr: Double, _ samples: Int) -> Int64 {
                psnr >= 100 ? 0 : Int64((255.0 * 255.0 * Double(samples) * pow(10, -psnr / 10)).rounded())
            }
            let luma = width * height, chroma = luma / 4
            psnrY = decibels(sse.y, luma)
            psnrU = decibels(sse.u, chroma)
            psnrV = decibels(sse.v, chroma)
            psnrAvg = decibels(sse.y + sse.u + sse.v, luma + 2 * chroma)
            switch x264 {
            case (nil, nil, nil): x264Differs = (sse.y, sse.u, sse.v) != (0, 0, 0)
            case let (y?, u?, v?): x264Differs = (error(y, luma), error(u, chroma), error(v, chroma)) != (sse.y, sse.u, sse.v)
            default: x264Differs = true
            }
        }
    }

    /// Version 3 → 4: adds `frames.input_pts` and the timestamps tables. `frames` is rebuilt the documented way
    /// (new table, copy, drop, rename; sqlite.org/lang_altertable.html), so a migrated file has the very schema
    /// of a new one. Every run stored before handed x264 the PTS it got back (libx264 returns each picture's
    /// `i_pts` unchanged), so `input_pts` is set to `pts` for them; they get no `timestamp_analysis` rows.
    static func migrateVersion3To4(_ db: Database) throws {
        try db.execute(version4Frames)
        try db.execute("""
            INSERT INTO new_frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes,
                pts, dts, qp, sse_y, sse_u, sse_v, psnr_y, psnr_u, psnr_v, psnr_avg, ssim, x264_psnr_y, x264_psnr_u,
                x264_psnr_v, x264_psnr_avg, x264_psnr_differs, input_pts)
            SELECT run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes,
                pts, dts, qp, sse_y, sse_u, sse_v, psnr_y, psnr_u, psnr_v, psnr_avg, ssim, x264_psnr_y, x264_psnr_u,
                x264_psnr_v, x264_psnr_avg, x264_psnr_differs, pts
            FROM frames;
            DROP TABLE frames;
            ALTER TABLE new_frames RENAME TO frames;
            """)
        try db.execute(version3Rest)
        try db.execute(version4Tables)
    }

    /// Version 6 → 7, a table rebuild as in ``migrateVersion1To2(_:)`` (new table, copy, drop, rename), so that a
    /// migrated file has the very schema of a new one: `runs` gets `repeatable`, set for every run whose stored
    /// settings hold x264's options string (``version7Repeatable(settingsJSON:)``, frozen here: 1 or 0; NULL for a
    /// stream the lab did not encode); its indexes are made again, `runs_done_by_key` as version 7 has it. Every
    /// other table, every run id and the AUTOINCREMENT counter are kept. Foreign keys must be off
    /// (``Migration/foreignKeysOff``).
    static func migrateVersion6To7(_ db: Database) throws {
        // A version 6 file may lack a table or index of its version: it is made first.
        try db.execute(schemaVersion6)
        let counter = try runsCounter(db)
        try db.execute(version7Runs)
        try db.execute("""
            INSERT INTO new_runs (run_id, run_key, experiment, clip, clip_sha256, settings, status, frames, bytes, duration_s,
                timebase_num, timebase_den, stream_path, crop, x264_version, lab_version, ffmpeg_version, machine, created_at,
                finished_at, width, height, fps_num, fps_den, input_frames, truncated_bytes, warnings, error)
            SELECT run_id, run_key, experiment, clip, clip_sha256, settings, status, frames, bytes, duration_s,
                timebase_num, timebase_den, stream_path, crop, x264_version, lab_version, ffmpeg_version, machine, created_at,
                finished_at, width, height, fps_num, fps_den, input_frames, truncated_bytes, warnings, error
            FROM runs;
            DROP TABLE runs;
            ALTER TABLE new_runs RENAME TO runs;
            """)
        try keepRunsCounter(db, counter)
        let update = try db.prepare("UPDATE runs SET repeatable = ? WHERE run_id = ?")
        // One run at a time: the settings are read by run id, not all at once.
        for id in try db.rows("SELECT run_id FROM runs ORDER BY run_id").map({ try $0.integer("run_id") }) {
            guard case .text(let settings)? = try db.query("SELECT settings FROM runs WHERE run_id = ?", [.integer(id)]).first?.first,
                  let repeatable = version7Repeatable(settingsJSON: settings) else { continue }
            try update.run([.integer(repeatable ? 1 : 0), .integer(id)])
        }
        try db.execute(schemaVersion7)
    }

    /// The first part of version 7 → 8: a file made by version 4 (or by version 5 before e7c8bae) still has
    /// `timestamp_analysis.span_ticks`, `span_s` and `achieved_kbps` NOT NULL (e7c8bae made them nullable in new files
    /// without a migration), so a run whose span is not positive could not be stored in it. When any of the three is
    /// NOT NULL (`pragma_table_info`), the table is rebuilt as in ``migrateVersion1To2(_:)`` (new table, copy, drop,
    /// rename) with the columns of version 7 (``version8TimestampAnalysis``), every row copied as it was; otherwise
    /// nothing is done. Foreign keys must be off (``Migration/foreignKeysOff``).
    static func migrateVersion7To8TimestampAnalysis(_ db: Database) throws {
        // A version 7 file may lack a table or index of its version: it is made first.
        try db.execute(schemaVersion7)
        let notNull = try db.rows("""
            SELECT count(*) AS n FROM pragma_table_info('timestamp_analysis')
            WHERE name IN ('span_ticks', 'span_s', 'achieved_kbps') AND "notnull" = 1
            """).first?["n"].int ?? 0
        guard notNull > 0 else { return }
        try db.execute(version8TimestampAnalysis)
        try db.execute("""
            INSERT INTO new_timestamp_analysis (run_id, source, frames, non_increasing_input_pts, duplicate_dts, decreasing_dts,
                pts_before_dts, min_composition_offset, max_composition_offset, span_ticks, span_s, achieved_kbps, target_kbps,
                bitrate_error_pct, x264_timestamp_warnings, x264_warnings)
            SELECT run_id, source, frames, non_increasing_input_pts, duplicate_dts, decreasing_dts,
                pts_before_dts, min_composition_offset, max_composition_offset, span_ticks, span_s, achieved_kbps, target_kbps,
                bitrate_error_pct, x264_timestamp_warnings, x264_warnings
            FROM timestamp_analysis;
            DROP TABLE timestamp_analysis;
            ALTER TABLE new_timestamp_analysis RENAME TO timestamp_analysis;
            """)
    }

    /// Whether a run of `settingsJSON` (its `runs.settings`) wrote the same bytes every time, by the rule of schema
    /// version 7 (commit 615fab9's `Repeatability.reason(settingsJSON:)`, copied here so the migration decides as it
    /// did then): nil when the settings are not a JSON object or hold no `x264_options` (a stream the lab did not
    /// encode); false when the last of x264's `non-deterministic` / `no-non-deterministic` options (`options`, pairs
    /// of name and value; a value none, 1, true, yes: on; 0, false, no: off; `_` read as `-`) turns it on, or when
    /// `x264_options` holds `threads=N` with N > 1 and `vbv_bufsize=M` with M > 0; true otherwise.
    static func version7Repeatable(settingsJSON: String) -> Bool? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(settingsJSON.utf8))) as? [String: Any],
              let x264Options = object["x264_options"] as? String, !x264Options.isEmpty else { return nil }
        var nonDeterministic = false
        for pair in object["options"] as? [[Any]] ?? [] {
            guard let given = pair.first as? String else { continue }
            let value = pair.count > 1 ? pair[1] as? String : nil
            let name = given.replacingOccurrences(of: "_", with: "-")
            let on: Bool?
            switch value?.lowercased() {
            case nil, "1", "true", "yes": on = true
            case "0", "false", "no": on = false
            default: on = nil
            }
            if name == "non-deterministic", let on { nonDeterministic = on }
            if name == "no-non-deterministic", let on { nonDeterministic = !on }
        }
        if nonDeterministic { return false }
        var fields: [Substring: Substring] = [:]
        for token in x264Options.split(separator: " ") {
            guard let eq = token.firstIndex(of: "=") else { continue }
            fields[token[..<eq]] = token[token.index(after: eq)...]
        }
        let threads = fields["threads"].flatMap { Int($0) } ?? 1
        let vbv = (fields["vbv_bufsize"].flatMap { Int($0) } ?? 0) > 0
        return !(threads > 1 && vbv)
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
    /// - Parameter steps: the migrations (``migrations``; a test hands others).
    static func bringUpToDate(_ database: Database, found: Found, steps: [Migration] = migrations) throws {
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
            if !created { try bringUpToDate(database, found: try inspect(database), steps: steps) }
        case .lab(let version, let complete):
            for migration in steps where migration.from >= version {
                if migration.foreignKeysOff { try database.execute("PRAGMA foreign_keys = OFF") }
                do {
                    try database.transaction {
                        guard try userVersion(database) == Int64(migration.from) else { return }
                        try run(migration, on: database)
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
