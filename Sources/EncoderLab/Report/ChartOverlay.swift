import Foundation
import H264

/// The experiment page's overlay views: per clip, the runs a user picks drawn on one set of interactive charts that
/// share one x column (decode time from each run's first PTS, ``ChartGroup``): the bitrate of 1-second windows of
/// decode time, each frame's size (a line per run, its points coloured by frame type), per-frame PSNR of the frame
/// and SSIM, and VBV occupancy for runs with a VBV; each shown run's target and vbv-maxrate as lines.
///
/// Which runs: the page offers, per clip, one run of each configuration (``ReportData/configuration(_:)``), the one
/// at the middle of its rates (by bitrate, then run id; the lower middle of an even count), shown at first, and the
/// runs that have a run page (``Report/Options/runs``, `--worst`, `--best`), hidden at first; checkboxes above the
/// charts show and hide them. At most ``maxRuns`` per clip (the first configurations' first).
enum ChartOverlay {
    static let maxRuns = 12
    static let colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

    /// The runs offered for one clip: (run, shown at first), in order.
    static func choices(_ runs: [ReportData.Run], paged: Set<Int64>) -> [(run: ReportData.Run, shown: Bool)] {
        let done = runs.filter { $0.row.status == "done" && ($0.row.frames ?? 0) > 0 }
        var byConfiguration: [String: [ReportData.Run]] = [:]
        for run in done { byConfiguration[run.configuration, default: []].append(run) }
        var out: [(run: ReportData.Run, shown: Bool)] = []
        for name in byConfiguration.keys.sorted() {
            let list = byConfiguration[name]!.sorted { ($0.kbps ?? .infinity, $0.row.runID) < ($1.kbps ?? .infinity, $1.row.runID) }
            out.append((list[(list.count - 1) / 2], true))
        }
        let chosen = Set(out.map(\.run.row.runID))
        for run in done.sorted(by: { $0.row.runID < $1.row.runID }) where paged.contains(run.row.runID) && !chosen.contains(run.row.runID) {
            out.append((run, false))
        }
        return Array(out.prefix(maxRuns))
    }

