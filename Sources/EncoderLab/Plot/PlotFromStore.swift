import Foundation

extension Plots {
    /// Per experiment, from the store: `rd.*` in `dir` (see ``writeExperimentPlot(points:title:metric:dir:queue:)``) from
    /// the done runs of `experiment` among `runs` (``RateDistortion/points(experiment:runs:store:metric:)``), titled
    /// "EXPERIMENT: bitrate against psnr_global", the timestamps plots that apply (``writeTimestampPlots(experiment:runs:store:dir:)``)
    /// and the VideoToolbox plots that apply (``writeVideoToolboxPlots(experiment:runs:store:dir:)``).
    /// - Throws: `.data` for a done run without bytes or duration, or with settings that are not JSON, or a damaged
    ///   keyframe or data-rate row;
    ///   `.cantCreate`, `.software` as the plot.
    public static func writeExperimentPlot(experiment: String, runs: [LabStore.RunRow], store: LabStore, dir: String) throws {
        let points = try RateDistortion.points(experiment: experiment, runs: runs, store: store)
        try writeExperimentPlot(points: points, title: "\(experiment): bitrate against \(QualityMetric.psnrGlobal.rawValue)", dir: dir)
        try writeTimestampPlots(experiment: experiment, runs: runs, store: store, dir: dir)
        try writeVideoToolboxPlots(experiment: experiment, runs: runs, store: store, dir: dir)
    }
}

/// Redraws plots from a database alone (`enclab plot --db FILE [--out DIR] [--run KEY|ID ...]`): each run's
/// `frames.*` and `psnr.*`, and each experiment's `rd.*`, with the same data files the runs wrote.
///
/// Layout under OUT (as the runs write it):
/// - a run's plots in `OUT/<first 16 hex digits of run_key>/`, or `OUT/run-ID/` for a run without a key (rows
///   of the previous version), or `OUT/<16 digits>-run-ID/` for each of a key's repeats (``folderName(_:keys:repeated:databasePath:)``);
/// - an experiment's `rd.*` in `OUT/` when the database holds done runs of one experiment, in
///   `OUT/<experiment>/` when it holds done runs of several. Runs of `enclab encode` (experiment `encode`) and streams
///   stored by `enclab check` (experiment `check`) get
///   no rd plot and do not count.
public enum PlotFromStore {
    /// The experiment name of `enclab encode`'s runs: they get no rate-distortion plot.
    static let encodeExperiment = "encode"
    /// The experiment name of streams stored by `enclab check --db`: no rate-distortion plot either (no PSNR).
    static let checkExperiment = "check"

    /// Where plots go when no `--out` is given: the database's path without its extension
    /// (`results/quickstart.sqlite` → `results/quickstart`, the folder `enclab run` writes by default), or the
    /// path with `-plots` added when its file name has no extension (`lab` → `lab-plots`).
    public static func defaultOutDirectory(databasePath: String) -> String {
        let slash = databasePath.lastIndex(of: "/").map { databasePath.index(after: $0) } ?? databasePath.startIndex
        let name = databasePath[slash...]
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex {
            return String(databasePath[..<dot])
        }
        return databasePath + "-plots"
    }

