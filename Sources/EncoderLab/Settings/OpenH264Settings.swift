import Foundation

/// The encoder a run drives: `--encoder` (experiment key `encoder`). x264 is the default, and a run with x264 hashes
/// no encoder name, so every run key made before the choice existed stays the same.
public enum EncoderName: String, CaseIterable, Sendable {
    case x264
    /// Cisco's OpenH264 (Debian's libopenh264), WebRTC's software H.264 encoder (``OpenH264Session``).
    case openh264
}

/// One `SEncParamExt` field (OpenH264's codec_app_def.h) as the lab takes it: `--openh264 NAME=VALUE`, or the field's
/// name as a flag or experiment key (`--iRCMode timestamp`, `"bEnableFrameSkip": false`).
public struct OpenH264Field: Equatable, Sendable {
    /// The field's name in codec_app_def.h (`iRCMode`, `uiIntraPeriod`; `uiSliceMode`, `uiSliceNum`, `uiSliceSizeConstraint` and `iDLayerQp`
    /// are those of `sSpatialLayers[0]`).
    public var name: String
    /// The value in canonical text: an enum's lab name (`bitrate` for `RC_BITRATE_MODE`), `true`/`false`, or a decimal integer.
    public var value: String
    public init(_ name: String, _ value: String) { self.name = name; self.value = value }
}

/// OpenH264's settings by the names of its own header (codec_app_def.h, libopenh264 2.3.1), with their values checked.
///
/// Enumerations take the lab's lower-case name of each constant or its number: `iRCMode` quality (RC_QUALITY_MODE, 0),
/// bitrate (1), bufferbased (2), timestamp (3), off (RC_OFF_MODE, -1); `iComplexityMode` low, medium, high (0-2);
/// `iUsageType` camera (CAMERA_VIDEO_REAL_TIME, 0), screen (SCREEN_CONTENT_REAL_TIME, 1); `uiSliceMode` single (0),
/// fixedslcnum (1: `uiSliceNum` slices), sizelimited (SM_SIZELIMITED_SLICE, 3: slices of at most about
/// `uiSliceSizeConstraint` bytes, WebRTC's setting for packetization mode 0); `uiProfileIdc` baseline (PRO_BASELINE,
/// 66), main (77), high (100), layer 0's; `eSpsPpsIdStrategy` constant (CONSTANT_ID, 0), increasing (INCREASING_ID, 1),
/// sps_listing (2), sps_listing_and_pps_increasing (3), sps_pps_listing (6); `iEntropyCodingModeFlag` cavlc (0),
/// cabac (1). Booleans take true/false/1/0. Rates are in bit/s as the header has them.
public enum OpenH264Names {
    enum Kind {
        case integer(ClosedRange<Int>)
        case boolean
        case choice([(String, Int)])
    }

    /// Every field the lab sets, with its kind and range (the ranges are OpenH264's where its header or its
    /// parameter check gives one, else what the C type holds).
    static let fields: [(name: String, kind: Kind)] = [
        ("iUsageType", .choice([("camera", 0), ("screen", 1)])),
        ("iRCMode", .choice([("quality", 0), ("bitrate", 1), ("bufferbased", 2), ("timestamp", 3), ("off", -1)])),
        ("iTargetBitrate", .integer(0...Int(Int32.max))),
        ("iMaxBitrate", .integer(0...Int(Int32.max))),
        ("uiIntraPeriod", .integer(0...Int(Int32.max))),
        ("bEnableFrameSkip", .boolean),
        ("iEntropyCodingModeFlag", .choice([("cavlc", 0), ("cabac", 1)])),
        ("iComplexityMode", .choice([("low", 0), ("medium", 1), ("high", 2)])),
        ("bEnableSceneChangeDetect", .boolean),
        ("iMultipleThreadIdc", .integer(0...16)),
        ("bUseLoadBalancing", .boolean),
        ("uiSliceMode", .choice([("single", 0), ("fixedslcnum", 1), ("sizelimited", 3)])),
        ("uiSliceNum", .integer(0...35)),
        ("uiSliceSizeConstraint", .integer(0...Int(UInt32.max))),
        ("iNumRefFrame", .integer(-1...16)),
        ("iMinQp", .integer(0...51)),
        ("iMaxQp", .integer(0...51)),
        ("iDLayerQp", .integer(0...51)),
        ("eSpsPpsIdStrategy", .choice([("constant", 0), ("increasing", 1), ("sps_listing", 2),
                                       ("sps_listing_and_pps_increasing", 3), ("sps_pps_listing", 6)])),
        ("bEnableAdaptiveQuant", .boolean),
        ("bEnableBackgroundDetection", .boolean),
        ("bEnableDenoise", .boolean),
        ("bEnableLongTermReference", .boolean),
        ("iLoopFilterDisableIdc", .integer(0...2)),
        ("bFixRCOverShoot", .boolean),
        ("iIdrBitrateRatio", .integer(0...Int(Int32.max))),
        ("iPaddingFlag", .integer(0...1)),
        ("bPrefixNalAddingCtrl", .boolean),
        ("iLtrMarkPeriod", .integer(0...Int(Int32.max))),
        ("uiProfileIdc", .choice([("baseline", 66), ("main", 77), ("high", 100)])),
    ]

