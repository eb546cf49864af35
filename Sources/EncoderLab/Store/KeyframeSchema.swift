import Foundation

/// The VideoToolbox part of the store (docs/schema.md): writing `keyframe_analysis`, `keyframe_violations`
/// and `data_rate_windows`, the tables of schema version 5 (``LabStore/version5Tables``).
extension LabStore {
    /// Writes a run's keyframe analysis rows.
    func insertKeyframeAnalysis(_ runID: Int64, _ k: KeyframeAnalysis) throws {
        let r = k.rule
        try database.prepare("""
            INSERT INTO keyframe_analysis (run_id, max_frames, max_duration, vt_compat, frame_limit, duration_limit, expected,
                actual, forced, largest_gop_frames, largest_gop_s, largest_gop_exact, violations)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .integer(runID), .integer(Int64(r.maxKeyFrameInterval)), .text(r.maxKeyFrameIntervalDuration.description),
                .integer(r.vtCompat ? 1 : 0), r.frameLimit.map { .integer(Int64($0)) } ?? .null,
                r.durationLimit.map { .text($0.description) } ?? .null,
                .text(JSON.string(k.expected)), .text(JSON.string(k.actual)), .text(JSON.string(k.forced)),
                .integer(Int64(k.check.largestGOPFrames)), .real(k.check.largestGOPSeconds.approximateValue),
                .text(k.check.largestGOPSeconds.description), .integer(Int64(k.check.violations.count)),
            ])
        let insert = try database.prepare("""
            INSERT INTO keyframe_violations (run_id, ordinal, kind, start_frame, end_frame, frames, duration_s, duration)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for (i, v) in k.check.violations.enumerated() {
            let kind: String
            switch v.kind {
            case .frameLimit: kind = "frame-limit"
            case .durationLimit: kind = "duration-limit"
            case .stall: kind = "stall"
            }
            try insert.run([.integer(runID), .integer(Int64(i)), .text(kind), .integer(Int64(v.startFrame)), .integer(Int64(v.endFrame)),
                            .integer(Int64(v.frames)), .real(v.durationSeconds.approximateValue), .text(v.durationSeconds.description)])
        }
    }

    /// Writes a run's DataRateLimits windows: one row per pair; `honoured` 0 for a pair vt-compat left out of the
    /// mapping (the window count is still made). Frames are coded indices.
    func insertDataRateWindows(_ runID: Int64, _ checks: [DataRateLimits.WindowCheck], vtCompat: Bool) throws {
        let insert = try database.prepare("""
            INSERT INTO data_rate_windows (run_id, pair, bytes, seconds, honoured, windows, windows_over, worst_start_frame,
                worst_end_frame, worst_bytes, worst_ratio)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for (i, c) in checks.enumerated() {
            let w = c.worst
            try insert.run([.integer(runID), .integer(Int64(i)), .integer(c.pair.bytes), .text(c.pair.seconds.description),
                            .integer(vtCompat && i > 0 ? 0 : 1), .integer(Int64(c.windowCount)), .integer(Int64(c.windowsOverLimit)),
                            w.map { .integer(Int64($0.startIndex)) } ?? .null, w.map { .integer(Int64($0.endIndex)) } ?? .null,
                            w.map { .integer($0.bytes) } ?? .null, w.map { .real($0.ratio.approximateValue) } ?? .null])
        }
    }
}
