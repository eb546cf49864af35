import H264

/// How the stream followed each change of a rate schedule (docs/rate-control-in-motion.md): pure functions over a
/// run's frames in decode order, by the lab's one window rule (``DecodeTimeWindows``, W = 1 s).
///
/// **Segments.** A change starts at the coded index of the picture it landed on (x264 applies a picture's `param`
/// from that picture on, in coded order) and its segment runs to the start of the next change that landed on another
/// picture, or to the stream's end. The windows of a change are the full 1-s windows that start and end in its segment
/// (every frame of the window in it: a window reaching past the next change would mix that change's response in).
///
/// **Settling.** The settling point is the first window of the segment after which every window of the segment lies
/// within ±tolerance of the new target (|kbps − target| ≤ target · tolerance / 100). `settle_frames` counts coded
/// frames from the change to it, `settle_s` the seconds between their DTS (arrivals). A segment whose last window is
/// outside the band has not settled (NULL); one without full windows says nothing (NULL).
///
/// **Overshoot, undershoot.** The largest and the smallest window of the segment against the new target, in percent:
/// (max / target − 1) · 100 and (min / target − 1) · 100.
///
/// **DataRateLimits.** For a DataRateLimits change, every window of each pair's length in the segment (one per
/// distinct start, as the check counts them; all its frames in the segment) against the pair's bytes: windows, windows over, and the largest
/// excess in bytes.
///
/// **Quality.** Mean QP and mean luma PSNR of the `qualityFrames` coded frames before the change's start against the
/// `qualityFrames` from it on (fewer at either end of the stream; frames without a PSNR left out).
public enum StepResponse {
    /// The settling band's default half-width, percent of the new target.
    public static let defaultTolerancePercent = 10.0
    /// Frames compared before and after a change for QP and PSNR.
    public static let defaultQualityFrames = 30

    /// One coded frame, decode order.
    public struct Frame: Sendable, Equatable {
        public var displayIndex: Int
        public var dts: Int64
        public var sizeBytes: Int
        public var qp: Double?
        public var psnrY: Double?

        public init(displayIndex: Int, dts: Int64, sizeBytes: Int, qp: Double? = nil, psnrY: Double? = nil) {
            self.displayIndex = displayIndex; self.dts = dts; self.sizeBytes = sizeBytes; self.qp = qp; self.psnrY = psnrY
        }
    }

    /// One change that landed on a picture.
    public struct Change: Sendable, Equatable {
        public var changeIndex: Int
        /// The display index of the picture it landed on.
        public var frame: Int
        /// The bitrate the stream should follow after it, kbit/s (nil: no settling, overshoot or undershoot).
        public var targetKbps: Double?
        /// The new limits, for a DataRateLimits change.
        public var limits: DataRateLimits?

        public init(changeIndex: Int, frame: Int, targetKbps: Double?, limits: DataRateLimits? = nil) {
            self.changeIndex = changeIndex; self.frame = frame; self.targetKbps = targetKbps; self.limits = limits
        }
    }

    /// The step response of one change (a `step_response` row).
    public struct Result: Sendable, Equatable {
        public var changeIndex: Int
        /// Coded index of the change's first frame, and the end of its segment (exclusive).
        public var startCoded: Int
        public var endCoded: Int
        /// DTS of the first frame in seconds.
        public var startSeconds: Double
        public var targetKbps: Double?
        public var tolerancePercent: Double
        /// Full 1-s windows that start and end in the segment.
        public var windows: Int
        public var settleFrames: Int?
        public var settleSeconds: Double?
        public var peakKbps: Double?
        public var lowKbps: Double?
        public var overshootPercent: Double?
        public var undershootPercent: Double?
        public var limitWindows: Int?
        public var limitWindowsOver: Int?
        public var limitWorstBytesOver: Int64?
        public var qualityFrames: Int
        public var qpBefore: Double?
        public var qpAfter: Double?
        public var psnrBefore: Double?
        public var psnrAfter: Double?
    }

