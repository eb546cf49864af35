import Foundation

/// A perceptual (or full-reference) quality metric the lab asks libvmaf, or FFmpeg's `xpsnr` filter, for
/// (`--metrics`, docs/quality-metrics.md). Each is scored per decoded picture against the source picture the lab
/// paired it with, and stored in `frame_quality_metrics` (``column``) and pooled in `run_quality_metrics`.
public enum QualityMetric: String, CaseIterable, Comparable, Sendable {
    case vmaf
    case vmafNeg = "vmaf-neg"
    case vmaf4k = "vmaf-4k"
    case psnrHVS = "psnr-hvs"
    case msSSIM = "ms-ssim"
    case ssim
    case ciede2000
    case xpsnr

    /// The `frame_quality_metrics` column, the frames export's column and `run_quality_metrics.metric`.
    public var column: String {
        switch self {
        case .vmaf: "vmaf"
        case .vmafNeg: "vmaf_neg"
        case .vmaf4k: "vmaf_4k"
        case .psnrHVS: "psnr_hvs"
        case .msSSIM: "ms_ssim"
        case .ssim: "float_ssim"
        case .ciede2000: "ciede2000"
        case .xpsnr: "xpsnr"
        }
    }

    /// The key of the metric in libvmaf's per-frame JSON (`frames[k].metrics`), nil for XPSNR (the xpsnr filter's).
    var libvmafKey: String? {
        switch self {
        case .vmaf: "vmaf"
        case .vmafNeg: "vmaf_neg"
        case .vmaf4k: "vmaf_4k"
        case .psnrHVS: "psnr_hvs"
        case .msSSIM: "float_ms_ssim"
        case .ssim: "float_ssim"
        case .ciede2000: "ciede2000"
        case .xpsnr: nil
        }
    }

    /// The libvmaf model (built into libvmaf) of a VMAF metric, nil for the others.
    public var model: String? {
        switch self {
        case .vmaf: "vmaf_v0.6.1"
        case .vmafNeg: "vmaf_v0.6.1neg"
        case .vmaf4k: "vmaf_4k_v0.6.1"
        default: nil
        }
    }

    /// The libvmaf feature extractor (`feature=name=...`) of a non-VMAF libvmaf metric.
    var feature: String? {
        switch self {
        case .psnrHVS: "psnr_hvs"
        case .msSSIM: "float_ms_ssim"
        case .ssim: "float_ssim"
        case .ciede2000: "ciede"
        default: nil
        }
    }

    /// The values a frame's score can take; a logged value outside is refused, not stored
    /// (``LibVMAF/score(_:displayedFrames:)``). VMAF models: 0-100 (libvmaf clips each model's score to its
    /// `score_clip`, 0-100 for the three built-in models used here); SSIM and MS-SSIM: -1 to 1 (SSIM's terms are each
    /// within it; MS-SSIM is a product of powers of such terms); CIEDE2000: at least 0 (libvmaf logs
    /// 45 − 20·log10 of the mean ΔE2000, which for 8-bit pictures stays well under the 177.8 that would make it
    /// negative); PSNR-HVS and XPSNR: any finite number of dB. A value that is no number at all is refused for every
    /// metric; libvmaf's null (and xpsnr's `inf`) is no value (stored NULL), not a value out of range.
    var validRange: ClosedRange<Double> {
        if let scale { return scale }
        switch self {
        case .ciede2000: return 0...Double.greatestFiniteMagnitude
        default: return -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        }
    }

    /// The bounded scale of the metric's score, where it has one: VMAF's 0...100 (the three models), SSIM's -1...1
    /// (ssim, ms-ssim); nil for the metrics in dB and CIEDE2000's. ``validRange`` and ``CurveMetric/scoreRange`` read it.
    var scale: ClosedRange<Double>? {
        switch self {
        case .vmaf, .vmafNeg, .vmaf4k: 0...100
        case .ssim, .msSSIM: -1...1
        case .psnrHVS, .ciede2000, .xpsnr: nil
        }
    }

