/// Bitrate over a sliding window of decode time, as bitrate viewers draw it.
///
/// For each frame k (in decode order) the window holds every frame j <= k whose DTS lies within
/// `windowSeconds` before frame k's DTS: (dts_k - dts_j) * timebase < windowSeconds. The bitrate is the
/// window's bits divided by `windowSeconds`. A window is `full` once the stream has lasted that long
/// (dts_k - dts_0 + one frame duration >= windowSeconds); earlier windows under-read and plots skip them.
public enum WindowedBitrate {
    public struct Point: Sendable, Equatable {
        /// Decode index of the frame ending the window.
        public var codedIndex: Int
        /// Its DTS in seconds.
        public var dtsSeconds: Double
        /// Bits in the window divided by the window length, in kbit/s (1 kbit = 1000 bits).
        public var kbps: Double
        public var full: Bool
    }

    /// - Parameters:
    ///   - sizes: frame sizes in bytes, decode order.
    ///   - dts: decode timestamps in ticks, same order, non-decreasing.
    ///   - timebaseNum, timebaseDen: one tick is timebaseNum/timebaseDen seconds.
    ///   - frameTicks: one frame's duration in ticks (for the `full` flag).
    ///   - windowSeconds: the window length in seconds (> 0).
    public static func compute(sizes: [Int], dts: [Int64], timebaseNum: Int, timebaseDen: Int, frameTicks: Int64,
                               windowSeconds: Double = 1) -> [Point] {
        precondition(sizes.count == dts.count && windowSeconds > 0 && timebaseDen > 0)
        let tick = Double(timebaseNum) / Double(timebaseDen)
        var points: [Point] = []
        points.reserveCapacity(sizes.count)
        var start = 0
        var bytes = 0
        for k in sizes.indices {
            bytes += sizes[k]
            while Double(dts[k] - dts[start]) * tick >= windowSeconds - 1e-12 {
                bytes -= sizes[start]
                start += 1
            }
            let full = Double(dts[k] - (dts.first ?? 0) + frameTicks) * tick >= windowSeconds - 1e-9
            points.append(Point(codedIndex: k, dtsSeconds: Double(dts[k]) * tick,
                                kbps: Double(bytes) * 8 / windowSeconds / 1000, full: full))
        }
        return points
    }
}
