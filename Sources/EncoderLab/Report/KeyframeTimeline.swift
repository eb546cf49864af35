import Foundation
import H264

/// A frame as the keyframe timeline reads it: the report's frame rows (``LabStore/ReportFrame``, the run pages) and the
/// charts' (``LabStore/ChartFrame``, the overlays) alike.
protocol KeyframePicture {
    var codedIndex: Int { get }
    var displayIndex: Int { get }
    var type: String { get }
    var sizeBytes: Int { get }
    var pts: Int64 { get }
    var dts: Int64 { get }
    var qp: Double? { get }
    var psnrY: Double? { get }
    var psnrU: Double? { get }
    var psnrV: Double? { get }
    var psnrAvg: Double? { get }
    var ssim: Double? { get }
}

extension LabStore.ReportFrame: KeyframePicture {}
extension LabStore.ChartFrame: KeyframePicture {}

/// The run page's keyframe timeline with the run's VideoToolbox keyframe limits drawn on it (``RunPage``'s
/// `keyframes.*` and its interactive `chart-keyframes`), from the stored `keyframe_analysis` limits and
/// `keyframe_violations` rows (``LabStore/ReportRules``), over PTS in seconds from the run's first PTS, each picture at
/// its own PTS (on a run whose encoder dropped pictures, frame numbers are input pictures, as the keyframe rule counts
/// them, `display_index` of a frame and `input_index` of a skipped picture, never places among the coded frames):
/// - a deadline per stretch (from each IDR, and from frame 0 when it is none, as ``KeyframeRule/violations(keyframes:pts:endPTS:)``
///   cuts the stream): where the next keyframe was due at the latest, the frame `a + MaxKeyFrameInterval` (its PTS;
///   the stream's end for the frame count; none past it) and `PTS(a) + MaxKeyFrameIntervalDuration` (none past the
///   stream's end); a keyframe at the deadline passes, one after it is a violation;
/// - each picture the encoder dropped (`skipped_frames`, OpenH264's frame skip) at its input PTS, "skipped by the encoder";
/// - each stored violation shaded from where its limit passed to its end frame's PTS (the end of the last frame for
///   the frame count): a frame-limit stretch from the picture `a + MaxKeyFrameInterval` (the first one over the limit),
///   a duration-limit stretch from `PTS(a) + MaxKeyFrameIntervalDuration` (the deadlines above), a stall from the
///   frame before its gap.
struct KeyframeTimeline {
    /// Where the next keyframe after the stretch starting at display index `after` was due: `kind` 0 by the frame
    /// limit, 1 by the duration limit.
    struct Deadline: Equatable {
        var kind: Int
        var after: Int
        var seconds: Double
    }

    struct Violation: Equatable {
        var kind: String
        /// The stretch's keyframe and the frame ending it (display indices, as stored).
        var start: Int
        var end: Int
        /// Seconds from the run's first PTS: where the limit passed (the deadline), and the stretch's end.
        var from: Double
        var to: Double
    }

    var deadlines: [Deadline] = []
    var violations: [Violation] = []
    /// The limits in Apple's words ("MaxKeyFrameInterval=60", "MaxKeyFrameIntervalDuration=2"), nil when not applied.
    var frameRule: String?
    var durationRule: String?
    /// Seconds of each input picture's PTS from the first, in input order: the coded frames' and the skipped ones'.
    var seconds: [Double]
    /// The timeline's clock (seconds of a PTS from the run's first PTS).
    let time: ChartTime
    /// The end of the last frame: its PTS plus one frame (a skipped picture's, when one comes last).
    var endSeconds: Double
    /// Seconds of each skipped picture's PTS from the first, in input order.
    var skippedSeconds: [Double]

    static let frameColour = "#1f77b4", durationColour = "#9467bd", violationColour = "#d62728", skippedColour = "#7f7f7f"
    /// The legend's name of a skipped picture's mark.
    static let skippedName = "skipped by the encoder"

    /// The heights each kind of deadline takes, as fractions of the timeline's y range 0-1.35 (from, to): the frame
    /// limit's in the upper half, the duration limit's in the lower, so two deadlines at (nearly) the same time are
    /// both seen, neither drawn over the other.
    static let deadlineBands: [(from: Double, to: Double)] = [(0.7 / 1.35, 1), (0, 0.65 / 1.35)]

