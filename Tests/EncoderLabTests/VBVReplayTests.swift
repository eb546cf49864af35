import Testing
import H264
@testable import EncoderLab

/// VBV replay against sequences whose fullness is computed by hand in the comments: steady, underflow, overflow
/// under CBR and VBR, x264's reading of vbv-init (fraction, kbit, floors) and irregular DTS steps.
struct VBVReplayTests {
    private func r(_ n: Int64, _ d: Int64) -> Rational { try! Rational(n, d) }
    private func bits(_ n: Int64) -> Rational { Rational(n) }

    /// 25 fps on the 90 kHz clock: one frame is 3600 ticks; at 1000 kbit/s one frame's arrival is
    /// 1,000,000 × 3600 / 90,000 = 40,000 bits.
    private let tb90k = try! Rational(1, 90_000)
    private func dts25(_ count: Int) -> [Int64] { (0..<count).map { Int64($0) * 3600 } }

    @Test func constantSizeAtTheArrivalRateStaysSteady() throws {
        // bufsize 1000 kbit = 1,000,000 bits, init 0.9 -> 900,000 bits. Each frame removes 40,000 and the next
        // 3600 ticks bring 40,000 back: before = 900,000 and after = 860,000 for every frame.
        let p = VBVReplay.Parameters(maxrateKbps: 1000, bufsizeKbit: 1000)
        let result = try VBVReplay.replay(bits: Array(repeating: 40_000, count: 10), dts: dts25(10), timebase: tb90k,
                                          parameters: p)
        #expect(result.resolved.initialFullnessBits == bits(900_000))
        #expect(result.frames.count == 10)
        #expect(result.frames.map(\.fullnessBeforeBits) == Array(repeating: bits(900_000), count: 10))
        #expect(result.frames.map(\.fullnessAfterBits) == Array(repeating: bits(860_000), count: 10))
        #expect(result.frames.allSatisfy { $0.underflowBits == .zero && $0.overflowBits == .zero })
        #expect(result.events.isEmpty)
        #expect(result.frames[3].fullnessBefore == 900_000.0)
    }

