import Testing
import H264
@testable import EncoderLab

/// VideoToolbox's DataRateLimits: the flat array's parsing, the VBV mapping (its inequalities and the maximality of
/// its rate, checked in exact arithmetic written out here), and the window checker against hand-computed sequences
/// and an O(n²) brute force.
struct DataRateLimitsTests {
    private func r(_ n: Int64, _ d: Int64) -> Rational { try! Rational(n, d) }

    // MARK: - Parsing

    @Test func parsesTheFlatArray() throws {
        let two = try DataRateLimits(parsing: "250000,1,50000,0.1")
        #expect(two.pairs.map(\.bytes) == [250_000, 50_000])
        #expect(two.pairs.map(\.seconds) == [Rational(1), r(1, 10)])
        #expect(two.description == "250000,1,50000,0.1")
        #expect(two.firstPairOnly.pairs.map(\.bytes) == [250_000])

        #expect(try DataRateLimits(parsing: "").pairs.isEmpty)
        #expect(try DataRateLimits(parsing: "  ") == .unlimited)
        #expect(try DataRateLimits(parsing: " 250000 , 1 ").description == "250000,1")
        // ".5" is 1/2; "2." is 2; trailing zeros go: 0.250 is 1/4; leading zeros too.
        #expect(try DataRateLimits(parsing: "1000,.5").pairs[0].seconds == r(1, 2))
        #expect(try DataRateLimits(parsing: "1000,2.").pairs[0].seconds == Rational(2))
        #expect(try DataRateLimits(parsing: "007,0.250").description == "7,0.25")
        // 18 decimal places are exact: 10^-18.
        #expect(try DataRateLimits(parsing: "1,0.000000000000000001").pairs[0].seconds == r(1, 1_000_000_000_000_000_000))
        #expect(try DataRateLimits(parsing: "1152921504606846975,1").pairs[0].bytes == Int64.max / 8)
        #expect(try DataRateLimits(values: ["250000", "1", "50000", "0.1"]) == two)
        // Seconds that are not a terminating decimal show as N/D.
        #expect(try DataRateLimits(pairs: [(bytes: 1000, seconds: r(1, 3))]).description == "1000,1/3")
        #expect(try DataRateLimits(pairs: [(bytes: 9, seconds: r(5, 8))]).description == "9,0.625")
    }