    /// Redraws plots from the database at `databasePath` into `outDirectory` (nil: ``defaultOutDirectory(databasePath:)``).
    ///
    /// - Parameter runs: the runs to draw, each a run_id (`12` or `run-12`), a whole run_key (64 hex digits) or a
    ///   prefix of one of at least 8 hex digits; empty draws every done run. The rd plots drawn are those of the
    ///   selected runs' experiments (all of them when `runs` is empty), each from all of its experiment's done runs.
    ///   A selected run that is not done is skipped with a line saying so.
    /// - Returns: one line per plot folder written ("run 3: frames and psnr plots in OUT/run-3", "experiment
    ///   quick: rd plot in OUT") or run skipped ("run 4: failed, not drawn (ERROR)"), runs first, in the order asked.
    /// - Throws: `.usage` for an empty database path, a `runs` entry that is neither an id nor a key of at least 8
    ///   hex digits, a key prefix several runs share, or a digits-only entry that is both one run's id and a
    ///   prefix of another's key, or when a run's plot folder under OUT already holds a `stream.264` that is not
    ///   that run's ("holds another run's stream: give plot its own --out", checked before anything is written;
    ///   see ``holdsOwnStream(_:streamPath:)``); `.noInput` when the database does not exist (none is created) or
    ///   no run matches an entry; `.data` for a file that is not an enclab database (an empty file or SQLite
    ///   database: left untouched, see ``LabStore/requireLabDatabase(path:busyTimeoutMilliseconds:)``), or for a
    ///   stored row the plots cannot be drawn from (a run_key that is not 64 hex digits, an experiment name that is
    ///   not a safe folder name, a done run without frames, rate or settings, a frame with a damaged size or
    ///   timestamps: ``RunPlotInput/checkFrames(_:runID:database:)``), naming the database and run; `.cantCreate` when OUT
    ///   or a plot cannot be written; `.ioError` when a plot file cannot be written in full (a full disk);
    ///   `.software` when gnuplot is missing or fails; `.interrupted` after SIGINT/SIGTERM, between plots; the store's errors
    ///   when the database cannot be opened.
    public static func redraw(databasePath: String, outDirectory: String?, runs selectors: [String]) throws -> [String] {
        if databasePath.isEmpty { throw LabError.usage("--db needs a database file path") }
        try LabStore.requireDatabaseFile(databasePath)
        _ = try Tools.require("gnuplot", package: "gnuplot-nox")
        // plot reads: a file that is not already an enclab database is refused before LabStore could give it tables.
        try LabStore.requireLabDatabase(path: databasePath)
        let store = try LabStore.reading(path: databasePath)
        let rows = try store.runs()
        let keys = try store.runKeys()
        let selected = try LabStore.select(selectors, rows: rows, keys: keys, databasePath: databasePath)
        var doneByKey: [String: Int] = [:]
        for run in rows where run.status == "done" { if let key = keys[run.runID] { doneByKey[key, default: 0] += 1 } }
        let repeated = Set(doneByKey.filter { $0.value > 1 }.keys)
        let out = outDirectory ?? defaultOutDirectory(databasePath: databasePath)
        // Before anything is written: no run's plots may land in a folder holding another run's stream.
        for run in selected where run.status == "done" {
            let dir = "\(out)/\(try folderName(run, keys: keys, repeated: repeated, databasePath: databasePath))"
            guard FileManager.default.fileExists(atPath: "\(dir)/stream.264") else { continue }
            guard holdsOwnStream(dir, streamPath: run.streamPath) else {
                throw LabError.usage("\(dir): holds another run's stream, not run \(run.runID)'s of \(databasePath) (\(run.streamPath.map { Plots.shown($0) } ?? "no stream_path stored")): give plot its own --out")
            }
        }
        // A refused plot (a damaged row) leaves no folder it made while that folder is empty.
        var made: [String] = []
        var finished = false
        defer { if !finished { OutputFiles.removeEmptyFolders(made) } }
        try OutputFiles.makeDirectory(out, made: &made)
        try OutputFiles.checkWritable(out)

        func named(_ body: () throws -> Void) throws {
            do { try body() } catch let e as LabError where e.kind == .data && e.message.hasPrefix("run ") && !e.message.hasPrefix("\(databasePath): ") {
                throw LabError(.data, "\(databasePath): \(e.message)")
            }
        }
        var lines: [String] = []
        for run in selected {
            try Interruption.check()
            guard run.status == "done" else {
                lines.append("run \(run.runID): \(run.status), not drawn\(run.error.map { " (\(Plots.shown($0)))" } ?? "")")
                continue
            }
            let dir = "\(out)/\(try folderName(run, keys: keys, repeated: repeated, databasePath: databasePath))"
            try named {
                let input = try RunPlotInput(run: run, frames: try store.frames(run: run.runID), database: databasePath)
                try Plots.writeRunPlots(input, dir: dir)
                // A run with a rate schedule: its staircase too (``writeRateStaircase(_:changes:dir:queue:)``).
                let staircase = PlotQueue()
                try Plots.writeRateStaircase(input, changes: try store.rateChanges(run: run.runID), dir: dir, queue: staircase)
                // A run with an RTP stage: its packets per frame and PSNR under loss (``writeRTPPlot(_:frames:dir:queue:)``).
                try Plots.writeRTPPlot(input, frames: try store.rtpFrames(run: run.runID), dir: dir, queue: staircase)
                try Plots.render(staircase.take())
            }
            lines.append("run \(run.runID): frames and psnr plots in \(Plots.shown(dir, limit: .max))")
        }

        let plotted = Set(rows.filter { $0.status == "done" && $0.experiment != encodeExperiment && $0.experiment != checkExperiment }.map(\.experiment))
        let wanted = selectors.isEmpty ? plotted : Set(selected.filter { $0.status == "done" }.map(\.experiment)).intersection(plotted)
        for experiment in wanted.sorted() {
            try Interruption.check()
            let dir: String
            if plotted.count == 1 {
                dir = out
            } else {
                guard experiment.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }), !experiment.hasPrefix(".") else {
                    throw LabError.data("\(databasePath): experiment name '\(Plots.shown(experiment))' is not a folder name (letters, digits, '.', '_', '-', not starting with '.')")
                }
                dir = "\(out)/\(experiment)"
                // The experiment's folder is the lab's own: a symbolic link there is refused, never written through.
                try OutputFiles.ownFolder(dir)
            }
            try named { try Plots.writeExperimentPlot(experiment: experiment, runs: rows, store: store, dir: dir) }
            lines.append("experiment \(Plots.shown(experiment)): rd plot in \(Plots.shown(dir, limit: .max))")
        }
        finished = true
        return lines
    }

    /// Whether the run folder `dir`, which holds a `stream.264`, is the folder of the run whose stored
    /// `stream_path` is `streamPath`: the real paths (``Paths/real(_:)``) of `dir` and of the stream's folder are
    /// the same. A relative `stream_path` is relative to the folder the run was made in; when it does not resolve
    /// from the current folder (plot run from elsewhere), `dir` is the run's when its real path ends with that
    /// relative folder (compared by components, `.` dropped; a `..` in it never matches this way).
    /// - Returns: false without a stored `stream_path` or when `dir` cannot be resolved.
    static func holdsOwnStream(_ dir: String, streamPath: String?) -> Bool {
        guard let streamPath, !streamPath.isEmpty, let real = Paths.real(dir) else { return false }
        let folder = Paths.parent(streamPath)
        if let stored = Paths.real(folder.isEmpty ? "." : folder) { return stored == real }
        guard !folder.hasPrefix("/") else { return false }
        let parts = folder.split(separator: "/").filter { $0 != "." }
        guard !parts.isEmpty, !parts.contains("..") else { return false }
        let realParts = real.split(separator: "/")
        return realParts.count >= parts.count && Array(realParts.suffix(parts.count)) == parts
    }

    /// Whether `text` is all ASCII hex digits (either case).
    static func isHex(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) || ("A"..."F").contains($0) }
    }

    /// A run's folder under OUT: the first 16 hex digits of its key, or `run-ID` without one; for a key with
    /// several done runs (repeats of a run that is not repeatable, merged from several databases) the key's 16 digits
    /// and `-run-ID`, one folder per repeat.
    /// - Parameter repeated: the keys of more than one done run.
    /// - Throws: `.data` when the stored key is not 64 lowercase hex digits (it would not be a safe folder name).
    static func folderName(_ run: LabStore.RunRow, keys: [Int64: String], repeated: Set<String> = [], databasePath: String) throws -> String {
        guard let key = keys[run.runID] else { return "run-\(run.runID)" }
        guard key.count == 64, isHex(key), key == key.lowercased() else {
            throw LabError.data("\(databasePath): run \(run.runID): run_key '\(Plots.shown(key, limit: 80))' is not 64 lowercase hex digits")
        }
        return repeated.contains(key) ? "\(key.prefix(16))-run-\(run.runID)" : String(key.prefix(16))
    }
}
