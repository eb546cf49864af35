import H264

/// VideoToolbox's keyframe limits on x264: where the lab must place IDR pictures, and a checker for the keyframes a
/// stream has (issue 10, item 2).
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

    // MARK: The whole clip

    /// The keyframe indices the rule expects, counted from every IDR in the stream: walking the frames in display
    /// order, frame 0, each IDR the encoder placed on its own (x264's keyint or scene cuts), and each frame the frame
    /// limit or the duration limit makes a keyframe (``keyframeReason(frame:afterKeyframe:keyframePTS:nextPTS:)``)
    /// counted from the last IDR of the stream or expected keyframe before it. A forced IDR restarts the counts
    /// like any IDR but is expected only when the rule needs it there, so a forced IDR the rule did not need makes
    /// the expected keyframes differ from the stream's even without a violation.
    ///
    /// - Parameters:
    ///   - pts: each input frame's PTS in display order, in ticks of ``timebase``, strictly increasing.
    ///   - nominalFrameTicks: one nominal frame duration in ticks (≥ 1): the last frame's duration.
    ///   - streamKeyframes: the stream's IDRs, display indices, whatever placed them. Default none.
    ///   - forced: those of `streamKeyframes` the lab forced. Default none.
    /// - Returns: display indices, strictly increasing, starting with 0; empty for an empty clip.
    /// - Throws: `LabError` `.data` for a PTS not after the previous one or a keyframe outside the clip,
    ///   naming the frame; the errors of ``endPTS(lastPTS:nominalFrameTicks:)``.
    public func expectedKeyframes(pts: [Int64], nominalFrameTicks: Int64, streamKeyframes: [Int] = [],
                                  forced: [Int] = []) throws -> [Int] {
        guard let last = pts.last else { return [] }
        try Self.checkIncreasing(pts)
        let end = try Self.endPTS(lastPTS: last, nominalFrameTicks: nominalFrameTicks)
        for k in streamKeyframes + forced where !pts.indices.contains(k) {
            throw LabError.data("keyframe \(k) is outside the clip's frames 0..<\(pts.count)")
        }
        let inStream = Set(streamKeyframes), wasForced = Set(forced)
        var keyframes: [Int] = []
        var lastKeyframe = 0
        for k in pts.indices {
            let next = k + 1 < pts.count ? pts[k + 1] : end
            let needed = keyframeReason(frame: k, afterKeyframe: lastKeyframe, keyframePTS: pts[lastKeyframe], nextPTS: next) != nil
            if needed || (inStream.contains(k) && !wasForced.contains(k)) {
                keyframes.append(k)
            }
            if needed || inStream.contains(k) { lastKeyframe = k }
        }
        return keyframes
    }

    /// ``expectedKeyframes(pts:nominalFrameTicks:encoderKeyframes:)`` for limits given as values.
    /// - Parameters: as ``init(maxFrames:maxDuration:timebase:vtCompat:)`` and
    ///   ``expectedKeyframes(pts:nominalFrameTicks:encoderKeyframes:)``.
    /// - Throws: the errors of both.
    public static func expectedKeyframes(pts: [Int64], timebase: Rational, maxFrames: Int, maxDuration: Rational,
                                         nominalFrameTicks: Int64, vtCompat: Bool = false) throws -> [Int] {
        try KeyframeRule(maxFrames: maxFrames, maxDuration: maxDuration, timebase: timebase, vtCompat: vtCompat)
            .expectedKeyframes(pts: pts, nominalFrameTicks: nominalFrameTicks)
    }

    // MARK: Checking a stream's keyframes

    /// One broken limit.
    public struct Violation: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// A stretch of more than ``KeyframeRule/frameLimit`` frames from one keyframe to the next (or to the end).
            case frameLimit
            /// A stretch lasting more than ``KeyframeRule/durationLimit`` from one keyframe to the next (or to the
            /// end), one a keyframe placed in it could have prevented: it is still longer than the limit without the
            /// gaps of its stalls (a stretch longer only because of a freeze is that `.stall` alone, reported once).
            case durationLimit
            /// Two adjacent frames (or the last frame and the stream's end) more than ``KeyframeRule/durationLimit``
            /// apart: a freeze or a timestamp jump, which no keyframe could have prevented. Reported in its own
            /// class, whether or not the frames around it are keyframes; a stretch that is only this gap is not also
            /// a `.durationLimit`.
            case stall
        }
        public var kind: Kind
        /// The stretch's first frame: a keyframe, frame 0 when the stream does not start with one, or for a stall
        /// the frame before the gap. Display index.
        public var startFrame: Int
        /// The frame ending the stretch: the next keyframe, the frame after the gap, or the frame count (the
        /// stream's end). Display index.
        public var endFrame: Int
        /// The stretch's length in seconds, PTS(endFrame) − PTS(startFrame) (the end PTS for the frame count), exact.
        public var durationSeconds: Rational
        /// The stretch's length in frames, endFrame − startFrame.
        public var frames: Int { endFrame - startFrame }

        public init(kind: Kind, startFrame: Int, endFrame: Int, durationSeconds: Rational) {
            self.kind = kind
            self.startFrame = startFrame
            self.endFrame = endFrame
            self.durationSeconds = durationSeconds
        }
    }

    /// What ``violations(keyframes:pts:endPTS:)`` found.
    public struct Check: Sendable, Equatable {
        /// Every broken limit, by start frame; a stretch that breaks both limits appears twice (`.frameLimit` first).
        public var violations: [Violation]
        /// The longest stretch from a keyframe to the next (or to the end), in frames; 0 for an empty stream.
        public var largestGOPFrames: Int
        /// The longest stretch in seconds, exact (not necessarily the same stretch); 0 for an empty stream.
        public var largestGOPSeconds: Rational
    }

    /// Checks a stream's keyframes against the limits.
    ///
    /// The stream is cut into stretches at each keyframe and at its end (`endPTS`); frames before the first keyframe,
    /// when frame 0 is not one, form a stretch from frame 0 (else a stream without a single IDR passes). A stretch of
    /// more than ``frameLimit`` frames is a violation, and so is one lasting more than ``durationLimit`` even
    /// without the gaps of its stalls (exactly the limit passes); each pair of adjacent frames (the last frame and
    /// the end included) more than ``durationLimit`` apart is a `.stall`, so one freeze is one violation.
    ///
    /// - Parameters:
    ///   - keyframes: the stream's IDR pictures as display indices, strictly increasing, each in `pts.indices`.
    ///   - pts: each frame's PTS in display order, ticks of ``timebase``, strictly increasing.
    ///   - endPTS: the stream's end in ticks, after the last PTS: the last PTS + the last frame's duration.
    /// - Throws: `LabError` `.data` for a PTS not after the previous one, an end not after the last PTS, a keyframe
    ///   index out of order or outside the stream, or a duration that does not fit exact 64-bit seconds.
    public func violations(keyframes: [Int], pts: [Int64], endPTS: Int64) throws -> Check {
        try Self.checkIncreasing(pts)
        for (i, k) in keyframes.enumerated() {
            guard pts.indices.contains(k) else {
                throw LabError.data("keyframe \(k) is outside the stream's frames 0..<\(pts.count)")
            }
            guard i == 0 || k > keyframes[i - 1] else {
                throw LabError.data("keyframe \(k) follows keyframe \(keyframes[i - 1]): keyframes must be strictly increasing display indices")
            }
        }
        guard let lastPTS = pts.last else {
            return Check(violations: [], largestGOPFrames: 0, largestGOPSeconds: .zero)
        }
        guard endPTS > lastPTS else {
            throw LabError.data("end PTS \(endPTS) is not after the last frame's PTS \(lastPTS)")
        }
        let n = pts.count
        func time(_ i: Int) -> Int128 { Int128(i < n ? pts[i] : endPTS) }
        func seconds(_ ticks: Int128) throws -> Rational {
            guard let t = Int64(exactly: ticks), let s = try? timebase.times(t) else {
                throw LabError.data("a span of \(ticks) ticks of \(timebase) s does not fit exact 64-bit seconds")
            }
            return s
        }
        // The gaps longer than T (stalls) between frames a and b, summed.
        func stallTicks(_ a: Int, _ b: Int) -> Int128 {
            var sum: Int128 = 0
            for i in a..<b where exceedsDuration(time(i + 1) - time(i)) { sum += time(i + 1) - time(i) }
            return sum
        }
        var bounds = keyframes.first == 0 ? keyframes : [0] + keyframes
        bounds.append(n)
        var found: [Violation] = []
        var largestFrames = 0
        var largestTicks: Int128 = 0
        for (a, b) in zip(bounds, bounds.dropFirst()) {
            let ticks = time(b) - time(a)
            largestFrames = max(largestFrames, b - a)
            largestTicks = max(largestTicks, ticks)
            if let limit = frameLimit, b - a > limit {
                found.append(Violation(kind: .frameLimit, startFrame: a, endFrame: b, durationSeconds: try seconds(ticks)))
            }
            // A stretch that is longer than T only by its stalls' gaps is the stalls alone (each a violation of its
            // own below): one freeze is reported once.
            if b - a > 1 && exceedsDuration(ticks) && exceedsDuration(ticks - stallTicks(a, b)) {
                found.append(Violation(kind: .durationLimit, startFrame: a, endFrame: b, durationSeconds: try seconds(ticks)))
            }
        }
        if durationLimitTicks != nil {
            for i in 0..<n where exceedsDuration(time(i + 1) - time(i)) {
                found.append(Violation(kind: .stall, startFrame: i, endFrame: i + 1, durationSeconds: try seconds(time(i + 1) - time(i))))
            }
        }
        func rank(_ kind: Violation.Kind) -> Int {
            switch kind {
            case .frameLimit: return 0
            case .durationLimit: return 1
            case .stall: return 2
            }
        }
        found.sort { ($0.startFrame, rank($0.kind)) < ($1.startFrame, rank($1.kind)) }
        return Check(violations: found, largestGOPFrames: largestFrames, largestGOPSeconds: try seconds(largestTicks))
    }

    /// ``violations(keyframes:pts:endPTS:)`` for limits given as values.
    /// - Throws: the errors of ``init(maxFrames:maxDuration:timebase:vtCompat:)`` and of the check.
    public static func violations(keyframes: [Int], pts: [Int64], timebase: Rational, maxFrames: Int,
                                  maxDuration: Rational, endPTS: Int64, vtCompat: Bool = false) throws -> Check {
        try KeyframeRule(maxFrames: maxFrames, maxDuration: maxDuration, timebase: timebase, vtCompat: vtCompat)
            .violations(keyframes: keyframes, pts: pts, endPTS: endPTS)
    }

    /// Throws `.data` naming the first PTS that is not after its predecessor.
    static func checkIncreasing(_ pts: [Int64]) throws {
        for k in pts.indices.dropFirst() where pts[k] <= pts[k - 1] {
            throw LabError.data("PTS of frame \(k) (\(pts[k])) is not after frame \(k - 1)'s (\(pts[k - 1])): display-order PTS must increase")
        }
    }
}

