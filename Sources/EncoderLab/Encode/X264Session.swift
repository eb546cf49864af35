internal import CX264
import Foundation
import H264

/// x264's version as built: `X264_POINTVER` from x264_config.h, e.g. "0.164.3095 baee400".
public let x264Version = X264_POINTVER

/// Collects what libx264 logs through `pf_log`: errors and warnings for messages, and the per-frame debug
/// line (`frame=... QP=...`) that carries each frame's average QP. x264 may log from its own threads.
final class X264Log: @unchecked Sendable {
    private let lock = NSLock()
    private var frameLines: [String] = []
    private(set) var problems: [String] = []
    /// x264's warnings about PSNR/SSIM with psy optimisations on: caused by the lab turning measurement on,
    /// not by the user's settings, so not reported.
    static let fromLabSwitches = ["--psnr used with psy on", "--ssim used with psy on", "--tune psnr should be used", "--tune ssim should be used"]

    /// What the log sink hands over: x264's formatted line as C bytes. A debug line in ASCII (x264's per-frame line
    /// and its other debug lines are) is judged on its bytes: one that starts with `frame=` after blanks is kept
    /// with its ASCII blanks trimmed (what Foundation's `.whitespacesAndNewlines` trims from an ASCII line), any
    /// other dropped, with no Foundation string work per frame; every other line goes to ``receive(level:line:)``.
    func receive(level: Int32, cString: UnsafePointer<CChar>) {
        if level == X264_LOG_DEBUG {
            let bytes = UnsafeRawBufferPointer(start: cString, count: strlen(cString)).bindMemory(to: UInt8.self)
            if !bytes.contains(where: { $0 >= 0x80 }) {
                func blank(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
                guard let first = bytes.firstIndex(where: { !blank($0) }),
                      let last = bytes.lastIndex(where: { !blank($0) }) else { return }
                let text = bytes[first...last]
                guard text.starts(with: Self.framePrefix) else { return }
                let line = String(decoding: text, as: UTF8.self)
                lock.lock(); defer { lock.unlock() }
                frameLines.append(line)
                return
            }
        }
        receive(level: level, line: String(cString: cString))
    }

    private static let framePrefix = Array("frame=".utf8)

    func receive(level: Int32, line: String) {
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        lock.lock(); defer { lock.unlock() }
        if level == X264_LOG_DEBUG, text.hasPrefix("frame=") {
            frameLines.append(text)
        } else if level <= X264_LOG_WARNING && !Self.fromLabSwitches.contains(where: text.contains) {
            problems.append(text)
        }
    }

    /// The frame debug lines logged since the last call.
    func takeFrameLines() -> [String] {
        lock.lock(); defer { lock.unlock() }
        let lines = frameLines
        frameLines.removeAll()
        return lines
    }

    func lastProblem() -> String? {
        lock.lock(); defer { lock.unlock() }
        return problems.last
    }

    func takeProblems() -> [String] {
        lock.lock(); defer { lock.unlock() }
        let p = problems
        problems.removeAll()
        return p
    }
}

/// What the input looks like to the encoder, as x264's CLI learns it from a y4m demuxer.
public struct EncoderInput: Sendable {
    public var width: Int
    public var height: Int
    public var fpsNum: Int
    public var fpsDen: Int
    public var sarWidth: Int
    public var sarHeight: Int
    public var interlacing: Character
    /// Frames the input holds when known (x264's `i_frame_total`), else 0.
    public var frameTotal: Int
    /// The timestamps stage's plan (timebase, `b_vfr_input`); nil for the constant-rate plan of `fpsNum/fpsDen`.
    public var timestamps: TimestampPlan?
    /// For a clip decoded by ffmpeg and timed at its nominal rate: a warning when the file's own timestamps are
    /// not at that rate (``SourceTimes/constantRateWarning(path:microseconds:nominalRate:)``), else nil.
    public var timingWarning: String?

