import Foundation
import H264

/// One run's page of the report (`run-ID/index.html`) and its plots and pictures beside it.
///
/// Plots (each `NAME.png`, `NAME.svg`, `NAME.gp` and `NAME.dat`, drawn by gnuplot; no user text reaches a script):
/// - `sizes`: frame size in kbit per frame in decode order, one colour per type (IDR, I, P, Bref, B);
/// - `bitrate`: the bitrate over 1-second windows of decode time (``WindowedBitrate``: the window starting at each
///   frame's DTS, drawn while the window ends within the stream), with the target (ABR) or the mean rate;
/// - `keyframes`: the keyframe timeline, each IDR and I frame at its PTS in seconds;
/// - `vbv`: the VBV buffer's fullness before and after each frame's removal (``VBVReplay``, from the run's
///   `resolved.vbv_maxrate_kbps`, `vbv_bufsize_kbit`, `vbv_init` and `nal_hrd`), only for a run with a VBV;
/// - `timestamps`: the PTS step between frames in display order and the DTS step in decode order, in ms;
/// - `quality`: per-frame PSNR (Y, U, V and the frame's) and SSIM against decode time;
/// - `datarate-N`: per DataRateLimits pair (`data_rate_windows`), the bytes of each window of its length, the limit.
///
/// The sizes, bitrate, quality, VBV and DataRateLimits plots are also interactive charts (``ChartRunPage``: zoom,
/// pan, hover for a frame's stored values, one shared x axis), the gnuplot files linked under each; the keyframe
/// timeline and the steps are shown as their PNG.
///
/// The worst-PSNR frame (the lowest `frames.psnr_avg`, the lab's PSNR of the three planes from its own decode; the
/// lowest display index among equals) is shown as `worst-source.png` beside `worst-decoded.png`: the source picture
/// is the clip's picture number `seek + display_index` (the run's `--seek` from its stored settings), read as the
/// lab reads clips (``Clip``); the decoded picture is picture `display_index` of ffmpeg's decode of the stream, in
/// display order (as ``IndependentDecode`` measures it). Their squared error is compared with the stored `sse_*`.
enum RunPage {
    /// What the experiment page says about a run's page.
    struct Outcome {
        var streamMissing: Bool
        var sourceMissing: Bool
    }

    static let types = ["IDR", "I", "P", "Bref", "B"]
    static let colours = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"]

    /// A stored path as found on this machine: an absolute path as it is; a relative one from the current folder,
    /// else from the database's folder, else from that folder's parent (a run records paths relative to the folder it
    /// ran in, which is usually one of these). Nil when no such regular file exists: a folder, a named pipe (ffmpeg
    /// would wait on it for ever), a device (`/dev/urandom` never ends) or a socket counts as missing.
    static func locate(_ stored: String?, databasePath: String) -> String? {
        guard let stored, !stored.isEmpty else { return nil }
        if stored.hasPrefix("/") { return isRegularFile(stored) ? stored : nil }
        let dbFolder = Paths.parent(Paths.absolute(databasePath))
        for candidate in [stored, "\(dbFolder)/\(stored)", "\(Paths.parent(dbFolder))/\(stored)"] where isRegularFile(candidate) {
            return candidate
        }
        return nil
    }

