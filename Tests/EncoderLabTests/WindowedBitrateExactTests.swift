import Foundation
import H264
import Testing
@testable import EncoderLab

/// The windowed bitrate against its definition written out with exact rationals, and on values that trapped.
@Suite("windowed bitrate: the definition, and no trap on damaged values")
struct WindowedBitrateExactTests {
    /// The definition, frame by frame, in H264.Rational (exact, 64-bit parts), on non-decreasing DTS: frame j is in
    /// the window starting at frame k's DTS when dts_k <= dts_j and (dts_j - dts_k) * timebase < window; the window is
    /// full when it ends by the stream's end: (dts_last - dts_k + frameTicks) * timebase >= window.
    static func definition(sizes: [Int], dts: [Int64], timebase: Rational, frameTicks: Rational, window: Rational) throws -> [(bytes: Int, full: Bool)] {
        try dts.indices.map { k in
            var bytes = 0
            for j in dts.indices where dts[j] >= dts[k] {
                if try Rational(dts[j] - dts[k]) * timebase < window { bytes += sizes[j] }
            }
            let full = try (Rational(dts[dts.count - 1] - dts[k]) + frameTicks) * timebase >= window
            return (bytes, full)
        }
    }

    @Test("random streams, timebases, frame durations and windows: bytes and full as the definition says")
    func againstDefinition() throws {
        var rng = SplitMix64(seed: 20)
        let timebases = [try Rational(1, 25), try Rational(1, 90_000), try Rational(1001, 30_000), try Rational(1, 1000), try Rational(3, 7)]
        let windows = [Rational.one, try Rational(1, 2), try Rational(5, 3), Rational(2)]
        for _ in 0..<300 {
            let timebase = timebases.randomElement(using: &rng)!
            let window = windows.randomElement(using: &rng)!
            let frameTicks = try Rational(Int64.random(in: 1...5000, using: &rng), Int64.random(in: 1...7, using: &rng))
            let count = Int.random(in: 1...60, using: &rng)
            var t = Int64.random(in: -100_000...100_000, using: &rng)
            var dts: [Int64] = []
            for _ in 0..<count {
                dts.append(t)
                t += Int64.random(in: 0...6000, using: &rng)
            }
            let sizes = (0..<count).map { _ in Int.random(in: 0...200_000, using: &rng) }
            let points = WindowedBitrate.compute(sizes: sizes, dts: dts, timebase: timebase, frameTicks: frameTicks, window: window)
            let expected = try Self.definition(sizes: sizes, dts: dts, timebase: timebase, frameTicks: frameTicks, window: window)
            #expect(points.map(\.full) == expected.map(\.full), "\(timebase) \(window) \(frameTicks) \(dts)")
            // Same data through DataRateLimits' check: its worst window is the largest of these windows.
            let pair = try DataRateLimits(pairs: [(bytes: 1, seconds: window)]).pairs[0]
            let check = try DataRateLimits.check(pair: pair, dtsTicks: dts, sizesBytes: sizes, timebase: timebase)
            #expect(check.worst.map { Int($0.bytes) } == expected.map(\.bytes).max())
            #expect(check.windowCount == Set(dts).count)
            #expect(points.map(\.kbps) == expected.map { Double($0.bytes) * 8 / window.approximateValue / 1000 })
        }
    }

    @Test("the full flag at the exact boundary: 1001/30000 s ticks, a 1 s window, the stream ending one frame after the last DTS")
    func boundary() throws {
        // Window at dts_k full when (dts_last - dts_k + f) * 1001/30000 >= 1, i.e. dts_last - dts_k >= 30000/1001 - f.
        // f = 1001/2: 29.97... - 500.5 < 0, every window is full.
        let timebase = try Rational(1001, 30_000), frameTicks = try Rational(1001, 2)
        let dts: [Int64] = [-1000, -471, -470, 0]
        let points = WindowedBitrate.compute(sizes: [1, 1, 1, 1], dts: dts, timebase: timebase, frameTicks: frameTicks)
        #expect(points.map(\.full) == [true, true, true, true])
        // f = 1 tick: full when 29 - dts_k >= 30000/1001 - 1 = 28.97..., i.e. dts_k <= 0: the first only.
        let one = WindowedBitrate.compute(sizes: [1, 1, 1], dts: [0, 28, 29], timebase: timebase, frameTicks: .one)
        #expect(one.map(\.full) == [true, false, false])
    }