    /// The step response of every change whose picture is among `frames`, in the order of `changes`.
    /// - Parameters:
    ///   - frames: the run's frames in decode order.
    ///   - timebase: seconds per tick (> 0).
    ///   - lastFrameTicks: the last frame's duration in ticks (the stream's end, ``DecodeTimeWindows``).
    ///   - tolerancePercent: the settling band, > 0.
    public static func compute(frames: [Frame], timebase: Rational, lastFrameTicks: Rational, changes: [Change],
                               tolerancePercent: Double = defaultTolerancePercent,
                               qualityFrames: Int = defaultQualityFrames) -> [Result] {
        precondition(timebase > .zero && tolerancePercent > 0 && qualityFrames > 0)
        let codedOf = Dictionary(frames.enumerated().map { ($0.element.displayIndex, $0.offset) }, uniquingKeysWith: min)
        let windows = DecodeTimeWindows.windows(dtsTicks: frames.map(\.dts), sizesBytes: frames.map(\.sizeBytes), timebase: timebase,
                                                window: .one, lastFrameTicks: lastFrameTicks)
        let arrivals = DecodeTimeWindows.arrivals(frames.map(\.dts))
        let starts = Set(changes.compactMap { codedOf[$0.frame] }).sorted()
        let seconds = timebase.approximateValue
        return changes.compactMap { change -> Result? in
            guard let start = codedOf[change.frame] else { return nil }
            let end = starts.first { $0 > start } ?? frames.count
            var r = Result(changeIndex: change.changeIndex, startCoded: start, endCoded: end,
                           startSeconds: Double(arrivals[start]) * seconds, targetKbps: change.targetKbps,
                           tolerancePercent: tolerancePercent, windows: 0, qualityFrames: qualityFrames)
            // Full windows in the segment (all their frames in it), one per distinct start.
            var points: [(coded: Int, kbps: Double)] = []
            for k in start..<end where windows[k].full && windows[k].firstIndex == k && windows[k].lastIndex < end {
                points.append((k, Double(windows[k].bytes) * 8 / 1000))
            }
            r.windows = points.count
            if let target = change.targetKbps, target > 0, !points.isEmpty {
                let band = target * tolerancePercent / 100
                let lastOutside = points.lastIndex { abs($0.kbps - target) > band }
                if let j = lastOutside {
                    if j + 1 < points.count {
                        let s = points[j + 1].coded
                        r.settleFrames = s - start
                        r.settleSeconds = Double(arrivals[s] - arrivals[start]) * seconds
                    }
                } else {
                    r.settleFrames = 0
                    r.settleSeconds = 0
                }
                let peak = points.map(\.kbps).max()!, low = points.map(\.kbps).min()!
                r.peakKbps = peak
                r.lowKbps = low
                r.overshootPercent = (peak / target - 1) * 100
                r.undershootPercent = (low / target - 1) * 100
            } else if !points.isEmpty {
                r.peakKbps = points.map(\.kbps).max()
                r.lowKbps = points.map(\.kbps).min()
            }
            if let limits = change.limits {
                var count = 0, over = 0
                var worst: Int64 = 0
                for pair in limits.pairs {
                    let w = DecodeTimeWindows.windows(dtsTicks: frames.map(\.dts), sizesBytes: frames.map(\.sizeBytes), timebase: timebase,
                                                      window: pair.seconds, lastFrameTicks: lastFrameTicks)
                    for k in start..<end where w[k].firstIndex == k && w[k].lastIndex < end {
                        count += 1
                        let excess = w[k].bytes - Int128(pair.bytes)
                        if excess > 0 { over += 1; worst = max(worst, Int64(clamping: excess)) }
                    }
                }
                r.limitWindows = count
                r.limitWindowsOver = over
                r.limitWorstBytesOver = worst
            }
            func mean(_ values: [Double?]) -> Double? {
                let v = values.compactMap { $0 }
                return v.isEmpty ? nil : v.reduce(0, +) / Double(v.count)
            }
            let before = frames[max(0, start - qualityFrames)..<start], after = frames[start..<min(frames.count, start + qualityFrames)]
            r.qpBefore = mean(before.map(\.qp)); r.qpAfter = mean(after.map(\.qp))
            r.psnrBefore = mean(before.map(\.psnrY)); r.psnrAfter = mean(after.map(\.psnrY))
            return r
        }
    }
}
