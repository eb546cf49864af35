import H264

/// VideoToolbox's keyframe limits on x264: where the lab must place IDR pictures (the timestamps stage's keyframe-forcing
/// step, ``KeyframeForcing``), and, in Analysis, a checker for the keyframes a stream has (issue 10, item 2).
///
/// Apple's documentation (VideoToolbox, `kVTCompressionPropertyKey_MaxKeyFrameInterval` and
/// `kVTCompressionPropertyKey_MaxKeyFrameIntervalDuration`):
/// - MaxKeyFrameInterval is "the maximum interval between key frames", in frames; its default 0 "indicates that the
///   video encoder should choose where to place all key frames", 1 means every frame is a keyframe, 2 at least every
///   other frame, and so on.
/// - MaxKeyFrameIntervalDuration is "the maximum duration from one key frame to the next in seconds"; its default 0
///   "means no limit".
/// - Set together, both limits are enforced: "a keyframe every X frames or every Y seconds, whichever comes first".
///
/// The lab's model:
/// - Keyframes are IDR pictures, and every IDR (one x264 placed at a scene cut included) restarts both counts.
/// - The frame limit N: a keyframe at latest N frames after the last one, so a stretch of exactly N frames passes.
///   MaxKeyFrameInterval 0 is Apple's "the encoder chooses": the rule has no frame limit (``frameLimit`` nil), in
///   `encode` and `check` alike; on x264 the encoder's choice is its own keyint (``x264DefaultKeyint`` unless
///   `--keyint` is given), whose IDRs are IDRs like any other.
/// - The duration limit T: frame k must be a keyframe when the next frame would lie more than T after the last
///   keyframe: PTS(k+1) − PTS(last keyframe) > T, where for the clip's last frame PTS(k+1) is the stream's end,
///   PTS(k) + one nominal frame duration. A stretch of exactly T passes. At a constant frame duration d this is a
///   keyframe every ⌊T ÷ d⌋ frames (``durationKeyint(maxDuration:frameDuration:)``).
/// - How an encode keeps the rule (``placement``): x264's keyint carries it (the frame limit, and at the CLI's
///   constant rate the duration limit too), so x264 restarts its counts at its own scene cuts; with variable-rate
///   timestamps the lab forces IDRs for the duration limit and x264's scene-cut detection is off (scenecut 0), so
///   that the lab knows every IDR when it decides (x264 reports a scene cut only after its lookahead).
/// - Under `vtCompat` (VideoToolbox as it is reported to behave: a 15 fps stream with MaxKeyFrameInterval 30 and
///   MaxKeyFrameIntervalDuration 3.5 s keyframed every 3.5 s, not every 2 s), when both limits are set the time
///   limit alone is applied, by the same rule, and there is no frame limit (``frameLimit`` is nil).
///
/// Times are integer ticks of ``timebase`` (seconds per tick); every decision compares whole ticks with a threshold
/// computed exactly once (⌊T ÷ timebase⌋, in 128 bits): no floating point is involved, and no comparison can trap.
public struct KeyframeRule: Sendable, Equatable {
    /// x264's default keyint (`i_keyint_max` as `x264_param_default` sets it; the CLI's `--keyint` default): where
    /// x264 places IDRs when no keyint is given (MaxKeyFrameInterval 0 gives none: the encoder chooses).
    public static let x264DefaultKeyint = 250

    /// x264's `X264_KEYINT_MAX_INFINITE` (1 << 30): a keyint of this or more is no keyint limit at all.
    public static let x264KeyintInfinite = 1 << 30

    /// How an encode keeps the rule; part of the run key of runs with the rule (``RunSpec/keyMaterial``).
    public enum Placement: Sendable, Equatable {
        /// x264's keyint carries every limit the rule has (the frame limit, and at a constant rate the duration
        /// limit: ``durationKeyint(maxDuration:frameDuration:)``); x264's scene cuts stay on and restart its count;
        /// the lab forces nothing. The keyint x264 runs with (nil: infinite).
        case keyint(x264Keyint: Int?)
        /// Variable-rate timestamps with a duration limit: the lab forces an IDR where the rule needs one, counting
        /// from every IDR; x264's scene-cut detection is off (scenecut 0), and x264's own keyint (nil: infinite)
        /// places the others, which the lab counts as it goes.
        case forced(x264Keyint: Int?)

        /// The name stored in the run key and settings: `keyint` or `forced`.
        public var name: String {
            switch self {
            case .keyint: return "keyint"
            case .forced: return "forced"
            }
        }
    }

