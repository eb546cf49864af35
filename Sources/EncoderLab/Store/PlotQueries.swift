import Foundation

/// The statements of the plots drawn from the store (``Plots``: the VideoToolbox and timestamps plots of an
/// experiment). Columns the plots check before drawing are handed over as stored (``SQLValue``), so the plot names the
/// run, table and column it refuses.
extension Database {
    /// The run ids that have a `keyframe_analysis` row.
    func keyframeAnalysisRunIDs() throws -> Set<Int64> {
        Set(try rows("SELECT run_id FROM keyframe_analysis").map { try $0.integer("run_id") })
    }

    /// The run ids that have `data_rate_windows` rows.
    func dataRateWindowRunIDs() throws -> Set<Int64> {
        Set(try rows("SELECT DISTINCT run_id FROM data_rate_windows").map { try $0.integer("run_id") })
    }

    /// The keyframe lists of a `keyframe_analysis` row (JSON lists of display indices, as stored).
    struct StoredKeyframeLists {
        var expected: SQLValue
        var actual: SQLValue
        var forced: SQLValue
    }

    /// Run `runID`'s `keyframe_analysis` lists, or nil without a row.
    func keyframeLists(run runID: Int64) throws -> StoredKeyframeLists? {
        try rows("SELECT expected, actual, forced FROM keyframe_analysis WHERE run_id = ?", [.integer(runID)]).first.map {
            StoredKeyframeLists(expected: $0["expected"], actual: $0["actual"], forced: $0["forced"])
        }
    }

    /// One `keyframe_violations` row, as stored.
    struct StoredKeyframeViolation {
        var ordinal: SQLValue
        var kind: SQLValue
        var startFrame: SQLValue
        var endFrame: SQLValue
    }

    /// Run `runID`'s `keyframe_violations` rows by `ordinal`.
    func keyframeViolations(run runID: Int64) throws -> [StoredKeyframeViolation] {
        try rows("SELECT ordinal, kind, start_frame, end_frame FROM keyframe_violations WHERE run_id = ? ORDER BY ordinal",
                 [.integer(runID)]).map {
            StoredKeyframeViolation(ordinal: $0["ordinal"], kind: $0["kind"], startFrame: $0["start_frame"], endFrame: $0["end_frame"])
        }
    }

    /// One `data_rate_windows` row, as stored.
    struct StoredDataRateWindow {
        var pair: SQLValue
        var bytes: SQLValue
        var seconds: SQLValue
        var honoured: SQLValue
        var windows: SQLValue
        var windowsOver: SQLValue
        var worstStartFrame: SQLValue
        var worstEndFrame: SQLValue
        var worstBytes: SQLValue
        var worstRatio: SQLValue
    }

    /// Run `runID`'s `data_rate_windows` rows by `pair`.
    func dataRateWindows(run runID: Int64) throws -> [StoredDataRateWindow] {
        try rows("""
            SELECT pair, bytes, seconds, honoured, windows, windows_over, worst_start_frame, worst_end_frame, worst_bytes,
                worst_ratio FROM data_rate_windows WHERE run_id = ? ORDER BY pair
            """, [.integer(runID)]).map {
            StoredDataRateWindow(pair: $0["pair"], bytes: $0["bytes"], seconds: $0["seconds"], honoured: $0["honoured"],
                                 windows: $0["windows"], windowsOver: $0["windows_over"], worstStartFrame: $0["worst_start_frame"],
                                 worstEndFrame: $0["worst_end_frame"], worstBytes: $0["worst_bytes"], worstRatio: $0["worst_ratio"])
        }
    }

    /// The `timestamp_analysis` columns the timestamps plots draw, as stored.
    struct StoredTimestampSummary {
        var source: SQLValue
        var bitrateErrorPct: SQLValue
        var nonIncreasingInputPTS: SQLValue
    }

    /// Run `runID`'s `timestamp_analysis` summary, or nil without a row.
    func timestampSummary(run runID: Int64) throws -> StoredTimestampSummary? {
        try rows("SELECT source, bitrate_error_pct, non_increasing_input_pts FROM timestamp_analysis WHERE run_id = ?",
                 [.integer(runID)]).first.map {
            StoredTimestampSummary(source: $0["source"], bitrateErrorPct: $0["bitrate_error_pct"],
                                   nonIncreasingInputPTS: $0["non_increasing_input_pts"])
        }
    }
}
