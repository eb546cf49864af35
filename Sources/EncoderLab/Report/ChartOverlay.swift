import Foundation
import H264

/// The experiment page's overlay views: per clip, the runs a user picks drawn on one set of interactive charts that
/// share one x column (decode time from each run's first PTS, ``ChartGroup``): the bitrate of 1-second windows of
/// decode time, each frame's size (a line per run, its points coloured by frame type), per-frame PSNR of the frame
/// and SSIM, and VBV occupancy for runs with a VBV; each shown run's target and vbv-maxrate as lines (one line,
/// "target = vbv-maxrate", when they are equal); for runs with DataRateLimits pairs (`data_rate_windows`: encodes with
/// `--vt DataRateLimits`, `check --db` runs), the bytes of each pair's window starting at each frame, the run page's
/// windows, each shown run's pairs as limits in its colour and its windows over a pair red (``dataRateChart``).
///
/// Which runs: the page offers, per clip, one run of each configuration (``ReportData/configuration(_:)``), the one
/// at the middle of its rates (by bitrate, then run id; the lower middle of an even count), shown at first, and the
/// runs that have a run page (``Report/Options/runs``, `--worst`, `--best`), hidden at first; checkboxes above the
/// charts show and hide them. `enclab report --overlay ID,...` (``Report/Options/overlay``) chooses the runs shown at
/// first instead, in the experiments that hold them; the default choices are then offered hidden. At most
/// ``maxRuns`` per clip (the shown ones first).
///
/// Styles: each run is drawn in its configuration's colour and marker shape, those of the experiment's rate-quality
/// chart (``Plots/ConfigurationStyle/styles(for:)`` of the same configurations); two runs of one configuration differ
/// by their dash. Each chart also has its gnuplot picture (`ovC-NAME.png`, `.svg`, `.gp`, `.dat`, one data block per
/// run, `index` k the k-th run of the picker), drawn by the report in the same styles.
enum ChartOverlay {
    static let maxRuns = 12
    /// The most default choices shown at first (the next ones are offered hidden): the per-frame PSNR and SSIM of
    /// twelve runs drawn at once are one tangle, six stay apart.
    static let maxShown = 6
    static let colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

    /// The runs offered for one clip: (run, shown at first), in run id order (the picker's, the legends' and the
    /// keyframe timeline's lanes'): with `picked` (``Report/Options/overlay``) holding some of them, those shown and
    /// the default choices hidden; else the default choices, the first ``maxShown`` of them by run id shown and the
    /// rest hidden. At most ``maxRuns``, the shown ones kept first.
    static func choices(_ runs: [ReportData.Run], paged: Set<Int64>, picked: Set<Int64>? = nil) -> [(run: ReportData.Run, shown: Bool)] {
        let done = runs.filter { $0.row.status == "done" && ($0.row.frames ?? 0) > 0 }
        func ordered(_ list: [(run: ReportData.Run, shown: Bool)]) -> [(run: ReportData.Run, shown: Bool)] {
            Array(list.prefix(maxRuns)).sorted { $0.run.row.runID < $1.run.row.runID }
        }
        if let picked, done.contains(where: { picked.contains($0.row.runID) }) {
            let first = done.filter { picked.contains($0.row.runID) }.sorted { $0.row.runID < $1.row.runID }
            let rest = choices(runs, paged: paged).map(\.run).filter { !picked.contains($0.row.runID) }
            return ordered(first.map { ($0, true) } + rest.map { ($0, false) })
        }
        var byConfiguration: [String: [ReportData.Run]] = [:]
        for run in done { byConfiguration[run.configuration, default: []].append(run) }
        let middles = byConfiguration.values.map { runs -> ReportData.Run in
            let list = runs.sorted { ($0.kbps ?? .infinity, $0.row.runID) < ($1.kbps ?? .infinity, $1.row.runID) }
            return list[(list.count - 1) / 2]
        }.sorted { $0.row.runID < $1.row.runID }
        var out = middles.enumerated().map { (run: $0.element, shown: $0.offset < maxShown) }
        let chosen = Set(out.map(\.run.row.runID))
        for run in done.sorted(by: { $0.row.runID < $1.row.runID }) where paged.contains(run.row.runID) && !chosen.contains(run.row.runID) {
            out.append((run, false))
        }
        return ordered(out)
    }

    /// One overlaid chart: its id (`PREFIX-NAME`), title, y label, the field drawn, its scale and style.
    struct View {
        var name: String
        var title: String
        var yLabel: String
        var field: String
        var scale: Double = 1
        var style: String = "line"
        var fromZero = true
        var digits: Int? = nil
    }

