import Foundation
import H264

/// Plots drawn by gnuplot from what the store holds: each plot is a data file, a script, and a PNG and an
/// SVG beside them, all with fixed names in the plot's folder (`frames.dat`, `frames.gp`, `frames.png`,
/// `frames.svg`, `psnr.*`, `rd.*`).
///
/// Nothing a user wrote is ever gnuplot syntax: gnuplot runs in the plot's folder, so its scripts name only those
/// fixed files, and the texts drawn from user strings (the title with the clip's file name and the settings, the
/// rate-distortion key titles with clip names and grid labels) are handed over as arguments
/// (`gnuplot -c NAME.gp ARG1 ARG2 ...`), which the scripts use as string values (`set title ARG1`), never as
/// script text.
public enum Plots {
    /// Most Unicode scalars a title or key title shows (gnuplot's arguments are at most 128 KiB each on Linux, and a
    /// line this long is already wider than the plot).
    static let textLimit = 500

    /// Writes `script` to `dir/name.gp` and runs `gnuplot -c name.gp arguments...` with `dir` as the working
    /// directory, so the script sees `arguments` as ARG1...ARG9 (see ``run(gnuplot:name:dir:arguments:)``).
    /// - Parameter arguments: at most 9 (gnuplot 5.4 drops any after ARG9).
    /// - Throws: `.cantCreate` when the script cannot be created, `.ioError` when writing it fails (a full disk);
    ///   `.software` when gnuplot is missing or fails, with its last line of stderr; as ``place(name:dir:staging:)``.
    ///
    /// With a `queue`, the script is written and its drawing left to the queue (``PlotQueue/draw(in:)``).
    static func render(script: String, name: String, dir: String, arguments: [String], queue: PlotQueue? = nil) throws {
        precondition(arguments.count <= 9, "gnuplot -c passes at most 9 arguments")
        let path = "\(dir)/\(name).gp"
        // Not synced, as the data (``write(_:to:)``): the store writes a lost script again.
        try OutputFiles.replace(script, at: path, synced: false)
        if let queue {
            // Drawn later by the queue (which looks gnuplot up then), or never (a run's scripts and data only).
            queue.add(PlotQueue.Plot(folder: dir, name: name, arguments: arguments))
            return
        }
        try run(gnuplot: try Tools.require("gnuplot", package: "gnuplot-nox"), name: name, dir: dir, arguments: arguments)
    }

    /// The gnuplot variable that names the folder (relative, ending in `/`) a plot script draws its pictures into:
    /// the scripts say `set output (exists('enclab_staging') ? enclab_staging : '').'NAME.png'`, so run by hand they
    /// draw beside themselves, and run by the lab they draw into a new private folder (``makeStaging(in:)``).
    static let stagingVariable = "enclab_staging"

    /// Makes a new folder in `dir` for gnuplot to draw one plot's pictures into: `.enclab-plot-PID-RANDOM`, created
    /// exclusively (mkdir(2), mode 0700), so gnuplot, which opens its output by name and follows links, never writes
    /// through a file or link that was already there, and two processes drawing the same plot (`plot` beside a
    /// sweep) never write or check each other's files. ``place(name:dir:staging:)`` moves the pictures into `dir`.
    /// - Returns: the folder's name (relative to `dir`).
    /// - Throws: `.cantCreate` naming the folder; `.ioError` when the disk is full.
    static func makeStaging(in dir: String) throws -> String {
        let name = ".enclab-plot-\(getpid())-\(UUID().uuidString.prefix(8))"
        let path = "\(dir)/\(name)"
        if mkdir(path, 0o700) != 0 {
            let code = errno
            throw OutputFiles.creationError("\(path): cannot create folder: \(OutputFiles.reason(code))", code)
        }
        return name
    }