    public init(width: Int, height: Int, fpsNum: Int, fpsDen: Int, sarWidth: Int = 0, sarHeight: Int = 0,
                interlacing: Character = "p", frameTotal: Int = 0, timestamps: TimestampPlan? = nil) {
        self.width = width; self.height = height; self.fpsNum = fpsNum; self.fpsDen = fpsDen
        self.sarWidth = sarWidth; self.sarHeight = sarHeight; self.interlacing = interlacing; self.frameTotal = frameTotal
        self.timestamps = timestamps
    }
}

/// The parameters x264 settled on after `x264_encoder_open` (read back with `x264_encoder_parameters`).
public struct ResolvedParameters: Sendable {
    /// `cqp`, `crf` or `abr` (x264.h `X264_RC_*`).
    public var rcMethod: String
    public var qp: Int
    public var crf: Double
    /// Target bitrate in kbit/s (x264's `rc.i_bitrate`), 0 when not ABR.
    public var bitrateKbps: Int
    /// VBV maximum rate in kbit/s, 0 without VBV.
    public var vbvMaxrateKbps: Int
    /// VBV buffer size in kbit, 0 without VBV.
    public var vbvBufsizeKbit: Int
    /// Initial VBV buffer fullness (x264's `rc.f_vbv_buffer_init`): a fraction of the buffer up to 1, or kbit above
    /// 1; x264 raises it to at least one frame's worth when the encoder opens. Its float, written in the fewest
    /// decimal digits that give it back (0.9, not 0.8999999761581421).
    public var vbvInit: Double
    /// 0 none, 1 vbr, 2 cbr (x264.h `X264_NAL_HRD_*`).
    public var nalHrd: Int
    public var filler: Bool
    public var keyint: Int
    public var minKeyint: Int
    public var scenecut: Int
    public var bframes: Int
    public var bPyramid: Int
    public var openGop: Bool
    /// x264's `b_intra_refresh`: periodic intra refresh instead of IDR keyframes.
    public var intraRefresh: Bool
    public var cabac: Bool
    public var ref: Int
    public var threads: Int
    public var levelIdc: Int
    /// Seconds per PTS tick (x264's `i_timebase_num/i_timebase_den`).
    public var timebase: Rational
    /// Frames per second (x264's `i_fps_num/i_fps_den`).
    public var frameRate: Rational
    /// Whether x264 computes PSNR and SSIM (it turns both off for lossless `--qp 0`).
    public var psnr: Bool
    public var ssim: Bool
    /// The options string x264 writes in its version SEI (`options: cabac=1 ref=3 ...`, x264_param2string): the
    /// settings as x264 resolved them, effective thread count included.
    public var optionsString: String
    /// Where each of ``jsonObject``'s values came from: `given` (the user's options), `vt` (a VideoToolbox property:
    /// its options, or the tune it added), `rc` (added by the lab's `--rc`), `preset` (the preset's or x264's
    /// default) or `x264` (changed after the options were applied: by the profile, the input (the CLI's level rule
    /// for `ref`) or x264's own checks when the encoder opened).
    public var provenance: [String: String]

    public var timebaseNum: Int { Int(timebase.numerator) }
    public var timebaseDen: Int { Int(timebase.denominator) }
    public var fpsNum: Int { Int(frameRate.numerator) }
    public var fpsDen: Int { Int(frameRate.denominator) }

    var jsonObject: [String: Any] { Self.fields(of: self) }

