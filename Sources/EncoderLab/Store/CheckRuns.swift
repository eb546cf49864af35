import Foundation
import H264

/// `enclab check` and the store: a checked stream recorded like a run, and a stored run read back to be checked.
///
/// The store knows Analysis's types (it writes their results: ``RuleCheckReport``, and reads a run back as a
/// ``RuleCheckInput``); Analysis knows nothing of the store. So these are the store's functions, not an extension of
/// ``RuleCheck``.
public enum CheckRuns {
    /// The experiment name of the runs `enclab check --db` records.
    public static let experiment = "check"

    /// Records a checked stream as a `done` run of experiment `check` in the database at `databasePath` (created when
    /// missing), in one transaction, and returns its run_id:
    /// - `runs`: `clip` and `stream_path` the stream's path as given (normalised), `clip_sha256` its bytes' digest,
    ///   `run_key` and `x264_version` NULL, `ffmpeg_version` when ffprobe and ffmpeg read a container, the picture
    ///   size of the first SPS, `fps_num`/`fps_den` the nominal rate (``ForeignStream/frameRate``), the timebase of
    ///   the times, `duration_s` from the first PTS to the end; `settings` `{"check": {"expect": {NAME: VALUE},
    ///   "times", "format", "end_pts", "timecode"}, "label", "x264_args": "", "axes": {}, "resolved": {"rc_method":
    ///   "unknown"}}`; `warnings` what reading the stream accepted with a warning;
    /// - `frames`: type, `keyframe` (1 for IDR), sizes as stored (``ForeignStream/Frame/sizeBytes``), PTS/DTS;
    ///   `qp`, PSNR, SSIM and `input_pts` NULL;
    /// - `parameter_sets`: every SPS and PPS, an avcC record's with `nal_unit_index` NULL;
    /// - `keyframe_analysis` and `keyframe_violations` (``RuleCheckReport/keyframes``; `forced` empty: nothing
    ///   was forced), `data_rate_windows` with DataRateLimits;
    /// - `run_metrics` and `run_gops` (``RunMetrics``; NULL where a foreign stream has no data: QP, PSNR, target).
    /// - Throws: the store's errors (``LabStore/init(path:busyTimeoutMilliseconds:)``,
    ///   ``LabStore/recordRun(_:replacing:beforeCommit:)``); `.noInput` when the stream can no longer be read to
    ///   hash it.
    public static func record(_ stream: ForeignStream, expect: StreamExpectations, report: RuleCheckReport, databasePath: String,
                              createdAt: Date = Date()) throws -> Int64 {
        let sha = try SHA256.file(stream.path)
        let shown = Paths.normalized(stream.path)
        var check: [String: Any] = ["expect": expect.rules, "times": stream.timeSource.name, "format": stream.format,
                                    "end_pts": stream.endPTS]
        if case .timecode(let path) = stream.timeSource { check["timecode"] = path }
        let settings: [String: Any] = ["check": check, "label": expect.ruleNames.joined(separator: " "), "x264_args": "",
                                       "axes": [String: Any](), "resolved": ["rc_method": "unknown"]]
        let settingsJSON = JSON.string(settings)
        let start = LabStore.RunStart(experiment: experiment, clip: shown, settingsJSON: settingsJSON, crop: nil,
                                      ffmpegVersion: stream.format == "annexb" ? nil : Tools.ffmpegVersion(),
                                      width: stream.width, height: stream.height,
                                      fpsNum: Int(stream.frameRate.numerator), fpsDen: Int(stream.frameRate.denominator))
        let frames = stream.frames.map {
            EncodedFrame(codedIndex: $0.codedIndex, displayIndex: $0.displayIndex, type: $0.type, pts: $0.pts, dts: $0.dts,
                         sizeBytes: $0.sizeBytes, headerBytes: $0.headerBytes, fillerBytes: $0.fillerBytes)
        }
        let first = stream.frames.map(\.pts).min() ?? 0
        // Wide: a span that does not fit 64 bits is no span (``RuleCheck/checkTimes(_:)`` refuses such times first).
        let span = Int64(exactly: Int128(stream.endPTS) - Int128(first)).flatMap { try? stream.timebase.times($0) }?.approximateValue ?? 0
        // No decode of a foreign stream: no frame has a quality of the lab's.
        var measured = RunMeasurements(
            frames: frames, quality: Array(repeating: nil, count: frames.count), decoded: [],
            timebaseNum: Int(stream.timebase.numerator), timebaseDen: Int(stream.timebase.denominator),
            durationSeconds: span, inputFrames: frames.count, truncatedBytes: nil, settingsJSON: settingsJSON,
            verification: StreamVerification(accessUnits: [], checks: [], parameterSets: stream.parameterSets))
        measured.keyframes = report.keyframes
        measured.dataRateWindows = report.dataRateWindows
        measured.qpKnown = false
        var record = LabStore.RunRecord(start: start, createdAt: createdAt, warnings: stream.warnings, outcome: .done(measured),
                                        runKey: nil, clipSHA256: sha, x264Version: nil)
        record.streamPath = { _ in shown }
        let store = try LabStore(path: databasePath)
        return try store.recordRun(record) { runID in try RunMetrics.record(store: store, runID: runID) }
    }