    static let views: [View] = [
        View(name: "bitrate", title: "Bitrate over 1-second windows of decode time (kbit/s), each window starting at a frame's DTS",
             yLabel: "bitrate (kbit/s), 1 s window", field: "w"),
        View(name: "sizes", title: "Frame size per frame (kbit); points coloured by type: IDR red, I orange, P blue, Bref green, B purple; their shape the run's configuration",
             yLabel: "frame size (kbit)", field: "s", scale: 0.008, style: "typed"),
        View(name: "psnr", title: "PSNR per frame, three planes' squared error pooled (frames.psnr_avg, the lab's decode), dB",
             yLabel: "PSNR (dB)", field: "a", fromZero: false),
        View(name: "ssim", title: "SSIM per frame (x264's, frames.ssim)", yLabel: "SSIM", field: "ss", fromZero: false, digits: 3),
        View(name: "vbv", title: "VBV occupancy before each removal (replay against each run's VBV), kbit", yLabel: "buffer fullness (kbit)",
             field: "vb", style: "steps"),
    ]

    /// The views of a clip: ``views``, with one per perceptual metric in `metrics` (frame_quality_metrics, `--metrics`)
    /// after the SSIM view, the report's `--metric` (`first`) first among them.
    static func views(metrics: [QualityMetric], first: CurveMetric) -> [View] {
        let ordered = metrics.filter { CurveMetric.quality($0) == first } + metrics.filter { CurveMetric.quality($0) != first }
        let perceptual = ordered.map { m -> View in
            let metric = CurveMetric.quality(m)
            let name = metric.axisLabel.replacingOccurrences(of: ", mean of frames", with: "")
            return View(name: "q-" + m.column.replacingOccurrences(of: "_", with: "-"),
                        title: "\(name) per frame (frame_quality_metrics.\(m.column): \(m == .xpsnr ? "ffmpeg's xpsnr filter" : "libvmaf") on each decoded picture against the source picture the lab paired it with)",
                        yLabel: metric.title + metric.unit, field: ChartColumns.qualityField(m), fromZero: false, digits: m == .ssim || m == .msSSIM ? 4 : nil)
        }
        let k = (views.firstIndex { $0.name == "ssim" } ?? views.count - 1) + 1
        return Array(views[..<k]) + perceptual + Array(views[k...])
    }

    /// A marker glyph for the picker, in the shape the charts draw (``ChartGroup/markerShapes``).
    static let glyphs = ["□", "○", "△", "◇", "▽", "⬠", "×", "+", "✳"]

