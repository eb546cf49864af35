import H264

/// Replays a run's frames through the VBV (video buffering verifier) buffer: a leaky bucket that fills at
/// vbv-maxrate and empties by each frame's bits at its decode time.
///
/// The model is the hypothetical reference decoder's coded picture buffer (H.264 Annex C, C.1: the CPB, with a
/// constant arrival rate) as x264 keeps it in `encoder/ratecontrol.c`:
/// - `x264_ratecontrol_init_reconfigurable` reads the settings: 1 kbit = 1000 bits (1024 only for AVC-Intra, which
///   this replay does not model); a buffer smaller than one frame's arrival (`vbv-maxrate / fps`, in whole kbit) is
///   raised to it; `vbv-init` above 1 is an absolute fullness in kbit and is divided by `vbv-bufsize`; the fraction
///   is raised to at least one frame's arrival (`vbv-maxrate / fps / bufsize`) and clipped to [0, 1]. The initial
///   fullness is `bufsize × init`.
/// - `update_vbv`, after each frame: fullness −= the frame's bits; below 0 is an underflow and fullness becomes 0;
///   then fullness += `maxrate × cpb_duration` (the time to the next frame's removal), and above the buffer size it
///   is capped there (or, under `--nal-hrd cbr` with filler, topped by filler data that the stream carries).
///
/// Here the same steps are written per frame k in decode order, with times from the DTS:
/// - before(0) = the initial fullness;
///   before(k) = min(after(k−1) + maxrate × (dts(k) − dts(k−1)) × timebase, bufsize) for k > 0;
/// - after(k) = before(k) − bits(k), or 0 when that is negative (an underflow of `bits(k) − before(k)` bits: the frame
///   was not all in the buffer at its decode time);
/// - an overflow at frame k is the arrival cut off by the cap just before its removal. Under VBR the encoder simply
///   stops sending while the buffer is full, so that is no violation and is only recorded on the frame; under CBR
///   (x264 `--nal-hrd cbr`, the arrival never stops) it is a violation and becomes an event.
///
/// The replay ends at the last frame's removal (x264 also adds the last frame's duration; no later frame sees it).
/// It does not model x264's `buffer_fill_final_min` (the HRD's initial removal delay rounded to the 90 kHz clock),
/// which can only lower x264's own estimate by less than one 90 kHz tick of arrival. x264 holds `vbv-init` as a C
/// float (0.9 becomes 0.89999998), so its initial fullness can differ from this exact one by under a bit per Mbit.
///
/// ``HRDCheck`` replays with a stream's own HRD rate and size (``replay(bits:dts:timebase:resolved:mode:)``) and sets
/// the result against the stream's buffering period and picture timing SEI.
///
/// Units: sizes and fullness in bits, rates in bits per second (settings in kbit/s and kbit), times in ticks of a
/// ``Rational`` timebase (seconds per tick). All arithmetic is exact (``Rational``, integers); the `Double`
/// properties are for display only.
public enum VBVReplay {
    /// Whether the buffer's arrival may stop when it is full.
    public enum Mode: String, Sendable, Equatable {
        /// Capped VBR (and ABR or CRF with a VBV): a full buffer stops the arrival; overflow is no violation.
        case vbr
        /// CBR (x264 `--nal-hrd cbr`): the arrival never stops; a fullness above the buffer size is a violation.
        case cbr
    }

    /// A run's VBV settings, as x264's options spell them.
    public struct Parameters: Sendable, Equatable {
        /// `--vbv-maxrate` in kbit/s (1 kbit = 1000 bits), > 0.
        public var maxrateKbps: Int64
        /// `--vbv-bufsize` in kbit, > 0.
        public var bufsizeKbit: Int64
        /// `--vbv-init`: a fraction of the buffer (≤ 1) or an absolute fullness in kbit (> 1). x264's default is 0.9.
        public var vbvInit: Rational
        public var mode: Mode
        /// The run's nominal frame rate (x264's `rc->fps`, frames per second), for x264's two one-frame floors (the
        /// buffer size and the initial fraction); nil applies neither.
        public var frameRate: Rational?