    /// The values recorded in `runs.settings.resolved`, by name.
    static func fields(of r: ResolvedParameters) -> [String: Any] {
        ["rc_method": r.rcMethod, "qp": r.qp, "crf": r.crf, "bitrate_kbps": r.bitrateKbps, "vbv_maxrate_kbps": r.vbvMaxrateKbps,
         "vbv_bufsize_kbit": r.vbvBufsizeKbit, "vbv_init": r.vbvInit, "nal_hrd": ["none", "vbr", "cbr"][max(0, min(2, r.nalHrd))], "filler": r.filler,
         "keyint": r.keyint, "min_keyint": r.minKeyint, "scenecut": r.scenecut, "bframes": r.bframes, "b_pyramid": r.bPyramid,
         "open_gop": r.openGop, "cabac": r.cabac, "ref": r.ref, "threads": r.threads, "level_idc": r.levelIdc]
    }
}

/// One libx264 encoder, the only place the lab touches libx264: the lab's ``VideoEncoder``.
///
/// The call order is x264's own (x264.h, "Advanced parameter handling"): `x264_param_default_preset`
/// (preset, tune), `x264_param_parse` for each option, `x264_param_apply_fastfirstpass`,
/// `x264_param_apply_profile`, then what x264's CLI takes from a y4m input (size, I420, frame rate, timebase
/// fps_den/fps_num with `b_vfr_input=0`, sample aspect ratio, `i_frame_total`, interlacing), then the lab's
/// measurement switches: `i_log_level` DEBUG (x264 fills `f_psnr`/`f_ssim` only at INFO or above, and logs
/// each frame's average QP at DEBUG), `b_psnr`, `b_ssim`, and `b_full_recon` (so non-reference B-frames are
/// measured after deblocking). None of these change the bytes written. Last, x264's AVX-512 code is turned
/// off (`cpu &= ~X264_CPU_AVX512`): its macroblock-tree propagation reads memory x264 never initialised, so
/// with it an encode's bytes depend on the encoders that ran before it in the process. Without it the bytes
/// are x264's SSE/AVX2 bytes, which are also an AVX-512 process's bytes while that memory is still zero (a
/// fresh process, x264's CLI).
public final class X264Session {
    private var handle: OpaquePointer
    private let log: X264Log
    private let logContext: UnsafeMutablePointer<enclab_x264_log_context>
    /// Parameters as x264 settled them.
    public let resolved: ResolvedParameters
    private let measuresQuality: Bool
    private var codedCount = 0
    /// Calls of ``encode(_:pts:displayIndex:forcedType:)`` so far (each frame's ``EncodedFrame/outputCall``).
    private var calls = 0
    /// `x264_encoder_maximum_delayed_frames`, read when the encoder opened.
    public let maximumDelayedFrames: Int?
    private let width: Int
    private let height: Int
    /// The parameters as x264 opened with them: the base of each picture's own `param` (``setRateTargets(_:)``).
    private let openedParam: x264_param_t
    /// Rate-control values to hand x264 with the next picture, nil for none.
    private var pendingRateTargets: X264RateTargets?

    /// The parameters at the four steps that provenance compares: after the preset and the user's tune, after the
    /// VideoToolbox properties (their tune and options), after the user's options, after the options the lab's `--rc`
    /// added.
    struct Snapshots {
        var preset: x264_param_t
        var vt: x264_param_t
        var given: x264_param_t
        var rc: x264_param_t
    }

    /// Builds the parameters without opening an encoder: checks preset, tune, every option and the profile.
    ///
    /// - Throws: `.usage` naming the setting: "unknown setting 'foo'" (x264_param_parse's
    ///   `X264_PARAM_BAD_NAME`), "bad value for setting 'keyint': 'abc'" (`X264_PARAM_BAD_VALUE`), an unknown
    ///   preset or tune, a profile x264 cannot apply.
    static func makeParam(_ settings: EncodeSettings, input: EncoderInput, warnings: inout [String]) throws -> x264_param_t {
        var snapshots: Snapshots?
        return try makeParam(settings, input: input, warnings: &warnings, snapshots: &snapshots)
    }

