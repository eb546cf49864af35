import Foundation

/// The quality a rate-quality curve and its BD numbers are computed on (`--metric` of `report` and `bd-rate`,
/// docs/quality-metrics.md): `psnr`, the lab's `run_metrics.psnr_global` (PSNR of the squared error pooled over all
/// samples of the three planes, the default), or one of the ``QualityMetric``s `--metrics` stores, taken as its
/// `run_quality_metrics.mean` (the arithmetic mean of the run's frames). The names are those of `--metrics`.
public enum CurveMetric: Hashable, Sendable {
    case psnr
    case quality(QualityMetric)

    /// Every choice, `psnr` first, then the ``QualityMetric``s in the lab's order.
    public static let all: [CurveMetric] = [.psnr] + QualityMetric.allCases.map { .quality($0) }

    /// The name on the command line: `psnr`, or the metric's `--metrics` word (`vmaf`, `vmaf-neg`, `psnr-hvs`, ...).
    public var name: String {
        switch self {
        case .psnr: "psnr"
        case .quality(let m): m.rawValue
        }
    }

    /// The choice named `text` (case-insensitive).
    /// - Throws: `.usage` naming the word and the names.
    public init(_ text: String, flag: String = "--metric") throws {
        let word = text.trimmingCharacters(in: .whitespaces).lowercased()
        if word == "psnr" { self = .psnr; return }
        guard let m = QualityMetric(rawValue: word) else {
            throw LabError.usage("\(flag): '\(text)' is not a metric (one of \(Self.all.map(\.name).joined(separator: ", ")))")
        }
        self = .quality(m)
    }

    /// The stored column the value comes from: `psnr_global` (`run_metrics`), else the metric's
    /// `run_quality_metrics.metric` (`vmaf`, `vmaf_neg`, `float_ssim`, ...).
    public var column: String {
        switch self {
        case .psnr: "psnr_global"
        case .quality(let m): m.column
        }
    }

    /// The metric as a heading says it: PSNR, VMAF, VMAF NEG, VMAF 4K, PSNR-HVS, SSIM, MS-SSIM, CIEDE2000, XPSNR.
    public var title: String {
        switch self {
        case .psnr: "PSNR"
        case .quality(let m):
            switch m {
            case .vmaf: "VMAF"
            case .vmafNeg: "VMAF NEG"
            case .vmaf4k: "VMAF 4K"
            case .psnrHVS: "PSNR-HVS"
            case .msSSIM: "MS-SSIM"
            case .ssim: "SSIM"
            case .ciede2000: "CIEDE2000"
            case .xpsnr: "XPSNR"
            }
        }
    }

    /// The quality axis' label: the metric, its model or source, and how a run's frames are pooled into one value
    /// ("VMAF v0.6.1, mean of frames").
    public var axisLabel: String {
        switch self {
        case .psnr: return "PSNR, pooled squared error (x264 Global), dB"
        case .quality(let m):
            switch m {
            case .vmaf: return "VMAF v0.6.1, mean of frames"
            case .vmafNeg: return "VMAF NEG v0.6.1 (vmaf_v0.6.1neg), mean of frames"
            case .vmaf4k: return "VMAF 4K v0.6.1 (vmaf_4k_v0.6.1), mean of frames"
            case .psnrHVS: return "PSNR-HVS (libvmaf psnr_hvs), mean of frames, dB"
            case .msSSIM: return "MS-SSIM (libvmaf float_ms_ssim), mean of frames"
            case .ssim: return "SSIM (libvmaf float_ssim), mean of frames"
            case .ciede2000: return "CIEDE2000 score (libvmaf ciede), mean of frames"
            case .xpsnr: return "XPSNR Y (FFmpeg xpsnr), mean of frames, dB"
            }
        }
    }

    /// The unit of the metric's values, with its leading space (" dB"), or "" for a score without one.
    public var unit: String {
        switch self {
        case .psnr, .quality(.psnrHVS), .quality(.xpsnr): " dB"
        default: ""
        }
    }

    /// The values a score of the metric can take, for a bounded scale: VMAF's 0...100 (vmaf, vmaf-neg, vmaf-4k: libvmaf
    /// clips each model's score to its `score_clip`, 0 and 100); SSIM's -1...1 (ssim and ms-ssim, libvmaf's
    /// `float_ssim` and `float_ms_ssim`, taken as the index itself, not in dB: 1 for identical pictures, never more;
    /// the index's formula allows down to -1, for anti-correlated pictures, and libvmaf does not clip it); nil for the
    /// others (PSNR, PSNR-HVS, XPSNR in dB; CIEDE2000's score).
    public var scoreRange: ClosedRange<Double>? {
        if case .quality(let metric) = self { return metric.scale }
        return nil
    }

    /// ``scoreRange`` as messages write it: "0-100", "-1 to 1" (a negative lower bound with "to", not a second "-").
    public var scoreRangeText: String? {
        scoreRange.map { r in
            let (low, high) = (Self.plain(r.lowerBound), Self.plain(r.upperBound))
            return r.lowerBound < 0 ? "\(low) to \(high)" : "\(low)-\(high)"
        }
    }

    /// A whole number without ".0", else the shortest decimal.
    private static func plain(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }

    /// The quality delta's name: BD-PSNR, BD-VMAF, BD-VMAF-NEG, BD-PSNR-HVS, ...
    public var deltaName: String { "BD-" + title.replacingOccurrences(of: " ", with: "-") }

    /// The metric as ``Bjontegaard``'s messages name it.
    public var bjontegaard: Bjontegaard.Quality { Bjontegaard.Quality(name: title, unit: unit) }
}