        public init(maxrateKbps: Int64, bufsizeKbit: Int64, vbvInit: Rational = Parameters.defaultInit,
                    mode: Mode = .vbr, frameRate: Rational? = nil) {
            self.maxrateKbps = maxrateKbps
            self.bufsizeKbit = bufsizeKbit
            self.vbvInit = vbvInit
            self.mode = mode
            self.frameRate = frameRate
        }

        /// x264's default `vbv-init`, 0.9 (x264's `common/base.c`: `f_vbv_buffer_init = 0.9`).
        public static let defaultInit: Rational = try! Rational(9, 10)
    }

    /// The settings as x264 reads them (see ``VBVReplay``).
    public struct Resolved: Sendable, Equatable {
        /// The arrival rate in bits per second (maxrate × 1000).
        public var rateBitsPerSecond: Int64
        /// The buffer size in bits, after the one-frame floor (bufsize × 1000).
        public var bufferSizeBits: Int64
        /// The initial fullness as a fraction of the buffer, in [0, 1].
        public var initialFraction: Rational
        /// The initial fullness in bits (bufferSizeBits × initialFraction).
        public var initialFullnessBits: Rational

        /// Settings already read: a rate and size in bits (e.g. a stream's HRD parameters, see ``HRDCheck``) and the
        /// initial fraction; the initial fullness is `bufferSizeBits × initialFraction`.
        /// - Throws: ``LabError`` `.usage` for a rate or size ≤ 0 or a fraction outside [0, 1].
        public init(rateBitsPerSecond: Int64, bufferSizeBits: Int64, initialFraction: Rational) throws {
            guard rateBitsPerSecond > 0 else { throw LabError.usage("VBV rate \(rateBitsPerSecond) bit/s: must be > 0") }
            guard bufferSizeBits > 0 else { throw LabError.usage("VBV buffer size \(bufferSizeBits) bits: must be > 0") }
            guard initialFraction >= .zero, initialFraction <= .one else {
                throw LabError.usage("VBV initial fraction \(initialFraction): must be in [0, 1]")
            }
            self.rateBitsPerSecond = rateBitsPerSecond
            self.bufferSizeBits = bufferSizeBits
            self.initialFraction = initialFraction
            self.initialFullnessBits = try Rational(bufferSizeBits) * initialFraction
        }

        init(rateBitsPerSecond: Int64, bufferSizeBits: Int64, initialFraction: Rational, initialFullnessBits: Rational) {
            self.rateBitsPerSecond = rateBitsPerSecond
            self.bufferSizeBits = bufferSizeBits
            self.initialFraction = initialFraction
            self.initialFullnessBits = initialFullnessBits
        }
    }

    /// One frame's passage through the buffer, in decode order.
    public struct Frame: Sendable, Equatable {
        /// Decode index (0-based position in the input).
        public var codedIndex: Int
        /// DTS in ticks of the timebase.
        public var dts: Int64
        /// The frame's size in bits.
        public var bits: Int64
        /// Fullness just before the frame is removed, in bits (≤ the buffer size).
        public var fullnessBeforeBits: Rational
        /// Fullness just after it is removed, in bits (≥ 0: 0 after an underflow).
        public var fullnessAfterBits: Rational
        /// Bits of the frame that were not in the buffer at its decode time (bits − before), or 0.
        public var underflowBits: Rational
        /// Arrival cut off by the cap in the interval ending at this frame's removal, in bits, or 0.
        public var overflowBits: Rational

        /// `fullnessBeforeBits` as a Double, for display.
        public var fullnessBefore: Double { fullnessBeforeBits.approximateValue }
        /// `fullnessAfterBits` as a Double, for display.
        public var fullnessAfter: Double { fullnessAfterBits.approximateValue }
    }