    /// ``makeParam(_:input:warnings:)``, keeping the parameters at each step in `snapshots` when it is not nil.
    static func makeParam(_ settings: EncodeSettings, input: EncoderInput, warnings: inout [String],
                          snapshots: inout Snapshots?) throws -> x264_param_t {
        var p = x264_param_t()
        // Preset, tune and profile are checked here, as x264 parses them, so that x264 itself never prints an
        // error to the process's standard error (it has no encoder to log through yet).
        let preset = try X264Names.preset(settings.preset)
        let tune = try X264Names.tune(settings.effectiveTune)
        warnings += tune.warnings
        guard x264_param_default_preset(&p, preset, tune.value) == 0 else {
            throw LabError.software("x264_param_default_preset refused preset '\(preset ?? "")' tune '\(tune.value ?? "")'")
        }
        // The preset with the user's tune alone, when the VideoToolbox properties added one (RealTime: zerolatency).
        var afterPreset = p
        if settings.vtTune != nil {
            let userTune = try X264Names.tune(settings.tune)
            guard x264_param_default_preset(&afterPreset, preset, userTune.value) == 0 else {
                throw LabError.software("x264_param_default_preset refused preset '\(preset ?? "")' tune '\(userTune.value ?? "")'")
            }
        }
        var afterVT = p
        var afterGiven = p
        // options: the VideoToolbox ones, the given ones, the ones --rc added.
        let vtEnd = settings.vtOptionCount ?? 0
        let givenEnd = vtEnd + (settings.givenOptionCount ?? (settings.options.count - vtEnd))
        for (k, option) in settings.options.enumerated() {
            if k == vtEnd { afterVT = p }
            if k == givenEnd { afterGiven = p }
            let status = x264_param_parse(&p, option.name, option.value)
            if status == X264_PARAM_BAD_NAME {
                throw LabError.usage("unknown setting '\(option.name)'")
            } else if status == X264_PARAM_BAD_VALUE || status != 0 {
                throw LabError.usage("bad value for setting '\(option.name)': '\(option.value ?? "")'")
            }
        }
        if vtEnd >= settings.options.count { afterVT = p }
        if givenEnd >= settings.options.count { afterGiven = p }
        snapshots = Snapshots(preset: afterPreset, vt: afterVT, given: afterGiven, rc: p)
        x264_param_apply_fastfirstpass(&p)
        if let profile = settings.profile {
            try X264Names.checkProfile(profile, lossless: (p.rc.i_rc_method == X264_RC_CQP && p.rc.i_qp_constant <= 0)
                                        || (p.rc.i_rc_method == X264_RC_CRF && Int(p.rc.f_rf_constant) <= 0),
                                       interlaced: p.b_interlaced != 0, fakeInterlaced: p.b_fake_interlaced != 0)
            let before = p
            guard x264_param_apply_profile(&p, profile) == 0 else {
                throw LabError.software("x264_param_apply_profile refused profile '\(profile)' after the lab's checks passed")
            }
            if let w = Self.profileWarning(profile, before: before, after: p) { warnings.append(w) }
        }
        // What x264's CLI takes from its y4m demuxer (x264.c parse()).
        // Each value is checked before it narrows to x264's C field (the y4m reader already bounds them).
        p.i_width = try int32(input.width, or: .data("picture width \(input.width) does not fit x264's int"))
        p.i_height = try int32(input.height, or: .data("picture height \(input.height) does not fit x264's int"))
        p.i_csp = X264_CSP_I420
        let (fn, fd) = reduce(input.fpsNum, input.fpsDen)
        let rate = LabError.data("frame rate \(input.fpsNum):\(input.fpsDen) does not fit x264's uint32_t fields")
        p.i_fps_num = try uint32(fn, or: rate)
        p.i_fps_den = try uint32(fd, or: rate)
        // The timestamps stage's timebase; the constant-rate plan is the CLI's: fps_den/fps_num, b_vfr_input=0.
        let plan = try input.timestamps ?? TimestampPlan.constantRate(fpsNum: fn, fpsDen: fd)
        let timebase = LabError.data("timebase \(plan.timebase) does not fit x264's uint32_t fields")
        p.b_vfr_input = plan.variableFrameRate ? 1 : 0
        p.i_timebase_num = try uint32(Int(plan.timebase.numerator), or: timebase)
        p.i_timebase_den = try uint32(Int(plan.timebase.denominator), or: timebase)
        if p.vui.i_sar_width == 0 || p.vui.i_sar_height == 0 {
            let (sw, sh) = reduce(input.sarWidth, input.sarHeight)
            let sar = LabError.data("sample aspect ratio \(input.sarWidth):\(input.sarHeight) does not fit x264's int fields")
            p.vui.i_sar_width = try int32(sw, or: sar)
            p.vui.i_sar_height = try int32(sh, or: sar)
        }
        var total = max(input.frameTotal - (settings.seek ?? 0), 0)
        if let f = settings.frames, f > 0, total == 0 || f < total { total = f }
        // A count beyond x264's int (a y4m file of billions of tiny frames; `frames` past 2147483647 is refused
        // when set) is passed as 0, x264's "unknown".
        p.i_frame_total = Int32(exactly: total) ?? 0
        let userInterlaced = settings.options.contains { ["interlaced", "tff", "bff", "no-interlaced"].contains($0.name) }
        if !userInterlaced && input.interlacing != "p" {
            p.b_interlaced = 1
            p.b_tff = input.interlacing == "t" ? 1 : 0
        }
        // x264 0.164's CLI lowers the reference count to fit a requested level when --ref was not given
        // (x264_levels[].dpb is in macroblocks in this build).
        if !settings.options.contains(where: { $0.name == "ref" }) {
            let mbs = Int((p.i_width + 15) >> 4) * Int((p.i_height + 15) >> 4)
            var i = 0
            while enclab_x264_level(Int32(i)).pointee.level_idc != 0 {
                let level = enclab_x264_level(Int32(i)).pointee
                if Int32(level.level_idc) == p.i_level_idc {
                    while mbs * Int(p.i_frame_reference) > Int(level.dpb) && p.i_frame_reference > 1 {
                        p.i_frame_reference -= 1
                    }
                    break
                }
                i += 1
            }
        }
        // libx264's AVX-512 mbtree_propagate_list (common/x86/mc-a2.asm, x264 0.164 and later) handles 8
        // macroblocks a step and scatters all 8, also those past the row's end, so on the last row it reads
        // past lowres_mvs, lowres_costs and its propagate buffer into memory x264 never set: the bytes then
        // depend on what an earlier encoder in the process left in the heap. The SSE/AVX2 versions stop at
        // the row's end; without AVX-512 x264 writes the bytes a fresh process writes, in every process.
        p.cpu &= ~UInt32(X264_CPU_AVX512)
        // The lab's measurement switches (see the type's documentation).
        p.i_log_level = X264_LOG_DEBUG
        p.analyse.b_psnr = 1
        p.analyse.b_ssim = 1
        p.b_full_recon = 1
        // VideoToolbox's MaxFrameDelayCount: x264's delay capped (FrameDelayLimit.swift), the options given left alone.
        if let limit = settings.videoToolbox.maxFrameDelayCount {
            let given = min(vtEnd, settings.options.count)..<max(min(vtEnd, settings.options.count), min(givenEnd, settings.options.count))
            if let note = X264DelayParameters.limit(&p, to: limit, given: Set(settings.options[given].map(\.name))) { warnings.append(note) }
        }
        return p
    }