    /// - Parameters: `frames` a run's frames (any order); `frameSeconds` one nominal frame's duration; `skipped` the
    ///   input index and PTS of the pictures the encoder dropped.
    init<F: KeyframePicture>(frames: [F], rules: LabStore.ReportRules?, time: ChartTime, frameSeconds: Double,
         skipped: [(inputIndex: Int, pts: Int64)] = []) {
        self.time = time
        // Every input picture in input order: a frame's display_index is its input index (the encoders number the
        // pictures that went in), a skipped picture's input_index its own.
        let pictures = (frames.map { (index: $0.displayIndex, pts: $0.pts, idr: $0.type == "IDR") }
                        + skipped.map { (index: $0.inputIndex, pts: $0.pts, idr: false) }).sorted { $0.index < $1.index }
        let n = pictures.count
        var place: [Int: Int] = [:]
        for (k, p) in pictures.enumerated() where place[p.index] == nil { place[p.index] = k }
        seconds = pictures.map { time.seconds($0.pts) }
        skippedSeconds = skipped.map { time.seconds($0.pts) }
        endSeconds = max(seconds.max() ?? 0, skippedSeconds.max() ?? 0) + frameSeconds
        guard let k = rules?.keyframes else { return }
        let frameLimit = k.frameLimit.flatMap { Int(exactly: $0) }.flatMap { $0 > 0 ? $0 : nil }
        let durationLimit = k.durationLimit.flatMap(RuleSection.seconds).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        frameRule = frameLimit.map { "MaxKeyFrameInterval=\($0)" }
        durationRule = durationLimit.map { "MaxKeyFrameIntervalDuration=\(ChartGroup.trimmed(String(format: "%.6f", $0)))" }
        var starts = pictures.indices.filter { pictures[$0].idr }
        if starts.first != 0 && n > 0 { starts.insert(0, at: 0) }
        for a in starts {
            if let limit = frameLimit {
                let due = a + limit
                if due < n { deadlines.append(Deadline(kind: 0, after: a, seconds: seconds[due])) }
                else if due == n { deadlines.append(Deadline(kind: 0, after: a, seconds: endSeconds)) }
            }
            if let limit = durationLimit, seconds[a] + limit <= endSeconds + 1e-9 {
                deadlines.append(Deadline(kind: 1, after: a, seconds: seconds[a] + limit))
            }
        }
        for v in rules?.keyframeViolations ?? [] {
            guard let start = Int(exactly: v.startFrame), let end = Int(exactly: v.endFrame), start >= 0, start <= end, end <= n, start < n,
                  let a = place[start] else { continue }
            let to = end < n ? place[end].map { seconds[$0] } ?? endSeconds : endSeconds
            // Shaded from where the limit passed (the stretch's deadline, as ``deadlines`` draws it), not from its
            // keyframe: the frames before the deadline broke nothing. A stall (two frames further apart than the
            // duration limit) is its gap, from the frame before it.
            var from = seconds[a]
            if v.kind == "frame-limit", let limit = frameLimit, a + limit < n { from = seconds[a + limit] }
            if v.kind == "duration-limit", let limit = durationLimit { from = seconds[a] + limit }
            violations.append(Violation(kind: v.kind, start: start, end: end, from: min(from, to), to: to))
        }
    }

    /// The name of a deadline kind in the legends.
    func deadlineName(_ kind: Int) -> String {
        "next keyframe due (\(kind == 0 ? frameRule ?? "" : durationRule ?? ""))"
    }

