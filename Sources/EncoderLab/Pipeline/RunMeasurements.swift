import Foundation

/// What a done run measured, made once and written as given. The runner makes it where the verify stage's results
/// become the run's result (``Pipeline/execute(_:in:matroska:quality:warn:)``), `enclab check --db` for a stream the lab did
/// not make (``RuleCheck/record(_:expect:report:databasePath:createdAt:)``); the store records it
/// (``LabStore/recordRun(_:replacing:beforeCommit:)``) without computing any of it again. A new measurement is a
/// field here, set where it is measured and written in one place of the store.
public struct RunMeasurements: Sendable {
    /// The coded frames in decode order (their NAL bytes are in `stream.264`, not here).
    public var frames: [EncodedFrame]
    /// Each frame's quality, one per frame in the order of `frames` (`frames.sse_*`, `psnr_*`,
    /// `x264_psnr_differs`); nil for a frame without a measurement (no independent decode of it). Made by
    /// ``perFrame(frames:decoded:width:height:unverified:)``.
    public var quality: [FrameQuality?]
    /// The pictures of the independent decodes, with their PSNRs (`decoded_frames`).
    public var decoded: [DecodedPicture]
    /// The timebase of the frames' PTS and DTS.
    public var timebaseNum: Int
    public var timebaseDen: Int
    /// The span of the run in seconds (`runs.duration_s`): largest PTS − smallest PTS + the last frame's duration
    /// (``TimestampAnalysis/span``); at the constant rate, the input frames at the nominal rate.
    public var durationSeconds: Double
    /// Frames read from the clip and encoded.
    public var inputFrames: Int
    /// Bytes after the last whole frame of the clip, if any.
    public var truncatedBytes: Int?
    /// The structured settings completed with what x264 resolved (`runs.settings`; replaces the start's).
    public var settingsJSON: String
    /// The stream parsed back: checks and parameter sets.
    public var verification: StreamVerification?
    /// The PTS handed to x264 by input frame (`frames.input_pts`, by display index); empty for none.
    public var inputPTS: [Int64] = []
    /// The timestamps analysis and its source (`timestamp_analysis`, `frame_durations`), if made.
    public var timestampAnalysis: TimestampAnalysis?
    public var timestampSource = TimestampSource.constantRate.rawValue
    /// The keyframe rule's analysis (`keyframe_analysis`, `keyframe_violations`), when the run has the rule.
    public var keyframes: KeyframeAnalysis?
    /// The DataRateLimits windows (`data_rate_windows`), when the run has limits; and whether only the first pair
    /// was honoured (vt-compat).
    public var dataRateWindows: [DataRateLimits.WindowCheck]?
    public var dataRateLimitsVTCompat = false
    /// The encoder's delay per frame and per run (`frame_delays`, `run_delay`), when the encoder reports it.
    public var encoderDelay: EncoderDelay?
    /// The RTP stage's packets per frame and, with a loss model, each displayed frame under loss (`rtp_frames`,
    /// `rtp_loss_frames`, `rtp_runs`), nil without `--rtp`/`--loss`.
    public var rtp: RTPRunMeasurements?
    /// The rate schedule's changes with the frame each took effect on (`rate_changes`), when the run has a schedule.
    public var rateChanges: [RateChangeRecord]?
    /// Whether the frames' `qp` are known: x264's own, or for OpenH264 the decoded mean macroblock QP (verify full);
    /// false for a stream the lab did not make (`enclab check --db`) or an OpenH264 run without the decode, whose
    /// `frames.qp` are stored NULL.
    public var qpKnown = true
    /// The perceptual quality libvmaf (and the xpsnr filter) gave each displayed frame with `--metrics`
    /// (`frame_quality_metrics`, `run_quality_metrics`), nil without the flag.
    public var perceptual: QualityScores?
    /// The pictures the encoder dropped (`skipped_frames`), in input order; empty for x264.
    public var skipped: [SkippedFrame] = []

    /// One picture of an independent decode with its PSNRs, as a `decoded_frames` row holds it.
    public struct DecodedPicture: Sendable {
        public var record: DecodedFrame
        /// ``PSNR/picture(_:width:height:)`` of the record's errors: nil per plane where the error is 0.
        public var psnr: PSNR.Picture

        public init(_ record: DecodedFrame, psnr: PSNR.Picture) {
            self.record = record
            self.psnr = psnr
        }
    }

    /// The per-frame measurements of a run, each computed once: every frame's quality
    /// (``FrameQuality/measure(frames:decoded:width:height:unverified:)``: the `stream` decode of its display index,
    /// or with `unverified` x264's report) and every decoded picture's PSNRs, for pictures of `width` × `height`
    /// luma samples (both even).
    public static func perFrame(frames: [EncodedFrame], decoded: [DecodedFrame], width: Int, height: Int,
                                unverified: Bool, encoderReportsPSNR: Bool = true) -> (quality: [FrameQuality?], decoded: [DecodedPicture]) {
        (FrameQuality.measure(frames: frames, decoded: decoded, width: width, height: height, unverified: unverified,
                              encoderReportsPSNR: encoderReportsPSNR),
         decoded.map { DecodedPicture($0, psnr: PSNR.picture($0.errors, width: width, height: height)) })
    }

    /// - Precondition: one `quality` per frame.
    public init(frames: [EncodedFrame], quality: [FrameQuality?], decoded: [DecodedPicture], timebaseNum: Int, timebaseDen: Int,
                durationSeconds: Double, inputFrames: Int, truncatedBytes: Int?, settingsJSON: String,
                verification: StreamVerification?) {
        precondition(frames.count == quality.count, "one quality per frame")
        self.frames = frames
        self.quality = quality
        self.decoded = decoded
        self.timebaseNum = timebaseNum
        self.timebaseDen = timebaseDen
        self.durationSeconds = durationSeconds
        self.inputFrames = inputFrames
        self.truncatedBytes = truncatedBytes
        self.settingsJSON = settingsJSON
        self.verification = verification
    }
}