    /// What `x264_param_apply_profile` turned off without a word (x264's common/base.c: Baseline drops CABAC,
    /// B-frames, the 8x8 transform, weighted P prediction and custom quantisation matrices; Main the 8x8
    /// transform and the matrices), as one warning naming each setting with its value before and after; nil when it changed none.
    static func profileWarning(_ profile: String, before: x264_param_t, after: x264_param_t) -> String? {
        var changes: [String] = []
        if before.b_cabac != after.b_cabac { changes.append("CABAC (cabac \(before.b_cabac) -> \(after.b_cabac))") }
        if before.i_bframe != after.i_bframe { changes.append("B-frames (bframes \(before.i_bframe) -> \(after.i_bframe))") }
        if before.analyse.b_transform_8x8 != after.analyse.b_transform_8x8 {
            changes.append("the 8x8 transform (8x8dct \(before.analyse.b_transform_8x8) -> \(after.analyse.b_transform_8x8))")
        }
        if before.analyse.i_weighted_pred != after.analyse.i_weighted_pred {
            changes.append("weighted P prediction (weightp \(before.analyse.i_weighted_pred) -> \(after.analyse.i_weighted_pred))")
        }
        if before.i_cqm_preset != after.i_cqm_preset || (before.psz_cqm_file != nil) != (after.psz_cqm_file != nil) {
            changes.append("the custom quantisation matrices (cqm flat)")
        }
        guard !changes.isEmpty else { return nil }
        return "profile \(profile.lowercased()): x264_param_apply_profile turned off \(changes.joined(separator: ", "))"
    }

    private static func reduce(_ a: Int, _ b: Int) -> (Int, Int) {
        guard a > 0, b > 0 else { return (a, b) }
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return (a / x, b / x)
    }

    /// Checks settings completely without encoding: builds the parameters and opens (then closes) an
    /// encoder for the given input, so x264's own checks run before any run is recorded.
    /// - Throws: as ``init(settings:input:)``.
    public static func validate(_ settings: EncodeSettings, input: EncoderInput) throws {
        _ = try X264Session(settings: settings, input: input)
    }

