import Foundation

/// The lab's one rate-quality chart: the run folders' `rd.*` (``Plots/writeExperimentPlot(points:title:dir:)``) and the
/// report's `rq-N.*` are drawn by ``Plots/writeRateQualityChart(_:configurations:metric:title:name:dir:queue:)``, so
/// that both plot the same named metric with the same colour and marker for the same configuration.
///
/// - One metric per chart, named on its axis (``QualityMetric``; the default is `run_metrics.psnr_global`, the PSNR of
///   the squared error pooled over all samples of the three planes, x264's "Global").
/// - One style per configuration across an experiment: the experiment's configurations sorted, the k-th gets colour k
///   and marker k (``ConfigurationStyle/styles(for:)``), whichever clip or chart it is drawn on.
/// - A curve drawn on top of another stays visible: each configuration has its own open marker shape and size (the
///   later ones smaller, drawn inside the earlier), and a curve whose points coincide with an earlier curve's says so
///   in its key title.
/// - The rate axis is logarithmic, fitted to the data (a few percent beyond the smallest and largest rate), its tics
///   chosen from 1, 2, 5 (or 1, 1.5, 2, 3, 5, 7 when those give fewer than four) times powers of ten, each labelled.
/// - The key is below the plot, one entry a line, so titles never narrow the plot.
extension Plots {
    /// The quality a rate-quality chart plots, by its `run_metrics` column.
    public enum QualityMetric: String, CaseIterable, Sendable {
        /// PSNR of the squared error pooled over all samples of the three planes (x264's "Global"): the default.
        case psnrGlobal = "psnr_global"
        /// PSNR of the squared error pooled over all luma samples.
        case psnrYPooled = "psnr_y_pooled"
        /// The (duration-weighted) mean of the per-frame PSNR of the three planes (x264's "PSNR Mean Avg").
        case psnrAvgMeanFrame = "psnr_avg_mean_frame"
        /// (6·PSNR_Y + PSNR_U + PSNR_V) / 8 of the pooled plane PSNRs (JVET common test conditions).
        case psnr611 = "psnr_611"
        /// Mean luma SSIM in dB, −10·log10(1 − SSIM), as x264 prints it.
        case ssimDB = "ssim_db"

        /// The quality axis' label: the definition in words (the column, ``rawValue``, is named in the x axis' label).
        public var axisLabel: String {
            switch self {
            case .psnrGlobal: return "PSNR, pooled squared error (x264 Global), dB"
            case .psnrYPooled: return "PSNR Y, pooled squared error of luma, dB"
            case .psnrAvgMeanFrame: return "PSNR, mean of per-frame PSNR (x264 Mean Avg), dB"
            case .psnr611: return "PSNR 6:1:1 of the pooled plane PSNRs, dB"
            case .ssimDB: return "SSIM (luma, mean over frames), dB"
            }
        }
    }

    /// One curve of a rate-quality chart: one configuration on one clip, its points sorted by rate.
    public struct RateQualityCurve: Sendable, Equatable {
        /// The clip's file name.
        public var clip: String
        /// The rate-control mode, then the grid's settings other than those that set the rate (``ReportData/configuration(_:)``).
        public var configuration: String
        /// Rate in kbit/s (`run_metrics.bitrate_kbps`), the metric's value and the run's id, sorted by rate then id.
        public var points: [Point]
        /// Whether some of its runs were encoded with `--verify none` (their PSNR is x264's own): " (unverified)" ends its key title.
        public var unverified: Bool

        public struct Point: Sendable, Equatable {
            public var kbps: Double
            public var value: Double
            public var runID: Int64
            public init(kbps: Double, value: Double, runID: Int64) { self.kbps = kbps; self.value = value; self.runID = runID }
        }

        public init(clip: String, configuration: String, points: [Point], unverified: Bool = false) {
            self.clip = clip; self.configuration = configuration; self.unverified = unverified
            self.points = points.sorted { ($0.kbps, $0.runID) < ($1.kbps, $1.runID) }
        }
    }

    /// A configuration's colour and marker, the same on every chart of its experiment.
    public struct ConfigurationStyle: Sendable, Equatable {
        /// `#rrggbb`.
        public var colour: String
        /// gnuplot's point type (open shapes first).
        public var pointType: Int
        /// gnuplot's point size.
        public var pointSize: Double

