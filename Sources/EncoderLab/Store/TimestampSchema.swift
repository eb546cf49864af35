import Foundation

/// The timestamps part of the schema (README, "Database schema" and "Timestamps"): `frames.input_pts` and the
/// tables `timestamp_analysis` and `frame_durations`, added by the migration ``migrateAddTimestamps(_:)``.
extension LabStore {
    /// The tables of the timestamps analysis (``TimestampAnalysis``); times in ticks of the run's timebase
    /// (`runs.timebase_num/timebase_den`). Every statement is `IF NOT EXISTS`.
    static let timestampTables = """
    CREATE TABLE IF NOT EXISTS timestamp_analysis (
        run_id                   INTEGER PRIMARY KEY REFERENCES runs(run_id),
        source                   TEXT NOT NULL CHECK (source IN ('constant-rate', 'file', 'tcfile', 'schedule')),
        frames                   INTEGER NOT NULL,
        non_increasing_input_pts INTEGER NOT NULL,
        duplicate_dts            INTEGER NOT NULL,
        decreasing_dts           INTEGER NOT NULL,
        pts_before_dts           INTEGER NOT NULL,
        min_composition_offset   INTEGER NOT NULL,
        max_composition_offset   INTEGER NOT NULL,
        span_ticks               INTEGER,
        span_s                   REAL,
        achieved_kbps            REAL,
        target_kbps              REAL,
        bitrate_error_pct        REAL,
        x264_timestamp_warnings  INTEGER NOT NULL,
        x264_warnings            TEXT
    );
    CREATE TABLE IF NOT EXISTS frame_durations (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id),
        duration_ticks INTEGER NOT NULL,
        frames         INTEGER NOT NULL,
        PRIMARY KEY (run_id, duration_ticks)
    );
    """

    /// Version 3 → 4: adds `frames.input_pts` and the timestamps tables. `frames` is rebuilt the documented way
    /// (new table, copy, drop, rename; sqlite.org/lang_altertable.html), so a migrated file has the very schema
    /// of a new one. Every run stored before handed x264 the PTS it got back (libx264 returns each picture's
    /// `i_pts` unchanged), so `input_pts` is set to `pts` for them; they get no `timestamp_analysis` rows.
    static func migrateAddTimestamps(_ db: Database) throws {
        let columns = shapeVersion3.columns["frames"]!.joined(separator: ", ")
        try db.execute(framesTable("new_frames", ifNotExists: false))
        try db.execute("INSERT INTO new_frames (\(columns), input_pts) SELECT \(columns), pts FROM frames")
        try db.execute("DROP TABLE frames")
        try db.execute("ALTER TABLE new_frames RENAME TO frames")
        try db.execute(schemaVersion3Rest)
        try db.execute(timestampTables)
    }

    /// Writes a run's timestamps analysis rows.
    func insertTimestampAnalysis(_ runID: Int64, source: String, _ a: TimestampAnalysis) throws {
        func real(_ v: Double?) -> SQLValue { v.flatMap { $0.isFinite ? SQLValue.real($0) : nil } ?? .null }
        let warnings = a.x264Warnings.map { [$0.text, $0.count] as [Any] }
        try database.prepare("""
            INSERT INTO timestamp_analysis (run_id, source, frames, non_increasing_input_pts, duplicate_dts, decreasing_dts,
                pts_before_dts, min_composition_offset, max_composition_offset, span_ticks, span_s, achieved_kbps,
                target_kbps, bitrate_error_pct, x264_timestamp_warnings, x264_warnings)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .integer(runID), .text(source), .integer(Int64(a.frames)), .integer(Int64(a.nonIncreasingInputPTS)),
                .integer(Int64(a.duplicateDTS)), .integer(Int64(a.decreasingDTS)), .integer(Int64(a.ptsBeforeDTS)),
                .integer(a.minCompositionOffset), .integer(a.maxCompositionOffset), a.spanTicks.map(SQLValue.integer) ?? .null,
                real(a.span?.approximateValue), real(a.achievedKbps), real(a.targetKbps), real(a.bitrateErrorPercent),
                .integer(Int64(a.x264Warnings.reduce(0) { $0 + $1.count })),
                warnings.isEmpty ? .null : .text(JSON.string(warnings)),
            ])
        let durations = try database.prepare("INSERT INTO frame_durations (run_id, duration_ticks, frames) VALUES (?, ?, ?)")
        for (ticks, count) in a.durationHistogram {
            try durations.run([.integer(runID), .integer(ticks), .integer(Int64(count))])
        }
    }
}
