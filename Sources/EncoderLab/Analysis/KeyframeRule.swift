import H264

/// The keyframe rule's checks (``KeyframeRule`` is the timestamps stage's: its keyframe-forcing step applies it while
/// encoding): the keyframes a clip's rule expects, and a stream's keyframes checked against it (issue 10, item 2).
extension KeyframeRule {
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
