import H264

/// Bitrate over a sliding window of decode time, as bitrate viewers draw it.
///
/// For each frame k (in decode order) the window holds every frame j <= k whose DTS lies within the window before
/// frame k's DTS: (dts_k - dts_j) * timebase < window. The bitrate is the window's bits divided by the window's
/// length. A window is `full` once the stream has lasted that long (dts_k - dts_0 + one frame duration >= window);
/// earlier windows under-read and plots skip them. Times are compared exactly (``Rational``), never in floating point.
public enum WindowedBitrate {
    public struct Point: Sendable, Equatable {
        /// Decode index of the frame ending the window.
        public var codedIndex: Int
        /// Its DTS in seconds (for display).
        public var dtsSeconds: Double
        /// Bits in the window divided by the window length, in kbit/s (1 kbit = 1000 bits).
        public var kbps: Double
        public var full: Bool
    }

    /// - Parameters:
    ///   - sizes: frame sizes in bytes, decode order.
    ///   - dts: decode timestamps in ticks, same order, non-decreasing.
    ///   - timebase: seconds per tick (> 0).
    ///   - frameTicks: one frame's duration in ticks (for the `full` flag).
    ///   - window: the window length in seconds (> 0).
    ///
    /// No operation can trap, whatever the values: the sums and differences are taken in 128 bits, and each
    /// comparison of a time with the window is made against a threshold of whole ticks computed once (exactly, with
    /// no product wider than 128 bits). Damaged values (sizes near Int.max, dts far apart or decreasing) give
    /// meaningless points, not a crash; callers that draw stored rows check them first (``RunPlotInput``).
    public static func compute(sizes: [Int], dts: [Int64], timebase: Rational, frameTicks: Rational,
                               window: Rational = .one) -> [Point] {
        precondition(sizes.count == dts.count && window > .zero && timebase > .zero)
        // ticks * timebase >= window  <=>  ticks * A >= B with A = tb.num * w.den > 0, B = w.num * tb.den > 0
        // (each below 2^126)  <=>  ticks >= ceil(B / A), for whole ticks.
        let a = Int128(timebase.numerator) * Int128(window.denominator)
        let b = Int128(window.numerator) * Int128(timebase.denominator)
        let windowTicks = ceilingDivide(b, a)
        // Full: (ticks + f) * timebase >= window, f = frameTicks = fn/fd  <=>  ticks >= B/A - fn/fd  <=>
        // ticks >= ceil(B/A - fn/fd). With B/A = q1 + r1/A and fn/fd = q2 + r2/fd (floor division, 0 <= r < divisor),
        // B/A - fn/fd = (q1 - q2) + (r1/A - r2/fd), whose fraction part lies in (-1, 1): the ceiling is q1 - q2,
        // plus 1 when r1/A > r2/fd, i.e. r1 * fd > r2 * A (compared in 256 bits).
        let (q1, r1) = floorDivide(b, a)
        let (q2, r2) = floorDivide(Int128(frameTicks.numerator), Int128(frameTicks.denominator))
        let fractionAbove = r1.magnitude.multipliedFullWidth(by: UInt128(frameTicks.denominator))
            > r2.magnitude.multipliedFullWidth(by: a.magnitude)
        let fullTicks = q1 - q2 + (fractionAbove ? 1 : 0)
        let seconds = window.approximateValue
        let first = Int128(dts.first ?? 0)
        var points: [Point] = []
        points.reserveCapacity(sizes.count)
        var start = 0
        var bytes: Int128 = 0
        for k in sizes.indices {
            bytes += Int128(sizes[k])
            // start < k here whenever the loop runs: at start == k the span is 0 ticks, below windowTicks (>= 1).
            while Int128(dts[k]) - Int128(dts[start]) >= windowTicks {
                bytes -= Int128(sizes[start])
                start += 1
            }
            points.append(Point(codedIndex: k, dtsSeconds: Double(dts[k]) * timebase.approximateValue,
                                kbps: Double(bytes) * 8 / seconds / 1000, full: Int128(dts[k]) - first >= fullTicks))
        }
        return points
    }

    /// ceil(n / d) for n > 0, d > 0.
    private static func ceilingDivide(_ n: Int128, _ d: Int128) -> Int128 {
        (n - 1) / d + 1
    }

    /// floor(n / d) and the remainder in 0 ..< d, for d > 0.
    private static func floorDivide(_ n: Int128, _ d: Int128) -> (quotient: Int128, remainder: Int128) {
        let (q, r) = n.quotientAndRemainder(dividingBy: d)
        return r < 0 ? (q - 1, r + d) : (q, r)
    }

    /// ``compute(sizes:dts:timebase:frameTicks:window:)`` with the timebase as two integers, a whole number of ticks
    /// per frame and a window of `windowSeconds` whole seconds.
    public static func compute(sizes: [Int], dts: [Int64], timebaseNum: Int, timebaseDen: Int, frameTicks: Int64,
                               windowSeconds: Int64 = 1) -> [Point] {
        let timebase = (try? Rational(Int64(timebaseNum), Int64(timebaseDen))) ?? .one
        return compute(sizes: sizes, dts: dts, timebase: timebase, frameTicks: Rational(frameTicks), window: Rational(windowSeconds))
    }
}
