import Foundation

/// The lab's five rate-control modes, named on top of x264's options by `--rc`.
///
/// x264 itself infers its method from the last of `--qp`, `--crf`, `--bitrate` (x264.h `X264_RC_CQP`,
/// `X264_RC_CRF`, `X264_RC_ABR`); the lab's names add the VBV settings that make CBR and capped VBR.
public enum RateControlMode: String, CaseIterable, Sendable {
    /// Constant QP: `qp` is required.
    case cqp
    /// Constant rate factor: `crf` (x264's default 23 when absent).
    case crf
    /// Average bitrate: `bitrate` (kbit/s) is required, no VBV added.
    case abr
    /// `abr` with `vbv-maxrate` = `bitrate`, `vbv-bufsize` = one second of `bitrate` unless given, and
    /// `nal-hrd cbr` (which makes x264 write filler data).
    case cbr
    /// `abr` or `crf` capped by a `vbv-maxrate` above the target: for `bitrate` B, `vbv-maxrate` defaults to
    /// ``vbrDefaultMaxrateFactor`` x B; with `crf`, `vbv-maxrate` must be given. `vbv-bufsize` defaults to one
    /// second of `vbv-maxrate`.
    case vbr
}

/// `vbv-maxrate` = 1.5 x `bitrate` for `--rc vbr` with an ABR target and no `vbv-maxrate` of its own.
public let vbrDefaultMaxrateFactor = 1.5

/// One x264 option as the CLI names it (long name without dashes) and its argument, nil for a flag.
public struct X264Option: Equatable, Sendable {
    public var name: String
    public var value: String?
    public init(_ name: String, _ value: String?) { self.name = name; self.value = value }
}

/// What an encode is asked to do, in x264's CLI vocabulary: preset and tune, the options in the order they
/// apply, the profile, and the lab's `--rc` mode. A plain value: ``resolved()`` checks it and expands `--rc`
/// before any frame is read.
public struct EncodeSettings: Equatable, Sendable {
    /// `--preset` (x264's default `medium` when nil).
    public var preset: String?
    /// `--tune`, comma-separated as x264 takes it.
    public var tune: String?
    /// `--profile`, applied after all options (x264_param_apply_profile).
    public var profile: String?
    /// The lab's `--rc` mode, or nil to let x264 infer its method from the options as its CLI does.
    public var rc: RateControlMode?
    /// `--frames`: encode at most this many frames.
    public var frames: Int?
    /// `--seek`: skip this many input frames first.
    public var seek: Int?
    /// `--verify`: `full` (the default) decodes the stream and stores the lab's PSNR; `none` skips the decode and
    /// stores x264's, the run marked unverified (``VerifyMode``). Part of the run key when not `full`.
    public var verify = VerifyMode.full
    /// The timestamps stage (`--pts-source`, `--tcfile-in`, `--pts-schedule`, `--pts-clock`, `--pts-offset`,
    /// `--pts-rebase`, `--pts-precision`, `--pts-clamp`).
    public var timestamps = TimestampSettings()
    /// VideoToolbox's properties in Apple's names and units (`--vt NAME=VALUE`, `--vt-compat`; README, "Settings:
    /// VideoToolbox's properties"), mapped onto x264's options by ``resolved(dataRateLimitsVBV:)``.
    public var videoToolbox = VideoToolboxSettings()
    /// `--rate-schedule SPEC`: targets that change during the run (``RateSchedule``), nil for none. Part of the run key
    /// when set.
    public var rateSchedule: RateSchedule?
    /// `--settle-tolerance PERCENT`: the band around a new target the step response's settling time uses
    /// (``StepResponse``), nil for the default ``StepResponse/defaultTolerancePercent``. Part of the run key when set.
    public var settleTolerancePercent: Double?
    /// `--rtp`, `--loss`: the run's RTP stage (``RTPRunSettings``), nil for none. Part of the run key when set.
    public var rtp: RTPRunSettings?
    /// `--encoder`: x264 (the default) or openh264 (docs/openh264.md). Part of the run key only when not x264.
    public var encoder = EncoderName.x264
    /// OpenH264's fields by their codec_app_def.h names (`--openh264 NAME=VALUE`, `--NAME VALUE`); with
    /// `encoder` openh264 only.
    public var openh264 = OpenH264Settings()
    /// The x264 options in the order the x264 CLI would apply them (`x264_param_parse` names). After ``resolved()``:
    /// first the ``vtOptionCount`` options the VideoToolbox properties became, then the ``givenOptionCount`` given
    /// ones, then those the lab's `--rc` added.
    public var options: [X264Option] = []
    /// After ``resolved()``: how many of ``options`` were given (after the VideoToolbox ones; the rest were added by
    /// the lab's `--rc`); nil before. Resolving is done once per run: resolving resolved settings returns them unchanged.
    public private(set) var givenOptionCount: Int?
    /// After ``resolved()``: how many of ``options``, at the start, the VideoToolbox properties became (0 without
    /// any); nil before.
    public private(set) var vtOptionCount: Int?
    /// After ``resolved()``: the tune the VideoToolbox properties add to ``tune`` (`zerolatency` for RealTime=true);
    /// x264 gets both (``effectiveTune``).
    public private(set) var vtTune: String?
    /// After ``resolved()``: every adjustment of a setting the mapping made, one line each, for the run's warnings:
    /// an x264 option overriding a VideoToolbox property, a rate rounded to whole kbit/s, a lab's choice (RealTime), a
    /// vt-compat resolution with its source, a property ignored (AllowOpenGOP). Empty without VideoToolbox properties.
    public private(set) var adjustments: [String] = []
    /// After ``resolved()``: the keyframe limits to build the run's keyframe rule from (MaxKeyFrameInterval and
    /// MaxKeyFrameIntervalDuration as given, and vt-compat), nil when neither property is given.
    public private(set) var resolvedKeyframeRule: VTKeyframeLimits?