    /// Whether `name` is one of ``fields`` (case as in the header).
    public static func isFieldName(_ name: String) -> Bool { fields.contains { $0.name == name } }

    /// The value of field `name` in canonical text (see ``OpenH264Field/value``).
    /// - Throws: `.usage` naming the field for an unknown field (with the list) or a value outside its range or choices.
    static func canonical(_ name: String, _ value: String) throws -> String {
        guard let kind = fields.first(where: { $0.name == name })?.kind else {
            throw LabError.usage("unknown OpenH264 setting '\(name)' (known: \(fields.map(\.name).joined(separator: ", ")))")
        }
        let v = value.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .boolean:
            switch v.lowercased() {
            case "true", "1": return "true"
            case "false", "0": return "false"
            default: throw LabError.usage("bad value for OpenH264 setting '\(name)': '\(value)' (true, false, 1 or 0)")
            }
        case .integer(let range):
            guard let n = Int(v), range.contains(n) else {
                throw LabError.usage("bad value for OpenH264 setting '\(name)': '\(value)' (a whole number from \(range.lowerBound) to \(range.upperBound))")
            }
            return String(n)
        case .choice(let choices):
            if let c = choices.first(where: { $0.0 == v.lowercased() }) { return c.0 }
            if let n = Int(v), let c = choices.first(where: { $0.1 == n }) { return c.0 }
            throw LabError.usage("bad value for OpenH264 setting '\(name)': '\(value)' (one of \(choices.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")))")
        }
    }

    /// The C value of a canonical text (the enum's number, 1/0 for a boolean).
    static func number(_ name: String, _ canonical: String) -> Int {
        switch fields.first(where: { $0.name == name })?.kind {
        case .choice(let choices)?: return choices.first { $0.0 == canonical }?.1 ?? 0
        case .boolean?: return canonical == "true" ? 1 : 0
        default: return Int(canonical) ?? 0
        }
    }
}

/// The OpenH264 settings of a run: the fields given by name, and after ``EncodeSettings/resolved()`` the fields the
/// lab's common keys and VideoToolbox's properties became.
public struct OpenH264Settings: Equatable, Sendable {
    /// The fields given by name (`--openh264 NAME=VALUE`, `--NAME VALUE`), in order; a field given twice is refused.
    public var given: [OpenH264Field] = []
    /// After resolving: the fields the lab applies over `GetDefaultParams` in order: the ones the common keys
    /// (`rc`, `bitrate`, `keyint`, `threads`, `slices`, `cabac`) and VideoToolbox's properties became, then the given ones.
    public internal(set) var applied: [OpenH264Field] = []

    public init() {}

    public var isEmpty: Bool { given.isEmpty }

    /// Takes one field. - Throws: `.usage` as ``OpenH264Names/canonical(_:_:)``; a field given twice.
    public mutating func set(_ name: String, _ value: String) throws {
        let v = try OpenH264Names.canonical(name, value)
        if given.contains(where: { $0.name == name }) {
            throw LabError.usage("OpenH264 setting '\(name)' is given twice; give each once")
        }
        given.append(OpenH264Field(name, v))
    }

    /// The value applied for `name` after resolving (the last), nil when the lab leaves OpenH264's default.
    public func value(of name: String) -> String? { applied.last { $0.name == name }?.value }

    /// The x264 option names that mean the same for OpenH264 (the lab's common keys) and the field each becomes.
    static let commonKeys = ["bitrate": "iTargetBitrate", "keyint": "uiIntraPeriod", "threads": "iMultipleThreadIdc",
                             "slices": "uiSliceNum", "cabac": "iEntropyCodingModeFlag", "no-cabac": "iEntropyCodingModeFlag"]

