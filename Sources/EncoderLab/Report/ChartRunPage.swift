import Foundation
import H264

/// What a run page's charts read from the store (loaded before the pages are written on several threads).
struct ChartRunInput {
    var frames: [LabStore.ChartFrame]
    /// The DataRateLimits pairs the run was checked against (`data_rate_windows`).
    var limits: [DataRateLimits.Pair]
    /// The input index and PTS (ticks) of the pictures the encoder dropped (`skipped_frames`), in input order: marked on the keyframe
    /// timeline as "skipped by the encoder".
    var skipped: [(inputIndex: Int, pts: Int64)] = []
    /// The run's rate schedule as stored (`rate_changes` with `step_response`); empty without one.
    var rateChanges: [LabStore.StoredRateChange] = []
    /// The run's RTP stage per coded frame (`rtp_frames` with `rtp_loss_frames`); empty without one.
    var rtp: [LabStore.StoredRTPFrame] = []

    /// The perceptual metrics per display index (`frame_quality_metrics`); empty when the run was not scored.
    var quality: [Int: [QualityMetric: Double]] = [:]

    static func load(run runID: Int64, store: LabStore) throws -> ChartRunInput {
        ChartRunInput(frames: try store.chartFrames(run: runID), limits: try store.dataRateLimits(run: runID),
                      skipped: try store.reportSkipped(run: runID), rateChanges: try store.rateChanges(run: runID),
                      rtp: try store.rtpFrames(run: runID), quality: try store.chartQuality(run: runID))
    }
}

/// The interactive charts of one run page (``RunPage``), one group sharing the x axis (decode time from the first
/// PTS, ``ChartGroup``):
/// - `chart-bitrate`: the bitrate of the 1-second window of decode time starting at each frame (``WindowedBitrate``),
///   with the target (ABR), vbv-maxrate and, without a target, the mean rate as lines; with a rate schedule, the
///   target in force as a staircase (field `tg`, ``staircase(frames:opened:changes:)``) instead of the target's line,
///   and each change that reached a frame marked by a vertical line at that frame's decode time (applied and
///   unchanged green, ignored and refused red, named with the change and its status);
/// - `chart-sizes`: each frame's size in kbit, one series per type drawn as stems (Bitrate Viewer's view);
/// - `chart-psnr`, `chart-ssim`: per-frame PSNR of each plane and of the frame (`frames.psnr_*`), and x264's SSIM;
/// - `chart-q-COLUMN` (`chart-q-vmaf`, `chart-q-psnr-hvs`, ..., the column with `-` for `_`): each perceptual metric stored for the run
///   (`frame_quality_metrics`, `--metrics`), one chart per metric, each frame at its decode time, joined by display index;
/// - `chart-vbv`: the VBV replay's fullness before and after each removal, the buffer size as a line, underflows
///   and overflows marked;
/// - `chart-datarate-N`: per DataRateLimits pair, the bytes of the window of its length starting at each frame, the
///   pair's bytes as a line, the windows over it marked.
struct ChartRunPage {
    var group = ChartGroup()
    let frames: [LabStore.ChartFrame]
    let quality: [Int: [QualityMetric: Double]]
    let derived: ChartColumns.Derived
    let timebase: Rational

    static let runColour = "#1f77b4"
    static let limitColour = "#7f7f7f", maxrateColour = "#d62728", violationColour = "#d62728"
    static let staircaseColour = "#1f77b4", appliedColour = "#2ca02c"

    /// The target in force at each frame (decode order) under a rate schedule, as `rate-steps.dat` draws it
    /// (``Plots/writeRateStaircase``): `opened` (the run's resolved bitrate; nil under CRF and CQP) until the first
    /// change x264 applied with a target, then each applied change's `target_kbps` from the coded position of the
    /// picture it landed on (changes on one picture in change order: the last wins).
    static func staircase(frames: [LabStore.ChartFrame], opened: Double?, changes: [LabStore.StoredRateChange]) -> [Double?] {
        var codedOf: [Int: Int] = [:]
        for (k, f) in frames.enumerated() where codedOf[f.displayIndex] == nil { codedOf[f.displayIndex] = k }
        var at: [Int: Double] = [:]
        for c in changes where c.status == "applied" {
            guard let frame = c.frame, let k = codedOf[frame], let t = c.targetKbps else { continue }
            at[k] = t
        }
        var current = opened
        return frames.indices.map { k in
            if let t = at[k] { current = t }
            return current
        }
    }