    public init() {}

    /// x264 CLI options that take no argument (x264 0.164's `long_options`); `no-*` names take none either.
    static let flagsWithoutArgument: Set<String> = [
        "slow-firstpass", "intra-refresh", "open-gop", "interlaced", "tff", "bff", "constrained-intra", "cabac",
        "weightb", "psy", "mixed-refs", "8x8dct", "fast-pskip", "mbtree", "sliced-threads", "thread-input",
        "non-deterministic", "cpu-independent", "psnr", "ssim", "quiet", "verbose", "no-progress", "aud", "force-cfr",
        "pic-struct", "fake-interlaced", "filler", "bluray-compat", "stitchable", "nf", "opencl", "dts-compress",
        "pts-rebase", "pts-clamp", "vt-compat",
    ]

    /// Short options of x264's CLI and the long names they stand for (x264.c `short_options`).
    static let shortOptions: [Character: String] = [
        "I": "keyint", "i": "min-keyint", "b": "bframes", "q": "qp", "B": "bitrate", "r": "ref", "f": "deblock",
        "m": "subme", "A": "partitions", "t": "trellis", "w": "weightb", "8": "8x8dct", "p": "pass", "v": "verbose",
    ]

    /// x264 CLI options that the lab's harness does not model: they change the input, output or passes.
    static let unsupported: Set<String> = [
        "qpfile", "tcfile-out", "timebase", "pulldown", "vf", "video-filter", "input-res", "input-csp",
        "input-depth", "input-range", "input-fmt", "demuxer", "muxer", "index", "output", "stdout", "stdin",
        "dump-yuv", "pass", "stats", "output-depth", "output-csp", "visualize", "fps", "range", "fullrange",
    ]

    /// Options accepted for compatibility with x264 command lines that change nothing in the stream.
    static let ignored: Set<String> = ["quiet", "verbose", "log-level", "no-progress", "thread-input", "psnr", "ssim"]

