import EncoderLab

/// `enclab compare --db FILE RUN_A RUN_B`: two runs' metrics side by side with their differences.
struct CompareCommand: Command {
    let name = "compare"
    let summary = "prints two runs' metrics side by side with their differences"
    let operands = "RUN_A RUN_B"
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database holding both runs", required: true),
    ]
    let about = """
        RUN_A and RUN_B are run ids (12 or run-12), run keys or their first 8 or more hex digits. stdout gets one line
        per run_metrics column (docs/schema.md): its name, run A's value, run B's, the difference B - A, and
        (B - A) / |A| in % where that means something (not for values in dB, percentages, frame indices or event
        counts, nor when A is 0). NULL shows as '-'; reals with 3 decimals, or as %.6g (1e+308, 2.5e-07) from 10^12
        up and below 0.001. A run without run_metrics rows (a database not analysed since it was migrated) is
        computed afresh, without writing. Then, for each perceptual metric either run has (--metrics, enclab measure:
        docs/quality-metrics.md), four lines from run_quality_metrics: 'vmaf mean', 'vmaf harmonic_mean',
        'vmaf low_1pct', 'vmaf low_5pct' (psnr_hvs and xpsnr in dB, without %); a run without it shows '-'. The database is only read: one of this version is opened read-only, an
        older one is migrated in a temporary copy (in TMPDIR, removed afterwards), never on disk.
        """
    var sections: [(title: String, text: String)] { [databaseEnvironment] }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "the comparison is printed"),
        (64, "usage: a bad flag, no --db, not two runs, a run that is malformed or an ambiguous key prefix"),
        (65, "bad data: a database that is damaged or not the lab's, a run that is not done, a stored run_metrics value "
         + "no analysis writes (an integer outside 0...2^53, a real that is not finite, text in a number column), frames "
         + "'enclab analyze' refuses (named with the database, run and column)"),
        (66, "the database is missing, or a run is not in it"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
    ]
    let example = "enclab compare --db results/quickstart.sqlite 3 7"

    /// `compare`'s options.
    struct Options {
        var db: String
        var runA: String
        var runB: String
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "compare needs --db FILE") }
        guard parsed.rest.count == 2 else {
            throw LabError(.usage, "compare needs two runs, RUN_A RUN_B; got \(parsed.rest.count)")
        }
        return Options(db: db, runA: parsed.rest[0], runB: parsed.rest[1])
    }

    func run(_ o: Options) throws -> Int32 {
        print(try RunMetrics.compare(databasePath: o.db, runA: o.runA, runB: o.runB))
        return 0
    }
}