    @Test func underflowAtAKnownFrame() throws {
        // 100,000-bit frames against a 40,000-bit arrival: a net loss of 60,000 per frame.
        // before(k) = 900,000 - 60,000 k while nothing underflows:
        //   frame 13: before 900,000 - 780,000 = 120,000, after 20,000;
        //   frame 14: before 20,000 + 40,000 = 60,000 < 100,000: underflow of 40,000, after 0;
        //   frame 15: before 0 + 40,000 = 40,000: underflow of 60,000, after 0.
        let p = VBVReplay.Parameters(maxrateKbps: 1000, bufsizeKbit: 1000)
        let result = try VBVReplay.replay(bits: Array(repeating: 100_000, count: 16), dts: dts25(16), timebase: tb90k,
                                          parameters: p)
        for k in 0...13 {
            #expect(result.frames[k].fullnessBeforeBits == bits(900_000 - 60_000 * Int64(k)))
            #expect(result.frames[k].underflowBits == .zero)
        }
        #expect(result.frames[13].fullnessAfterBits == bits(20_000))
        #expect(result.frames[14].fullnessBeforeBits == bits(60_000))
        #expect(result.frames[14].fullnessAfterBits == .zero)
        #expect(result.frames[14].underflowBits == bits(40_000))
        #expect(result.frames[15].fullnessBeforeBits == bits(40_000))
        #expect(result.events == [.underflow(codedIndex: 14, deficitBits: bits(40_000)),
                                  .underflow(codedIndex: 15, deficitBits: bits(60_000))])
    }

    @Test func overflowIsCappedAndAViolationOnlyUnderCBR() throws {
        // 10,000-bit frames against a 40,000-bit arrival: a net gain of 30,000 per frame, capped at 1,000,000.
        //   frame 0: before 900,000, after 890,000      frame 1: before 930,000, after 920,000
        //   frame 2: before 960,000, after 950,000      frame 3: before 990,000, after 980,000
        //   frame 4: 980,000 + 40,000 = 1,020,000 -> capped at 1,000,000 (20,000 cut off), after 990,000
        //   frames 5-7: 990,000 + 40,000 = 1,030,000 -> 1,000,000 (30,000 cut off), after 990,000
        let sizes = Array(repeating: Int64(10_000), count: 8)
        let cbr = try VBVReplay.replay(bits: sizes, dts: dts25(8), timebase: tb90k,
                                       parameters: .init(maxrateKbps: 1000, bufsizeKbit: 1000, mode: .cbr))
        let vbr = try VBVReplay.replay(bits: sizes, dts: dts25(8), timebase: tb90k,
                                       parameters: .init(maxrateKbps: 1000, bufsizeKbit: 1000, mode: .vbr))
        let before: [Int64] = [900_000, 930_000, 960_000, 990_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000]
        let after: [Int64] = [890_000, 920_000, 950_000, 980_000, 990_000, 990_000, 990_000, 990_000]
        let cut: [Int64] = [0, 0, 0, 0, 20_000, 30_000, 30_000, 30_000]
        for result in [cbr, vbr] {
            #expect(result.frames.map(\.fullnessBeforeBits) == before.map(bits))
            #expect(result.frames.map(\.fullnessAfterBits) == after.map(bits))
            #expect(result.frames.map(\.overflowBits) == cut.map(bits))
        }
        #expect(cbr.events == [.overflow(codedIndex: 4, excessBits: bits(20_000)),
                               .overflow(codedIndex: 5, excessBits: bits(30_000)),
                               .overflow(codedIndex: 6, excessBits: bits(30_000)),
                               .overflow(codedIndex: 7, excessBits: bits(30_000))])
        #expect(vbr.events.isEmpty)
    }

    @Test func vbvInitAsAFractionAndAsKbit() throws {
        // bufsize 2000 kbit = 2,000,000 bits.
        func initial(_ initValue: Rational, bufsize: Int64 = 2000, maxrate: Int64 = 1000,
                     fps: Rational? = nil) throws -> VBVReplay.Resolved {
            try VBVReplay.resolve(.init(maxrateKbps: maxrate, bufsizeKbit: bufsize, vbvInit: initValue, frameRate: fps))
        }
        // 0.9 (x264's default) is a fraction: 0.9 x 2,000,000 = 1,800,000 bits.
        #expect(try initial(VBVReplay.Parameters.defaultInit).initialFullnessBits == bits(1_800_000))
        #expect(try initial(r(9, 10)).initialFraction == r(9, 10))
        // 1 is still a fraction (x264 tests > 1): a full buffer.
        #expect(try initial(Rational(1)).initialFullnessBits == bits(2_000_000))
        // 1500 > 1 is kbit: 1500 / 2000 = 3/4 of the buffer, 1,500,000 bits.
        let kbit = try initial(Rational(1500))
        #expect(kbit.initialFraction == r(3, 4))
        #expect(kbit.initialFullnessBits == bits(1_500_000))
        // 3000 kbit is more than the buffer: clipped to 1.
        #expect(try initial(Rational(3000)).initialFullnessBits == bits(2_000_000))
        // The replay starts there: frame 0's fullness before removal is the initial fullness.
        let replay = try VBVReplay.replay(bits: [300_000], dts: [0], timebase: tb90k,
                                          parameters: .init(maxrateKbps: 1000, bufsizeKbit: 2000, vbvInit: Rational(1500)))
        #expect(replay.frames[0].fullnessBeforeBits == bits(1_500_000))
        #expect(replay.frames[0].fullnessAfterBits == bits(1_200_000))

        // x264's floor on the fraction, one frame's arrival: 1,000,000 / 25 / 1,000,000 = 1/25 > 1/100.
        #expect(try initial(r(1, 100), bufsize: 1000, fps: Rational(25)).initialFullnessBits == bits(40_000))
        #expect(try initial(r(1, 100), bufsize: 1000).initialFullnessBits == bits(10_000))
        // x264's floor on the buffer, one frame's arrival in whole kbit: 1000 / 25 = 40 kbit > 30 kbit;
        // 1000 / (30000/1001) = 33.37 -> 33 kbit.
        #expect(try initial(Rational(1), bufsize: 30, fps: Rational(25)).bufferSizeBits == 40_000)
        #expect(try initial(Rational(1), bufsize: 30, fps: r(30_000, 1001)).bufferSizeBits == 33_000)
        #expect(try initial(Rational(1), bufsize: 30).bufferSizeBits == 30_000)

        // Parsing as x264's options write the value, exactly.
        #expect(VBVReplay.parseInit("0.9") == r(9, 10))
        #expect(VBVReplay.parseInit(".5") == r(1, 2))
        #expect(VBVReplay.parseInit("1500") == Rational(1500))
        #expect(VBVReplay.parseInit("0.125") == r(1, 8))
        for bad in ["", ".", "-1", "1e3", "0,9", "x", "1.2.3", "1234567890123456789"] {
            #expect(VBVReplay.parseInit(bad) == nil, "\(bad)")
        }
    }

    @Test func irregularDTSStepsAreFilledForTheirOwnLength() throws {
        // Millisecond ticks; 800 kbit/s is 800 bits per tick. bufsize 500 kbit, init 1/2 -> 250,000 bits.
        //   frame 0 (dts 0):   before 250,000, 100,000 bits -> after 150,000
        //   frame 1 (dts 40):  +40 x 800 = 32,000 -> 182,000, 50,000 bits -> 132,000
        //   frame 2 (dts 100): +60 x 800 = 48,000 -> 180,000, 20,000 bits -> 160,000
        //   frame 3 (dts 110): +10 x 800 = 8,000 -> 168,000, 180,000 bits -> underflow of 12,000, after 0
        //                      (a constant 40 ms step would have given 192,000: no underflow)
        //   frame 4 (dts 200): +90 x 800 = 72,000 -> 72,000, 10,000 bits -> 62,000
        let p = VBVReplay.Parameters(maxrateKbps: 800, bufsizeKbit: 500, vbvInit: r(1, 2))
        let result = try VBVReplay.replay(bits: [100_000, 50_000, 20_000, 180_000, 10_000], dts: [0, 40, 100, 110, 200],
                                          timebase: r(1, 1000), parameters: p)
        #expect(result.frames.map(\.fullnessBeforeBits) == [250_000, 182_000, 180_000, 168_000, 72_000].map(bits))
        #expect(result.frames.map(\.fullnessAfterBits) == [150_000, 132_000, 160_000, 0, 62_000].map(bits))
        #expect(result.events == [.underflow(codedIndex: 3, deficitBits: bits(12_000))])

        // NTSC steps on the 90 kHz clock stay exact: 1,000,000 x 3003 / 90,000 = 100,100/3 bits per step.
        //   before(1) = 900,000 + 100,100/3 = 2,800,100/3; before(2) = 2,900,200/3 (966,733.33...).
        let ntsc = try VBVReplay.replay(bits: [0, 0, 0], dts: [0, 3003, 6006], timebase: tb90k,
                                        parameters: .init(maxrateKbps: 1000, bufsizeKbit: 1000))
        #expect(ntsc.frames.map(\.fullnessBeforeBits) == [bits(900_000), r(2_800_100, 3), r(2_900_200, 3)])
        #expect(abs(ntsc.frames[2].fullnessBefore - 966_733.333) < 0.001)
        // Two frames with one DTS: no arrival between them.
        let same = try VBVReplay.replay(bits: [100, 200], dts: [7, 7], timebase: tb90k,
                                        parameters: .init(maxrateKbps: 1000, bufsizeKbit: 1000))
        #expect(same.frames[1].fullnessBeforeBits == bits(899_900))
    }

    @Test func badInputIsRefusedWithItsKind() {
        let p = VBVReplay.Parameters(maxrateKbps: 1000, bufsizeKbit: 1000)
        #expect(throws: LabError(.data, "VBV replay: frame 1: DTS 5 is before the previous frame's 10")) {
            try VBVReplay.replay(bits: [1, 1], dts: [10, 5], timebase: self.tb90k, parameters: p)
        }
        #expect(throws: LabError(.data, "VBV replay: 2 frame sizes but 1 DTS values")) {
            try VBVReplay.replay(bits: [1, 1], dts: [0], timebase: self.tb90k, parameters: p)
        }
        #expect(throws: LabError(.data, "VBV replay: frame 0: size -8 bits is negative")) {
            try VBVReplay.replay(bits: [-8], dts: [0], timebase: self.tb90k, parameters: p)
        }
        #expect(throws: LabError(.usage, "vbv-maxrate 0 kbit/s: must be > 0")) {
            try VBVReplay.replay(bits: [1], dts: [0], timebase: self.tb90k,
                                 parameters: .init(maxrateKbps: 0, bufsizeKbit: 1000))
        }
        #expect(throws: LabError(.usage, "vbv-bufsize -1 kbit: must be > 0")) {
            try VBVReplay.resolve(.init(maxrateKbps: 1000, bufsizeKbit: -1))
        }
        // A DTS step so long that its exact arrival leaves 64 bits is refused, not trapped.
        #expect(throws: LabError.self) {
            try VBVReplay.replay(bits: [1, 1], dts: [Int64.min, Int64.max], timebase: self.tb90k, parameters: p)
        }
    }
}
