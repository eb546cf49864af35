import Foundation

/// `enclab report`: a static HTML report of a database, read from the store only (no encode, no server, nothing
/// loaded from the network; the one script is inline and only sorts tables).
///
/// Layout under OUT (written in a new folder beside it and moved into place at the end, replacing only a previous
/// report, ``replaceable(_:)``, ``place(_:at:)``):
/// - `index.html`: the experiments, each with its runs counted; `.enclab-report` (``marker``);
/// - `EXPERIMENT/index.html` (the experiment's name when it is a safe folder name, letters, digits, `.`, `_`, `-`
///   not starting with `.`; else a safe form of it with a hash of the name, ``folderNames(_:)``): the runs and their
///   metrics in a sortable table, the rate-quality curves (`rq-N.*`, one plot per clip), the BD-rate table against
///   the anchor configuration;
/// - `EXPERIMENT/run-ID/index.html`: the per-run pages (``RunPage``) of the runs chosen.
///
/// Curves: runs are grouped by clip and by configuration, their rate-control mode and the grid settings other than
/// those that set the rate (`qp`, `crf`, `bitrate`, `vbv-*`; ``ReportData/configuration(_:)``), so one curve is one
/// configuration's runs at several rates on one clip; a point is (`bitrate_kbps`, `psnr_global`).
public enum Report {
    /// What to report.
    public struct Options: Sendable {
        /// The lab database (read; an older schema is brought up to date as every command does).
        public var databasePath: String
        /// Where the report goes; nil: the database's path without its extension, plus `-report`.
        public var outDirectory: String?
        /// Only this experiment; nil: every experiment.
        public var experiment: String?
        /// The anchor configuration of the BD-rate tables (a configuration name as the report shows it, "crf" or
        /// "abr bframes=0"); it wins over the experiment file's. Nil: the experiment file's `report.anchor` as stored
        /// with each experiment's most recent run (``ReportData/fileAnchors``), else each experiment's first
        /// configuration (that of its lowest run id with a curve point).
        public var anchor: String?
        /// Runs given a page, by run id; with ``worst`` and ``best`` they add up. Nil: none by id.
        public var runs: [Int64]?
        /// Pages for the N runs with the lowest and highest `psnr_global` of each experiment; nil for both and no
        /// ``runs``: 5 each.
        public var worst: Int?
        public var best: Int?
        /// The runs overlaid at first on their experiment's overlay views (``ChartOverlay``), by run id; each must be a
        /// done run with frames. Nil: one rate of each configuration per clip.
        public var overlay: [Int64]?
        /// The quality the rate-quality curves and the main BD-rate table are on (`--metric`): psnr_global by default,
        /// or a `--metrics` metric's mean of frames (``CurveMetric``). The "BD-rate per metric" table shows every metric
        /// the runs have whichever is chosen.
        public var metric: CurveMetric

        public init(databasePath: String, outDirectory: String? = nil, experiment: String? = nil, anchor: String? = nil,
                    runs: [Int64]? = nil, worst: Int? = nil, best: Int? = nil, overlay: [Int64]? = nil, metric: CurveMetric = .psnr) {
            self.databasePath = databasePath; self.outDirectory = outDirectory; self.experiment = experiment
            self.anchor = anchor; self.runs = runs; self.worst = worst; self.best = best; self.overlay = overlay
            self.metric = metric
        }
    }

    /// The default number of worst and of best runs given a page per experiment.
    public static let defaultPages = 5

    /// What was written.
    public struct Summary: Sendable, Equatable {
        /// The report's front page.
        public var index: String
        public var experiments: Int
        public var runPages: Int
        /// Run ids whose stream file is missing on this machine (their pages say so).
        public var missingStreams: [Int64]
        /// Run ids whose source clip is missing on this machine.
        public var missingSources: [Int64]
    }