    /// MaxKeyFrameInterval as given, in frames (0 = the encoder chooses).
    public let maxKeyFrameInterval: Int
    /// MaxKeyFrameIntervalDuration as given, in seconds (0 = no limit).
    public let maxKeyFrameIntervalDuration: Rational
    /// Seconds per tick of every PTS handed to this rule (> 0).
    public let timebase: Rational
    /// Whether the vt-compat resolution applies (both limits set: the time limit alone).
    public let vtCompat: Bool
    /// The frame limit applied, in frames: MaxKeyFrameInterval; nil for 0 (the encoder chooses: no frame limit)
    /// and under `vtCompat` when both limits are set.
    public let frameLimit: Int?
    /// How an encode keeps the rule; nil for a stream checked by `enclab check` (no encode).
    public var placement: Placement?
    /// The duration limit applied, in seconds; nil for MaxKeyFrameIntervalDuration 0.
    public let durationLimit: Rational?
    /// ⌊durationLimit ÷ timebase⌋: a whole number of ticks d exceeds the duration limit exactly when d > this.
    let durationLimitTicks: Int128?

    /// Why a frame is a keyframe.
    public enum Reason: Sendable, Equatable {
        /// Frame 0: a stream starts with an IDR.
        case firstFrame
        /// ``frameLimit`` frames after the last keyframe (x264's keyint places this one itself).
        case frameLimit
        /// The next frame (or the stream's end) would lie more than ``durationLimit`` after the last keyframe: the
        /// lab must force this IDR.
        case durationLimit
    }

    /// Validates and resolves the two limits.
    /// - Parameters:
    ///   - maxFrames: MaxKeyFrameInterval in frames, ≥ 0 (0 = the encoder chooses: no frame limit).
    ///   - maxDuration: MaxKeyFrameIntervalDuration in seconds, ≥ 0 (0 = no time limit).
    ///   - timebase: seconds per tick of the PTS values, > 0.
    ///   - vtCompat: apply the time limit alone when both limits are set.
    ///   - placement: how an encode keeps the rule (nil for `check`).
    /// - Throws: `LabError` `.usage` for a negative limit or a timebase ≤ 0, naming the value, e.g.
    ///   "MaxKeyFrameInterval -1: must be 0 (the encoder chooses) or a positive number of frames".
    public init(maxFrames: Int, maxDuration: Rational, timebase: Rational, vtCompat: Bool = false,
                placement: Placement? = nil) throws {
        guard maxFrames >= 0 else {
            throw LabError.usage("MaxKeyFrameInterval \(maxFrames): must be 0 (the encoder chooses) or a positive number of frames")
        }
        guard maxDuration >= .zero else {
            throw LabError.usage("MaxKeyFrameIntervalDuration \(maxDuration): must be 0 (no limit) or a positive number of seconds")
        }
        guard timebase > .zero else {
            throw LabError.usage("timebase \(timebase): must be a positive number of seconds per tick")
        }
        maxKeyFrameInterval = maxFrames
        maxKeyFrameIntervalDuration = maxDuration
        self.timebase = timebase
        self.vtCompat = vtCompat
        if maxDuration > .zero {
            durationLimit = maxDuration
            // T / tb = (T.num · tb.den) / (T.den · tb.num), both products positive and below 2^126.
            durationLimitTicks = (Int128(maxDuration.numerator) * Int128(timebase.denominator))
                / (Int128(maxDuration.denominator) * Int128(timebase.numerator))
        } else {
            durationLimit = nil
            durationLimitTicks = nil
        }
        frameLimit = maxFrames == 0 || (vtCompat && maxDuration > .zero) ? nil : maxFrames
        self.placement = placement
    }

    /// The keyint that keeps a duration limit at a constant frame duration: frame k must be a keyframe when
    /// PTS(k+1) − PTS(K) > T with K the last keyframe, i.e. (k − K + 1)·d > T, i.e. k − K ≥ ⌊T ÷ d⌋, which is x264's
    /// keyint rule (an IDR when the distance from the last one reaches keyint); at least 1 (T < d: every frame).
    /// Exact: 1.5 s at 25 fps is ⌊37.5⌋ = 37, 1.5 s at 15 fps ⌊22.5⌋ = 22, 2 s at 30000/1001 fps ⌊59.94⌋ = 59.
    /// - Returns: nil when the limit is 0 (none), or when ⌊T ÷ d⌋ does not fit 64 bits.
    public static func durationKeyint(maxDuration: Rational, frameDuration: Rational) -> Int? {
        guard maxDuration > .zero, frameDuration > .zero else { return nil }
        // T / d = (T.num · d.den) / (T.den · d.num), both products positive and below 2^126.
        let q = (Int128(maxDuration.numerator) * Int128(frameDuration.denominator))
            / (Int128(maxDuration.denominator) * Int128(frameDuration.numerator))
        return Int(exactly: max(1, q))
    }