    init(run: ReportData.Run, input: ChartRunInput, timebase: Rational, frameTicks: Rational, vbv: VBVReplay.Result?,
         targetKbps: Double?, maxrateKbps: Double?, meanKbps: Double?) {
        frames = input.frames
        quality = input.quality
        self.timebase = timebase
        derived = ChartColumns.derive(input.frames, timebase: timebase, frameTicks: frameTicks, vbv: vbv, limits: input.limits)
        var fields = ChartColumns.fields(input.frames, derived: derived, timebase: timebase, quality: input.quality)
        var series: [ChartGroup.Series] = [.init(name: "bitrate, 1 s window of decode time", colour: "#000000", run: 0, field: "w")]
        var limits = Self.rateLines(targetKbps: targetKbps, maxrateKbps: maxrateKbps, meanKbps: meanKbps)
        var marks: [ChartGroup.Mark] = []
        let changes = input.rateChanges
        if !changes.isEmpty {
            let steps = Self.staircase(frames: input.frames, opened: targetKbps, changes: changes)
            fields.append(("tg", ChartGroup.fixed(steps, digits: 3)))
            series.append(.init(name: "target in force (rate schedule)", colour: Self.staircaseColour, run: 0, field: "tg", style: "steps", dash: [6, 3]))
            // The staircase replaces the opened target's line; vbv-maxrate stays as opened.
            limits = Self.rateLines(targetKbps: nil, maxrateKbps: targetKbps == maxrateKbps ? nil : maxrateKbps, meanKbps: nil)
            var codedOf: [Int: Int] = [:]
            for (k, f) in input.frames.enumerated() where codedOf[f.displayIndex] == nil { codedOf[f.displayIndex] = k }
            for c in changes {
                guard let frame = c.frame, let k = codedOf[frame] else { continue }
                let followed = c.status == "applied" || c.status == "unchanged"
                marks.append(.init(x: derived.x[k], name: "change \(c.changeIndex) at frame \(frame): \(c.name)=\(c.value) \(c.status)",
                                   colour: followed ? Self.appliedColour : Self.violationColour))
            }
        }
        group.runs = [ChartGroup.Run(runID: run.row.runID, name: "run \(run.row.runID) \(run.clipName) \(run.label)", colour: Self.runColour,
                                     fields: fields)]
        group.charts.append(.init(id: "chart-bitrate", yLabel: "bitrate (kbit/s), 1 s window", series: series, limits: limits, marks: marks))
        group.charts.append(.init(id: "chart-sizes", yLabel: "frame size (kbit)",
                                  series: RunPage.types.enumerated().map { i, t in
                                      .init(name: t, colour: RunPage.colours[i], run: 0, field: "s", scale: 0.008, type: i, style: "impulses")
                                  }))
    }

