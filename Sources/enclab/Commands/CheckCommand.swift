import EncoderLab
import Foundation

/// `enclab check STREAM --expect NAME=VALUE ...`: a stream from elsewhere (or a stored run) against VideoToolbox's
/// rules; exit 1 when it breaks one.
struct CheckCommand: Command {
    let name = "check"
    let summary = "checks an H.264 stream from elsewhere (raw, MP4, MOV, MKV, FLV) or a stored run against VideoToolbox's rules"
    let operands = "STREAM"
    let flags = [
        Flag("--expect", value: "NAME=VALUE", about: "a rule in Apple's name and units: MaxKeyFrameInterval (frames; 0: the encoder chooses, no frame limit), "
             + "MaxKeyFrameIntervalDuration (s; 0: no limit), DataRateLimits=BYTES,SECONDS[,BYTES,SECONDS], "
             + "AllowFrameReordering (false: no B slices, no reordering), H264EntropyMode=CAVLC|CABAC",
             required: true, repeatable: true),
        Flag("--tcfile-in", value: "FILE", about: "a timecode v2 file: entry k times the k-th frame in display order",
             default: "the container's times, else the SPS's fixed frame rate"),
        Flag("--db", value: "FILE", about: "store the stream like a run (experiment check) in this database; with --run, the database "
             + "whose run is checked", default: "nothing stored"),
        Flag("--run", value: "KEY|ID", about: "with --db and no STREAM: check this stored run (its run key, a prefix of at least 8 hex "
             + "digits, its run id or run-ID)", default: "check STREAM"),
    ]
    let about = """
        Reads STREAM: a raw Annex B H.264 stream, or a container (MP4, MOV, Matroska, FLV: any file that does not start
        with a start code) whose first video stream's packets and times ffprobe lists and whose packet bytes ffmpeg
        copies (the file is their standard input, its name never reaches them). Keyframes are IDR pictures
        (nal_unit_type 5) and picture types come from the slices, never from a container's flags. Times come from
        --tcfile-in, else the container, else the SPS's VUI timing when fixed_frame_rate_flag is 1 (a frame lasts 2 x
        num_units_in_tick / time_scale; display order from the picture order counts). A raw stream with none of them
        is checked without times against the rules that count frames (MaxKeyFrameInterval, AllowFrameReordering,
        H264EntropyMode); a rule that needs times (MaxKeyFrameIntervalDuration above 0, DataRateLimits) or --db refuses
        it, naming the rule. Packets before the start of an MP4 edit list (ffprobe's discard flag) are decoded, not
        counted: the frames are those shown. Each rule given with --expect is checked: MaxKeyFrameInterval and MaxKeyFrameIntervalDuration on
        the gaps between keyframes and from the last one to the end, and stalls (adjacent frames further apart than
        the duration) in their own class; DataRateLimits on every window [DTS, DTS + SECONDS) of decode time, a
        frame's bytes being its NAL units without start codes or length prefixes; AllowFrameReordering=false on
        every frame with a B slice or output before a frame decoded earlier; H264EntropyMode on each PPS's
        entropy_coding_mode_flag (CAVLC 0, CABAC 1). stdout gets one line per violation, "RULE=VALUE: what", then a
        summary line, then for each DataRateLimits pair kept its worst window as a ratio of the limit (a broken pair's
        line gives its worst); with --db, a line naming the run stored (frames with type, size, PTS and DTS; QP and PSNR
        NULL; parameter sets; the keyframe and data-rate analysis), so plot works on it. --db FILE --run KEY|ID
        checks a stored run the same way, from its frames (keyframes: type IDR), and stores nothing.
        """
    var sections: [(title: String, text: String)] { [databaseEnvironment] }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "no rule is broken"),
        (1, "a rule is broken: each violation is on stdout"),
        (64, "usage: a bad flag, no --expect, an unknown property (the nearest is suggested), a property that is not a rule "
            + "of a stream, a bad value, a name given twice with different values, STREAM with --run, --run without --db, --tcfile-in with --run"),
        (65, "bad data: STREAM does not parse, is not H.264, has no times (a raw stream without --tcfile-in or a fixed-rate "
            + "SPS) while a rule asked or --db needs them, a packet that is not one frame, a bad timecode file or one with fewer entries than frames; a database "
            + "that is not the lab's, a stored run that is not done"),
        (66, "STREAM, the --tcfile-in file or the --run database is missing or cannot be read, or --run names no run"),
        (70, "ffprobe or ffmpeg is missing (containers), or the lab failed"),
        (73, "--db cannot be created"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
    ]
    let example = """
        enclab check phone.mp4 --expect MaxKeyFrameInterval=30 --expect MaxKeyFrameIntervalDuration=2 --expect AllowFrameReordering=false
        enclab check nvenc.264 --tcfile-in times.txt --expect DataRateLimits=250000,1,50000,0.1 --db results/check.sqlite
        enclab check --db results/check.sqlite --run 1 --expect H264EntropyMode=CABAC
        """

    /// `check`'s options, validated: the rules, and what is checked.
    struct Options {
        /// A stream from elsewhere (with its timecode file), or a run stored in a database.
        enum Source {
            case stream(path: String, timecodePath: String?)
            case stored(databasePath: String, run: String)
        }
        var expect: StreamExpectations
        var source: Source
        /// `--db` for a stream: the database it is stored in; nil: nothing stored.
        var storeIn: String?
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        let expect = try StreamExpectations(parsing: parsed.all("--expect"))
        let db = try parsed.path("--db", what: "a database file path")
        let timecode = try parsed.path("--tcfile-in", what: "a timecode file")
        if parsed.all("--run").count > 1 {
            throw LabError(.usage, "check takes one --run, got \(parsed.all("--run").count)")
        }
        if let run = parsed.value("--run") {
            guard parsed.rest.isEmpty else {
                throw LabError(.usage, "check --run checks a stored run: give no STREAM (got \(parsed.rest.joined(separator: " ")))")
            }
            guard let db else { throw LabError(.usage, "check --run needs --db FILE, the database that holds the run") }
            guard timecode == nil else { throw LabError(.usage, "--tcfile-in goes with a STREAM, not with --run (a stored run has its times)") }
            return Options(expect: expect, source: .stored(databasePath: db, run: run), storeIn: nil)
        }
        guard parsed.rest.count == 1 else {
            throw LabError(.usage, parsed.rest.isEmpty ? "check needs a STREAM (or --db FILE --run KEY|ID)"
                           : "check takes one STREAM, got \(parsed.rest.joined(separator: " "))")
        }
        return Options(expect: expect, source: .stream(path: parsed.rest[0], timecodePath: timecode), storeIn: db)
    }

    /// - Returns: 0 when no rule is broken, 1 when one is (each violation printed).
    func run(_ o: Options) throws -> Int32 {
        let report: RuleCheckReport
        var stored: Int64?
        switch o.source {
        case .stored(let db, let run):
            report = try RuleCheck.check(try CheckRuns.storedRun(databasePath: db, run: run), o.expect)
        case .stream(let path, let timecode):
            if let db = o.storeIn { try LabStore.checkPath(db) }
            let stream = try ForeignStream.read(path: path, timecodePath: timecode)
            for w in stream.warnings { FileHandle.standardError.write(Data("warning: \(oneLine(w))\n".utf8)) }
            if o.storeIn != nil, let why = stream.timeSource.untimed {
                throw LabError(.data, "\(stream.path): no times: \(why); --db stores frames with their times (give --tcfile-in FILE)")
            }
            report = try RuleCheck.check(RuleCheckInput(stream), o.expect)
            if let db = o.storeIn { stored = try CheckRuns.record(stream, expect: o.expect, report: report, databasePath: db) }
        }
        for v in report.violations { print(oneLine(v.line)) }
        print(oneLine(report.summary))
        // Each DataRateLimits pair kept: its worst window against the limit (a broken pair's line above says its worst).
        if let rule = o.expect.rule(.dataRateLimits) {
            for (n, c) in (report.dataRateWindows ?? []).enumerated() where c.windowsOverLimit == 0 {
                guard let w = c.worst else { continue }
                // The pair's description is BYTES,SECONDS, the seconds as the rule writes them.
                let seconds = c.pair.description.split(separator: ",").last.map(String.init) ?? "?"
                print(oneLine("\(rule): pair \(n + 1), \(c.pair.bytes) bytes in \(seconds) s: kept in all \(c.windowCount) windows; the worst, frames \(w.startIndex)-\(w.endIndex) (decode order), holds \(w.bytes) bytes (\(String(format: "%.3f", w.ratio.approximateValue)) x the limit)"))
            }
        }
        if let stored, let db = o.storeIn { print("stored as run \(stored) (experiment \(CheckRuns.experiment)) in \(oneLine(db))") }
        return report.violations.isEmpty ? 0 : 1
    }
}