    /// Whether a span of `ticks` (whole ticks) lasts longer than ``durationLimit``; false without a limit.
    func exceedsDuration(_ ticks: Int128) -> Bool {
        guard let limit = durationLimitTicks else { return false }
        return ticks > limit
    }

    // MARK: Stepping, frame by frame

    /// Whether frame `frame` must be a keyframe, given the last keyframe before it: the rule for an encoder loop that
    /// walks the frames in display order and knows the last actual IDR (forced or placed by x264).
    ///
    /// - Parameters:
    ///   - frame: the frame's display index (0 for the first frame).
    ///   - keyframe: the display index of the last keyframe before `frame` (ignored for frame 0).
    ///   - keyframePTS: that keyframe's PTS, in ticks.
    ///   - nextPTS: PTS(frame + 1) in ticks; for the clip's last frame, the stream's end: its PTS + one nominal frame
    ///     duration (``endPTS(lastPTS:nominalFrameTicks:)``).
    /// - Returns: nil when the frame need not be a keyframe; else why it must be. When both limits fall on the same
    ///   frame the reason is `.frameLimit`. A frame at or before `keyframe` returns nil (`.firstFrame` for frame 0).
    ///   Never traps: differences are taken in 128 bits, and a decreasing PTS simply forces nothing.
    public func keyframeReason(frame: Int, afterKeyframe keyframe: Int, keyframePTS: Int64, nextPTS: Int64) -> Reason? {
        if frame == 0 { return .firstFrame }
        guard frame > keyframe else { return nil }
        if let n = frameLimit, frame - keyframe >= n { return .frameLimit }
        if exceedsDuration(Int128(nextPTS) - Int128(keyframePTS)) { return .durationLimit }
        return nil
    }

    /// The stream's end in ticks: the last frame's PTS + one nominal frame duration.
    /// - Throws: `LabError` `.usage` for a duration < 1 tick, `.data` when the sum leaves Int64.
    public static func endPTS(lastPTS: Int64, nominalFrameTicks: Int64) throws -> Int64 {
        guard nominalFrameTicks >= 1 else {
            throw LabError.usage("nominal frame duration \(nominalFrameTicks) ticks: must be at least 1 tick")
        }
        let (end, overflow) = lastPTS.addingReportingOverflow(nominalFrameTicks)
        guard !overflow else {
            throw LabError.data("the last PTS \(lastPTS) + one frame of \(nominalFrameTicks) ticks does not fit 64 bits")
        }
        return end
    }
}

extension KeyframeRule {
    /// The rule a run keeps (VideoToolbox's keyframe limits as given, `limits`, in the plan's timebase), with how the
    /// encode keeps it: the encoder's keyint, or IDRs the lab forces (``Placement``). An encoder keyint of
    /// ``x264KeyintInfinite`` or more is none. An x264 `--keyint` above the frame limit is refused by the mapping
    /// (``EncodeSettings/resolved(dataRateLimitsVBV:keyframeTiming:)``); a smaller one is kept, and the check still
    /// counts against the limit given.
    /// - Parameters:
    ///   - limits: the run's limits (``EncodeSettings/resolvedKeyframeRule``), nil without any: no rule.
    ///   - plan: the run's plan, whose timebase the rule counts in; nil for the CLI's constant rate of `nominalRate`.
    ///   - nominalRate: the clip's rate, frames per second.
    ///   - encoderKeyint: the keyint the encoder settled on.
    ///   - openGOP, intraRefresh: whether the encoder settled on open GOPs or periodic intra refresh, whose
    ///     keyframes after the first are not IDR pictures.
    ///   - label: the run's grid label, named in the message ("" for none).
    /// - Throws: `.usage` "contradictory settings" for open GOPs or intra refresh with a rule; the rule's own errors.
    public static func forRun(_ limits: VTKeyframeLimits?, plan: TimestampPlan?, nominalRate: Rational, encoderKeyint: Int,
                              openGOP: Bool, intraRefresh: Bool, label: String) throws -> KeyframeRule? {
        guard let k = limits else { return nil }
        if openGOP || intraRefresh {
            let what = openGOP ? "open GOPs (b_open_gop)" : "periodic intra refresh (b_intra_refresh)"
            let prefix = label.isEmpty ? "" : "run '\(label)': "
            throw LabError.usage("\(prefix)contradictory settings: x264 settled on \(what) with the keyframe rule (MaxKeyFrameInterval \(k.maxFrames), MaxKeyFrameIntervalDuration \(VideoToolboxSettings.text(k.maxDuration))), which counts from IDR pictures")
        }
        let timebase = try plan?.timebase ?? nominalRate.reciprocal
        let keyint = encoderKeyint < x264KeyintInfinite ? encoderKeyint : nil
        return try KeyframeRule(maxFrames: k.maxFrames, maxDuration: k.maxDuration, timebase: timebase, vtCompat: k.vtCompat,
                                placement: k.forcesIDRs ? .forced(x264Keyint: keyint) : .keyint(x264Keyint: keyint))
    }
}