    /// Builds the report.
    /// - Parameter progress: called with the number of run pages once they are known; returns the reporter advanced
    ///   once per page (nil: none).
    /// - Throws: `.usage` for an empty database path, an `--experiment` or `--anchor` that names nothing in the
    ///   database, a negative count; `.noInput` for a missing database or a `--runs` id it does not hold; `.data` for a
    ///   file that is not an enclab database, a damaged stored row, or (without `--anchor`) an experiment file's
    ///   `report.anchor` that names no configuration of its experiment with curve points, a `run_metrics` value that is
    ///   text or out of range (``ReportData/checkMetric(_:column:runID:database:)``); `.cantCreate` for an OUT that
    ///   is there and is not a previous report (``replaceable(_:)``), `.cantCreate`/`.ioError` for OUT and its files;
    ///   `.software` when gnuplot or ffmpeg is missing or fails; `.interrupted` after SIGINT/SIGTERM (children are
    ///   ended, ``ChildStopper``). On any error the temporary folder is removed and OUT is left as it was.
    public static func build(_ options: Options, progress: ((Int) -> Progress?)? = nil) throws -> Summary {
        let db = options.databasePath
        if db.isEmpty { throw LabError.usage("--db needs a database file path") }
        for (name, value) in [("--worst", options.worst), ("--best", options.best)] where (value ?? 0) < 0 {
            throw LabError.usage("\(name) \(value!): must be 0 or more")
        }
        try LabStore.requireDatabaseFile(db)
        _ = try Tools.require("gnuplot", package: "gnuplot-nox")
        try LabStore.requireLabDatabase(path: db)
        let store = try LabStore.reading(path: db)
        let names = try store.reportExperimentNames()
        if let wanted = options.experiment, !names.contains(wanted) {
            throw LabError.usage("--experiment '\(Plots.shown(wanted))': \(db) holds no such experiment (it holds: \(names.map { Plots.shown($0) }.joined(separator: ", ")))")
        }
        let data = try ReportData(store: store, experiments: options.experiment.map { [$0] })
        if let ids = options.runs {
            for id in ids where !data.runs.contains(where: { $0.row.runID == id }) {
                throw LabError.noInput("\(db): no run with id \(id)\(options.experiment.map { " in experiment '\(Plots.shown($0))'" } ?? "")")
            }
        }
        for id in options.overlay ?? [] {
            let inExperiment = options.experiment.map { " in experiment '\(Plots.shown($0))'" } ?? ""
            guard let run = data.runs.first(where: { $0.row.runID == id }) else {
                throw LabError.usage("--overlay \(id): \(db) holds no run with id \(id)\(inExperiment)")
            }
            guard run.row.status == "done", (run.row.frames ?? 0) > 0 else {
                throw LabError.usage("--overlay \(id): run \(id) is \(run.row.status == "done" ? "done but has no frames" : "not done (status \(Plots.shown(run.row.status)))"): nothing to overlay")
            }
        }
        let experiments = names.filter { options.experiment == nil || $0 == options.experiment }
        let curves = Dictionary(grouping: data.runs.filter { $0.kbps != nil && $0.psnr != nil }, by: \.row.experiment)
        if let anchor = options.anchor, !curves.values.contains(where: { $0.contains { $0.configuration == anchor } }) {
            let known = Array(Set(curves.values.flatMap { $0.map(\.configuration) })).sorted()
            throw LabError.usage("--anchor '\(Plots.shown(anchor))': no configuration of that name has curve points (configurations: \(known.map { Plots.shown($0) }.joined(separator: "; ")))")
        }
        if options.anchor == nil {
            for name in experiments {
                guard let (runID, anchor) = data.fileAnchors[name] else { continue }
                let known = Array(Set((curves[name] ?? []).filter { $0.row.status == "done" }.map(\.configuration))).sorted()
                if !known.contains(anchor) {
                    throw LabError.data("\(db): experiment '\(Plots.shown(name))': report.anchor '\(Plots.shown(anchor))' of its experiment file (runs.settings $.report.anchor of run \(runID)) names no configuration with curve points (configurations: \(known.map { Plots.shown($0) }.joined(separator: "; "))); correct the file and run it again, or give --anchor")
                }
            }
        }
        var out = options.outDirectory ?? PlotFromStore.defaultOutDirectory(databasePath: db) + "-report"
        // "rep/" is the folder "rep" (a trailing slash would make lstat(2) follow a symbolic link named so).
        while out.count > 1 && out.hasSuffix("/") { out.removeLast() }
        // Written in a new folder beside OUT and moved into place at the end (ReportFolder.swift); removed on any
        // failure, and by the second signal's exit.
        _ = try replaceable(out)
        let root = try makeStaging(for: out)
        var placed = false
        defer { if !placed { OutputFiles.removeTree(root) } }
        let cleanup = Interruption.register { final in if final { OutputFiles.removeTree(root) } }
        defer { Interruption.unregister(cleanup) }
        try ChartPage.writeAssets(root: root)

        // Pages: by id, then the worst and best per experiment by the report's metric (psnr_global, or the --metric's mean).
        let defaults = options.runs == nil && options.worst == nil && options.best == nil
        let worstN = options.worst ?? (defaults ? defaultPages : 0), bestN = options.best ?? (defaults ? defaultPages : 0)
        var paged = Set(options.runs ?? [])
        // The runs grouped by experiment once (each in the order of data.runs).
        let byExperiment = Dictionary(grouping: data.runs, by: \.row.experiment)
        for name in experiments {
            let ranked = (byExperiment[name] ?? []).filter { $0.row.status == "done" && $0.value(options.metric) != nil }
                .sorted { ($0.value(options.metric)!, $0.row.runID) < ($1.value(options.metric)!, $1.row.runID) }
            paged.formUnion(ranked.prefix(worstN).map(\.row.runID))
            paged.formUnion(ranked.suffix(bestN).map(\.row.runID))
        }
        // Runs of `enclab check --db` have no PSNR to rank: with the default choice each gets a page (its rules'
        // badges and violations).
        if defaults {
            let shown = Set(experiments)
            paged.formUnion(data.runs.filter { $0.isCheck && shown.contains($0.row.experiment) }.map(\.row.runID))
        }
        let doneIDs = Set(data.runs.lazy.filter { $0.row.status == "done" }.map(\.row.runID))
        paged = paged.filter(doneIDs.contains)
        let reporter = progress?(paged.count)
        defer { reporter?.finish() }

        var summary = Summary(index: "\(out)/index.html", experiments: experiments.count, runPages: 0, missingStreams: [], missingSources: [])
        var indexRows: [[String]] = []
        // The experiments' curves are drawn together once every page is built (one gnuplot process for all).
        let curveQueue = PlotQueue()
        // The source pictures of every page, each clip read once.
        let sources = RunPage.SourcePictures()
        for run in data.runs where paged.contains(run.row.runID) {
            try RunPage.wantSource(of: run, store: store, databasePath: db, sources: sources)
        }
        var experimentPages: [(html: String, dir: String)] = []
        let folders = folderNames(experiments)
        for name in experiments {
            try Interruption.check()
            let folder = folders[name]!
            let dir = "\(root)/\(folder)"
            try OutputFiles.makeDirectory(dir)
            let runs = byExperiment[name] ?? []
            var outcomes: [Int64: RunPage.Outcome] = [:]
            // The run pages, on two threads (ffmpeg's pictures and gnuplot's drawing are processes of their own):
            // each worker writes the pages it takes, queueing their plots, then draws its queue in one gnuplot
            // process (run-ID are direct subfolders of dir). The store is read here, before.
            let chosen = runs.filter { paged.contains($0.row.runID) }
            var loaded: [[ReportData.Frame]] = [], chartInputs: [ChartRunInput] = []
            for run in chosen {
                try Interruption.check()
                let rows = try ReportData.frames(run: run.row.runID, store: store)
                loaded.append(rows)
                // The charts' frames are the same rows (one frame query per run).
                chartInputs.append(ChartRunInput(frames: rows.map(LabStore.ChartFrame.init), limits: try store.dataRateLimits(run: run.row.runID),
                                                 skipped: try store.reportSkipped(run: run.row.runID),
                                                 rateChanges: try store.rateChanges(run: run.row.runID),
                                                 rtp: try store.rtpFrames(run: run.row.runID),
                                                 quality: try store.chartQuality(run: run.row.runID)))
            }
            let frames = loaded, charts = chartInputs
            // What each page's numbers cannot say (the experiment page's warnings that concern the run).
            let runFiller = try store.reportFiller(runs: chosen.filter { (($0.metrics["vbv_overflows"] ?? nil) ?? 0) > 0 && Warnings.isCBR($0) }.map(\.row.runID))
            // (A run alone has no curve to compare: its warnings need none.)
            let warnings = chosen.map { Warnings.section([$0], filler: runFiller, curves: [:]) }
            let work = PageWork(count: chosen.count)
            let columns = data.metricColumns, hasMetricsTable = data.hasMetricsTable
            DispatchQueue.concurrentPerform(iterations: min(2, chosen.count)) { _ in
                let queue = PlotQueue()
                while let k = work.take() {
                    do {
                        try Interruption.check()
                        let run = chosen[k]
                        work.put(k, try RunPage.write(run, frames: frames[k], charts: charts[k], columns: columns, hasMetricsTable: hasMetricsTable,
                                                      databasePath: db, dir: "\(dir)/run-\(run.row.runID)", queue: queue, sources: sources,
                                                      warnings: warnings[k]))
                        reporter?.advance(detail: "run \(run.row.runID)")
                    } catch {
                        work.fail(error)
                    }
                }
                do { try queue.draw(in: dir) } catch { work.fail(error) }
            }
            if let error = work.firstError { throw error }
            let written = work.results
            for (k, run) in chosen.enumerated() {
                guard let page = written[k] else { continue }
                outcomes[run.row.runID] = page.outcome
                let pageDir = "\(dir)/run-\(run.row.runID)"
                try OutputFiles.write(HTML.fillPlots(page.html, dir: pageDir), to: "\(pageDir)/index.html")
                summary.runPages += 1
            }
            // Each stored path looked up once (the runs table asks again), and each distinct path once (runs of one
            // clip share it).
            var files: [Int64: (stream: Bool, source: Bool)] = [:]
            var located: [String: Bool] = [:]
            func exists(_ path: String?) -> Bool {
                guard let path else { return false }  // RunPage.locate(nil, ...) is nil
                if let known = located[path] { return known }
                let found = RunPage.locate(path, databasePath: db) != nil
                located[path] = found
                return found
            }
            for run in runs where run.row.status == "done" {
                let found = (exists(run.row.streamPath), exists(run.row.clip))
                files[run.row.runID] = found
                if !found.0 { summary.missingStreams.append(run.row.runID) }
                if !found.1 { summary.missingSources.append(run.row.runID) }
            }
            let filler = try store.reportFiller(runs: runs.filter { (($0.metrics["vbv_overflows"] ?? nil) ?? 0) > 0 && Warnings.isCBR($0) }.map(\.row.runID))
            let anchor = options.anchor.map { (name: $0, source: AnchorSource.commandLine(overriding: data.fileAnchors[name]?.anchor)) }
                ?? data.fileAnchors[name].map { (name: $0.anchor, source: .experimentFile(runID: $0.runID)) }
            // The experiment's curves, computed once for its warnings, overlay styles and rate-quality charts.
            let experimentCurves = Report.curves(runs, metric: options.metric)
            let overlays = try ChartOverlay.section(runs: runs, paged: Set(outcomes.keys), picked: options.overlay.map(Set.init), store: store,
                                                    dir: dir, queue: curveQueue, curves: experimentCurves, metric: options.metric)
            experimentPages.append((try writeExperiment(name, runs: runs, data: data, anchor: anchor, pages: outcomes, files: files,
                                                        filler: filler, dir: dir, queue: curveQueue, overlays: overlays,
                                                        curves: experimentCurves, metric: options.metric,
                                                        pagesNote: pagesNote(worst: worstN, best: bestN, metric: options.metric, byID: options.runs != nil,
                                                                             checks: defaults && runs.contains(where: \.isCheck))), dir))
            let done = runs.filter { $0.row.status == "done" }.count
            indexRows.append(["<a href=\"\(HTML.escape(folder))/index.html\">\(HTML.escape(name))</a>", "\(runs.count)", "\(done)",
                              "\(runs.count - done)", "\(outcomes.count)",
                              HTML.escape(Array(Set(runs.map(\.clipName))).sorted().joined(separator: ", "))])
        }
        try Interruption.check()
        try curveQueue.draw(in: root)
        for page in experimentPages { try OutputFiles.write(HTML.fillPlots(page.html, dir: page.dir), to: "\(page.dir)/index.html") }
        var body = "<h1>enclab report</h1>\n<p>Database <code>\(HTML.escape(db))</code>, \(data.runs.count) runs"
        body += data.hasMetricsTable ? ", metrics from table run_metrics.</p>\n"
            : ". This database has no run_metrics table: the report computes bitrate and pooled PSNR from the frames; <code>enclab analyze</code> adds the full metrics.</p>\n"
        body += HTML.table(headers: ["experiment", "runs", "done", "failed", "run pages", "clips"], rows: indexRows, sortable: true, textColumns: [0, 5])
        try OutputFiles.write(HTML.page(title: "enclab report", body: body), to: "\(root)/index.html")
        try OutputFiles.write("Written by enclab report from \(Plots.shown(db)): the next report to this folder replaces it.\n", to: "\(root)/\(marker)")
        try Interruption.check()
        try place(root, at: out)
        placed = true
        return summary
    }