    /// Maps the lab's common keys and VideoToolbox's properties onto OpenH264's fields, refusing what has no meaning there.
    ///
    /// - `rc abr` (or a `bitrate` without `rc`, as x264 infers ABR) → `iRCMode` bitrate; `bitrate` (kbit/s) →
    ///   `iTargetBitrate` (bit/s); `keyint` → `uiIntraPeriod` (x264's `infinite` → 0, OpenH264's "only the first");
    ///   `threads` → `iMultipleThreadIdc`; `slices N` → `uiSliceMode` fixedslcnum (single for 1) and `uiSliceNum`;
    ///   `cabac`/`no-cabac` → `iEntropyCodingModeFlag`.
    /// - VideoToolbox: AverageBitRate → `iTargetBitrate` with `iRCMode` bitrate, MaxKeyFrameInterval → `uiIntraPeriod`,
    ///   H264EntropyMode → `iEntropyCodingModeFlag`, AllowFrameReordering=false (OpenH264 codes no B-frames: nothing
    ///   to map), RealTime=true (`iUsageType` camera, OpenH264's default: said in `adjustments`).
    /// - Throws: `.usage` naming the settings: x264-only options (everything else, preset, tune, profile), an `rc` other
    ///   than abr, a common key and the field it becomes both given, a VideoToolbox property that has no OpenH264
    ///   field (DataRateLimits, MaxKeyFrameIntervalDuration, ProfileLevel, ConstantBitRate, VariableBitRate, VBV*,
    ///   ExpectedFrameRate, AllowOpenGOP, AllowFrameReordering=true), vt-compat; `iMinQp` above `iMaxQp`;
    ///   `uiSliceSizeConstraint` without `uiSliceMode` sizelimited (OpenH264 ignores it there).
    static func resolve(_ s: EncodeSettings) throws -> (fields: [OpenH264Field], adjustments: [String]) {
        var x264Only: [String] = []
        if s.preset != nil { x264Only.append("preset") }
        if s.tune != nil { x264Only.append("tune") }
        if s.profile != nil { x264Only.append("profile") }
        for o in s.options where commonKeys[o.name] == nil && !x264Only.contains(o.name) { x264Only.append(o.name) }
        if !x264Only.isEmpty {
            throw LabError.usage("x264-only settings with encoder openh264: \(x264Only.joined(separator: ", ")) (OpenH264's own are named as in codec_app_def.h: see 'enclab help encode')")
        }
        var fields: [OpenH264Field] = []
        var adjustments: [String] = []
        var sources: [String: String] = [:]
        func add(_ name: String, _ value: String, from source: String) throws {
            fields.removeAll { $0.name == name }
            fields.append(OpenH264Field(name, try OpenH264Names.canonical(name, value)))
            sources[name] = source
        }
        // VideoToolbox's properties first: the common keys and the fields given by name are checked against them.
        let vt = s.videoToolbox
        if vt.compat { throw LabError.usage("vt-compat with encoder openh264: it resolves VideoToolbox combinations onto x264's options") }
        var unmapped: [String] = []
        if vt.dataRateLimits != nil { unmapped.append("DataRateLimits") }
        if vt.maxKeyFrameIntervalDuration != nil { unmapped.append("MaxKeyFrameIntervalDuration") }
        if vt.profileLevel != nil { unmapped.append("ProfileLevel") }
        if vt.constantBitRate != nil { unmapped.append("ConstantBitRate") }
        if vt.variableBitRate != nil { unmapped.append("VariableBitRate") }
        if vt.vbvMaxBitRate != nil { unmapped.append("VBVMaxBitRate") }
        if vt.vbvBufferDuration != nil { unmapped.append("VBVBufferDuration") }
        if vt.vbvInitialDelayPercentage != nil { unmapped.append("VBVInitialDelayPercentage") }
        if vt.expectedFrameRate != nil { unmapped.append("ExpectedFrameRate") }
        if vt.allowOpenGOP != nil { unmapped.append("AllowOpenGOP") }
        // MaxFrameDelayCount caps x264's look-ahead, B-frames and threads (Encode/FrameDelayLimit.swift); OpenH264's
        // delay is not measured by the lab (no frame_delays rows), so the limit could not be checked.
        if vt.maxFrameDelayCount != nil { unmapped.append("MaxFrameDelayCount") }
        if vt.allowFrameReordering == true { unmapped.append("AllowFrameReordering=true (OpenH264 codes no B-frames)") }
        if !unmapped.isEmpty {
            throw LabError.usage("VideoToolbox properties with no OpenH264 field: \(unmapped.joined(separator: ", ")) (docs/openh264.md lists the ones mapped)")
        }
        if let b = vt.averageBitRate {
            try add("iRCMode", "bitrate", from: "AverageBitRate")
            try add("iTargetBitrate", String(b), from: "AverageBitRate")
        }
        if let k = vt.maxKeyFrameInterval { try add("uiIntraPeriod", String(k), from: "MaxKeyFrameInterval") }
        if let e = vt.entropyMode { try add("iEntropyCodingModeFlag", e == .cabac ? "cabac" : "cavlc", from: "H264EntropyMode") }
        if vt.realTime == true { adjustments.append("RealTime=true: OpenH264's iUsageType camera (CAMERA_VIDEO_REAL_TIME), its default") }
        // The lab's common keys.
        func common(_ name: String, _ field: String, _ value: String) throws {
            if let source = sources[field] {
                throw LabError.usage("contradictory settings: '\(name)' and \(source) both set OpenH264's \(field); give one")
            }
            try add(field, value, from: name)
        }
        if let mode = s.rc {
            guard mode == .abr else {
                throw LabError.usage("rc \(mode.rawValue) with encoder openh264: OpenH264 has no such mode; use rc abr or iRCMode (quality, bitrate, bufferbased, timestamp, off)")
            }
            try common("rc", "iRCMode", "bitrate")
        }
        for o in s.options {
            switch o.name {
            case "bitrate":
                guard let v = o.value, let kbps = EncodeSettings.plainDecimal(v), kbps > 0, kbps * 1000 <= Double(Int32.max) else {
                    throw LabError.usage("bad value for setting 'bitrate': '\(o.value ?? "")' (kbit/s as a decimal number above 0, at most \(Int32.max / 1000) for OpenH264's int bit/s)")
                }
                // Bitrate mode unless a mode is given (rc, iRCMode, or AverageBitRate's bitrate mode).
                if s.rc == nil && sources["iRCMode"] == nil && !s.openh264.given.contains(where: { $0.name == "iRCMode" }) {
                    try add("iRCMode", "bitrate", from: "bitrate")
                }
                try common("bitrate", "iTargetBitrate", String(Int((kbps * 1000).rounded())))
            case "keyint":
                let v = o.value ?? ""
                try common("keyint", "uiIntraPeriod", v == "infinite" ? "0" : v)
            case "threads":
                let v = o.value ?? ""
                try common("threads", "iMultipleThreadIdc", v == "auto" ? "0" : v)
            case "slices":
                let v = o.value ?? ""
                try common("slices", "uiSliceMode", v == "1" ? "single" : "fixedslcnum")
                try common("slices", "uiSliceNum", v)
            case "cabac": try common("cabac", "iEntropyCodingModeFlag", "cabac")
            case "no-cabac": try common("no-cabac", "iEntropyCodingModeFlag", "cavlc")
            default: break
            }
        }
        for f in s.openh264.given {
            if let source = sources[f.name] {
                throw LabError.usage("contradictory settings: OpenH264's \(f.name) given and set by \(source); give one")
            }
            fields.append(f)
        }
        // OpenH264 2.3.1 takes a QP range whose minimum is above its maximum without a word (InitializeExt returns 0).
        if let low = fields.last(where: { $0.name == "iMinQp" }).flatMap({ Int($0.value) }),
           let high = fields.last(where: { $0.name == "iMaxQp" }).flatMap({ Int($0.value) }), low > high {
            throw LabError.usage("OpenH264's iMinQp \(low) is above its iMaxQp \(high): no QP lies in that range (OpenH264 2.3.1 accepts it without a word); give iMinQp <= iMaxQp")
        }
        // OpenH264 2.3.1 reads uiSliceSizeConstraint only in sizelimited mode (SM_SIZELIMITED_SLICE), without a word
        // otherwise: ParamValidationExt sets it to 0 in single mode (encoder_ext.cpp), InitSliceSegment puts its own
        // default in its place in the other modes (svc_enc_slice_segment.cpp).
        if let constraint = fields.last(where: { $0.name == "uiSliceSizeConstraint" }) {
            let mode = fields.last { $0.name == "uiSliceMode" }?.value ?? "single"
            guard mode == "sizelimited" else {
                throw LabError.usage("OpenH264's uiSliceSizeConstraint \(constraint.value) with uiSliceMode \(mode)\(sources["uiSliceMode"].map { " (from \($0))" } ?? ""): OpenH264 2.3.1 reads the constraint only with uiSliceMode sizelimited and ignores it otherwise, without a word; give uiSliceMode sizelimited, or no uiSliceSizeConstraint")
            }
        }
        let rcMode = fields.last { $0.name == "iRCMode" }?.value ?? "quality"
        let target = fields.last { $0.name == "iTargetBitrate" }.map { Int($0.value) ?? 0 } ?? 0
        // OpenH264 2.3.1 refuses a target of 0 in every mode but off (ParamValidationExt: "Invalid bitrate settings").
        if rcMode != "off" && target <= 0 {
            throw LabError.usage("encoder openh264 needs a target bitrate for iRCMode \(rcMode): bitrate (kbit/s), iTargetBitrate (bit/s) or AverageBitRate; or iRCMode off with iDLayerQp")
        }
        return (fields, adjustments)
    }
}
