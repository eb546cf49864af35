import Foundation

/// One run's per-frame quality pooled into run-level numbers, each named by its definition, from the lab's stored
/// per-plane squared errors (`frames.sse_y/u/v`: integers, 8-bit 4:2:0).
///
/// The ways differ, and tools that report "the PSNR" of a run pick one without saying:
/// - **Mean of per-frame PSNR** (x264's "PSNR Mean Y/U/V" and "Avg"): each frame's PSNR by ``PSNR/decibels(sse:samples:)``,
///   then their (weighted) mean. A frame with no error has infinite PSNR: it is left out of the mean and counted in
///   ``Result/zeroErrorFrames`` (x264 instead counts it as 100 dB, encoder.c `calc_psnr`, which makes its mean depend
///   on that cap).
/// - **PSNR of the pooled squared error** (x264's "Global", encoder.c, x264_encoder_frame_end and
///   x264_encoder_close: `calc_psnr( SUM3( h->stat.f_ssd_global ), duration * i_yuv_size )` with
///   `f_ssd_global += dur * (ssd[0] + ssd[1] + ssd[2])`): 10·log10(255² · Σ wᵢ·nᵢ / Σ wᵢ·sseᵢ) dB over all samples of
///   all frames, per plane and for the three planes together; the latter weights a 4:2:0 picture's planes 4:1:1 by
///   their sample counts. x264 weights each frame by its duration (`dur = h->fenc->f_duration`), which matters only for
///   variable-rate runs; ``Weighting/duration`` does the same, ``Weighting/frame`` weights every frame 1.
/// - **6:1:1 average of plane PSNRs** (the YUV PSNR reported under the JVET/HEVC common test conditions, as in Ohm,
///   Sullivan et al., "Comparison of the Coding Efficiency of Video Coding Standards", IEEE TCSVT 2012:
///   (6·PSNR_Y + PSNR_U + PSNR_V) / 8): ``Planes/weighted611``, on the pooled plane PSNRs in ``Result/pooled``.
/// - **SSIM**: the (weighted) mean of per-frame luma SSIM, and in dB as x264 prints it, −10·log10(1 − SSIM)
///   (encoder.c `calc_ssim_db`).
///
/// Sums of squared errors, samples and weights are exact integers (UInt128), so pooling does not depend on frame order;
/// only the final ratio and logarithm are in Double.
public enum QualityPooling {
    /// One frame's measurements.
    public struct Frame: Equatable, Sendable {
        /// The per-plane squared errors, Σ (decoded − source)² over each plane's samples; each at least 0 and at most
        /// 255² times the plane's sample count.
        public var errors: PlaneErrors
        /// Luma SSIM of the frame (x264's `f_ssim`, at most 1), or nil when not measured.
        public var ssim: Double?
        /// The frame's duration in ticks of any one time base shared by the run (only ratios of durations matter);
        /// needed, and positive, for every frame under ``Weighting/duration``; ignored under ``Weighting/frame``.
        public var duration: Int64?

        public init(errors: PlaneErrors, ssim: Double? = nil, duration: Int64? = nil) {
            self.errors = errors; self.ssim = ssim; self.duration = duration
        }

        public init(sseY: Int64, sseU: Int64, sseV: Int64, ssim: Double? = nil, duration: Int64? = nil) {
            self.init(errors: PlaneErrors(sseY: sseY, sseU: sseU, sseV: sseV), ssim: ssim, duration: duration)
        }
    }

    /// How much each frame counts.
    public enum Weighting: String, Equatable, Sendable {
        /// Every frame counts 1 (constant frame rate, or a per-picture view).
        case frame
        /// Each frame counts its ``Frame/duration``, as x264 pools its statistics (encoder.c: `dur * ...`).
        case duration
    }

    /// PSNRs in dB per plane and for the three planes together; nil where the pooled value is infinite (no error) or
    /// there is nothing to pool.
    public struct Planes: Equatable, Sendable {
        public var y: Double?
        public var u: Double?
        public var v: Double?
        /// The three planes together: for ``Result/pooled`` the PSNR of their summed squared error over all their
        /// samples (x264's "Global"); for ``Result/meanOfFrames`` the mean of per-frame `avg` (x264's "Avg").
        public var all: Double?

        public init(y: Double?, u: Double?, v: Double?, all: Double?) {
            self.y = y; self.u = u; self.v = v; self.all = all
        }

