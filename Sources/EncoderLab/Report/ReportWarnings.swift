import Foundation

/// What the experiment page's numbers cannot say, each warning with the number that triggers it:
/// - x264's ABR or capped VBR on a clip shorter than ``shortClipSeconds`` (docs/rate-accuracy.md: x264's one-pass ABR makes a
///   start-up deficit of 0.5-1.1 s of the target that it pays back slowly, −12 % and −22 % on 4-5 s clips, under 1 %
///   from 30 s on; capped VBR is the same estimator); OpenH264's runs are not counted: the note explains x264's
///   estimator, and its modes are other rate controls (docs/openh264-findings.md);
/// - a clip whose curves have fewer than 4 points, so no BD-rate (``Bjontegaard`` needs 4 per curve);
/// - a configuration whose quality range, or bitrate range (log10), overlaps the anchor's by less than 75 %, so its
///   BD-rate, or BD-PSNR, is refused (``qualityOverlap(_:_:)``, ``rateOverlap(_:_:)``: the refusals' own measure);
/// - CBR runs whose VBV replay counts overflows while their stream carries filler data;
/// - runs encoded with `--verify none` (PSNR from x264's own report);
/// - runs whose input PTS repeat or go back (`timestamp_analysis.non_increasing_input_pts`);
/// - runs whose encoder dropped pictures (`skipped_frames`: OpenH264's frame skip).
enum Warnings {
    /// The clip length, in seconds, under which ABR's and capped VBR's achieved rate and quality are dominated by the
    /// start-up (docs/rate-accuracy.md, "The error by length and mode": −12 % and −22 % at 4-5 s, −0.7 to −0.9 % at
    /// 30-32 s, bigbuckbunny's start-up deficit paid back by about 35 s).
    static let shortClipSeconds = 30.0

    /// The fewest points per curve Bjontegaard's BD-rate takes.
    static let bdPoints = 4

    /// Whether the run is CBR (`rc` cbr, or x264's `--nal-hrd cbr` from the resolved settings).
    static func isCBR(_ run: ReportData.Run) -> Bool {
        run.mode == "cbr" || (run.row.settingsJSON.contains("\"nal_hrd\"") && nalHRD(run) == "cbr")
    }

