import Foundation

/// The VideoToolbox rules of runs in the report: a pass/fail badge per rule and a table of violations (which limit,
/// from and to which frame, by how much), for runs recorded by `enclab check --db` and for encodes with VideoToolbox
/// rules (`keyframe_analysis`, `keyframe_violations`, `data_rate_windows`, ``LabStore/ReportRules``).
///
/// Rules as stored: MaxKeyFrameInterval and MaxKeyFrameIntervalDuration from `keyframe_analysis` (frame limit,
/// duration limit; a stall counts against the duration), DataRateLimits one badge per pair from `data_rate_windows`
/// (every window over the pair's bytes is a violation, the worst is stored). AllowFrameReordering and H264EntropyMode
/// of a check run are not stored per violation: their badge says so.
enum RuleSection {
    /// One rule's result.
    struct Badge {
        var rule: String
        /// Violations; nil: not stored (checked by `enclab check`, not recorded per violation).
        var violations: Int64?
        /// Why the lab did not apply the rule the run asked for (vt-compat); nil: applied. Such a rule has no stored
        /// violations and never reads "pass".
        var notApplied: String? = nil
        /// For a rule not applied: the GOPs of the stored frames over it (``framesOver(_:)``); nil: not counted.
        var over: Int? = nil
        var html: String {
            let e = HTML.escape
            if let why = notApplied {
                let text = "\(rule): not applied (\(why))"
                guard let over else {
                    return "<span class=\"untested\" title=\"not applied, so no violations stored: enclab check --db FILE --run ID --expect \(e(rule)) checks the stream against it\">\(e(text)); not counted</span>"
                }
                return over == 0 ? "<span class=\"untested\">\(e(text)); no GOP over it</span>"
                    : "<span class=\"fail\">\(e(text)); \(over) GOP\(over == 1 ? "" : "s") over it in the stored frames</span>"
            }
            guard let n = violations else {
                return "<span class=\"untested\" title=\"not stored per violation: enclab check --db FILE --run ID checks it again\">\(e(rule)): not stored</span>"
            }
            return n == 0 ? "<span class=\"pass\">\(e(rule)): pass</span>" : "<span class=\"fail\">\(e(rule)): \(n) violation\(n == 1 ? "" : "s")</span>"
        }
    }

    /// The limit, in its own words, of a keyframe violation's kind.
    static func limit(_ kind: String, _ k: LabStore.ReportRules.Keyframes?) -> String {
        switch kind {
        case "frame-limit": return "MaxKeyFrameInterval=\(k?.frameLimit.map(String.init) ?? "?")"
        default: return "MaxKeyFrameIntervalDuration=\(k?.durationLimit.map(decimal) ?? "?")"
        }
    }

    /// The badges of a run's rules, in the order of ``StreamExpectations/checkable``.
    static func badges(_ rules: LabStore.ReportRules) -> [Badge] {
        var out: [Badge] = []
        let k = rules.keyframes
        let frameRule = k.flatMap { $0.maxFrames > 0 ? "MaxKeyFrameInterval=\($0.maxFrames)" : nil }
            ?? rules.expected["MaxKeyFrameInterval"].map { "MaxKeyFrameInterval=\($0)" }
        let durationRule = k.flatMap { $0.maxDuration != "0" ? "MaxKeyFrameIntervalDuration=\(decimal($0.maxDuration))" : nil }
            ?? rules.expected["MaxKeyFrameIntervalDuration"].map { "MaxKeyFrameIntervalDuration=\($0)" }
        if let frameRule {
            if let k, k.maxFrames > 0, k.frameLimit == nil {
                out.append(Badge(rule: frameRule, violations: nil, notApplied: notAppliedReason(k), over: framesOver(k)))
            } else {
                out.append(Badge(rule: frameRule, violations: Int64(rules.keyframeViolations.filter { $0.kind == "frame-limit" }.count)))
            }
        }
        if let durationRule {
            if let k, k.maxDuration != "0", k.durationLimit == nil {
                out.append(Badge(rule: durationRule, violations: nil, notApplied: notAppliedReason(k), over: nil))
            } else {
                out.append(Badge(rule: durationRule, violations: Int64(rules.keyframeViolations.filter { $0.kind != "frame-limit" }.count)))
            }
        }
        for w in rules.windows {
            out.append(Badge(rule: "DataRateLimits pair \(w.pair + 1) (\(w.bytes) bytes in \(decimal(w.seconds)) s\(w.honoured ? "" : ", not honoured under vt-compat"))",
                             violations: w.windowsOver))
        }
        for name in ["AllowFrameReordering", "H264EntropyMode"] {
            if let value = rules.expected[name] { out.append(Badge(rule: "\(name)=\(value)", violations: nil)) }
        }
        return out
    }