    /// Takes one setting by its x264 CLI long name (without dashes) and value.
    ///
    /// - Throws: `.usage` naming the setting for a name or value holding a NUL character (C would cut it there),
    ///   an option the harness does not model, a `frames`/`seek` that is not a whole number from 0 to 2147483647
    ///   (x264's int), `seek` plus `frames` above 2147483647, an unknown `rc` mode, an x264 option value that
    ///   strtod(3) reads whole as a number that is not finite (`nan`, `-inf`, `1e400`: x264's atof would take it;
    ///   ``ratetol``'s own `inf` excepted), or one that strtol(3) reads whole (x264's atoi: base 0, so `0x10` and
    ///   `010` too) as an integer outside x264's C int, which x264 would wrap (`2147483648` became -2147483648).
    ///   Unknown x264 names are found by ``X264Param`` (x264_param_parse).
    public mutating func set(_ rawName: String, _ value: String?) throws {
        if rawName.utf8.contains(0) {
            throw LabError.usage("setting name '\(Self.visible(rawName))' holds a NUL character")
        }
        // VideoToolbox's names (Apple's case, underscores kept: kVTCompressionPropertyKey_AverageBitRate).
        if VideoToolboxSettings.isPropertyKey(rawName) {
            if let v = value, v.utf8.contains(0) {
                throw LabError.usage("bad value for VideoToolbox property '\(rawName)': '\(Self.visible(v))' (holds a NUL character)")
            }
            try videoToolbox.set(rawName, value)
            return
        }
        // OpenH264's field names (codec_app_def.h's case: iRCMode, bEnableFrameSkip).
        if OpenH264Names.isFieldName(rawName) {
            if let v = value, v.utf8.contains(0) {
                throw LabError.usage("bad value for OpenH264 setting '\(rawName)': '\(Self.visible(v))' (holds a NUL character)")
            }
            guard let v = value else { throw LabError.usage("OpenH264 setting '\(rawName)' needs a value") }
            try openh264.set(rawName, v)
            return
        }
        let name = rawName.utf8.contains(UInt8(ascii: "_")) ? rawName.replacingOccurrences(of: "_", with: "-") : rawName
        if let v = value, v.utf8.contains(0) {
            throw LabError.usage("bad value for setting '\(name)': '\(Self.visible(v))' (holds a NUL character)")
        }
        func integer() throws -> Int {
            guard let v = value, let n = Int(v), n >= 0 else {
                throw LabError.usage("setting '\(name)' needs a whole number >= 0, got '\(value ?? "")'")
            }
            return n
        }
        // x264 keeps frame counts in C ints (x264_param_t.i_frame_total, the CLI's i_seek): a count must fit one.
        func frameCount() throws -> Int {
            let n = try integer()
            guard n <= Int(Int32.max) else {
                throw LabError.usage("setting '\(name)' must be at most \(Int32.max) frames (x264 counts frames in a C int), got '\(value ?? "")'")
            }
            return n
        }
        func checkSeekPlusFrames() throws {
            if let s = seek, let f = frames, s + f > Int(Int32.max) {
                throw LabError.usage("settings 'seek' (\(s)) plus 'frames' (\(f)) must be at most \(Int32.max) frames (x264 counts frames in a C int)")
            }
        }
        func text() throws -> String {
            guard let v = value, !v.isEmpty else { throw LabError.usage("setting '\(name)' needs a value") }
            return v
        }
        switch name {
        case "preset": preset = try text()
        case "tune": tune = try text()
        case "profile": profile = try text()
        case "vt":
            // `--vt NAME=VALUE`: one VideoToolbox property.
            guard let v = value, let eq = v.firstIndex(of: "="), eq != v.startIndex else {
                throw LabError.usage("--vt needs NAME=VALUE (a VideoToolbox property, e.g. AverageBitRate=1000000), got '\(value ?? "")'")
            }
            try videoToolbox.set(String(v[..<eq]), String(v[v.index(after: eq)...]))
        case "encoder":
            let v = try text()
            guard let e = EncoderName(rawValue: v.lowercased()) else {
                throw LabError.usage("setting 'encoder' must be x264 or openh264, got '\(v)'")
            }
            encoder = e
        case "openh264":
            // `--openh264 NAME=VALUE`: one SEncParamExt field.
            guard let v = value, let eq = v.firstIndex(of: "="), eq != v.startIndex else {
                throw LabError.usage("--openh264 needs NAME=VALUE (an SEncParamExt field of codec_app_def.h, e.g. iRCMode=timestamp), got '\(value ?? "")'")
            }
            try openh264.set(String(v[..<eq]), String(v[v.index(after: eq)...]))
        case "vt-compat":
            switch value {
            case nil, "true": videoToolbox.compat = true
            case "false": videoToolbox.compat = false
            default: throw LabError.usage("--vt-compat is a switch without a value, got '\(value ?? "")'")
            }
        case "frames":
            // As in x264's CLI, 0 means every frame.
            let n = try frameCount()
            frames = n == 0 ? nil : n
            try checkSeekPlusFrames()
        case "seek":
            seek = try frameCount()
            try checkSeekPlusFrames()
        case "verify":
            let v = try text()
            guard let mode = VerifyMode(rawValue: v.lowercased()) else {
                throw LabError.usage("setting 'verify' must be full or none, got '\(v)'")
            }
            verify = mode
        case _ where TimestampSettings.names.contains(name):
            try timestamps.set(name, value)
        case "rate-schedule":
            rateSchedule = try RateSchedule(parsing: try text())
        case "settle-tolerance":
            let v = try text()
            guard let d = RateSchedule.decimal(v, places: 3)?.approximateValue, d > 0, d <= 1000 else {
                throw LabError.usage("setting 'settle-tolerance' must be a percentage above 0 and at most 1000 (e.g. 10), got '\(v)'")
            }
            settleTolerancePercent = d
        case "rtp":
            var r = rtp ?? RTPRunSettings()
            try r.setRTP(try text())
            rtp = r
        case "loss":
            var r = rtp ?? RTPRunSettings()
            try r.setLoss(try text())
            rtp = r
        case "rc":
            let v = try text()
            guard let mode = RateControlMode(rawValue: v.lowercased()) else {
                throw LabError.usage("setting 'rc' must be one of cqp, crf, abr, cbr, vbr, got '\(v)'")
            }
            rc = mode
        default:
            if Self.unsupported.contains(name) {
                throw LabError.usage("setting '\(name)' is an x264 CLI option the lab does not support (it changes the input, output or passes)")
            }
            if Self.ignored.contains(name) { return }
            if let v = value {
                if let d = Self.cFloat(v), !d.isFinite, !(name == "ratetol" && v.hasPrefix("inf")) {
                    throw LabError.usage("bad value for setting '\(name)': '\(v)' (not a finite number)")
                }
                if let n = Self.cInteger(v), Int32(exactly: n) == nil {
                    throw LabError.usage("bad value for setting '\(name)': '\(v)' (outside x264's int range)")
                }
            }
            options.append(X264Option(name, value))
        }
    }

