import EncoderLab

/// `enclab plot --db FILE`: draws the plots of runs already in a database again, without encoding.
struct PlotCommand: Command {
    let name = "plot"
    let summary = "draws the pictures of runs already recorded in a database (no encode)"
    let operands = ""
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database whose runs are plotted", required: true),
        Flag("--out", value: "DIR", about: "the folder the plots go to", default: "beside the database, its path without the extension: results/q.sqlite -> results/q, "
             + "q.sqlite -> ./q; the --out 'encode' and 'run' use with their default --db, so their plots land in the run folders"),
        Flag("--run", value: "KEY|ID", about: "plot this run only: its run key (or a prefix of at least 8 hex digits), its run id or run-ID",
             default: "every done run", repeatable: true),
    ]
    let about = """
        Reads the runs' frames from the database and draws their plots with gnuplot (per run frames and psnr, per
        experiment rd): 'enclab encode' and 'run' leave each run's chart scripts and data but draw no picture unless
        given --plots render. stdout gets one line per plot written.
        """
    var sections: [(title: String, text: String)] {
        [databaseEnvironment]
    }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "plots drawn"),
        (64, "usage: a bad flag or value, no --db, a --run that is malformed or an ambiguous key prefix"),
        (65, "bad data: a database that is damaged or not the lab's"),
        (66, "the database is missing (none is created), or a --run names no run in it"),
        (70, "gnuplot is missing, or the lab failed"),
        (73, "--out cannot be created"),
        (74, "a write failed part-way (a full disk)"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
    ]
    let example = "enclab plot --db results/quickstart.sqlite --out results/replot --run 3 --run 7"

    /// `plot`'s options.
    struct Options {
        var db: String
        /// nil: the database path without its extension.
        var out: String?
        /// Run keys or ids; empty: every run.
        var runs: [String]
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        try parsed.noOperands(name)
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "plot needs --db FILE") }
        return Options(db: db, out: try parsed.path("--out", what: "a folder path"), runs: parsed.all("--run"))
    }

    func run(_ o: Options) throws -> Int32 {
        for line in try PlotFromStore.redraw(databasePath: o.db, outDirectory: o.out, runs: o.runs) { print(line) }
        return 0
    }
}

/// `encode`'s and `run`'s `--plots scripts|render|none` (and `--no-plots`, the same as `--plots none`): when a run's
/// charts (`frames`, `psnr`) are drawn (``Runner/PlotMode``).
enum PlotsFlag {
    static let flags = [
        Flag("--plots", value: "scripts|render|none", about: "scripts: each run's chart data and gnuplot scripts (frames.dat, frames.gp, psnr.gp), no pictures, no gnuplot on the run's path; 'enclab plot --db FILE --out DIR' draws the pictures, 'enclab report' its own; render: the pictures too (frames.png/svg, psnr.png/svg); none: nothing",
             default: "scripts"),
        Flag("--no-plots", about: "the same as --plots none"),
    ]

    /// The mode asked for; `render` is `rendered` (``Runner/PlotMode/eachRun`` for `encode`, ``Runner/PlotMode/batched`` for `run`).
    /// - Throws: `.usage` for another value, or for `--no-plots` with a `--plots` other than `none`.
    static func mode(_ parsed: ParsedArguments, rendered: Runner.PlotMode) throws -> Runner.PlotMode {
        let value = parsed.value("--plots")
        if parsed.has("--no-plots") {
            guard value == nil || value == "none" else {
                throw LabError(.usage, "--no-plots contradicts --plots \(value!); give one of them")
            }
            return .none
        }
        switch value {
        case nil, "scripts": return .scripts
        case "render": return rendered
        case "none": return .none
        case let other?: throw LabError(.usage, "--plots needs scripts, render or none, got '\(other)'")
        }
    }
}
