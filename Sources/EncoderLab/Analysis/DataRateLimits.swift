import H264

/// VideoToolbox's `kVTCompressionPropertyKey_DataRateLimits`: zero, one or two hard limits on the data rate, each
/// `bytes` in `seconds`, and the lab's mapping of them onto one x264 VBV and its exact check of a coded stream.
///
/// Apple's definition (VTCompressionProperties.h; developer.apple.com/documentation/videotoolbox/
/// kvtcompressionpropertykey_dataratelimits): each limit is a data size in bytes and a duration in seconds, and the
/// compressed data of any contiguous segment of that duration, in decode time, must not exceed the size. The property
/// is a CFArray of an even number of CFNumbers alternating bytes and seconds; no limit is set by default. Apple QA1958
/// (developer.apple.com/library/archive/qa/qa1958) adds that the limits are listed in order of precedence, the most
/// important or restrictive first, and that some encoders honour only the first (the lab's `vt-compat` mode does
/// that: ``firstPairOnly``). Without AverageBitRate, VideoToolbox picks an average target "at a safe margin below" the
/// limits; the lab's choice is ``abrTargetKbps(for:)``.
///
/// Three parts, all exact (integers and ``Rational``, no floating point in any decision):
/// - **Values.** ``init(parsing:)`` reads the command line's flat array `BYTES,SECONDS[,BYTES,SECONDS]`;
///   ``init(values:)`` the same numbers as separate texts (an experiment file's list of pairs).
/// - **The VBV.** ``vbv(frameRate:)`` maps the limits onto x264's `vbv-maxrate` and `vbv-bufsize` so that a stream
///   honouring that VBV cannot exceed any limit in any window.
/// - **The check.** ``check(dtsTicks:sizesBytes:timebase:)`` counts the bytes of every window of each limit's length
///   in a coded stream and reports the worst window and the windows over the limit.
public struct DataRateLimits: Sendable, Equatable, CustomStringConvertible {
    /// One hard limit: at most `bytes` bytes in any `seconds` seconds of decode time.
    public struct Pair: Sendable, Equatable, CustomStringConvertible {
        /// The data size in bytes, 1 ... ``DataRateLimits/maxBytes``.
        public let bytes: Int64
        /// The window's duration in seconds, > 0.
        public let seconds: Rational

        /// `BYTES,SECONDS`, the seconds as a decimal when they have one (`50000,0.1`), else as `N/D`.
        public var description: String { "\(bytes),\(DataRateLimits.decimal(seconds))" }
    }

    /// The limits in Apple's order of precedence (most important first): 0, 1 or 2 of them.
    public let pairs: [Pair]

    /// The largest byte count a limit may hold: Int64.max / 8, so that its size in bits fits in 64 bits.
    public static let maxBytes: Int64 = Int64.max / 8

    /// No limit (Apple's default).
    public static let unlimited = DataRateLimits(validated: [])

    private init(validated pairs: [Pair]) { self.pairs = pairs }

    /// The flat form, `BYTES,SECONDS[,BYTES,SECONDS]`; empty for no limit.
    public var description: String { pairs.map(\.description).joined(separator: ",") }

    /// The first pair alone (what `vt-compat` honours: QA1958 says some encoders use only the first limit); the
    /// value itself when it has fewer than two pairs.
    public var firstPairOnly: DataRateLimits { DataRateLimits(validated: Array(pairs.prefix(1))) }

    /// Limits from whole bytes and exact seconds.
    /// - Throws: `.usage` naming `DataRateLimits` and the flat value for more than two pairs, bytes outside
    ///   1 ... ``maxBytes`` or seconds ≤ 0 (the messages of ``init(values:)``).
    public init(pairs: [(bytes: Int64, seconds: Rational)]) throws {
        let shown = pairs.map { "\($0.bytes),\(Self.decimal($0.seconds))" }.joined(separator: ",")
        guard pairs.count <= 2 else { throw Self.bad(shown, "\(pairs.count) pairs: at most two BYTES,SECONDS pairs") }
        var checked: [Pair] = []
        for (n, p) in pairs.enumerated() {
            guard p.bytes > 0 else { throw Self.bad(shown, "pair \(n + 1): bytes '\(p.bytes)' must be above 0") }
            guard p.bytes <= Self.maxBytes else {
                throw Self.bad(shown, "pair \(n + 1): bytes '\(p.bytes)' is above \(Self.maxBytes)")
            }
            guard p.seconds > .zero else {
                throw Self.bad(shown, "pair \(n + 1): seconds '\(Self.decimal(p.seconds))' must be above 0")
            }
            checked.append(Pair(bytes: p.bytes, seconds: p.seconds))
        }
        self.pairs = checked
    }