    /// Checks the pictures gnuplot drew into `dir/staging` (``checkComplete(_:shownAs:)``) and moves each complete one
    /// over `dir/name.png` and `dir/name.svg` (``OutputFiles/moveFile(_:over:)``: a link there is replaced, never
    /// followed); then removes the staging folder, whatever is left in it.
    /// - Returns: the first failure (an incomplete or missing picture, naming its final path; a move refused), or nil.
    static func place(name: String, dir: String, staging: String) -> Error? {
        defer { OutputFiles.removeTree("\(dir)/\(staging)") }
        var first: Error?
        for ext in ["png", "svg"] {
            let drawn = "\(dir)/\(staging)/\(name).\(ext)", final = "\(dir)/\(name).\(ext)"
            do {
                try checkComplete(drawn, shownAs: final)
                try OutputFiles.moveFile(drawn, over: final)
            } catch {
                if first == nil { first = error }
            }
        }
        return first
    }

    /// Runs `gnuplot -e "enclab_staging='STAGING/'" -c name.gp arguments...` in `dir` (the script already written),
    /// drawing into a new folder (``makeStaging(in:)``), then places the pictures (``place(name:dir:staging:)``).
    /// - Throws: `.software` when gnuplot fails, with its last line of stderr; else ``place(name:dir:staging:)``'s
    ///   failure (`.ioError` for an incomplete picture).
    static func run(gnuplot: String, name: String, dir: String, arguments: [String]) throws {
        let path = "\(dir)/\(name).gp"
        let staging = try makeStaging(in: dir)
        let result: Tools.Result
        do {
            result = try Tools.run(gnuplot, ["-e", "\(stagingVariable)='\(staging)/'", "-c", "\(name).gp"] + arguments,
                                   workingDirectory: dir)
        } catch {
            OutputFiles.removeTree("\(dir)/\(staging)")
            throw error
        }
        let placed = place(name: name, dir: dir, staging: staging)
        if result.status != 0 {
            let message = String(decoding: result.stderr, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            throw LabError.software("gnuplot failed on \(path): \(message)")
        }
        if let placed { throw placed }
    }

    /// The 8 bytes every PNG file starts with (PNG specification, 5.2).
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The IEND chunk every PNG file ends with: length 0, type `IEND`, CRC AE 42 60 82 (PNG specification, 11.2.5).
    static let pngEnd: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    /// Checks that gnuplot wrote the whole of a plot file: a `.png` starts with ``pngSignature`` and ends with
    /// ``pngEnd``; an `.svg` ends with `</svg>` then white space ending in a newline. gnuplot exits 0 when its
    /// output could not be written in full (a full disk), leaving a truncated or empty file.
    /// - Throws: `.ioError` naming the file ("incomplete: the disk may be full"; the file is removed), or when it
    ///   is missing.
    /// - Parameter shownAs: the path errors name (the picture's final path when it was drawn elsewhere); `path`.
    static func checkComplete(_ path: String, shownAs: String? = nil) throws {
        let shown = shownAs ?? path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LabError.ioError("\(shown): gnuplot did not write it: the disk may be full")
        }
        let bytes = [UInt8](data)
        if !isComplete(bytes, png: path.hasSuffix(".png")) {
            unlink(path)
            throw LabError.ioError("\(shown): incomplete (\(bytes.count) bytes): the disk may be full")
        }
    }

    /// Whether `bytes` are a whole PNG (`png`) or SVG file, as ``checkComplete(_:shownAs:)`` judges them.
    static func isComplete(_ bytes: [UInt8], png: Bool) -> Bool {
        if png {
            return bytes.count >= pngSignature.count + pngEnd.count && bytes.prefix(8).elementsEqual(pngSignature)
                && bytes.suffix(12).elementsEqual(pngEnd)
        }
        let end = bytes.lastIndex { ![0x0A, 0x0D, 0x20, 0x09].contains($0) }.map { $0 + 1 } ?? 0
        return bytes.last == 0x0A && bytes[..<end].suffix(6).elementsEqual(Array("</svg>".utf8))
    }