    /// `keyframe-limits.dat` and `keyframe-violations.dat` (written only when they have rows), and the gnuplot series
    /// drawing them over the timeline's y range 0-1.4: deadlines as dashed stems, those of the frame limit from 0.7 to
    /// 1.35 and those of the duration limit from 0 to 0.65 (``deadlineBands``), violations as red bars at 1.15.
    func gnuplot(dir: String) throws -> (series: [String], files: [String]) {
        var series: [String] = [], files: [String] = []
        if !skippedSeconds.isEmpty {
            var data = "# pts_s(s from the first PTS) of each picture the encoder dropped (skipped_frames), input order\n"
            for s in skippedSeconds { data += "\(s)\n" }
            try Plots.write(data, to: "\(dir)/skipped.dat")
            files.append("skipped.dat")
            series.append("'skipped.dat' using 1:(0.35) with impulses lw 2 lc rgb '\(Self.skippedColour)' title '\(Self.skippedName)'")
        }
        if !violations.isEmpty {
            var data = "# kind start_frame end_frame(display order) from_s end_s (s from the first PTS: from where the limit passed, the deadline, to the end frame's PTS, the end of the last frame for the frame count)\n"
            for v in violations { data += "\(v.kind) \(v.start) \(v.end) \(v.from) \(v.to)\n" }
            try Plots.write(data, to: "\(dir)/keyframe-violations.dat")
            files.append("keyframe-violations.dat")
            series.append("'keyframe-violations.dat' using 4:(1.15):($5-$4):(0) with vectors nohead lw 6 lc rgb '\(Self.violationColour)' title 'violation (the stretch over the limit)'")
        }
        if !deadlines.isEmpty {
            var data = "# kind(0 MaxKeyFrameInterval, 1 MaxKeyFrameIntervalDuration) after_keyframe(display_index) due_s(s from the first PTS): where the next keyframe was due\n"
            for d in deadlines { data += "\(d.kind) \(d.after) \(d.seconds)\n" }
            try Plots.write(data, to: "\(dir)/keyframe-limits.dat")
            files.append("keyframe-limits.dat")
            for kind in [0, 1] where deadlines.contains(where: { $0.kind == kind }) {
                let band = Self.deadlineBands[kind]
                let low = band.from * 1.35, height = (band.to - band.from) * 1.35
                series.append("'keyframe-limits.dat' using 3:($1==\(kind) ? \(String(format: "%.2f", low)) : 1/0):(0):(\(String(format: "%.2f", height))) with vectors nohead dt \(kind == 0 ? 2 : 3) lw 2 lc rgb '\(kind == 0 ? Self.frameColour : Self.durationColour)' title '\(deadlineName(kind))'")
            }
        }
        return (series, files)
    }

    /// The interactive keyframe timeline: a group of its own (its x is PTS, not the decode time of the page's other
    /// charts), its rows the IDR and I frames, the deadlines as dashed lines and the violations shaded.
    func chartGroup(run: ReportData.Run, frames: [ReportData.Frame], timebase: Rational, frameSeconds: Double) -> ChartGroup? {
        let keys = Self.keyframes(frames)
        guard !keys.isEmpty else { return nil }
        var group = ChartGroup()
        group.xLabel = "PTS (s) from the run's first PTS"
        let fields = Self.keyframeFields(keys, time: time, timebase: timebase)
        group.runs = [ChartGroup.Run(runID: run.row.runID, name: "run \(run.row.runID) \(run.clipName) \(run.label)", colour: ChartRunPage.runColour, fields: fields)]
        var chart = ChartGroup.Chart(id: "chart-keyframes", yLabel: "", series: [
            .init(name: "IDR", colour: RunPage.colours[0], run: 0, field: "k", type: 0, style: "impulses"),
            .init(name: "I (not IDR)", colour: RunPage.colours[1], run: 0, field: "k", scale: 0.7, type: 1, style: "impulses"),
        ], fromZero: false, height: 170)
        chart.marks = deadlines.map {
            .init(x: $0.seconds, name: deadlineName($0.kind), colour: $0.kind == 0 ? Self.frameColour : Self.durationColour,
                  from: Self.deadlineBands[$0.kind].from, to: Self.deadlineBands[$0.kind].to)
        }
            + skippedSeconds.map { .init(x: $0, name: Self.skippedName, colour: Self.skippedColour) }
        // One legend entry for the stretches, all drawn in one red: named with every kind they hold (a stretch over
        // both limits is stored once per kind; two red entries for it read as two different marks).
        var kinds: [String] = []
        for v in violations where !kinds.contains(v.kind) { kinds.append(v.kind) }
        let spanName = "violation: " + kinds.joined(separator: ", ")
        chart.spans = violations.map { .init(from: $0.from, to: $0.to, name: spanName, colour: Self.violationColour) }
        chart.xRange = (-frameSeconds / 2, endSeconds)
        chart.yRange = (0, 1.35)
        group.charts = [chart]
        return group
    }