    /// The overlay section of an experiment page (HTML, the data blocks and scripts included; the page is one folder
    /// below the report's top); empty when no clip has a run with frames.
    /// - Throws: the store's errors; `.data` for a damaged frame row.
    static func section(runs: [ReportData.Run], paged: Set<Int64>, store: LabStore) throws -> String {
        let byClip = Dictionary(grouping: runs, by: \.row.clip)
        var html = "", groups = 0
        for (c, clip) in byClip.keys.sorted().enumerated() {
            try Interruption.check()
            let offered = choices(byClip[clip]!, paged: paged)
            guard !offered.isEmpty else { continue }
            var group = ChartGroup()
            group.xLabel = "decode time (s) from each run's first PTS"
            var rateLimits: [ChartGroup.Limit] = [], bufferLimits: [ChartGroup.Limit] = []
            var picker = "<div class=\"run-picker\">Runs shown: "
            let name = "clip-\(c + 1)"
            for (run, shown) in offered {
                try Interruption.check()
                let row = run.row
                guard let tn = row.timebaseNum, let td = row.timebaseDen, tn > 0, td > 0, let timebase = try? Rational(Int64(tn), Int64(td)),
                      let frameTicks = ReportData.frameTicks(row) else { continue }
                let input = try ChartRunInput.load(run: row.runID, store: store)
                guard !input.frames.isEmpty else { continue }
                let settings = try? StoredRunSettings(json: row.settingsJSON, runID: row.runID)
                var arrival: [Int64] = []
                for f in input.frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
                let vbv = RunPage.vbvReplay(sizes: input.frames.map(\.sizeBytes), arrival: arrival, timebase: timebase, row: row, settings: settings)
                let derived = ChartColumns.derive(input.frames, timebase: timebase, frameTicks: frameTicks, vbv: vbv?.result, limits: [])
                let colour = colours[group.runs.count % colours.count]
                let label = "run \(row.runID): \(run.configuration) · \(run.label)"
                group.runs.append(ChartGroup.Run(runID: row.runID, name: label, colour: colour, visible: shown,
                                                 fields: ChartColumns.fields(input.frames, derived: derived, timebase: timebase)))
                if shown {
                    if settings?.rcMethod == "abr", let t = settings?.resolvedNumber("bitrate_kbps") {
                        rateLimits.append(.init(name: "run \(row.runID) target \(ChartGroup.trimmed(String(format: "%.1f", t))) kbit/s", value: t, colour: colour))
                    }
                    if let m = vbv?.maxrate { rateLimits.append(.init(name: "run \(row.runID) vbv-maxrate \(Int64(m)) kbit/s", value: m, colour: colour)) }
                    if let b = derived.vbv?.bufferKbit { bufferLimits.append(.init(name: "run \(row.runID) vbv-bufsize \(ChartGroup.trimmed(String(format: "%.1f", b))) kbit", value: b, colour: colour)) }
                }
                let k = group.runs.count - 1
                picker += "<label><input type=\"checkbox\" class=\"run-pick\" data-group=\"\(name)\" data-run=\"\(k)\"\(shown ? " checked" : "")> "
                picker += "<span class=\"swatch\" style=\"background:\(colour)\"></span>\(HTML.escape(label))\(run.kbps.map { " (\(String(format: "%.0f", $0)) kbit/s)" } ?? "")</label> "
            }
            guard !group.runs.isEmpty else { continue }
            groups += 1
            let indices = Array(group.runs.indices)
            func series(_ field: String, scale: Double = 1, style: String = "line") -> [ChartGroup.Series] {
                indices.filter { r in group.runs[r].fields.contains { $0.name == field } }.map { r in
                    .init(name: "run \(group.runs[r].runID)", colour: group.runs[r].colour, run: r, field: field, scale: scale, style: style)
                }
            }
            let prefix = "ov\(c + 1)"
            var charts: [(ChartGroup.Chart, String)] = [
                (.init(id: "\(prefix)-bitrate", yLabel: "bitrate (kbit/s), 1 s window", series: series("w"), limits: rateLimits),
                 "Bitrate over 1-second windows of decode time (kbit/s), each window starting at a frame's DTS"),
                (.init(id: "\(prefix)-sizes", yLabel: "frame size (kbit)", series: series("s", scale: 0.008, style: "typed")),
                 "Frame size per frame (kbit); points coloured by type: IDR red, I orange, P blue, Bref green, B purple"),
            ]
            let psnr = series("a"), ssim = series("ss"), vbv = series("vb", style: "steps")
            if !psnr.isEmpty {
                charts.append((.init(id: "\(prefix)-psnr", yLabel: "PSNR (dB)", series: psnr, fromZero: false),
                               "PSNR per frame, three planes' squared error pooled (frames.psnr_avg, the lab's decode), dB"))
            }
            if !ssim.isEmpty {
                charts.append((.init(id: "\(prefix)-ssim", yLabel: "SSIM", series: ssim, fromZero: false, digits: 3), "SSIM per frame (x264's, frames.ssim)"))
            }
            if !vbv.isEmpty {
                charts.append((.init(id: "\(prefix)-vbv", yLabel: "buffer fullness (kbit)", series: vbv, limits: bufferLimits),
                               "VBV occupancy before each removal (replay against each run's VBV), kbit"))
            }
            group.charts = charts.map(\.0)
            html += "<h3>\(HTML.escape(Paths.fileName(clip)))</h3>\n" + picker + "</div>\n" + ChartPage.help(group: name)
            for (chart, title) in charts { html += ChartPage.chart(id: chart.id, title: title, gnuplot: nil) }
            html += ChartPage.dataBlock(group, name: name)
        }
        guard groups > 0 else { return "" }
        return "<h2>Runs overlaid</h2>\n<p class=\"note\">Per clip, one run of each configuration (the middle of its rates) is shown; the runs with a run page can be added with the boxes. Every chart of a clip shares one x axis: each frame's decode time (its DTS, or the largest DTS before it) in seconds from its run's first PTS. Limits of the runs shown first are dashed lines in the run's colour.</p>\n"
            + html + ChartPage.scripts(depth: 1)
    }
}
