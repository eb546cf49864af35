import EncoderLab
import Foundation

/// `enclab run EXPERIMENT.json`: every run of an experiment file, then its rate-distortion plot.
struct RunCommand: Command {
    let name = "run"
    let summary = "every run of an experiment file (clips x grid of settings), then its rate-distortion plot"
    let operands = "EXPERIMENT.json"
    let flags = [
        Flag("--db", value: "FILE", about: "the SQLite database the runs are recorded in", default: "results/NAME.sqlite, NAME from the experiment file"),
        Flag("--out", value: "DIR", about: "the folder for the runs' streams and plots", default: "results/NAME"),
        Flag("--max-runs", value: "N", about: "refuse an experiment of more runs than N, counted before any is built",
             default: String(Experiment.defaultMaxRuns)),
        Flag("--verify", value: "full|none", about: "every run's verify setting (over the experiment's): full decodes each stream, none stores x264's PSNR, runs marked unverified",
             default: "the experiment's, else full"),
        Flag("--force", about: "run even the runs whose run key the database holds done"),
        Flag("--mkv", about: "also write each run's stream as stream.mkv (Matroska, mkvmerge) with the PTS x264 returned, to the microsecond"),
    ] + PlotsFlag.flags + MetricsFlags.flags(metricsDefault: "none, or the experiment's 'metrics'") + [
        Flag("--jobs", value: "N", about: "encode up to N runs at once (it never changes a run: x264's threads come from the settings)",
             default: "the cores divided by the largest x264 thread count of the runs, at least 1"),
        Flag("--shard", value: "K/N", about: "run only shard K of N (1 <= K <= N): the runs whose index in the expanded experiment, from 0, is K-1 modulo N; merge the shards' databases with 'enclab merge'",
             default: "every run"),
    ]
    let about = """
        Expands the experiment into its runs (every clip times every combination of the grid's values), checks every
        run's settings and clips (x264 opens an encoder for each) before the first starts, then encodes, verifies
        and records each as 'enclab encode' does (each run's chart data and scripts written, its pictures not drawn:
        'enclab plot --db DB --out DIR' draws them; with --plots render all of them once the runs are done, in one
        gnuplot process), and draws rd.png/rd.svg (bitrate against mean PSNR) in the output folder. stdout gets two lines per run (its line and its answers, as 'enclab encode' prints them), then a summary; stderr gets a progress line per run (a bar
        redrawn in place on a terminal): runs done of the total, runs per second, time left.

        Up to --jobs runs are encoded and verified at once, while one writer records each as it ends (one
        transaction per run). Runs already done (by run key) are skipped, so a stopped or killed sweep is resumed by
        running it again. A run's key holds its effective x264 thread count (x264's automatic count, 1.5 x the
        cores, when 'threads' is not set), so fix 'threads' in experiments meant to be resumed on another machine
        or sharded across machines.
        """
    var sections: [(title: String, text: String)] {
        [("Experiment file (JSON)", """
              {"name": "tiny", "clips": ["clip.y4m"], "base": {"preset": "fast", "threads": 1},
               "grid": {"mode": [{"rc": "crf", "crf": 23}, {"rc": "cbr", "bitrate": 600}], "bframes": [0, 3]}}
              name: letters, digits, '.', '_', '-' (names the default database and folder); clips: paths relative to
              the file's folder; base: settings by x264 CLI name without dashes (true: a flag without argument);
              grid: setting name to a list of values (an entry may be an object of settings applied together);
              description: optional text; metrics: what libvmaf scores in every run ("vmaf,psnr-hvs" or a list; --metrics
              overrides it; never part of a run key). Any other key is refused.
            """),
         databaseEnvironment]
    }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "every run is done"),
        (64, "usage: a bad flag or value, a bad experiment file (unknown key, setting or value, contradictory settings), more runs than --max-runs, a run folder that another database made under the same --out"),
        (65, "bad data: a malformed clip or experiment JSON, a frame damaged midway (that run is recorded failed), a database that is not the lab's"),
        (66, "the experiment file or one of its clips is missing or not a regular file"),
        (69, "the ffmpeg with libvmaf (--vmaf-ffmpeg, ENCLAB_VMAF_FFMPEG or the venv's) did not answer its -filters check within \(Int(VMAFFFmpeg.probeTimeLimit)) s"),
        (70, "ffmpeg or gnuplot is missing, --metrics without an ffmpeg with libvmaf (the PyPI package imageio-ffmpeg), or the lab failed"),
        (73, "--out or --db cannot be created"),
        (74, "a write failed part-way (a full disk)"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
        (130, "interrupted by SIGINT or SIGTERM (the runs under way are recorded failed, the finished ones kept)"),
    ]
    let example = """
        enclab run experiments/quickstart.json --db results/quickstart.sqlite --out results/quickstart
        enclab run experiments/quickstart.json --jobs 2 --shard 1/4 --db /tmp/shard1.sqlite --out /tmp/shard1
        """

    /// `run`'s options, validated.
    struct Options {
        var experimentPath: String
        /// nil: results/NAME.sqlite, NAME from the experiment.
        var db: String?
        /// nil: results/NAME.
        var out: String?
        var maxRuns = Experiment.defaultMaxRuns
        /// Over every run's verify setting; nil: the experiment's.
        var verify: VerifyMode?
        var force = false
        var mkv = false
        var plots = Runner.PlotMode.scripts
        /// `--metrics` as given (checked by ``QualityMetric/list(_:flag:)``), nil without it.
        var metrics: String?
        var vmafFFmpeg: String?
        /// nil: the cores divided by the largest x264 thread count.
        var jobs: Int?
        var shard: Sweep.Shard?
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        let out = try parsed.path("--out", what: "a folder path")
        var maxRuns = Experiment.defaultMaxRuns
        if let value = parsed.value("--max-runs") {
            guard let n = Int(value), n > 0 else { throw LabError(.usage, "--max-runs needs a whole number above 0, got '\(value)'") }
            maxRuns = n
        }
        let rest = parsed.rest
        guard rest.count == 1 else {
            throw LabError(.usage, rest.isEmpty ? "run needs an EXPERIMENT.json" : "run takes one experiment file, got \(rest.joined(separator: " "))")
        }
        var o = Options(experimentPath: rest[0])
        o.db = parsed.value("--db")
        o.out = out
        o.maxRuns = maxRuns
        if let value = parsed.value("--jobs") {
            guard value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value), n >= 1, n <= 1024 else {
                throw LabError(.usage, "--jobs needs a whole number from 1 to 1024, got '\(value)'")
            }
            o.jobs = n
        }
        o.shard = try parsed.value("--shard").map(Sweep.Shard.init(parsing:))
        if let verify = parsed.value("--verify") {
            // The message of the setting itself (as an experiment's "verify" gets).
            var probe = EncodeSettings()
            try probe.set("verify", verify)
            o.verify = probe.verify
        }
        o.force = parsed.has("--force")
        o.mkv = parsed.has("--mkv")
        o.plots = try PlotsFlag.mode(parsed, rendered: .batched)
        (o.metrics, o.vmafFFmpeg) = try MetricsFlags.parse(parsed)
        return o
    }

    func run(_ o: Options) throws -> Int32 {
        var experiment = try Experiment(path: o.experimentPath, maxRuns: o.maxRuns)
        if let verify = o.verify {
            for k in experiment.runs.indices { experiment.runs[k].settings.verify = verify }
        }
        // gnuplot unless --plots none: the experiment's rd.png is drawn at its end (and each run's pictures with render).
        try Runner.requireTools(gnuplot: o.plots != .none)
        let shard = o.shard
        let runs = shard.map { $0.share(of: experiment.runs) } ?? experiment.runs
        let checked = try Runner.check(runs, experiment: experiment.name)
        if o.mkv { try Runner.requireMatroska() }
        // --metrics (over the experiment's 'metrics'): the ffmpeg with libvmaf found and every clip checked first.
        let quality = try QualityRequest.given(o.metrics ?? experiment.metrics.map(\.rawValue).joined(separator: ","), vmafFFmpeg: o.vmafFFmpeg)
        if let quality {
            for c in checked { try QualityMetric.check(quality.metrics, width: c.input.width, height: c.input.height, clip: c.clipPath) }
        }
        let lab = try Runner(databasePath: o.db ?? "results/\(experiment.name).sqlite", outDirectory: o.out ?? "results/\(experiment.name)",
                          force: o.force)
        lab.matroska = o.mkv
        lab.quality = quality
        lab.plotMode = o.plots
        let progress = Progress(label: "run", total: checked.count, unit: "runs", everyStep: true)
        defer { progress.finish() }
        let outcomes: [RunOutcome]
        var answerError: (any Error)?
        do {
            outcomes = try lab.run(experiment, checked: checked,
                                   jobs: o.jobs ?? Sweep.defaultJobs(threadsPerRun: checked.map(\.resolved.threads))) {
                print(describe($0))
                // The store answers on the calling thread, where the writer calls this after recording the run.
                do {
                    print(describe(try lab.store.answers(runID: $0.runID), runID: $0.runID))
                } catch {
                    if answerError == nil { answerError = error }
                }
                fflush(nil)
                progress.advance(detail: oneLine($0.settingsText))
            }
        } catch {
            lab.discardIfUnused()
            throw error
        }
        if let answerError { throw answerError }
        let skipped = outcomes.filter(\.alreadyDone).count
        // A resumed sweep whose stored runs are not repeatable compares them with this process's encodes: said.
        let mixed = outcomes.filter { $0.alreadyDone && $0.repeatable == false }.count
        let mixedNote = mixed == 0 ? "" : ", \(mixed) of them not repeatable (x264 with several threads under VBV, or --non-deterministic): their stored bytes are one sample each, from an earlier process; \(Repeatability.advice)"
        print("\(outcomes.count) runs done\(shard.map { " (shard \($0) of \(experiment.runs.count) runs)" } ?? "")\(skipped > 0 ? " (\(skipped) already done before\(mixedNote))" : ""): database \(lab.store.database.path), plots in \(lab.outDirectory)")
        return 0
    }
}
