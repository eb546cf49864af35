import EncoderLab

/// `enclab export --db FILE --table frames|runs|metrics --format csv|jsonl [--out FILE] [--run KEY|ID ...]`: one
/// table of a database as CSV or JSON Lines (``Export``).
struct ExportCommand: Command {
    let name = "export"
    let summary = "writes the frames, runs or run metrics of a database as CSV or JSON Lines"
    let operands = ""
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database to read (opened read-only, never changed)", required: true),
        Flag("--table", value: "frames|runs|metrics", about: "frames: one row per frame; runs: one row per run; metrics: one "
             + "row of the run_metrics table (made by 'enclab analyze') per run", required: true),
        Flag("--format", value: "csv|jsonl", about: "csv: RFC 4180 with a header row and CRLF line ends; jsonl: one JSON object a line",
             required: true),
        Flag("--out", value: "FILE", about: "the file to write, atomically (a temporary file beside it, then renamed onto it; a symbolic "
             + "link is followed, its target replaced); an existing character device or FIFO (/dev/null, /dev/stdout, a named pipe) "
             + "is written as it is, never replaced; its folder must exist", default: "standard output"),
        Flag("--run", value: "KEY|ID", about: "export this run's rows only: its run key (or a prefix of at least 8 hex digits), its run id or run-ID",
             default: "every run", repeatable: true),
    ]
    let about = """
        Writes a table's rows in the table's order (frames by run_id and coded_index, runs by run_id, metrics by
        its primary key), with the table's own columns in its order; frames also carry the run's run_key after
        run_id, to join with runs, and pts_time and dts_time after pts and dts (seconds from the run's timebase,
        exact, 6 decimals as ffprobe's pkt_pts_time; empty/null without a timebase). CSV fields holding a comma, a double quote, CR or LF are quoted, with double
        quotes doubled; NULL is an empty field (empty text is ""). JSON Lines give NULL as null. Numbers are
        written as SQLite stores them: integers in decimal, reals in the shortest form that reads back to the same
        double (36.41, 36.0, 1e-05). Rows are streamed, not held in memory. With --out, stdout gets one line
        counting the rows written.
        """
    var sections: [(title: String, text: String)] {
        [databaseEnvironment]
    }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "written"),
        (64, "usage: a bad flag or value, no --db, --table or --format, a --run that is malformed or an ambiguous key prefix, "
         + "an --out that is the database or its -wal, -shm or -journal file"),
        (65, "bad data: a file that is not an enclab database, or damaged"),
        (66, "the database is missing, a --run names no run in it, or --table metrics on a database without run_metrics "
         + "(run 'enclab analyze --db FILE' first)"),
        (73, "--out (or its temporary file) cannot be created: its folder is missing, or it is a folder, a socket, a block device "
         + "or a dangling symbolic link"),
        (74, "a write failed part-way (a full disk, /dev/full, a closed stdout); a regular --out is left as it was"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
    ]
    let example = """
        enclab export --db results/quickstart.sqlite --table frames --format csv --out frames.csv
        enclab export --db results/quickstart.sqlite --table runs --format jsonl --run 3 --run 7
        """

    /// `export`'s options.
    struct Options {
        var db: String
        var table: Export.Table
        var format: Export.Format
        /// Run keys or ids; empty: every run.
        var runs: [String]
        /// nil: stdout.
        var out: String?
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        try parsed.noOperands(name)
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "export needs --db FILE") }
        guard let tableText = parsed.value("--table") else { throw LabError(.usage, "export needs --table frames|runs|metrics") }
        guard let table = Export.Table(rawValue: tableText) else {
            throw LabError(.usage, "--table must be frames, runs or metrics, got '\(tableText)'")
        }
        guard let formatText = parsed.value("--format") else { throw LabError(.usage, "export needs --format csv|jsonl") }
        guard let format = Export.Format(rawValue: formatText) else {
            throw LabError(.usage, "--format must be csv or jsonl, got '\(formatText)'")
        }
        return Options(db: db, table: table, format: format, runs: parsed.all("--run"), out: try parsed.path("--out", what: "a file path"))
    }

    func run(_ o: Options) throws -> Int32 {
        let count = try Export.export(databasePath: o.db, table: o.table, format: o.format, runs: o.runs, outPath: o.out)
        if let out = o.out { print("export: \(count) \(o.table.rawValue) row\(count == 1 ? "" : "s") to \(oneLine(out))") }
        return 0
    }
}