/// A run's keyframes under its ``KeyframeRule`` (tables `keyframe_analysis` and `keyframe_violations`).
public struct KeyframeAnalysis: Sendable, Equatable {
    public var rule: KeyframeRule
    /// The display indices the rule expects, counted from every IDR in the stream
    /// (``KeyframeRule/expectedKeyframes(pts:nominalFrameTicks:streamKeyframes:forced:)``): frame 0, the IDRs x264
    /// placed itself (its keyint, its scene cuts), and each frame a limit makes a keyframe. It differs from
    /// ``actual`` only where a keyframe is missing (a violation) or the lab forced an IDR the rule did not need.
    public var expected: [Int]
    /// The display indices of the stream's IDR pictures.
    public var actual: [Int]
    /// The display indices the lab forced to IDR while encoding: none when x264's keyint carries the rule
    /// (``KeyframeRule/Placement/keyint(x264Keyint:)``).
    public var forced: [Int]
    /// The stream's keyframes checked against the rule.
    public var check: KeyframeRule.Check

    public init(rule: KeyframeRule, expected: [Int], actual: [Int], forced: [Int], check: KeyframeRule.Check) {
        self.rule = rule; self.expected = expected; self.actual = actual; self.forced = forced; self.check = check
    }

    /// A warning when the stream's IDRs are not the expected ones (nil when they are): the keyframes missing (each
    /// part of a violation) and the IDRs forced where the rule did not need one.
    public var mismatchWarning: String? {
        guard expected != actual else { return nil }
        let missing = expected.filter { !actual.contains($0) }, unneeded = actual.filter { !expected.contains($0) }
        var parts: [String] = []
        if !missing.isEmpty { parts.append("no IDR where the rule needs one at \(missing.map(String.init).joined(separator: ", "))") }
        if !unneeded.isEmpty { parts.append("IDRs forced where the rule needs none at \(unneeded.map(String.init).joined(separator: ", "))") }
        return "keyframe rule: the stream's IDRs are not the expected ones (display order): \(parts.joined(separator: "; "))"
    }
}
