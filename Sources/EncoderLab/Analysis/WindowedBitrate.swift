import H264

/// Bitrate over sliding windows of decode time, as bitrate viewers draw it, by the lab's one window rule
/// (``DecodeTimeWindows``).
///
/// For each frame k (in decode order) the window starts at its DTS and covers [dts_k, dts_k + window): it holds every
/// frame whose DTS lies in it (frames sharing a DTS share a window). The bitrate is the window's bits divided by the
/// window's length; the point is drawn at the window's start. A window is `full` when it ends at or before the
/// stream's end (the last DTS plus one frame duration); later windows run past the end, under-read, and plots skip
/// them; a stream shorter than the window has no full window. Times are compared exactly, never in floating point.
public enum WindowedBitrate {
    public struct Point: Sendable, Equatable {
        /// Decode index of the frame whose DTS starts the window.
        public var codedIndex: Int
        /// Its DTS in seconds (for display).
        public var dtsSeconds: Double
        /// Bits in the window divided by the window length, in kbit/s (1 kbit = 1000 bits).
        public var kbps: Double
        public var full: Bool
    }

    /// - Parameters:
    ///   - sizes: frame sizes in bytes, decode order.
    ///   - dts: decode timestamps in ticks, same order (a DTS that goes back counts at the largest DTS before it).
    ///   - timebase: seconds per tick (> 0).
    ///   - frameTicks: the last frame's duration in ticks (>= 0; the stream ends at the last DTS plus this).
    ///   - window: the window length in seconds (> 0).
    ///
    /// No operation can trap, whatever the values (``DecodeTimeWindows``): damaged values (sizes near Int.max, dts far
    /// apart or decreasing) give meaningless points, not a crash; callers that draw stored rows check them first
    /// (the plots).
    public static func compute(sizes: [Int], dts: [Int64], timebase: Rational, frameTicks: Rational,
                               window: Rational = .one) -> [Point] {
        precondition(sizes.count == dts.count && window > .zero && timebase > .zero)
        let seconds = window.approximateValue
        let windows = DecodeTimeWindows.windows(dtsTicks: dts, sizesBytes: sizes, timebase: timebase, window: window,
                                                lastFrameTicks: frameTicks)
        return zip(dts.indices, windows).map { k, w in
            Point(codedIndex: k, dtsSeconds: Double(dts[k]) * timebase.approximateValue,
                  kbps: Double(w.bytes) * 8 / seconds / 1000, full: w.full)
        }
    }

    /// ``compute(sizes:dts:timebase:frameTicks:window:)`` with the timebase as two integers, a whole number of ticks
    /// per frame and a window of `windowSeconds` whole seconds.
    public static func compute(sizes: [Int], dts: [Int64], timebaseNum: Int, timebaseDen: Int, frameTicks: Int64,
                               windowSeconds: Int64 = 1) -> [Point] {
        let timebase = (try? Rational(Int64(timebaseNum), Int64(timebaseDen))) ?? .one
        return compute(sizes: sizes, dts: dts, timebase: timebase, frameTicks: Rational(frameTicks), window: Rational(windowSeconds))
    }
}