    public static func < (a: QualityMetric, b: QualityMetric) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The metrics of a comma-separated list (`vmaf,psnr-hvs`), in the lab's order, each once.
    /// - Throws: `.usage` naming the word that is not a metric, or an empty list.
    public static func list(_ text: String, flag: String = "--metrics") throws -> [QualityMetric] {
        var chosen = Set<QualityMetric>()
        for word in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let m = QualityMetric(rawValue: word.lowercased()) else {
                throw LabError.usage("\(flag): '\(word)' is not a metric (one or more of \(allCases.map(\.rawValue).joined(separator: ", ")), comma-separated)")
            }
            chosen.insert(m)
        }
        return chosen.sorted()
    }

    /// libvmaf's MS-SSIM needs both sides of at least this many samples (five scales of 2x downsampling; at
    /// 176x144 alone it exits with "scale below 1x1", beside other features ffmpeg exits 0 and drops it silently).
    public static let msSSIMMinimumSide = 176
    /// The smallest picture side libvmaf scores here without crashing (``check(_:width:height:clip:)``).
    static let libvmafMinimumSide = 18

    /// Refuses a request libvmaf cannot honour for pictures of `width` × `height`: MS-SSIM under 176 px either side.
    /// - Throws: `.usage` naming the size.
    public static func check(_ metrics: [QualityMetric], width: Int, height: Int, clip: String) throws {
        if metrics.contains(.msSSIM) && (width < msSSIMMinimumSide || height < msSSIMMinimumSide) {
            throw LabError.usage("\(clip): ms-ssim needs pictures of at least \(msSSIMMinimumSide)x\(msSSIMMinimumSide) (libvmaf's five scales), the clip is \(width)x\(height); leave ms-ssim out of --metrics")
        }
        // imageio-ffmpeg 0.8.1's libvmaf dies by SIGSEGV on pictures under 18 px either side (measured 2026-12-02: 16x16,
        // 17x17, 16x64 and 64x16 crash with or without features; 18x18, 18x64 and 64x18 score); xpsnr is another filter.
        let libvmaf = metrics.filter { $0 != .xpsnr }
        if !libvmaf.isEmpty && (width < libvmafMinimumSide || height < libvmafMinimumSide) {
            throw LabError.usage("\(clip): \(libvmaf.map(\.rawValue).joined(separator: ", ")) \(libvmaf.count == 1 ? "needs" : "need") pictures of at least \(libvmafMinimumSide)x\(libvmafMinimumSide) (the libvmaf of imageio-ffmpeg 0.8.1 crashes on smaller ones), the clip is \(width)x\(height)")
        }
    }
}

/// One metric's per-frame values pooled into a run's numbers (`run_quality_metrics`), every frame counted once.
public struct QualityPool: Equatable, Sendable {
    /// The arithmetic mean.
    public var mean: Double
    /// libvmaf's harmonic mean (its JSON's `pooled_metrics.*.harmonic_mean`): n / Σ 1/(x + 1) − 1.
    public var harmonicMean: Double
    /// The mean of the worst 1 % of the frames (the lowest values; at least one frame: ⌈n / 100⌉ of them).
    public var low1: Double
    /// The mean of the worst 5 % of the frames (⌈5n / 100⌉, at least one).
    public var low5: Double

    /// Pools `values` (one per frame, at least one). Every metric the lab stores is higher-is-better (libvmaf's
    /// `ciede2000` included, which it reports as a score, not a ΔE), so "worst" is "lowest".
    public init(_ values: [Double]) {
        precondition(!values.isEmpty, "a pool needs at least one value")
        let n = Double(values.count)
        mean = values.reduce(0, +) / n
        harmonicMean = n / values.reduce(0) { $0 + 1 / ($1 + 1) } - 1
        let sorted = values.sorted()
        func low(_ percent: Int) -> Double {
            let k = max(1, (values.count * percent + 99) / 100)
            return sorted.prefix(k).reduce(0, +) / Double(k)
        }
        low1 = low(1)
        low5 = low(5)
    }
}

/// What `--metrics` asks of a run: the metrics, and the ffmpeg with libvmaf that scores them (``VMAFFFmpeg/find(flag:needsXPSNR:environment:timeLimit:)``).
public struct QualityRequest: Sendable {
    public var metrics: [QualityMetric]
    public var ffmpeg: String

    public init(metrics: [QualityMetric], ffmpeg: String) {
        self.metrics = metrics
        self.ffmpeg = ffmpeg
    }

    /// The request of a `--metrics` value (nil or empty: none) with the ffmpeg found by the stated rule.
    /// - Throws: `.usage` for a word that is not a metric; `.software` (70) when no ffmpeg with libvmaf is found.
    public static func given(_ metrics: String?, vmafFFmpeg: String?) throws -> QualityRequest? {
        guard let metrics, !metrics.isEmpty else { return nil }
        let list = try QualityMetric.list(metrics)
        return QualityRequest(metrics: list, ffmpeg: try VMAFFFmpeg.find(flag: vmafFFmpeg, needsXPSNR: list.contains(.xpsnr)))
    }
}