    /// The overlay section of an experiment page (HTML, the data blocks and scripts included; the page is one folder
    /// below the report's top), its gnuplot files written in `dir` and their pictures queued on `queue` (drawn by the
    /// caller, as the rate-quality charts); empty when no clip has a run with frames.
    /// - Parameter picked: the runs to show at first (``Report/Options/overlay``); nil: the default choices.
    /// - Parameter curves: ``Report/curves(_:)`` of `runs` when the caller has them; nil: computed here.
    /// - Throws: the store's errors; `.data` for a damaged frame row; the gnuplot files' write errors.
    static func section(runs: [ReportData.Run], paged: Set<Int64>, picked: Set<Int64>? = nil, store: LabStore,
                        dir: String? = nil, queue: PlotQueue? = nil, curves: [String: [Report.Curve]]? = nil, metric: CurveMetric = .psnr) throws -> String {
        let byClip = Dictionary(grouping: runs, by: \.row.clip)
        // The experiment's rate-quality chart's styles: the same configurations, so the same colour and marker.
        let curveConfigurations = (curves ?? Report.curves(runs)).values.flatMap { $0.map(\.configuration) }
        let styles = Plots.ConfigurationStyle.styles(for: curveConfigurations)
        let others = Array(Set(runs.map(\.configuration)).subtracting(styles.keys)).sorted()
        func style(_ configuration: String) -> (colour: String, marker: Int) {
            if let s = styles[configuration] { return (s.colour, Plots.ConfigurationStyle.pointTypes.firstIndex(of: s.pointType) ?? 0) }
            let k = styles.count + (others.firstIndex(of: configuration) ?? 0)
            return (Plots.ConfigurationStyle.colours[k % Plots.ConfigurationStyle.colours.count], k % ChartGroup.markerShapes.count)
        }
        var html = "", groups = 0
        var origins: [String] = []
        for (c, clip) in byClip.keys.sorted().enumerated() {
            try Interruption.check()
            let offered = choices(byClip[clip]!, paged: paged, picked: picked)
            guard !offered.isEmpty else { continue }
            var group = ChartGroup()
            group.xLabel = "decode time (s) from each run's first PTS"
            var rateLimits: [ChartGroup.Limit] = [], bufferLimits: [ChartGroup.Limit] = []
            var picker = "<div class=\"run-picker\">Runs shown: "
            let name = "clip-\(c + 1)"
            var markers: [Int] = [], dashes: [[Int]?] = [], perConfiguration: [String: Int] = [:]
            // A configuration's runs ranked for their dash with the shown ones first: a run shown at first is solid
            // when it is its configuration's only one shown, whatever its place in the picker (run id order).
            var rankOf: [Int64: Int] = [:]
            for (run, _) in offered.filter(\.shown) + offered.filter({ !$0.shown }) {
                rankOf[run.row.runID] = perConfiguration[run.configuration, default: 0]
                perConfiguration[run.configuration, default: 0] += 1
            }
            var pairsOf: [Int: [DataRateLimits.Pair]] = [:]
            var lanes: [KeyframeTimeline.OverlayLane] = []
            // The perceptual metrics some run of the clip was scored on (frame_quality_metrics), by their place in the lab's order.
            var qualityFields: [Int: QualityMetric] = [:]
            for (run, shown) in offered {
                try Interruption.check()
                let row = run.row
                guard let tn = row.timebaseNum, let td = row.timebaseDen, tn > 0, td > 0, let timebase = try? Rational(Int64(tn), Int64(td)),
                      let frameTicks = ReportData.frameTicks(row) else { continue }
                let input = try ChartRunInput.load(run: row.runID, store: store)
                guard !input.frames.isEmpty else { continue }
                for m in ChartColumns.qualityMetrics(input.quality) { qualityFields[QualityMetric.allCases.firstIndex(of: m)!] = m }
                let settings = try? StoredRunSettings(json: row.settingsJSON, runID: row.runID)
                var arrival: [Int64] = []
                for f in input.frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
                let vbv = RunPage.vbvReplay(sizes: input.frames.map(\.sizeBytes), arrival: arrival, timebase: timebase, row: row, settings: settings)
                // The DataRateLimits pairs the run was checked against (`data_rate_windows`): fields r0, r1, ...
                let derived = ChartColumns.derive(input.frames, timebase: timebase, frameTicks: frameTicks, vbv: vbv?.result, limits: input.limits)
                let (colour, marker) = style(run.configuration)
                // The second run of a configuration dashed, the third dotted, ...
                let rank = rankOf[row.runID] ?? 0
                markers.append(marker)
                dashes.append([nil, [8, 4], [2, 3], [10, 3, 2, 3]][rank % 4])
                let label = "run \(row.runID): \(run.configuration) · \(run.label)"
                group.runs.append(ChartGroup.Run(runID: row.runID, name: label, colour: colour, visible: shown,
                                                 fields: ChartColumns.fields(input.frames, derived: derived, timebase: timebase, quality: input.quality)))
                let time = ChartTime(pts: input.frames.map(\.pts), timebase: timebase)
                if !time.title.isEmpty { origins.append("run \(row.runID): \(time.title)") }
                // The run page's keyframe timeline of the run: its limits (keyframe_analysis) and violations.
                let frameSeconds = (try? frameTicks * timebase)?.approximateValue ?? 0
                lanes.append(.init(run: group.runs[group.runs.count - 1], frames: input.frames,
                                   timeline: KeyframeTimeline(frames: input.frames, rules: run.rules, time: time, frameSeconds: frameSeconds, skipped: input.skipped),
                                   timebase: timebase, frameSeconds: frameSeconds))
                // Every offered run's lines, drawn (and counted in the y range) while the run is shown.
                let k = group.runs.count - 1
                let target = settings?.rcMethod == "abr" ? settings?.resolvedNumber("bitrate_kbps") : nil
                rateLimits += ChartRunPage.rateLines(targetKbps: target, maxrateKbps: vbv?.maxrate, meanKbps: nil, prefix: "run \(row.runID) ", colour: colour)
                    .map { var l = $0; l.run = k; return l }
                if let b = derived.vbv?.bufferKbit { bufferLimits.append(.init(name: "run \(row.runID) vbv-bufsize \(ChartGroup.trimmed(String(format: "%.1f", b))) kbit", value: b, colour: colour, run: k)) }
                if !derived.dataRate.isEmpty { pairsOf[k] = derived.dataRate.map { $0.pair } }
                picker += "<label><input type=\"checkbox\" class=\"run-pick\" data-group=\"\(name)\" data-run=\"\(k)\"\(shown ? " checked" : "")> "
                picker += "<span style=\"color:\(colour); font-weight: bold\">\(glyphs[marker % glyphs.count])</span> <span class=\"swatch\" style=\"background:\(colour)\"></span>\(HTML.escape(label))\(run.kbps.map { " (\(String(format: "%.0f", $0)) kbit/s)" } ?? "")</label> "
            }
            guard !group.runs.isEmpty else { continue }
            groups += 1
            let indices = Array(group.runs.indices)
            let prefix = "ov\(c + 1)"
            var charts: [(chart: ChartGroup.Chart, view: View)] = []
            for view in Self.views(metrics: qualityFields.sorted { $0.key < $1.key }.map(\.value), first: metric) {
                let drawn = indices.filter { r in group.runs[r].fields.contains { $0.name == view.field } }
                guard !drawn.isEmpty else { continue }
                let series = drawn.map { r -> ChartGroup.Series in
                    var s = ChartGroup.Series(name: "run \(group.runs[r].runID)", colour: group.runs[r].colour, run: r, field: view.field, scale: view.scale, style: view.style)
                    s.marker = markers[r]
                    s.dash = view.style == "typed" ? nil : dashes[r]
                    return s
                }
                let limits = view.name == "bitrate" ? rateLimits : view.name == "vbv" ? bufferLimits : []
                charts.append((.init(id: "\(prefix)-\(view.name)", yLabel: view.yLabel, series: series, limits: limits, fromZero: view.fromZero, digits: view.digits), view))
            }
            if let chart = dataRateChart(group: group, pairsOf: pairsOf, markers: markers, dashes: dashes, id: "\(prefix)-datarate") { charts.append(chart) }
            group.charts = charts.map(\.chart)
            html += "<h3>\(HTML.escape(Paths.fileName(clip)))</h3>\n" + picker + "</div>\n" + ChartPage.help(group: name)
            if !origins.isEmpty { html += ChartPage.origin(origins) }
            origins = []
            for (chart, view) in charts {
                var gnuplot: (name: String, data: [String])?
                if let dir, try writeGnuplot(group: group, chart: chart, view: view, markers: markers, dashes: dashes, name: chart.id, dir: dir, queue: queue) {
                    gnuplot = (chart.id, ["\(chart.id).dat"])
                }
                html += ChartPage.chart(id: chart.id, title: view.title, gnuplot: gnuplot)
            }
            if let keys = KeyframeTimeline.overlay(lanes, id: "\(prefix)-keyframes", follows: name) {
                // Its gnuplot picture: the lanes of the runs shown at first.
                let files = try dir.map { try KeyframeTimeline.overlayGnuplot(group: keys, lanes: lanes, name: "\(prefix)-keyframes", dir: $0, queue: queue) } ?? []
                html += ChartPage.chart(id: "\(prefix)-keyframes", title: "Keyframe timeline over PTS (s from each run's first PTS), one lane per run, with each run's keyframe limits",
                                        gnuplot: files.isEmpty ? nil : (name: "\(prefix)-keyframes", data: files), note: HTML.escape(Self.keyframeNote))
                html += ChartPage.dataBlock(keys, name: "\(name)-keyframes")
            }
            html += ChartPage.dataBlock(group, name: name)
        }
        guard groups > 0 else { return "" }
        let how = picked == nil ? "one run of each configuration (the middle of its rates) is shown, at most \(maxShown) at first (the lowest run ids; the others can be added)" : "the runs given to --overlay are shown (the default, one rate of each configuration, can be added)"
        return "<h2>Runs overlaid</h2>\n<p class=\"note\">Per clip, \(how); the runs with a run page can be added with the boxes. Each run is drawn in its configuration's colour and marker, those of the rate-quality chart above; a second run of a configuration is dashed. Every chart of a clip shares one x axis: each frame's decode time (its DTS, or the largest DTS before it) in seconds from its run's first PTS. The limits of the runs shown are dashed lines in the run's colour, and the y axis of a chart from 0 fits the runs shown. Choose the runs shown first with <code>enclab report --overlay ID,ID,...</code>.</p>\n"
            + html + ChartPage.scripts(depth: 1)
    }

