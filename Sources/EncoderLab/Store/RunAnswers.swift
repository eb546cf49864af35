import Foundation

/// What `enclab encode` and `enclab run` say of a recorded run beyond its bytes, rate and PSNR, read from what the
/// run's recording stored (`run_metrics`, `keyframe_analysis`, `keyframe_violations`, `data_rate_windows`), so the
/// console answers the lab's questions without a second command: the largest GOP, the 1-s peak against the target,
/// and each VideoToolbox rule's violations.
public struct RunAnswers: Sendable, Equatable {
    /// The run's VideoToolbox keyframe limits (`keyframe_analysis`) and their violations by kind.
    public struct KeyframeLimits: Sendable, Equatable {
        /// MaxKeyFrameInterval as given (frames; 0: no frame limit).
        public var maxFrames: Int64
        /// MaxKeyFrameIntervalDuration as given (seconds, exact text; "0": no limit).
        public var maxDuration: String
        /// Gaps longer than the frame limit (`kind` 'frame-limit').
        public var frameLimitViolations: Int
        /// Gaps longer than the duration limit, and stalls (`kind` 'duration-limit' and 'stall').
        public var durationLimitViolations: Int
        /// Whether the frame limit was applied (`keyframe_analysis.frame_limit` not NULL): with vt-compat and both
        /// limits set, VideoToolbox as it is reported to behave keeps the time limit alone, and no frame-limit
        /// violation is counted (`enclab check` counts against the documented rule).
        public var frameLimitApplied: Bool = true
    }

    /// One DataRateLimits pair (`data_rate_windows`).
    public struct DataRatePair: Sendable, Equatable {
        /// From 1, in the order given.
        public var pair: Int
        public var bytes: Int64
        /// Seconds, exact text.
        public var seconds: String
        /// Whether the encode was asked to honour it (vt-compat honours the first pair only).
        public var honoured: Bool
        public var windows: Int64
        public var windowsOver: Int64
        /// The worst window's bytes over the pair's bytes; nil without a window.
        public var worstRatio: Double?
    }

    /// `run_metrics.gop_max_frames`, nil when the run has no metrics.
    public var gopMaxFrames: Int64?
    /// `run_metrics.gop_max_seconds`: the longest GOP in display time.
    public var gopMaxSeconds: Double?
    /// `run_metrics.peak_1s_kbps`: the most bits in a full 1-s window of decode time, per second.
    public var peak1sKbps: Double?
    /// The bitrate target in force where the 1-s peak window starts: the run's `run_metrics.target_kbps` (the bitrate
    /// asked for: ABR, CBR, VBR; nil for CRF and CQP), or, with a rate schedule, the last `bitrate` or
    /// `AverageBitRate` change x264 applied (`rate_changes.status` applied) on a frame coded at or before the peak
    /// window's first frame (a schedule from frame 0 replaces the opened target for the whole run).
    public var targetKbps: Double?
    /// Whether ``targetKbps`` comes from a rate schedule's change rather than the opened settings.
    public var targetFromSchedule: Bool = false
    /// nil for a run without VideoToolbox keyframe limits.
    public var keyframeLimits: KeyframeLimits?
    /// Empty without DataRateLimits.
    public var dataRateLimits: [DataRatePair]
    /// Pictures the encoder dropped (`skipped_frames` rows: OpenH264's frame skip), and the pictures that went in
    /// (`runs.input_frames`, nil when not stored).
    public var skippedFrames: Int64 = 0
    public var inputFrames: Int64?
}

extension LabStore {
    /// Run `runID`'s ``RunAnswers``: each part NULL/empty when the run has none (a run of an older database not
    /// analysed yet has no metrics).
    /// - Throws: `.data` naming the database and column for a stored value of the wrong kind; the database's errors.
    public func answers(runID: Int64) throws -> RunAnswers {
        let id = SQLValue.integer(runID)
        let metrics = try database.rows("""
            SELECT gop_max_frames, gop_max_seconds, peak_1s_kbps, peak_1s_start_frame, target_kbps FROM run_metrics WHERE run_id = ?
            """, [id]).first.map { $0.at("run \(runID)") }
        var target = try metrics.flatMap { try $0.optionalNumber("target_kbps") }
        var fromSchedule = false
        // A rate schedule's applied bitrate changes up to the peak window's first frame (coded order).
        if target != nil, let peakStart = try metrics.flatMap({ try $0.optionalNumber("peak_1s_start_frame") }),
           try !database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rate_changes'").isEmpty,
           let change = try database.rows("""
               SELECT c.target_kbps FROM rate_changes c JOIN frames f ON f.run_id = c.run_id AND f.display_index = c.frame
               WHERE c.run_id = ? AND c.status = 'applied' AND c.name IN ('bitrate', 'AverageBitRate') AND c.target_kbps IS NOT NULL
                 AND f.coded_index <= ?
               ORDER BY f.coded_index DESC, c.change_index DESC LIMIT 1
               """, [id, .integer(Int64(peakStart))]).first {
            target = try change.at("run \(runID)").optionalNumber("target_kbps")
            fromSchedule = true
        }
        var keyframes: RunAnswers.KeyframeLimits?
        if let k = try database.rows("SELECT max_frames, max_duration, frame_limit FROM keyframe_analysis WHERE run_id = ?", [id]).first {
            let row = k.at("run \(runID)")
            var counts: [String: Int] = [:]
            for c in try database.rows("SELECT kind, COUNT(*) AS n FROM keyframe_violations WHERE run_id = ? GROUP BY kind", [id]) {
                counts[try c.text("kind")] = Int(try c.integer("n"))
            }
            keyframes = .init(maxFrames: try row.integer("max_frames"), maxDuration: try row.text("max_duration"),
                              frameLimitViolations: counts["frame-limit", default: 0],
                              durationLimitViolations: counts["duration-limit", default: 0] + counts["stall", default: 0],
                              frameLimitApplied: try row.optionalNumber("frame_limit") != nil)
        }
        let pairs = try database.rows("""
            SELECT pair, bytes, seconds, honoured, windows, windows_over, worst_ratio FROM data_rate_windows
            WHERE run_id = ? ORDER BY pair
            """, [id]).map { r in
            let row = r.at("run \(runID)")
            return RunAnswers.DataRatePair(pair: Int(try row.integer("pair")) + 1, bytes: try row.integer("bytes"), seconds: try row.text("seconds"),
                                           honoured: try row.integer("honoured") == 1, windows: try row.integer("windows"),
                                           windowsOver: try row.integer("windows_over"), worstRatio: try row.optionalNumber("worst_ratio"))
        }
        var answers = RunAnswers(gopMaxFrames: try metrics.flatMap { try $0.optionalNumber("gop_max_frames") }.map { Int64($0) },
                                 gopMaxSeconds: try metrics.flatMap { try $0.optionalNumber("gop_max_seconds") },
                                 peak1sKbps: try metrics.flatMap { try $0.optionalNumber("peak_1s_kbps") },
                                 targetKbps: target, targetFromSchedule: fromSchedule,
                                 keyframeLimits: keyframes, dataRateLimits: pairs)
        answers.skippedFrames = try database.rows("SELECT count(*) AS n FROM skipped_frames WHERE run_id = ?", [id]).first?.integer("n") ?? 0
        answers.inputFrames = try database.rows("SELECT input_frames FROM runs WHERE run_id = ?", [id]).first
            .flatMap { try $0.optionalNumber("input_frames") }.map { Int64($0) }
        return answers
    }
}