    /// The sentence saying which runs got a page: the `worst` and `best` by `metric` (psnr_global, or the metric's
    /// run_quality_metrics.mean: `report --metric`), runs without a value on it not ranked; with `checks`, each check run
    /// too (the default pages). "" when none were ranked.
    static func pagesNote(worst: Int, best: Int, metric: CurveMetric, byID: Bool, checks: Bool = false) -> String {
        guard worst > 0 || best > 0 else { return "" }
        let by = metric == .psnr ? "psnr_global (PSNR pooled)" : "\(HTML.escape(metric.name)), the mean of its frames (run_quality_metrics.mean of \(HTML.escape(metric.column)), chosen with --metric)"
        let which = [worst > 0 ? "the \(worst) worst" : nil, best > 0 ? "the \(best) best" : nil].compactMap { $0 }.joined(separator: " and ")
        return "<p class=\"note pages-by\">Run pages: \(which) runs of this experiment by \(by)\(metric == .psnr ? "" : "; runs without it are not ranked")\(byID ? ", and the runs given to --runs" : "")\(checks ? ", and each run of check --db (its rules' results)" : "") (--worst and --best choose how many; --metric which quality).</p>\n"
    }

    /// The run pages shared out to the workers: the next page to take, each page's result, the first error (after
    /// which no page is taken).
    final class PageWork: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private let count: Int
        private var written: [(outcome: RunPage.Outcome, html: String)?]
        private var error: Error?

        init(count: Int) { self.count = count; written = Array(repeating: nil, count: count) }

        /// The index of the next page to write, or nil when none is left or a worker failed.
        func take() -> Int? {
            lock.lock(); defer { lock.unlock() }
            guard next < count, error == nil else { return nil }
            next += 1
            return next - 1
        }
        func put(_ k: Int, _ page: (outcome: RunPage.Outcome, html: String)) { lock.lock(); written[k] = page; lock.unlock() }
        func fail(_ e: Error) { lock.lock(); if error == nil { error = e }; lock.unlock() }
        var firstError: Error? { lock.lock(); defer { lock.unlock() }; return error }
        var results: [(outcome: RunPage.Outcome, html: String)?] { lock.lock(); defer { lock.unlock() }; return written }
    }