    /// Whether the run folder `dir` holds its four pictures (`frames.png/svg`, `psnr.png/svg`) whole, as regular files
    /// (read only: nothing is removed). A run recorded done whose pictures are not (the process was interrupted, or the
    /// disk filled, while they were drawn) has them drawn again by the next encode of its key.
    /// Whether the run folder `dir` holds its charts' data and scripts (`frames.dat`, `frames.gp`, `psnr.gp`) as
    /// regular files, and with `pictures` its four pictures whole too (``runPicturesComplete(_:)``).
    static func runPlotsComplete(_ dir: String, pictures: Bool) -> Bool {
        if pictures { return runPicturesComplete(dir) }
        return ["frames.dat", "frames.gp", "psnr.gp"].allSatisfy { name in
            var st = stat()
            return lstat("\(dir)/\(name)", &st) == 0 && st.st_mode & S_IFMT == S_IFREG && st.st_size > 0
        }
    }

    static func runPicturesComplete(_ dir: String) -> Bool {
        ["frames", "psnr"].allSatisfy { name in
            ["png", "svg"].allSatisfy { ext in
                var st = stat()
                let path = "\(dir)/\(name).\(ext)"
                guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG,
                      let data = FileManager.default.contents(atPath: path) else { return false }
                return isComplete([UInt8](data), png: ext == "png")
            }
        }
    }

    /// Writes `name.png` and `name.svg` in `dir` from one plot body (everything after `set terminal`/`set output`),
    /// then checks that gnuplot wrote both in full (``checkComplete(_:)``: `.ioError` when not).
    /// - Parameters:
    ///   - name: a fixed file name chosen by the lab (never user text).
    ///   - arguments: the script's ARG1...ARG9.
    /// With a `queue`, only the script is written now; the queue draws and checks the files later.
    static func both(dir: String, name: String, body: String, arguments: [String], size: (Int, Int) = (1000, 500),
                     queue: PlotQueue? = nil) throws {
        let folder = "(exists('\(stagingVariable)') ? \(stagingVariable) : '')"
        let script = """
        set terminal pngcairo noenhanced size \(size.0),\(size.1) font ",10"
        set output \(folder).'\(name).png'
        \(body)
        set terminal svg noenhanced size \(size.0),\(size.1) dynamic font ",10"
        set output \(folder).'\(name).svg'
        replot
        """
        // Without a queue, both pictures are drawn, checked and placed now (``run(gnuplot:name:dir:arguments:)``).
        try render(script: script, name: name, dir: dir, arguments: arguments, queue: queue)
    }

    /// User text as a plot shows it, on one line (``Shown/text(_:limit:)``).
    static func shown(_ text: String, limit: Int = textLimit) -> String { Shown.text(text, limit: limit) }

    /// Per run, the same plots from separate values (see ``writeRunPlots(_:dir:)``).
    ///
    /// - Parameters:
    ///   - frames: the run's frames in decode order (from the store).
    ///   - fpsNum, fpsDen: the frame rate in frames per second (both above 0).
    ///   - targetKbps: the rate-control target in kbit/s, or nil (CQP, CRF) to draw the run's mean instead.
    ///   - maxrateKbps: the VBV maximum rate in kbit/s when it differs from the target (drawn too), else nil.
    ///   - title: the plot title.
    /// - Throws: `.data` for a frame rate that is not two numbers above 0; else as ``writeRunPlots(_:dir:)``.
    public static func writeRunPlots(frames: [LabStore.FrameRow], timebaseNum: Int, timebaseDen: Int,
                                     fpsNum: Int, fpsDen: Int, targetKbps: Double?, maxrateKbps: Double? = nil,
                                     title: String, dir: String) throws {
        guard fpsNum > 0, fpsDen > 0, let fps = try? Rational(Int64(fpsNum), Int64(fpsDen)) else {
            throw LabError.data("frame rate \(fpsNum)/\(fpsDen) is not two numbers above 0")
        }
        try writeRunPlots(RunPlotInput(title: title, fps: fps, timebaseNum: timebaseNum, timebaseDen: timebaseDen,
                                       targetKbps: targetKbps, maxrateKbps: maxrateKbps, frames: frames), dir: dir)
    }

