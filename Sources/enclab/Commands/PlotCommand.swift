import EncoderLab

/// `enclab plot --db FILE`: draws the plots of runs already in a database again, without encoding.
struct PlotCommand: Command {
    let name = "plot"
    let summary = "draws again the plots of runs already recorded in a database (no encode)"
    let operands = ""
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database whose runs are plotted", required: true),
        Flag("--out", value: "DIR", about: "the folder the plots go to", default: "the database path without its extension (results/q.sqlite -> results/q)"),
        Flag("--run", value: "KEY|ID", about: "plot this run only: its run key (or a prefix of at least 8 hex digits), its run id or run-ID",
             default: "every done run", repeatable: true),
    ]
    let about = """
        Reads the runs' frames from the database and draws their plots with gnuplot (per run frames and psnr, per
        experiment rd), as 'enclab run' does after encoding. stdout gets one line per plot written.
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

    func run(arguments: [String]) throws {
        guard let parsed = try parse(arguments) else { return }
        guard parsed.rest.isEmpty else { throw LabError(.usage, "plot takes no operands, got \(parsed.rest.joined(separator: " "))") }
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "plot needs --db FILE") }
        let out = try parsed.path("--out", what: "a folder path")
        let runs = parsed.all("--run")
        for line in try PlotFromStore.redraw(databasePath: db, outDirectory: out, runs: runs) { print(line) }
    }
}
