import Foundation
import H264

/// The lab's VBV replay (``VBVReplay``) set against the stream's own HRD timing SEI: for a stream with NAL HRD
/// parameters (x264 `--nal-hrd vbr|cbr`), what its `buffering_period` and `pic_timing` SEI should say, derived from the
/// frame sizes and timestamps alone, and whether they say it to within one tick of the 90 kHz clock (issue 11).
///
/// What is derived, per access unit in decode order (frame k, DTS and PTS in ticks of the run's timebase):
/// - the replay runs with the HRD's own rate and size from the SPS (E.2.2: BitRate =
///   (bit_rate_value_minus1 + 1) · 2^(6 + bit_rate_scale), CpbSize = (cpb_size_value_minus1 + 1) · 2^(4 + cpb_size_scale)),
///   which x264 uses in place of vbv-maxrate and vbv-bufsize under nal-hrd (`x264_ratecontrol_init_reconfigurable`:
///   the kbit/s setting is truncated to the value/scale notation, 300 kbit/s becomes 4687 · 64 = 299,968 bit/s), and
///   CBR (arrival never stops) when `cbr_flag[0]` is 1; the initial fraction is read from `vbv-init` as x264 does,
///   with its floor of one frame's arrival computed from the HRD rate and size;
/// - at an access unit with a buffering period: `initial_cpb_removal_delay` = fullness before its removal × 90000 ÷
///   BitRate, and `initial_cpb_removal_delay_offset` = 90000 × CpbSize ÷ BitRate − that delay (exact values; x264 writes
///   both rounded down, `x264_hrd_fullness`);
/// - `cpb_removal_delay` = (DTS(k) − DTS(b)) ÷ t_c, where b is the latest earlier access unit with a buffering period
///   (0 for the first one of the stream, which has none before it: x264 writes 0), and t_c = num_units_in_tick ÷
///   time_scale seconds; `dpb_output_delay` = (PTS(k) − DTS(k)) ÷ t_c.
///
/// A value agrees when it is within one tick of the 90 kHz clock of the derived one: |SEI − derived| ≤ 1 for the
/// initial delays (already in 90 kHz units), |SEI − derived| × t_c ≤ 1/90000 s for the picture delays.
///
/// Where the lab's model and x264's differ (encoder/ratecontrol.c, `update_vbv` and `x264_hrd_fullness`;
/// encoder/set.c, `x264_sei_buffering_period_write` and `x264_sei_pic_timing_write`; encoder/slicetype.c,
/// `calculate_durations`):
/// - x264 keeps the fullness as an integer count of bits × time_scale and its initial value as
///   `(int64_t)(buffer_size × (double)f_vbv_buffer_init × time_scale)`, where `f_vbv_buffer_init` is a C float
///   (0.9 is 0.89999998): its start is below the lab's exact one by under a bit per Mbit of buffer, and truncated;
///   the lab's arithmetic is exact (``Rational``);
/// - x264 rounds `initial_cpb_removal_delay` down (`multiply_factor × cpb_state ÷ denom` in integers), and the offset
///   is the rounded-down total minus the rounded-down delay, so each is up to one 90 kHz tick below the exact value;
/// - after writing the delay x264 lowers its own `buffer_fill_final_min` to the fullness that the rounded delay
///   stands for (what a decoder will see) and uses that for underflow; the lab replays the exact fullness, so the two
///   can differ by less than one 90 kHz tick of arrival (BitRate ÷ 90000 bits) after each buffering period;
/// - x264 fills the buffer per frame by `bit_rate × num_units_in_tick × i_cpb_duration` (its duration in ticks, from
///   its own timestamps); the lab by the DTS step in the run's timebase. They agree for the lab's runs, whose DTS
///   steps are x264's;
/// - under CBR x264 adds filler data after a frame whose arrival would overflow the buffer (at least
///   FILLER_OVERHEAD bytes); the lab counts the filler in the access unit's size, as the stream carries it, so the
///   fullness after that access unit is the same;
/// - `cpb_removal_delay` in x264 is its running sum of frame durations since the last keyframe (reset at keyframes,
///   minus `i_cpb_delay_pir_offset` with periodic intra refresh); the lab counts from the access unit that carries the
///   buffering period SEI, which is the same for x264's streams;
/// - `dpb_output_delay` in x264 is the field count minus the coded fields plus 2 × num_reorder_frames; the lab takes
///   PTS − DTS, which x264's DTS (shifted back by the reorder delay) makes the same.
public enum HRDCheck {
    /// One frame of the run in decode order: its access unit's size (all its bytes, start codes and filler data
    /// included, as the lab's `frames.size_bytes`) and its timestamps in ticks of the run's timebase.
    public struct Frame: Sendable, Equatable {
        public var sizeBytes: Int
        public var dts: Int64
        public var pts: Int64

