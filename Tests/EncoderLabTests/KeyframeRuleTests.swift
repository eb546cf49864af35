import H264
import Testing
@testable import EncoderLab

/// VideoToolbox's keyframe limits (issue 10, item 2): expected keyframe indices worked out by hand in each test's
/// comment, the checker on hand-made keyframe lists, and a seeded property check against the rule written out with
/// exact rationals.
@Suite("keyframe rule: MaxKeyFrameInterval and MaxKeyFrameIntervalDuration, expected and checked")
struct KeyframeRuleTests {
    typealias Violation = KeyframeRule.Violation

    static func r(_ n: Int64, _ d: Int64) -> Rational { try! Rational(n, d) }

    /// 15 fps, timebase 1/15 s, PTS = index; T = 1.5 s is 22.5 ticks. Frame k is forced when PTS(k+1) − PTS(last)
    /// > 22.5, i.e. k + 1 − last ≥ 23, i.e. k = last + 22: 0, 22, 44 (gaps of 22/15 = 1.467 s). With 66 frames the
    /// end is at 66: 66 − 44 = 22 ticks, no more; with 67 frames the end is 67: 23 ticks > 22.5, so frame 66 too.
    @Test("15 fps, T = 1.5 s: 0, 22, 44; the stream's end forces the last frame when it would overrun")
    func fifteenFPSDuration() throws {
        let tb = Self.r(1, 15)
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: Self.r(3, 2), timebase: tb)
        #expect(try rule.expectedKeyframes(pts: Array(0..<66), nominalFrameTicks: 1) == [0, 22, 44])
        #expect(try rule.expectedKeyframes(pts: Array(0..<67), nominalFrameTicks: 1) == [0, 22, 44, 66])
        let check = try rule.violations(keyframes: [0, 22, 44], pts: Array(0..<66), endPTS: 66)
        #expect(check.violations == [])
        #expect(check.largestGOPFrames == 22)
        #expect(check.largestGOPSeconds == Self.r(22, 15))
        // The static form with the limits as values gives the same list.
        #expect(try KeyframeRule.expectedKeyframes(pts: Array(0..<66), timebase: tb, maxFrames: 0, maxDuration: Self.r(3, 2),
                                                   nominalFrameTicks: 1) == [0, 22, 44])
    }

    /// N = 30, T = 3.5 s at 15 fps: the time rule alone would give k = last + 52 (k + 1 − last > 52.5); the frame
    /// limit comes first: 0, 30, 60, 90 (100 frames; the end stretch 90..<100 is 10 frames).
    /// vt-compat applies the time limit alone: 0, 52, 104 (120 frames; end stretch 104..<120, 16 frames).
    @Test("N = 30, T = 3.5 s at 15 fps: 0, 30, 60, 90; vt-compat: 0, 52, 104")
    func frameLimitFirstAndVTCompat() throws {
        let tb = Self.r(1, 15)
        let documented = try KeyframeRule(maxFrames: 30, maxDuration: Self.r(7, 2), timebase: tb)
        #expect(documented.frameLimit == 30)
        #expect(try documented.expectedKeyframes(pts: Array(0..<100), nominalFrameTicks: 1) == [0, 30, 60, 90])

        let compat = try KeyframeRule(maxFrames: 30, maxDuration: Self.r(7, 2), timebase: tb, vtCompat: true)
        #expect(compat.frameLimit == nil)
        #expect(compat.durationLimit == Self.r(7, 2))
        #expect(try compat.expectedKeyframes(pts: Array(0..<120), nominalFrameTicks: 1) == [0, 52, 104])
        #expect(try KeyframeRule.expectedKeyframes(pts: Array(0..<120), timebase: tb, maxFrames: 30, maxDuration: Self.r(7, 2),
                                                   nominalFrameTicks: 1, vtCompat: true) == [0, 52, 104])
        // The reported 3.5 s GOPs break the documented rule's frame limit (52 > 30 frames), twice; 52/15 s < 3.5 s.
        let check = try documented.violations(keyframes: [0, 52, 104], pts: Array(0..<120), endPTS: 120)
        #expect(check.violations == [Violation(kind: .frameLimit, startFrame: 0, endFrame: 52, durationSeconds: Self.r(52, 15)),
                                     Violation(kind: .frameLimit, startFrame: 52, endFrame: 104, durationSeconds: Self.r(52, 15))])
        #expect(check.largestGOPFrames == 52 && check.largestGOPSeconds == Self.r(52, 15))
        // and pass vt-compat's.
        #expect(try compat.violations(keyframes: [0, 52, 104], pts: Array(0..<120), endPTS: 120).violations == [])
        // vt-compat with one limit set keeps it: N = 30 alone, and T alone has no frame limit (the encoder chooses).
        #expect(try KeyframeRule(maxFrames: 30, maxDuration: .zero, timebase: tb, vtCompat: true).frameLimit == 30)
        #expect(try KeyframeRule(maxFrames: 0, maxDuration: Self.r(7, 2), timebase: tb, vtCompat: true).frameLimit == nil)
    }

    /// 30 fps (timebase 1/30), frames 0...39 at PTS 0...39, a 1.7 s stall (51 ticks), then frames 40...99 at PTS
    /// 90...149; end 150. T = 1.5 s = 45 ticks.
    /// k ≤ 38: PTS(k+1) ≤ 39 ≤ 45. k = 39: PTS(40) − 0 = 90 > 45: forced. k = 40: PTS(41) − PTS(39) = 91 − 39 = 52
    /// > 45: forced. Then PTS(k) = k + 50 for k ≥ 40: forced when (k + 51) − 90 > 45, k = 85 (its gap from 40 is
    /// 45 ticks, exactly 1.5 s). The end: 150 − 135 = 15. Expected 0, 39, 40, 85; the stall 39 → 40 (1.7 s) is the
    /// one violation, in its own class. x264 alone (only frame 0) also breaks the duration limit: 0 → end is 150
    /// ticks = 5 s.
    @Test("variable rate with a 1.7 s stall, T = 1.5 s: 0, 39, 40, 85; the stall in its own class")
    func stall() throws {
        let pts: [Int64] = Array(0...39) + Array(90...149)
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: Self.r(3, 2), timebase: Self.r(1, 30))
        let expected = try rule.expectedKeyframes(pts: pts, nominalFrameTicks: 1)
        #expect(expected == [0, 39, 40, 85])
        let check = try rule.violations(keyframes: expected, pts: pts, endPTS: 150)
        #expect(check.violations == [Violation(kind: .stall, startFrame: 39, endFrame: 40, durationSeconds: Self.r(17, 10))])
        // Stretches: 0→39 (39 frames, 1.3 s), 39→40 (1, 1.7 s), 40→85 (45, 1.5 s), 85→end (15, 0.5 s).
        #expect(check.largestGOPFrames == 45)
        #expect(check.largestGOPSeconds == Self.r(17, 10))

        let alone = try rule.violations(keyframes: [0], pts: pts, endPTS: 150)
        #expect(alone.violations == [Violation(kind: .durationLimit, startFrame: 0, endFrame: 100, durationSeconds: Rational(5)),
                                     Violation(kind: .stall, startFrame: 39, endFrame: 40, durationSeconds: Self.r(17, 10))])
        #expect(alone.largestGOPFrames == 100 && alone.largestGOPSeconds == Rational(5))
    }

    /// 10 frames at 10 fps (PTS 0...9, timebase 1/10) whose last frame lasts 20 ticks (2 s); T = 1 s = 10 ticks.
    /// k ≤ 8: PTS(k+1) ≤ 9. k = 9: the end, 9 + 20 = 29 > 10: forced. Expected 0, 9; the last frame's 2 s to the end
    /// is a stall.
    @Test("a last frame longer than T: forced, and its stretch to the end is a stall")
    func stallAtTheEnd() throws {
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: .one, timebase: Self.r(1, 10))
        let pts: [Int64] = Array(0...9)
        #expect(try rule.expectedKeyframes(pts: pts, nominalFrameTicks: 20) == [0, 9])
        #expect(try rule.violations(keyframes: [0, 9], pts: pts, endPTS: 29).violations
                == [Violation(kind: .stall, startFrame: 9, endFrame: 10, durationSeconds: Rational(2))])
    }

    /// N = 0 is Apple's "the encoder chooses": no frame limit (x264's own keyint 250 places IDRs the rule counts
    /// from like any other). T = 0 sets no time limit: a 1000-tick jump after frame 299 forces nothing and is no stall.
    @Test("N = 0 is no frame limit (the encoder chooses); T = 0 is no time limit")
    func defaults() throws {
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: .zero, timebase: Self.r(1, 15))
        #expect(rule.frameLimit == nil)
        #expect(rule.durationLimit == nil)
        let pts: [Int64] = Array(0..<300) + Array(1300..<1600)
        #expect(try rule.expectedKeyframes(pts: pts, nominalFrameTicks: 1) == [0])
        #expect(try rule.expectedKeyframes(pts: pts, nominalFrameTicks: 1, streamKeyframes: [0, 250, 500]) == [0, 250, 500])
        let check = try rule.violations(keyframes: [0, 250, 500], pts: pts, endPTS: 1600)
        #expect(check.violations == [])
        // Stretches: 0→250 (250 frames, 250 ticks), 250→500 (frames 250...499, PTS 250 → 1500: 1250 ticks), 500→end
        // (100 frames, 1600 − 1500 = 100 ticks).
        #expect(check.largestGOPFrames == 250)
        #expect(check.largestGOPSeconds == Self.r(1250, 15))
        #expect(try KeyframeRule(maxFrames: 250, maxDuration: .zero, timebase: Self.r(1, 15)).frameLimit == 250)
    }

    /// N = 30, T = 2 s at 15 fps (30 ticks): stretches of exactly 30 frames and exactly 2 s pass, the end stretch
    /// included (60 → 90). One frame more (keyframes 0, 31 in 62 frames) breaks both limits in both stretches:
    /// 0 → 31 and 31 → end 62, each 31 frames and 31/15 s.
    @Test("a stretch of exactly N frames or exactly T seconds passes; one frame more fails both")
    func exactLimitsPass() throws {
        let rule = try KeyframeRule(maxFrames: 30, maxDuration: Rational(2), timebase: Self.r(1, 15))
        let pass = try rule.violations(keyframes: [0, 30, 60], pts: Array(0..<90), endPTS: 90)
        #expect(pass.violations == [])
        #expect(pass.largestGOPFrames == 30 && pass.largestGOPSeconds == Rational(2))
        #expect(try rule.expectedKeyframes(pts: Array(0..<90), nominalFrameTicks: 1) == [0, 30, 60])

        let over = Self.r(31, 15)
        #expect(try rule.violations(keyframes: [0, 31], pts: Array(0..<62), endPTS: 62).violations == [
            Violation(kind: .frameLimit, startFrame: 0, endFrame: 31, durationSeconds: over),
            Violation(kind: .durationLimit, startFrame: 0, endFrame: 31, durationSeconds: over),
            Violation(kind: .frameLimit, startFrame: 31, endFrame: 62, durationSeconds: over),
            Violation(kind: .durationLimit, startFrame: 31, endFrame: 62, durationSeconds: over),
        ])
    }

    /// Exact at a timebase of 1/90000 s and 29.97 fps (3003 ticks a frame). T = 1 s = 90000 ticks: forced when
    /// (k + 1 − last) · 3003 > 90000, i.e. k + 1 − last ≥ 30 (29 · 3003 = 87087, 30 · 3003 = 90090): 0, 29, 58.
    /// T = 1.001 s = 90090 ticks: 30 frames last exactly T and pass, so k + 1 − last ≥ 31: 0, 30, 60.
    @Test("exact at 1/90000 s and 3003-tick frames: T = 1 s gives 0, 29, 58; T = 1.001 s gives 0, 30, 60")
    func exactAtNTSCRates() throws {
        let tb = Self.r(1, 90_000)
        let pts = (0..<61).map { Int64($0) * 3003 }
        let oneSecond = try KeyframeRule(maxFrames: 0, maxDuration: .one, timebase: tb)
        #expect(try oneSecond.expectedKeyframes(pts: pts, nominalFrameTicks: 3003) == [0, 29, 58])
        let oneFrameMore = try KeyframeRule(maxFrames: 0, maxDuration: Self.r(1001, 1000), timebase: tb)
        #expect(try oneFrameMore.expectedKeyframes(pts: pts, nominalFrameTicks: 3003) == [0, 30, 60])
        #expect(try oneFrameMore.violations(keyframes: [0, 30, 60], pts: pts, endPTS: 61 * 3003).largestGOPSeconds == Self.r(1001, 1000))
    }

    /// N = 30, keyframes 0 and 30 in 61 frames: the end stretch 30 → 61 has 31 frames, a violation; in 60 frames it
    /// has 30 and passes.
    @Test("the stretch from the last keyframe to the end counts")
    func endStretchCounts() throws {
        let rule = try KeyframeRule(maxFrames: 30, maxDuration: .zero, timebase: Self.r(1, 15))
        #expect(try rule.violations(keyframes: [0, 30], pts: Array(0..<61), endPTS: 61).violations
                == [Violation(kind: .frameLimit, startFrame: 30, endFrame: 61, durationSeconds: Self.r(31, 15))])
        #expect(try rule.violations(keyframes: [0, 30], pts: Array(0..<60), endPTS: 60).violations == [])
    }

    /// One IDR at frame 0 over 600 frames at 15 fps (40 s), N = 250, T = 2 s: the one stretch 0 → end breaks
    /// both. A stream that does not start with an IDR: its first frames form a stretch from frame 0.
    @Test("a single IDR at 0 over a long clip fails; frames before the first IDR form a stretch")
    func singleIDR() throws {
        let rule = try KeyframeRule(maxFrames: 250, maxDuration: Rational(2), timebase: Self.r(1, 15))
        let check = try rule.violations(keyframes: [0], pts: Array(0..<600), endPTS: 600)
        #expect(check.violations == [Violation(kind: .frameLimit, startFrame: 0, endFrame: 600, durationSeconds: Rational(40)),
                                     Violation(kind: .durationLimit, startFrame: 0, endFrame: 600, durationSeconds: Rational(40))])
        #expect(check.largestGOPFrames == 600 && check.largestGOPSeconds == Rational(40))
        // The first IDR at frame 31 (T = 30 ticks): the leading stretch 0 → 31 lasts 31/15 s and fails; 31 → 40 passes.
        let late = try rule.violations(keyframes: [31], pts: Array(0..<40), endPTS: 40)
        #expect(late.violations == [Violation(kind: .durationLimit, startFrame: 0, endFrame: 31, durationSeconds: Self.r(31, 15))])
        // No IDR at all.
        #expect(try rule.violations(keyframes: [], pts: Array(0..<10), endPTS: 10).largestGOPFrames == 10)
    }

    /// The stepping form as an encoder loop uses it, with an IDR x264 placed itself at frame 10 (a scene cut), 15 fps,
    /// T = 1.5 s: the cut restarts the count, so 10 + 22 = 32, then 54; the end (60 − 54 = 6 ticks) needs nothing.
    @Test("stepping frame by frame: a scene-cut IDR restarts both counts")
    func steppingWithSceneCut() throws {
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: Self.r(3, 2), timebase: Self.r(1, 15))
        let pts: [Int64] = Array(0..<60)
        let end = try KeyframeRule.endPTS(lastPTS: 59, nominalFrameTicks: 1)
        #expect(end == 60)
        var keyframes: [Int] = []
        var reasons: [KeyframeRule.Reason] = []
        var last = 0
        for k in pts.indices {
            let next = k + 1 < pts.count ? pts[k + 1] : end
            let reason = k == 10 ? nil : rule.keyframeReason(frame: k, afterKeyframe: last, keyframePTS: pts[last], nextPTS: next)
            if k == 10 || reason != nil {
                keyframes.append(k)
                if let reason { reasons.append(reason) }
                last = k
            }
        }
        #expect(keyframes == [0, 10, 32, 54])
        #expect(reasons == [.firstFrame, .durationLimit, .durationLimit])
        #expect(try rule.expectedKeyframes(pts: pts, nominalFrameTicks: 1, streamKeyframes: [10]) == [0, 10, 32, 54])
        // Where both limits fall on one frame the reason is the frame limit (x264's keyint places that IDR):
        // N = 30, T = 2 s, frame 30 after 0: 30 frames, and PTS(31) − 0 = 31 ticks > 30.
        let both = try KeyframeRule(maxFrames: 30, maxDuration: Rational(2), timebase: Self.r(1, 15))
        #expect(both.keyframeReason(frame: 30, afterKeyframe: 0, keyframePTS: 0, nextPTS: 31) == .frameLimit)
        #expect(both.keyframeReason(frame: 29, afterKeyframe: 0, keyframePTS: 0, nextPTS: 30) == nil)
        let timeOnly = try KeyframeRule(maxFrames: 0, maxDuration: Rational(2), timebase: Self.r(1, 15))
        #expect(timeOnly.keyframeReason(frame: 30, afterKeyframe: 0, keyframePTS: 0, nextPTS: 31) == .durationLimit)
        #expect(timeOnly.keyframeReason(frame: 5, afterKeyframe: 5, keyframePTS: 5, nextPTS: 1000) == nil)
    }

    @Test("bad limits and bad data: one-line errors naming the value")
    func errors() throws {
        let tb = Self.r(1, 15)
        #expect(throws: LabError(.usage, "MaxKeyFrameInterval -1: must be 0 (the encoder chooses) or a positive number of frames")) {
            try KeyframeRule(maxFrames: -1, maxDuration: .zero, timebase: tb)
        }
        #expect(throws: LabError(.usage, "MaxKeyFrameIntervalDuration -1/2: must be 0 (no limit) or a positive number of seconds")) {
            try KeyframeRule(maxFrames: 0, maxDuration: Self.r(-1, 2), timebase: tb)
        }
        #expect(throws: LabError(.usage, "timebase 0: must be a positive number of seconds per tick")) {
            try KeyframeRule(maxFrames: 0, maxDuration: .zero, timebase: .zero)
        }
        let rule = try KeyframeRule(maxFrames: 30, maxDuration: .one, timebase: tb)
        #expect(throws: LabError(.data, "PTS of frame 2 (1) is not after frame 1's (1): display-order PTS must increase")) {
            try rule.expectedKeyframes(pts: [0, 1, 1], nominalFrameTicks: 1)
        }
        #expect(throws: LabError(.usage, "nominal frame duration 0 ticks: must be at least 1 tick")) {
            try rule.expectedKeyframes(pts: [0, 1], nominalFrameTicks: 0)
        }
        #expect(throws: LabError(.data, "the last PTS 9223372036854775807 + one frame of 1 ticks does not fit 64 bits")) {
            try rule.expectedKeyframes(pts: [Int64.max], nominalFrameTicks: 1)
        }
        #expect(throws: LabError(.data, "keyframe 2 is outside the clip's frames 0..<2")) {
            try rule.expectedKeyframes(pts: [0, 1], nominalFrameTicks: 1, streamKeyframes: [2])
        }
        #expect(throws: LabError(.data, "keyframe 5 is outside the stream's frames 0..<3")) {
            try rule.violations(keyframes: [0, 5], pts: [0, 1, 2], endPTS: 3)
        }
        #expect(throws: LabError(.data, "keyframe 1 follows keyframe 2: keyframes must be strictly increasing display indices")) {
            try rule.violations(keyframes: [0, 2, 1], pts: [0, 1, 2], endPTS: 3)
        }
        #expect(throws: LabError(.data, "end PTS 2 is not after the last frame's PTS 2")) {
            try rule.violations(keyframes: [0], pts: [0, 1, 2], endPTS: 2)
        }
        #expect(try rule.expectedKeyframes(pts: [], nominalFrameTicks: 1) == [])
        #expect(try rule.violations(keyframes: [], pts: [], endPTS: 0) == KeyframeRule.Check(violations: [], largestGOPFrames: 0, largestGOPSeconds: .zero))
    }

    // MARK: Property check

    /// The rule written out with exact rationals, independent of the library's tick thresholds: the stretch from
    /// keyframe a to b (b = n: the end) breaks a limit when it has more than `frameLimit` frames, or when it is more
    /// than one adjacent pair (b − a > 1: a single pair is a stall, not a GOP's fault) and (t_b − t_a) · timebase > T.
    static func breaksLimit(a: Int, b: Int, times: [Int64], timebase: Rational, frameLimit: Int?, t: Rational?) throws -> Bool {
        if let frameLimit, b - a > frameLimit { return true }
        if let t, b - a > 1, try timebase.times(times[b] - times[a]) > t { return true }
        return false
    }

    /// Random clips (seeded): strictly increasing PTS with ordinary steps and occasional jumps, random N (0 included),
    /// T (0 included), timebase, last-frame duration, vt-compat and scene-cut IDRs. The expected keyframes keep the
    /// rule in every stretch (checked with rationals here, and by the library's checker, which may only report
    /// stalls, exactly the adjacent pairs more than T apart), and each forced keyframe is needed: without it, the
    /// stretch around it breaks a limit.
    @Test("random clips: expected keyframes break no limit but stalls, and each forced one is needed")
    func randomClips() throws {
        var rng = SplitMix64(seed: 0x6B66)
        let timebases = [Self.r(1, 15), Self.r(1, 30), Self.r(1, 90_000), Self.r(1001, 30_000), Self.r(1, 1000), Self.r(3, 7)]
        var forcedSeen = 0, stallsSeen = 0
        for _ in 0..<500 {
            let timebase = timebases.randomElement(using: &rng)!
            let step = Int64.random(in: 1...4000, using: &rng)
            let n = Int.random(in: 1...150, using: &rng)
            var t = Int64.random(in: -100_000...100_000, using: &rng)
            var times: [Int64] = []
            for _ in 0..<n {
                times.append(t)
                t += Int.random(in: 0..<12, using: &rng) == 0 ? Int64.random(in: 1...(40 * step), using: &rng)
                                                               : Int64.random(in: 1...step, using: &rng)
            }
            let nominal = Int64.random(in: 1...step, using: &rng)
            times.append(times[n - 1] + nominal)  // times[n]: the end
            let pts = Array(times.prefix(n))
            let maxFrames = Bool.random(using: &rng) ? 0 : Int.random(in: 1...40, using: &rng)
            // T in seconds: 0 (no limit), or between about one and a few dozen steps.
            let maxDuration = Int.random(in: 0..<5, using: &rng) == 0
                ? Rational.zero : try timebase.times(Int64.random(in: 1...(30 * step), using: &rng))
            let vtCompat = Bool.random(using: &rng)
            let encoderKeyframes = pts.indices.filter { _ in Int.random(in: 0..<40, using: &rng) == 0 }

            let frameLimit: Int? = vtCompat && maxFrames > 0 && maxDuration > .zero ? nil : (maxFrames == 0 ? nil : maxFrames)
            let limitT: Rational? = maxDuration > .zero ? maxDuration : nil
            let rule = try KeyframeRule(maxFrames: maxFrames, maxDuration: maxDuration, timebase: timebase, vtCompat: vtCompat)
            #expect(rule.frameLimit == frameLimit)
            let expected = try rule.expectedKeyframes(pts: pts, nominalFrameTicks: nominal, streamKeyframes: encoderKeyframes)
            let context = "tb \(timebase) N \(maxFrames) T \(maxDuration) vt \(vtCompat) times \(times) cuts \(encoderKeyframes)"

            #expect(expected.first == 0, "\(context)")
            #expect(Set(encoderKeyframes).isSubset(of: Set(expected)), "\(context)")
            let bounds = expected + [n]
            for (a, b) in zip(bounds, bounds.dropFirst()) {
                #expect(try !Self.breaksLimit(a: a, b: b, times: times, timebase: timebase, frameLimit: frameLimit, t: limitT),
                        "stretch \(a)→\(b): \(context)")
            }
            // Stalls by the definition: adjacent times (the end included) more than T apart.
            var stalls: [Int] = []
            if let limitT {
                for i in 0..<n where try timebase.times(times[i + 1] - times[i]) > limitT { stalls.append(i) }
            }
            let check = try rule.violations(keyframes: expected, pts: pts, endPTS: times[n])
            #expect(check.violations.allSatisfy { $0.kind == .stall }, "\(check.violations): \(context)")
            #expect(check.violations.map(\.startFrame) == stalls, "\(context)")
            stallsSeen += stalls.count
            // Each keyframe the rule forced (not frame 0, not a scene cut) is needed.
            for (i, k) in expected.enumerated() where k > 0 && !encoderKeyframes.contains(k) {
                forcedSeen += 1
                let next = i + 1 < expected.count ? expected[i + 1] : n
                #expect(try Self.breaksLimit(a: expected[i - 1], b: next, times: times, timebase: timebase,
                                             frameLimit: frameLimit, t: limitT), "keyframe \(k) not needed: \(context)")
            }
        }
        // The random clips did exercise forcing and stalls.
        #expect(forcedSeen > 500 && stallsSeen > 50, "forced \(forcedSeen) stalls \(stallsSeen)")
    }
}