    @Test(arguments: [
        ("250000,1,5", "3 numbers: expected BYTES,SECONDS pairs"),
        ("abc", "1 numbers: expected BYTES,SECONDS pairs"),
        ("1,1,2,2,3,3", "3 pairs: at most two BYTES,SECONDS pairs"),
        ("0,1", "pair 1: bytes '0' must be above 0"),
        ("-5,1", "pair 1: bytes '-5' must be above 0"),
        ("250000,1,-0,1", "pair 2: bytes '-0' must be above 0"),
        ("1.5,1", "pair 1: bytes '1.5' is not a whole number"),
        ("250000.0,1", "pair 1: bytes '250000.0' is not a whole number"),
        ("2e5,1", "pair 1: bytes '2e5' is not a whole number"),
        ("+5,1", "pair 1: bytes '+5' is not a whole number"),
        (",1", "pair 1: bytes '' is not a whole number"),
        ("inf,1", "pair 1: bytes 'inf' is not finite"),
        ("1152921504606846976,1", "pair 1: bytes '1152921504606846976' is above 1152921504606846975"),
        ("99999999999999999999999,1", "pair 1: bytes '99999999999999999999999' is above 1152921504606846975"),
        ("250000,1,50000,nan", "pair 2: seconds 'nan' is not finite"),
        ("250000,-Infinity", "pair 1: seconds '-Infinity' is not finite"),
        ("250000,0", "pair 1: seconds '0' must be above 0"),
        ("250000,0.000", "pair 1: seconds '0.000' must be above 0"),
        ("250000,-1", "pair 1: seconds '-1' must be above 0"),
        ("250000,1e-1", "pair 1: seconds '1e-1' is not a decimal number"),
        ("250000,", "pair 1: seconds '' is not a decimal number"),
        ("250000,0.1.2", "pair 1: seconds '0.1.2' is not a decimal number"),
        ("1,0.0000000000000000001", "pair 1: seconds '0.0000000000000000001' has more than 18 decimal places"),
        ("1,99999999999999999999",
         "pair 1: seconds '99999999999999999999' is too large (at most 9223372036854775807 in units of its last decimal place)"),
    ])
    func refusesBadValues(text: String, fault: String) {
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '\(text)' (\(fault))")) {
            try DataRateLimits(parsing: text)
        }
    }

    @Test func refusesBadPairs() {
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '1,1,2,2,3,3' (3 pairs: at most two BYTES,SECONDS pairs)")) {
            try DataRateLimits(pairs: [(1, .one), (2, Rational(2)), (3, Rational(3))])
        }
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '1,0.5,0,1' (pair 2: bytes '0' must be above 0)")) {
            try DataRateLimits(pairs: [(1, r(1, 2)), (0, .one)])
        }
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '1,-1/3' (pair 1: seconds '-1/3' must be above 0)")) {
            try DataRateLimits(pairs: [(1, r(-1, 3))])
        }
    }

    // MARK: - The VBV

    @Test func workedExample() throws {
        let limits = try DataRateLimits(parsing: "250000,1,50000,0.1")
        // Budgets 2,000,000 and 400,000 bits; the buffer is a quarter of the smaller: 100 kbit.
        let at30 = try #require(try limits.vbv(frameRate: Rational(30)))
        #expect(at30 == DataRateLimits.VBV(maxrateKbps: 1900, bufsizeKbit: 100))
        let (s30, r30): (Int, Int) = (at30.bufsizeKbit, at30.maxrateKbps)
        let pair1At30: Int = s30 * 1000 + r30 * 1000          // S + R·1 s
        let pair2At30: Int = s30 * 1000 + r30 * 1000 / 10     // S + R·0.1 s
        let pair1Next: Int = s30 * 1000 + (r30 + 1) * 1000    // R + 1 with the same S
        #expect(pair1At30 == 2_000_000)                       // exactly the budget of pair 1
        #expect(pair2At30 == 290_000)                         // ≤ 400,000
        #expect(pair1Next == 2_001_000)                       // > 2,000,000: R + 1 breaks pair 1
        #expect(r30 / 30 < s30)                               // one frame at R fits the buffer (63 < 100)
        #expect(DataRateLimits.abrTargetKbps(for: at30) == 1266)   // floor(2 × 1900 / 3) = floor(1266.67)

        // At 15 fps one frame at R exceeds 100 kbit: S = ceil(R / 15).
        let at15 = try #require(try limits.vbv(frameRate: Rational(15)))
        #expect(at15 == DataRateLimits.VBV(maxrateKbps: 1875, bufsizeKbit: 125))
        let (s15, r15): (Int, Int) = (at15.bufsizeKbit, at15.maxrateKbps)
        let pair1At15: Int = s15 * 1000 + r15 * 1000
        let pair2At15: Int = s15 * 1000 + r15 * 100
        let pair1Next15: Int = 126 * 1000 + (r15 + 1) * 1000  // R = 1876 needs S = ceil(1876 / 15) = ceil(125.07) = 126
        #expect(s15 * 15 == r15)                              // S = R / 15 exactly
        #expect(pair1At15 == 2_000_000)
        #expect(pair2At15 == 312_500)                         // ≤ 400,000
        #expect(pair1Next15 == 2_002_000)                     // > 2,000,000
        #expect(DataRateLimits.abrTargetKbps(for: at15) == 1250)

        // vt-compat: the first pair alone. S = 2,000,000 / 4000 = 500, R = (2,000,000 − 500,000) / 1000 = 1500.
        let compat = try #require(try limits.vbv(frameRate: Rational(30), vtCompat: true))
        #expect(compat == DataRateLimits.VBV(maxrateKbps: 1500, bufsizeKbit: 500))
        #expect(try limits.firstPairOnly.vbv(frameRate: Rational(30)) == compat)
        #expect(DataRateLimits.abrTargetKbps(for: compat) == 1000)

        #expect(try DataRateLimits.unlimited.vbv(frameRate: Rational(30)) == nil)
    }

    @Test func tooSmallForAVBV() throws {
        // 100 bytes = 800 bits: a quarter is 0.2 kbit, rounded down to 0.
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '100,1' (too small for an x264 VBV in whole kbit: vbv-bufsize would be 0 kbit)")) {
            try DataRateLimits(parsing: "100,1").vbv(frameRate: Rational(30))
        }
        // 500 bytes = 4000 bits: S = 1 kbit leaves 3000 bits for 10 s: R = 0.3 kbit/s, rounded down to 0.
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '500,10' (too small for an x264 VBV in whole kbit: vbv-maxrate would be 0 kbit/s)")) {
            try DataRateLimits(parsing: "500,10").vbv(frameRate: Rational(30))
        }
        // vt-compat names only the pair it honours.
        #expect(throws: LabError(.usage, "bad value for DataRateLimits: '100,1' (too small for an x264 VBV in whole kbit: vbv-bufsize would be 0 kbit)")) {
            try DataRateLimits(parsing: "100,1,1000000,1").vbv(frameRate: Rational(30), vtCompat: true)
        }
        // The same limit, 500 bytes in 1 s: S = 1, R = 3 (1000 + 3000 = 4000 bits).
        #expect(try DataRateLimits(parsing: "500,1").vbv(frameRate: Rational(30)) == DataRateLimits.VBV(maxrateKbps: 3, bufsizeKbit: 1))
    }

    @Test func hugeLimitsAreCappedAtX264sInt() throws {
        // 10^15 bytes a second: far above what x264 holds in a C int after multiplying by 1000.
        let vbv = try #require(try DataRateLimits(parsing: "1000000000000000,1").vbv(frameRate: Rational(30)))
        #expect(vbv == DataRateLimits.VBV(maxrateKbps: 2_147_483, bufsizeKbit: 2_147_483))
        let bitsPerSecond: Int = vbv.maxrateKbps * 1000
        #expect(bitsPerSecond <= Int(Int32.max))
    }

    /// Random pairs: every inequality S + R·W_i ≤ 8·B_i holds, x264 keeps the buffer (it is at least one frame at R
    /// as x264 computes it, in float), and R + 1 breaks an inequality (with the buffer S(R + 1) the rule gives it).
    @Test func mappingHoldsAndIsMaximalOnRandomPairs() throws {
        var random = SplitMix64(seed: 0xDA7A_5A7E)
        let rates = [Rational(30), Rational(15), r(30000, 1001), Rational(25), Rational(60), r(1, 2), Rational(240)]
        var bufferFromFrame = 0, capped = 0
        for _ in 0 ..< 2000 {
            let count = Int.random(in: 1 ... 2, using: &random)
            var values: [String] = []
            for _ in 0 ..< count {
                let bytes = Int64.random(in: 2_000 ... 50_000_000, using: &random)
                let millis = Int64.random(in: 1 ... 10_000, using: &random)
                values += ["\(bytes)", "\(millis / 1000).\(String(repeating: "0", count: 3 - String(millis % 1000).count))\(millis % 1000)"]
            }
            let limits = try DataRateLimits(values: values)
            let fps = rates[Int.random(in: 0 ..< rates.count, using: &random)]
            let vbv = try #require(try limits.vbv(frameRate: fps))
            let s = Int64(vbv.bufsizeKbit), rate = Int64(vbv.maxrateKbps)
            #expect(s >= 1 && rate >= 1)
            let budgets = limits.pairs.map { Rational($0.bytes * 8) }
            let s0 = budgets.map { $0.numerator }.min()! / 4000
            // Each inequality, in Rational arithmetic: 1000·S + 1000·R·W ≤ 8·B.
            for (pair, budget) in zip(limits.pairs, budgets) {
                let used = try Rational(1000 * s) + Rational(1000 * rate) * pair.seconds
                #expect(used <= budget, "\(limits) at \(fps) fps: \(vbv)")
            }
            // The buffer is S₀ or one frame at R (rounded up), whichever is larger.
            let frame = try Rational(rate) / fps
            #expect(s == max(s0, frame.roundedUp), "\(limits) at \(fps) fps: \(vbv)")
            if s > s0 { bufferFromFrame += 1 }
            // x264 (ratecontrol.c) raises the buffer when bufsize < (int)(maxrate / fps), divided in float: not here.
            let fpsFloat = Float(fps.numerator) / Float(fps.denominator)
            #expect(Int(s) >= Int(Float(rate) / fpsFloat))
            // Maximal: R + 1 with S(R + 1) breaks one inequality, or R is x264's cap (a short window of many bytes).
            if rate == Int64(DataRateLimits.maxKbit) { capped += 1; continue }
            let s1 = max(s0, try (Rational(rate + 1) / fps).roundedUp)
            let broken = try zip(limits.pairs, budgets).contains { pair, budget in
                try Rational(1000 * s1) + Rational(1000 * (rate + 1)) * pair.seconds > budget
            }
            #expect(broken, "\(limits) at \(fps) fps: \(vbv) is not the largest rate")
        }
        // The one-frame floor was exercised, not only the quarter of the budget.
        #expect(bufferFromFrame > 50 && capped < 100)
    }

    // MARK: - The window checker

    /// Timebase 1 ms, a 0.1 s window (100 ticks), 60 bytes. DTS 0, 40, 80, 100, 140, 200; sizes 10 ... 60:
    /// [0,100) holds 0, 40, 80 (100 is on the edge, outside): 10+20+30 = 60, not over (equal passes);
    /// [40,140): 40, 80, 100: 20+30+40 = 90; [80,180): 80, 100, 140: 30+40+50 = 120 (the worst, 2× the limit);
    /// [100,200): 100, 140: 40+50 = 90 (200 outside); [140,240): 140, 200: 50+60 = 110; [200,300): 60.
    @Test func windowsOnHandComputedSequence() throws {
        let limits = try DataRateLimits(parsing: "60,0.1")
        let check = try DataRateLimits.check(pair: limits.pairs[0], dtsTicks: [0, 40, 80, 100, 140, 200],
                                             sizesBytes: [10, 20, 30, 40, 50, 60], timebase: r(1, 1000))
        #expect(check.windowCount == 6)
        #expect(check.windowsOverLimit == 4)
        #expect(check.worst == DataRateLimits.Window(startIndex: 2, endIndex: 4, startTicks: 80, bytes: 120, ratio: Rational(2)))
        // The same frames in 90 kHz ticks (0.1 s = 9000 ticks) give the same windows.
        let at90k = try DataRateLimits.check(pair: limits.pairs[0], dtsTicks: [0, 3600, 7200, 9000, 12600, 18000],
                                             sizesBytes: [10, 20, 30, 40, 50, 60], timebase: r(1, 90000))
        #expect(at90k.windowCount == 6 && at90k.windowsOverLimit == 4 && at90k.worst?.startIndex == 2 && at90k.worst?.bytes == 120)
    }

    /// Repeated and backward DTS, 90 kHz, 1/15 s = 6000 ticks, 40 bytes. DTS 0, 3000, 3000, 2000, 6000, 9000 count at
    /// their running maximum 0, 3000, 3000, 3000, 6000, 9000: four window starts.
    /// [0,6000): frames 0-3, 5+7+11+13 = 36; [3000,9000): frames 1-4, 7+11+13+17 = 48 (over, 48/40 = 6/5);
    /// [6000,12000): frames 4-5, 17+19 = 36; [9000,15000): frame 5, 19.
    @Test func repeatedAndBackwardDTS() throws {
        let pair = try DataRateLimits(pairs: [(40, r(1, 15))]).pairs[0]
        let check = try DataRateLimits.check(pair: pair, dtsTicks: [0, 3000, 3000, 2000, 6000, 9000],
                                             sizesBytes: [5, 7, 11, 13, 17, 19], timebase: r(1, 90000))
        #expect(check.windowCount == 4)
        #expect(check.windowsOverLimit == 1)
        #expect(check.worst == DataRateLimits.Window(startIndex: 1, endIndex: 4, startTicks: 3000, bytes: 48, ratio: r(6, 5)))
    }

    /// A window that is not a whole number of ticks: timebase 1/30 s, 0.13 s = 3.9 ticks, so a frame 3 ticks after the
    /// start (0.1 s) is inside and one 4 ticks after (0.1333 s) is outside. Ten frames of 10 bytes at ticks 0 ... 9, 30
    /// bytes: windows 0-6 hold 4 frames (40 bytes, over), 7 holds 30, 8 holds 20, 9 holds 10.
    @Test func windowBetweenTicks() throws {
        let limits = try DataRateLimits(parsing: "30,0.13,1000,1")
        let checks = try limits.check(dtsTicks: Array(0 ..< 10), sizesBytes: Array(repeating: 10, count: 10), timebase: r(1, 30))
        #expect(checks.count == 2)
        #expect(checks[0].windowCount == 10 && checks[0].windowsOverLimit == 7)
        #expect(checks[0].worst == DataRateLimits.Window(startIndex: 0, endIndex: 3, startTicks: 0, bytes: 40, ratio: r(4, 3)))
        // 1 s is 30 ticks: the whole clip (100 bytes) in the first window, 1000 allowed.
        #expect(checks[1].windowsOverLimit == 0)
        #expect(checks[1].worst == DataRateLimits.Window(startIndex: 0, endIndex: 9, startTicks: 0, bytes: 100, ratio: r(1, 10)))
    }

    @Test func emptyStreamAndBadInput() throws {
        let pair = try DataRateLimits(parsing: "1,1").pairs[0]
        let empty = try DataRateLimits.check(pair: pair, dtsTicks: [], sizesBytes: [], timebase: r(1, 90000))
        #expect(empty == DataRateLimits.WindowCheck(pair: pair, windowCount: 0, windowsOverLimit: 0, worst: nil))
        #expect(throws: LabError(.data, "frame 1 (decode order): size -3 bytes is negative")) {
            try DataRateLimits.check(pair: pair, dtsTicks: [0, 1], sizesBytes: [1, -3], timebase: r(1, 90000))
        }
        #expect(throws: LabError(.data, "timebase 0 s is not above 0")) {
            try DataRateLimits.check(pair: pair, dtsTicks: [0], sizesBytes: [1], timebase: .zero)
        }
    }

    /// O(n²) reference: windows over the running maximum of DTS, one per distinct start, each frame tested with
    /// Rational arithmetic ((e_j − e_i)·timebase < W).
    private func bruteForce(pair: DataRateLimits.Pair, dts: [Int64], sizes: [Int], timebase: Rational) throws -> DataRateLimits.WindowCheck {
        var e: [Int64] = []
        for t in dts { e.append(e.isEmpty ? t : max(e.last!, t)) }
        var count = 0, over = 0
        var worst: DataRateLimits.Window?
        for i in e.indices where !e[..<i].contains(e[i]) {
            var bytes: Int64 = 0, last = i
            for j in e.indices where e[j] >= e[i] {
                if try Rational(e[j] - e[i]) * timebase < pair.seconds {
                    bytes += Int64(sizes[j])
                    last = j
                }
            }
            count += 1
            if bytes > pair.bytes { over += 1 }
            if worst == nil || bytes > worst!.bytes {
                worst = DataRateLimits.Window(startIndex: i, endIndex: last, startTicks: e[i], bytes: bytes,
                                              ratio: try Rational(bytes, pair.bytes))
            }
        }
        return DataRateLimits.WindowCheck(pair: pair, windowCount: count, windowsOverLimit: over, worst: worst)
    }

    @Test func agreesWithBruteForceOnRandomSequences() throws {
        var random = SplitMix64(seed: 20_240_510)
        let timebases = [r(1, 90000), r(1, 1000), r(1001, 30000), r(1, 30), r(3, 7)]
        var overSeen = 0, backSeen = 0
        for _ in 0 ..< 400 {
            let timebase = timebases[Int.random(in: 0 ..< timebases.count, using: &random)]
            let seconds = try Rational(Int64.random(in: 1 ... 300, using: &random), [10, 100, 7, 1][Int.random(in: 0 ..< 4, using: &random)])
            let n = Int.random(in: 0 ... 60, using: &random)
            // One frame is about 1/30 s in ticks; steps repeat, go back or jump now and then.
            let frameTicks = max(1, Int64((try r(1, 30) / timebase).roundedToNearest))
            var dts: [Int64] = [], sizes: [Int] = []
            var t = Int64.random(in: -1000 ... 1000, using: &random)
            for _ in 0 ..< n {
                dts.append(t)
                sizes.append(Int.random(in: 0 ... 5000, using: &random))
                switch Int.random(in: 0 ..< 10, using: &random) {
                case 0: break                                                                // repeat
                case 1: t -= Int64.random(in: 1 ... 2 * frameTicks, using: &random); backSeen += 1  // back
                case 2: t += Int64.random(in: 0 ... 20 * frameTicks, using: &random)              // jump
                default: t += frameTicks
                }
            }
            let pair = try DataRateLimits(pairs: [(Int64.random(in: 1 ... 20000, using: &random), seconds)]).pairs[0]
            let fast = try DataRateLimits.check(pair: pair, dtsTicks: dts, sizesBytes: sizes, timebase: timebase)
            let slow = try bruteForce(pair: pair, dts: dts, sizes: sizes, timebase: timebase)
            #expect(fast == slow, "dts \(dts) sizes \(sizes) timebase \(timebase) pair \(pair)")
            overSeen += fast.windowsOverLimit > 0 ? 1 : 0
        }
        #expect(overSeen > 50 && backSeen > 50)
    }
}

private extension Rational {
    /// The smallest whole number ≥ self (self ≥ 0).
    var roundedUp: Int64 { (numerator + denominator - 1) / denominator }
}