        /// (6·y + u + v) / 8 in dB, the JVET/HEVC common test conditions' YUV PSNR; nil when a plane's PSNR is nil.
        public var weighted611: Double? {
            guard let y, let u, let v else { return nil }
            return QualityPooling.weighted611(y: y, u: u, v: v)
        }
    }

    /// Frame counts per plane and for the three planes together.
    public struct Counts: Equatable, Sendable {
        public var y: Int
        public var u: Int
        public var v: Int
        public var all: Int

        public init(y: Int, u: Int, v: Int, all: Int) {
            self.y = y; self.u = u; self.v = v; self.all = all
        }
    }

    /// The exact weighted sums behind ``Result/pooled``: Σ wᵢ·sseᵢ per plane and Σ wᵢ·nᵢ for luma and for one chroma
    /// plane, with wᵢ 1 or the frame's duration in ticks.
    public struct Totals: Equatable, Sendable {
        public var sseY: UInt128
        public var sseU: UInt128
        public var sseV: UInt128
        public var lumaSamples: UInt128
        public var chromaSamples: UInt128
        /// Σ wᵢ over all frames: the frame count, or the run's summed duration in ticks.
        public var weight: UInt128
    }

    /// A run's pooled quality.
    public struct Result: Equatable, Sendable {
        public var weighting: Weighting
        /// Frames pooled.
        public var frames: Int
        /// Mean of per-frame PSNR in dB (weighted by ``weighting``), over the frames whose PSNR is finite; nil when
        /// there are none.
        public var meanOfFrames: Planes
        /// Frames with zero squared error (infinite PSNR), left out of ``meanOfFrames``, per plane and for the sum of
        /// the three planes (a frame counts in `all` only when all three planes have no error).
        public var zeroErrorFrames: Counts
        /// PSNR in dB of the squared error pooled over all samples of all frames (x264's "Global" for `all`).
        public var pooled: Planes
        /// The exact sums behind ``pooled``.
        public var totals: Totals
        /// Mean luma SSIM (weighted by ``weighting``) over the frames that have one; nil when none has.
        public var ssimMean: Double?
        /// ``ssimMean`` in dB, −10·log10(1 − SSIM); nil when there is no mean or it is 1.
        public var ssimDecibels: Double?
        /// Frames that carried an SSIM.
        public var ssimFrames: Int
    }

    /// (6·y + u + v) / 8: the 6:1:1 weighted average of plane PSNRs in dB (JVET/HEVC common test conditions).
    public static func weighted611(y: Double, u: Double, v: Double) -> Double {
        (6 * y + u + v) / 8
    }

    /// SSIM in dB as x264 prints it (encoder.c `calc_ssim_db`): −10·log10(1 − ssim); nil for ssim >= 1 (x264 gives
    /// 100 dB from 1 − ssim <= 1e-10 on).
    public static func ssimDecibels(_ ssim: Double) -> Double? {
        ssim >= 1 ? nil : -10 * log10(1 - ssim)
    }

    /// The PSNR in dB of a pooled squared error `sse` over `samples` samples: ``PSNR/decibels(sse:samples:)`` when the
    /// sums fit its types, else the same expression, 10·log10(255² · samples / sse), on the sums rounded to Double.
    /// Nil for `sse` 0.
    public static func decibels(sse: UInt128, samples: UInt128) -> Double? {
        if let e = Int64(exactly: sse), let n = Int(exactly: samples) { return PSNR.decibels(sse: e, samples: n) }
        return sse == 0 ? nil : 10 * log10(255 * 255 * Double(samples) / Double(sse))
    }

    /// Pools `frames` of a 4:2:0 run of `width` × `height` luma samples (both positive and even: each chroma plane
    /// has (width/2)·(height/2) samples).
    ///
    /// - Throws: ``LabError`` `.data` for an odd or non-positive size, a squared error below 0 or above 255² times the
    ///   plane's samples, an SSIM that is not a finite number at most 1, or, under ``Weighting/duration``, a frame
    ///   without a positive duration (each message names the frame by its index in `frames`).
    public static func pool(_ frames: [Frame], width: Int, height: Int, weighting: Weighting = .frame) throws -> Result {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw LabError.data("quality pooling: picture size \(width)x\(height) is not a positive even 4:2:0 size")
        }
        let maxPerSample: Int64 = 255 * 255
        // The largest possible sse_y + sse_u + sse_v, 255² · 1.5 · width · height, must fit Int64 (PSNR.picture adds them).
        let luma = width.multipliedReportingOverflow(by: height)
        guard !luma.overflow, Int64(luma.partialValue) <= Int64.max / (2 * maxPerSample) else {
            throw LabError.data("quality pooling: picture size \(width)x\(height) is too large")
        }
        let lumaSamples = luma.partialValue, chromaSamples = lumaSamples / 4