    /// `text` with each NUL character written as `\0`, for messages.
    static func visible(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{0}", with: "\\0")
    }

    /// The number C's strtod(3) reads from the whole of `text` (leading white space skipped, as x264's atof
    /// does; `nan`, `inf`, hex floats), or nil when it reads nothing or stops before the end.
    static func cFloat(_ text: String) -> Double? {
        text.withCString { start in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(start, &end)
            guard let end, end != UnsafeMutablePointer(mutating: start), end.pointee == 0 else { return nil }
            return value
        }
    }

    /// The integer C's strtol(3) with base 0 reads from the whole of `text`, as x264's atoi does (leading white
    /// space, a sign, `0x` hex, `0` octal), in 128 bits so that a value past 64 bits is still seen as too large
    /// (strtol clamps it with ERANGE: returned as `Int128(Int64.max) + 1` or `Int128(Int64.min) - 1`); nil when
    /// strtol reads nothing or stops before the end.
    static func cInteger(_ text: String) -> Int128? {
        text.withCString { start in
            var end: UnsafeMutablePointer<CChar>?
            errno = 0
            let value = strtol(start, &end, 0)
            let overflow = errno == ERANGE
            guard let end, end != UnsafeMutablePointer(mutating: start), end.pointee == 0 else { return nil }
            if overflow { return value < 0 ? Int128(Int64.min) - 1 : Int128(Int64.max) + 1 }
            return Int128(value)
        }
    }

    /// `text` read as a number when it is a plain decimal (digits with at most one '.', at most 18 digits: no sign,
    /// exponent, `0x` hex, `nan` or `inf`, which Swift's `Double(_:)` would all read; ``VideoToolboxSettings/decimal(_:)``),
    /// for values the lab reads itself (not x264's options, which x264 reads with strtol/strtod); nil otherwise.
    static func plainDecimal(_ text: String) -> Double? {
        VideoToolboxSettings.decimal(text) == nil ? nil : Double(text)
    }

    /// The settings the lab itself takes by name (beside x264's options, the timestamps stage's and VideoToolbox's).
    static let labNames: Set<String> = ["preset", "tune", "profile", "vt", "vt-compat", "frames", "seek", "verify", "rc",
                                        "rate-schedule", "settle-tolerance", "encoder", "openh264", "rtp", "loss"]

    /// Whether `rawName` (a flag's name without its dashes, or an experiment key) names a setting: the lab's own,
    /// the timestamps stage's, a VideoToolbox property, an x264 CLI option the lab refuses or ignores by name, or an
    /// option libx264's `x264_param_parse` knows (``X264Names/isParameterName(_:)``).
    static func isKnownName(_ rawName: String) -> Bool {
        if VideoToolboxSettings.isPropertyKey(rawName) || OpenH264Names.isFieldName(rawName) { return true }
        let name = rawName.replacingOccurrences(of: "_", with: "-")
        return labNames.contains(name) || TimestampSettings.names.contains(name) || unsupported.contains(name)
            || ignored.contains(name) || flagsWithoutArgument.contains(name) || X264Names.isParameterName(name)
    }

