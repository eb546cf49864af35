import EncoderLab
import Foundation

/// `enclab report --db FILE`: a static HTML report of the runs already in a database.
struct ReportCommand: Command {
    let name = "report"
    let summary = "writes an HTML report of a database: runs, metrics, rate-quality curves, BD-rate, overlays, run pages"
    let operands = ""
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database reported on (read only: nothing is encoded)", required: true),
        Flag("--out", value: "DIR", about: "the folder the report goes to (index.html there); written beside it and moved into place at the end, replacing only a previous report",
             default: "the database path without its extension, plus -report (results/q.sqlite -> results/q-report)"),
        Flag("--experiment", value: "NAME", about: "report this experiment only", default: "every experiment"),
        Flag("--anchor", value: "CONFIG", about: "the configuration the BD-rate tables compare against, as the report names it (\"crf\", \"abr bframes=0\"); wins over the experiment file's report.anchor",
             default: "the experiment file's report.anchor, else each experiment's first configuration"),
        Flag("--runs", value: "ID,...", about: "give these runs (run ids, separated by commas) a page", default: "none by id"),
        Flag("--worst", value: "N", about: "give the N runs of each experiment with the lowest psnr_global a page",
             default: "\(Report.defaultPages) when none of --runs, --worst, --best is given, else 0"),
        Flag("--best", value: "N", about: "give the N runs of each experiment with the highest psnr_global a page",
             default: "\(Report.defaultPages) when none of --runs, --worst, --best is given, else 0"),
        Flag("--overlay", value: "ID,...", about: "the runs shown at first on their experiment's overlay charts (run ids, separated by commas; each a done run with frames)",
             default: "per clip, one rate of each configuration"),
        Flag("--metric", value: "METRIC", about: "the quality the rate-quality curves and the BD-rate table are on: psnr (run_metrics.psnr_global), or one of --metrics' names "
             + "(vmaf, vmaf-neg, vmaf-4k, psnr-hvs, ms-ssim, ssim, ciede2000, xpsnr), each run's mean of frames (run_quality_metrics); runs without it are named, not drawn",
             default: "psnr"),
    ]
    let about = """
        Reads the database only (no encode, no server, nothing from the network) and writes OUT/index.html listing the
        experiments; per experiment a page with what the numbers cannot say (short clips, too few points, CBR filler,
        unverified runs, non-increasing PTS), the runs in a sortable table (10 columns, the other metrics behind a
        column chooser), the rate-quality curves (one per clip and configuration: the rate-control mode and the grid
        settings other than qp, crf, bitrate and vbv-*), a BD-rate table (PCHIP and cubic) against the anchor (per-rate
        differences below 4 points; --metric vmaf puts the curves and that table on VMAF, BD-VMAF beside BD-rate, and
        runs lacking it are named), beside it a BD-rate table with a column per metric the runs have (psnr and those
        of --metrics, AWCY-style), and chosen runs overlaid (--overlay, each in its configuration's colour and marker); per chosen run (and every run stored by check --db) a page
        with its rules' badges and violations, frame sizes by type, windowed bitrate, PSNR and SSIM per frame, the
        stored perceptual metrics per frame (--metrics), keyframe
        timeline, VBV occupancy, PTS and DTS steps and the worst-PSNR frame, source beside decoded. The charts are
        interactive (Debian's libjs-dygraphs, copied into OUT/assets: drag zooms, shift-drag pans, double-click resets,
        hover shows a frame's values); each also as a gnuplot picture with its .gp script and data file beside it. A
        run whose stream or source file is missing here is reported as such, and so is a run encoded with --verify none
        (its PSNR is x264's, unverified). stdout gets the report's index path.
        """
    var sections: [(title: String, text: String)] {
        [databaseEnvironment]
    }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "report written (runs with missing files included, marked)"),
        (64, "usage: a bad flag or value (a --metric that is not a metric), no --db, an --experiment or --anchor that names nothing in the database, an --overlay id that names no done run with frames"),
        (65, "bad data: a database that is damaged or not the lab's (a run_metrics value that is text or out of range included), or (without --anchor) an experiment file's report.anchor that names no configuration of its experiment"),
        (66, "the database is missing (none is created), or a --runs id names no run in it"),
        (70, "gnuplot or ffmpeg is missing, or the lab failed"),
        (73, "--out cannot be created, or is there and is not a previous report (a folder holding .enclab-report) or an empty folder"),
        (74, "a write failed part-way (a full disk)"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
        (130, "interrupted"),
    ]
    let example = """
        enclab report --db results/quickstart.sqlite --anchor crf --worst 3 --best 3
        enclab report --db results/q.sqlite --metric vmaf
        """

    func options(_ parsed: ParsedArguments) throws -> Report.Options {
        try parsed.noOperands(name)
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "report needs --db FILE") }
        func count(_ flag: String) throws -> Int? {
            guard let value = parsed.value(flag) else { return nil }
            guard let n = Int(value), n >= 0 else { throw LabError(.usage, "\(flag) needs a whole number, 0 or more, got '\(value)'") }
            return n
        }
        func ids(_ flag: String) throws -> [Int64]? {
            guard let value = parsed.value(flag) else { return nil }
            return try value.split(separator: ",", omittingEmptySubsequences: false).map { word in
                let id = word.hasPrefix("run-") ? word.dropFirst(4) : word
                guard let n = Int64(id), n > 0 else { throw LabError(.usage, "\(flag) needs run ids separated by commas (3,7,12), got '\(value)'") }
                return n
            }
        }
        return Report.Options(databasePath: db, outDirectory: try parsed.path("--out", what: "a folder path"),
                              experiment: parsed.value("--experiment"), anchor: parsed.value("--anchor"),
                              runs: try ids("--runs"), worst: try count("--worst"), best: try count("--best"), overlay: try ids("--overlay"),
                              metric: try parsed.value("--metric").map { try CurveMetric($0) } ?? .psnr)
    }

    func run(_ options: Report.Options) throws -> Int32 {
        let summary = try Report.build(options) { Progress(label: "report", total: $0, unit: "pages") }
        print(summary.index)
        if !summary.missingStreams.isEmpty || !summary.missingSources.isEmpty {
            let s = summary.missingStreams, c = summary.missingSources
            let parts = [s.isEmpty ? nil : "stream missing for run\(s.count == 1 ? "" : "s") \(s.map(String.init).joined(separator: ", "))",
                         c.isEmpty ? nil : "source missing for run\(c.count == 1 ? "" : "s") \(c.map(String.init).joined(separator: ", "))"]
            FileHandle.standardError.write(Data("enclab: note: \(parts.compactMap { $0 }.joined(separator: "; ")) (marked in the report)\n".utf8))
        }
        return 0
    }
}