    /// Per run: `frames.png/svg` (frame size per frame, coloured by type, with the 1-second DTS-window bitrate,
    /// each point the window [DTS, DTS + 1 s) starting at that frame (``DecodeTimeWindows``; windows past the stream's
    /// end are left out), and the target-rate line on the right axis) and `psnr.png/svg` (the lab's PSNR per frame: `frames.psnr_y`
    /// and `frames.psnr_avg`, from its own decode, not x264's report), with `frames.dat` (one row per frame: coded
    /// index, display index, size in kbit, type index, window kbit/s or NaN, PSNR Y and PSNR avg or NaN) and the two
    /// `.gp` scripts, in `dir` (created when missing).
    /// - Throws: `.cantCreate` naming the folder or file that cannot be made; `.ioError` when a file cannot be
    ///   written in full (a full disk, see ``checkComplete(_:)``); `.software` when gnuplot is
    ///   missing or fails.
    ///
    /// With a `queue` the data file and scripts are written and the drawing is left to the queue, which draws the
    /// plots of many runs in one gnuplot process (a sweep's, ``PlotQueue/draw(in:)``).
    public static func writeRunPlots(_ input: RunPlotInput, dir: String, queue: PlotQueue? = nil) throws {
        let plots = try writeScriptAndData(input, dir: dir)
        if let queue {
            for p in plots { queue.add(p) }
        } else {
            try render(plots)
        }
    }

    /// A run's charts without their pictures: writes `frames.dat`, `frames.gp` and `psnr.gp` in `dir` (created when
    /// missing; see ``writeRunPlots(_:dir:queue:)`` for what they hold) and draws nothing, so a run's own path costs
    /// two small files, not a gnuplot process. The pictures are drawn where they are looked at: ``render(_:)`` (or a
    /// ``PlotQueue``) with what this returns, `enclab plot --db` from the store, the report from its own charts.
    /// - Returns: the charts to draw (folder, name, arguments), in the order written.
    /// - Throws: `.cantCreate` naming the folder or file that cannot be made; `.ioError` when a file cannot be written.
    public static func writeScriptAndData(_ input: RunPlotInput, dir: String) throws -> [PlotQueue.Plot] {
        let queue = PlotQueue()
        try writeRunCharts(input, dir: dir, queue: queue)
        return queue.take()
    }

    /// Draws the pictures (`NAME.png`, `NAME.svg`) of charts whose script and data are written (``writeScriptAndData(_:dir:)``),
    /// all in one gnuplot process when their folders share a parent (``PlotQueue/draw(in:)``).
    /// - Throws: as ``PlotQueue/draw(in:)``.
    public static func render(_ plots: [PlotQueue.Plot]) throws {
        guard let first = plots.first else { return }
        let queue = PlotQueue()
        for p in plots { queue.add(p) }
        let parent = Paths.parent(first.folder)
        try queue.draw(in: parent.isEmpty ? "." : parent)
    }