    /// A stored run as check input (`enclab check --db FILE --run KEY|ID`): its frames from `frames` (keyframes:
    /// type IDR; B slices: type B or Bref; output order: `display_index`), its PPSs from `parameter_sets` (those
    /// with `new_content` 1), its timebase from `runs`, its end from `settings.check.end_pts` when it was recorded
    /// by check, else the last PTS plus the gap before it (1 tick for one frame). DataRateLimits counts
    /// `size_bytes`, the frames' bytes as stored (start codes or length prefixes included, a few bytes per NAL unit
    /// more than the stream's own check counts): the summary says so.
    /// - Parameter run: a run id (`12`, `run-12`), a run key or its first 8 or more hex digits.
    /// - Throws: `.usage` for a malformed or ambiguous `run`; `.noInput` when the database or the run is missing;
    ///   `.data` for a database that is not the lab's, a run that is not done or has no frames or timebase; the
    ///   store's errors.
    public static func storedRun(databasePath: String, run selector: String) throws -> RuleCheckInput {
        try LabStore.requireDatabaseFile(databasePath)
        try LabStore.requireLabDatabase(path: databasePath)
        let store = try LabStore.reading(path: databasePath)
        let rows = try store.runs()
        let run = try LabStore.select([selector], rows: rows, keys: try store.runKeys(), databasePath: databasePath)[0]
        let name = "run \(run.runID) of \(databasePath)"
        guard run.status == "done" else { throw LabError.data("\(name): status \(run.status), it has no frames to check") }
        guard let n = run.timebaseNum, let d = run.timebaseDen, n > 0, d > 0, let timebase = try? Rational(Int64(n), Int64(d)) else {
            throw LabError.data("\(name): timebase_num/timebase_den are not two numbers above 0")
        }
        let rowsOfFrames = try store.frames(run: run.runID)
        guard !rowsOfFrames.isEmpty else { throw LabError.data("\(name): done, but no frames are stored") }
        // Stored times in the range every reader holds them to, so the end and the spans below cannot overflow.
        for f in rowsOfFrames {
            try FrameRanges.check(codedIndex: Int64(f.codedIndex), sizeBytes: Int64(f.sizeBytes), pts: f.pts, dts: f.dts,
                                   runID: run.runID, database: databasePath, use: "checked")
        }
        let frames = rowsOfFrames.map {
            RuleCheckInput.Frame(codedIndex: $0.codedIndex, displayIndex: $0.displayIndex, type: $0.type, pts: $0.pts, dts: $0.dts,
                                 bytes: $0.sizeBytes, hasBSlices: $0.type == "B" || $0.type == "Bref", outputRank: $0.displayIndex)
        }
        let settings = (try? JSONSerialization.jsonObject(with: Data(run.settingsJSON.utf8))) as? [String: Any]
        let check = settings?["check"] as? [String: Any]
        let byDisplay = frames.map(\.pts).sorted()
        var end: Int64
        if let stored = (check?["end_pts"] as? NSNumber)?.int64Value, let last = byDisplay.last, stored > last {
            end = stored
        } else {
            let last = byDisplay[byDisplay.count - 1]
            let gap = byDisplay.count > 1 ? byDisplay[byDisplay.count - 1] - byDisplay[byDisplay.count - 2] : 1
            end = last + max(1, gap)
        }
        var ppss: [RuleCheckInput.PPS] = []
        for r in try store.database.rows("""
            SELECT id, nal_unit_index, entropy_coding_mode_flag FROM parameter_sets
            WHERE run_id = ? AND kind = 'pps' AND new_content = 1 ORDER BY occurrence
            """, [.integer(run.runID)]) {
            guard let flag = r["entropy_coding_mode_flag"].int else { continue }
            ppss.append(RuleCheckInput.PPS(id: Int(try r.integer("id")), place: r["nal_unit_index"].int.map { "NAL unit \($0)" } ?? "out of band",
                                           entropyCodingModeFlag: Int(flag)))
        }
        let times = (check?["times"] as? String).map { "the stored run (\($0))" } ?? "the stored run"
        return RuleCheckInput(name: name, timebase: timebase, frames: frames, endPTS: end, pictureParameterSets: ppss.isEmpty ? nil : ppss,
                              timesFrom: times, bytesNote: "DataRateLimits counts frames.size_bytes, start codes or length prefixes included")
    }
}