    /// Whether `path` is a regular file (stat(2), symbolic links followed); opens nothing, so a named pipe cannot block.
    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// Writes the data files, plot scripts and pictures of `run`'s page in `dir` (created), its plots queued on
    /// `queue` (drawn by the caller, ``PlotQueue/draw(in:)`` of `dir`'s parent), and returns the page's HTML, with
    /// links back to `../index.html` and its plots as placeholders (``HTML/fillPlots(_:dir:)`` once drawn).
    /// Reads nothing from the store (`frames` are the run's, ``ReportData/frames(run:store:)``), so pages can be
    /// written on several threads at once.
    /// - Throws: `.cantCreate`, `.ioError` when a file cannot be written; `.software` when ffmpeg fails; `.data` for
    ///   a damaged stored row.
    /// - Parameter charts: the run's frames and limits for the interactive charts (``ChartRunPage``).
    /// - Parameter warnings: what the run's numbers cannot say (``Warnings/section(_:filler:)`` of the run alone).
    /// The run's rate schedule (docs/rate-control-in-motion.md): one row per stored change (`rate_changes` with its
    /// `step_response`), a change x264 ignored or refused in the class `rate-ignored`, and the run's own warnings
    /// about its schedule (`runs.warnings` items beginning "rate schedule:"); "" for a run without one.
    static func rateScheduleSection(_ changes: [LabStore.StoredRateChange], warningsJSON: String?) -> String {
        guard !changes.isEmpty else { return "" }
        let e = HTML.escape
        func number(_ v: Double?, _ digits: Int) -> String { v.map { HTML.number($0, digits: digits) } ?? "" }
        var html = "<h2 id=\"rate-schedule\">Rate schedule</h2>\n"
        html += "<p class=\"note\">Each change of the run's --rate-schedule (table rate_changes), the frame it landed on, what x264 did with it, and its step response (table step_response: settling within the run's tolerance, the largest and smallest 1-s window against the new target). The chart above draws the target in force as a staircase and marks each change.</p>\n"
        let rows = changes.map { c -> [String] in
            let when = c.requestedFrame.map { "frame \($0)" } ?? c.requestedSeconds.map { "\(ChartGroup.trimmed(String(format: "%.3f", $0))) s" } ?? ""
            let status = c.status == "ignored" || c.status == "refused" ? "<span class=\"missing rate-ignored\">\(e(c.status))</span>" : e(c.status)
            let settle = c.settleFrames.map { "\($0) frames, \(number(c.settleSeconds, 2)) s" } ?? ""
            return ["\(c.changeIndex)", e(when), e("\(c.name)=\(c.value)"), e(c.x264), c.frame.map(String.init) ?? "", status, e(c.reason ?? ""),
                    number(c.targetKbps, 1), settle, number(c.overshootPercent, 1), number(c.undershootPercent, 1)]
        }
        html += HTML.table(headers: ["change", "requested at", "change", "x264", "frame", "status", "reason", "target kbit/s", "settles after",
                                     "overshoot %", "undershoot %"], rows: rows, textColumns: [1, 2, 3, 5, 6, 8], id: "rate-changes")
        let warnings = ((warningsJSON.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }) as? [Any] ?? [])
            .compactMap { $0 as? String }.filter { $0.hasPrefix("rate schedule:") }
        if !warnings.isEmpty {
            html += "<div class=\"warnings\" id=\"rate-warnings\"><h2>Changes x264 did not apply (the run's warnings)</h2>\n<ul>\n"
            html += warnings.map { "<li>\(e($0))</li>" }.joined(separator: "\n")
            html += "\n</ul></div>\n"
        }
        return html
    }

    /// The run's frame rate as the facts show it: the clip's (`runs.fps_num`/`fps_den`, said to be the clip's), and
    /// where the run's own timestamps differ from it (a `--pts-schedule`, a timecode file, the input's PTS) what they
    /// are: the stream's frames over its span (`runs.frames`, `duration_s`) as a mean rate, with the schedule as given
    /// (`settings.timestamps.schedule`) when there is one.
    static func frameRateFact(_ row: LabStore.RunRow) -> String {
        guard let num = row.fpsNum else { return "" }
        let den = row.fpsDen ?? 1
        var text = "\(num)/\(den) (the clip's)"
        if let frames = row.frames, frames > 0, let span = row.durationSeconds, span > 0, den > 0 {
            let mean = Double(frames) / span, clip = Double(num) / Double(den)
            if abs(mean - clip) > clip * 0.001 {
                let object = (try? JSONSerialization.jsonObject(with: Data(row.settingsJSON.utf8))) as? [String: Any]
                let schedule = (object?["timestamps"] as? [String: Any])?["schedule"] as? String
                text += "; the run's timestamps: \(frames) frames over \(HTML.number(span, digits: 3)) s, \(HTML.number(mean, digits: 3)) fps on average"
                    + (schedule.map { " (pts-schedule \(HTML.escape($0)))" } ?? "")
            }
        }
        return text
    }

    /// The items of a run's stored warnings (`runs.warnings`, a JSON array of strings); empty for NULL or a text that
    /// is not such an array.
    static func storedWarnings(_ json: String?) -> [String] {
        ((json.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }) as? [Any] ?? []).compactMap { $0 as? String }
    }

    /// The run's own warnings as stored (`runs.warnings`: what the encode, x264 or `check` said of it), each escaped;
    /// "" for a run without any.
    static func storedWarningsSection(_ json: String?) -> String {
        let list = storedWarnings(json)
        guard !list.isEmpty else { return "" }
        return "<div class=\"warnings\" id=\"run-warnings\"><h2>The run's warnings (runs.warnings)</h2>\n<ul>\n"
            + list.map { "<li>\(HTML.escape($0))</li>" }.joined(separator: "\n") + "\n</ul></div>\n"
    }

    static func write(_ run: ReportData.Run, frames: [ReportData.Frame], charts: ChartRunInput, columns: [String], hasMetricsTable: Bool,
                      databasePath: String, dir: String, queue: PlotQueue, sources: SourcePictures, warnings: String = "") throws -> (outcome: Outcome, html: String) {
        try OutputFiles.makeDirectory(dir)
        let row = run.row
        let settings = try? StoredRunSettings(json: row.settingsJSON, runID: row.runID)
        let stream = locate(row.streamPath, databasePath: databasePath)
        let source = locate(row.clip, databasePath: databasePath)
        let e = HTML.escape
        var body = "<p><a href=\"../index.html\">← experiment</a> · <a href=\"../../index.html\">all experiments</a></p>\n"
        body += "<h1>Run \(row.runID): \(e(run.clipName)) \(e(run.label))</h1>\n"
        if run.unverified {
            body += "<p class=\"unverified-note\">Unverified run: encoded with --verify none, so its PSNR (frames.psnr_*, sse_*; run_metrics.psnr_source x264) is x264's own report, not the lab's decode of the stream checked against the source.</p>\n"
        }
        body += warnings
        var facts: [[String]] = run.isCheck ? checkFacts(run, stream: stream) : [
            ["experiment", e(row.experiment)], ["clip", e(row.clip) + (source == nil ? " <span class=\"missing\">(source file missing on this machine, or not a regular file)</span>" : "")],
            ["configuration", e(run.configuration)], ["label", e(run.label)], [Self.settingsRowName(run.encoder), e(settings?.x264Arguments ?? "")],
            ["status", e(row.status) + (row.error.map { ": " + e($0) } ?? "")],
            ["stream", e(row.streamPath ?? "none stored") + (stream == nil ? " <span class=\"missing\">(stream file missing on this machine, or not a regular file)</span>" : "")],
        ]
        facts += [
            ["frames", row.frames.map(String.init) ?? ""], ["bytes", row.bytes.map(String.init) ?? ""],
            ["size", row.width.map { "\($0)x\(row.height ?? 0)" } ?? ""],
            ["frame rate", frameRateFact(row)],
        ]
        if run.skippedFrames > 0 {
            facts.append(["skipped by the encoder", "\(run.skippedFrames) of \(row.inputFrames.map(String.init) ?? "?") input pictures (skipped_frames; no frame, no picture in the stream)"])
        }
        facts += [
            ["timebase", row.timebaseNum.map { "\($0)/\(row.timebaseDen ?? 1) s" } ?? ""],
        ]
        if let key = row.runKey { facts.append(["run key", e(key)]) }
        if let repeatable = row.repeatable {
            let why = Repeatability.reason(settingsJSON: row.settingsJSON)?.reason
            facts.append(["repeatable", repeatable ? "yes" : "<span class=\"missing\">no</span>: \(e(why ?? "not repeatable")); another encode of this run key gives other bytes (\(e(Repeatability.advice)))"])
        }
        body += HTML.table(headers: ["", ""], rows: facts, textColumns: [0, 1])
        body += storedWarningsSection(row.warningsJSON)
        // The rules' badges and violations first: for a check run they are the answer.
        body += RuleSection.runPage(run)
        body += "<h2>Metrics</h2>\n"
        body += metricsGrid(run, columns: columns)
        if !hasMetricsTable { body += "<p class=\"note\">Computed from the frames; <code>enclab analyze</code> adds the full metrics (table run_metrics).</p>\n" }

        guard !frames.isEmpty, let tn = row.timebaseNum, let td = row.timebaseDen, tn > 0, td > 0,
              let timebase = try? Rational(Int64(tn), Int64(td)), let frameTicks = ReportData.frameTicks(row) else {
            body += "<p class=\"missing\">No frames, timebase or frame rate stored: nothing to plot.</p>\n"
            return (Outcome(streamMissing: stream == nil, sourceMissing: source == nil), HTML.page(title: "run \(row.runID)", body: body))
        }
        try RunPlotInput.checkFrames(frames.map {
            LabStore.FrameRow(codedIndex: $0.codedIndex, displayIndex: $0.displayIndex, type: $0.type, sizeBytes: $0.sizeBytes,
                              pts: $0.pts, dts: $0.dts, qp: nil, psnrY: nil, psnrAvg: nil, ssim: nil)
        }, runID: row.runID, database: databasePath)
        // Seconds from the run's first PTS, exact (``ChartTime``): a large PTS offset is said in the titles, not the tics.
        let time = ChartTime(pts: frames.map(\.pts), timebase: timebase)
        func seconds(_ ticks: Int64) -> Double { time.seconds(ticks) }

        // The interactive charts (one group, one x axis), beside the gnuplot pictures.
        var arrival: [Int64] = []
        for f in frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
        let target = settings?.rcMethod == "abr" ? settings?.resolvedNumber("bitrate_kbps") : nil
        let vbv = vbvReplay(sizes: frames.map(\.sizeBytes), arrival: arrival, timebase: timebase, row: row, settings: settings)
        var chart = ChartRunPage(run: run, input: charts, timebase: timebase, frameTicks: frameTicks, vbv: vbv?.result,
                                 targetKbps: target, maxrateKbps: settings?.resolvedNumber("vbv_maxrate_kbps"), meanKbps: run.kbps)
        body += ChartPage.help(group: "run")
        body += ChartPage.origin(time.title.isEmpty ? [] : [time.title])

        // Frame sizes by type.
        body += "<h2>Frame sizes by type</h2>\n"
        var sizes = "# coded_index display_index type_index size_kbit\n"
        for f in frames { sizes += "\(f.codedIndex) \(f.displayIndex) \(types.firstIndex(of: f.type) ?? 0) \(Double(f.sizeBytes) * 8 / 1000)\n" }
        try Plots.write(sizes, to: "\(dir)/sizes.dat")
        let sizeSeries = types.enumerated().map { i, t in
            "'sizes.dat' using 1:($3==\(i) ? $4 : 1/0) with impulses lw 2 lc rgb '\(colours[i])' title '\(t)'"
        }
        try Plots.both(dir: dir, name: "sizes", body: """
            set xlabel 'frame (decode order)'
            set ylabel 'frame size (kbit)'
            set xrange [-1:\(frames.count)]
            set yrange [0:*]
            set key below horizontal
            set grid
            plot \(sizeSeries.joined(separator: ", \\\n     "))
            """, arguments: [], size: (1100, 350), queue: queue)
        body += chart.html("chart-sizes", title: "Frame size per frame (kbit), by type: IDR, I, P, Bref, B", gnuplot: (name: "sizes", data: ["sizes.dat"]))
        var typeRows: [[String]] = []
        for t in types {
            let s = frames.filter { $0.type == t }.map(\.sizeBytes)
            guard !s.isEmpty else { continue }
            typeRows.append([t, "\(s.count)", HTML.number(Double(s.reduce(0, +)) / Double(s.count) * 8 / 1000), HTML.number(Double(s.max()!) * 8 / 1000)])
        }
        body += HTML.table(headers: ["type", "frames", "mean kbit", "max kbit"], rows: typeRows, textColumns: [0])

        // Windowed bitrate (1 s of decode time), arrival at the largest DTS so far (as the run's own plot).
        let windows = WindowedBitrate.compute(sizes: frames.map(\.sizeBytes), dts: arrival, timebase: timebase, frameTicks: frameTicks)
        let mean = run.kbps
        var rate = "# coded_index dts_s(from the first PTS) window_kbps (NaN until the stream has lasted 1 s)\n"
        for (f, w) in zip(frames, windows) { rate += "\(f.codedIndex) \(seconds(f.dts)) \(w.full ? String(w.kbps) : "NaN")\n" }
        try Plots.write(rate, to: "\(dir)/bitrate.dat")
        var rateSeries = ["'bitrate.dat' using 2:3 with lines lw 2 lc rgb 'black' title 'bitrate, 1 s DTS window'"]
        let maxrate = settings?.resolvedNumber("vbv_maxrate_kbps").flatMap { $0 > 0 ? $0 : nil }
        for limit in ChartRunPage.rateLines(targetKbps: target, maxrateKbps: maxrate, meanKbps: mean) {
            rateSeries.append("\(limit.value) with lines dt \(limit.colour == ChartRunPage.maxrateColour ? 3 : 2) lw 2 lc rgb '\(limit.colour)' title '\(limit.name)'")
        }
        body += "<h2>Bitrate over 1-second windows of decode time</h2>\n"
        if rateSeries.count == 1 && !windows.contains(where: \.full) {
            // gnuplot refuses a plot whose every point is undefined.
            body += "<p class=\"note\">No plot: the stream lasts less than 1 s of decode time (no full window), and the run has no target or mean rate stored.</p>\n"
        } else {
            try Plots.both(dir: dir, name: "bitrate", body: """
                \(time.titleLine)
                set xlabel 'DTS (s from the first PTS)'
                \(ChartTime.axisFormat)
                set ylabel 'bitrate (kbit/s)'
                set yrange [0:*]
                set key below horizontal
                set grid
                plot \(rateSeries.joined(separator: ", \\\n     "))
                """, arguments: [], size: (1100, 350), queue: queue)
            body += chart.html("chart-bitrate", title: "Bitrate over 1-second windows of decode time (kbit/s), each window starting at a frame's DTS",
                               gnuplot: (name: "bitrate", data: ["bitrate.dat"]))
        }

        body += rateScheduleSection(charts.rateChanges, warningsJSON: row.warningsJSON)

        // PSNR and SSIM per frame.
        body += "<h2>PSNR and SSIM per frame</h2>\n"
        body += try chart.qualitySection(dir: dir, queue: queue)
        body += try chart.perceptualSection(dir: dir, queue: queue)

        // Keyframe timeline.
        body += "<h2>Keyframe timeline</h2>\n"
        var keys = "# display_index pts_s(from the first PTS) type_index keyframe\n"
        for f in frames.sorted(by: { $0.displayIndex < $1.displayIndex }) {
            keys += "\(f.displayIndex) \(seconds(f.pts)) \(types.firstIndex(of: f.type) ?? 0) \(f.keyframe ? 1 : 0)\n"
        }
        try Plots.write(keys, to: "\(dir)/keyframes.dat")
        let frameSeconds = (try? frameTicks * timebase)?.approximateValue ?? 0
        let timeline = KeyframeTimeline(frames: frames, rules: run.rules, time: time, frameSeconds: frameSeconds, skipped: charts.skipped)
        let limitPlots = try timeline.gnuplot(dir: dir)
        let keySeries = [
            "'keyframes.dat' using 2:($3==0 ? 1 : 1/0) with impulses lw 3 lc rgb '\(colours[0])' title 'IDR'",
            "'keyframes.dat' using 2:($3==1 ? 0.7 : 1/0) with impulses lw 3 lc rgb '\(colours[1])' title 'I (not IDR)'",
            "'keyframes.dat' using 2:($4==1 && $3>1 ? 0.5 : 1/0) with impulses lw 3 lc rgb '#000000' title 'other keyframe'",
            "'keyframes.dat' using 2:(0.05) with points pt 7 ps 0.3 lc rgb '#999999' title 'frame'",
        ] + limitPlots.series
        // x from half a frame before the first PTS to the end of the last frame: the first IDR's bar stands clear of the axis.
        try Plots.both(dir: dir, name: "keyframes", body: """
            \(time.titleLine)
            set xlabel 'PTS (s from the first PTS)'
            \(ChartTime.axisFormat)
            set xrange [\(-frameSeconds / 2):\(timeline.endSeconds)]
            set yrange [0:\(limitPlots.series.isEmpty ? 1.2 : 1.4)]
            unset ytics
            set key below horizontal
            set grid x
            plot \(keySeries.joined(separator: ", \\\n     "))
            """, arguments: [], size: (1100, limitPlots.series.isEmpty ? 220 : 260), queue: queue)
        var keyframeGroup: ChartGroup?
        if let group = timeline.chartGroup(run: run, frames: frames, timebase: timebase, frameSeconds: frameSeconds) {
            keyframeGroup = group
            var note = "IDR and I frames at their PTS."
            if let f = timeline.frameRule { note += " Dashed blue, in the upper half: where the next keyframe was due by \(f) (\(f.dropFirst("MaxKeyFrameInterval=".count)) frames after a keyframe)." }
            if let d = timeline.durationRule { note += " Dashed purple, in the lower half: where it was due by \(d) (\(d.dropFirst("MaxKeyFrameIntervalDuration=".count)) s after a keyframe's PTS)." }
            if !timeline.skippedSeconds.isEmpty { note += " Dashed grey: the \(timeline.skippedSeconds.count) picture\(timeline.skippedSeconds.count == 1 ? "" : "s") \(KeyframeTimeline.skippedName) at \(timeline.skippedSeconds.count == 1 ? "its" : "their") input PTS (skipped_frames)." }
            if !timeline.violations.isEmpty { note += " Shaded red: the \(timeline.violations.count) stretch\(timeline.violations.count == 1 ? "" : "es") over a limit (keyframe_violations)." }
            body += ChartPage.chart(id: "chart-keyframes", title: "Keyframe timeline over PTS (s from the first PTS)\(timeline.frameRule == nil && timeline.durationRule == nil ? "" : ", with the keyframe limits")\(timeline.skippedSeconds.isEmpty ? "" : ", with the pictures \(KeyframeTimeline.skippedName)")",
                                    gnuplot: (name: "keyframes", data: ["keyframes.dat"] + limitPlots.files), note: HTML.escape(note))
        } else {
            body += ChartPage.picture(name: "keyframes", data: ["keyframes.dat"] + limitPlots.files, alt: "keyframe timeline")
        }
        // GOP lengths in coded frames: places in display order (a frame's display_index counts the pictures the encoder
        // skipped, and the last GOP ended at the frame count).
        let inDisplayOrder = frames.sorted { $0.displayIndex < $1.displayIndex }
        let keyframeIndexes = inDisplayOrder.indices.filter { inDisplayOrder[$0].type == "IDR" || inDisplayOrder[$0].type == "I" }
        let gops = zip(keyframeIndexes.dropFirst(), keyframeIndexes).map { $0 - $1 } + (keyframeIndexes.last.map { [frames.count - $0] } ?? [])
        let skippedNote = charts.skipped.isEmpty ? "" : " (coded frames; the \(charts.skipped.count) picture\(charts.skipped.count == 1 ? "" : "s") \(KeyframeTimeline.skippedName) not counted)"
        body += "<p>\(keyframeIndexes.count) I/IDR frames; GOP lengths in frames\(skippedNote): \(e(gops.map(String.init).joined(separator: ", ")))</p>\n"

        // VBV occupancy.
        body += "<h2>VBV occupancy</h2>\n"
        body += try vbvSection(vbv, time: time, settings: settings, dir: dir, queue: queue, chart: &chart)
        body += try chart.dataRateSection(dir: dir, queue: queue)

        // The RTP stage (`--rtp`, `--loss`): its table and charts.
        body += try chart.rtpSection(charts.rtp, run: run.rtp, title: "\(run.clipName) \(run.label)", dir: dir, queue: queue)

        // PTS and DTS steps.
        body += "<h2>PTS and DTS steps</h2>\n"
        let display = frames.sorted { $0.displayIndex < $1.displayIndex }
        // Steps in ticks, exact integer differences (``ChartTime/stepData(displayPTS:decodeDTS:)``), with their ms.
        let steps = time.stepData(displayPTS: display.map(\.pts), decodeDTS: frames.map(\.dts))
        // One frame has no step: gnuplot has nothing to range over, so no chart (the report of the whole database
        // failed on such a run before).
        if frames.count < 2 {
            body += "<p>\(frames.count) frame: no PTS or DTS step to draw.</p>\n"
        } else {
        try Plots.write(steps.data, to: "\(dir)/timestamps.dat")
        try Plots.both(dir: dir, name: "timestamps", body: """
            set xlabel 'frame'
            \(time.stepAxis(steps.steps))
            set key below horizontal
            set grid
            plot 'timestamps.dat' using 1:3 with linespoints lw 2 pt 6 ps 1.2 lc rgb '#d62728' title 'DTS step, decode order', \\
                 'timestamps.dat' using 1:2 with linespoints pt 7 ps 0.5 lc rgb '#1f77b4' title 'PTS step, display order (drawn over the DTS steps)'
            """, arguments: [], size: (1100, 300), queue: queue)
        body += ChartPage.picture(name: "timestamps", data: ["timestamps.dat"], alt: "PTS and DTS steps")
        }

        // The worst-PSNR frame.
        body += "<h2>Worst-PSNR frame</h2>\n"
        body += try worstFrameSection(frames: frames, row: row, settings: settings, stream: stream, source: source, dir: dir, sources: sources)
        if let group = keyframeGroup { body += ChartPage.dataBlock(group, name: "keyframes") }
        body += chart.tail

        return (Outcome(streamMissing: stream == nil, sourceMissing: source == nil),
                HTML.page(title: "run \(row.runID): \(run.clipName) \(run.label)", body: body))
    }

    /// The name of the run facts' row holding the encoder's settings as flags (`settings.x264_args`): "x264 flags", or
    /// for OpenH264 "OpenH264 settings" (its `--encoder openh264` flags and `SEncParamExt` fields).
    static func settingsRowName(_ encoder: String) -> String {
        encoder == EncoderName.openh264.rawValue ? "OpenH264 settings" : encoder == EncoderName.x264.rawValue ? "x264 flags" : "\(encoder) settings"
    }

    /// The facts of a run stored by `enclab check --db`: what was checked (the stream file, the limits it was checked
    /// against as given to `--expect`, `settings.check.expect`), and that `check` is its source (no encoder settings).
    static func checkFacts(_ run: ReportData.Run, stream: String?) -> [[String]] {
        let e = HTML.escape, row = run.row
        let expected = (run.rules?.expected ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return [
            ["experiment", e(row.experiment)],
            ["source", "<code>enclab check --db</code>: a stream checked against VideoToolbox limits, not encoded by the lab (no encoder settings, no PSNR)"],
            ["stream", e(row.streamPath ?? row.clip) + (stream == nil ? " <span class=\"missing\">(stream file missing on this machine, or not a regular file)</span>" : "")],
            ["checked against", expected.isEmpty ? "no limits (the stream's facts only)" : expected.map(e).joined(separator: ", ")],
            ["status", e(row.status) + (row.error.map { ": " + e($0) } ?? "")],
        ]
    }

    /// A `run_metrics` column's name with its unit when the name does not end in one already (`psnr_global (dB)`,
    /// `i_frames`, `bitrate_kbps`).
    static func metricName(_ column: String) -> String {
        if column.hasSuffix("_kbps") || column.hasSuffix("_bytes") || column.hasSuffix("_seconds") || column.hasSuffix("_pct")
            || column.hasSuffix("_frames") || column.hasSuffix("_db") || column.hasSuffix("_frame") && !column.hasPrefix("psnr_") { return column }
        if column.hasPrefix("psnr_") && column != "psnr_frames" && column != "psnr_weighting" { return "\(column) (dB)" }
        if column.hasPrefix("qp_") { return "\(column) (QP)" }
        if column.hasSuffix("_ratio") || column == "peak_to_average" { return "\(column) (×)" }
        return column
    }

    /// The run's metrics as name/value pairs, three pairs a row, so the table fits 1280 px: whole-number columns
    /// (``integerMetrics``) without decimals, the others with 3; units in the names (``metricName(_:)``).
    static func metricsGrid(_ run: ReportData.Run, columns: [String], perRow: Int = 3) -> String {
        var html = "<div class=\"scroll\"><table class=\"metrics\" id=\"metrics\">\n<tbody>\n"
        for start in stride(from: 0, to: columns.count, by: perRow) {
            html += "<tr>"
            for (k, c) in columns[start..<min(columns.count, start + perRow)].enumerated() {
                if k > 0 { html += "<td class=\"gap\"></td>" }
                html += "<td class=\"name\">\(HTML.escape(metricName(c)))</td><td class=\"value\">\(run.metricTexts[c].map(HTML.escape) ?? HTML.number(run.metrics[c] ?? nil, digits: integerMetrics.contains(c) ? 0 : 3))</td>"
            }
            html += "</tr>\n"
        }
        return html + "</tbody></table></div>\n"
    }

    /// The run's VBV as the page replays it: the resolved `vbv_maxrate_kbps`, `vbv_bufsize_kbit`, `vbv_init` and
    /// `nal_hrd`, and the replay (``VBVReplay``) or the reason it is not possible; nil for a run without a VBV.
    struct VBV {
        var maxrate: Double, bufsize: Double, initText: String, mode: VBVReplay.Mode, nalHRD: String
        var result: VBVReplay.Result?
        var refusal: String?
    }

    static func vbvReplay(sizes: [Int], arrival: [Int64], timebase: Rational, row: LabStore.RunRow,
                          settings: StoredRunSettings?) -> VBV? {
        guard let settings, let maxrate = settings.resolvedNumber("vbv_maxrate_kbps"), let bufsize = settings.resolvedNumber("vbv_bufsize_kbit"),
              maxrate > 0, bufsize > 0 else { return nil }
        // x264 holds vbv-init as a float: six significant digits give back the value as written (0.9, not 0.89999998).
        let initText = settings.resolvedNumber("vbv_init").map { String(format: "%.6g", $0) } ?? "0.9"
        let vbvInit = VBVReplay.parseInit(initText) ?? VBVReplay.Parameters.defaultInit
        let mode: VBVReplay.Mode = (settings.resolved?["nal_hrd"] as? String) == "cbr" ? .cbr : .vbr
        let fps = row.fpsNum.flatMap { n in row.fpsDen.flatMap { try? Rational(Int64(n), Int64($0)) } }
        let parameters = VBVReplay.Parameters(maxrateKbps: Int64(maxrate), bufsizeKbit: Int64(bufsize), vbvInit: vbvInit, mode: mode, frameRate: fps)
        var vbv = VBV(maxrate: maxrate, bufsize: bufsize, initText: initText, mode: mode, nalHRD: settings.resolved?["nal_hrd"] as? String ?? "none")
        do {
            vbv.result = try VBVReplay.replay(bits: sizes.map { Int64($0) * 8 }, dts: arrival, timebase: timebase, parameters: parameters)
        } catch let error as LabError {
            vbv.refusal = error.message
        } catch {
            vbv.refusal = "\(error)"
        }
        return vbv
    }

    /// The VBV plot and its events, or a sentence saying why there is none.
    static func vbvSection(_ vbv: VBV?, time: ChartTime, settings: StoredRunSettings?, dir: String, queue: PlotQueue,
                           chart: inout ChartRunPage) throws -> String {
        guard let vbv else {
            return "<p class=\"note\">No VBV: the run's resolved vbv_maxrate_kbps/vbv_bufsize_kbit are 0 or absent.</p>\n"
        }
        guard let result = vbv.result else {
            return "<p class=\"refused\">VBV replay not possible: \(HTML.escape(vbv.refusal ?? ""))</p>\n"
        }
        let (maxrate, bufsize, initText, mode) = (vbv.maxrate, vbv.bufsize, vbv.initText, vbv.mode)
        var data = "# coded_index dts_s(from the first PTS) fullness_before_kbit fullness_after_kbit\n"
        for f in result.frames {
            data += "\(f.codedIndex) \(time.seconds(f.dts)) \(f.fullnessBeforeBits.approximateValue / 1000) \(f.fullnessAfter / 1000)\n"
        }
        try Plots.write(data, to: "\(dir)/vbv.dat")
        let size = Double(result.resolved.bufferSizeBits) / 1000
        try Plots.both(dir: dir, name: "vbv", body: """
            \(time.titleLine)
            set xlabel 'DTS (s from the first PTS)'
            \(ChartTime.axisFormat)
            set ylabel 'buffer fullness (kbit)'
            set yrange [0:\(size * 1.1)]
            set key below horizontal
            set grid
            plot 'vbv.dat' using 2:3 with steps lw 1.5 lc rgb '#1f77b4' title 'before removal', \\
                 'vbv.dat' using 2:4 with points pt 7 ps 0.4 lc rgb '#d62728' title 'after removal', \\
                 \(size) with lines dt 2 lw 2 lc rgb '#7f7f7f' title 'buffer size \(String(format: "%.0f", size)) kbit'
            """, arguments: [], size: (1100, 350), queue: queue)
        var html = "<p>vbv-maxrate \(Int64(maxrate)) kbit/s, vbv-bufsize \(Int64(bufsize)) kbit, vbv-init \(HTML.escape(initText)), "
        html += "mode \(mode.rawValue) (nal-hrd \(HTML.escape(vbv.nalHRD))); "
        let underflows = result.events.filter { if case .underflow = $0 { return true } else { return false } }.count
        html += "\(underflows) underflow\(underflows == 1 ? "" : "s")\(mode == .cbr ? ", \(result.events.count - underflows) overflows" : "").</p>\n"
        html += chart.vbvChart()
        return html
    }

    /// The worst-PSNR frame's pictures, or the reason there are none (no PSNR, stream or source missing).
    static func worstFrameSection(frames: [ReportData.Frame], row: LabStore.RunRow, settings: StoredRunSettings?,
                                  stream: String?, source: String?, dir: String, sources: SourcePictures) throws -> String {
        guard let worst = worstFrame(frames) else {
            return "<p class=\"note\">No frame has a PSNR (a lossless run, or no independent decode stored).</p>\n"
        }
        var html = "<p>Frame display_index \(worst.displayIndex) (coded_index \(worst.codedIndex), \(worst.type)): "
        html += "PSNR \(HTML.number(worst.psnrAvg, digits: 3)) dB (three planes), Y \(HTML.number(worst.psnrY, digits: 3)) dB.</p>\n"
        guard let stream else {
            return html + "<p class=\"missing\">The stream file \(HTML.escape(row.streamPath ?? "(none stored)")) is missing on this machine or not a regular file (a database merged from another?): no decoded picture.</p>\n"
        }
        guard let source else {
            return html + "<p class=\"missing\">The source file \(HTML.escape(row.clip)) is missing on this machine or not a regular file (a database merged from another?): no source picture.</p>\n"
        }
        guard let width = row.width, let height = row.height, width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            return html + "<p class=\"missing\">No picture size stored.</p>\n"
        }
        let seek = seekOf(row.settingsJSON)
        // The stream's pictures are the coded frames only: where the encoder dropped pictures (skipped_frames) the
        // frame's picture in the stream is its place among the coded frames in display order, not its display index.
        let position = frames.filter { $0.displayIndex < worst.displayIndex }.count
        let decoded: [UInt8], original: [UInt8]
        do {
            original = try sources.picture(path: source, number: seek + worst.displayIndex, width: width, height: height)
            decoded = try decodedPicture(stream: stream, index: position, width: width, height: height)
        } catch let error as LabError where error.kind != .interrupted {
            return html + "<p class=\"refused\">Pictures not made: \(HTML.escape(error.message))</p>\n"
        }
        try pngs([original, decoded], width: width, height: height, to: ["\(dir)/worst-source.png", "\(dir)/worst-decoded.png"])
        let errors = IndependentDecode.squaredErrors(decoded, original, width: width, height: height)
        if let stored = worst.sse {
            html += errors == stored
                ? "<p class=\"note\">Checked: the two pictures' squared error (Y \(errors.sseY), U \(errors.sseU), V \(errors.sseV)) is the stored one.</p>\n"
                : "<p class=\"missing\">The two pictures' squared error (Y \(errors.sseY), U \(errors.sseU), V \(errors.sseV)) differs from the stored one (Y \(stored.sseY), U \(stored.sseU), V \(stored.sseV)): the source or stream may have changed since the run.</p>\n"
        }
        let scale = width < 640 ? 2 : 1
        html += "<div class=\"pictures\">"
        html += "<figure><img src=\"worst-source.png\" width=\"\(width * scale)\" height=\"\(height * scale)\" alt=\"source picture\"><figcaption>source, picture \(seek + worst.displayIndex) of the clip\(seek > 0 ? " (--seek \(seek))" : "")</figcaption></figure>"
        html += "<figure><img src=\"worst-decoded.png\" width=\"\(width * scale)\" height=\"\(height * scale)\" alt=\"decoded picture\"><figcaption>decoded, picture \(position) of the stream in display order</figcaption></figure>"
        html += "</div>\n"
        return html
    }

    /// Asks `sources` for the source picture `run`'s page will show (its worst-PSNR frame's, ``worstFrame(_:)`` as
    /// SQL), so that every page's picture of a clip comes from one read of it. Nothing for a run whose source
    /// is missing here or that has no PSNR.
    static func wantSource(of run: ReportData.Run, store: LabStore, databasePath: String, sources: SourcePictures) throws {
        guard run.row.status == "done", let source = locate(run.row.clip, databasePath: databasePath) else { return }
        guard let index = try store.reportWorstPSNRFrame(run: run.row.runID) else { return }
        sources.want(path: source, number: seekOf(run.row.settingsJSON) + index)
    }

    /// The frame with the lowest `psnr_avg` (the lowest display index among equals); nil when none has one.
    static func worstFrame(_ frames: [ReportData.Frame]) -> ReportData.Frame? {
        frames.filter { $0.psnrAvg != nil }.min { ($0.psnrAvg!, $0.displayIndex) < ($1.psnrAvg!, $1.displayIndex) }
    }

    /// The run's `--seek` from its stored settings (`seek`, null or absent as 0).
    static func seekOf(_ settingsJSON: String) -> Int {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(settingsJSON.utf8))) as? [String: Any],
              let n = object["seek"] as? NSNumber, String(cString: n.objCType) != "c" else { return 0 }
        return max(0, n.intValue)
    }

    /// The source pictures the run pages show, each clip read once (as the lab reads clips, ``Clip``) for all the
    /// pictures asked of it: many runs of a sweep share a clip, and reading it is one ffmpeg process for a clip that
    /// is not y4m.
    final class SourcePictures: @unchecked Sendable {
        /// Guards every member: pages on several threads ask at once (a clip's read happens under it).
        private let lock = NSLock()
        /// Picture numbers wanted, by clip path (as located on this machine).
        private var wanted: [String: Set<Int>] = [:]
        /// What was read: 4:2:0 bytes and size by clip path and picture number, or the clip's error.
        private var read: [String: Result<[Int: (bytes: [UInt8], width: Int, height: Int)], LabError>] = [:]
        /// The picture numbers each clip's last read looked for.
        private var asked: [String: Set<Int>] = [:]

        /// Asks for picture `number` (from 0) of the clip at `path`; read by the next ``picture(path:number:width:height:)``
        /// of that clip, together with every other picture asked of it by then.
        func want(path: String, number: Int) { lock.lock(); defer { lock.unlock() }; wantUnlocked(path: path, number: number) }

        private func wantUnlocked(path: String, number: Int) { wanted[path, default: []].insert(number) }

        /// Picture `number` (from 0) of the clip at `path`, 4:2:0 bytes.
        /// - Throws: `.data` when the clip has fewer pictures or another size; the clip's errors; `.interrupted`.
        func picture(path: String, number: Int, width: Int, height: Int) throws -> [UInt8] {
            lock.lock()
            defer { lock.unlock() }
            if !(asked[path]?.contains(number) ?? false) { wantUnlocked(path: path, number: number) }
            if let numbers = wanted.removeValue(forKey: path) {
                // Read again with every number asked before too: the result replaces the earlier one.
                let all = numbers.union(asked[path] ?? [])
                read[path] = try Self.read(path: path, numbers: all)
                asked[path] = all
            }
            let pictures = try read[path]!.get()
            guard let picture = pictures[number] else { throw LabError.data("\(path): has fewer than \(number + 1) pictures") }
            guard picture.width == width, picture.height == height else {
                throw LabError.data("\(path): pictures are \(picture.width)x\(picture.height), the run's \(width)x\(height)")
            }
            return picture.bytes
        }

        /// The pictures `numbers` of the clip at `path` (those it has), or the clip's error; one pass from the start.
        /// - Throws: only `.interrupted`.
        private static func read(path: String, numbers: Set<Int>) throws -> Result<[Int: (bytes: [UInt8], width: Int, height: Int)], LabError> {
            guard let last = numbers.max() else { return .success([:]) }
            var found: [Int: (bytes: [UInt8], width: Int, height: Int)] = [:]
            do {
                let clip = try Clip(path: path)
                for n in 0...last {
                    try Interruption.check()
                    guard let picture = try clip.next() else { break }
                    if numbers.contains(n) { found[n] = (picture.bytes, picture.width, picture.height) }
                }
            } catch let error as LabError {
                if error.kind == .interrupted { throw error }
                return .failure(error)
            }
            return .success(found)
        }
    }

    /// Picture `index` (display order, from 0) of ffmpeg's decode of the Annex B stream at `stream`, 4:2:0 bytes
    /// (ffmpeg's output order with `-fps_mode passthrough`, as ``IndependentDecode`` reads it).
    /// - Throws: `.software` when ffmpeg is missing or stops early; `.data` when the stream has fewer pictures.
    static func decodedPicture(stream: String, index: Int, width: Int, height: Int) throws -> [UInt8] {
        let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
        let decoder = try SpawnedProcess(ffmpeg, ["-nostdin", "-hide_banner", "-v", "level+error"] + FFmpegInput.inputRestrictions + [
            "-f", "h264", "-i", FFmpegInput.url(stream), "-fps_mode", "passthrough", "-frames:v", "\(index + 1)",
            "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"])
        let bytes = width * height * 3 / 2
        var picture: [UInt8] = []
        for k in 0...index {
            try Interruption.check()
            picture = []
            picture.reserveCapacity(bytes)
            while picture.count < bytes {
                let chunk = decoder.stdout.readData(ofLength: bytes - picture.count)
                if chunk.isEmpty { break }
                picture.append(contentsOf: chunk)
            }
            guard picture.count == bytes else {
                let (_, errors) = decoder.finish(terminate: true)
                throw LabError.data("\(stream): ffmpeg decoded \(k) pictures, fewer than \(index + 1)\(FFmpegInput.problem(errors, path: stream).map { " (\($0))" } ?? "")")
            }
        }
        // ffmpeg stops after index + 1 pictures (-frames:v); closing the pipe first ends any write it still makes.
        try? decoder.stdout.close()
        _ = decoder.finish(terminate: true)
        return picture
    }

    /// Writes 4:2:0 pictures of one size as PNGs made by one ffmpeg process (the raw pictures from a temporary file
    /// beside the first, removed after; the PNGs back to back on ffmpeg's stdout, split at each IEND chunk).
    /// - Throws: `.cantCreate`/`.ioError` for the files; `.software` when ffmpeg fails.
    static func pngs(_ pictures: [[UInt8]], width: Int, height: Int, to paths: [String]) throws {
        precondition(pictures.count == paths.count && !paths.isEmpty, "one path a picture")
        let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
        let raw = paths[0] + ".yuv"
        try OutputFiles.write(pictures.flatMap { $0 }, to: raw)
        defer { unlink(raw) }
        let result = try Tools.run(ffmpeg, ["-nostdin", "-hide_banner", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                                            "-s", "\(width)x\(height)", "-i", FFmpegInput.url(raw), "-frames:v", "\(pictures.count)",
                                            "-f", "image2pipe", "-c:v", "png", "-"])
        // PNG bytes on stdout: an output file name would be read as a pattern (`%d`) by ffmpeg's image2 muxer.
        let files = result.status == 0 ? splitPNGs([UInt8](result.stdout)) : nil
        guard let files, files.count == paths.count else {
            throw LabError.software("ffmpeg could not make \(paths.joined(separator: ", ")): \(String(decoding: result.stderr, as: UTF8.self).split(separator: "\n").last ?? "")")
        }
        for (file, path) in zip(files, paths) { try OutputFiles.write(file, to: path) }
    }

    /// PNG files written back to back, split: each the 8-byte signature, then chunks (4-byte big-endian length, type,
    /// data, CRC) up to and including IEND (PNG specification, 5.2 and 5.3). Nil for bytes that are not such files.
    static func splitPNGs(_ bytes: [UInt8]) -> [[UInt8]]? {
        var files: [[UInt8]] = [], start = 0
        while start < bytes.count {
            guard bytes.count - start >= 8, bytes[start..<(start + 8)].elementsEqual(Plots.pngSignature) else { return nil }
            var at = start + 8, ended = false
            while !ended {
                guard bytes.count - at >= 12 else { return nil }
                let length = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
                ended = bytes[(at + 4)..<(at + 8)].elementsEqual("IEND".utf8)
                guard length <= bytes.count - at - 12 else { return nil }
                at += 12 + length
            }
            files.append(Array(bytes[start..<at]))
            start = at
        }
        return files
    }
}