    /// What the overlay's keyframe timeline draws (``KeyframeTimeline/overlay(_:id:follows:)``).
    static let keyframeNote = "Each run's IDR (red, tall) and I frames (orange) at their PTS; its own x axis (PTS, not the decode time of the charts above: the keyframe limits count pictures in display order and seconds of PTS), zoomed on its own. Where a run has VideoToolbox keyframe limits stored (keyframe_analysis: encoded with --vt MaxKeyFrameInterval or MaxKeyFrameIntervalDuration, or checked with check --db), dashed blue in the upper part of its lane: where the next keyframe was due by MaxKeyFrameInterval (frames after a keyframe); dashed purple in the lower part: by MaxKeyFrameIntervalDuration (seconds after a keyframe's PTS); shaded red: the stretches over a limit (keyframe_violations), as on the run pages. A lane's name gives the limits and the violations count."

    static let dataRateView = View(name: "datarate", title: "DataRateLimits: the bytes of each pair's window of decode time starting at each frame, for the runs with pairs (encoded with --vt DataRateLimits or checked with check --db); each shown run's limits dashed in its colour, the windows over a limit red points named with their run",
                                   yLabel: "bytes in the window of the pair", field: "r0", style: "steps")

    /// The DataRateLimits chart of a clip's overlay: per run with pairs (`pairsOf`, run index to its pairs in order),
    /// per pair the bytes of the window of its length starting at each frame (field `rN`, ``ChartColumns/derive``, the
    /// run page's windows) in the run's colour and dash, the windows over the pair's bytes as red points named
    /// "run ID pair N: over B bytes"; each shown run's pairs as limits in its colour, named with run, pair, bytes and
    /// seconds. Nil when no run of the clip has pairs.
    static func dataRateChart(group: ChartGroup, pairsOf: [Int: [DataRateLimits.Pair]], markers: [Int], dashes: [[Int]?],
                              id: String) -> (chart: ChartGroup.Chart, view: View)? {
        var series: [ChartGroup.Series] = [], limits: [ChartGroup.Limit] = []
        for r in pairsOf.keys.sorted() {
            let run = group.runs[r]
            for (i, pair) in pairsOf[r]!.enumerated() {
                let seconds = DataRateLimits.decimal(pair.seconds)
                var s = ChartGroup.Series(name: "run \(run.runID) pair \(i + 1): bytes in \(seconds) s", colour: run.colour, run: r, field: "r\(i)", style: "steps")
                s.marker = markers[r]
                s.dash = dashes[r]
                series.append(s)
                series.append(.init(name: "run \(run.runID) pair \(i + 1): over \(pair.bytes) bytes", colour: ChartRunPage.violationColour, run: r,
                                    field: "r\(i)", above: Double(pair.bytes), style: "points"))
                limits.append(.init(name: "run \(run.runID) pair \(i + 1) limit \(pair.bytes) bytes in \(seconds) s", value: Double(pair.bytes), colour: run.colour, run: r))
            }
        }
        guard !series.isEmpty else { return nil }
        return (chart: ChartGroup.Chart(id: id, yLabel: dataRateView.yLabel, series: series, limits: limits), view: dataRateView)
    }