    /// Parses Apple's flat array as the command line writes it: `BYTES,SECONDS[,BYTES,SECONDS]`, for example
    /// `250000,1,50000,0.1`. Text that is empty or only spaces is no limit. See ``init(values:)`` for the numbers.
    /// - Throws: `.usage`, as ``init(values:)``.
    public init(parsing text: String) throws {
        if text.allSatisfy({ $0 == " " || $0 == "\t" }) {
            self = .unlimited
            return
        }
        try self.init(values: text.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
                      shown: text)
    }

    /// The limits from their numbers' texts in Apple's order: bytes, seconds, bytes, seconds (0, 2 or 4 texts).
    ///
    /// Bytes are whole decimal numbers 1 ... ``maxBytes``; seconds are decimals (`1`, `0.1`, `.5`, `2.`; no sign,
    /// no exponent, at most 18 decimal places after trailing zeros are dropped) above 0, read exactly: `0.1` is 1/10.
    /// Spaces around a number are ignored.
    /// - Throws: `.usage` with a one-line message naming `DataRateLimits`, the whole value and the fault, e.g.
    ///   `bad value for DataRateLimits: '250000,1,5' (3 numbers: expected BYTES,SECONDS pairs)`: an odd count, more
    ///   than two pairs, a number that is not finite (`inf`, `nan`), bytes that are not a whole number, not above 0 or
    ///   above ``maxBytes``, seconds that are not a decimal, not above 0, too large for 64 bits or too precise.
    public init(values: [String]) throws {
        try self.init(values: values, shown: values.joined(separator: ","))
    }

    private init(values: [String], shown: String) throws {
        guard values.count % 2 == 0 else {
            throw Self.bad(shown, "\(values.count) numbers: expected BYTES,SECONDS pairs")
        }
        guard values.count <= 4 else {
            throw Self.bad(shown, "\(values.count / 2) pairs: at most two BYTES,SECONDS pairs")
        }
        var pairs: [Pair] = []
        for n in 0 ..< values.count / 2 {
            let bytesText = Self.trimmed(values[2 * n]), secondsText = Self.trimmed(values[2 * n + 1])
            let bytes = try Self.parseBytes(bytesText, pair: n + 1, shown: shown)
            let seconds = try Self.parseSeconds(secondsText, pair: n + 1, shown: shown)
            pairs.append(Pair(bytes: bytes, seconds: seconds))
        }
        self.pairs = pairs
    }

    // MARK: - Parsing helpers

    static func bad(_ shown: String, _ what: String) -> LabError {
        LabError.usage("bad value for DataRateLimits: '\(shown)' (\(what))")
    }

