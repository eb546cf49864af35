import Foundation

/// The timestamps part of the store (docs/schema.md and "Timestamps"): writing `timestamp_analysis` and
/// `frame_durations`, the tables of schema version 4 (``LabStore/version4Tables``); times in ticks of the run's
/// timebase (`runs.timebase_num/timebase_den`).
extension LabStore {
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
