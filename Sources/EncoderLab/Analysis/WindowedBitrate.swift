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
    public static func compute(sizes: [Int], dts: [Int64], timebase: Rational, frameTicks: Rational,
                               window: Rational = .one) -> [Point] {
        precondition(sizes.count == dts.count && window > .zero && timebase > .zero)
        // (ticks * timebase >= window)  <=>  ticks * tb.num * w.den >= w.num * tb.den, in 128 bits.
        let lhs = Int128(timebase.numerator) * Int128(window.denominator)
        let rhs = Int128(window.numerator) * Int128(timebase.denominator)
        func atLeastWindow(_ ticks: Int64) -> Bool { Int128(ticks) * lhs >= rhs }
        // Full: (dts_k - dts_0 + frameTicks) * timebase >= window, frameTicks a fraction f.n/f.d.
        func fullWindow(_ ticks: Int64) -> Bool {
            (Int128(ticks) * Int128(frameTicks.denominator) + Int128(frameTicks.numerator)) * lhs >= rhs * Int128(frameTicks.denominator)
        }
        let seconds = window.approximateValue
        var points: [Point] = []
        points.reserveCapacity(sizes.count)
        var start = 0
        var bytes = 0
        for k in sizes.indices {
            bytes += sizes[k]
            while atLeastWindow(dts[k] - dts[start]) {
                bytes -= sizes[start]
                start += 1
            }
            points.append(Point(codedIndex: k, dtsSeconds: Double(dts[k]) * timebase.approximateValue,
                                kbps: Double(bytes) * 8 / seconds / 1000, full: fullWindow(dts[k] - (dts.first ?? 0))))
        }
        return points
    }

    /// ``compute(sizes:dts:timebase:frameTicks:window:)`` with the timebase as two integers, a whole number of ticks
    /// per frame and a window of `windowSeconds` whole seconds.
    public static func compute(sizes: [Int], dts: [Int64], timebaseNum: Int, timebaseDen: Int, frameTicks: Int64,
                               windowSeconds: Int64 = 1) -> [Point] {
        let timebase = (try? Rational(Int64(timebaseNum), Int64(timebaseDen))) ?? .one
        return compute(sizes: sizes, dts: dts, timebase: timebase, frameTicks: Rational(frameTicks), window: Rational(windowSeconds))
    }
}
