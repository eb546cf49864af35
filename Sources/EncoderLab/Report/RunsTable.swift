import Foundation

/// The experiment page's runs table: ten columns by default, with human names and units, and every other column
/// (the run's facts and each `run_metrics` column by its SQL name) behind a column chooser, a `<details>` of
/// checkboxes that show or hide them (``HTML/pageScript``; without a script the default columns still read).
extension Report {
    /// The default columns' headers, in order (at most 10, so the table fits 1280 px).
    static let summaryHeaders = [
        "run", "target kbit/s", "achieved kbit/s", "error %", "peak 1 s kbit/s (× target)", "VBV under / over",
        "PSNR pooled dB", "SSIM (x264 mean)", "largest GOP frames, longest GOP s", "rule violations",
    ]

    /// The `run_metrics` columns the default columns show (the chooser leaves them out).
    static let summaryMetrics: Set<String> = [
        "target_kbps", "bitrate_kbps", "target_error_pct", "peak_1s_kbps", "vbv_underflows", "vbv_overflows", "psnr_global",
        "ssim_mean", "gop_max_frames", "gop_max_seconds",
    ]

    /// A run's rule violations as the table counts them: each stored keyframe violation (frame limit, duration limit,
    /// stall) plus each DataRateLimits window over its limit; nil when the run has no rules stored.
    static func violationCount(_ run: ReportData.Run) -> Int64? {
        guard let rules = run.rules, rules.keyframes != nil || !rules.windows.isEmpty else { return nil }
        return Int64(rules.keyframeViolations.count) + rules.windows.reduce(0) { $0 + $1.windowsOver }
    }

    /// What the run cell shows of a run's grid label (`key=value` words, the label column has it whole): the words the
    /// configuration does not already say, nor every run of the table by its encoder (`common`). The configuration says its own words,
    /// its mode (`rc=abr` under "abr ...") and for OpenH264 `encoder=openh264` and `iRCMode=MODE` ("openh264 MODE ...");
    /// what is left is mostly the rate (`bitrate=300`). A label of flags (`enclab encode`'s, `--bitrate 300`) is shown
    /// whole unless it is the configuration.
    static func labelShown(_ label: String, configuration: String, common: Set<Substring>) -> String {
        guard !label.isEmpty, label != configuration else { return "" }
        let words = label.split(separator: " ")
        guard !words.contains(where: { $0.hasPrefix("-") }) else { return label }
        let said = Set(configuration.split(separator: " "))
        let mode = configuration.split(separator: " ").first.map(String.init) ?? ""
        var modeWords: Set<String> = ["rc=\(mode)"]
        if mode == EncoderName.openh264.rawValue, let m = configuration.split(separator: " ").dropFirst().first {
            modeWords = ["encoder=\(mode)", "iRCMode=\(m)"]
        }
        return words.filter { !said.contains($0) && !modeWords.contains(String($0)) && !common.contains($0) }.joined(separator: " ")
    }

