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
}
