import Foundation
import H264

/// The VideoToolbox experiments' plots (issue 10, item 5; docs/videotoolbox-findings.md), drawn from the store
/// beside an experiment's `rd.*`, each only when the experiment's done runs have its data:
/// - `keyframes.*`, with `keyframes.dat` and `keyframe-violations.dat`, when some run has a `keyframe_analysis` row:
///   the keyframe timeline, one row of marks per such run over seconds of PTS from the run's first PTS: the
///   keyframes the rule expects (`keyframe_analysis.expected`), the stream's IDR pictures (`actual`), those the lab
///   forced (`forced`), the I pictures that are no IDR (`frames.type` 'I': no keyframe under the rule), and each
///   `keyframe_violations` row as a segment from its start frame to its end frame;
/// - `gop-histogram.*`, with `gops.dat` and `gop-bins.dat`, for the same runs: per run, a row holding the histogram
///   of its GOPs' lengths in seconds (from one IDR of `actual` to the next);
/// - `bframes.*`, with `bframes.dat`, when some run's settings hold `videotoolbox` (VideoToolbox properties or
///   vt-compat): for every done run of the experiment, its B-frames (reference and not) and its reorder delay in
///   frames, max over frames of (coded_index − display_index);
/// - `data-rate.*`, with `data-rate.dat` and `data-rate-worst.dat`, when some run has `data_rate_windows` rows: for
///   each such run and DataRateLimits pair, the bytes of the window [DTS, DTS + W) starting at each frame's DTS,
///   from `frames.size_bytes` (start codes and all), divided by the pair's bytes, and the stored worst window of the
///   lab's exact check (NAL units without start codes) as a mark.
///
/// Run names (the rows' tic labels and the key titles, user text) reach gnuplot as ARG2, one per line; every other
/// text in the scripts is the lab's. Stored values are checked before they reach a plot: a damaged row is `.data`
/// naming the run, the table and the column.
extension Plots {
    /// One done run as the VideoToolbox plots read it.
    struct VideoToolboxRun {
        var runID: Int64
        /// The clip's file name (when the experiment has several clips), then the grid point's settings.
        var name: String
        var timebase: Rational
        /// The nominal frame rate (`fps_num / fps_den`), frames per second.
        var fps: Rational
        /// Frames in decode order (`frames` by coded_index).
        var frames: [LabStore.FrameRow]
        /// PTS by display index (0 ..< frames.count, each once).
        var ptsByDisplay: [Int64]
        var hasVideoToolbox: Bool

        /// Seconds from the run's first (smallest) PTS to PTS `ticks`, exact then as a Double.
        func seconds(_ ticks: Int64) throws -> Double {
            let first = ptsByDisplay.min() ?? 0
            let (span, overflow) = ticks.subtractingReportingOverflow(first)
            guard !overflow, let s = try? timebase.times(span) else {
                throw LabError.data("run \(runID): a span of \(ticks) - \(first) ticks of \(timebase) s does not fit exact 64-bit seconds")
            }
            return s.approximateValue
        }

        /// Seconds from the first PTS to the end of the last frame at the nominal rate: the largest PTS plus one frame
        /// of `1 / fps` seconds, exact then as a Double.
        func endSeconds() throws -> Double {
            let first = ptsByDisplay.min() ?? 0, last = ptsByDisplay.max() ?? 0
            let (span, overflow) = last.subtractingReportingOverflow(first)
            guard !overflow, let s = try? timebase.times(span), let frame = try? fps.reciprocal, let end = try? s + frame else {
                throw LabError.data("run \(runID): the span of its PTS plus one frame of \(fps) fps does not fit exact 64-bit seconds")
            }
            return end.approximateValue
        }

        /// Display index `k`'s PTS in seconds from the first; the end of the last frame for `k` = frame count.
        func secondsAt(display k: Int) throws -> Double {
            k == ptsByDisplay.count ? try endSeconds() : try seconds(ptsByDisplay[k])
        }
    }

    /// A run's `keyframe_analysis` row, checked.
    struct KeyframeRows {
        var expected: [Int]
        var actual: [Int]
        var forced: [Int]
        /// `keyframe_violations` by ordinal: kind (0 frame-limit, 1 duration-limit, 2 stall), start and end frame.
        var violations: [(kind: Int, start: Int, end: Int)]
    }