    /// The runs table (with its note on runs that are not repeatable).
    static func runsTable(_ runs: [ReportData.Run], data: ReportData, pages: [Int64: RunPage.Outcome],
                          files: [Int64: (stream: Bool, source: Bool)]) throws -> String {
        let e = HTML.escape
        var body = "<h2>Runs</h2>\n"
        body += "<p class=\"note\">Click a column's header to sort by it. A run page is linked from its id. Rates are run_metrics.bitrate_kbps over run_metrics.target_kbps; PSNR pooled is psnr_global (the squared error pooled over all samples of the three planes, x264's Global); the largest GOP is gop_max_frames (its frames) and the longest gop_max_seconds (its seconds: maybe another GOP); rule violations count the VideoToolbox rules' violations (the Rules section below), empty for a run without rules; a rule the run asked for that the lab did not apply (vt-compat) adds the GOPs of the stored frames over it, marked not applied ('0 + 2 not applied').</p>\n"
        let notRepeatable = runs.filter { $0.row.repeatable == false }.count
        if notRepeatable > 0 {
            body += "<p class=\"note\">\(notRepeatable) run\(notRepeatable == 1 ? " is" : "s are") not repeatable (column \"repeatable\" no: x264 with several threads under VBV, or --non-deterministic): another encode of the same run key gives other bytes, so a difference between such runs no larger than the spread between repeats (the noise floor, below) is not a difference of their settings. \(Repeatability.advice.prefix(1).uppercased() + Repeatability.advice.dropFirst()).</p>\n"
        }
        let extraMetrics = data.metricColumns.filter { !summaryMetrics.contains($0) }
        let runsFrames = data.metricColumns.contains("frames") ? [] : ["frames"]
        let extraHeaders = ["clip", "configuration", "label", "status", "repeatable"] + runsFrames + ["files", "PSNR from"] + extraMetrics + (data.hasRTP ? RTPColumns.headers : [])
        var rows: [[String]] = []
        rows.reserveCapacity(runs.count)
        func metric(_ run: ReportData.Run, _ name: String) -> Double? { run.metrics[name] ?? nil }
        func cell(_ text: String, sortValue: Double?) -> String {
            // The sort key of a cell whose text is not one number (``HTML/pageScript``).
            sortValue.map { "<span data-v=\"\($0.isFinite ? String($0) : "")\">\(text)</span>" } ?? text
        }
        // A label's flags each kept on one line with its value ("--vbv-bufsize 300"): the cell wraps between flags,
        // not after a flag's hyphens.
        func label(_ text: String) -> String {
            var groups: [String] = []
            for word in text.split(separator: " ", omittingEmptySubsequences: false).map(String.init) {
                if let last = groups.last, last.hasPrefix("--"), !last.contains(" "), !word.hasPrefix("--") { groups[groups.count - 1] += " " + word }
                else { groups.append(word) }
            }
            return groups.map { "<span class=\"flag\">\(e($0))</span>" }.joined(separator: " ")
        }
        // Per encoder, the grid label's words every run of the table by that encoder shares (none for one run): the
        // run cell leaves them out, as an OpenH264 configuration leaves out those of the experiment's OpenH264 runs.
        var commonWords: [String: Set<Substring>] = [:]
        for (encoder, list) in Dictionary(grouping: runs, by: \.encoder) where list.count > 1 {
            var common = Set(list[0].label.split(separator: " "))
            for run in list.dropFirst() { common.formIntersection(run.label.split(separator: " ")) }
            commonWords[encoder] = common
        }
        for run in runs {
            let id = run.row.runID
            var badges: [String] = []
            if run.row.status != "done" { badges.append("<span class=\"missing\">\(e(run.row.status))</span>") }
            if run.unverified && run.row.status == "done" && run.psnr != nil { badges.append("<span class=\"unverified\">unverified: x264 PSNR</span>") }
            if run.row.repeatable == false { badges.append("<span class=\"missing\">not repeatable</span>") }
            let stored = RunPage.storedWarnings(run.row.warningsJSON).count
            if stored > 0 { badges.append("<span class=\"untested\" title=\"runs.warnings: listed on the run's page, where it has one\">\(stored) warning\(stored == 1 ? "" : "s")</span>") }
            if run.row.status == "done", let found = files[id], !(found.stream && found.source) {
                badges.append("<span class=\"missing\">\([found.stream ? nil : "stream missing", found.source ? nil : "source missing"].compactMap { $0 }.joined(separator: ", "))</span>")
            }
            let idText = pages[id] != nil ? "<a href=\"run-\(id)/index.html\">\(id)</a>" : "\(id)"
            let shownLabel = labelShown(run.label, configuration: run.configuration, common: commonWords[run.encoder] ?? [])
            let runCell = "<span data-v=\"\(id)\">\(idText) \(e(run.configuration)) · \(e(run.clipName))\(shownLabel.isEmpty ? "" : " · <span class=\"label\">\(label(shownLabel))</span>")\(badges.isEmpty ? "" : " " + badges.joined(separator: " "))</span>"
            let target = metric(run, "target_kbps"), peak = metric(run, "peak_1s_kbps")
            var peakCell = HTML.number(peak, digits: 1)
            if let peak, let target, target > 0 { peakCell = cell("\(peakCell) (\(HTML.number(peak / target, digits: 2))×)", sortValue: peak) }
            let under = metric(run, "vbv_underflows"), over = metric(run, "vbv_overflows")
            let vbvCell = under == nil && over == nil ? ""
                : cell("\(HTML.number(under, digits: 0)) / \(HTML.number(over, digits: 0))", sortValue: (under ?? 0) + (over ?? 0))
            let gopFrames = metric(run, "gop_max_frames"), gopSeconds = metric(run, "gop_max_seconds")
            let gopCell = gopFrames == nil ? "" : cell("\(HTML.number(gopFrames, digits: 0))\(gopSeconds.map { "; longest \(HTML.number($0, digits: 3)) s" } ?? "")", sortValue: gopFrames)
            let violations = violationCount(run)
            var violationsCell = violations.map { $0 == 0 ? "<span class=\"pass\">0</span>" : "<span class=\"fail\">\($0)</span>" } ?? ""
            // A rule the run asked for but the lab did not apply (vt-compat) has no stored violations: not a pass.
            if let violations, let unapplied = run.rules.flatMap(RuleSection.notAppliedOver) {
                let names = e(unapplied.rules.joined(separator: ", "))
                // Short, as the column is narrow (the badge does not wrap); the whole in its title and the Rules section.
                let text = unapplied.over.map { "\(violations) + \($0) not applied" } ?? "\(violations) + not applied"
                let title = unapplied.over.map { "\($0) GOP\($0 == 1 ? "" : "s") of the stored frames over \(names), not applied" } ?? "\(names) not applied, not counted"
                violationsCell = cell("<span class=\"\(violations > 0 || (unapplied.over ?? 0) > 0 ? "fail" : "untested")\" title=\"\(title)\">\(text)</span>",
                                      sortValue: Double(violations + Int64(unapplied.over ?? 0)))
            }
            var row = [runCell, HTML.number(target, digits: 1), HTML.number(run.kbps, digits: 1), HTML.number(metric(run, "target_error_pct"), digits: 2),
                       peakCell, vbvCell, HTML.number(run.psnr, digits: 3), HTML.number(metric(run, "ssim_mean"), digits: 4), gopCell, violationsCell]
            // The chooser's columns.
            var filesCell = ""
            if run.row.status == "done", let found = files[id] {
                filesCell = found.stream && found.source ? "ok" : "<span class=\"missing\">\([found.stream ? nil : "stream missing", found.source ? nil : "source missing"].compactMap { $0 }.joined(separator: ", "))</span>"
            }
            let status = run.row.status == "done" ? "done" : "<span class=\"missing\">\(e(run.row.status))</span>"
            let source = run.row.status != "done" || run.psnr == nil ? "" : run.unverified ? "<span class=\"unverified\">unverified: x264 PSNR</span>" : "lab"
            let repeatable = run.row.repeatable.map { $0 ? "yes" : "<span class=\"missing\">no</span>" } ?? ""
            row += [e(run.clipName), e(run.configuration), e(run.label), status, repeatable]
            if !runsFrames.isEmpty { row.append(run.row.frames.map(String.init) ?? "") }
            row += [filesCell, source]
            row += extraMetrics.map { HTML.number(metric(run, $0), digits: integerMetrics.contains($0) ? 0 : 3) }
            if data.hasRTP { row += RTPColumns.cells(run.rtp) }
            rows.append(row)
        }
        let defaults = summaryHeaders.count
        let optional = Set(defaults..<(defaults + extraHeaders.count))
        body += HTML.chooser(table: "runs", headers: extraHeaders, first: defaults)
        body += HTML.table(headers: summaryHeaders + extraHeaders, rows: rows, sortable: true,
                           textColumns: [0, defaults, defaults + 1, defaults + 2, defaults + 3, defaults + 4, defaults + 5 + runsFrames.count, defaults + 6 + runsFrames.count],
                           id: "runs", optional: optional)
        return body
    }
}