        static let colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
        /// Open square, open circle, open triangle, open diamond, open inverted triangle, open pentagon, cross, plus, star.
        static let pointTypes = [4, 6, 8, 12, 10, 14, 2, 1, 3]
        static let pointSizes = [2.2, 1.8, 1.45, 1.15]

        /// The styles of an experiment's configurations: sorted, the k-th gets colour k mod 10, marker k mod 9 and size
        /// k mod 4 (so no two of the first 90 share all three).
        public static func styles(for configurations: [String]) -> [String: ConfigurationStyle] {
            var out: [String: ConfigurationStyle] = [:]
            for (k, name) in Array(Set(configurations)).sorted().enumerated() {
                out[name] = ConfigurationStyle(colour: colours[k % colours.count], pointType: pointTypes[k % pointTypes.count],
                                               pointSize: pointSizes[k % pointSizes.count])
            }
            return out
        }
    }

    /// The tics of a logarithmic axis fitted to values from `low` to `high` (both above 0): the range 4 % beyond them,
    /// and the values of 1, 2, 5 × 10^k inside it (1, 1.5, 2, 3, 5, 7 × 10^k, then every whole multiple, when that gives
    /// fewer than four; evenly spaced 1, 2 or 5 × 10^k apart when even those give fewer than three), each with its
    /// label (no exponent: whole numbers as integers, others to 6 significant digits).
    static func logAxis(low: Double, high: Double) -> (range: (Double, Double), tics: [(label: String, value: Double)]) {
        precondition(low > 0 && high >= low && high.isFinite, "a log axis needs values above 0")
        let range = (low / 1.04, high * 1.04)
        var tics: [Double] = []
        for mantissas in [[1.0, 2, 5], [1, 1.5, 2, 3, 5, 7], [1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9]] {
            tics = []
            var decade = pow(10, floor(log10(range.0)))
            while decade <= range.1 {
                for m in mantissas {
                    let v = (m * decade * 1e6).rounded() / 1e6
                    if v >= range.0 && v <= range.1 { tics.append(v) }
                }
                decade *= 10
            }
            if tics.count >= 4 { break }
        }
        if tics.count < 3 {
            // A narrow span (less than a factor 1.3): evenly spaced tics, 1, 2 or 5 × 10^k apart, about 5 of them.
            let raw = (range.1 - range.0) / 5
            let power = pow(10, floor(log10(raw)))
            let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power
            tics = []
            var v = (range.0 / step).rounded(.up) * step
            while v <= range.1 { tics.append((v * 1e6).rounded() / 1e6); v += step }
        }
        return (range, tics.map { (ticLabel($0), $0) })
    }

    /// A tic value as a label: a whole number without a decimal point, else up to 6 significant digits.
    static func ticLabel(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(format: "%.6g", v)
    }

    /// The pairs (i, j), i < j, of curves drawn on top of each other: the same number of points, each within 1 % of
    /// the chart's spans of the other's point of the same rank (the log rate span and the value span, as drawn). The
    /// key title of curve j says it lies on curve i (the first such i).
    static func coincident(_ curves: [RateQualityCurve]) -> [(Int, Int)] {
        let all = curves.flatMap(\.points).filter { $0.kbps > 0 }
        guard let lowRate = all.map(\.kbps).min(), let highRate = all.map(\.kbps).max(),
              let lowValue = all.map(\.value).min(), let highValue = all.map(\.value).max() else { return [] }
        let rateSpan = max(log(highRate / lowRate), 1e-9), valueSpan = max(highValue - lowValue, 1e-9)
        var pairs: [(Int, Int)] = []
        for i in curves.indices {
            for j in curves.indices where j > i && curves[i].points.count == curves[j].points.count && !curves[i].points.isEmpty {
                let same = zip(curves[i].points, curves[j].points).allSatisfy { a, b in
                    a.kbps > 0 && b.kbps > 0 && abs(log(a.kbps / b.kbps)) <= 0.01 * rateSpan && abs(a.value - b.value) <= 0.01 * valueSpan
                }
                if same { pairs.append((i, j)) }
            }
        }
        return pairs
    }