    /// `NAME.dat` (one block per run of the group, in order: `x value`, the x of ``ChartGroup``, the value as the chart
    /// draws it, NaN where the run has none; the frame-size chart a third column, the frame's type) and `NAME.gp`, its PNG
    /// and SVG queued: each run shown at first in its colour, dash and marker (gnuplot's point type of its configuration,
    /// every few points; on the frame-size chart every frame's point, coloured by its type as on the run pages, with a
    /// key entry per type), the chart's limits as dashed lines.
    /// Key titles are "run N" (the lab's digits; the data file's block comments name each run's configuration).
    /// Nothing is written (false) when no run has a value to draw (a stream shorter than one 1-second window: gnuplot
    /// refuses a plot whose every point is undefined).
    @discardableResult
    static func writeGnuplot(group: ChartGroup, chart: ChartGroup.Chart, view: View, markers: [Int], dashes: [[Int]?], name: String,
                             dir: String, queue: PlotQueue?) throws -> Bool {
        let typed = view.style == "typed"
        var data = "# \(view.yLabel) against decode time (s from each run's first PTS)\(typed ? ", frame type (0 IDR, 1 I, 2 P, 3 Bref, 4 B)" : ""); one block per run, index k = the k-th run\n"
        var series: [String] = []
        var typesShown = Set<Int>()
        for (k, s) in chart.series.enumerated() {
            let run = group.runs[s.run]
            guard let xs = run.fields.first(where: { $0.name == "x" })?.json, let vs = run.fields.first(where: { $0.name == s.field })?.json else { continue }
            let x = parseNumbers(xs), v = parseNumbers(vs)
            // The frame-size chart's third column: each frame's type (``RunPage/types``), its points' colour.
            let types = typed ? run.fields.first(where: { $0.name == "t" }).map { parseNumbers($0.json).map { $0.map { Int($0) } } } : nil
            let drawable = zip(x, v).contains { $0 != nil && $1 != nil }
            data += "# run \(run.runID): \(Plots.shown(run.name, limit: .max))\n"
            for (i, (a, b)) in zip(x, v).enumerated() {
                data += "\(a.map { "\($0)" } ?? "NaN") \(b.map { "\($0 * s.scale)" } ?? "NaN")"
                if let types { data += " \(types.indices.contains(i) ? types[i].map(String.init) ?? "NaN" : "NaN")" }
                data += "\n"
            }
            data += "\n\n"
            let pointType = Plots.ConfigurationStyle.pointTypes[markers[s.run] % Plots.ConfigurationStyle.pointTypes.count]
            let dash = dashes[s.run].map { d in "dt (\(d.map(String.init).joined(separator: ",")))" } ?? "dt 1"
            let interval = max(1, x.count / 25)
            // The picture draws the runs shown at first (the data file holds every offered run).
            guard drawable && run.visible else { continue }
            if let types {
                // Bitrate Viewer's view: the run's line in its colour, each frame's point in its type's colour (the
                // run's marker shape), one key entry per type below.
                series.append("'\(name).dat' index \(k) using 1:2 with lines lw 1 \(dash) lc rgb '\(run.colour)' title 'run \(run.runID)'")
                series.append("'\(name).dat' index \(k) using 1:2:(typecolour($3)) with points pt \(pointType) ps 1 lc rgb variable notitle")
                typesShown.formUnion(types.compactMap { $0 })
                continue
            }
            // The series' own name (the lab's words and digits: no quote) where a run has several series (DataRateLimits).
            let title = view.name == dataRateView.name ? s.name : "run \(run.runID)"
            if let above = s.above {
                series.append("'\(name).dat' index \(k) using 1:($2 > \(above) ? $2 : 1/0) with points pt 7 ps 0.7 lc rgb '\(s.colour)' title '\(title)'")
                continue
            }
            let with = view.style == "steps" ? "steps lw 1.5 \(dash)" : "linespoints lw 1.5 \(dash) pt \(pointType) ps 1 pi \(interval)"
            series.append("'\(name).dat' index \(k) using 1:2 with \(with) lc rgb '\(run.colour)' title '\(title)'")
        }
        guard !series.isEmpty else { return false }
        for (t, type) in RunPage.types.enumerated() where typesShown.contains(t) {
            series.append("NaN with points pt 7 ps 1 lc rgb '\(RunPage.colours[t])' title '\(type)'")
        }
        try Plots.write(data, to: "\(dir)/\(name).dat")
        // The lines of the runs drawn (those shown at first).
        for l in chart.limits where l.run.map({ group.runs[$0].visible }) ?? true {
            series.append("\(l.value) with lines dt 2 lw 1.5 lc rgb '\(l.colour)' title '\(l.name)'")
        }
        try Plots.both(dir: dir, name: name, body: """
            set xlabel 'decode time (s from each run''s first PTS)'
            \(ChartTime.axisFormat)
            set ylabel '\(view.yLabel)'
            \(view.fromZero ? "set yrange [0:*]" : "")
            set key below horizontal
            set grid
            \(typed ? "typecolour(t) = " + RunPage.colours.enumerated().map { "t == \($0.offset) ? 0x\($0.element.dropFirst()) : " }.joined() + "0x000000" : "")
            plot \(series.joined(separator: ", \\\n     "))
            """, arguments: [], size: (1100, 350), queue: queue)
        return true
    }

    /// The numbers of a JSON array the report wrote (``ChartGroup/fixed(_:digits:)``, ``ChartGroup/integers(_:)``):
    /// `null` as nil.
    static func parseNumbers(_ json: String) -> [Double?] {
        json.dropFirst().dropLast().split(separator: ",").map { $0 == "null" ? nil : Double($0) }
    }
}