    /// The IDR and I frames of `frames`, in display order: the rows of a keyframe timeline.
    static func keyframes<F: KeyframePicture>(_ frames: [F]) -> [F] {
        frames.filter { $0.type == "IDR" || $0.type == "I" }.sorted { $0.displayIndex < $1.displayIndex }
    }

    /// The chart fields of keyframe rows (``ChartGroup``'s names): `x` each at its own PTS in seconds from the run's
    /// first PTS (`time`), the hover's stored values, `k` 1 (the stem's height before its scale).
    static func keyframeFields<F: KeyframePicture>(_ keys: [F], time: ChartTime, timebase: Rational) -> [(name: String, json: String)] {
        // Each at its own PTS (not the place of its display_index among the coded frames: a frame after pictures the
        // encoder skipped was drawn that many pictures late).
        var fields: [(name: String, json: String)] = [
            ("x", ChartGroup.fixed(keys.map { time.seconds($0.pts) }, digits: 6)), ("c", ChartGroup.integers(keys.map(\.codedIndex))),
            ("d", ChartGroup.integers(keys.map(\.displayIndex))), ("t", ChartGroup.integers(keys.map { RunPage.types.firstIndex(of: $0.type) ?? 0 })),
            ("s", ChartGroup.integers(keys.map(\.sizeBytes))), ("p", ChartGroup.seconds(keys.map(\.pts), timebase: timebase)),
            ("q", ChartGroup.seconds(keys.map(\.dts), timebase: timebase)), ("k", ChartGroup.integers(keys.map { _ in 1 })),
        ]
        for (name, values, digits) in [("qp", keys.map(\.qp), 2), ("y", keys.map(\.psnrY), 3), ("u", keys.map(\.psnrU), 3),
                                       ("v", keys.map(\.psnrV), 3), ("a", keys.map(\.psnrAvg), 3), ("ss", keys.map(\.ssim), 6)]
        where values.contains(where: { $0 != nil }) {
            fields.append((name, ChartGroup.fixed(values, digits: digits)))
        }
        return fields
    }

    /// One run of an overlay's keyframe timeline (``overlay(_:id:follows:)``): the run as its clip's group has it
    /// (name, colour, shown at first), its frames, its timeline (limits and violations as its run page draws them).
    struct OverlayLane {
        var run: ChartGroup.Run
        var frames: [LabStore.ChartFrame]
        var timeline: KeyframeTimeline
        var timebase: Rational
        var frameSeconds: Double
    }

    /// Fractions of a lane's height (from its bottom): the IDR stem's and the I stem's tops, the frame limit's and
    /// the duration limit's deadlines (apart, as on the run page, ``deadlineBands``), the violations' shading; the
    /// top 18 % holds the lane's name.
    static let laneIDR = 0.78, laneI = 0.58
    static let laneBands: [(from: Double, to: Double)] = [(0.44, 0.8), (0.04, 0.4)]