    /// Whether the x264 CLI option `name` is written without an argument.
    static func takesNoArgument(_ name: String) -> Bool {
        name.hasPrefix("no-") || flagsWithoutArgument.contains(name)
    }

    /// Parses x264 CLI flags (`--keyint 60`, `--keyint=60`, `-I 60`, `--no-cabac`) plus the lab's `--rc`.
    ///
    /// - Parameter arguments: the flags, without the input path or the lab's own `--db`/`--out`.
    /// - Returns: the settings, and the arguments that were not flags (positional), in order.
    /// - Throws: `.usage` naming the flag when it lacks its argument or is not a flag x264 knows the shape of.
    public static func parse(arguments: [String]) throws -> (EncodeSettings, [String]) {
        var settings = EncodeSettings()
        var positional: [String] = []
        var vtGiven: Set<String> = []
        var rtpGiven: Set<String> = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            var name: String
            var inline: String?
            if arg.hasPrefix("--") && arg.count > 2 {
                name = String(arg.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else if arg.hasPrefix("-") && arg.count == 2, let c = arg.last, let long = shortOptions[c] {
                name = long
            } else if arg.hasPrefix("-") && arg.count > 1 && Int(arg) == nil {
                throw LabError.usage("unknown flag '\(arg)'")
            } else {
                positional.append(arg)
                continue
            }
            // A name neither x264 nor the lab knows is refused as such, before the word after it is taken as its
            // value (which would turn the message into "needs an argument" or hide the clip).
            guard isKnownName(name) else { throw LabError.usage("unknown setting '\(name)'") }
            if takesNoArgument(name) {
                if let v = inline {
                    throw LabError.usage("flag '--\(name)' takes no argument, got '\(v)'")
                }
                try settings.set(name, nil)
                continue
            }
            let value: String
            if let v = inline {
                value = v
            } else {
                guard i < arguments.count else { throw LabError.usage("flag '--\(name)' needs an argument") }
                value = arguments[i]
                i += 1
            }
            // A VideoToolbox property given twice (in any spelling) is refused, not silently the last.
            if name == "vt", let eq = value.firstIndex(of: "="), eq != value.startIndex {
                let property = try VideoToolboxSettings.property(named: String(value[..<eq])).rawValue
                if !vtGiven.insert(property).inserted {
                    throw LabError.usage("--vt \(property) is given twice; give each VideoToolbox property once")
                }
            }
            // One RTP stage per run: a second --rtp or --loss would silently replace the first (--loss alone implies
            // --rtp, so each flag is counted by name, not by the setting it fills).
            if name == "rtp" || name == "loss", !rtpGiven.insert(name).inserted {
                throw LabError.usage("--\(name) is given twice (the second '\(value)'); give it once")
            }
            // One schedule per run: a second --rate-schedule would silently replace the first.
            if name == "rate-schedule", let earlier = settings.rateSchedule {
                throw LabError.usage("--rate-schedule is given twice ('\(earlier.spec)' and '\(value)'); give one schedule, its items separated by ';'")
            }
            try settings.set(name, value)
        }
        return (settings, positional)
    }

    /// The last value given for x264 option `name`, or nil when absent.
    public func value(of name: String) -> String?? {
        guard let o = options.last(where: { $0.name == name }) else { return nil }
        return .some(o.value)
    }

    private func number(_ name: String) throws -> Double? {
        guard let v = value(of: name) else { return nil }
        guard let s = v, let d = Double(s), d.isFinite else {
            throw LabError.usage("setting '\(name)' needs a number, got '\(v ?? "")'")
        }
        return d
    }

    private static func format(_ kbps: Double) -> String {
        kbps == kbps.rounded() ? String(Int(kbps)) : String(kbps)
    }

    /// Checks the rate-control settings and expands the lab's `--rc` mode into x264 options: ``resolved(dataRateLimitsVBV:)``
    /// without a DataRateLimits mapping.
    public func resolved() throws -> EncodeSettings {
        try resolved(dataRateLimitsVBV: nil)
    }

    /// Maps the VideoToolbox properties onto x264's options (docs/videotoolbox.md), then checks the rate-control
    /// settings and expands the lab's `--rc` mode into x264 options.
    ///
    /// The properties become options placed before the given ones (``vtOptionCount`` of them), so that an x264 option
    /// the user gave for the same parameter is not overridden: it wins, and ``adjustments`` says so naming both. They
    /// may also set ``rc`` (ConstantBitRate: cbr, VariableBitRate: vbr), ``profile`` (ProfileLevel, unless `--profile`
    /// is given) and ``vtTune`` (RealTime: zerolatency). ``adjustments`` and ``resolvedKeyframeRule`` are filled in.
    ///
    /// - Parameter dataRateLimitsVBV: maps DataRateLimits' canonical flat text and vt-compat onto x264's VBV and the
    ///   lab's target bitrate (the caller knows the frame rate: `DataRateLimits.vbv(frameRate:vtCompat:)`); nil
    ///   returned means no limit. Without it DataRateLimits is recorded, not mapped (an adjustment says so).
    /// - Parameter keyframeTiming: how the frames are timed, for MaxKeyFrameIntervalDuration: at a constant rate
    ///   x264's keyint carries it (⌊T ÷ frame duration⌋), at a variable rate the lab forces IDRs with x264's scene
    ///   cuts off (`scenecut 0`); nil leaves the duration limit unmapped (the keyint is the frame limit's alone).
    /// - Returns: settings whose `options` carry everything x264 needs (the `rc` field is kept for the record).
    /// - Throws: `.usage` for a contradiction, naming the settings: Apple's documented incompatibilities (ConstantBitRate
    ///   with AverageBitRate or DataRateLimits; VariableBitRate, VBVMaxBitRate, VBVBufferDuration and
    ///   VBVInitialDelayPercentage with AverageBitRate or DataRateLimits; VariableBitRate or VBVMaxBitRate with
    ///   ConstantBitRate), H264EntropyMode CABAC with a Baseline profile (unless vt-compat), a property needing another
    ///   rc than the one given, a VBV key without a VBV rate, a buffer that is not 1 to 2147483 kbit; a mode without its
    ///   rate (`cbr` without `bitrate`), a rate key of another mode (`cqp` with `crf`), a `cbr` whose `vbv-maxrate`
    ///   differs from its `bitrate`, a `vbr` whose `vbv-maxrate` is not above its `bitrate`, or `nal-hrd` other than
    ///   `cbr` for `cbr`; and the errors of `dataRateLimitsVBV`.
    public func resolved(dataRateLimitsVBV: ((_ limits: String, _ vtCompat: Bool) throws -> VTDataRateVBV?)?,
                         keyframeTiming: VTKeyframeTiming? = nil) throws -> EncodeSettings {
        if givenOptionCount != nil { return self }
        try timestamps.check()
        var out = self
        out.givenOptionCount = options.count
        out.vtOptionCount = 0
        // OpenH264: the common keys and VideoToolbox's properties become its fields; x264's options stay as given.
        if encoder == .openh264 {
            let (fields, adjustments) = try OpenH264Settings.resolve(self)
            out.openh264.applied = fields
            out.adjustments = adjustments
            return out
        }
        if !openh264.isEmpty {
            throw LabError.usage("OpenH264 settings without encoder openh264: \(openh264.given.map(\.name).joined(separator: ", ")) (add --encoder openh264)")
        }
        if !videoToolbox.isEmpty {
            let m = try videoToolboxMapping(dataRateLimitsVBV: dataRateLimitsVBV, keyframeTiming: keyframeTiming)
            out.options = m.options + options
            out.vtOptionCount = m.options.count
            out.vtTune = m.tune
            if let p = m.profile { out.profile = p }
            if let mode = m.rc { out.rc = mode }
            out.adjustments = m.adjustments
            out.resolvedKeyframeRule = m.keyframeLimits
        }
        try out.expandRateControl()
        return out
    }

    /// Expands ``rc`` into x264 options appended after the others (see ``resolved(dataRateLimitsVBV:)``).
    private mutating func expandRateControl() throws {
        guard let mode = rc else { return }
        // The settings before this expansion: checks read them, additions go to self.
        let base = self
        func value(of name: String) -> String?? { base.value(of: name) }
        func number(_ name: String) throws -> Double? { try base.number(name) }
        let present = ["qp", "crf", "bitrate"].filter { value(of: $0) != nil }
        func forbid(_ keys: [String]) throws {
            if let bad = keys.first(where: { present.contains($0) }) {
                throw LabError.usage("contradictory settings: rc \(mode.rawValue) with '\(bad)'")
            }
        }
        func require(_ key: String) throws -> Double {
            guard let v = try number(key) else {
                throw LabError.usage("contradictory settings: rc \(mode.rawValue) needs '\(key)'")
            }
            return v
        }
        switch mode {
        case .cqp:
            try forbid(["crf", "bitrate"])
            _ = try require("qp")
        case .crf:
            try forbid(["qp", "bitrate"])
            if value(of: "crf") == nil { options.append(X264Option("crf", "23")) }
        case .abr:
            try forbid(["qp", "crf"])
            _ = try require("bitrate")
        case .cbr:
            try forbid(["qp", "crf"])
            let bitrate = try require("bitrate")
            if let maxrate = try number("vbv-maxrate") {
                if maxrate != bitrate {
                    throw LabError.usage("contradictory settings: rc cbr with vbv-maxrate \(Self.format(maxrate)) different from bitrate \(Self.format(bitrate))")
                }
            } else {
                options.append(X264Option("vbv-maxrate", Self.format(bitrate)))
            }
            if let bufsize = try number("vbv-bufsize") {
                if bufsize <= 0 {
                    throw LabError.usage("contradictory settings: rc cbr needs a vbv-bufsize above 0, got \(Self.format(bufsize))")
                }
            } else {
                options.append(X264Option("vbv-bufsize", Self.format(bitrate)))
            }
            if let hrd = value(of: "nal-hrd") {
                if hrd != "cbr" {
                    throw LabError.usage("contradictory settings: rc cbr with nal-hrd '\(hrd ?? "")' (cbr implies nal-hrd cbr)")
                }
            } else {
                options.append(X264Option("nal-hrd", "cbr"))
            }
        case .vbr:
            try forbid(["qp"])
            if case .some(.some("cbr")) = value(of: "nal-hrd") {
                throw LabError.usage("contradictory settings: rc vbr with nal-hrd cbr (CBR HRD needs a constant bitrate)")
            }
            if let bufsize = try number("vbv-bufsize"), bufsize <= 0 {
                throw LabError.usage("contradictory settings: rc vbr needs a vbv-bufsize above 0, got \(Self.format(bufsize))")
            }
            if present.contains("crf") && present.contains("bitrate") {
                throw LabError.usage("contradictory settings: rc vbr with both 'crf' and 'bitrate'")
            }
            var maxrate = try number("vbv-maxrate")
            if present.contains("crf") {
                guard maxrate != nil else {
                    throw LabError.usage("contradictory settings: rc vbr with crf needs 'vbv-maxrate'")
                }
            } else {
                let bitrate = try require("bitrate")
                if let m = maxrate {
                    if m <= bitrate {
                        throw LabError.usage("contradictory settings: rc vbr needs vbv-maxrate above bitrate \(Self.format(bitrate)), got \(Self.format(m))")
                    }
                } else {
                    let m = (bitrate * vbrDefaultMaxrateFactor).rounded()
                    options.append(X264Option("vbv-maxrate", Self.format(m)))
                    maxrate = m
                }
            }
            if value(of: "vbv-bufsize") == nil, let m = maxrate {
                options.append(X264Option("vbv-bufsize", Self.format(m)))
            }
        }
    }

    /// The x264 CLI flags equivalent to these settings (after ``resolved()``), e.g. `--preset fast --crf 23`, then the
    /// lab's own (`--rate-schedule`, `--rtp`, `--loss`): the run's label when it has none of its own.
    public var x264Arguments: [String] {
        var args: [String] = []
        // The encoder when not x264, and OpenH264's fields as given (the common keys follow among the options).
        if encoder != .x264 {
            args += ["--encoder", encoder.rawValue] + openh264.given.flatMap { ["--\($0.name)", $0.value] }
            // VideoToolbox's properties as given: for x264 they show through the options they became, for OpenH264 they
            // become fields that are not among the given ones, so the label names them (by Apple's name, sorted).
            args += videoToolbox.canonicalProperties.sorted { $0.key < $1.key }.flatMap { ["--vt", "\($0.key)=\($0.value)"] }
        }
        if let p = preset { args += ["--preset", p] }
        if let t = effectiveTune { args += ["--tune", t] }
        if let f = frames { args += ["--frames", String(f)] }
        if let s = seek { args += ["--seek", String(s)] }
        for o in options {
            args.append("--\(o.name)")
            if let v = o.value { args.append(v) }
        }
        if let p = profile { args += ["--profile", p] }
        if let r = rateSchedule { args += ["--rate-schedule", r.spec] }
        if let t = settleTolerancePercent { args += ["--settle-tolerance", RateSchedule.format(t)] }
        // The RTP stage (canonical specs), so that runs with another loss model are told apart by their labels.
        if let r = rtp {
            args += ["--rtp", r.rtpSpec]
            if let l = r.lossSpec { args += ["--loss", l] }
        }
        return args + timestamps.arguments
    }

    /// The tune x264 gets: ``tune`` and ``vtTune``, comma-separated (nil without either).
    public var effectiveTune: String? {
        let tunes = [tune, vtTune].compactMap { $0 }
        return tunes.isEmpty ? nil : tunes.joined(separator: ",")
    }

    /// What the run key hashes of the VideoToolbox properties: `{"properties": {NAME: canonical value}, "vt_compat":
    /// Bool}`; nil without properties and vt-compat, so that keys of runs without them do not change.
    public var videoToolboxKeyObject: [String: Any]? {
        videoToolbox.isEmpty ? nil : ["properties": videoToolbox.canonicalProperties, "vt_compat": videoToolbox.compat]
    }

    /// `runs.settings.videotoolbox`: the properties as given (canonical, ``VideoToolboxSettings/canonicalProperties``),
    /// `vt_compat`, `adjustments` (after ``resolved()``), `tune` (the tune the properties added, or null) and
    /// `keyframe_rule` (`max_frames`, `max_duration_s` as text, `vt_compat`, `placement` (`keyint`: x264's keyint
    /// carries the rule; `forced`: the lab forces the duration limit's IDRs, scenecut 0) and, at a constant rate with
    /// a duration limit, `duration_keyint` (⌊T ÷ frame duration⌋); null without keyframe properties); nil
    /// without properties and vt-compat.
    public var videoToolboxJSON: [String: Any]? {
        guard var o = videoToolboxKeyObject else { return nil }
        o["adjustments"] = adjustments
        o["tune"] = vtTune ?? NSNull()
        o["keyframe_rule"] = resolvedKeyframeRule.map { k -> [String: Any] in
            var rule: [String: Any] = ["max_frames": k.maxFrames, "max_duration_s": VideoToolboxSettings.text(k.maxDuration), "vt_compat": k.vtCompat]
            // How the rule is kept (absent before the mapping knew the timing): x264's keyint, or IDRs the lab forces.
            if k.durationKeyint != nil || k.forcesIDRs || k.maxDuration == .zero {
                rule["placement"] = k.forcesIDRs ? "forced" : "keyint"
            }
            if let dk = k.durationKeyint { rule["duration_keyint"] = dk }
            return rule
        } ?? NSNull()
        return o
    }

    /// A JSON-ready description: `rc`, `preset`, `tune`, `profile`, `frames`, `seek`, `options` (an array of
    /// `[name, value]` pairs in application order, value null for a flag), `x264_args` (the CLI equivalent) and, with
    /// VideoToolbox properties or vt-compat, `videotoolbox` (``videoToolboxJSON``).
    public var jsonObject: [String: Any] {
        var o: [String: Any] = [:]
        o["rc"] = rc?.rawValue ?? NSNull()
        o["preset"] = preset ?? NSNull()
        o["tune"] = tune ?? NSNull()
        o["profile"] = profile ?? NSNull()
        o["frames"] = frames ?? NSNull()
        o["seek"] = seek ?? NSNull()
        o["options"] = options.map { [$0.name, $0.value ?? NSNull()] as [Any] }
        o["x264_args"] = x264Arguments.joined(separator: " ")
        if let vt = videoToolboxJSON { o["videotoolbox"] = vt }
        if let r = rateSchedule { o["rate_schedule"] = r.spec }
        if let t = settleTolerancePercent { o["settle_tolerance_pct"] = t }
        if let r = rtp {
            o["rtp"] = r.rtpSpec
            if let l = r.lossSpec { o["loss"] = l }
        }
        if encoder != .x264 {
            o["encoder"] = encoder.rawValue
            o["openh264"] = ["given": openh264.given.map { [$0.name, $0.value] }, "applied": openh264.applied.map { [$0.name, $0.value] }]
        }
        return o
    }
}
