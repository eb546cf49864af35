import Foundation
import H264

/// What a run's timestamps did, from what the lab handed x264 and what x264 returned (table
/// `timestamp_analysis`, one row per run, and `frame_durations`, docs/timestamps.md).
///
/// All times are in ticks of the run's timebase (1/1000000 s for every plan but the CLI's constant-rate one,
/// whose tick is one frame). Every count is over whole frames; nothing is sampled.
public struct TimestampAnalysis: Sendable, Equatable {
    /// Input frames encoded.
    public var frames: Int
    /// Input frames whose PTS handed in was not after the previous frame's, the first frame compared with −1:
    /// x264's own rule (encoder.c, x264_encoder_encode: `i_pts <= frames.i_largest_pts`, a field that holds the
    /// previous frame's PTS, −1 at the start), for which libx264 warns "non-strictly-monotonic PTS" and encodes
    /// the PTS as given.
    public var nonIncreasingInputPTS: Int
    /// Coded frames (decode order) whose DTS equals the previous coded frame's.
    public var duplicateDTS: Int
    /// Coded frames whose DTS is below the previous coded frame's.
    public var decreasingDTS: Int
    /// Coded frames with PTS < DTS (a decoder would have to show the frame before decoding it).
    public var ptsBeforeDTS: Int
    /// The smallest and largest composition offset, PTS − DTS, over the coded frames, in ticks.
    public var minCompositionOffset: Int64
    public var maxCompositionOffset: Int64
    /// The span in ticks: largest PTS − smallest PTS + the last input frame's duration (its timecode or
    /// schedule step where the source knows it, else the nominal frame duration); nil when that is not a positive
    /// 64-bit count (every PTS equal and the last duration not positive, a step back at the end).
    public var spanTicks: Int64?
    /// The span in seconds, exact; nil with ``spanTicks``.
    public var span: Rational?
    /// Coded bytes over the span, kbit/s (1000 bit/s); nil without a span.
    public var achievedKbps: Double?
    /// x264's `bitrate` target in kbit/s (ABR, CBR, capped VBR), nil without one.
    public var targetKbps: Double?
    /// (achieved − target) / target · 100, nil without a target or a span.
    public var bitrateErrorPercent: Double?
    /// x264's warnings about timestamps (those naming PTS, DTS or timestamps), one entry per distinct text.
    public var x264Warnings: [(text: String, count: Int)]
    /// Each input frame's duration (the next input frame's PTS − its own, in input order; the last one as in
    /// ``spanTicks``) and how many frames have it, by duration.
    public var durationHistogram: [(ticks: Int64, count: Int)]

    /// A coded frame as the analysis reads it: its PTS and DTS in ticks of the run's timebase, and its bytes.
    public struct CodedFrame: Sendable, Equatable {
        public var pts: Int64
        public var dts: Int64
        public var sizeBytes: Int
        public init(pts: Int64, dts: Int64, sizeBytes: Int) {
            self.pts = pts; self.dts = dts; self.sizeBytes = sizeBytes
        }
    }

    public static func == (a: TimestampAnalysis, b: TimestampAnalysis) -> Bool {
        a.frames == b.frames && a.nonIncreasingInputPTS == b.nonIncreasingInputPTS && a.duplicateDTS == b.duplicateDTS
            && a.decreasingDTS == b.decreasingDTS && a.ptsBeforeDTS == b.ptsBeforeDTS
            && a.minCompositionOffset == b.minCompositionOffset && a.maxCompositionOffset == b.maxCompositionOffset
            && a.spanTicks == b.spanTicks && a.span == b.span && a.achievedKbps == b.achievedKbps
            && a.targetKbps == b.targetKbps && a.bitrateErrorPercent == b.bitrateErrorPercent
            && a.x264Warnings.elementsEqual(b.x264Warnings, by: { $0 == $1 })
            && a.durationHistogram.elementsEqual(b.durationHistogram, by: { $0 == $1 })
    }

    /// Analyses one run.
    /// - Parameters:
    ///   - inputPTS: the PTS handed to x264, by input frame (after `--seek`), in ticks.
    ///   - frames: the coded frames in decode order (their PTS, DTS and sizes).
    ///   - timebase: seconds per tick.
    ///   - lastDuration: the last input frame's duration in ticks where the source knows it, else nil (then
    ///     `nominalFrameTicks`).
    ///   - nominalFrameTicks: one frame at the clip's nominal rate, in ticks, rounded to nearest (≥ 1).
    ///   - targetKbps: x264's `bitrate`, if any.
    ///   - warnings: x264's warnings of the run (texts without the `x264: ` prefix).
    /// - Throws: nothing today (kept throwing for exact arithmetic that may need to refuse a value).
    public static func analyse(inputPTS: [Int64], frames: [CodedFrame], timebase: Rational, lastDuration: Int64?,
                               nominalFrameTicks: Int64, targetKbps: Double?, warnings: [String]) throws -> TimestampAnalysis {
        var nonIncreasing = 0
        var previous: Int64 = -1
        for p in inputPTS {
            if p <= previous { nonIncreasing += 1 }
            previous = p
        }
        var duplicate = 0, decreasing = 0, before = 0
        var minOffset = Int64.max, maxOffset = Int64.min
        for (k, f) in frames.enumerated() {
            if k > 0 {
                if f.dts == frames[k - 1].dts { duplicate += 1 }
                if f.dts < frames[k - 1].dts { decreasing += 1 }
            }
            if f.pts < f.dts { before += 1 }
            let offset = Int64(clamping: Int128(f.pts) - Int128(f.dts))
            minOffset = min(minOffset, offset)
            maxOffset = max(maxOffset, offset)
        }
        if frames.isEmpty { minOffset = 0; maxOffset = 0 }
        let last = lastDuration ?? nominalFrameTicks
        let pts = frames.map(\.pts)
        let spanWide = Int128(pts.max() ?? 0) - Int128(pts.min() ?? 0) + Int128(last)
        let spanTicks = Int64(exactly: spanWide).flatMap { $0 > 0 ? $0 : nil }
        let span = spanTicks.flatMap { try? timebase.times($0) }
        let bytes = frames.reduce(0) { $0 + $1.sizeBytes }
        let achieved = span.map { Double(bytes) * 8 / 1000 / $0.approximateValue }
        let error = achieved.flatMap { a in targetKbps.map { (a - $0) / $0 * 100 } }
        var counts: [String: Int] = [:], order: [String] = []
        for w in warnings where w.range(of: "pts", options: .caseInsensitive) != nil
            || w.range(of: "dts", options: .caseInsensitive) != nil || w.range(of: "timestamp", options: .caseInsensitive) != nil {
            if counts[w] == nil { order.append(w) }
            counts[w, default: 0] += 1
        }
        var histogram: [Int64: Int] = [:]
        for k in 0..<inputPTS.count {
            let d = k + 1 < inputPTS.count ? Int64(clamping: Int128(inputPTS[k + 1]) - Int128(inputPTS[k])) : last
            histogram[d, default: 0] += 1
        }
        return TimestampAnalysis(
            frames: inputPTS.count, nonIncreasingInputPTS: nonIncreasing, duplicateDTS: duplicate, decreasingDTS: decreasing,
            ptsBeforeDTS: before, minCompositionOffset: minOffset, maxCompositionOffset: maxOffset, spanTicks: span == nil ? nil : spanTicks,
            span: span, achievedKbps: achieved, targetKbps: targetKbps, bitrateErrorPercent: error,
            x264Warnings: order.map { ($0, counts[$0]!) },
            durationHistogram: histogram.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }
}
