import EncoderLab
import Foundation

/// `enclab encode INPUT [x264 flags] [--vt NAME=VALUE ...] [--vt-compat]`: one encode of one clip, verified, plotted and
/// recorded. `--vt` and `--vt-compat` are handed to the same parser as `--vt=NAME=VALUE` and `--vt-compat`
/// (``EncodeSettings/set(_:_:)``), which maps VideoToolbox's properties onto x264's options.
///
/// The lab's own flags are in ``flags`` and are taken out wherever they stand; every other word goes, in order, to
/// x264's flag parser (`EncodeSettings.parse`), which tells INPUT from flags and values and refuses what it does
/// not know: a flag this command does not take is one that neither the lab nor x264 knows.
struct EncodeCommand: Command {
    let name = "encode"
    let summary = "one encode of INPUT (.y4m, or any file ffmpeg decodes) by libx264 (its own flags) or OpenH264 (--encoder openh264)"
    let operands = "INPUT [x264 flags]"
    let flags = [
        Flag("--rc", value: "cqp|crf|abr|cbr|vbr", about: "the lab's rate-control mode on top of x264's options",
             default: "x264's own method, the last of --qp, --crf, --bitrate (CRF 23 with none)"),
        Flag("--encoder", value: "x264|openh264", about: "the encoder: libx264, or Cisco's libopenh264 (WebRTC's software encoder; docs/openh264.md)",
             default: "x264"),
        Flag("--openh264", value: "FIELD=VALUE", about: "an OpenH264 SEncParamExt field by its codec_app_def.h name (also as --NAME VALUE), with --encoder openh264",
             default: "none", repeatable: true),
        Flag("--vt", value: "NAME=VALUE", about: "a VideoToolbox property in Apple's name and unit, mapped onto x264 (docs/videotoolbox.md)",
             default: "none", repeatable: true),
        Flag("--vt-compat", about: "resolve VideoToolbox combinations as VideoToolbox is reported to (docs/videotoolbox.md)"),
        Flag("--verify", value: "full|none", about: "full: decode the stream and store the lab's PSNR; none: skip the decode and store x264's, the run marked unverified (a run key of its own)",
             default: "full"),
        Flag("--db", value: "FILE", about: "the SQLite database the run is recorded in", default: "results/encode.sqlite"),
        Flag("--out", value: "DIR", about: "the folder for the run's stream and plots", default: "results/encode"),
        Flag("--force", about: "encode even when the database holds a done run with the same run key"),
        Flag("--mkv", about: "also write each run's stream as stream.mkv (Matroska, mkvmerge) with the PTS x264 returned, to the microsecond"),
    ] + MetricsFlags.flags(metricsDefault: "none") + PlotsFlag.flags
    let about = """
        Encodes INPUT once with libx264, verifies the stream (parsed back, and decoded by libavcodec), records the run
        frame by frame in the database and writes its two charts' data and gnuplot scripts (frames.dat, frames.gp,
        psnr.gp) in the run's folder. The pictures are not drawn on the run's path (gnuplot would cost a short run
        more than its verification): 'enclab plot --db DB --out DIR' draws frames.png/svg and psnr.png/svg into the
        run folders from the database, 'enclab report' draws its own charts, --plots render draws them now.
        A .y4m is read natively; any other file is decoded by ffmpeg.
        Settings, clip and tools are checked before anything is written: bad input leaves no database or folder.
        stdout gets two lines: run id, clip, settings, frames, bytes, kbit/s, mean PSNR and the stream's path; then the
        run's answers: the largest GOP in frames and the longest in seconds (maybe two GOPs), the 1-s peak against the
        target bitrate (a ratio) and each VideoToolbox rule's violations (keyframe limits; DataRateLimits windows over
        each pair, the worst as a ratio).
        """
    var sections: [(title: String, text: String)] {
        [("x264 flags (every other flag goes to x264's flag parser)", """
              x264 CLI names, defaults and units, as --name VALUE, --name=VALUE or the short forms -I -i -b -q -B -r -f
              -m -A -t -w -8: --preset, --tune, --profile, --qp, --crf, --bitrate (kbit/s), --vbv-maxrate (kbit/s),
              --vbv-bufsize (kbit), --nal-hrd, --keyint, --min-keyint, --scenecut, --bframes, --b-pyramid, --no-cabac,
              --open-gop, --threads, --ref, --level, --frames N (0: every frame), --seek N, and every other option
              x264_param_parse knows ('x264 --fullhelp' lists them). A name neither the lab nor x264 knows is refused.
              Not supported (they change the input, output or passes): --qpfile --tcfile-out --timebase
              --pulldown --vf --input-* --output-* --demuxer --muxer --index --output --dump-yuv --pass --stats --fps
              --range. Accepted and ignored: --quiet --verbose --log-level --no-progress --thread-input --psnr --ssim.
            """),
         ("VideoToolbox properties (--vt NAME=VALUE; docs/videotoolbox.md has the mapping and its sources)", """
              Apple's names, with or without kVTCompressionPropertyKey_, in Apple's units; booleans true/false/1/0:
              AverageBitRate (bit/s)   DataRateLimits=BYTES,SECONDS[,BYTES,SECONDS]
              MaxKeyFrameInterval (frames; 0: the encoder chooses, no frame limit)
              MaxKeyFrameIntervalDuration (s; 0: no limit)   AllowFrameReordering   H264EntropyMode=CAVLC|CABAC
              ProfileLevel=H264_Main_4_1 (Apple's H.264 list; Extended and ConstrainedHigh are refused)   RealTime
              ExpectedFrameRate (frames/s)   AllowOpenGOP   ConstantBitRate, VariableBitRate, VBVMaxBitRate (bit/s)
              VBVBufferDuration (s, default 2.5)   VBVInitialDelayPercentage (0-100, default 90)
              MaxFrameDelayCount (frames a picture may be held; caps x264's lookahead, B-frames, frame threads)
              An x264 flag that sets the same parameter wins over the property, with a warning naming both.
            """),
         ("OpenH264 (--encoder openh264; docs/openh264.md has the mapping and what OpenH264 settles on)", """
              SEncParamExt fields by codec_app_def.h's names, as --openh264 NAME=VALUE or --NAME VALUE; rates in bit/s:
              iRCMode quality|bitrate|bufferbased|timestamp|off   iTargetBitrate   iMaxBitrate   uiIntraPeriod
              bEnableFrameSkip   iEntropyCodingModeFlag cavlc|cabac   iComplexityMode low|medium|high
              bEnableSceneChangeDetect   iMultipleThreadIdc   bUseLoadBalancing (off unless given)
              uiSliceMode single|fixedslcnum|sizelimited   uiSliceNum   uiSliceSizeConstraint (bytes, sizelimited)
              iNumRefFrame   iMinQp   iMaxQp   iDLayerQp (iRCMode off)   iUsageType camera|screen   iLtrMarkPeriod
              eSpsPpsIdStrategy constant|increasing|sps_listing|...
              bEnableAdaptiveQuant   bEnableBackgroundDetection   bEnableDenoise   bEnableLongTermReference
              iLoopFilterDisableIdc   bFixRCOverShoot   iIdrBitrateRatio   iPaddingFlag   bPrefixNalAddingCtrl
              uiProfileIdc baseline|main|high (with cabac OpenH264 writes high unless main is given)
              The lab's keys that mean the same: --rc abr (iRCMode bitrate), --bitrate KBPS (iTargetBitrate; without
              --rc or iRCMode: bitrate mode), --keyint (uiIntraPeriod), --threads, --slices, --cabac/--no-cabac.
              VideoToolbox: AverageBitRate, MaxKeyFrameInterval, H264EntropyMode, AllowFrameReordering=false, RealTime.
              Every other x264 setting, and --rc cqp|crf|cbr|vbr, is refused with openh264 (64). Frames OpenH264
              skips are stored in skipped_frames; every mode but off needs a target bitrate.
            """),
         ("timestamps (docs/timestamps.md; any of them hands x264 PTS in microseconds, b_vfr_input=1)", """
              --pts-source constant-rate|file   the clip's nominal rate (default), or its own timestamps (ffprobe;
                                                a clip decoded by ffmpeg)
              --tcfile-in FILE                  a timecode v2 file (x264's and mkvmerge's format): entry k times frame k
              --pts-schedule SPEC               a generated schedule, e.g. rate=30;jitter=2ms;seed=7;switch=60@0s,20@2s;
                                                drop=0.1;dup=0.05;back=3@1.2s (grammar in docs/timestamps.md, "Schedule grammar")
              --pts-clock schedule|capture      with --pts-schedule: the recorder's stamps (default) or the capture clock
              --pts-offset MICROSECONDS         added to every PTS (host uptime: 10^9 to 10^13)
              --pts-rebase                      subtract the first PTS, before the precision stage
              --pts-precision int64|float32|int32|timescale:N   what the PTS passes through before the encoder
              --pts-clamp                       a PTS not after the largest so far becomes it + one nominal frame
            """),
         ("rate schedules (docs/rate-control-in-motion.md)", """
              --rate-schedule SPEC              targets that change during the run, each from the picture it names on
                                                (x264_picture_t.param): WHEN:NAME=VALUE[,NAME=VALUE];... WHEN a frame
                                                index (150) or seconds from the first PTS (4.5s); NAME bitrate,
                                                vbv-maxrate (kbit/s), vbv-bufsize (kbit), crf, AverageBitRate (bit/s),
                                                DataRateLimits=BYTES,SECONDS; ramp(0s..5s,bitrate=600..300,step=0.5s);
                                                file:PATH (a trace file of such items). A change x264 ignores or
                                                refuses is a warning and a row of rate_changes, never dropped
              --settle-tolerance PERCENT        the step response's settling band around a new target (default 10)
            """),
         ("RTP stage (docs/rtp.md, \"A run's RTP stage\"; rtp_frames, rtp_loss_frames, rtp_runs)", """
              --rtp mtu=N[,mode=non-interleaved|single]   packetize the run's stream (RFC 6184; mtu as rtph264pay's,
                                                the 12-byte header included, default 1400): packets per frame, the
                                                largest burst, RTP overhead
              --loss MODEL:KEY=VALUE,...        a seeded channel between packetizer and depacketizer (implies --rtp):
                                                bernoulli:p=P | gilbert:p=P,r=R[,k=K,h=H] | none:, then seed=N
                                                (default 1), duplicate=P, reorder=P, jitter=MS; the damaged stream is
                                                written as damaged.264 and decoded by libavcodec (its concealment),
                                                each frame measured: PSNR under loss, frozen/broken, frames to recover.
                                                Probabilities are 0...1 and jitter 0...10000 (ms), each a plain decimal
                                                (0.01, .5, 20): a sign, an exponent, hex, nan or inf is refused (64)
            """),
         databaseEnvironment]
    }
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "the run is done"),
        (64, "usage: a bad flag or value, --metrics ms-ssim on a clip under 176 px either side, an unknown or contradictory setting (x264's or VideoToolbox's), --db :memory:, a run folder that another database made under the same --out"),
        (65, "bad data: a malformed y4m, a file ffmpeg cannot decode, a frame damaged midway (the run is recorded failed), libvmaf scoring another number of frames than the run displayed, --rtp mode=single with a NAL unit larger than the mtu allows, a database that is not the lab's, a timecode file with a bad line, too few entries or times that do not increase"),
        (66, "INPUT or the --tcfile-in file is missing, or INPUT is not a regular file"),
        (69, "the ffmpeg with libvmaf (--vmaf-ffmpeg, ENCLAB_VMAF_FFMPEG or the venv's) did not answer its -filters check within \(Int(VMAFFFmpeg.probeTimeLimit)) s"),
        (70, "ffmpeg or gnuplot is missing, --metrics without an ffmpeg with libvmaf (the PyPI package imageio-ffmpeg), or the lab failed"),
        (73, "--out or --db cannot be created"),
        (74, "a write failed part-way (a full disk)"),
        (75, "the database is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
        (130, "interrupted by SIGINT or SIGTERM (the run is recorded failed)"),
    ]
    let example = "enclab encode fixtures/carphone_pristine.mp4 --preset fast --rc cbr --bitrate 600 --keyint 60 --threads 1"

    /// `encode`'s options, validated: the clip, the settings (x264's words read by x264's flag parser, the lab's
    /// flags set on them as typed values), and where the run goes.
    struct Options {
        var input: String
        var settings: EncodeSettings
        var db = "results/encode.sqlite"
        var out = "results/encode"
        var force = false
        var mkv = false
        var plots = Runner.PlotMode.scripts
        /// `--metrics` as given (checked by ``QualityMetric/list(_:flag:)``), nil without it.
        var metrics: String?
        var vmafFFmpeg: String?
    }

    /// Flags neither the lab's nor x264's are refused by x264's flag parser, which alone knows which words take a
    /// value: the flag parser leaves every word not in ``flags`` to it.
    var handsOn: Bool { true }

    /// The words not in ``flags`` (INPUT and x264's flags, in order) go to x264's flag parser
    /// (`EncodeSettings.parse`), which tells INPUT from flags and values; the lab's own flags are then set on the
    /// settings by name (`--rc`, `--vt`, `--vt-compat`, `--verify`: ``EncodeSettings/set(_:_:)``), none of them
    /// written back into words.
    func options(_ parsed: ParsedArguments) throws -> Options {
        var (settings, positional) = try EncodeSettings.parse(arguments: parsed.rest)
        if let rc = parsed.value("--rc") { try settings.set("rc", rc) }
        if let encoder = parsed.value("--encoder") { try settings.set("encoder", encoder) }
        for field in parsed.all("--openh264") { try settings.set("openh264", field) }
        var vtGiven: Set<String> = []
        for property in parsed.all("--vt") {
            // A VideoToolbox property given twice (in any spelling) is refused, not silently the last.
            if let eq = property.firstIndex(of: "="), eq != property.startIndex {
                let name = try VideoToolboxSettings.property(named: String(property[..<eq])).rawValue
                if !vtGiven.insert(name).inserted {
                    throw LabError(.usage, "--vt \(name) is given twice; give each VideoToolbox property once")
                }
            }
            try settings.set("vt", property)
        }
        if parsed.has("--vt-compat") { try settings.set("vt-compat", nil) }
        if let verify = parsed.value("--verify") { try settings.set("verify", verify) }
        guard positional.count == 1 else {
            throw LabError(.usage, positional.isEmpty ? "encode needs an INPUT clip" : "encode takes one INPUT, got \(positional.joined(separator: " "))")
        }
        var o = Options(input: positional[0], settings: settings)
        o.db = parsed.value("--db") ?? o.db
        o.out = try parsed.path("--out", what: "a folder path") ?? o.out
        o.force = parsed.has("--force")
        o.mkv = parsed.has("--mkv")
        o.plots = try PlotsFlag.mode(parsed, rendered: .eachRun)
        (o.metrics, o.vmafFFmpeg) = try MetricsFlags.parse(parsed)
        return o
    }

    func run(_ o: Options) throws -> Int32 {
        // Settings, clip and tools are checked before any database or folder is made.
        // gnuplot only when the pictures are drawn now (--plots render): scripts and data need none.
        try Runner.requireTools(gnuplot: o.plots == .eachRun)
        let checked = try Runner.check([Experiment.Run(clip: o.input, settings: o.settings, label: "")], experiment: "encode")
        if o.mkv { try Runner.requireMatroska() }
        // --metrics: the ffmpeg with libvmaf found and the request checked against the clip before anything is made.
        let quality = try QualityRequest.given(o.metrics, vmafFFmpeg: o.vmafFFmpeg)
        if let quality {
            try QualityMetric.check(quality.metrics, width: checked[0].input.width, height: checked[0].input.height, clip: checked[0].clipPath)
        }
        let lab = try Runner(databasePath: o.db, outDirectory: o.out, force: o.force)
        lab.matroska = o.mkv
        lab.quality = quality
        lab.plotMode = o.plots
        do {
            let outcome = try lab.run(checked[0])
            print(describe(outcome))
            print(describe(try lab.store.answers(runID: outcome.runID), runID: outcome.runID))
        } catch {
            lab.discardIfUnused()
            throw error
        }
        return 0
    }
}