    /// The horizontal lines of a bitrate chart: the target (ABR), vbv-maxrate (above 0), and without a target the mean
    /// rate; a target equal to vbv-maxrate (CBR) is one line, "target = vbv-maxrate", so neither hides the other.
    /// The gnuplot `bitrate.gp` draws the same lines (vbv-maxrate dotted, ``maxrateColour``).
    static func rateLines(targetKbps: Double?, maxrateKbps: Double?, meanKbps: Double?, prefix: String = "", colour: String? = nil) -> [ChartGroup.Limit] {
        func kbps(_ v: Double) -> String { ChartGroup.trimmed(String(format: "%.1f", v)) }
        let maxrate = maxrateKbps.flatMap { $0 > 0 ? $0 : nil }
        var limits: [ChartGroup.Limit] = []
        if let t = targetKbps, let m = maxrate, t == m {
            return [.init(name: "\(prefix)target = vbv-maxrate \(kbps(t)) kbit/s", value: t, colour: colour ?? Self.maxrateColour)]
        }
        if let t = targetKbps { limits.append(.init(name: "\(prefix)target \(kbps(t)) kbit/s", value: t, colour: colour ?? Self.limitColour)) }
        if let m = maxrate { limits.append(.init(name: "\(prefix)vbv-maxrate \(kbps(m)) kbit/s", value: m, colour: colour ?? Self.maxrateColour)) }
        if targetKbps == nil, let m = meanKbps { limits.append(.init(name: "\(prefix)mean rate \(String(format: "%.0f", m)) kbit/s", value: m, colour: colour ?? Self.limitColour)) }
        return limits
    }

    /// The HTML of the chart `id` with its title and gnuplot files.
    func html(_ id: String, title: String, gnuplot: (name: String, data: [String])?, note: String? = nil) -> String {
        ChartPage.chart(id: id, title: title, gnuplot: gnuplot, note: note)
    }

    /// The PSNR and SSIM charts and their gnuplot pictures (`quality.*`: PSNR per plane and of the frame, and SSIM
    /// on a second plot when measured), or a sentence saying why there are none.
    mutating func qualitySection(dir: String, queue: PlotQueue) throws -> String {
        let hasPSNR = frames.contains { $0.psnrY != nil || $0.psnrAvg != nil }
        let hasSSIM = frames.contains { $0.ssim != nil }
        guard hasPSNR || hasSSIM else {
            return "<p class=\"note\">No per-frame PSNR or SSIM stored (a stream recorded by <code>enclab check</code>, or no decode).</p>\n"
        }
        var data = "# coded_index decode_time_s psnr_y psnr_u psnr_v psnr_frame ssim (NaN: not stored)\n"
        func v(_ x: Double?) -> String { x.map { "\($0)" } ?? "NaN" }
        for (k, f) in frames.enumerated() {
            data += "\(f.codedIndex) \(derived.x[k]) \(v(f.psnrY)) \(v(f.psnrU)) \(v(f.psnrV)) \(v(f.psnrAvg)) \(v(f.ssim))\n"
        }
        try Plots.write(data, to: "\(dir)/quality.dat")
        var plots: [String] = []
        if hasPSNR {
            plots.append("""
                set ylabel 'PSNR (dB)'
                plot 'quality.dat' using 2:3 with lines lw 1 lc rgb '#2ca02c' title 'Y', \\
                     'quality.dat' using 2:4 with lines lw 1 lc rgb '#1f77b4' title 'U', \\
                     'quality.dat' using 2:5 with lines lw 1 lc rgb '#d62728' title 'V', \\
                     'quality.dat' using 2:6 with lines lw 2 lc rgb 'black' title 'frame (three planes pooled)'
                """)
        }
        if hasSSIM {
            plots.append("""
                set ylabel 'SSIM (x264)'
                plot 'quality.dat' using 2:7 with lines lw 1.5 lc rgb '#9467bd' title 'SSIM'
                """)
        }
        try Plots.both(dir: dir, name: "quality", body: """
            set xlabel 'decode time (s) from the first PTS'
            set key below horizontal
            set grid
            set multiplot layout \(plots.count),1
            \(plots.joined(separator: "\n"))
            unset multiplot
            """, arguments: [], size: (1100, 300 * plots.count), queue: queue)
        var html = ""
        let gnuplot = (name: "quality", data: ["quality.dat"])
        if hasPSNR {
            group.charts.append(.init(id: "chart-psnr", yLabel: "PSNR (dB)", series: [
                .init(name: "PSNR Y", colour: "#2ca02c", run: 0, field: "y"), .init(name: "PSNR U", colour: "#1f77b4", run: 0, field: "u"),
                .init(name: "PSNR V", colour: "#d62728", run: 0, field: "v"),
                .init(name: "PSNR of the frame (three planes' squared error pooled)", colour: "#000000", run: 0, field: "a"),
            ], fromZero: false))
            html += self.html("chart-psnr", title: "PSNR per frame (the lab's decode: frames.psnr_y, psnr_u, psnr_v, psnr_avg), dB", gnuplot: hasSSIM ? nil : gnuplot)
        }
        if hasSSIM {
            group.charts.append(.init(id: "chart-ssim", yLabel: "SSIM", series: [.init(name: "SSIM", colour: "#9467bd", run: 0, field: "ss")], fromZero: false, digits: 3))
            html += self.html("chart-ssim", title: "SSIM per frame (x264's, frames.ssim)", gnuplot: gnuplot)
        }
        return html
    }