    @Test("damaged values give points, not a trap: sizes of Int.max, dts at both ends of Int64, dts decreasing")
    func damagedValuesDoNotTrap() throws {
        let tb = try Rational(1, 25)
        let big = WindowedBitrate.compute(sizes: [Int.max, Int.max], dts: [0, 0], timebase: tb, frameTicks: .one)
        // Both frames in the window: 2 * (2^63 - 1) bytes, over a 1 s window.
        #expect(big[1].kbps == Double(2 * (Double(Int.max))) * 8 / 1000)
        let far = WindowedBitrate.compute(sizes: [1, 2], dts: [Int64.min + 1, Int64.max], timebase: tb, frameTicks: .one)
        #expect(far.map(\.kbps) == [0.008, 0.016])
        // The first window ends long before the stream's end; the last one runs 24 frames past it.
        #expect(far.map(\.full) == [true, false])
        // Arrivals all Int64.max: one window holding the three frames, shared by them.
        let back = WindowedBitrate.compute(sizes: [1, 2, 4], dts: [Int64.max, Int64.min, 0], timebase: tb, frameTicks: .one)
        #expect(back.map(\.kbps) == [0.056, 0.056, 0.056])
        let hugeTicks = WindowedBitrate.compute(sizes: [1, 1], dts: [0, 1], timebase: try Rational(1, Int64.max),
                                                frameTicks: try Rational(Int64.max, 1), window: try Rational(Int64.max, 1))
        #expect(hugeTicks.map(\.full) == [false, false])
    }

    static func frame(_ index: Int, _ sizeBytes: Int, _ ticks: Int64) -> LabStore.FrameRow {
        LabStore.FrameRow(codedIndex: index, displayIndex: index, type: "P", sizeBytes: sizeBytes, pts: ticks, dts: ticks,
                          qp: 20, psnrY: 40, psnrAvg: 40, ssim: nil)
    }

    static let damaged: [([LabStore.FrameRow], String)] = [
        ([frame(0, 1000, 0), frame(1, -1, 1)], "run 1: frame coded_index 1: size_bytes -1 is outside 0...1099511627776 (2^40), not a frame size that can be plotted"),
        ([frame(0, (1 << 40) + 1, 0)], "run 1: frame coded_index 0: size_bytes 1099511627777 is outside 0...1099511627776 (2^40), not a frame size that can be plotted"),
        ([frame(0, 10, -(1 << 60) - 1)], "run 1: frame coded_index 0: pts -1152921504606846977 is outside -1152921504606846976...1152921504606846976 (2^60 ticks)"),
    ]

    @Test("RunPlotInput refuses frames it cannot plot, naming the run, frame, column and range", arguments: damaged)
    func refused(frames: [LabStore.FrameRow], message: String) {
        let run = PlotFromStoreTests.row(settings: #"{"resolved":{"rc_method":"crf"}}"#)
        #expect(throws: LabError(.data, message)) { try RunPlotInput(run: run, frames: frames) }
        // The limits themselves are accepted.
        let edge = [Self.frame(0, 1 << 40, -(1 << 60)), Self.frame(1, 0, 1 << 60)]
        #expect(throws: Never.self) { try RunPlotInput(run: run, frames: edge) }
    }

    @Test("a DTS that goes back (x264 given PTS that go back) is drawn, not refused")
    func decreasingDTSAccepted() {
        let run = PlotFromStoreTests.row(settings: #"{"resolved":{"rc_method":"crf"}}"#)
        #expect(throws: Never.self) { try RunPlotInput(run: run, frames: [Self.frame(0, 10, 5), Self.frame(1, 10, 4)]) }
    }

    @Test("a rate and timebase whose frame in ticks does not fit 64 bits is refused with .data")
    func frameTicksOverflow() {
        let run = PlotFromStoreTests.row(settings: #"{"resolved":{"rc_method":"crf"}}"#, timebase: (1, 1 << 62), fps: (1, 1 << 62))
        #expect(throws: LabError(.data, "run 1: a frame of 4611686018427387904/1 s in ticks of 1/4611686018427387904 s does not fit 64 bits")) {
            try RunPlotInput(run: run, frames: PlotFromStoreTests.frameRows)
        }
    }
}