    /// The keyframe timeline of an overlay (``ChartOverlay``): a group of its own (its x is PTS, not the decode time of
    /// the clip's other charts: the keyframe limits count pictures in display order and seconds of PTS), over PTS in
    /// seconds from each run's first PTS; one lane per run in the picker's order (the first on top), named with the
    /// run, the limits stored for it and its violations count; in each lane the run's IDR and I frames as stems (the
    /// run page's colours), its deadlines (``KeyframeTimeline/deadlines``), pictures skipped by the encoder and
    /// violations shaded red, each drawn while its run is shown (the picker of `follows`, the clip's group; a hidden
    /// run's lane is not drawn, the shown lanes close up: ChartScript lays them out). Nil when no run has an IDR or I frame.
    static func overlay(_ lanes: [OverlayLane], id: String, follows: String) -> ChartGroup? {
        guard lanes.contains(where: { !keyframes($0.frames).isEmpty }) else { return nil }
        var group = ChartGroup()
        group.xLabel = "PTS (s) from each run's first PTS"
        group.follows = follows
        let n = Double(lanes.count)
        var chart = ChartGroup.Chart(id: id, yLabel: "", series: [], fromZero: false, height: 45 + 55 * lanes.count)
        var kinds: [String] = []
        for lane in lanes { for v in lane.timeline.violations where !kinds.contains(v.kind) { kinds.append(v.kind) } }
        let spanName = "violation: " + kinds.joined(separator: ", ")
        for (r, lane) in lanes.enumerated() {
            var run = lane.run
            run.fields = keyframeFields(keyframes(lane.frames), time: lane.timeline.time, timebase: lane.timebase)
            group.runs.append(run)
            // Lane r from (n - 1 - r) / n to (n - r) / n of the height: the first run on top.
            let base = n - 1 - Double(r)
            func height(_ f: Double) -> Double { (base + f) / n }
            // Named by kind alone: the legend lists each kind once (the lanes name the runs).
            var idr = ChartGroup.Series(name: "IDR", colour: RunPage.colours[0], run: r, field: "k", scale: Self.laneIDR, type: 0, style: "impulses")
            var i = ChartGroup.Series(name: "I (not IDR)", colour: RunPage.colours[1], run: r, field: "k", scale: Self.laneI, type: 1, style: "impulses")
            idr.base = base
            i.base = base
            chart.series += [idr, i]
            let t = lane.timeline
            chart.marks += t.deadlines.map { d in
                .init(x: d.seconds, name: t.deadlineName(d.kind), colour: d.kind == 0 ? Self.frameColour : Self.durationColour,
                      from: height(Self.laneBands[d.kind].from), to: height(Self.laneBands[d.kind].to), run: r)
            }
            chart.marks += t.skippedSeconds.map { .init(x: $0, name: Self.skippedName, colour: Self.skippedColour, from: height(0.04), to: height(0.8), run: r) }
            chart.spans += t.violations.map { .init(from: $0.from, to: $0.to, name: spanName, colour: Self.violationColour, bottom: height(0.02), top: height(0.82), run: r) }
            let rules = [t.frameRule, t.durationRule].compactMap { $0 }
            let said = rules.isEmpty ? "no keyframe limits stored" : rules.joined(separator: ", ") + " · \(t.violations.count) violation\(t.violations.count == 1 ? "" : "s")"
            chart.lanes.append(.init(name: "run \(run.runID) · \(said)", colour: run.colour, run: r, bottom: height(0), top: height(1)))
        }
        chart.xRange = (-(lanes.map(\.frameSeconds).max() ?? 0) / 2, lanes.map(\.timeline.endSeconds).max() ?? 0)
        chart.yRange = (0, n)
        group.charts = [chart]
        return group
    }