    /// The perceptual metrics stored for the run (``ChartColumns/qualityMetrics(_:)``), one interactive chart each
    /// (`chart-q-COLUMN`, the value of each frame as stored, joined to the frame by display index) and one gnuplot
    /// picture of them all (`perceptual.*`, one plot per metric); "" when the run was not scored.
    mutating func perceptualSection(dir: String, queue: PlotQueue) throws -> String {
        let metrics = ChartColumns.qualityMetrics(quality)
        guard !metrics.isEmpty else { return "" }
        var data = "# coded_index display_index decode_time_s \(metrics.map(\.column).joined(separator: " ")) (frame_quality_metrics, NaN: none stored)\n"
        for (k, f) in frames.enumerated() {
            data += "\(f.codedIndex) \(f.displayIndex) \(derived.x[k])"
            for m in metrics { data += " " + (quality[f.displayIndex]?[m].map { "\($0)" } ?? "NaN") }
            data += "\n"
        }
        try Plots.write(data, to: "\(dir)/perceptual.dat")
        let plots = metrics.enumerated().map { i, m in
            """
            set ylabel '\(CurveMetric.quality(m).title)'
            plot 'perceptual.dat' using 3:\(i + 4) with linespoints lw 1.5 pt 7 ps 0.4 lc rgb '\(Self.perceptualColours[i % Self.perceptualColours.count])' title '\(CurveMetric.quality(m).axisLabel.replacingOccurrences(of: ", mean of frames", with: ""))'
            """
        }
        try Plots.both(dir: dir, name: "perceptual", body: """
            set xlabel 'decode time (s) from the first PTS'
            set key below horizontal
            set grid
            set multiplot layout \(plots.count),1
            \(plots.joined(separator: "\n"))
            unset multiplot
            """, arguments: [], size: (1100, 260 * plots.count), queue: queue)
        var html = "<h2>Perceptual quality per frame</h2>\n<p class=\"note\">Scored by libvmaf (FFmpeg's xpsnr filter for XPSNR) on each decoded picture against the source picture the lab paired it with (<code>--metrics</code>, <code>enclab measure</code>; docs/quality-metrics.md); values as stored in frame_quality_metrics, each frame at its decode time.</p>\n"
        for (i, m) in metrics.enumerated() {
            let metric = CurveMetric.quality(m)
            let name = metric.axisLabel.replacingOccurrences(of: ", mean of frames", with: "")
            group.charts.append(.init(id: "chart-q-\(m.column.replacingOccurrences(of: "_", with: "-"))", yLabel: metric.title + metric.unit, series: [
                .init(name: name, colour: Self.perceptualColours[i % Self.perceptualColours.count], run: 0, field: ChartColumns.qualityField(m)),
            ], fromZero: false, digits: m == .ssim || m == .msSSIM ? 4 : nil))
            html += self.html("chart-q-\(m.column.replacingOccurrences(of: "_", with: "-"))", title: "\(name) per frame (frame_quality_metrics.\(m.column))",
                              gnuplot: i == metrics.count - 1 ? (name: "perceptual", data: ["perceptual.dat"]) : nil)
        }
        return html
    }