    /// Writes a run's two charts' data and scripts, queueing their drawing on `queue` (``writeScriptAndData(_:dir:)``).
    static func writeRunCharts(_ input: RunPlotInput, dir: String, queue: PlotQueue) throws {
        precondition(input.timebaseNum > 0 && input.timebaseDen > 0 && input.fps.numerator > 0, "a run's timebase and frame rate are above 0")
        // A run's folder is the lab's own: a symbolic link planted there is refused, never written through.
        try OutputFiles.ownFolder(dir)
        let frames = input.frames, title = input.title, targetKbps = input.targetKbps, maxrateKbps = input.maxrateKbps
        let (timebaseNum, timebaseDen) = (input.timebaseNum, input.timebaseDen)
        // Exact times: one frame lasts (1/fps)/timebase ticks; the frames span from the smallest PTS to the
        // largest plus one frame (count/fps seconds at a constant rate).
        let timebase = try Rational(Int64(timebaseNum), Int64(timebaseDen))
        let frameTicks = try input.fps.reciprocal / timebase
        // A DTS that goes back (x264 given PTS that go back) counts at the largest DTS before it: a frame cannot
        // arrive before the frames decoded ahead of it.
        var arrival: [Int64] = []
        for f in frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
        let windows = WindowedBitrate.compute(sizes: frames.map(\.sizeBytes), dts: arrival,
                                              timebase: timebase, frameTicks: frameTicks)
        let ptsSpan = Int64((frames.map(\.pts).max() ?? 0) - (frames.map(\.pts).min() ?? 0))
        // Exact where the fraction fits 64 bits; a damaged timebase falls back to floating point (display only).
        let seconds = (try? (timebase.times(ptsSpan) + input.fps.reciprocal).approximateValue)
            ?? Double(ptsSpan) * timebase.approximateValue + 1 / input.fps.approximateValue
        let meanKbps = Double(frames.reduce(Int128(0)) { $0 + Int128($1.sizeBytes) }) * 8 / 1000 / max(seconds, 1e-9)
        // Data: coded index, display index, size in kbit, type column index, window kbps (or NaN), psnr_y, psnr_avg.
        let types = ["IDR", "I", "P", "Bref", "B"]
        var data = "# coded_index display_index size_kbit type_index window_kbps psnr_y psnr_avg\n"
        for (f, w) in zip(frames, windows) {
            let t = types.firstIndex(of: f.type) ?? 0
            data += "\(f.codedIndex) \(f.displayIndex) \(Double(f.sizeBytes) * 8 / 1000) \(t) "
            data += "\(w.full ? String(w.kbps) : "NaN") \(f.psnrY.map { String($0) } ?? "NaN") \(f.psnrAvg.map { String($0) } ?? "NaN")\n"
        }
        try write(data, to: "\(dir)/frames.dat")
        let colours = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"]
        var series: [String] = []
        for (i, name) in types.enumerated() {
            series.append("'frames.dat' using 1:($4==\(i) ? $3 : 1/0) with impulses lw 2 lc rgb '\(colours[i])' title '\(name)'")
        }
        series.append("'frames.dat' using 1:5 axes x1y2 with lines lw 2 lc rgb 'black' title 'bitrate, 1 s DTS window (kbit/s)'")
        // The two rate lines' key titles are ARG2 and ARG3: they hold the user's rates.
        let line = targetKbps ?? meanKbps
        let arguments = [shown(title), "\(targetKbps == nil ? "mean rate" : "target rate") \(String(format: "%.0f", line)) kbit/s",
                         maxrateKbps.map { "VBV maxrate \(String(format: "%.0f", $0)) kbit/s" } ?? ""]
        series.append("\(line) axes x1y2 with lines dt 2 lw 2 lc rgb '#7f7f7f' title ARG2")
        if let maxrate = maxrateKbps {
            series.append("\(maxrate) axes x1y2 with lines dt 3 lw 2 lc rgb '#bcbd22' title ARG3")
        }
        // Headroom above the highest line, so a target or maxrate line is never on the border.
        let top = ([line, maxrateKbps ?? 0] + windows.filter(\.full).map(\.kbps)).max() ?? line
        let body = """
        set title ARG1
        set xlabel 'frame (decode order)'
        set ylabel 'frame size (kbit)'
        set y2label 'bitrate (kbit/s)'
        set ytics nomirror
        set y2tics
        set xrange [-1:\(frames.count)]
        set yrange [0:*]
        set y2range [0:\(top * 1.15)]
        set key below horizontal
        set grid
        plot \(series.joined(separator: ", \\\n     "))
        """
        try both(dir: dir, name: "frames", body: body, arguments: arguments, queue: queue)
        let hasPSNR = frames.contains { $0.psnrY != nil }
        let psnrPlot = hasPSNR ? """
        plot 'frames.dat' using 1:6 with linespoints pt 7 ps 0.4 title 'PSNR Y', \\
             'frames.dat' using 1:7 with linespoints pt 7 ps 0.4 title 'PSNR avg (Y,U,V)'
        """ : """
        set label '\(input.isCheck ? "no PSNR: a check run (enclab check --db) has no source clip to measure against" : "no PSNR for this run: no frame has an error (lossless), or none was decoded")' at graph 0.5, 0.5 center
        set yrange [0:1]
        plot 1/0 notitle
        """
        let psnrBody = """
        set title ARG1
        set xlabel 'frame (decode order)'
        set ylabel 'PSNR (dB)'
        set xrange [-1:\(frames.count)]
        set key below horizontal
        set grid
        \(psnrPlot)
        """
        try both(dir: dir, name: "psnr", body: psnrBody, arguments: [shown(title)], queue: queue)
    }

