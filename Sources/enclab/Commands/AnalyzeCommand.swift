import EncoderLab
import Foundation

/// `enclab analyze --db FILE [--run ID]...`: (re)computes the run metrics (`run_metrics`, `run_gops`) and the step
/// response (`step_response`) from the store.
struct AnalyzeCommand: Command {
    let name = "analyze"
    let summary = "computes again the run metrics (run_metrics, run_gops, step_response) of runs already in a database"
    let operands = ""
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database whose runs are analysed", required: true),
        Flag("--run", value: "KEY|ID", about: "analyse this run only: its run key (or a prefix of at least 8 hex digits), its run id or run-ID",
             default: "every done run", repeatable: true),
    ]
    let about = """
        Reads each run's frames, settings and timestamps from the database and writes its rows in run_metrics and
        run_gops (docs/schema.md), replacing those it had: bitrate over the span, error against the target,
        peak 1-second and per-GOP bitrate, frame sizes per type, GOPs, PSNR pooled in named ways from the lab's own
        squared errors, SSIM, QP per type, VBV underflows; and, for a run with a rate schedule, the step response of
        each change (step_response, docs/rate-control-in-motion.md) from its stored rate_changes. The encoder is not needed; runs recorded by 'enclab check
        --db' are analysed too. Each run is one transaction. Progress goes to stderr (a bar on a terminal, plain lines
        otherwise); stdout gets one line per run analysed. Running it twice gives the same rows.
        """
    var sections: [(title: String, text: String)] { [databaseEnvironment] }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "every selected run analysed"),
        (64, "usage: a bad flag, no --db, a --run that is malformed or an ambiguous key prefix"),
        (65, "bad data: a database that is damaged or not the lab's, a --run that is not done, a frame whose size_bytes is "
         + "outside 0...2^40 or pts/dts outside -2^60...2^60, a column holding NULL or text where a number belongs (named "
         + "with the database, run, frame and value; the runs before stay analysed)"),
        (66, "the database is missing (none is created), or a --run names no run in it"),
        (74, "a write failed part-way (a full disk)"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
        (130, "interrupted: the runs analysed before stay analysed"),
    ]
    let example = "enclab analyze --db results/quickstart.sqlite\nenclab analyze --db results/quickstart.sqlite --run 3 --run 7"

    /// `analyze`'s options.
    struct Options {
        var db: String
        /// Run keys or ids; empty: every run.
        var runs: [String]
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        try parsed.noOperands(name)
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "analyze needs --db FILE") }
        return Options(db: db, runs: parsed.all("--run"))
    }

    func run(_ o: Options) throws -> Int32 {
        // One line per run as it commits, flushed, so an interrupted or failed analysis keeps the lines of the runs done.
        try RunMetrics.analyze(databasePath: o.db, runs: o.runs) { id in
            print("analysed run \(id)")
            fflush(nil)
        }
        return 0
    }
}