/// The timestamps stage's keyframe-forcing step: as the pictures go to the encoder in display order, it decides the
/// frame type each is forced to (``TimedPicture/forcedType``), so that the run keeps its ``KeyframeRule`` when the lab
/// forces IDRs (``KeyframeRule/Placement/forced(x264Keyint:)``), counting from every keyframe the encoder made: frame
/// 0, the encoder's keyint counted from the last IDR, and the frames forced here. One step, which later issues extend.
///
/// The types it forces are decided during the encode and never hashed into a run key (the key holds how the rule is
/// kept, ``KeyframeRule/placement``, not where its IDRs fall).
///
/// When the encoder's keyint carries the rule (``KeyframeRule/Placement/keyint(x264Keyint:)``) it forces nothing
/// (x264 restarts its count at its own scene cuts). The rule needs the next frame's PTS, so the caller reads frames one
/// ahead; from the first PTS that is not after its predecessor (the duration since the last keyframe is then
/// undefined) no IDR is forced, and ``stopped`` says why.
public struct KeyframeForcing {
    /// The run's rule, nil without one.
    public let rule: KeyframeRule?
    /// One frame at the clip's nominal rate, in ticks (≥ 1): the last frame's duration.
    let nominalFrameTicks: Int64
    /// The encoder's keyint, which places IDRs the step counts (nil: none), while the step forces.
    private var forcing: (encoderKeyint: Int?, active: Bool)
    private var lastKeyframe = 0
    private var keyframePTS: Int64 = 0
    private var previousPTS: Int64?
    /// The display indices forced to IDR, in order.
    public private(set) var forced: [Int] = []
    /// Why forcing stopped (the first PTS that is not after its predecessor), nil while it goes on.
    public private(set) var stopped: String?

    /// A step for one run.
    /// - Parameter nominalFrameTicks: one frame at the clip's nominal rate, in ticks (≥ 1).
    public init(rule: KeyframeRule?, nominalFrameTicks: Int64) {
        self.rule = rule
        self.nominalFrameTicks = nominalFrameTicks
        if case .forced(let k)? = rule?.placement { forcing = (k, true) } else { forcing = (nil, false) }
    }

    /// Decides the forced type of `picture`, the next picture in display order (from frame 0).
    /// - Parameter nextPTS: the following picture's PTS, nil for the clip's last picture.
    /// - Throws: `.data` when the stream's end (the last PTS + one nominal frame) does not fit 64 bits.
    public mutating func force(_ picture: inout TimedPicture, nextPTS: Int64?) throws {
        let index = picture.index, pts = picture.pts
        defer { previousPTS = pts }
        if index == 0 { keyframePTS = pts }
        guard let rule, forcing.active else { return }
        if index > 0, let previous = previousPTS, pts <= previous {
            stopped = "PTS of frame \(index) (\(pts)) is not after frame \(index - 1)'s (\(previous))"
        } else if let n = nextPTS, n <= pts {
            stopped = "PTS of frame \(index + 1) (\(n)) is not after frame \(index)'s (\(pts))"
        }
        if stopped != nil {
            forcing.active = false
        } else if index > 0, let k = forcing.encoderKeyint, index - lastKeyframe >= k {
            // The encoder's keyint places this IDR itself (no scene cuts: scenecut 0).
            lastKeyframe = index
            keyframePTS = pts
        } else {
            let next = try nextPTS ?? KeyframeRule.endPTS(lastPTS: pts, nominalFrameTicks: nominalFrameTicks)
            switch rule.keyframeReason(frame: index, afterKeyframe: lastKeyframe, keyframePTS: keyframePTS, nextPTS: next) {
            case .frameLimit?, .durationLimit?:
                picture.forcedType = .idr
                forced.append(index)
                lastKeyframe = index
                keyframePTS = pts
            case .firstFrame?, nil:
                break
            }
        }
    }

    /// How the run's frames are timed for the keyframe mapping (``VTKeyframeTiming``): x264's keyint carries
    /// MaxKeyFrameIntervalDuration at the CLI's constant rate (every frame one nominal frame, the end one frame after
    /// the last), not under the timestamps stage's times.
    /// - Parameters:
    ///   - plan: the run's plan, nil for the CLI's constant rate of `nominalRate`.
    ///   - nominalRate: the clip's rate, frames per second.
    public static func timing(plan: TimestampPlan?, nominalRate: Rational) throws -> VTKeyframeTiming {
        plan?.stages == nil ? .constantRate(frameDuration: try (plan?.frameRate ?? nominalRate).reciprocal) : .variableRate
    }
}