    /// Opens an encoder.
    /// - Parameters:
    ///   - settings: resolved settings (``EncodeSettings/resolved()``).
    ///   - input: the picture size, rate and aspect ratio.
    /// - Throws: `.usage` for settings x264 rejects, with x264's own error message.
    public init(settings: EncodeSettings, input: EncoderInput) throws {
        var paramWarnings: [String] = []
        var snapshots: Snapshots?
        var p = try Self.makeParam(settings, input: input, warnings: &paramWarnings, snapshots: &snapshots)
        // Strings x264_param_parse allocated are freed once the encoder has its own copy (x264.h, x264_param_cleanup).
        defer { x264_param_cleanup(&p) }
        let log = X264Log()
        self.log = log
        logContext = UnsafeMutablePointer<enclab_x264_log_context>.allocate(capacity: 1)
        logContext.initialize(to: enclab_x264_log_context(
            sink: { opaque, level, line in
                guard let opaque, let line else { return }
                Unmanaged<X264Log>.fromOpaque(opaque).takeUnretainedValue().receive(level: level, cString: line)
            },
            opaque: Unmanaged.passUnretained(log).toOpaque()))
        enclab_x264_set_log(&p, logContext)
        guard let h = enclab_x264_encoder_open(&p) else {
            let reason = log.lastProblem() ?? "no reason given"
            logContext.deinitialize(count: 1)
            logContext.deallocate()
            throw LabError.usage("x264 refused the settings \(settings.x264Arguments.joined(separator: " ")): \(reason)")
        }
        handle = h
        var q = x264_param_t()
        x264_encoder_parameters(h, &q)
        var r = Self.parameters(q)
        r.optionsString = Self.optionsString(h)
        if let snapshots {
            let final = ResolvedParameters.fields(of: r)
            let steps = [("x264", snapshots.rc), ("rc", snapshots.given), ("given", snapshots.vt), ("vt", snapshots.preset)]
                .map { ($0.0, ResolvedParameters.fields(of: Self.parameters($0.1))) }
            for (name, value) in final {
                var later = value
                var source = "preset"
                // The latest step that changed the value: after the rc options (x264), the rc options, the given ones.
                for (step, before) in steps {
                    if let earlier = before[name], "\(earlier)" != "\(later)" { source = step; break }
                    later = before[name] ?? later
                }
                r.provenance[name] = source
            }
        }
        resolved = r
        maximumDelayedFrames = Int(x264_encoder_maximum_delayed_frames(h))
        openedParam = q
        measuresQuality = q.analyse.b_psnr != 0
        width = input.width
        height = input.height
        for text in paramWarnings { log.receive(level: X264_LOG_WARNING, line: text) }
    }

    /// The recorded parameters of an x264_param_t (as opened, or a snapshot before opening).
    private static func parameters(_ q: x264_param_t) -> ResolvedParameters {
        let method = q.rc.i_rc_method == X264_RC_CQP ? "cqp" : q.rc.i_rc_method == X264_RC_CRF ? "crf" : "abr"
        func rational(_ n: UInt32, _ d: UInt32) -> Rational { (try? Rational(Int64(n), Int64(d))) ?? Rational.zero }
        return ResolvedParameters(
            rcMethod: method, qp: Int(q.rc.i_qp_constant), crf: Double(q.rc.f_rf_constant),
            bitrateKbps: Int(q.rc.i_bitrate), vbvMaxrateKbps: Int(q.rc.i_vbv_max_bitrate),
            vbvBufsizeKbit: Int(q.rc.i_vbv_buffer_size), vbvInit: Double("\(q.rc.f_vbv_buffer_init)") ?? Double(q.rc.f_vbv_buffer_init), nalHrd: Int(q.i_nal_hrd), filler: q.rc.b_filler != 0,
            keyint: Int(q.i_keyint_max), minKeyint: Int(q.i_keyint_min), scenecut: Int(q.i_scenecut_threshold),
            bframes: Int(q.i_bframe), bPyramid: Int(q.i_bframe_pyramid), openGop: q.b_open_gop != 0, intraRefresh: q.b_intra_refresh != 0,
            cabac: q.b_cabac != 0, ref: Int(q.i_frame_reference), threads: Int(q.i_threads),
            levelIdc: Int(q.i_level_idc), timebase: rational(q.i_timebase_num, q.i_timebase_den),
            frameRate: rational(q.i_fps_num, q.i_fps_den), psnr: q.analyse.b_psnr != 0, ssim: q.analyse.b_ssim != 0,
            optionsString: "", provenance: [:])
    }