    /// Why a keyframe limit the run asked for was not applied (`keyframe_analysis.frame_limit` or `duration_limit`
    /// NULL).
    static func notAppliedReason(_ k: LabStore.ReportRules.Keyframes) -> String {
        k.vtCompat ? "vt-compat: the time limit alone is applied" : "the lab applied no such limit"
    }

    /// The GOPs of a run's stored keyframes (`keyframe_analysis.actual`, display order, to `runs.frames`) with more
    /// frames than MaxKeyFrameInterval, counted as `enclab check` counts them (frames before a first keyframe that
    /// is not frame 0 are a GOP of their own); nil without a frame limit, keyframes or a frame count.
    static func framesOver(_ k: LabStore.ReportRules.Keyframes) -> Int? {
        guard k.maxFrames > 0, let end = k.streamFrames, !k.keyframes.isEmpty else { return nil }
        var bounds = k.keyframes.first == 0 ? k.keyframes : [0] + k.keyframes
        bounds.append(end)
        return zip(bounds, bounds.dropFirst()).filter { $1 - $0 > k.maxFrames }.count
    }

    /// The GOPs over the rules a run asked for that the lab did not apply (``framesOver(_:)``); nil when every rule
    /// it asked for was applied.
    static func notAppliedOver(_ rules: LabStore.ReportRules) -> (rules: [String], over: Int?)? {
        let list = badges(rules).filter { $0.notApplied != nil }
        guard !list.isEmpty else { return nil }
        let counts = list.map(\.over)
        return (list.map(\.rule), counts.contains { $0 == nil } ? nil : counts.reduce(0) { $0 + $1! })
    }

    /// The violations table of a run: one row per stored keyframe violation (display order) and per DataRateLimits
    /// pair with windows over its limit (its worst window, decode order). Empty text when there are none.
    static func violationsTable(_ rules: LabStore.ReportRules, runLink: String? = nil) -> (rows: [[String]], count: Int) {
        let e = HTML.escape
        var rows: [[String]] = []
        let k = rules.keyframes
        for v in rules.keyframeViolations {
            let rule = limit(v.kind, k)
            let by: String
            switch v.kind {
            case "frame-limit":
                let limit = k?.frameLimit ?? 0
                by = "\(v.frames) frames, \(v.frames - limit) over \(limit)"
            default:
                let limit = k?.durationLimit.flatMap(Self.seconds) ?? 0
                by = "\(HTML.number(v.durationSeconds, digits: 3)) s, \(HTML.number(v.durationSeconds - limit, digits: 3)) s over \(e(k?.durationLimit.map(decimal) ?? "?")) s\(v.kind == "stall" ? " (a stall: two adjacent frames further apart than the limit)" : "")"
            }
            rows.append((runLink.map { [$0] } ?? []) + [e(rule), e(v.kind), "\(v.startFrame)", "\(v.endFrame)", "display", by])
        }
        for w in rules.windows where w.windowsOver > 0 {
            let by = "\(w.windowsOver) of \(w.windows) windows over; worst \(w.worstBytes.map(String.init) ?? "?") bytes, \(HTML.number(w.worstRatio, digits: 3))× the limit"
            rows.append((runLink.map { [$0] } ?? []) + ["DataRateLimits pair \(w.pair + 1): \(w.bytes) bytes in \(e(decimal(w.seconds))) s", "data-rate (worst window)",
                                                          w.worstStartFrame.map(String.init) ?? "", w.worstEndFrame.map(String.init) ?? "", "decode", by])
        }
        return (rows, rows.count)
    }