    private static func nalHRD(_ run: ReportData.Run) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(run.row.settingsJSON.utf8))) as? [String: Any],
              let resolved = object["resolved"] as? [String: Any] else { return nil }
        return resolved["nal_hrd"] as? String
    }

    /// The span of a run in seconds: `run_metrics.span_seconds`, else `runs.duration_s`.
    static func span(_ run: ReportData.Run) -> Double? { (run.metrics["span_seconds"] ?? nil) ?? run.row.durationSeconds }

    /// Short words of a list of run ids: "run 3" or "runs 3, 4, 9" (at most 8 named, then "and N more").
    static func named(_ ids: [Int64]) -> String {
        let shown = ids.prefix(8).map(String.init).joined(separator: ", ")
        return (ids.count == 1 ? "run " : "runs ") + shown + (ids.count > 8 ? " and \(ids.count - 8) more" : "")
    }

    /// The warnings of an experiment's runs, each an HTML list item (user text escaped), in the order above.
    /// - Parameter curves: ``Report/curves(_:)`` of `runs` when the caller has them; nil: computed here.
    /// - Parameter anchor: the BD-rate anchor configuration; nil: no BD-rate table, no overlap warning.
    /// - Parameter metric: the curves' quality (``Report/curves(_:metric:)``).
    static func items(_ runs: [ReportData.Run], filler: [Int64: LabStore.ReportFiller], curves: [String: [Report.Curve]]? = nil,
                      anchor: String? = nil, metric: CurveMetric = .psnr) -> [String] {
        let e = HTML.escape
        let done = runs.filter { $0.row.status == "done" }
        var items: [String] = []

        // Short clips under x264's ABR or capped VBR.
        let short = done.filter { $0.encoder == EncoderName.x264.rawValue && ($0.mode == "abr" || $0.mode == "vbr") && (span($0).map { $0 < shortClipSeconds } ?? false) }
        for (clip, list) in Dictionary(grouping: short, by: \.clipName).sorted(by: { $0.key < $1.key }) {
            let seconds = list.compactMap(span).min()!
            let modes = Set(list.map { $0.mode.uppercased() }).sorted().joined(separator: " and ")
            items.append("<li class=\"short-clip\"><b>Clip too short for \(modes)'s start-up:</b> \(list.count == 1 ? "the run's stream" : "the runs' streams") of \(e(clip)) span\(list.count == 1 ? "s" : "") \(list.count == 1 ? "" : "at the shortest ")\(HTML.number(seconds, digits: 3)) s (run_metrics.span_seconds, else runs.duration_s), under \(Int(shortClipSeconds)) s (\(list.count) \(modes) run\(list.count == 1 ? "" : "s"), \(named(list.map(\.row.runID)))). x264's one-pass ABR (and capped VBR, the same estimator) starts from a guessed QP and plans its first P frames too coarse after the IDR frame; the deficit, 0.5-1.1 s of the target on 4-5 s clips, is paid back slowly: the rate lands 12-22 % under the target at 4-5 s and within 1 % from 30 s on (docs/rate-accuracy.md). On such a clip ABR/VBR's rate and PSNR describe the start-up, not the mode: compare modes on a clip of 30 s or more (scripts/loop-clips.sh).</li>")
        }

        // Too few points for BD-rate.
        var thin: [String] = []
        for (clip, list) in (curves ?? Report.curves(runs)).sorted(by: { $0.key < $1.key }) where list.count > 1 {
            let few = list.filter { $0.points.count < bdPoints }
            guard !few.isEmpty else { continue }
            thin.append("\(e(Paths.fileName(clip))): " + few.map { "\(e($0.configuration)) has \($0.points.count) point\($0.points.count == 1 ? "" : "s")" }.joined(separator: ", "))
        }
        // Enough points, but quality ranges too far apart for BD-rate, or bitrate ranges (log10) for BD-PSNR: each
        // refused below 75 % overlap, measured as the refusal measures it.
        var apart: [String] = [], ratesApart: [String] = []
        for (clip, list) in (curves ?? Report.curves(runs, metric: metric)).sorted(by: { $0.key < $1.key }) {
            guard let anchor, let base = list.first(where: { $0.configuration == anchor }), base.points.count >= bdPoints else { continue }
            for test in list where test.configuration != anchor && test.points.count >= bdPoints {
                func pair(_ testRange: String, _ anchorRange: String, _ overlap: Double) -> String {
                    "\(e(Paths.fileName(clip))): \(e(test.configuration)) \(testRange) against the anchor \(e(anchor)) \(anchorRange), \(HTML.number(overlap * 100, digits: 1)) % overlap"
                }
                if let overlap = qualityOverlap(base, test), overlap < Bjontegaard.minimumOverlap {
                    apart.append(pair(range(test, metric), range(base, metric), overlap))
                }
                if let overlap = rateOverlap(base, test), overlap < Bjontegaard.minimumOverlap {
                    ratesApart.append(pair(rateRange(test), rateRange(base), overlap))
                }
            }
        }
        if !apart.isEmpty {
            let q = metric.title
            items.append("<li class=\"no-overlap\"><b>\(q) ranges too far apart for BD-rate:</b> \(apart.joined(separator: "; ")). Bjontegaard's BD-rate averages the difference in rate over the \(q) range both curves cover, and needs that common range to be at least \(Int(Bjontegaard.minimumOverlap * 100)) % of the two ranges together (the bjontegaard package's min_overlap); these curves share less, so their BD-rate cells are refused, and the per-rate differences table below the BD-rate table (bitrate and \(q) rate by rate) stands instead. For a BD-rate, choose rates for each configuration whose \(q) values cover the same range.</li>")
        }
        if !ratesApart.isEmpty {
            let delta = metric.deltaName, q = metric.title
            items.append("<li class=\"rates-apart\"><b>Bitrate ranges too far apart for \(delta):</b> \(ratesApart.joined(separator: "; ")) (overlap of the log10 bitrate ranges). Bjontegaard's \(delta) averages the difference in \(q) over the bitrate range both curves cover (log10 of the rate), and needs that common range to be at least \(Int(Bjontegaard.minimumOverlap * 100)) % of the two ranges together (the bjontegaard package's min_overlap); these curves share less, so their \(delta) cells are refused. For a \(delta), choose rates for each configuration that cover the same bitrate range.</li>")
        }
        if !thin.isEmpty {
            items.append("<li class=\"few-points\"><b>Fewer than \(bdPoints) points for BD-rate:</b> \(thin.joined(separator: "; ")). Bjontegaard's BD-rate fits a curve through at least \(bdPoints) rates per configuration; with fewer, the tables below show the differences in bitrate and PSNR rate by rate instead. Add rates to the grid for a BD-rate.</li>")
        }

        // CBR overflows with filler.
        // The count is tested first: isCBR may parse the run's settings.
        let overflowing = done.filter { (($0.metrics["vbv_overflows"] ?? nil) ?? 0) > 0 && isCBR($0) }
        if !overflowing.isEmpty {
            let total = overflowing.reduce(0.0) { $0 + (($1.metrics["vbv_overflows"] ?? nil) ?? 0) }
            let padded = overflowing.filter { (filler[$0.row.runID]?.bytes ?? 0) > 0 }
            let fillerBytes = padded.reduce(Int64(0)) { $0 + (filler[$1.row.runID]?.bytes ?? 0) }
            let fillerFrames = padded.reduce(Int64(0)) { $0 + (filler[$1.row.runID]?.frames ?? 0) }
            var text = "<li class=\"cbr-filler\"><b>CBR overflows are filler, not lost bits:</b> \(overflowing.count) CBR run\(overflowing.count == 1 ? "" : "s") (\(named(overflowing.map(\.row.runID)))) count \(HTML.number(total, digits: 0)) VBV overflow\(total == 1 ? "" : "s") (column VBV under / over)"
            if !padded.isEmpty {
                text += ", and \(padded.count == overflowing.count ? "every one carries" : "\(padded.count) of them carr\(padded.count == 1 ? "ies" : "y")") filler data (frames.filler_bytes: \(fillerBytes) bytes in \(fillerFrames) frames)"
            }
            text += ". Under CBR (--nal-hrd cbr) the bits arrive at vbv-maxrate without a pause, and x264 keeps its buffer from overflowing by writing filler NAL units for whatever would overflow it (update_vbv in encoder/ratecontrol.c): the buffer then sits at the brim. The lab's replay (VBVReplay: the arrival at vbv-maxrate, every frame's bytes, filler included) counts an overflow wherever the arrival passes the brim at all, and at the brim a few bits do: x264 writes filler in whole bytes and keeps its buffer in floating point, and the stream's HRD rate is vbv-maxrate rounded down to a multiple of 64 bit/s (docs/rate-accuracy.md). Such overflows say the buffer was full, not that bits were lost or the stream broke its HRD; underflows are the events to read.</li>"
            items.append(text)
        }

        // Unverified runs.
        let unverified = done.filter(\.unverified)
        if !unverified.isEmpty {
            items.append("<li class=\"unverified-runs\"><b>Unverified:</b> \(unverified.count) run\(unverified.count == 1 ? " was" : "s were") encoded with --verify none (\(named(unverified.map(\.row.runID))); column \"PSNR from\" <span class=\"unverified\">unverified: x264 PSNR</span>): \(unverified.count == 1 ? "its" : "their") PSNR is x264's own report, not the lab's decode of the stream checked against the source.</li>")
        }

        // Repeated or non-increasing PTS.
        let stamped = done.filter { $0.nonIncreasingInputPTS > 0 }
        if !stamped.isEmpty {
            let worst = stamped.max { $0.nonIncreasingInputPTS < $1.nonIncreasingInputPTS }!
            items.append("<li class=\"non-increasing-pts\"><b>Repeated or non-increasing PTS:</b> \(stamped.count) run\(stamped.count == 1 ? " has" : "s have") input PTS that repeat or go back (\(named(stamped.map(\.row.runID))); run \(worst.row.runID): \(worst.nonIncreasingInputPTS) of \(worst.row.frames.map(String.init) ?? "?") frames, timestamp_analysis.non_increasing_input_pts). x264 moves such timestamps to keep them increasing, so the frames are not shown at the times the source gives: their rate and PSNR are not comparable with those of runs whose PTS increase.</li>")
        }

        // Pictures the encoder dropped.
        let skipping = done.filter { $0.skippedFrames > 0 }
        if !skipping.isEmpty {
            let worst = skipping.max { $0.skippedFrames < $1.skippedFrames }!
            let inputs = worst.row.inputFrames.map(String.init) ?? "?"
            items.append("<li class=\"skipped-frames\"><b>Pictures skipped by the encoder:</b> \(skipping.count) run\(skipping.count == 1 ? "" : "s") dropped input pictures (\(named(skipping.map(\.row.runID))); run \(worst.row.runID): \(worst.skippedFrames) of \(inputs), skipped_frames). A dropped picture has no frame and no picture in the stream: a receiver shows the previous one again. The rate, frame and PSNR columns count the coded pictures only; the dropped ones, as a receiver sees them, are skipped_frames.held_psnr_* (docs/openh264.md, \"Skipped frames\").</li>")
        }
        return items
    }

    /// The overlap of two curves' quality ranges (``Bjontegaard/overlapFraction(_:_:)``); nil when a curve is empty or
    /// the joint range is not a finite positive number.
    static func qualityOverlap(_ a: Report.Curve, _ b: Report.Curve) -> Double? {
        let qa = a.points.map(\.psnr), qb = b.points.map(\.psnr)
        guard let aLo = qa.min(), let aHi = qa.max(), let bLo = qb.min(), let bHi = qb.max() else { return nil }
        let f = Bjontegaard.overlapFraction((aLo, aHi), (bLo, bHi))
        return f.isFinite ? f : nil
    }

    /// The overlap of two curves' log10(bitrate) ranges, as ``Bjontegaard/bdPSNR(anchor:test:method:quality:)``
    /// refuses by it (``Bjontegaard/overlapFraction(_:_:)``); nil when a curve is empty, has a rate that is not
    /// positive, or the joint range is not a finite positive number.
    static func rateOverlap(_ a: Report.Curve, _ b: Report.Curve) -> Double? {
        let ra = a.points.map(\.rate), rb = b.points.map(\.rate)
        guard let aLo = ra.min(), let aHi = ra.max(), let bLo = rb.min(), let bHi = rb.max(), aLo > 0, bLo > 0 else { return nil }
        let f = Bjontegaard.overlapFraction((log10(aLo), log10(aHi)), (log10(bLo), log10(bHi)))
        return f.isFinite ? f : nil
    }

    /// A curve's bitrate range as the warning says it: "(bitrate 20.1-32.4 kbit/s)".
    static func rateRange(_ c: Report.Curve) -> String {
        let r = c.points.map(\.rate)
        return "(bitrate \(HTML.number(r.min() ?? .nan, digits: 1))-\(HTML.number(r.max() ?? .nan, digits: 1)) kbit/s)"
    }

    /// A curve's quality range as the warning says it: "(PSNR 31.200-35.800 dB)".
    static func range(_ c: Report.Curve, _ metric: CurveMetric) -> String {
        let q = c.points.map(\.psnr)
        return "(\(metric.title) \(HTML.number(q.min() ?? .nan, digits: 3))-\(HTML.number(q.max() ?? .nan, digits: 3))\(metric.unit))"
    }

    /// The warnings as a section of the page, or "" when there are none.
    static func section(_ runs: [ReportData.Run], filler: [Int64: LabStore.ReportFiller], curves: [String: [Report.Curve]]? = nil,
                        anchor: String? = nil, metric: CurveMetric = .psnr) -> String {
        let list = items(runs, filler: filler, curves: curves, anchor: anchor, metric: metric)
        guard !list.isEmpty else { return "" }
        return "<div class=\"warnings\" id=\"warnings\"><h2>What these numbers cannot say</h2>\n<ul>\n\(list.joined(separator: "\n"))\n</ul></div>\n"
    }
}
