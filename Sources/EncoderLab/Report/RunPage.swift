import Foundation
import H264

/// One run's page of the report (`run-ID/index.html`) and its plots and pictures beside it.
///
/// Plots (each `NAME.png`, `NAME.svg`, `NAME.gp` and `NAME.dat`, drawn by gnuplot; no user text reaches a script):
/// - `sizes`: frame size in kbit per frame in decode order, one colour per type (IDR, I, P, Bref, B);
/// - `bitrate`: the bitrate over 1-second windows of decode time (``WindowedBitrate``: the window ending at each
///   frame's DTS, drawn once the stream has lasted a second), with the target (ABR) or the mean rate;
/// - `keyframes`: the keyframe timeline, each IDR and I frame at its PTS in seconds;
/// - `vbv`: the VBV buffer's fullness before and after each frame's removal (``VBVReplay``, from the run's
///   `resolved.vbv_maxrate_kbps`, `vbv_bufsize_kbit`, `vbv_init` and `nal_hrd`), only for a run with a VBV;
/// - `timestamps`: the PTS step between frames in display order and the DTS step in decode order, in ms.
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
    /// ran in, which is usually one of these). Nil when no such file exists.
    static func locate(_ stored: String?, databasePath: String) -> String? {
        guard let stored, !stored.isEmpty else { return nil }
        if stored.hasPrefix("/") { return FileManager.default.fileExists(atPath: stored) ? stored : nil }
        let dbFolder = Paths.parent(Paths.absolute(databasePath))
        for candidate in [stored, "\(dbFolder)/\(stored)", "\(Paths.parent(dbFolder))/\(stored)"] {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDir), !isDir.boolValue { return candidate }
        }
        return nil
    }

    /// Writes the page of `run` in `dir` (created), with links back to `../index.html`.
    /// - Throws: `.cantCreate`, `.ioError` when a file cannot be written; `.software` when gnuplot or ffmpeg fails;
    ///   `.data` for a damaged stored row.
    static func write(_ run: ReportData.Run, columns: [String], hasMetricsTable: Bool, store: LabStore, databasePath: String,
                      dir: String) throws -> Outcome {
        try OutputFiles.makeDirectory(dir)
        let row = run.row
        let frames = try ReportData.frames(run: row.runID, store: store)
        let settings = try? StoredRunSettings(json: row.settingsJSON, runID: row.runID)
        let stream = locate(row.streamPath, databasePath: databasePath)
        let source = locate(row.clip, databasePath: databasePath)
        let e = HTML.escape
        var body = "<p><a href=\"../index.html\">← experiment</a> · <a href=\"../../index.html\">all experiments</a></p>\n"
        body += "<h1>Run \(row.runID): \(e(run.clipName)) \(e(run.label))</h1>\n"
        var facts: [[String]] = [
            ["experiment", e(row.experiment)], ["clip", e(row.clip) + (source == nil ? " <span class=\"missing\">(source file missing on this machine)</span>" : "")],
            ["configuration", e(run.configuration)], ["label", e(run.label)], ["x264 flags", e(settings?.x264Arguments ?? "")],
            ["status", e(row.status) + (row.error.map { ": " + e($0) } ?? "")],
            ["stream", e(row.streamPath ?? "none stored") + (stream == nil ? " <span class=\"missing\">(stream file missing on this machine)</span>" : "")],
            ["frames", row.frames.map(String.init) ?? ""], ["bytes", row.bytes.map(String.init) ?? ""],
            ["size", row.width.map { "\($0)x\(row.height ?? 0)" } ?? ""],
            ["frame rate", row.fpsNum.map { "\($0)/\(row.fpsDen ?? 1)" } ?? ""],
            ["timebase", row.timebaseNum.map { "\($0)/\(row.timebaseDen ?? 1) s" } ?? ""],
        ]
        if let key = row.runKey { facts.append(["run key", e(key)]) }
        body += HTML.table(headers: ["", ""], rows: facts, textColumns: [0, 1])
        body += "<h2>Metrics</h2>\n"
        body += HTML.table(headers: columns, rows: [columns.map { HTML.number(run.metrics[$0] ?? nil, digits: 3) }])
        if !hasMetricsTable { body += "<p class=\"note\">Computed from the frames; <code>enclab analyze</code> adds the full metrics (table run_metrics).</p>\n" }

        guard !frames.isEmpty, let tn = row.timebaseNum, let td = row.timebaseDen, tn > 0, td > 0,
              let timebase = try? Rational(Int64(tn), Int64(td)), let frameTicks = ReportData.frameTicks(row) else {
            body += "<p class=\"missing\">No frames, timebase or frame rate stored: nothing to plot.</p>\n"
            try OutputFiles.write(HTML.page(title: "run \(row.runID)", body: body), to: "\(dir)/index.html")
            return Outcome(streamMissing: stream == nil, sourceMissing: source == nil)
        }
        try RunPlotInput.checkFrames(frames.map {
            LabStore.FrameRow(codedIndex: $0.codedIndex, displayIndex: $0.displayIndex, type: $0.type, sizeBytes: $0.sizeBytes,
                              pts: $0.pts, dts: $0.dts, qp: nil, psnrY: nil, psnrAvg: nil, ssim: nil)
        }, runID: row.runID)
        let tb = timebase.approximateValue
        func seconds(_ ticks: Int64) -> Double { Double(ticks) * tb }

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
            """, arguments: [], size: (1100, 350))
        body += HTML.plot(dir: dir, name: "sizes", data: ["sizes.dat"], alt: "frame sizes by type")
        var typeRows: [[String]] = []
        for t in types {
            let s = frames.filter { $0.type == t }.map(\.sizeBytes)
            guard !s.isEmpty else { continue }
            typeRows.append([t, "\(s.count)", HTML.number(Double(s.reduce(0, +)) / Double(s.count) * 8 / 1000), HTML.number(Double(s.max()!) * 8 / 1000)])
        }
        body += HTML.table(headers: ["type", "frames", "mean kbit", "max kbit"], rows: typeRows, textColumns: [0])

        // Windowed bitrate (1 s of decode time), arrival at the largest DTS so far (as the run's own plot).
        var arrival: [Int64] = []
        for f in frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
        let windows = WindowedBitrate.compute(sizes: frames.map(\.sizeBytes), dts: arrival, timebase: timebase, frameTicks: frameTicks)
        let target = settings?.rcMethod == "abr" ? settings?.resolvedNumber("bitrate_kbps") : nil
        let mean = run.kbps
        var rate = "# coded_index dts_s window_kbps (NaN until the stream has lasted 1 s)\n"
        for (f, w) in zip(frames, windows) { rate += "\(f.codedIndex) \(seconds(f.dts)) \(w.full ? String(w.kbps) : "NaN")\n" }
        try Plots.write(rate, to: "\(dir)/bitrate.dat")
        var rateSeries = ["'bitrate.dat' using 2:3 with lines lw 2 lc rgb 'black' title 'bitrate, 1 s DTS window'"]
        if let line = target ?? mean {
            rateSeries.append("\(line) with lines dt 2 lw 2 lc rgb '#7f7f7f' title '\(target == nil ? "mean rate" : "target rate") \(String(format: "%.0f", line)) kbit/s'")
        }
        body += "<h2>Bitrate over 1-second windows of decode time</h2>\n"
        try Plots.both(dir: dir, name: "bitrate", body: """
            set xlabel 'DTS (s)'
            set ylabel 'bitrate (kbit/s)'
            set yrange [0:*]
            set key below horizontal
            set grid
            plot \(rateSeries.joined(separator: ", \\\n     "))
            """, arguments: [], size: (1100, 350))
        body += HTML.plot(dir: dir, name: "bitrate", data: ["bitrate.dat"], alt: "windowed bitrate")

        // Keyframe timeline.
        body += "<h2>Keyframe timeline</h2>\n"
        var keys = "# display_index pts_s type_index keyframe\n"
        for f in frames.sorted(by: { $0.displayIndex < $1.displayIndex }) {
            keys += "\(f.displayIndex) \(seconds(f.pts)) \(types.firstIndex(of: f.type) ?? 0) \(f.keyframe ? 1 : 0)\n"
        }
        try Plots.write(keys, to: "\(dir)/keyframes.dat")
        try Plots.both(dir: dir, name: "keyframes", body: """
            set xlabel 'PTS (s)'
            set yrange [0:1.2]
            unset ytics
            set key below horizontal
            set grid x
            plot 'keyframes.dat' using 2:($3==0 ? 1 : 1/0) with impulses lw 3 lc rgb '\(colours[0])' title 'IDR', \\
                 'keyframes.dat' using 2:($3==1 ? 0.7 : 1/0) with impulses lw 3 lc rgb '\(colours[1])' title 'I (not IDR)', \\
                 'keyframes.dat' using 2:($4==1 && $3>1 ? 0.5 : 1/0) with impulses lw 3 lc rgb '#000000' title 'other keyframe', \\
                 'keyframes.dat' using 2:(0.05) with points pt 7 ps 0.3 lc rgb '#999999' title 'frame'
            """, arguments: [], size: (1100, 220))
        body += HTML.plot(dir: dir, name: "keyframes", data: ["keyframes.dat"], alt: "keyframe timeline")
        let keyframeIndexes = frames.filter { $0.type == "IDR" || $0.type == "I" }.map(\.displayIndex).sorted()
        let gops = zip(keyframeIndexes.dropFirst(), keyframeIndexes).map { $0 - $1 } + (keyframeIndexes.last.map { [frames.count - $0] } ?? [])
        body += "<p>\(keyframeIndexes.count) I/IDR frames; GOP lengths in frames: \(e(gops.map(String.init).joined(separator: ", ")))</p>\n"

        // VBV occupancy.
        body += "<h2>VBV occupancy</h2>\n"
        body += try vbvSection(frames: frames, arrival: arrival, timebase: timebase, row: row, settings: settings, dir: dir)

        // PTS and DTS steps.
        body += "<h2>PTS and DTS steps</h2>\n"
        let display = frames.sorted { $0.displayIndex < $1.displayIndex }
        var steps = "# index pts_step_ms (display order) dts_step_ms (decode order)\n"
        for i in 1..<max(1, frames.count) {
            steps += "\(i) \((seconds(display[i].pts) - seconds(display[i - 1].pts)) * 1000) \((seconds(frames[i].dts) - seconds(frames[i - 1].dts)) * 1000)\n"
        }
        try Plots.write(steps, to: "\(dir)/timestamps.dat")
        try Plots.both(dir: dir, name: "timestamps", body: """
            set xlabel 'frame'
            set ylabel 'step (ms)'
            set key below horizontal
            set grid
            plot 'timestamps.dat' using 1:2 with linespoints pt 7 ps 0.4 lc rgb '#1f77b4' title 'PTS step, display order', \\
                 'timestamps.dat' using 1:3 with linespoints pt 6 ps 0.6 lc rgb '#d62728' title 'DTS step, decode order'
            """, arguments: [], size: (1100, 300))
        body += HTML.plot(dir: dir, name: "timestamps", data: ["timestamps.dat"], alt: "PTS and DTS steps")

        // The worst-PSNR frame.
        body += "<h2>Worst-PSNR frame</h2>\n"
        body += try worstFrameSection(frames: frames, row: row, settings: settings, stream: stream, source: source, dir: dir)

        try OutputFiles.write(HTML.page(title: "run \(row.runID): \(run.clipName) \(run.label)", body: body), to: "\(dir)/index.html")
        return Outcome(streamMissing: stream == nil, sourceMissing: source == nil)
    }

    /// The VBV plot and its events, or a sentence saying why there is none.
    static func vbvSection(frames: [ReportData.Frame], arrival: [Int64], timebase: Rational, row: LabStore.RunRow,
                           settings: StoredRunSettings?, dir: String) throws -> String {
        guard let settings, let maxrate = settings.resolvedNumber("vbv_maxrate_kbps"), let bufsize = settings.resolvedNumber("vbv_bufsize_kbit"),
              maxrate > 0, bufsize > 0 else {
            return "<p class=\"note\">No VBV: the run's resolved vbv_maxrate_kbps/vbv_bufsize_kbit are 0 or absent.</p>\n"
        }
        // x264 holds vbv-init as a float: six significant digits give back the value as written (0.9, not 0.89999998).
        let initText = settings.resolvedNumber("vbv_init").map { String(format: "%.6g", $0) } ?? "0.9"
        let vbvInit = VBVReplay.parseInit(initText) ?? VBVReplay.Parameters.defaultInit
        let mode: VBVReplay.Mode = (settings.resolved?["nal_hrd"] as? String) == "cbr" ? .cbr : .vbr
        let fps = row.fpsNum.flatMap { n in row.fpsDen.flatMap { try? Rational(Int64(n), Int64($0)) } }
        let parameters = VBVReplay.Parameters(maxrateKbps: Int64(maxrate), bufsizeKbit: Int64(bufsize), vbvInit: vbvInit, mode: mode, frameRate: fps)
        let result: VBVReplay.Result
        do {
            result = try VBVReplay.replay(bits: frames.map { Int64($0.sizeBytes) * 8 }, dts: arrival, timebase: timebase, parameters: parameters)
        } catch let error as LabError {
            return "<p class=\"refused\">VBV replay not possible: \(HTML.escape(error.message))</p>\n"
        }
        let tb = timebase.approximateValue
        var data = "# coded_index dts_s fullness_before_kbit fullness_after_kbit\n"
        for f in result.frames {
            data += "\(f.codedIndex) \(Double(f.dts) * tb) \(f.fullnessBeforeBits.approximateValue / 1000) \(f.fullnessAfter / 1000)\n"
        }
        try Plots.write(data, to: "\(dir)/vbv.dat")
        let size = Double(result.resolved.bufferSizeBits) / 1000
        try Plots.both(dir: dir, name: "vbv", body: """
            set xlabel 'DTS (s)'
            set ylabel 'buffer fullness (kbit)'
            set yrange [0:\(size * 1.1)]
            set key below horizontal
            set grid
            plot 'vbv.dat' using 2:3 with steps lw 1.5 lc rgb '#1f77b4' title 'before removal', \\
                 'vbv.dat' using 2:4 with points pt 7 ps 0.4 lc rgb '#d62728' title 'after removal', \\
                 \(size) with lines dt 2 lw 2 lc rgb '#7f7f7f' title 'buffer size \(String(format: "%.0f", size)) kbit'
            """, arguments: [], size: (1100, 350))
        var html = "<p>vbv-maxrate \(Int64(maxrate)) kbit/s, vbv-bufsize \(Int64(bufsize)) kbit, vbv-init \(HTML.escape(initText)), "
        html += "mode \(mode.rawValue) (nal-hrd \(HTML.escape(settings.resolved?["nal_hrd"] as? String ?? "none"))); "
        let underflows = result.events.filter { if case .underflow = $0 { return true } else { return false } }.count
        html += "\(underflows) underflow\(underflows == 1 ? "" : "s")\(mode == .cbr ? ", \(result.events.count - underflows) overflows" : "").</p>\n"
        html += HTML.plot(dir: dir, name: "vbv", data: ["vbv.dat"], alt: "VBV occupancy")
        return html
    }

    /// The worst-PSNR frame's pictures, or the reason there are none (no PSNR, stream or source missing).
    static func worstFrameSection(frames: [ReportData.Frame], row: LabStore.RunRow, settings: StoredRunSettings?,
                                  stream: String?, source: String?, dir: String) throws -> String {
        guard let worst = worstFrame(frames) else {
            return "<p class=\"note\">No frame has a PSNR (a lossless run, or no independent decode stored).</p>\n"
        }
        var html = "<p>Frame display_index \(worst.displayIndex) (coded_index \(worst.codedIndex), \(worst.type)): "
        html += "PSNR \(HTML.number(worst.psnrAvg, digits: 3)) dB (three planes), Y \(HTML.number(worst.psnrY, digits: 3)) dB.</p>\n"
        guard let stream else {
            return html + "<p class=\"missing\">The stream file \(HTML.escape(row.streamPath ?? "(none stored)")) is missing on this machine (a database merged from another?): no decoded picture.</p>\n"
        }
        guard let source else {
            return html + "<p class=\"missing\">The source file \(HTML.escape(row.clip)) is missing on this machine (a database merged from another?): no source picture.</p>\n"
        }
        guard let width = row.width, let height = row.height, width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            return html + "<p class=\"missing\">No picture size stored.</p>\n"
        }
        let seek = seekOf(row.settingsJSON)
        let decoded: [UInt8], original: [UInt8]
        do {
            original = try sourcePicture(path: source, number: seek + worst.displayIndex, width: width, height: height)
            decoded = try decodedPicture(stream: stream, index: worst.displayIndex, width: width, height: height)
        } catch let error as LabError where error.kind != .interrupted {
            return html + "<p class=\"refused\">Pictures not made: \(HTML.escape(error.message))</p>\n"
        }
        try png(original, width: width, height: height, to: "\(dir)/worst-source.png")
        try png(decoded, width: width, height: height, to: "\(dir)/worst-decoded.png")
        let errors = IndependentDecode.squaredErrors(decoded, original, width: width, height: height)
        if let stored = worst.sse {
            html += errors == stored
                ? "<p class=\"note\">Checked: the two pictures' squared error (Y \(errors.sseY), U \(errors.sseU), V \(errors.sseV)) is the stored one.</p>\n"
                : "<p class=\"missing\">The two pictures' squared error (Y \(errors.sseY), U \(errors.sseU), V \(errors.sseV)) differs from the stored one (Y \(stored.sseY), U \(stored.sseU), V \(stored.sseV)): the source or stream may have changed since the run.</p>\n"
        }
        let scale = width < 640 ? 2 : 1
        html += "<div class=\"pictures\">"
        html += "<figure><img src=\"worst-source.png\" width=\"\(width * scale)\" height=\"\(height * scale)\" alt=\"source picture\"><figcaption>source, picture \(seek + worst.displayIndex) of the clip\(seek > 0 ? " (--seek \(seek))" : "")</figcaption></figure>"
        html += "<figure><img src=\"worst-decoded.png\" width=\"\(width * scale)\" height=\"\(height * scale)\" alt=\"decoded picture\"><figcaption>decoded, picture \(worst.displayIndex) in display order</figcaption></figure>"
        html += "</div>\n"
        return html
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

    /// Picture `number` (from 0) of the clip at `path`, as the lab reads clips, 4:2:0 bytes.
    /// - Throws: `.data` when the clip has fewer pictures or another size; the clip's errors.
    static func sourcePicture(path: String, number: Int, width: Int, height: Int) throws -> [UInt8] {
        let clip = try Clip(path: path)
        for _ in 0..<number {
            try Interruption.check()
            guard try clip.next() != nil else { throw LabError.data("\(path): has fewer than \(number + 1) pictures") }
        }
        guard let picture = try clip.next() else { throw LabError.data("\(path): has fewer than \(number + 1) pictures") }
        guard picture.width == width, picture.height == height else {
            throw LabError.data("\(path): pictures are \(picture.width)x\(picture.height), the run's \(width)x\(height)")
        }
        return picture.bytes
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

    /// Writes a 4:2:0 picture as a PNG made by ffmpeg (raw bytes from a temporary file beside it, removed after).
    /// - Throws: `.cantCreate`/`.ioError` for the files; `.software` when ffmpeg fails.
    static func png(_ picture: [UInt8], width: Int, height: Int, to path: String) throws {
        let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
        let raw = path + ".yuv"
        try OutputFiles.write(picture, to: raw)
        defer { unlink(raw) }
        let result = try Tools.run(ffmpeg, ["-nostdin", "-hide_banner", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                                            "-s", "\(width)x\(height)", "-i", FFmpegInput.url(raw), "-frames:v", "1", "-f", "image2pipe",
                                            "-c:v", "png", "-"])
        // PNG bytes on stdout: an output file name would be read as a pattern (`%d`) by ffmpeg's image2 muxer.
        guard result.status == 0, result.stdout.starts(with: Plots.pngSignature) else {
            throw LabError.software("ffmpeg could not make \(path): \(String(decoding: result.stderr, as: UTF8.self).split(separator: "\n").last ?? "")")
        }
        try OutputFiles.write([UInt8](result.stdout), to: path)
    }
}