    /// Writes `NAME.dat` and `NAME.gp` in `dir` and draws `NAME.png` and `NAME.svg` (or queues them on `queue`): the
    /// curves' rates (kbit/s, log scale) against `metric`.
    ///
    /// `NAME.dat`: a header naming the columns (`# bitrate_kbps METRIC run_id`), then one block per curve in the order
    /// given: a comment naming it (its configuration; its clip's file name first when the chart has several clips),
    /// then one row per point, `kbps value run_id`, two empty lines after it. Key titles (user text) reach gnuplot as
    /// ARG2, one a line; a curve lying on an earlier one says so at the end of its key title.
    /// - Parameters:
    ///   - configurations: every configuration of the experiment (styles are assigned over all of them, so a
    ///     configuration looks the same on every chart of the experiment; ``ConfigurationStyle/styles(for:)``).
    ///   - title: the chart's title (user text: an argument).
    /// - Throws: as ``both(dir:name:body:arguments:size:queue:)``; with no point, only the data file is written.
    /// - Parameter valueAxis: the quality when it is not one of ``QualityMetric``'s (the report's `--metric vmaf`): the data
    ///   file's column name and the axis label; it wins over `metric`.
    public static func writeRateQualityChart(_ curves: [RateQualityCurve], configurations: [String], metric: QualityMetric = .psnrGlobal,
                                             valueAxis: (column: String, label: String)? = nil,
                                             title: String, name: String, dir: String, queue: PlotQueue? = nil) throws {
        try OutputFiles.makeDirectory(dir)
        let styles = ConfigurationStyle.styles(for: configurations + curves.map(\.configuration))
        let clips = Array(Set(curves.map(\.clip))).sorted()
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, curves.count)))
        var data = "# bitrate_kbps \(valueAxis?.column ?? metric.rawValue) run_id, one block per curve\n"
        var series: [String] = [], titles: [String] = []
        func label(_ c: RateQualityCurve) -> String { clips.count > 1 ? "\(c.clip) \(c.configuration)" : c.configuration }
        for (i, curve) in curves.enumerated() {
            data += "# \(shown(label(curve), limit: .max))\n"
            for p in curve.points { data += "\(p.kbps) \(p.value) \(p.runID)\n" }
            data += "\n\n"
            let s = styles[curve.configuration]!
            // The clip (when the chart has several) by the line's dash; the configuration by colour and marker.
            let dash = 1 + (clips.firstIndex(of: curve.clip) ?? 0) % 5
            series.append("'\(name).dat' index \(i) using 1:2 with linespoints lw 1.5 dt \(dash) pt \(s.pointType) ps \(s.pointSize) lc rgb '\(s.colour)' title keyTitle[\(i + 1)]")
            titles.append(shown(label(curve), limit: keyLimit) + (curve.unverified ? " (unverified)" : ""))
        }
        try write(data, to: "\(dir)/\(name).dat")
        let rates = curves.flatMap(\.points).map(\.kbps).filter { $0 > 0 && $0.isFinite }
        guard !series.isEmpty, let low = rates.min(), let high = rates.max() else { return }
        let axis = logAxis(low: low, high: high)
        // A curve hidden under another says so in its key title (its marker, smaller, is drawn inside the other's).
        for (i, j) in coincident(curves) where !titles[j].hasSuffix("]") {
            titles[j] += " [on \(shown(label(curves[i]), limit: keyLimit)): every point within 1 % of the axes]"
        }
        let body = """
        \(keyTitlePrologue(count: titles.count))
        set title ARG1
        set xlabel 'bitrate (kbit/s), log scale: run_metrics.bitrate_kbps'
        set ylabel '\(valueAxis?.label ?? metric.axisLabel)'
        set logscale x
        set xrange [\(axis.range.0):\(axis.range.1)]
        set xtics (\(axis.tics.map { "'\($0.label)' \($0.value)" }.joined(separator: ", ")))
        set format y '%g'
        set offsets 0, 0, graph 0.06, graph 0.06
        set key below left vertical Left reverse maxcols 1 samplen 3
        set grid
        plot \(series.joined(separator: ", \\\n     "))
        """
        try both(dir: dir, name: name, body: body, arguments: [shown(title), titles.joined(separator: "\n")],
                 size: (1100, 460 + 18 * titles.count), queue: queue)
    }
}