    static let violationHeaders = ["limit", "kind", "from frame", "to frame", "frame order", "by how much"]

    /// A stored exact number of seconds ("2", "3/2", "1001/500") as a decimal of at most 6 places ("2", "1.5",
    /// "2.002"), as `enclab check` prints it; a text that is not a number as it is.
    static func decimal(_ text: String) -> String {
        guard text.contains("/"), let value = seconds(text) else { return text }
        var t = String(format: "%.6f", value)
        while t.hasSuffix("0") { t.removeLast() }
        if t.hasSuffix(".") { t.removeLast() }
        return t
    }

    /// A decimal or fraction text ("2", "1.5", "1001/500") as seconds.
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: "/")
        if parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), d != 0 { return n / d }
        return Double(text)
    }

    /// The run page's section: badges and violations table, or "" for a run without rules.
    static func runPage(_ run: ReportData.Run) -> String {
        guard let rules = run.rules else { return "" }
        let list = badges(rules)
        guard !list.isEmpty else { return "" }
        var html = "<h2 id=\"rules\">VideoToolbox rules</h2>\n<p class=\"badges\">\(list.map(\.html).joined(separator: " "))</p>\n"
        if let k = rules.keyframes {
            html += "<p class=\"note\">Largest GOP \(k.largestGOPFrames) frames, longest GOP \(HTML.number(k.largestGOPSeconds, digits: 3)) s (keyframe_analysis)\(k.vtCompat ? "; vt-compat limits applied" : "")\(k.maxFrames > 0 && k.frameLimit == nil ? "; MaxKeyFrameInterval=\(k.maxFrames) was not applied, so no violation of it is stored (enclab check --db FILE --run \(run.row.runID) --expect MaxKeyFrameInterval=\(k.maxFrames) checks it)" : "").</p>\n"
        }
        let (rows, count) = violationsTable(rules)
        if count == 0 {
            html += "<p>No violations stored.</p>\n"
        } else {
            html += HTML.table(headers: violationHeaders, rows: rows, textColumns: [0, 1, 4, 5], id: "violations")
        }
        return html
    }

    /// The experiment page's section: every run with rules, its badges, and one violations table for them all; ""
    /// when no run has rules.
    static func experiment(_ runs: [ReportData.Run]) -> String {
        let ruled = runs.filter { $0.row.status == "done" && $0.rules.map { !badges($0).isEmpty } ?? false }
        guard !ruled.isEmpty else { return "" }
        var html = "<h2 id=\"rules\">VideoToolbox rules</h2>\n<p class=\"note\">Runs with VideoToolbox rules: those of <code>enclab check --db</code> and encodes given MaxKeyFrameInterval, MaxKeyFrameIntervalDuration or DataRateLimits. Keyframe violations count frames in display order (to the frame count: to the end of the stream), data-rate windows in decode order.</p>\n"
        var badgeRows: [[String]] = [], violationRows: [[String]] = []
        for run in ruled {
            let id = run.row.runID
            badgeRows.append(["\(id)", HTML.escape(run.clipName), badges(run.rules!).map(\.html).joined(separator: " ")])
            violationRows += violationsTable(run.rules!, runLink: "\(id)").rows
        }
        html += HTML.table(headers: ["run", "stream or clip", "rules"], rows: badgeRows, textColumns: [1, 2], id: "rule-badges")
        if violationRows.isEmpty {
            html += "<p>No violations.</p>\n"
        } else {
            html += "<h3>Violations</h3>\n" + HTML.table(headers: ["run"] + violationHeaders, rows: violationRows, sortable: true, textColumns: [1, 2, 5, 6], id: "rule-violations")
        }
        return html
    }
}
