import H264

/// The lab's one window rule (docs/report.md, "Windows over decode time"), used by the plots' windowed bitrate
/// (``WindowedBitrate``), the DataRateLimits check (``DataRateLimits/check(pair:dtsTicks:sizesBytes:timebase:)``) and
/// the run metrics' peak 1-second bitrate (``RunMetrics``).
///
/// **Windows.** One window starts at each frame's DTS and covers [DTS_i, DTS_i + W): it holds every frame whose DTS
/// lies in it. A frame exactly W after the start is outside (it starts the next window); frames sharing a DTS all lie
/// in each other's windows, so they share one window (the one of the first of them, repeated for the others).
///
/// **A DTS that goes back** (x264 given PTS that go back) counts at the running maximum of the DTS before it: a frame
/// is decoded after the frames ahead of it in decode order, so the earliest time consistent with that order is the
/// largest DTS so far (its *arrival*). Arrivals never decrease, so the windows slide with two pointers, in O(n).
///
/// **Full windows.** The stream ends at the last arrival plus the last frame's duration. A window that runs past that
/// end, DTS_i + W > end, is *partial*: it has fewer than W seconds of stream to count, so it under-reads; peaks and
/// the plots' bitrate line leave it out. When the whole stream is shorter than W no window is full: there is no peak
/// (the run metrics store NULL) and the plots draw no bitrate line.
///
/// **Exactness.** Times are compared in whole ticks, never in floating point: a frame d ticks after a window's start is
/// inside when d·timebase < W, i.e. d < ⌈W / timebase⌉; a window starting d ticks before the last arrival is full when
/// (d + lastFrameTicks)·timebase ≥ W, i.e. d ≥ ⌈W / timebase − lastFrameTicks⌉. Both thresholds are computed once in
/// 128 bits (products compared in 256), sums of sizes in 128 bits: no value of the inputs can trap.
public enum DecodeTimeWindows {
    /// One window, the one starting at a frame's DTS.
    public struct Window: Sendable, Equatable {
        /// Decode index of the first frame in the window (the first frame with this window's start arrival).
        public var firstIndex: Int
        /// Decode index of the last frame in the window (>= firstIndex).
        public var lastIndex: Int
        /// The window's start in ticks: the arrival (running maximum DTS) of its first frame.
        public var startTicks: Int128
        /// The bytes of the frames firstIndex ... lastIndex (summed in 128 bits; sizes as given, negative ones too).
        public var bytes: Int128
        /// Whether the window ends at or before the stream's end (see the type's documentation).
        public var full: Bool
    }

    /// The arrival of each frame: the running maximum of the DTS up to it, in decode order.
    public static func arrivals(_ dtsTicks: [Int64]) -> [Int128] {
        var out: [Int128] = []
        out.reserveCapacity(dtsTicks.count)
        for t in dtsTicks { out.append(max(out.last ?? Int128(t), Int128(t))) }
        return out
    }

    /// ⌈W / timebase⌉: the smallest whole number of ticks that is not inside a window of `window` seconds (>= 1).
    /// Preconditions: both above 0.
    public static func windowTicks(window: Rational, timebase: Rational) -> Int128 {
        precondition(window > .zero && timebase > .zero)
        // d·(tn/td) < p/q  <=>  d < p·td / (q·tn)  <=>  d < ceil(p·td / (q·tn)) for whole d; each product < 2^126.
        let a = Int128(timebase.numerator) * Int128(window.denominator)
        let b = Int128(window.numerator) * Int128(timebase.denominator)
        return (b - 1) / a + 1
    }

    /// ⌈W / timebase − lastFrameTicks⌉: a window starting d ticks before the last arrival is full when d is at least
    /// this (it may be negative: every window is then full).
    static func fullTicks(window: Rational, timebase: Rational, lastFrameTicks: Rational) -> Int128 {
        let a = Int128(timebase.numerator) * Int128(window.denominator)
        let b = Int128(window.numerator) * Int128(timebase.denominator)
        // With B/A = q1 + r1/A and f = fn/fd = q2 + r2/fd (floor division, 0 <= r < divisor), B/A - f = (q1 - q2) +
        // (r1/A - r2/fd), whose fraction part lies in (-1, 1): the ceiling is q1 - q2, plus 1 when r1/A > r2/fd, i.e.
        // r1·fd > r2·A (compared in 256 bits).
        let (q1, r1) = floorDivide(b, a)
        let (q2, r2) = floorDivide(Int128(lastFrameTicks.numerator), Int128(lastFrameTicks.denominator))
        let fractionAbove = r1.magnitude.multipliedFullWidth(by: UInt128(lastFrameTicks.denominator))
            > r2.magnitude.multipliedFullWidth(by: a.magnitude)
        return q1 - q2 + (fractionAbove ? 1 : 0)
    }

    /// The window starting at each frame's DTS, one per frame in decode order (frames sharing a DTS get equal windows).
    ///
    /// - Parameters:
    ///   - dtsTicks: decode timestamps in ticks, decode order (a DTS that goes back counts at its arrival).
    ///   - sizesBytes: each frame's bytes, same order.
    ///   - timebase: seconds per tick (> 0).
    ///   - window: W in seconds (> 0).
    ///   - lastFrameTicks: the last frame's duration in ticks (>= 0): the stream ends at the last arrival plus this.
    /// Preconditions (the lab's own bugs): equal counts, a positive timebase and window.
    public static func windows(dtsTicks: [Int64], sizesBytes: [Int], timebase: Rational, window: Rational,
                               lastFrameTicks: Rational) -> [Window] {
        precondition(dtsTicks.count == sizesBytes.count, "one size per DTS")
        let span = windowTicks(window: window, timebase: timebase)
        let full = fullTicks(window: window, timebase: timebase, lastFrameTicks: lastFrameTicks)
        let arrival = arrivals(dtsTicks)
        let n = arrival.count
        guard n > 0 else { return [] }
        let last = arrival[n - 1]
        var out: [Window] = []
        out.reserveCapacity(n)
        var start = 0, end = 0
        var bytes: Int128 = 0
        while start < n {
            // end > start after this loop: a frame is 0 ticks from itself and span >= 1.
            while end < n && arrival[end] - arrival[start] < span {
                bytes += Int128(sizesBytes[end])
                end += 1
            }
            let t = arrival[start]
            let w = Window(firstIndex: start, lastIndex: end - 1, startTicks: t, bytes: bytes, full: last - t >= full)
            while start < n && arrival[start] == t {
                out.append(w)
                bytes -= Int128(sizesBytes[start])
                start += 1
            }
        }
        return out
    }

    /// floor(n / d) and the remainder in 0 ..< d, for d > 0.
    private static func floorDivide(_ n: Int128, _ d: Int128) -> (quotient: Int128, remainder: Int128) {
        let (q, r) = n.quotientAndRemainder(dividingBy: d)
        return r < 0 ? (q - 1, r + d) : (q, r)
    }
}