        public init(sizeBytes: Int, dts: Int64, pts: Int64) {
            self.sizeBytes = sizeBytes
            self.dts = dts
            self.pts = pts
        }
    }

    /// One SEI value set against the replay's.
    public struct Comparison: Sendable, Equatable {
        /// The frame's index in decode order.
        public var codedIndex: Int
        /// The syntax element: `initial_cpb_removal_delay`, `initial_cpb_removal_delay_offset`, `cpb_removal_delay`,
        /// `dpb_output_delay`, or `pic_timing` when the message is missing.
        public var element: String
        /// The value the SEI says (90 kHz ticks for the initial delays, clock ticks t_c for the others); nil when
        /// the message is missing.
        public var sei: Int?
        /// The value derived from the replay and the timestamps, exact, in the same unit.
        public var derived: Rational
        /// |sei − derived| in ticks of the 90 kHz clock; nil when the message is missing.
        public var difference90kHz: Rational?
        /// Whether `difference90kHz` ≤ 1.
        public var agrees: Bool { difference90kHz.map { $0 <= .one } ?? false }

        /// One line: `frame 12 cpb_removal_delay: SEI 24, replay 24 (0 ticks of 90 kHz)`.
        public var description: String {
            let value = sei.map(String.init) ?? "missing"
            let diff = difference90kHz.map { String(format: "%.3f", $0.approximateValue) } ?? "-"
            return "frame \(codedIndex) \(element): SEI \(value), replay \(derived) (\(diff) ticks of 90 kHz)"
        }
    }

    /// The comparison of one stream.
    public struct Report: Sendable {
        /// BitRate in bit/s and CpbSize in bits of the SPS's NAL HRD (SchedSelIdx 0), and its `cbr_flag[0]`.
        public var bitRate: Int64
        public var cpbSize: Int64
        public var cbr: Bool
        /// t_c = num_units_in_tick ÷ time_scale, seconds.
        public var clockTick: Rational
        /// The replay with the HRD's rate and size.
        public var replay: VBVReplay.Result
        /// Every value compared, in decode order.
        public var comparisons: [Comparison]
        /// Access units with a buffering period SEI, by coded index.
        public var bufferingPeriods: [Int]

        /// The comparisons that do not agree (nothing means the SEI and the replay agree everywhere).
        public var disagreements: [Comparison] { comparisons.filter { !$0.agrees } }

        /// One line for `enclab inspect`: `HRD SEI against the VBV replay (NAL HRD 299968 bit/s, CPB 300000 bits, cbr):
        /// 240 values agree within one 90 kHz tick` or `..., 3 of 240 disagree`.
        public var summary: String {
            let head = "HRD SEI against the VBV replay (NAL HRD \(bitRate) bit/s, CPB \(cpbSize) bits, \(cbr ? "cbr" : "vbr")): "
            let bad = disagreements.count
            return head + (bad == 0 ? "\(comparisons.count) values agree within one 90 kHz tick"
                                    : "\(bad) of \(comparisons.count) values disagree by more than one 90 kHz tick")
        }
    }

    /// Compares a stream file's HRD SEI with the replay of its frames; see ``HRDCheck``.
    /// - Parameters:
    ///   - streamPath: the stream (any format `enclab inspect` reads, detected).
    ///   - frames: one per coded frame in decode order, as the lab stores them.
    ///   - timebase: seconds per tick of `frames`' timestamps.
    ///   - parameters: the run's VBV settings; `vbvInit`, `bufsizeKbit` (for a `vbv-init` in kbit) and `frameRate` are
    ///     used; the rate, size and mode come from the SPS.
    ///   - strict: refuse an SEI that does not parse (``ParsePolicy``) rather than count its values as missing.
    /// - Throws: as ``Bitstream/open(_:)``, and as ``compare(_:frames:timebase:parameters:)``.
    public static func compare(streamPath: String, frames: [Frame], timebase: Rational, parameters: VBVReplay.Parameters,
                               strict: Bool = false) throws -> Report {
        var input = StreamInput(path: streamPath)
        input.strict = strict
        return try compare(try Bitstream.open(input), frames: frames, timebase: timebase, parameters: parameters)
    }