    /// The `options: ...` text of the version SEI (user_data_unregistered, H.264 D.1.6) that
    /// `x264_encoder_headers` returns with the SPS and PPS; "" when it cannot be read.
    private static func optionsString(_ h: OpaquePointer) -> String {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        guard x264_encoder_headers(h, &nals, &count) >= 0, let nals else { return "" }
        var bytes: [UInt8] = []
        for k in 0..<Int(count) { bytes += UnsafeBufferPointer(start: nals[k].p_payload, count: Int(nals[k].i_payload)) }
        guard let units = try? AnnexB.split(bytes) else { return "" }
        for unit in units where unit.nal.nalUnitType == .sei {
            for message in (try? SEIMessage.parse(rbsp: unit.nal.rbsp)) ?? [] {
                if let text = message.userDataUnregistered?.string, let range = text.range(of: "options: ") {
                    return String(text[range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\0 \n"))
                }
            }
        }
        return ""
    }

    deinit {
        x264_encoder_close(handle)
        logContext.deinitialize(count: 1)
        logContext.deallocate()
    }

    /// x264's warnings and errors logged since the last call.
    public func takeWarnings() -> [String] { log.takeProblems() }

    /// Hands x264 these rate-control values with the next picture encoded, as the picture's own `param` (x264.h,
    /// x264_picture_t.param: "from this frame forwards, in coded order"): a copy of the parameters x264 opened with,
    /// the given values set, which x264 applies when it codes that picture (encoder.c, `x264_encoder_reconfig_apply`
    /// before the frame's rate control) and then frees (`param_free`). Unlike `x264_encoder_reconfig`, which acts on
    /// the next frame x264 codes after its lookahead, the change lands on the picture it is given with. nil values
    /// keep the opened ones. Whether x264 uses a value is its own rule (``RateChangeRules``).
    public func setRateTargets(_ targets: X264RateTargets) { pendingRateTargets = targets }

    /// Encodes one picture, or flushes a delayed one when `picture` is nil.
    ///
    /// - Parameters:
    ///   - picture: the next input picture (its size must be the session's), or nil to flush.
    ///   - pts: its presentation time in the timebase (ignored when flushing).
    ///   - displayIndex: its input frame number, handed back with the coded frame.
    ///   - forcedType: the frame type to force (x264's `i_type`; `auto` lets x264 choose).
    /// - Returns: the frame x264 output, if any (with B-frames, output lags input); NAL payloads are copied
    ///   before returning, as x264.h requires.
    /// - Throws: `.software` when x264_encoder_encode fails or its frame line cannot be read.
    public func encode(_ picture: Picture?, pts: Int64, displayIndex: Int, forcedType: ForcedFrameType = .auto) throws -> EncodedFrame? {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        var out = x264_picture_t()
        var size: Int32
        let call = calls
        calls += 1
        if let picture {
            precondition(picture.width == width && picture.height == height, "picture size differs from the session's")
            var pic = x264_picture_t()
            x264_picture_init(&pic)
            pic.i_pts = pts
            switch forcedType {
            case .auto: pic.i_type = X264_TYPE_AUTO
            case .idr: pic.i_type = X264_TYPE_IDR
            case .i: pic.i_type = X264_TYPE_I
            case .p: pic.i_type = X264_TYPE_P
            case .b: pic.i_type = X264_TYPE_B
            }
            pic.opaque = UnsafeMutableRawPointer(bitPattern: displayIndex + 1)
            if let t = pendingRateTargets {
                pendingRateTargets = nil
                // malloc'd, so that x264's param_free (free) releases it; the copy owns no strings (opaque is NULL).
                guard let raw = malloc(MemoryLayout<x264_param_t>.stride) else { throw LabError.software("out of memory for a picture's x264 parameters") }
                let param = raw.bindMemory(to: x264_param_t.self, capacity: 1)
                param.initialize(to: openedParam)
                if let b = t.bitrateKbps { param.pointee.rc.i_bitrate = Int32(clamping: b) }
                if let m = t.vbvMaxrateKbps { param.pointee.rc.i_vbv_max_bitrate = Int32(clamping: m) }
                if let s = t.vbvBufsizeKbit { param.pointee.rc.i_vbv_buffer_size = Int32(clamping: s) }
                if let c = t.crf { param.pointee.rc.f_rf_constant = Float(c) }
                param.pointee.param_free = free
                pic.param = param
            }
            pic.img.i_csp = X264_CSP_I420
            pic.img.i_plane = 3
            let w = Int32(width)  // checked when the session opened (makeParam)
            pic.img.i_stride = (w, w / 2, w / 2, 0)
            // x264 reads the planes during the call (x264_frame_copy_picture copies them) and never writes them.
            size = picture.withUnsafeBytes { buf -> Int32 in
                let base = UnsafeMutablePointer(mutating: buf.baseAddress!)
                let lumaSize = width * height
                pic.img.plane = (base, base + lumaSize, base + lumaSize + lumaSize / 4, nil)
                return x264_encoder_encode(handle, &nals, &count, &pic, &out)
            }
        } else {
            size = x264_encoder_encode(handle, &nals, &count, nil, &out)
        }
        if size < 0 {
            throw LabError.software("x264_encoder_encode failed: \(log.lastProblem() ?? "no reason given")")
        }
        let lines = log.takeFrameLines()
        guard size > 0, let nals else { return nil }
        var written: [WrittenNAL] = []
        written.reserveCapacity(Int(count))
        for k in 0..<Int(count) {
            let nal = nals[k]
            let bytes = Array(UnsafeBufferPointer(start: nal.p_payload, count: Int(nal.i_payload)))
            written.append(WrittenNAL(type: Int(nal.i_type), refIdc: Int(nal.i_ref_idc), bytes: bytes))
        }
        guard let line = lines.last, let qp = Self.qp(fromFrameLine: line) else {
            throw LabError.software("x264 logged no per-frame line with the QP of coded frame \(codedCount)")
        }
        let type: FrameType
        switch out.i_type {
        case X264_TYPE_IDR: type = .idr
        case X264_TYPE_I: type = .i
        case X264_TYPE_P: type = .p
        case X264_TYPE_BREF: type = .bref
        case X264_TYPE_B: type = .b
        default: throw LabError.software("x264 returned an unknown picture type \(out.i_type)")
        }
        let display = out.opaque.map { Int(bitPattern: $0) - 1 } ?? -1
        let psnr = out.prop.f_psnr
        var frame = EncodedFrame(
            codedIndex: codedCount, displayIndex: display, type: type, keyframe: out.b_keyframe != 0,
            pts: out.i_pts, dts: out.i_dts, qp: qp,
            psnrY: measuresQuality ? psnr.0 : nil, psnrU: measuresQuality ? psnr.1 : nil,
            psnrV: measuresQuality ? psnr.2 : nil, psnrAvg: measuresQuality ? out.prop.f_psnr_avg : nil,
            ssim: resolved.ssim ? out.prop.f_ssim : nil, nals: written)
        frame.outputCall = call
        frame.delayedFrames = delayedFrames
        codedCount += 1
        return frame
    }

    /// Encodes a picture from the timestamps stage (its PTS and forced type), or flushes when nil.
    public func encode(_ timed: TimedPicture?) throws -> EncodedFrame? {
        guard let timed else { return try encode(nil, pts: 0, displayIndex: 0) }
        return try encode(timed.picture, pts: timed.pts, displayIndex: timed.index, forcedType: timed.forcedType)
    }

    /// Frames x264 still holds (look-ahead and B-frame delay); flush with `encode(nil, ...)` until 0.
    public var delayedFrames: Int { Int(x264_encoder_delayed_frames(handle)) }

    /// The QP from x264's per-frame debug line, `frame=%4d QP=%.2f NAL=%d Slice:%c ...` (encoder.c,
    /// x264_encoder_frame_end), which prints the frame's `f_qp_avg_aq`.
    static func qp(fromFrameLine line: String) -> Double? {
        // An ASCII line (x264's always is) on its bytes: its digits are the only characters `isNumber` takes there.
        let bytes = Array(line.utf8)
        if !bytes.contains(where: { $0 >= 0x80 }) {
            let key = Array("QP=".utf8)
            guard let at = bytes.indices.first(where: { bytes[$0...].starts(with: key) }) else { return nil }
            let number = bytes[(at + key.count)...].prefix { $0 == 0x2E || $0 == 0x2D || (0x30...0x39).contains($0) }
            return Double(String(decoding: number, as: UTF8.self))
        }
        guard let range = line.range(of: "QP=") else { return nil }
        let rest = line[range.upperBound...]
        let number = rest.prefix { $0 == "." || $0 == "-" || $0.isNumber }
        return Double(number)
    }
}