    /// One point of a rate-distortion plot: one done run.
    public struct RDPoint: Sendable {
        public var clip: String
        public var mode: String
        public var kbps: Double
        public var psnr: Double
        public var runID: Int64
        public var unverified: Bool

        /// - Parameters:
        ///   - clip: the clip's file name.
        ///   - mode: the run's configuration: the rate-control mode, then the grid's other settings ("cbr bframes=0"),
        ///     as the report names it (``ReportData/configuration(_:)``).
        ///   - kbps: `run_metrics.bitrate_kbps`.
        ///   - psnr: the chart's metric, by default `run_metrics.psnr_global` (dB).
        ///   - runID: the run's id.
        ///   - unverified: encoded with `--verify none` (its PSNR is x264's own report).
        public init(clip: String, mode: String, kbps: Double, psnr: Double, runID: Int64, unverified: Bool = false) {
            self.clip = clip; self.mode = mode; self.kbps = kbps; self.psnr = psnr; self.runID = runID; self.unverified = unverified
        }
    }

    /// Per experiment: `rd.png/svg` with `rd.dat` and `rd.gp`, the lab's rate-quality chart
    /// (``writeRateQualityChart(_:configurations:metric:title:name:dir:queue:)``) of every point: one curve per clip and
    /// configuration, the same chart as the report's `rq-N` for an experiment of one clip (same data rows, metric,
    /// colours and markers), the clips told apart by the line's dash when there are several.
    /// - Throws: `.cantCreate` naming the folder or file that cannot be made; `.ioError` when a file cannot be
    ///   written in full (a full disk, see ``checkComplete(_:)``); `.software` when gnuplot is
    ///   missing or fails. With no point, only `rd.dat` (its header) is written.
    public static func writeExperimentPlot(points: [RDPoint], title: String, metric: QualityMetric = .psnrGlobal, dir: String,
                                           queue: PlotQueue? = nil) throws {
        var curves: [RateQualityCurve] = []
        // Curves by clip, then configuration, each in the order of its first run (as the report orders them).
        for p in points.sorted(by: { $0.runID < $1.runID }) {
            let point = RateQualityCurve.Point(kbps: p.kbps, value: p.psnr, runID: p.runID)
            if let i = curves.firstIndex(where: { $0.clip == p.clip && $0.configuration == p.mode }) {
                curves[i] = RateQualityCurve(clip: p.clip, configuration: p.mode, points: curves[i].points + [point],
                                             unverified: curves[i].unverified || p.unverified)
            } else {
                curves.append(RateQualityCurve(clip: p.clip, configuration: p.mode, points: [point], unverified: p.unverified))
            }
        }
        curves = curves.enumerated().sorted { ($0.element.clip, $0.offset) < ($1.element.clip, $1.offset) }.map(\.element)
        try writeRateQualityChart(curves, configurations: points.map(\.mode), metric: metric, title: title, name: "rd", dir: dir, queue: queue)
    }

    /// Writes a data file or script (``OutputFiles/replace(_:at:synced:)``: never through a link there; a partial
    /// file is removed), not synced to disk: every chart's data and script is written from the store, which writes it
    /// again when it is lost (a run folder's by the next run of its key or `enclab plot`, a report's by the report).
    /// - Throws: `.cantCreate` naming the file when it cannot be created, `.ioError` when writing it fails.
    static func write(_ text: String, to path: String) throws {
        try OutputFiles.replace(text, at: path, synced: false)
    }
}