    /// `name` when it is a safe folder name (letters, digits, `.`, `_`, `-`, not starting with `.`, not `index.html`).
    static func safeFolder(_ name: String) -> String? {
        guard !name.isEmpty, name.count <= 100, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }),
              !name.hasPrefix("."), name != "index.html" else { return nil }
        return name
    }

    /// One configuration's curve on one clip: its points sorted by rate.
    struct Curve {
        var clip: String
        var configuration: String
        /// Rate (kbit/s), the quality on the curves' metric (`psnr`: psnr_global in dB unless another
        /// ``CurveMetric`` was chosen) and the run's id.
        var points: [(rate: Double, psnr: Double, runID: Int64)]
        /// The ids of its unverified runs (``ReportData/Run/unverified``).
        var unverified: Set<Int64> = []
        /// The rate each run was asked for, kbit/s (`run_metrics.target_kbps`), by run id; runs without one absent.
        var targets: [Int64: Double] = [:]
    }

    /// Where an experiment's BD-rate anchor came from.
    enum AnchorSource {
        /// `--anchor`, with the experiment file's `report.anchor` it overrides, if any.
        case commandLine(overriding: String?)
        /// The experiment file's `report.anchor`, as stored with run `runID` (``ReportData/fileAnchors``).
        case experimentFile(runID: Int64)
    }

    /// Counts the calls of ``curves(_:metric:)`` made where a caller binds it (a test: how often one report computes its
    /// curves); nil: nothing counted.
    @TaskLocal static var curvesCounter: CallCounter?

    /// A count shared across threads.
    public final class CallCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        public init() {}
        func add() { lock.lock(); n += 1; lock.unlock() }
        public var count: Int { lock.lock(); defer { lock.unlock() }; return n }
    }

    /// The curves of `runs` (those with a rate and a value on `metric`, ``ReportData/Run/value(_:)``), by clip path then
    /// configuration, each clip's configurations in the order of their first run id.
    static func curves(_ runs: [ReportData.Run], metric: CurveMetric = .psnr) -> [String: [Curve]] {
        curvesCounter?.add()
        var result: [String: [Curve]] = [:]
        for run in runs.sorted(by: { $0.row.runID < $1.row.runID }) {
            guard run.row.status == "done", let kbps = run.kbps, let psnr = run.value(metric) else { continue }
            // Taken out of the dictionary while it grows (a copy left in it would make every append copy the points).
            var list = result.removeValue(forKey: run.row.clip) ?? []
            let i: Int
            if let found = list.firstIndex(where: { $0.configuration == run.configuration }) {
                i = found
                list[i].points.append((kbps, psnr, run.row.runID))
            } else {
                i = list.count
                list.append(Curve(clip: run.row.clip, configuration: run.configuration, points: [(kbps, psnr, run.row.runID)]))
            }
            if run.unverified { list[i].unverified.insert(run.row.runID) }
            if let target = run.target { list[i].targets[run.row.runID] = target }
            result[run.row.clip] = list
        }
        for (clip, list) in result {
            result[clip] = list.map { var c = $0; c.points.sort { ($0.rate, $0.runID) < ($1.rate, $1.runID) }; return c }
        }
        return result
    }

    /// Writes an experiment's curve data and scripts in `dir`, their plots queued on `queue` (drawn by the caller,
    /// ``PlotQueue/draw(in:)`` of `dir`'s parent), and returns its page's HTML, the plots as placeholders
    /// (``HTML/fillPlots(_:dir:)``).
    /// - Parameter anchor: the anchor asked for and where it came from; nil: the first configuration.
    /// - Parameter files: per done run, whether its stream and its source file are found on this machine.
    /// - Parameter overlays: the overlay views' HTML (``ChartOverlay``), placed after the curves.
    /// - Parameter curves: ``curves(_:metric:)`` of `runs` when the caller has them; nil: computed here.
    static func writeExperiment(_ name: String, runs: [ReportData.Run], data: ReportData, anchor asked: (name: String, source: AnchorSource)?,
                                pages: [Int64: RunPage.Outcome], files: [Int64: (stream: Bool, source: Bool)],
                                filler: [Int64: LabStore.ReportFiller] = [:], dir: String, queue: PlotQueue,
                                overlays: String = "", curves known: [String: [Curve]]? = nil, metric: CurveMetric = .psnr,
                                pagesNote: String = "") throws -> String {
        let byClip = known ?? curves(runs, metric: metric)
        let wanted = asked?.name
        let e = HTML.escape
        var body = "<p><a href=\"../index.html\">← all experiments</a></p>\n<h1>Experiment \(e(name))</h1>\n"
        if !data.hasMetricsTable {
            body += "<p class=\"note\">This database has no run_metrics table: bitrate_kbps (all bytes over the PTS span plus one frame) and psnr_global / psnr_y_pooled (PSNR of the squared error pooled over all samples) are computed from the frames. <code>enclab analyze</code> adds the full metrics.</p>\n"
        }
        // The BD-rate anchor: the one asked for where a clip has it, else the first configuration with a curve point.
        let firstConfiguration = runs.filter { $0.kbps != nil && $0.value(metric) != nil && $0.row.status == "done" }.min { $0.row.runID < $1.row.runID }?.configuration
        let anchor = wanted.flatMap { w in byClip.values.contains { $0.contains { $0.configuration == w } } ? w : nil } ?? firstConfiguration
        // What the numbers cannot say, then the runs table.
        body += Warnings.section(runs, filler: filler, curves: byClip, anchor: anchor, metric: metric)
        body += try runsTable(runs, data: data, pages: pages, files: files)
        body += pagesNote
        body += RuleSection.experiment(runs)
        body += noiseFloor(runs)

        // Curves and BD-rate.
        let clips = byClip.keys.sorted()
        body += "<h2>Rate-quality curves</h2>\n"
        if let anchor, let asked, asked.name == anchor {
            switch asked.source {
            case .commandLine(let overridden):
                body += "<p class=\"note\">BD-rate anchor <b>\(e(anchor))</b>: anchor from --anchor\(overridden.map { " (the experiment file's report.anchor '\(e($0))' overridden)" } ?? "").</p>\n"
            case .experimentFile(let runID):
                body += "<p class=\"note\">BD-rate anchor <b>\(e(anchor))</b>: anchor from the experiment file (report.anchor, stored in runs.settings with run \(runID)); --anchor overrides it.</p>\n"
            }
        } else if let anchor {
            body += "<p class=\"note\">BD-rate anchor <b>\(e(anchor))</b>: the first configuration (no --anchor, and no report.anchor in the experiment file).</p>\n"
        }
        let against = metric == .psnr ? "psnr_global, the PSNR of the squared error pooled over all samples of the three planes"
            : "\(e(metric.name)): \(e(metric.axisLabel)) (run_quality_metrics.mean of \(e(metric.column)), stored by --metrics or enclab measure)"
        body += "<p class=\"note\">One curve per clip and configuration: the runs' rate-control mode and grid settings other than those that set the rate (qp, crf, bitrate, vbv-*), points sorted by bitrate (\(data.hasMetricsTable ? "run_metrics.bitrate_kbps" : "bitrate computed from the frames")) against \(against).</p>\n"
        if metric != .psnr { body += lacking(runs, metric: metric) }  // runs without PSNR are said by the warnings, as before
        if clips.isEmpty { body += "<p>No run has both a bitrate and \(metric == .psnr ? "a PSNR" : "a mean " + e(metric.title) + noCurvesAdvice(runs, metric: metric)).</p>\n" }
        for (i, clip) in clips.enumerated() {
            try Interruption.check()
            let list = byClip[clip]!
            let plotName = "rq-\(i + 1)"
            body += "<h3>\(e(Paths.fileName(clip)))</h3>\n"
            try writeCurves(list, configurations: byClip.values.flatMap { $0.map(\.configuration) }, title: Paths.fileName(clip),
                            name: plotName, dir: dir, queue: queue, metric: metric)
            body += HTML.plot(dir: dir, name: plotName, data: ["\(plotName).dat"], alt: "rate-quality curves of \(Paths.fileName(clip))", deferred: true)
            let marked = list.filter { !$0.unverified.isEmpty }
            if !marked.isEmpty {
                let n = marked.reduce(0) { $0 + $1.unverified.count }
                body += "<p class=\"unverified-note\">This plot includes \(n) unverified run\(n == 1 ? "" : "s") (--verify none: PSNR from x264's own report, not the lab's decode): configuration\(marked.count == 1 ? "" : "s") \(marked.map { e($0.configuration) }.joined(separator: "; ")). Their key titles end in (unverified).</p>\n"
            }
            body += "<p class=\"note\">The plot's title and key titles are gnuplot arguments: <code>gnuplot -c \(plotName).gp TITLE KEYTITLES</code>, KEYTITLES one per line, in the order of the data file's blocks (each block starts with a comment naming its configuration).</p>\n"
            body += bdTable(list, anchor: anchor, metric: metric)
            body += metricsTable(runs.filter { $0.row.clip == clip }, anchor: anchor)
        }
        if let w = wanted, anchor != w {
            body += "<p class=\"note\">No configuration '\(e(w))' here: the anchor is the first configuration.</p>\n"
        }
        body += overlays  // the interactive overlay views (ChartOverlay)
        return HTML.page(title: "enclab report: \(name)", body: body)
    }

    /// The experiment page's "Repeats (noise floor)" section: per run key with more than one done run (the repeats
    /// of a run that is not repeatable, kept by `enclab merge`), the spread between its repeats: bytes (`runs.bytes`)
    /// and `psnr_global` (the curves' PSNR), each as min–max and max − min. Empty when no key has repeats.
    static func noiseFloor(_ runs: [ReportData.Run]) -> String {
        var byKey: [String: [ReportData.Run]] = [:]
        for run in runs where run.row.status == "done" { if let key = run.row.runKey { byKey[key, default: []].append(run) } }
        let repeated = byKey.filter { $0.value.count > 1 }.sorted { $0.value[0].row.runID < $1.value[0].row.runID }
        guard !repeated.isEmpty else { return "" }
        let e = HTML.escape
        var rows: [[String]] = []
        for (key, list) in repeated {
            let bytes = list.compactMap(\.row.bytes), psnr = list.compactMap(\.psnr)
            func range(_ values: [Double], digits: Int) -> (String, String) {
                guard let lo = values.min(), let hi = values.max() else { return ("", "") }
                return ("\(HTML.number(lo, digits: digits))–\(HTML.number(hi, digits: digits))", HTML.number(hi - lo, digits: digits))
            }
            let (bytesRange, bytesSpread) = range(bytes.map(Double.init), digits: 0)
            let percent = bytes.min().map { lo in lo > 0 ? String(format: "%.2f %%", Double(bytes.max()! - lo) / Double(lo) * 100) : "" } ?? ""
            let (psnrRange, psnrSpread) = range(psnr, digits: 3)
            rows.append([e(String(key.prefix(16))), e(list[0].configuration), e(list[0].label),
                         list.map { "<a href=\"run-\($0.row.runID)/index.html\">\($0.row.runID)</a>" }.joined(separator: ", "),
                         bytesRange, bytesSpread, percent, psnrRange, psnrSpread])
        }
        return "<h2>Repeats (noise floor)</h2>\n<p class=\"note\">Run keys done more than once (repeats of a run that is not repeatable, kept by <code>enclab merge</code>): the spread between the repeats of one key is the noise floor of comparisons between such runs. PSNR is psnr_global, the curves' PSNR.</p>\n"
            + HTML.table(headers: ["run key", "configuration", "label", "runs", "bytes min–max", "bytes spread", "bytes spread %", "psnr_global min–max (dB)", "psnr_global spread (dB)"],
                         rows: rows, textColumns: [0, 1, 2, 3, 4, 7])
    }

    /// `NAME.dat`, `NAME.gp`, `NAME.png`, `NAME.svg`: one clip's curves, bitrate (log scale) against psnr_global, the
    /// lab's one rate-quality chart (``Plots/writeRateQualityChart(_:configurations:metric:title:name:dir:queue:)``, as the
    /// run folder's `rd.*`), each configuration in the colour and marker it has on every chart of the experiment
    /// (`configurations`: all of the experiment's). A configuration with unverified runs has " (unverified)" after its key title.
    static func writeCurves(_ list: [Curve], configurations: [String], title: String, name: String, dir: String, queue: PlotQueue? = nil,
                            metric: CurveMetric = .psnr) throws {
        let curves = list.map { c in
            Plots.RateQualityCurve(clip: Paths.fileName(c.clip), configuration: c.configuration,
                                   points: c.points.map { .init(kbps: $0.rate, value: $0.psnr, runID: $0.runID) }, unverified: !c.unverified.isEmpty)
        }
        try Plots.writeRateQualityChart(curves, configurations: configurations, valueAxis: metric == .psnr ? nil : (metric.column, metric.axisLabel),
                                        title: title, name: name, dir: dir, queue: queue)
    }

    /// The note naming the done runs with a bitrate that have no value on `metric` (left out of its curves), with how
    /// to add it; "" when none lacks it. Runs are said, never silently dropped.
    static func lacking(_ runs: [ReportData.Run], metric: CurveMetric) -> String {
        let missing = runs.filter { $0.row.status == "done" && $0.kbps != nil && $0.value(metric) == nil }.sorted { $0.row.runID < $1.row.runID }
        guard !missing.isEmpty else { return "" }
        func named(_ list: [ReportData.Run]) -> String {
            "run\(list.count == 1 ? "" : "s") " + list.prefix(20).map { String($0.row.runID) }.joined(separator: ", ") + (list.count > 20 ? ", ... (\(list.count) in all)" : "")
        }
        let e = HTML.escape
        var parts: [String] = []
        // Lossless runs: no finite value to add (measuring again gives none).
        let lossless = noFiniteWhenIdentical.contains(metric) ? missing.filter(\.lossless) : []
        if !lossless.isEmpty {
            let frames = lossless.reduce(Int64(0)) { $0 + $1.identicalFrames }
            let why = metric == .psnr ? "the PSNR of no error is infinite"
                : metric == .quality(.xpsnr) ? "the xpsnr filter writes inf for a picture identical to its source" : "libvmaf writes null for a picture identical to its source"
            parts.append("\(named(lossless)): every picture is identical to its source (lossless: all \(frames) frame\(frames == 1 ? "" : "s")\(lossless.count == 1 ? "" : " of them") with SSE 0 in the lab's decode), so \(e(metric.title)) has no finite value (\(why))")
        }
        // Pictures too small for MS-SSIM: enclab measure refuses them, so it is not advised.
        let losslessIDs = Set(lossless.map(\.row.runID))
        let rest = missing.filter { !losslessIDs.contains($0.row.runID) }
        let small = metric == .quality(.msSSIM) ? rest.filter(tooSmallForMSSSIM) : []
        for (size, list) in Dictionary(grouping: small, by: { "\($0.row.width ?? 0)x\($0.row.height ?? 0)" }).sorted(by: { $0.value[0].row.runID < $1.value[0].row.runID }) {
            parts.append("\(named(list)): \(size) pictures, too small for MS-SSIM (libvmaf's MS-SSIM needs both sides of at least \(QualityMetric.msSSIMMinimumSide) px; enclab measure refuses them)")
        }
        let smallIDs = Set(small.map(\.row.runID))
        let other = rest.filter { !smallIDs.contains($0.row.runID) }
        if !other.isEmpty {
            let how = metric == .psnr ? "no psnr_global (no independent decode)" : "no \(e(metric.column)) stored (not scored with --metrics \(e(metric.name)); <code>enclab measure --db FILE --run ID --metrics \(e(metric.name))</code> adds it)"
            parts.append("\(named(other)), \(how)")
        }
        return "<p class=\"note lacking\">Left out of these curves: \(parts.joined(separator: "; ")).</p>\n"
    }

    /// The metrics that have no finite value on a picture identical to its source: PSNR (infinite), and PSNR-HVS,
    /// CIEDE2000 and XPSNR (libvmaf's null, the xpsnr filter's inf; stored NULL).
    static let noFiniteWhenIdentical: Set<CurveMetric> = [.psnr, .quality(.psnrHVS), .quality(.ciede2000), .quality(.xpsnr)]

    /// Whether a run's pictures are under libvmaf's MS-SSIM size on either side (``QualityMetric/msSSIMMinimumSide``,
    /// which `enclab measure` refuses).
    static func tooSmallForMSSSIM(_ run: ReportData.Run) -> Bool {
        [run.row.width, run.row.height].contains { $0.map { $0 < QualityMetric.msSSIMMinimumSide } ?? false }
    }

    /// What to do for a metric no run has with a bitrate: `enclab measure`, unless every run lacking it is too small
    /// for MS-SSIM (measure refuses them) or lossless where the metric has no finite value (measuring gives none).
    static func noCurvesAdvice(_ runs: [ReportData.Run], metric: CurveMetric) -> String {
        let missing = runs.filter { $0.row.status == "done" && $0.kbps != nil && $0.value(metric) == nil }
        let measurable = missing.filter { r in
            !(noFiniteWhenIdentical.contains(metric) && r.lossless)
                && !(metric == .quality(.msSSIM) && tooSmallForMSSSIM(r))
        }
        return measurable.isEmpty && !missing.isEmpty ? "; the note above says why" : " (enclab measure --metrics \(HTML.escape(metric.name)) adds it)"
    }

    /// The metrics the runs' BD-rate can be computed on: psnr when a done run has psnr_global, then each
    /// ``QualityMetric`` some done run has a mean of, in the lab's order.
    static func metricsPresent(_ runs: [ReportData.Run]) -> [CurveMetric] {
        CurveMetric.all.filter { m in runs.contains { $0.row.status == "done" && $0.kbps != nil && $0.value(m) != nil } }
    }

    /// The AWCY-style table of one clip: per configuration, BD-rate against the anchor (PCHIP) on each metric the
    /// runs have (``metricsPresent(_:)``), each on its own curves (``curves(_:metric:)``); a refusal or too few points
    /// shown in the cell; below it, per metric, the runs that lack it. "" when the runs have only PSNR (the table
    /// above says it all).
    static func metricsTable(_ runs: [ReportData.Run], anchor: String?) -> String {
        let metrics = metricsPresent(runs)
        guard metrics.contains(where: { $0 != .psnr }), let anchor else { return "" }
        let e = HTML.escape
        let byMetric = Dictionary(uniqueKeysWithValues: metrics.map { m in (m, curves(runs, metric: m).values.first ?? []) })
        let configurations = curves(runs, metric: .psnr).values.first.map { $0.map(\.configuration) } ?? []
        let order = configurations + metrics.flatMap { byMetric[$0]!.map(\.configuration) }.filter { !configurations.contains($0) }
        var seen = Set<String>(), rows: [[String]] = []
        for configuration in order where configuration != anchor && seen.insert(configuration).inserted {
            var row = [e(configuration)]
            for m in metrics {
                let list = byMetric[m]!
                guard let base = list.first(where: { $0.configuration == anchor }), let test = list.first(where: { $0.configuration == configuration }) else {
                    row.append("<span class=\"note\">no \(e(m.name)) curve for \(list.contains { $0.configuration == anchor } ? "this configuration" : "the anchor")</span>")
                    continue
                }
                let fewest = min(base.points.count, test.points.count)
                if fewest < Warnings.bdPoints { row.append("<span class=\"note\">\(fewest) point\(fewest == 1 ? "" : "s") (\(Warnings.bdPoints) needed)</span>"); continue }
                do {
                    row.append(HTML.number(try Bjontegaard.bdRate(anchor: base.points.map { ($0.rate, $0.psnr) }, test: test.points.map { ($0.rate, $0.psnr) },
                                                                  method: .pchip, quality: m.bjontegaard), digits: 2))
                } catch let error as LabError {
                    row.append("<span class=\"refused\">\(e(error.message))</span>")
                } catch { row.append("<span class=\"refused\">\(e("\(error)"))</span>") }
            }
            rows.append(row)
        }
        guard !rows.isEmpty else { return "" }
        var html = "<p>BD-rate per metric against the anchor <b>\(e(anchor))</b> (PCHIP, %; each metric on its own curves: psnr is psnr_global, the others their run_quality_metrics.mean; negative means fewer bits for the same quality):</p>\n"
        html += HTML.table(headers: ["configuration"] + metrics.map { "BD-rate % \($0.name)" }, rows: rows, sortable: true, textColumns: [0], id: nil)
        for m in metrics { html += lacking(runs, metric: m).replacingOccurrences(of: "Left out of these curves:", with: "Left out of the \(e(m.name)) column:") }
        return html
    }

    /// The BD-rate table of one clip: each configuration against the anchor, BD-rate and BD-PSNR by PCHIP and by the
    /// cubic fit (``Bjontegaard``); a refusal is shown as its message.
    static func bdTable(_ list: [Curve], anchor: String?, metric: CurveMetric = .psnr) -> String {
        guard let anchor, let base = list.first(where: { $0.configuration == anchor }) else {
            return "<p class=\"note\">No BD-rate table: the anchor configuration has no curve on this clip.</p>\n"
        }
        let others = list.filter { $0.configuration != anchor }
        let badge = " <span class=\"unverified\">unverified</span>"
        let q = metric.title, delta = metric.deltaName
        var html = "<p>BD-rate against the anchor <b>\(HTML.escape(anchor))</b>\(base.unverified.isEmpty ? "" : badge) (\(base.points.count) point\(base.points.count == 1 ? "" : "s")): negative means fewer bits for the same \(q); \(delta) positive means more \(q) at the same rate.</p>\n"
        if list.contains(where: { !$0.unverified.isEmpty }) {
            html += "<p class=\"unverified-note\">Configurations marked unverified hold runs encoded with --verify none: their PSNR is x264's own report, not the lab's decode, and so are the BD numbers computed from them.</p>\n"
        }
        guard !others.isEmpty else { return html + "<p class=\"note\">No other configuration on this clip.</p>\n" }
        let anchorPoints = base.points.map { (rate: $0.rate, psnr: $0.psnr) }
        var rows: [[String]] = []
        var perRate = ""
        for curve in others {
            let test = curve.points.map { (rate: $0.rate, psnr: $0.psnr) }
            var row = [HTML.escape(curve.configuration) + (curve.unverified.isEmpty ? "" : badge), "\(curve.points.count)"]
            let fewest = min(base.points.count, curve.points.count)
            if fewest < Warnings.bdPoints {
                // Too few points for a fit: no refusal cells, the per-rate differences below instead.
                let why = "<span class=\"note\">no BD: \(fewest) point\(fewest == 1 ? "" : "s") (\(Warnings.bdPoints) needed), per-rate differences below</span>"
                row += [why, "", "", ""]
                perRate += perRateTable(base: base, test: curve, metric: metric)
            } else {
                for method in [Bjontegaard.Method.pchip, .cubic] {
                    for f in [{ try Bjontegaard.bdRate(anchor: anchorPoints, test: test, method: method, quality: metric.bjontegaard) },
                              { try Bjontegaard.bdPSNR(anchor: anchorPoints, test: test, method: method, quality: metric.bjontegaard) }] {
                        do { row.append(HTML.number(try f(), digits: 2)) } catch let error as LabError {
                            row.append("<span class=\"refused\">\(HTML.escape(error.message))</span>")
                        } catch { row.append("<span class=\"refused\">\(HTML.escape("\(error)"))</span>") }
                    }
                }
            }
            // Quality ranges too far apart (BD-rate refused, ``Warnings``): the per-rate differences stand instead.
            if fewest >= Warnings.bdPoints, let overlap = Warnings.qualityOverlap(base, curve), overlap < Bjontegaard.minimumOverlap {
                perRate += perRateTable(base: base, test: curve, metric: metric)
            }
            rows.append(row)
        }
        let unit = metric.unit.isEmpty ? "" : metric.unit
        return html + HTML.table(headers: ["configuration", "points", "BD-rate % (PCHIP)", "\(delta)\(unit) (PCHIP)", "BD-rate % (cubic)", "\(delta)\(unit) (cubic)"],
                                 rows: rows, sortable: true, textColumns: [0]) + perRate
    }

    /// The per-rate differences of `test` against `base` when a curve has too few points for BD-rate or their
    /// quality ranges are too far apart: one row per anchor point, paired as ``PerRatePairing`` says (at an equal
    /// target rate, `run_metrics.target_kbps`, where both have it; else the test curve read, linear in log10(rate)
    /// and within its measured range only, at the anchor's rate and at its quality; never by rank), each row saying
    /// how it was paired; a cell outside the test's range left empty with a note.
    static func perRateTable(base: Curve, test: Curve, metric: CurveMetric = .psnr) -> String {
        let e = HTML.escape
        func points(_ c: Curve) -> [PerRatePairing.Point] {
            c.points.map { .init(rate: $0.rate, quality: $0.psnr, runID: $0.runID, target: c.targets[$0.runID]) }
        }
        let q = metric.title, unit = metric.unit.trimmingCharacters(in: .whitespaces)
        let u = unit.isEmpty ? "" : " (\(unit))"
        let rows = PerRatePairing.rows(anchor: points(base), test: points(test), qualityName: q, unit: metric.unit)
        func runs(_ r: PerRatePairing.Reading?) -> String {
            guard let r else { return "" }
            return "<span class=\"runs\" data-runs=\"\(r.runs.map(String.init).joined(separator: " "))\">\(r.runs.map(String.init).joined(separator: ", "))</span>"
        }
        func value(_ r: PerRatePairing.Reading?, digits: Int, note: String?) -> String {
            if let r { return HTML.number(r.value, digits: digits) }
            return "<span class=\"note\">\(e(note ?? ""))</span>"
        }
        var cells: [[String]] = []
        for row in rows {
            let how: String
            switch row.pairing {
            case .target(let kbps):
                how = "<span class=\"pairing\" data-pairing=\"target\">target \(HTML.number(kbps, digits: 0))</span>"
            case .interpolated:
                how = "<span class=\"pairing\" data-pairing=\"interpolated\">interpolated</span>"
            }
            cells.append([how, "\(row.anchor.runID)", HTML.number(row.anchor.rate, digits: 1), HTML.number(row.anchor.quality, digits: 3),
                          value(row.testRate, digits: 1, note: row.rateNote), runs(row.testRate),
                          row.rateDeltaPercent.map { HTML.number($0, digits: 2) } ?? "",
                          value(row.testQuality, digits: 3, note: row.qualityNote), runs(row.testQuality),
                          row.qualityDelta.map { HTML.number($0, digits: 3) } ?? ""])
        }
        let d = "\(q) Δ\(unit.isEmpty ? "" : " " + unit)"
        return "<p class=\"note per-rate\">Per-rate differences of <b>\(e(test.configuration))</b> against <b>\(e(base.configuration))</b>, one row per anchor run, never paired by rank. "
            + "Paired \"target N\": the anchor run and the test run asked for the same N kbit/s (run_metrics.target_kbps), compared as they are. "
            + "Paired \"interpolated\" (no test run at the anchor's target): the test curve, its points joined by straight lines in log10(rate), "
            + "read at the anchor's achieved rate (test \(q): \(d) at equal rate) and at the anchor's \(q) (test kbit/s: bitrate Δ at equal \(q)), only within the test's measured range, "
            + "as BD-rate's integration range (outside it the cell is empty, with a note). \"from runs\" names the test run, or the two test runs a value was read between. "
            + "Bitrate Δ % = (test − anchor) / anchor; \(d) = test − anchor (\(e(metric.column))).</p>\n"
            + HTML.table(headers: ["paired", "anchor run", "anchor kbit/s", "anchor \(q)\(u)", "test kbit/s", "from runs", "bitrate Δ %",
                                   "test \(q)\(u)", "from runs", d],
                         rows: cells, textColumns: [0, 5, 8], id: nil).replacingOccurrences(of: "<table>", with: "<table class=\"per-rate-table\" data-column=\"\(e(metric.column))\">")
    }
}

/// The `run_metrics` columns that hold whole numbers (counts, bytes, frame indices): shown without decimals.
let integerMetrics: Set<String> = Set(LabStore.runMetricsColumns.filter { $0.type.hasPrefix("INTEGER") }.map(\.name))