    /// A violation of the buffer.
    public enum Event: Sendable, Equatable {
        /// The frame at `codedIndex` had `deficitBits` more bits than the buffer held at its decode time.
        case underflow(codedIndex: Int, deficitBits: Rational)
        /// Under CBR only: `excessBits` of arrival found the buffer full before the removal of frame `codedIndex`.
        case overflow(codedIndex: Int, excessBits: Rational)
    }

    public struct Result: Sendable, Equatable {
        public var resolved: Resolved
        /// One per input frame, in decode order.
        public var frames: [Frame]
        /// Underflows (any mode) and overflows (CBR only), in decode order.
        public var events: [Event]
    }

    /// Reads x264's settings (see ``VBVReplay`` for the rules and their source).
    /// - Throws: ``LabError`` `.usage` for a maxrate or bufsize ≤ 0, a frame rate ≤ 0, or values too large to compute.
    public static func resolve(_ p: Parameters) throws -> Resolved {
        guard p.maxrateKbps > 0 else { throw LabError.usage("vbv-maxrate \(p.maxrateKbps) kbit/s: must be > 0") }
        guard p.bufsizeKbit > 0 else { throw LabError.usage("vbv-bufsize \(p.bufsizeKbit) kbit: must be > 0") }
        if let fps = p.frameRate, fps <= .zero { throw LabError.usage("frame rate \(fps): must be > 0") }
        do {
            var bufsizeKbit = p.bufsizeKbit
            // if( i_vbv_buffer_size < (int)(i_vbv_max_bitrate / rc->fps) ) i_vbv_buffer_size = i_vbv_max_bitrate / rc->fps;
            if let fps = p.frameRate {
                let oneFrameKbit = try Rational(p.maxrateKbps) / fps
                let whole = Int64(oneFrameKbit.numerator / oneFrameKbit.denominator)  // truncation, as C's (int)
                if bufsizeKbit < whole { bufsizeKbit = whole }
            }
            let (rate, rateOverflow) = p.maxrateKbps.multipliedReportingOverflow(by: 1000)
            let (size, sizeOverflow) = bufsizeKbit.multipliedReportingOverflow(by: 1000)
            guard !rateOverflow, !sizeOverflow else {
                throw LabError.usage("vbv-maxrate \(p.maxrateKbps) or vbv-bufsize \(bufsizeKbit): too large")
            }
            var fraction = p.vbvInit
            if fraction > .one { fraction = clip(try fraction / Rational(bufsizeKbit)) }
            if let fps = p.frameRate {
                let oneFrame = try Rational(rate) / fps / Rational(size)
                fraction = max(fraction, oneFrame)
            }
            fraction = clip(fraction)
            return Resolved(rateBitsPerSecond: rate, bufferSizeBits: size, initialFraction: fraction,
                            initialFullnessBits: try Rational(size) * fraction)
        } catch let error as LabError {
            throw error
        } catch {
            throw LabError.usage("VBV settings maxrate \(p.maxrateKbps) bufsize \(p.bufsizeKbit) init \(p.vbvInit): too large to compute (\(error))")
        }
    }

    /// Replays frames through the buffer.
    /// - Parameters:
    ///   - bits: each frame's size in bits (all of its access unit's bytes × 8), decode order, each ≥ 0.
    ///   - dts: decode timestamps in ticks, same order and count, non-decreasing.
    ///   - timebase: seconds per tick (> 0).
    ///   - parameters: the run's VBV settings.
    /// - Throws: ``LabError`` `.usage` for bad settings (see ``resolve(_:)``) or a timebase ≤ 0; `.data` for counts
    ///   that differ, a negative size, a decreasing DTS, or values whose exact arithmetic leaves 64 bits (naming the
    ///   frame).
    public static func replay(bits: [Int64], dts: [Int64], timebase: Rational, parameters: Parameters) throws -> Result {
        guard timebase > .zero else { throw LabError.usage("timebase \(timebase): must be > 0") }
        guard bits.count == dts.count else {
            throw LabError.data("VBV replay: \(bits.count) frame sizes but \(dts.count) DTS values")
        }
        return try replay(bits: bits, dts: dts, timebase: timebase, resolved: try resolve(parameters), mode: parameters.mode)
    }