    /// Compares a parsed stream's HRD SEI (``ParsedStream/hrdTimings``) with the replay of its frames.
    /// - Throws: ``LabError`` `.data` naming the file when its SPS has no NAL HRD or no timing information, when it
    ///   is field-coded, when `frames` does not have one frame per access unit with a picture, or when values leave
    ///   exact 64-bit arithmetic; `.usage` for bad settings (``VBVReplay/Resolved/init(rateBitsPerSecond:bufferSizeBits:initialFraction:)``).
    public static func compare(_ parsed: ParsedStream, frames: [Frame], timebase: Rational,
                               parameters: VBVReplay.Parameters) throws -> Report {
        let path = parsed.path
        let pictures = parsed.accessUnits.indices.filter { parsed.accessUnits[$0].hasPrimaryPicture }
        guard !pictures.contains(where: { parsed.accessUnits[$0].fieldPicFlag }) else {
            throw LabError.data("\(path): field-coded; the HRD check compares frames only")
        }
        guard pictures.count == frames.count else {
            throw LabError.data("\(path): \(pictures.count) access units with a picture but \(frames.count) frames given")
        }
        guard let first = pictures.first, let sps = parsed.parameterSets.occurrences(for: parsed.accessUnits[first]).sps?.sps,
              let vui = sps.vuiParameters else {
            throw LabError.data("\(path): no SPS with VUI for the first picture")
        }
        guard vui.nalHrdParametersPresentFlag, let hrd = vui.nalHrdParameters else {
            throw LabError.data("\(path): the SPS has no NAL HRD parameters (nal_hrd_parameters_present_flag 0; x264 writes them with --nal-hrd vbr|cbr)")
        }
        guard let units = vui.numUnitsInTick, let scale = vui.timeScale, units > 0, scale > 0 else {
            throw LabError.data("\(path): the SPS has no timing information (num_units_in_tick, time_scale)")
        }
        do {
            let bitRate = Int64(hrd.bitRateValueMinus1[0] + 1) << (6 + hrd.bitRateScale)
            let cpbSize = Int64(hrd.cpbSizeValueMinus1[0] + 1) << (4 + hrd.cpbSizeScale)
            let cbr = hrd.cbrFlag[0]
            let tick = try Rational(Int64(units), Int64(scale))
            // x264's reading of vbv-init with the HRD's rate and size (x264_ratecontrol_init_reconfigurable).
            var fraction = parameters.vbvInit
            if fraction > .one { fraction = min(max(try fraction / Rational(parameters.bufsizeKbit), .zero), .one) }
            if let fps = parameters.frameRate, fps > .zero {
                fraction = max(fraction, try Rational(bitRate) / fps / Rational(cpbSize))
            }
            fraction = min(max(fraction, .zero), .one)
            let resolved = try VBVReplay.Resolved(rateBitsPerSecond: bitRate, bufferSizeBits: cpbSize, initialFraction: fraction)
            let replay = try VBVReplay.replay(bits: frames.map { Int64($0.sizeBytes) * 8 }, dts: frames.map(\.dts),
                                              timebase: timebase, resolved: resolved, mode: cbr ? .cbr : .vbr)
            let clock = Rational(90_000)
            let total = try clock * Rational(cpbSize) / Rational(bitRate)
            var comparisons: [Comparison] = []
            var bufferingPeriods: [Int] = []
            var lastBP: Int?
            func compare(_ k: Int, _ element: String, _ sei: Int?, _ derived: Rational, unit: Rational) throws {
                let diff = try sei.map { value -> Rational in
                    let d = try (Rational(Int64(value)) - derived) * unit * clock
                    return d < .zero ? try .zero - d : d
                }
                comparisons.append(Comparison(codedIndex: k, element: element, sei: sei, derived: derived, difference90kHz: diff))
            }
            for (k, a) in pictures.enumerated() {
                let timing = parsed.hrdTimings[a]
                if let bp = timing.bufferingPeriod {
                    bufferingPeriods.append(k)
                    let expected = try replay.frames[k].fullnessBeforeBits * clock / Rational(bitRate)
                    let delays = bp.nalHrd?.first
                    try compare(k, "initial_cpb_removal_delay", delays?.initialCpbRemovalDelay, expected, unit: try clock.reciprocal)
                    try compare(k, "initial_cpb_removal_delay_offset", delays?.initialCpbRemovalDelayOffset,
                                try total - expected, unit: try clock.reciprocal)
                }
                if let pt = timing.picTiming {
                    let since = lastBP.map { frames[$0].dts } ?? frames[k].dts
                    let cpb = try timebase.times(frames[k].dts - since) / tick
                    let dpb = try timebase.times(frames[k].pts - frames[k].dts) / tick
                    try compare(k, "cpb_removal_delay", pt.cpbRemovalDelay, cpb, unit: tick)
                    try compare(k, "dpb_output_delay", pt.dpbOutputDelay, dpb, unit: tick)
                } else {
                    comparisons.append(Comparison(codedIndex: k, element: "pic_timing", sei: nil,
                                                  derived: try timebase.times(frames[k].pts - frames[k].dts) / tick, difference90kHz: nil))
                }
                if timing.bufferingPeriod != nil { lastBP = k }
            }
            return Report(bitRate: bitRate, cpbSize: cpbSize, cbr: cbr, clockTick: tick, replay: replay,
                          comparisons: comparisons, bufferingPeriods: bufferingPeriods)
        } catch let error as LabError {
            throw error
        } catch {
            throw LabError.data("\(path): HRD check: values out of range of exact 64-bit arithmetic (\(error))")
        }
    }
}