    /// The gnuplot picture of an overlay's keyframe timeline (``overlay(_:id:follows:)``'s `group`): `NAME.dat`, one
    /// block per offered run (`index` k the k-th run of the picker: `pts_s type display_index`, type 0 IDR, 1 I, its
    /// keyframes in display order), `NAME-limits.dat` (`run kind due_s`: the deadlines) and `NAME-violations.dat`
    /// (`run start_s end_s`) when they have rows, and `NAME.gp`, its PNG and SVG queued: one lane per run shown at
    /// first (the first on top), named as on the interactive chart, drawn as it is. Returns the data files written;
    /// empty (nothing written) when no run shown at first has a keyframe.
    static func overlayGnuplot(group: ChartGroup, lanes: [OverlayLane], name: String, dir: String, queue: PlotQueue?) throws -> [String] {
        guard let chart = group.charts.first else { return [] }
        let shown = lanes.indices.filter { group.runs[$0].visible }
        guard shown.contains(where: { !keyframes(lanes[$0].frames).isEmpty }) else { return [] }
        var data = "# pts_s(s from the run's first PTS) type(0 IDR, 1 I) display_index: each run's IDR and I frames; one block per run, index k = the k-th run\n"
        var limits = "# run(index k) kind(0 MaxKeyFrameInterval, 1 MaxKeyFrameIntervalDuration) due_s: where the next keyframe was due\n"
        var stretches = "# run(index k) from_s end_s: the stretches over a keyframe limit (keyframe_violations), from where the limit passed (the deadline)\n"
        var hasLimits = false, hasStretches = false
        for (k, lane) in lanes.enumerated() {
            data += "# run \(group.runs[k].runID)\n"
            for f in keyframes(lane.frames) { data += "\(lane.timeline.time.seconds(f.pts)) \(f.type == "IDR" ? 0 : 1) \(f.displayIndex)\n" }
            data += "\n\n"
            for d in lane.timeline.deadlines { limits += "\(k) \(d.kind) \(d.seconds)\n"; hasLimits = true }
            for v in lane.timeline.violations { stretches += "\(k) \(v.from) \(v.to)\n"; hasStretches = true }
        }
        var files = ["\(name).dat"]
        try Plots.write(data, to: "\(dir)/\(name).dat")
        if hasLimits { try Plots.write(limits, to: "\(dir)/\(name)-limits.dat"); files.append("\(name)-limits.dat") }
        if hasStretches { try Plots.write(stretches, to: "\(dir)/\(name)-violations.dat"); files.append("\(name)-violations.dat") }
        // The lanes of the runs shown at first, the first on top; each series titled once.
        let m = shown.count
        var series: [String] = [], labels: [String] = [], titled = Set<String>()
        func title(_ t: String) -> String { titled.insert(t).inserted ? "title '\(t.replacingOccurrences(of: "'", with: "''"))'" : "notitle" }
        for (place, k) in shown.enumerated() {
            let base = Double(m - 1 - place), lane = lanes[k], t = lane.timeline
            let name0 = chart.lanes.first { $0.run == k }?.name ?? "run \(group.runs[k].runID)"
            labels.append("set label '\(name0.replacingOccurrences(of: "'", with: "''"))' at graph 0.01, first \(base + 0.93) left font ',9' tc rgb '\(group.runs[k].colour)'")
            if place > 0 { labels.append("set arrow from graph 0, first \(base + 1) to graph 1, first \(base + 1) nohead lc rgb '#bbbbbb'") }
            let keys = keyframes(lane.frames)
            for (type, height, label) in [(0, Self.laneIDR, "IDR"), (1, Self.laneI, "I (not IDR)")] where keys.contains(where: { ($0.type == "IDR" ? 0 : 1) == type }) {
                series.append("'\(name).dat' index \(k) using 1:($2==\(type) ? \(base) : 1/0):(0):(\(height)) with vectors nohead lw 2 lc rgb '\(RunPage.colours[type])' \(title(label))")
            }
            for kind in [0, 1] where t.deadlines.contains(where: { $0.kind == kind }) {
                let band = Self.laneBands[kind]
                series.append("'\(name)-limits.dat' using 3:($1==\(k) && $2==\(kind) ? \(base + band.from) : 1/0):(0):(\(band.to - band.from)) with vectors nohead dt \(kind == 0 ? 2 : 3) lw 2 lc rgb '\(kind == 0 ? Self.frameColour : Self.durationColour)' \(title(t.deadlineName(kind)))")
            }
            if !t.violations.isEmpty {
                series.append("'\(name)-violations.dat' using 2:($1==\(k) ? \(base + 0.8) : 1/0):($3-$2):(0) with vectors nohead lw 5 lc rgb '\(Self.violationColour)' \(title("violation (the stretch over a limit)"))")
            }
        }
        let x = chart.xRange ?? (0, 1)
        try Plots.both(dir: dir, name: name, body: """
            set xlabel 'PTS (s from each run''s first PTS)'
            \(ChartTime.axisFormat)
            set xrange [\(x.0):\(x.1)]
            set yrange [0:\(m)]
            unset ytics
            set grid x
            set key below horizontal
            \(labels.joined(separator: "\n"))
            plot \(series.joined(separator: ", \\\n     "))
            """, arguments: [], size: (1100, 100 + 80 * m), queue: queue)
        return files
    }
}