    /// Replays frames through a buffer whose settings are already read (``Resolved``): as
    /// ``replay(bits:dts:timebase:parameters:)``, e.g. with a stream's own HRD rate and size (``HRDCheck``).
    /// - Throws: ``LabError`` `.usage` for a timebase ≤ 0; `.data` as ``replay(bits:dts:timebase:parameters:)``.
    public static func replay(bits: [Int64], dts: [Int64], timebase: Rational, resolved: Resolved, mode: Mode) throws -> Result {
        guard timebase > .zero else { throw LabError.usage("timebase \(timebase): must be > 0") }
        guard bits.count == dts.count else {
            throw LabError.data("VBV replay: \(bits.count) frame sizes but \(dts.count) DTS values")
        }
        let size = Rational(resolved.bufferSizeBits)
        var frames: [Frame] = []
        var events: [Event] = []
        frames.reserveCapacity(bits.count)
        var fullness = resolved.initialFullnessBits  // after the previous removal (the initial fullness for frame 0)
        for k in bits.indices {
            guard bits[k] >= 0 else { throw LabError.data("VBV replay: frame \(k): size \(bits[k]) bits is negative") }
            if k > 0 {
                guard dts[k] >= dts[k - 1] else {
                    throw LabError.data("VBV replay: frame \(k): DTS \(dts[k]) is before the previous frame's \(dts[k - 1])")
                }
            }
            do {
                var overflow = Rational.zero
                if k > 0 {
                    let (ticks, wrapped) = dts[k].subtractingReportingOverflow(dts[k - 1])
                    guard !wrapped else { throw LabError.data("VBV replay: frame \(k): DTS step out of range") }
                    let arrival = try Rational(resolved.rateBitsPerSecond) * timebase.times(ticks)
                    fullness = try fullness + arrival
                    if fullness > size {
                        overflow = try fullness - size
                        fullness = size
                    }
                }
                let before = fullness
                var after = try before - Rational(bits[k])
                var underflow = Rational.zero
                if after < .zero {
                    underflow = try .zero - after
                    after = .zero
                }
                fullness = after
                frames.append(Frame(codedIndex: k, dts: dts[k], bits: bits[k], fullnessBeforeBits: before,
                                    fullnessAfterBits: after, underflowBits: underflow, overflowBits: overflow))
                if overflow > .zero && mode == .cbr {
                    events.append(.overflow(codedIndex: k, excessBits: overflow))
                }
                if underflow > .zero { events.append(.underflow(codedIndex: k, deficitBits: underflow)) }
            } catch let error as LabError {
                throw error
            } catch {
                throw LabError.data("VBV replay: frame \(k): fullness out of range of exact 64-bit arithmetic (\(error))")
            }
        }
        return Result(resolved: resolved, frames: frames, events: events)
    }

    /// Parses a `vbv-init` value as x264's options write it: digits with an optional decimal fraction
    /// (`0.9`, `.5`, `1500`), exactly (`0.9` is 9/10).
    /// - Returns: nil for any other text (signs, exponents, more than 18 digits).
    public static func parseInit(_ text: String) -> Rational? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !(whole.isEmpty && fraction.isEmpty), whole.count + fraction.count <= 18,
              whole.allSatisfy({ $0.isASCII && $0.isNumber }), fraction.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        guard let digits = Int64(whole + fraction) else { return nil }
        var scale: Int64 = 1
        for _ in 0..<fraction.count { scale *= 10 }
        return try? Rational(digits, scale)
    }

    private static func clip(_ x: Rational) -> Rational { min(max(x, .zero), .one) }
}
