import Foundation

/// The lab's one PSNR formula for 8-bit samples, and its inverse: PSNR = 10 log10(255² · samples / sse) dB, as x264
/// computes it (common/base.c, x264_psnr: `-10 log10(sse / (255² · samples))`), with x264's 100 dB for no error.
public enum PSNR {
    /// The PSNR in dB of a plane of `samples` samples with squared error `sse`; nil for `sse` 0 (no error: the
    /// store keeps NULL where x264 reports 100 dB).
    public static func decibels(sse: Int64, samples: Int) -> Double? {
        sse == 0 ? nil : 10 * log10(255 * 255 * Double(samples) / Double(sse))
    }

    /// The integer squared error behind a PSNR: sse = 255² · samples · 10^(-psnr/10), rounded; 0 at 100 dB or more
    /// (x264's value for mse <= 1e-10).
    public static func sse(decibels psnr: Double, samples: Int) -> Int64 {
        if psnr >= 100 { return 0 }
        return Int64((255.0 * 255.0 * Double(samples) * pow(10, -psnr / 10)).rounded())
    }

    /// The PSNRs of one 4:2:0 picture, in dB; nil where the squared error is 0 (no error).
    public struct Picture: Equatable, Sendable {
        public var y: Double?
        public var u: Double?
        public var v: Double?
        /// The PSNR of the squared error summed over the three planes, over all their samples (x264's
        /// `f_psnr_avg`, encoder.c: `calc_psnr(ssd[0] + ssd[1] + ssd[2], luma_size + chroma_size*2)`); not the
        /// mean of the three PSNRs.
        public var avg: Double?

        public init(y: Double?, u: Double?, v: Double?, avg: Double?) {
            self.y = y; self.u = u; self.v = v; self.avg = avg
        }
    }

    /// The PSNRs of a 4:2:0 picture of `width` × `height` luma samples (both even, so each chroma plane has
    /// width·height/4 samples) with squared errors `errors`, by ``decibels(sse:samples:)``.
    public static func picture(_ errors: PlaneErrors, width: Int, height: Int) -> Picture {
        let luma = width * height, chroma = luma / 4
        return Picture(y: decibels(sse: errors.sseY, samples: luma), u: decibels(sse: errors.sseU, samples: chroma),
                       v: decibels(sse: errors.sseV, samples: chroma),
                       avg: decibels(sse: errors.sseY + errors.sseU + errors.sseV, samples: luma + 2 * chroma))
    }
}