    static let perceptualColours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]

    /// The VBV chart (``RunPage/vbvSection``'s replay).
    mutating func vbvChart() -> String {
        guard let v = derived.vbv else { return "" }
        var series: [ChartGroup.Series] = [
            .init(name: "fullness before removal", colour: "#1f77b4", run: 0, field: "vb", style: "steps"),
            .init(name: "fullness after removal", colour: "#ff7f0e", run: 0, field: "va", style: "points"),
        ]
        if v.events.contains(1) { series.append(.init(name: "underflow", colour: Self.violationColour, run: 0, field: "va", whereField: "ve", whereValue: 1, style: "points")) }
        if v.events.contains(2) { series.append(.init(name: "overflow", colour: "#8c564b", run: 0, field: "va", whereField: "ve", whereValue: 2, style: "points")) }
        group.charts.append(.init(id: "chart-vbv", yLabel: "buffer fullness (kbit)", series: series,
                                  limits: [.init(name: "vbv-bufsize \(ChartGroup.trimmed(String(format: "%.1f", v.bufferKbit))) kbit", value: v.bufferKbit, colour: Self.limitColour)]))
        return html("chart-vbv", title: "VBV occupancy (replay of the stream against the run's VBV)", gnuplot: (name: "vbv", data: ["vbv.dat"]))
    }

    /// The DataRateLimits charts, one per pair, with their gnuplot pictures (`datarate-N.*`); empty without limits.
    mutating func dataRateSection(dir: String, queue: PlotQueue) throws -> String {
        guard !derived.dataRate.isEmpty else { return "" }
        var html = "<h2>DataRateLimits windows</h2>\n"
        for (i, d) in derived.dataRate.enumerated() {
            let name = "datarate-\(i + 1)", seconds = DataRateLimits.decimal(d.pair.seconds)
            let over = d.bytes.enumerated().filter { $0.element > d.pair.bytes }.count
            var data = "# coded_index decode_time_s window_bytes (the window of \(seconds) s of decode time starting at the frame)\n"
            for (k, b) in d.bytes.enumerated() { data += "\(frames[k].codedIndex) \(derived.x[k]) \(b)\n" }
            try Plots.write(data, to: "\(dir)/\(name).dat")
            try Plots.both(dir: dir, name: name, body: """
                set xlabel 'decode time (s) from the first PTS'
                set ylabel 'bytes in the window'
                set yrange [0:*]
                set key below horizontal
                set grid
                plot '\(name).dat' using 2:3 with steps lw 1.5 lc rgb '#1f77b4' title 'bytes in \(seconds) s', \\
                     '\(name).dat' using 2:($3 > \(d.pair.bytes) ? $3 : 1/0) with points pt 7 ps 0.6 lc rgb '#d62728' title 'over the limit', \\
                     \(d.pair.bytes) with lines dt 2 lw 2 lc rgb '#7f7f7f' title 'limit \(d.pair.bytes) bytes'
                """, arguments: [], size: (1100, 300), queue: queue)
            let field = "r\(i)"
            group.charts.append(.init(id: "chart-\(name)", yLabel: "bytes in \(seconds) s", series: [
                .init(name: "bytes in the \(seconds) s window", colour: "#1f77b4", run: 0, field: field, style: "steps"),
                .init(name: "over the limit", colour: Self.violationColour, run: 0, field: field, above: Double(d.pair.bytes), style: "points"),
            ], limits: [.init(name: "limit \(d.pair.bytes) bytes in \(seconds) s", value: Double(d.pair.bytes), colour: Self.maxrateColour)]))
            html += self.html("chart-\(name)", title: "DataRateLimits pair \(i + 1): at most \(d.pair.bytes) bytes in any \(seconds) s of decode time",
                              gnuplot: (name: name, data: ["\(name).dat"]),
                              note: "\(over) frame\(over == 1 ? "" : "s") start\(over == 1 ? "s" : "") a window over the limit (frames sharing a DTS share their window), marked in red.")
        }
        return html
    }

    /// The end of the page: the data block and the scripts (the page is two folders below the report's top).
    var tail: String { ChartPage.dataBlock(group, name: "run") + ChartPage.scripts(depth: 2) }
}