        var sse: [UInt128] = [0, 0, 0], lumaSum: UInt128 = 0, chromaSum: UInt128 = 0, weightSum: UInt128 = 0
        // Weighted sums of finite per-frame PSNRs and their weights: y, u, v, avg.
        var psnrSum = [Double](repeating: 0, count: 4), psnrWeight = [Double](repeating: 0, count: 4)
        var zero = [0, 0, 0, 0]
        var ssimSum = 0.0, ssimWeight = 0.0, ssimFrames = 0

        for (index, frame) in frames.enumerated() {
            let e = frame.errors
            for (name, value, samples) in [("sse_y", e.sseY, lumaSamples), ("sse_u", e.sseU, chromaSamples), ("sse_v", e.sseV, chromaSamples)] {
                guard value >= 0, value <= maxPerSample * Int64(samples) else {
                    throw LabError.data("quality pooling: frame \(index): \(name) \(value) is outside 0...255² x \(samples) samples")
                }
            }
            let w: Int64
            switch weighting {
            case .frame: w = 1
            case .duration:
                guard let d = frame.duration, d > 0 else {
                    throw LabError.data("quality pooling: frame \(index) has duration \(frame.duration.map(String.init) ?? "none"); duration weighting needs a positive one for every frame")
                }
                w = d
            }
            if let s = frame.ssim {
                guard s.isFinite, s <= 1 else {
                    throw LabError.data("quality pooling: frame \(index): SSIM \(s) is not a number at most 1")
                }
                ssimSum += Double(w) * s; ssimWeight += Double(w); ssimFrames += 1
            }
            let uw = UInt128(w)
            for (plane, value) in [e.sseY, e.sseU, e.sseV].enumerated() {
                sse[plane] = try add(sse[plane], uw * UInt128(value))
            }
            lumaSum = try add(lumaSum, uw * UInt128(lumaSamples))
            chromaSum = try add(chromaSum, uw * UInt128(chromaSamples))
            weightSum = try add(weightSum, uw)

            let picture = PSNR.picture(e, width: width, height: height)
            for (slot, value) in [picture.y, picture.u, picture.v, picture.avg].enumerated() {
                if let value { psnrSum[slot] += Double(w) * value; psnrWeight[slot] += Double(w) } else { zero[slot] += 1 }
            }
        }

        func mean(_ slot: Int) -> Double? { psnrWeight[slot] > 0 ? psnrSum[slot] / psnrWeight[slot] : nil }
        let nothing = frames.isEmpty
        let pooled = Planes(
            y: nothing ? nil : decibels(sse: sse[0], samples: lumaSum),
            u: nothing ? nil : decibels(sse: sse[1], samples: chromaSum),
            v: nothing ? nil : decibels(sse: sse[2], samples: chromaSum),
            all: nothing ? nil : decibels(sse: try add(try add(sse[0], sse[1]), sse[2]),
                                          samples: try add(lumaSum, try add(chromaSum, chromaSum))))
        let ssimMean = ssimWeight > 0 ? ssimSum / ssimWeight : nil
        return Result(
            weighting: weighting, frames: frames.count,
            meanOfFrames: Planes(y: mean(0), u: mean(1), v: mean(2), all: mean(3)),
            zeroErrorFrames: Counts(y: zero[0], u: zero[1], v: zero[2], all: zero[3]),
            pooled: pooled,
            totals: Totals(sseY: sse[0], sseU: sse[1], sseV: sse[2], lumaSamples: lumaSum, chromaSamples: chromaSum, weight: weightSum),
            ssimMean: ssimMean, ssimDecibels: ssimMean.flatMap(ssimDecibels), ssimFrames: ssimFrames)
    }

    /// a + b, or `.data` when the sum leaves UInt128 (more than 2^128 weighted squared errors).
    private static func add(_ a: UInt128, _ b: UInt128) throws -> UInt128 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { throw LabError.data("quality pooling: weighted sums exceed 128 bits") }
        return sum
    }
}
