import EncoderLab
import Foundation

/// `enclab measure --db FILE [--run ID]... --metrics LIST`: perceptual quality added to runs already stored.
struct MeasureCommand: Command {
    let name = "measure"
    let summary = "adds libvmaf's perceptual quality (--metrics) to runs already in a database, from their streams and clips"
    let operands = ""
    let flags = [
        Flag("--db", value: "FILE", about: "the lab database whose runs are measured", required: true),
        Flag("--run", value: "KEY|ID", about: "measure this run only: its run key (or a prefix of at least 8 hex digits), its run id or run-ID; not a check run",
             default: "every done run but check runs", repeatable: true),
        Flag("--metrics", value: "LIST", about: "vmaf, vmaf-neg, vmaf-4k, psnr-hvs, ms-ssim, ssim, ciede2000, xpsnr, comma-separated (docs/quality-metrics.md)",
             required: true),
        Flag("--vmaf-ffmpeg", value: "PATH", about: "the ffmpeg built with libvmaf that scores the metrics",
             default: "$ENCLAB_VMAF_FFMPEG, else the imageio-ffmpeg binary in $ENCLAB_VENV (/opt/enclab-venv)"),
    ]
    let about = """
        Decodes each run's stored stream (libavcodec, as the verify stage does; runs made with --verify none too),
        pairs each decoded picture with the clip's picture of its display index (from the run's --seek on), scores
        the pairs with libvmaf (and the xpsnr filter) and records them in frame_quality_metrics and
        run_quality_metrics (docs/schema.md), one transaction per run; metrics measured again replace theirs, others
        stay. Nothing is encoded again and no run key changes. Stream and clip paths are read as stored: run it from
        the folder the runs were made in. The clip must still have the digest the run encoded, and the stream file the
        size the run stored (runs.bytes; the store keeps no digest of the stream). stdout gets one line per run with
        each metric's mean. A check run (a stream stored by 'enclab check --db') has no source clip to score against:
        with no --run the check runs are skipped (stderr says how many and which), and a --run naming one is refused
        (65).
        """
    var sections: [(title: String, text: String)] { [databaseEnvironment] }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "every selected run measured"),
        (64, "usage: a bad flag or metric, no --db or --metrics, a malformed --run, ms-ssim on pictures under 176 px either side"),
        (65, "bad data: a --run that is not done or is a check run (no source clip), a clip whose digest is not the run's, a stream of another size than runs.bytes or with another number of pictures, libvmaf scoring another number of frames than the run displayed, a scorer's log with a value that is no number or outside its metric's range (VMAF 0-100) or a frame number repeated or missing (the runs before stay measured)"),
        (66, "the database, a --run, a stream or a clip is missing"),
        (69, "the ffmpeg with libvmaf (--vmaf-ffmpeg, ENCLAB_VMAF_FFMPEG or the venv's) did not answer its -filters check within \(Int(VMAFFFmpeg.probeTimeLimit)) s"),
        (70, "no ffmpeg with libvmaf (the PyPI package imageio-ffmpeg; 'bash scripts/setup.sh' installs it), or ffmpeg failed"),
        (73, "the database or a run's folder cannot be written (a read-only file, folder or mount)"),
        (74, "a write failed part-way (a full disk)"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
        (130, "interrupted: the runs measured before stay measured"),
    ]
    let example = "enclab measure --db results/quickstart.sqlite --metrics vmaf,psnr-hvs,xpsnr"

    struct Options {
        var db: String
        var runs: [String]
        var metrics: String
        var vmafFFmpeg: String?
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        try parsed.noOperands(name)
        guard let db = try parsed.path("--db", what: "a database file path") else { throw LabError(.usage, "measure needs --db FILE") }
        let metrics = try parsed.required("--metrics", name, "LIST")
        _ = try QualityMetric.list(metrics)
        return Options(db: db, runs: parsed.all("--run"), metrics: metrics,
                       vmafFFmpeg: try parsed.path("--vmaf-ffmpeg", what: "the path of an ffmpeg built with libvmaf"))
    }

    func run(_ o: Options) throws -> Int32 {
        guard let request = try QualityRequest.given(o.metrics, vmafFFmpeg: o.vmafFFmpeg) else {
            throw LabError(.usage, "measure needs --metrics LIST")
        }
        try Measure.run(databasePath: o.db, runs: o.runs, request: request, skipped: { ids in
            let shown = ids.prefix(20).map(String.init).joined(separator: ", ") + (ids.count > 20 ? ", ..." : "")
            FileHandle.standardError.write(Data("measure: skipped \(ids.count) check run\(ids.count == 1 ? "" : "s") (\(shown)): stored by enclab check --db, \(ids.count == 1 ? "it has" : "they have") no source clip to score against\n".utf8))
        }) { id, scores in
            let means = scores.metrics.compactMap { m in scores.pool(m).map { "\(m.column) " + String(format: "%.4f", $0.mean) } }
            if let w = scores.missingWarning() { FileHandle.standardError.write(Data("warning: run \(id): \(w)\n".utf8)) }
            print("measured run \(id): \(scores.frames.count) frames, mean \(means.joined(separator: ", "))")
            fflush(nil)
        }
        return 0
    }
}