    /// A run's `data_rate_windows` row, checked.
    struct WindowRow {
        var pair: Int
        var bytes: Int64
        var seconds: Rational
        var honoured: Bool
        var windows: Int64
        var windowsOver: Int64
        /// Coded indices of the worst window's first and last frames, its bytes and its ratio to `bytes`; nil
        /// together when the run has no frames.
        var worst: (start: Int, end: Int, bytes: Int64, ratio: Double)?
    }

    /// The name of the kinds in `keyframe_violations.kind`, in the order the plot numbers them.
    static let violationKinds = ["frame-limit", "duration-limit", "stall"]

    /// Draws the plots that apply to `experiment`'s done runs among `runs` (see the extension's description); none
    /// when no run has the data.
    /// - Throws: `.data` starting "run N:" for a stored value the plots cannot be drawn from (the caller names the
    ///   database); `.cantCreate`, `.ioError`, `.software` as every plot; the database's errors.
    static func writeVideoToolboxPlots(experiment: String, runs: [LabStore.RunRow], store: LabStore, dir: String) throws {
        let done = runs.filter { $0.experiment == experiment && $0.status == "done" }.sorted { $0.runID < $1.runID }
        let keyframeIDs = try store.database.keyframeAnalysisRunIDs(), windowIDs = try store.database.dataRateWindowRunIDs()
        let settings = try done.map { run -> [String: Any] in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(run.settingsJSON.utf8))) as? [String: Any] else {
                throw LabError.data("run \(run.runID): settings are not a JSON object")
            }
            return object
        }
        let withVT = zip(done, settings).filter { $0.1["videotoolbox"] is [String: Any] }.map(\.0.runID)
        let wanted = done.filter { keyframeIDs.contains($0.runID) || windowIDs.contains($0.runID) }
        guard !wanted.isEmpty || !withVT.isEmpty else { return }
        let severalClips = Set(done.map(\.clip)).count > 1
        var loaded: [VideoToolboxRun] = []
        for (run, object) in zip(done, settings) {
            loaded.append(try videoToolboxRun(run, settings: object, hasVideoToolbox: object["videotoolbox"] is [String: Any],
                                              clipInName: severalClips, store: store))
        }
        try OutputFiles.makeDirectory(dir)
        let keyframed = try loaded.filter { keyframeIDs.contains($0.runID) }.map { ($0, try keyframeRows($0, store: store)) }
        if !keyframed.isEmpty {
            try writeKeyframeTimeline(keyframed, experiment: experiment, dir: dir)
            try writeGOPHistogram(keyframed, experiment: experiment, dir: dir)
        }
        if loaded.contains(where: \.hasVideoToolbox) { try writeBFramePlot(loaded, experiment: experiment, dir: dir) }
        let windowed = try loaded.filter { windowIDs.contains($0.runID) }.map { ($0, try windowRows($0, store: store)) }
        if !windowed.isEmpty { try writeDataRatePlot(windowed, experiment: experiment, dir: dir) }
    }

    /// A run's name: the grid point's settings as `key=value` words, an object axis as its own words, keys in order
    /// (the label, or the x264 flags, when the run has no axes); the clip's file name first when `clipInName`.
    static func videoToolboxRunName(_ run: LabStore.RunRow, settings: [String: Any], clipInName: Bool) -> String {
        var words: [String] = []
        if let axes = settings["axes"] as? [String: Any] {
            for key in axes.keys.sorted() {
                if let group = axes[key] as? [String: Any] {
                    for k in group.keys.sorted() { words.append(videoToolboxWord(k, group[k]!)) }
                } else {
                    words.append(videoToolboxWord(key, axes[key]!))
                }
            }
        }
        if words.isEmpty {
            let label = settings["label"] as? String ?? ""
            words = [label.isEmpty ? settings["x264_args"] as? String ?? "" : label]
        }
        let text = words.joined(separator: " ")
        return clipInName || text.isEmpty ? "\(Paths.fileName(run.clip)) \(text)" : text
    }

    /// A grid value as a run name writes it: as the grid label does (``Experiment/labelWord(_:_:)``: a flag given
    /// `true` as its key alone, a DataRateLimits list flat, `DataRateLimits=37500,1`), any other list or object as
    /// `key=` and compact JSON.
    static func videoToolboxWord(_ key: String, _ value: Any) -> String {
        if value is String || value is NSNumber { return Experiment.labelWord(key, value) }
        if value is [Any], (try? VideoToolboxSettings.dataRateLimitsText(value)) != nil { return Experiment.labelWord(key, value) }
        return "\(key)=\(JSON.string(value))"
    }

    /// Reads and checks a done run's rate, timebase and frames.
    /// - Throws: `.data` "run N: ..." for a rate or timebase that is not two numbers above 0, no frames, a frame out
    ///   of the plottable ranges (``RunPlotInput/checkFrames(_:runID:database:)``), or display indices that are not
    ///   0 ..< frame count, each once.
    static func videoToolboxRun(_ run: LabStore.RunRow, settings: [String: Any], hasVideoToolbox: Bool, clipInName: Bool,
                                store: LabStore) throws -> VideoToolboxRun {
        let id = run.runID
        guard let n = run.timebaseNum, let d = run.timebaseDen, n > 0, d > 0, let timebase = try? Rational(Int64(n), Int64(d)) else {
            throw LabError.data("run \(id): timebase_num/timebase_den are \(run.timebaseNum.map(String.init) ?? "NULL")/\(run.timebaseDen.map(String.init) ?? "NULL"), expected two numbers above 0")
        }
        guard let fn = run.fpsNum, let fd = run.fpsDen, fn > 0, fd > 0, let fps = try? Rational(Int64(fn), Int64(fd)) else {
            throw LabError.data("run \(id): fps_num/fps_den are \(run.fpsNum.map(String.init) ?? "NULL")/\(run.fpsDen.map(String.init) ?? "NULL"), expected two numbers above 0")
        }
        let frames = try store.frames(run: id)
        guard !frames.isEmpty else { throw LabError.data("run \(id): done, but no frames are stored") }
        try RunPlotInput.checkFrames(frames, runID: id, database: store.database.path)
        var pts = [Int64?](repeating: nil, count: frames.count)
        for f in frames {
            guard pts.indices.contains(f.displayIndex), pts[f.displayIndex] == nil else {
                throw LabError.data("run \(id): frame coded_index \(f.codedIndex): display_index \(f.displayIndex) is not one of 0..<\(frames.count) held by no other frame")
            }
            pts[f.displayIndex] = f.pts
        }
        return VideoToolboxRun(runID: id, name: videoToolboxRunName(run, settings: settings, clipInName: clipInName), timebase: timebase,
                               fps: fps, frames: frames, ptsByDisplay: pts.map { $0! }, hasVideoToolbox: hasVideoToolbox)
    }

    /// A JSON list of display indices as `keyframe_analysis` stores them (`[0,30,60]`): digits and commas only,
    /// strictly increasing, each below `count`.
    /// - Throws: `.data` "run N: keyframe_analysis.COLUMN ..." otherwise.
    static func displayIndexList(_ value: SQLValue, column: String, count: Int, runID: Int64) throws -> [Int] {
        let at = "run \(runID): keyframe_analysis.\(column)"
        guard case .text(let text) = value, text.hasPrefix("["), text.hasSuffix("]"), text.count >= 2 else {
            throw LabError.data("\(at) is not a JSON list of display indices")
        }
        let body = text.dropFirst().dropLast()
        if body.isEmpty { return [] }
        var list: [Int] = []
        for item in body.split(separator: ",", omittingEmptySubsequences: false) {
            guard item.count <= 18, item.allSatisfy({ $0.isASCII && $0.isNumber }), let k = Int(item) else {
                throw LabError.data("\(at) holds '\(shown(String(item), limit: 40))', not a display index")
            }
            guard k < count else { throw LabError.data("\(at) holds \(k), outside the run's frames 0..<\(count)") }
            guard list.last.map({ k > $0 }) ?? true else { throw LabError.data("\(at) is not strictly increasing at \(k)") }
            list.append(k)
        }
        return list
    }

    /// Reads and checks a run's `keyframe_analysis` and `keyframe_violations` rows.
    /// - Throws: `.data` "run N: ..." for a list that is not display indices of the run, or a violation whose kind,
    ///   start or end frame is not one the lab writes (start ≤ end ≤ frame count).
    static func keyframeRows(_ run: VideoToolboxRun, store: LabStore) throws -> KeyframeRows {
        let n = run.frames.count
        guard let row = try store.database.keyframeLists(run: run.runID) else {
            throw LabError.data("run \(run.runID): no keyframe_analysis row")
        }
        let expected = try displayIndexList(row.expected, column: "expected", count: n, runID: run.runID)
        let actual = try displayIndexList(row.actual, column: "actual", count: n, runID: run.runID)
        let forced = try displayIndexList(row.forced, column: "forced", count: n, runID: run.runID)
        var violations: [(kind: Int, start: Int, end: Int)] = []
        for v in try store.database.keyframeViolations(run: run.runID) {
            let at = "run \(run.runID): keyframe_violations"
            guard case .text(let kind) = v.kind, let k = violationKinds.firstIndex(of: kind) else {
                throw LabError.data("\(at).kind is not one of \(violationKinds.joined(separator: ", "))")
            }
            guard case .integer(let start) = v.startFrame, case .integer(let end) = v.endFrame,
                  start >= 0, start <= end, end <= Int64(n) else {
                throw LabError.data("\(at): start_frame/end_frame are not two display indices with 0 <= start <= end <= \(n)")
            }
            violations.append((k, Int(start), Int(end)))
        }
        return KeyframeRows(expected: expected, actual: actual, forced: forced, violations: violations)
    }

    /// Reads and checks a run's `data_rate_windows` rows, by pair.
    /// - Throws: `.data` "run N: data_rate_windows ..." for a pair that is not 0 or 1 (or repeats), bytes outside
    ///   1 ... ``DataRateLimits/maxBytes``, seconds that are not `N` or `N/D` above 0, honoured not 0 or 1, window
    ///   counts that are negative or more over the limit than there are windows, or a worst window that is not all
    ///   NULL or all given with frames among the run's coded indices (first ≤ last), bytes ≥ 0 and a finite ratio ≥ 0.
    static func windowRows(_ run: VideoToolboxRun, store: LabStore) throws -> [WindowRow] {
        var rows: [WindowRow] = []
        for r in try store.database.dataRateWindows(run: run.runID) {
            let at = "run \(run.runID): data_rate_windows"
            guard case .integer(let pair) = r.pair, pair == 0 || pair == 1, !rows.contains(where: { $0.pair == Int(pair) }) else {
                throw LabError.data("\(at).pair is not 0 or 1 once each")
            }
            let row = "\(at) pair \(pair)"
            guard case .integer(let bytes) = r.bytes, bytes >= 1, bytes <= DataRateLimits.maxBytes else {
                throw LabError.data("\(row): bytes is not a whole number from 1 to \(DataRateLimits.maxBytes)")
            }
            guard case .text(let text) = r.seconds, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "/") }),
                  let seconds = Rational(parsing: text), seconds > .zero else {
                throw LabError.data("\(row): seconds is not N or N/D seconds above 0")
            }
            guard case .integer(let honoured) = r.honoured, honoured == 0 || honoured == 1 else {
                throw LabError.data("\(row): honoured is not 0 or 1")
            }
            guard case .integer(let windows) = r.windows, case .integer(let over) = r.windowsOver,
                  windows >= 0, over >= 0, over <= windows else {
                throw LabError.data("\(row): windows/windows_over are not counts with windows_over <= windows")
            }
            var worst: (start: Int, end: Int, bytes: Int64, ratio: Double)?
            let cells = (r.worstStartFrame, r.worstEndFrame, r.worstBytes, r.worstRatio)
            if case (.null, .null, .null, .null) = cells {
                worst = nil
            } else if case (.integer(let s), .integer(let e), .integer(let b), let ratio) = cells,
                      s >= 0, s <= e, e < Int64(run.frames.count), b >= 0, let q = ratio.double, q.isFinite, q >= 0 {
                worst = (Int(s), Int(e), b, q)
            } else {
                throw LabError.data("\(row): the worst window is not NULL throughout, nor coded indices 0 <= first <= last < \(run.frames.count), bytes >= 0 and a finite ratio >= 0")
            }
            rows.append(WindowRow(pair: Int(pair), bytes: bytes, seconds: seconds, honoured: honoured == 1, windows: windows,
                                  windowsOver: over, worst: worst))
        }
        return rows
    }

    /// The tic labels of one row per run: `set ytics (keyTitle[1] 0, keyTitle[2] 1, ...)` with the first run on top.
    static func runRowAxis(count: Int) -> String {
        let tics = (0..<count).map { "keyTitle[\($0 + 1)] \($0)" }.joined(separator: ", ")
        return """
        set ytics (\(tics))
        set yrange [\(Double(count) - 0.5):-0.5]
        """
    }

    /// `%.6f`: seconds to the microsecond in the data files.
    static func sixDecimals(_ x: Double) -> String { String(format: "%.6f", x) }

    /// `keyframes.*`: one row of marks per run over seconds of PTS (see the extension's description).
    /// `keyframes.dat`: `row kind display_index seconds`, kind 0 expected, 1 actual (IDR), 2 forced, 3 an I picture
    /// that is no IDR (`frames.type` 'I': no keyframe for VideoToolbox's rule), runs in order;
    /// `keyframe-violations.dat`: `row kind start_frame end_frame start_seconds end_seconds`, kind 0 frame-limit,
    /// 1 duration-limit, 2 stall, an end frame equal to the frame count being the end of the last frame.
    static func writeKeyframeTimeline(_ runs: [(VideoToolboxRun, KeyframeRows)], experiment: String, dir: String) throws {
        var marks = "# row kind(0 expected, 1 actual IDR, 2 forced by the lab, 3 I picture that is no IDR) display_index seconds_from_first_pts\n"
        var segments = "# row kind(0 frame-limit, 1 duration-limit, 2 stall) start_frame end_frame start_seconds end_seconds\n"
        var kindsSeen = Set<Int>(), violationKindsSeen = Set<Int>()
        var titles: [String] = []
        var end = 0.0
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, runs.count)))
        for (row, (run, k)) in runs.enumerated() {
            marks += "# run \(run.runID): \(shown(run.name, limit: .max))\n"
            let intra = run.frames.filter { $0.type == "I" }.map(\.displayIndex).sorted()
            for (kind, list) in [k.expected, k.actual, k.forced, intra].enumerated() {
                for i in list {
                    marks += "\(row) \(kind) \(i) \(sixDecimals(try run.seconds(run.ptsByDisplay[i])))\n"
                    kindsSeen.insert(kind)
                }
            }
            for v in k.violations {
                segments += "\(row) \(v.kind) \(v.start) \(v.end) \(sixDecimals(try run.secondsAt(display: v.start))) \(sixDecimals(try run.secondsAt(display: v.end)))\n"
                violationKindsSeen.insert(v.kind)
            }
            end = max(end, try run.endSeconds())
            titles.append(shown(run.name, limit: keyLimit))
        }
        try write(marks, to: "\(dir)/keyframes.dat")
        try write(segments, to: "\(dir)/keyframe-violations.dat")
        var series: [String] = []
        let violationStyles = ["lc rgb '#d62728' lw 6", "lc rgb '#ff7f0e' lw 6", "lc rgb '#7f7f7f' lw 6 dt 3"]
        for kind in violationKindsSeen.sorted() {
            series.append("'keyframe-violations.dat' using 5:($2 == \(kind) ? $1 : 1/0):($6 - $5):(0) with vectors nohead \(violationStyles[kind]) title 'violation: \(violationKinds[kind])'")
        }
        let markStyles = [
            "using 4:($2 == 0 ? $1 - 0.18 : 1/0) with points pt 8 ps 1.6 lc rgb '#1f77b4' title 'expected by the rule'",
            "using 4:($2 == 1 ? $1 + 0.18 : 1/0) with points pt 7 ps 1.2 lc rgb '#2ca02c' title 'actual IDR'",
            "using 4:($2 == 2 ? $1 + 0.18 : 1/0) with points pt 2 ps 1.6 lw 2 lc rgb 'black' title 'forced by the lab'",
            "using 4:($2 == 3 ? $1 + 0.18 : 1/0) with points pt 4 ps 1.4 lw 2 lc rgb '#ff7f0e' title 'I picture, not IDR (no keyframe)'",
        ]
        for kind in kindsSeen.sorted() { series.append("'keyframes.dat' \(markStyles[kind])") }
        if series.isEmpty { series.append("1/0 notitle") }
        let body = """
        \(keyTitlePrologue(count: titles.count))
        \(runRowAxis(count: titles.count))
        set title ARG1
        set xlabel 'seconds from the first PTS'
        set xrange [-0.05 * \(end):\(end) * 1.02]
        set grid x
        set key below horizontal
        plot \(series.joined(separator: ", \\\n     "))
        """
        try both(dir: dir, name: "keyframes", body: body,
                 arguments: [shown("\(experiment): keyframes expected and actual"), titles.joined(separator: "\n")],
                 size: (1400, max(400, 160 + 36 * titles.count)))
    }

    /// `gop-histogram.*`: per run, a row holding the histogram of its closed GOPs' lengths in seconds (bars scaled to
    /// the largest count of all, the count written on each bar).
    /// - `gops.dat`: one line per stretch, runs in order, `row start_frame end_frame frames seconds closed`: from an
    ///   IDR of `actual` (frame 0 when the stream does not start with one) to the next, the last to the frame count
    ///   (the end of the last frame, one nominal frame after the largest PTS); `closed` is 1 for a stretch from one
    ///   IDR to the next, and only those are counted.
    /// - `gop-bins.dat`: `row bin_start bin_end gops`, each bin [k·w, (k+1)·w) seconds holding a run's closed GOPs,
    ///   w the smallest of 0.01, 0.02, 0.05, 0.1, ... s giving at most 50 bins up to the largest GOP.
    static func writeGOPHistogram(_ runs: [(VideoToolboxRun, KeyframeRows)], experiment: String, dir: String) throws {
        var data = "# row start_frame end_frame frames seconds closed(1: IDR to IDR, 0: to the end or from a frame 0 that is no IDR)\n"
        var closedSeconds: [[Double]] = []
        var titles: [String] = []
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, runs.count)))
        for (row, (run, k)) in runs.enumerated() {
            data += "# run \(run.runID): \(shown(run.name, limit: .max))\n"
            let n = run.frames.count
            let idr = Set(k.actual)
            var bounds = k.actual.first == 0 ? k.actual : [0] + k.actual
            bounds.append(n)
            var closed: [Double] = []
            for (a, b) in zip(bounds, bounds.dropFirst()) {
                let seconds = try run.secondsAt(display: b) - run.secondsAt(display: a)
                let isClosed = idr.contains(a) && b < n && idr.contains(b)
                if isClosed { closed.append(seconds) }
                data += "\(row) \(a) \(b) \(b - a) \(sixDecimals(seconds)) \(isClosed ? 1 : 0)\n"
            }
            closedSeconds.append(closed)
            titles.append(shown(run.name, limit: keyLimit))
        }
        try write(data, to: "\(dir)/gops.dat")
        let largest = closedSeconds.joined().max() ?? 0
        let steps = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
        let width = steps.first { largest / $0 < 50 } ?? 10_000
        var bins = "# row bin_start_seconds bin_end_seconds gops (closed GOPs whose length lies in [start, end))\n"
        var most = 1
        for (row, closed) in closedSeconds.enumerated() {
            // The bin of a length: floor(seconds / width), the quotient nudged up by 1e-9 against binary rounding.
            let counts = Dictionary(grouping: closed) { Int(($0 / width + 1e-9).rounded(.down)) }.mapValues(\.count)
            for bin in counts.keys.sorted() {
                bins += "\(row) \(sixDecimals(Double(bin) * width)) \(sixDecimals(Double(bin + 1) * width)) \(counts[bin]!)\n"
                most = max(most, counts[bin]!)
            }
        }
        try write(bins, to: "\(dir)/gop-bins.dat")
        let body = """
        \(keyTitlePrologue(count: titles.count))
        \(runRowAxis(count: titles.count))
        most = \(most)
        set title ARG1
        set xlabel 'GOP length (s), from an IDR to the next; bins of \(width) s'
        set xrange [0:\(largest + 2 * width)]
        set grid x
        set style fill solid 0.6
        set key below horizontal
        plot 'gop-bins.dat' using (($2 + $3) / 2):($1 + 0.4 - $4 / most * 0.4):(($3 - $2) * 0.45):($4 / most * 0.4) with boxxyerror lc rgb '#1f77b4' title 'closed GOPs in the bin (bar height: count, scaled to the largest)', \\
             'gop-bins.dat' using (($2 + $3) / 2):($1 + 0.32 - $4 / most * 0.8 - 0.1):(sprintf('%d', $4)) with labels notitle
        """
        try both(dir: dir, name: "gop-histogram", body: body,
                 arguments: [shown("\(experiment): GOP lengths in seconds"), titles.joined(separator: "\n")],
                 size: (1400, max(400, 160 + 44 * titles.count)))
    }

    /// `bframes.*`: per run, its B-frames as a bar (reference B, then non-reference B) and its reorder delay as a
    /// mark on the top axis. `bframes.dat`: `row frames b_frames bref_frames reorder_delay`, one line per done run
    /// of the experiment: b_frames counts `frames.type` 'B', bref_frames 'Bref', reorder_delay is max over the
    /// run's frames of (coded_index − display_index), the frames a player holds back for reordering.
    static func writeBFramePlot(_ runs: [VideoToolboxRun], experiment: String, dir: String) throws {
        var data = "# row frames b_frames bref_frames reorder_delay(max of coded_index - display_index)\n"
        var titles: [String] = []
        var most = 1, delay = 1
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, runs.count)))
        for (row, run) in runs.enumerated() {
            let b = run.frames.filter { $0.type == "B" }.count, bref = run.frames.filter { $0.type == "Bref" }.count
            let reorder = run.frames.map { $0.codedIndex - $0.displayIndex }.max() ?? 0
            data += "# run \(run.runID): \(shown(run.name, limit: .max))\n"
            data += "\(row) \(run.frames.count) \(b) \(bref) \(reorder)\n"
            most = max(most, b + bref)
            delay = max(delay, reorder)
            titles.append(shown(run.name, limit: keyLimit))
        }
        try write(data, to: "\(dir)/bframes.dat")
        let body = """
        \(keyTitlePrologue(count: titles.count))
        \(runRowAxis(count: titles.count))
        set title ARG1
        set xlabel 'B-frames in the run'
        set x2label 'reorder delay (frames): max of coded_index - display_index'
        set xrange [0:\(Double(most) * 1.1)]
        set x2range [0:\(Double(delay) * 1.1 + 0.5)]
        set x2tics 1
        set xtics nomirror
        set grid x
        set style fill solid 0.6
        set key below horizontal
        plot 'bframes.dat' using ($4 / 2):1:($4 / 2):(0.3) with boxxyerror lc rgb '#2ca02c' title 'B (reference)', \\
             'bframes.dat' using ($4 + $3 / 2):1:($3 / 2):(0.3) with boxxyerror lc rgb '#9467bd' title 'B (non-reference)', \\
             'bframes.dat' using 5:1 axes x2y1 with points pt 9 ps 1.8 lc rgb 'black' title 'reorder delay (top axis)'
        """
        try both(dir: dir, name: "bframes", body: body,
                 arguments: [shown("\(experiment): B-frames and reorder delay per setting"), titles.joined(separator: "\n")],
                 size: (1400, max(400, 160 + 36 * titles.count)))
    }

    /// `data-rate.*`: per run and DataRateLimits pair, each window's bytes over the pair's bytes against seconds of
    /// DTS from the run's first frame, the limit at 1, and the stored worst windows.
    /// `data-rate.dat`: one block per run and pair (in run, then pair order; `index` i is series i), `start_seconds
    /// window_bytes ratio` for each window: one per distinct DTS, [DTS, DTS + W) holding the frames whose DTS lies in
    /// it (a DTS below an earlier one counts at the largest before it, as the lab's check does), their
    /// `frames.size_bytes` summed (start codes, parameter sets and filler included: a little above the check's
    /// count), ratio = window_bytes / the pair's bytes. `data-rate-worst.dat`: `series run_id pair bytes seconds
    /// honoured windows windows_over worst_start_frame worst_end_frame worst_bytes worst_ratio start_seconds`, one
    /// line per `data_rate_windows` row with a worst window, as stored.
    static func writeDataRatePlot(_ runs: [(VideoToolboxRun, [WindowRow])], experiment: String, dir: String) throws {
        var data = "# start_seconds window_bytes ratio (frames.size_bytes in [DTS, DTS + W), over the pair's bytes)\n"
        var worst = "# series run_id pair bytes seconds honoured windows windows_over worst_start_frame worst_end_frame worst_bytes worst_ratio start_seconds\n"
        var series: [String] = []
        var titles: [String] = []
        var end = 0.0, top = 1.0
        let total = runs.reduce(0) { $0 + $1.1.count }
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, total)))
        var index = 0
        for (r, (run, rows)) in runs.enumerated() {
            // Arrival ticks: the running maximum of the DTS, in decode order.
            var arrival: [Int64] = []
            for f in run.frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
            let first = arrival[0]
            func seconds(_ ticks: Int64) throws -> Double {
                let (span, overflow) = ticks.subtractingReportingOverflow(first)
                guard !overflow, let s = try? run.timebase.times(span) else {
                    throw LabError.data("run \(run.runID): a DTS span of \(ticks) - \(first) ticks of \(run.timebase) s does not fit exact 64-bit seconds")
                }
                return s.approximateValue
            }
            end = max(end, try seconds(arrival.last!))
            for w in rows {
                // A difference of d ticks is inside the window when d < ceil(W / timebase) (as DataRateLimits.check).
                let a = Int128(w.seconds.denominator) * Int128(run.timebase.numerator)
                let b = Int128(w.seconds.numerator) * Int128(run.timebase.denominator)
                let windowTicks = (b - 1) / a + 1
                data += "# run \(run.runID) pair \(w.pair): \(w.bytes) bytes in \(w.seconds) s: \(shown(run.name, limit: .max))\n"
                var startIndex = 0, stop = 0
                var bytes: Int128 = 0
                let n = run.frames.count
                while startIndex < n {
                    while stop < n && Int128(arrival[stop]) - Int128(arrival[startIndex]) < windowTicks {
                        bytes += Int128(run.frames[stop].sizeBytes)
                        stop += 1
                    }
                    let ratio = Double(bytes) / Double(w.bytes)
                    top = max(top, ratio)
                    data += "\(sixDecimals(try seconds(arrival[startIndex]))) \(bytes) \(ratio)\n"
                    let t = arrival[startIndex]
                    while startIndex < n && arrival[startIndex] == t {
                        bytes -= Int128(run.frames[startIndex].sizeBytes)
                        startIndex += 1
                    }
                }
                data += "\n\n"
                if let x = w.worst {
                    worst += "\(index) \(run.runID) \(w.pair) \(w.bytes) \(w.seconds) \(w.honoured ? 1 : 0) \(w.windows) \(w.windowsOver) \(x.start) \(x.end) \(x.bytes) \(x.ratio) \(sixDecimals(try seconds(arrival[x.start])))\n"
                    top = max(top, x.ratio)
                }
                let dash = w.honoured ? 1 + w.pair : 3
                series.append("'data-rate.dat' index \(index) using 1:3 with lines lw 1.5 dt \(dash) lc \(1 + r % 8) title keyTitle[\(index + 1)]")
                titles.append(shown("\(run.name), pair \(w.pair + 1): \(w.bytes) bytes in \(DataRateLimits.decimal(w.seconds)) s\(w.honoured ? "" : " (not honoured: vt-compat)")", limit: keyLimit))
                index += 1
            }
        }
        try write(data, to: "\(dir)/data-rate.dat")
        try write(worst, to: "\(dir)/data-rate-worst.dat")
        series.append("1 with lines lw 2 dt 2 lc rgb 'black' title 'the limit'")
        if worst.split(separator: "\n").count > 1 {
            series.append("'data-rate-worst.dat' using 13:12 with points pt 6 ps 2 lw 2 lc rgb 'black' title 'worst window (the stored check: NAL units without start codes)'")
        }
        let body = """
        \(keyTitlePrologue(count: titles.count))
        set title ARG1
        set xlabel 'seconds of DTS from the first frame (window start)'
        set ylabel 'bytes in the window / the limit (frames.size_bytes)'
        set xrange [0:\(max(end, 1e-6))]
        set yrange [0:\(top * 1.1)]
        set grid
        set key below vertical
        plot \(series.joined(separator: ", \\\n     "))
        """
        try both(dir: dir, name: "data-rate", body: body,
                 arguments: [shown("\(experiment): bytes in each DataRateLimits window against the limit"), titles.joined(separator: "\n")],
                 size: (1400, 600 + 16 * titles.count))
    }
}