    private static func trimmed(_ s: String) -> String {
        String(s.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }

    private static func isNonFinite(_ s: String) -> Bool {
        let body = s.first == "+" || s.first == "-" ? String(s.dropFirst()) : s
        return ["inf", "infinity", "nan"].contains(body.lowercased())
    }

    private static func isDigits(_ s: Substring) -> Bool { !s.isEmpty && s.allSatisfy { $0.isASCII && $0.isNumber } }

    /// Splits an optionally signed decimal `D+`, `D+.D*` or `.D+` into its sign, whole digits and fraction digits.
    private static func decimalParts(_ s: String) -> (negative: Bool, whole: Substring, fraction: Substring)? {
        var body = Substring(s)
        var negative = false
        if body.first == "-" { negative = true; body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count == 2 ? parts[1] : ""
        guard whole.isEmpty || isDigits(whole), fraction.isEmpty || isDigits(fraction),
              !(whole.isEmpty && fraction.isEmpty) else { return nil }
        return (negative, whole, fraction)
    }

    private static func parseBytes(_ s: String, pair n: Int, shown: String) throws -> Int64 {
        if isNonFinite(s) { throw bad(shown, "pair \(n): bytes '\(s)' is not finite") }
        guard let parts = decimalParts(s), parts.fraction.isEmpty, !parts.whole.isEmpty, !s.hasSuffix(".") else {
            throw bad(shown, "pair \(n): bytes '\(s)' is not a whole number")
        }
        let significant = parts.whole.drop(while: { $0 == "0" })
        if significant.isEmpty || parts.negative { throw bad(shown, "pair \(n): bytes '\(s)' must be above 0") }
        guard significant.count <= 19, let value = Int64(significant), value <= maxBytes else {
            throw bad(shown, "pair \(n): bytes '\(s)' is above \(maxBytes)")
        }
        return value
    }

    private static func parseSeconds(_ s: String, pair n: Int, shown: String) throws -> Rational {
        if isNonFinite(s) { throw bad(shown, "pair \(n): seconds '\(s)' is not finite") }
        guard let parts = decimalParts(s) else {
            throw bad(shown, "pair \(n): seconds '\(s)' is not a decimal number")
        }
        let fraction = String(parts.fraction.reversed().drop(while: { $0 == "0" }).reversed())
        let significant = parts.whole.drop(while: { $0 == "0" })
        if parts.negative || (significant.isEmpty && fraction.isEmpty) {
            throw bad(shown, "pair \(n): seconds '\(s)' must be above 0")
        }
        guard fraction.count <= 18 else { throw bad(shown, "pair \(n): seconds '\(s)' has more than 18 decimal places") }
        var scale: Int128 = 1
        for _ in 0 ..< fraction.count { scale *= 10 }
        let whole = significant.count <= 19 ? Int128(significant.isEmpty ? "0" : String(significant)) : nil
        let numerator = whole.map { $0 * scale + (Int128(fraction.isEmpty ? "0" : fraction) ?? 0) }
        guard let numerator, numerator <= Int128(Int64.max), let value = try? Rational(Int64(numerator), Int64(scale)) else {
            throw bad(shown, "pair \(n): seconds '\(s)' is too large (at most \(Int64.max) in units of its last decimal place)")
        }
        return value
    }

    /// A positive rational as a terminating decimal when its denominator has no prime factor but 2 and 5
    /// (`1/10` → `0.1`, `5/2` → `2.5`, `3` → `3`), else `N/D`.
    static func decimal(_ r: Rational) -> String {
        var d = r.denominator, twos = 0, fives = 0
        while d % 2 == 0 { d /= 2; twos += 1 }
        while d % 5 == 0 { d /= 5; fives += 1 }
        guard d == 1, r.numerator >= 0 else { return r.description }
        let places = max(twos, fives)
        guard places > 0 else { return "\(r.numerator)" }
        var scale: Int128 = 1
        for _ in 0 ..< places { scale *= 10 }
        let scaled = Int128(r.numerator) * (scale / Int128(r.denominator))
        let (whole, frac) = scaled.quotientAndRemainder(dividingBy: scale)
        let digits = String(frac)
        return "\(whole)." + String(repeating: "0", count: places - digits.count) + digits
    }

    // MARK: - The VBV

    /// An x264 VBV: `vbv-maxrate` and `vbv-bufsize` as x264 takes them, whole kbit/s and kbit with 1 kbit = 1000 bit
    /// (x264's ratecontrol.c multiplies both by 1000).
    public struct VBV: Sendable, Equatable {
        /// `vbv-maxrate` (x264.h `rc.i_vbv_max_bitrate`), kbit/s, 1 ... ``DataRateLimits/maxKbit``.
        public let maxrateKbps: Int
        /// `vbv-bufsize` (x264.h `rc.i_vbv_buffer_size`), kbit, 1 ... ``DataRateLimits/maxKbit``.
        public let bufsizeKbit: Int
    }

    /// The buffer's share of the smallest limit: `vbv-bufsize` is at least a quarter of the smallest limit's bits.
    public static let bufferShare = (numerator: 1, denominator: 4)

    /// The largest `vbv-maxrate` (kbit/s) and `vbv-bufsize` (kbit) the lab hands x264: x264 multiplies each by 1000
    /// in a C int, so 2,147,483.
    public static let maxKbit = Int(Int32.max) / 1000

    /// One x264 VBV that keeps a stream within every limit, or nil for no limit.
    ///
    /// **Why it holds.** With maxrate R (bit/s) and a buffer of S bits, bits enter the decoder's buffer at no more
    /// than R and each frame leaves it whole at its DTS; the buffer never holds more than S. The frames removed in a
    /// window [t, t + W) were in the buffer at t or arrived during the window, so they total at most S + R·W bits. A
    /// stream honouring the VBV therefore keeps every limit (B_i bytes in W_i seconds) when
    /// `S + R·W_i ≤ 8·B_i` for every pair; this function returns R and S satisfying each inequality exactly.
    ///
    /// **The split.** The buffer gets a quarter (``bufferShare``) of the smallest limit's budget, rounded down to
    /// whole kbit: S₀ = ⌊min_i 8·B_i / 4000⌋ kbit (no frame can exceed the smallest budget anyway, so the buffer is
    /// measured against it). The rate gets what is left: R is the largest whole kbit/s for which
    /// `1000·S(R) + 1000·R·W_i ≤ 8·B_i` holds for every pair, where S(R) = max(S₀, ⌈R / frameRate⌉) kbit. The second
    /// term is one frame at R, rounded up: x264 raises a `vbv-bufsize` below one frame (ratecontrol.c, "VBV buffer
    /// size cannot be smaller than one frame", truncating maxrate / fps in floating point), which could break an
    /// inequality; S ≥ R / frameRate exactly leaves x264 nothing to raise while a frame's kbit stays below 2^24.
    /// Both values are rounded down, and capped at ``maxKbit``; smaller values only tighten the bound.
    /// R is maximal: at R + 1 kbit/s (with S(R + 1)) some inequality fails, or R + 1 is above ``maxKbit``.
    ///
    /// **Worked example** (two pairs: 250,000 bytes in 1 s and 50,000 bytes in 0.1 s). The budgets are
    /// 8 × 250,000 = 2,000,000 bits and 8 × 50,000 = 400,000 bits; the smallest is 400,000, so
    /// S₀ = ⌊400,000 / 4000⌋ = 100 kbit. At 30 fps one frame at R is at most 1900 / 30 < 64 kbit, below S₀, so S = 100:
    /// - pair 1: 100,000 + R·1000·1 ≤ 2,000,000 → R ≤ 1900;
    /// - pair 2: 100,000 + R·1000·0.1 ≤ 400,000 → R ≤ 3000;
    /// so `vbv-maxrate` 1900 kbit/s, `vbv-bufsize` 100 kbit (windows of at most 2,000,000 and 290,000 bits; R = 1901
    /// would allow 2,001,000 bits in a second). At 15 fps one frame at 1900 kbit/s is 126.7 kbit, above S₀, so the
    /// buffer grows with R: S = ⌈R / 15⌉. R = 1875 gives S = 125 and 125,000 + 1,875,000 = 2,000,000 ≤ 2,000,000 (pair
    /// 2: 125,000 + 187,500 = 312,500 ≤ 400,000); R = 1876 gives S = 126 and 2,002,000 > 2,000,000. So 1875 kbit/s and
    /// 125 kbit. Under `vt-compat` (the first pair alone) S₀ = ⌊2,000,000 / 4000⌋ = 500 kbit and R = 1500 kbit/s:
    /// dropping the short window frees the buffer rather than the rate.
    ///
    /// - Parameters:
    ///   - frameRate: the frame rate x264 is given (`i_fps_num / i_fps_den`, frames per second, > 0).
    ///   - vtCompat: honour the first pair only (``firstPairOnly``).
    /// - Throws: `.usage` naming `DataRateLimits` and the value when the limits are too small for a VBV in whole
    ///   kbit (`vbv-bufsize` or `vbv-maxrate` would be 0, which x264 reads as "no VBV").
    public func vbv(frameRate: Rational, vtCompat: Bool = false) throws -> VBV? {
        precondition(frameRate > .zero, "a frame rate above 0")
        let honoured = vtCompat ? firstPairOnly.pairs : pairs
        guard !honoured.isEmpty else { return nil }
        let shown = (vtCompat ? firstPairOnly : self).description
        let cap = Int128(Self.maxKbit)
        let bits = honoured.map { Int128($0.bytes) * 8 }
        let minBits = bits.min()!
        let s0 = min(cap, minBits * Int128(Self.bufferShare.numerator) / (1000 * Int128(Self.bufferShare.denominator)))
        guard s0 >= 1 else {
            throw Self.bad(shown, "too small for an x264 VBV in whole kbit: vbv-bufsize would be 0 kbit")
        }
        // S(R) = max(S0, ceil(R / f)) with f = fn/fd: R / f = R·fd / fn.
        let fn = Int128(frameRate.numerator), fd = Int128(frameRate.denominator)
        func bufsize(_ r: Int128) -> Int128 { max(s0, (r * fd + fn - 1) / fn) }
        // 1000·S + 1000·R·p/q ≤ bits  <=>  1000·S·q + 1000·R·p ≤ bits·q  (bits < 2^63, q < 2^63: below 2^126).
        func fits(_ r: Int128) -> Bool {
            let s = bufsize(r)
            guard s <= cap else { return false }
            for (pair, b) in zip(honoured, bits) {
                let p = Int128(pair.seconds.numerator), q = Int128(pair.seconds.denominator)
                if 1000 * s * q + 1000 * r * p > b * q { return false }
            }
            return true
        }
        // Since S(R) >= S0, R can be no larger than with S0 alone: floor((bits - 1000·S0)·q / (1000·p)) for each pair.
        var high = cap
        for (pair, b) in zip(honoured, bits) {
            let p = Int128(pair.seconds.numerator), q = Int128(pair.seconds.denominator)
            high = min(high, max(0, (b - 1000 * s0)) * q / (1000 * p))
        }
        guard high >= 1, fits(1) else {
            throw Self.bad(shown, "too small for an x264 VBV in whole kbit: vbv-maxrate would be 0 kbit/s")
        }
        // fits is monotone (both S(R) and R·W grow with R): the largest R in 1 ... high that fits.
        var low: Int128 = 1
        while low < high {
            let mid = low + (high - low + 1) / 2
            if fits(mid) { low = mid } else { high = mid - 1 }
        }
        return VBV(maxrateKbps: Int(low), bufsizeKbit: Int(bufsize(low)))
    }

    /// The lab's ABR target when DataRateLimits is given without AverageBitRate: two thirds of `vbv-maxrate`, rounded
    /// down to whole kbit/s (at least 1).
    ///
    /// Apple selects an average "at a safe margin below" the limits without saying how far; the lab keeps the ratio
    /// of its own `--rc vbr` (`vbv-maxrate` = ``vbrDefaultMaxrateFactor`` × bitrate = 1.5 × bitrate). In the worked
    /// example of ``vbv(frameRate:vtCompat:)`` at 30 fps: ⌊2 × 1900 / 3⌋ = 1266 kbit/s. The target stays below R, so
    /// x264 does not turn the encode into CBR (it does when `vbv-maxrate` ≤ `bitrate`).
    public static func abrTargetKbps(for vbv: VBV) -> Int {
        max(1, vbv.maxrateKbps * 2 / 3)
    }

    // MARK: - The exact window check

    /// One window of decode time, [start, start + W).
    public struct Window: Sendable, Equatable {
        /// Decode index of the first frame in the window (the frame whose DTS starts it).
        public let startIndex: Int
        /// Decode index of the last frame in the window.
        public let endIndex: Int
        /// The window's start in ticks: the running maximum DTS at `startIndex`.
        public let startTicks: Int64
        /// The bytes of the frames in the window.
        public let bytes: Int64
        /// `bytes` divided by the limit's bytes, exact (above 1 means over the limit).
        public let ratio: Rational
    }

    /// The check of one limit.
    public struct WindowCheck: Sendable, Equatable {
        public let pair: Pair
        /// The number of windows: one per distinct window start (frames sharing a DTS share their window).
        public let windowCount: Int
        /// The windows holding more than `pair.bytes` bytes (exactly `pair.bytes` passes: Apple's "not exceed"): each
        /// is one violation (`enclab check` counts them all and prints the pair once, with ``worst``).
        public let windowsOverLimit: Int
        /// The window with the most bytes (the earliest of equals); nil for a stream without frames.
        public let worst: Window?
    }

    /// Checks a coded stream against every limit (all pairs, whatever the encode honoured), in pair order.
    /// See ``check(pair:dtsTicks:sizesBytes:timebase:)``.
    public func check(dtsTicks: [Int64], sizesBytes: [Int], timebase: Rational) throws -> [WindowCheck] {
        try pairs.map { try Self.check(pair: $0, dtsTicks: dtsTicks, sizesBytes: sizesBytes, timebase: timebase) }
    }

    /// Counts the bytes of every window of the pair's length over decode time, exactly, in O(n), by the lab's one
    /// window rule (``DecodeTimeWindows``; every window counts here, full or not: a window past the stream's end holds
    /// fewer bytes, never more).
    ///
    /// One window starts at each frame's DTS and covers [DTS_i, DTS_i + W): it holds every frame whose DTS lies in
    /// it, so a frame exactly W after the start is outside, and frames before frame i that share its DTS are inside.
    /// Frames sharing a DTS therefore share one window, counted once.
    ///
    /// **A DTS that goes back** (rare; x264 given PTS that go back) counts at the running maximum of the DTS before
    /// it, as the lab's bitrate plots do: a frame is decoded after the frames
    /// ahead of it in decode order, so the earliest time consistent with that order is the largest DTS so far. The
    /// times are then non-decreasing and the windows slide with two pointers.
    ///
    /// Times are compared in whole ticks: a difference of d ticks is inside when d·timebase < W, i.e.
    /// d < ⌈W / timebase⌉, computed once in 128 bits; sums are taken in 128 bits.
    ///
    /// - Parameters:
    ///   - dtsTicks: the decode timestamps in ticks, in decode order.
    ///   - sizesBytes: each frame's bytes, same order: its NAL units without start codes or length prefixes, so a raw
    ///     stream and an MP4 count alike.
    ///   - timebase: seconds per tick (> 0).
    /// - Throws: `.data` for a timebase not above 0, a negative frame size (naming the frame) or a window whose bytes
    ///   exceed Int64 (damaged sizes).
    public static func check(pair: Pair, dtsTicks: [Int64], sizesBytes: [Int], timebase: Rational) throws -> WindowCheck {
        precondition(dtsTicks.count == sizesBytes.count, "one size per DTS")
        guard timebase > .zero else { throw LabError.data("timebase \(timebase) s is not above 0") }
        if let k = sizesBytes.firstIndex(where: { $0 < 0 }) {
            throw LabError.data("frame \(k) (decode order): size \(sizesBytes[k]) bytes is negative")
        }
        // The lab's one window rule: one window per distinct start (frames sharing a DTS share their window).
        let windows = DecodeTimeWindows.windows(dtsTicks: dtsTicks, sizesBytes: sizesBytes, timebase: timebase,
                                                window: pair.seconds, lastFrameTicks: .zero)
        var count = 0, over = 0
        var worst: (start: Int, end: Int, bytes: Int128, startTicks: Int128)?
        for (i, w) in windows.enumerated() where w.firstIndex == i {
            count += 1
            if w.bytes > Int128(pair.bytes) { over += 1 }
            if worst == nil || w.bytes > worst!.bytes { worst = (w.firstIndex, w.lastIndex, w.bytes, w.startTicks) }
        }
        var window: Window?
        if let w = worst {
            guard w.bytes <= Int128(Int64.max) else {
                throw LabError.data("frames \(w.start)...\(w.end) (decode order): \(w.bytes) bytes in one window, above 64 bits")
            }
            window = Window(startIndex: w.start, endIndex: w.end, startTicks: Int64(w.startTicks), bytes: Int64(w.bytes),
                            ratio: try Rational(Int64(w.bytes), pair.bytes))
        }
        return WindowCheck(pair: pair, windowCount: count, windowsOverLimit: over, worst: window)
    }
}

extension DataRateLimits {
    /// The DataRateLimits a run's settings give (VideoToolbox's property as given), checked after the encode over
    /// windows of decode time (``check(dtsTicks:sizesBytes:timebase:)``); nil without limits.
    /// - Throws: `.usage` for limits that do not parse.
    public static func given(in settings: EncodeSettings) throws -> DataRateLimits? {
        guard let text = settings.videoToolbox.dataRateLimits, !text.isEmpty else { return nil }
        return try DataRateLimits(parsing: text)
    }
}
