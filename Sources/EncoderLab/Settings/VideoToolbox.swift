import Foundation
import H264

/// VideoToolbox's compression properties (`VTCompressionSession`), in Apple's names and units, as the lab takes them:
/// `enclab encode INPUT --vt NAME=VALUE` (repeatable) and `--vt-compat`, or the same names as experiment setting keys.
///
/// Names are Apple's, with or without the `kVTCompressionPropertyKey_` prefix (case matters, as in Apple's headers);
/// values are Apple's units: bit rates in bit/s, durations in seconds, booleans `true`/`false`/`1`/`0`. The properties
/// and their documentation (developer.apple.com/documentation/videotoolbox/kvtcompressionpropertykey_NAME):
/// - `AverageBitRate`: the long-term average in bit/s, not a hard limit; 0 (Apple's default) lets the encoder choose.
/// - `DataRateLimits`: zero, one or two hard limits, each BYTES in SECONDS of decode time; on the command line Apple's
///   flat array `BYTES,SECONDS[,BYTES,SECONDS]`, in an experiment a list of `[bytes, seconds]` pairs. Kept as its
///   canonical flat text (``dataRateLimits``); the lab's `DataRateLimits` type parses it exactly and maps it onto a VBV.
/// - `MaxKeyFrameInterval`: frames, 0 to 2^30 − 1, x264's largest keyint (0, Apple's default: the encoder chooses).
/// - `MaxKeyFrameIntervalDuration`: seconds, ≥ 0, kept exact (0, Apple's default: no limit).
/// - `AllowFrameReordering`: boolean (Apple's default true): false forbids B-frames.
/// - `H264EntropyMode`: `CAVLC` or `CABAC`, with or without `kVTH264EntropyMode_`.
/// - `ProfileLevel`: Apple's H.264 list, with or without `kVTProfileLevel_`: `H264_Baseline_1_3`, `H264_Baseline_3_0`
///   ... `H264_Baseline_5_2`, `H264_Main_3_0` ... `H264_Main_5_2`, `H264_High_3_0` ... `H264_High_5_2` (levels 3_0,
///   3_1, 3_2, 4_0, 4_1, 4_2, 5_0, 5_1, 5_2), each profile's `_AutoLevel`, and `H264_ConstrainedBaseline_AutoLevel`.
///   `H264_Extended_5_0`, `H264_Extended_AutoLevel` and `H264_ConstrainedHigh_AutoLevel` are Apple's too but x264
///   cannot signal them (it has no Extended profile, and never sets constraint_set4_flag/constraint_set5_flag): errors.
/// - `MaxFrameDelayCount`: frames, ≥ 0: before the call that encodes frame N returns, frame N − M has been emitted
///   (Apple's default, kVTUnlimitedFrameDelayCount, is the property not given). Applied in x264's parameters when the
///   encoder is made (``X264DelayParameters``), checked per frame after the run (``EncoderDelay``).
/// - `RealTime`, `AllowOpenGOP`: booleans. `ExpectedFrameRate`: frames per second, ≥ 0 (a hint; recorded only).
/// - `ConstantBitRate`, `VariableBitRate`, `VBVMaxBitRate`: bit/s. `VBVBufferDuration`: seconds, > 0 (Apple's default
///   2.5). `VBVInitialDelayPercentage`: 0 to 100 (Apple's default 90).
///
/// Bit rates are whole numbers of bit/s from 1000 to 2147483647 (Apple's CFNumber is an SInt32; x264 takes whole
/// kbit/s, so a rate below 1000 bit/s would be none); AverageBitRate may also be 0.
///
/// How each property becomes x264 parameters is ``EncodeSettings/resolved(dataRateLimitsVBV:)``'s business, documented
/// with sources in docs/videotoolbox.md.
public struct VideoToolboxSettings: Equatable, Sendable {
    /// The properties the lab takes, by Apple's name (without `kVTCompressionPropertyKey_`).
    public enum Property: String, CaseIterable, Sendable {
        case averageBitRate = "AverageBitRate"
        case dataRateLimits = "DataRateLimits"
        case maxKeyFrameInterval = "MaxKeyFrameInterval"
        case maxKeyFrameIntervalDuration = "MaxKeyFrameIntervalDuration"
        case allowFrameReordering = "AllowFrameReordering"
        case h264EntropyMode = "H264EntropyMode"
        case profileLevel = "ProfileLevel"
        case realTime = "RealTime"
        case expectedFrameRate = "ExpectedFrameRate"
        case allowOpenGOP = "AllowOpenGOP"
        case constantBitRate = "ConstantBitRate"
        case variableBitRate = "VariableBitRate"
        case vbvMaxBitRate = "VBVMaxBitRate"
        case vbvBufferDuration = "VBVBufferDuration"
        case vbvInitialDelayPercentage = "VBVInitialDelayPercentage"
        case maxFrameDelayCount = "MaxFrameDelayCount"
    }

    /// `kVTH264EntropyMode_CAVLC` or `kVTH264EntropyMode_CABAC`.
    public enum EntropyMode: String, Sendable { case cavlc = "CAVLC", cabac = "CABAC" }

    /// One of Apple's H.264 `kVTProfileLevel_H264_*` values that x264 can signal.
    public struct ProfileLevel: Equatable, Sendable {
        /// Apple's profile word: `Baseline`, `Main`, `High` or `ConstrainedBaseline`.
        public let profile: String
        /// Apple's level word (`4_1`), nil for `AutoLevel`.
        public let level: String?
        /// Apple's name without the prefix: `H264_Main_4_1`.
        public var name: String { "H264_\(profile)_\(level ?? "AutoLevel")" }
        /// x264's `--profile`: `baseline` (Constrained Baseline too: x264's Baseline SPS sets constraint_set1_flag,
        /// which makes it Constrained Baseline, H.264 A.2.1.1), `main` or `high`.
        public var x264Profile: String { profile == "ConstrainedBaseline" ? "baseline" : profile.lowercased() }
        /// x264's `--level` (`4.1`), nil for AutoLevel (x264 then computes the level itself).
        public var x264Level: String? { level.map { $0.replacingOccurrences(of: "_", with: ".") } }
        /// Whether the profile is Baseline or Constrained Baseline (no CABAC, no B slices).
        public var isBaseline: Bool { x264Profile == "baseline" }

        /// Apple's H.264 levels per profile (VTCompressionProperties.h).
        static let levels: [String: [String]] = [
            "Baseline": ["1_3", "3_0", "3_1", "3_2", "4_0", "4_1", "4_2", "5_0", "5_1", "5_2"],
            "Main": ["3_0", "3_1", "3_2", "4_0", "4_1", "4_2", "5_0", "5_1", "5_2"],
            "High": ["3_0", "3_1", "3_2", "4_0", "4_1", "4_2", "5_0", "5_1", "5_2"],
            "ConstrainedBaseline": [],
        ]
    }

    /// `AverageBitRate` in bit/s (0: the encoder chooses).
    public var averageBitRate: Int?
    /// `DataRateLimits` as canonical flat text, `BYTES,SECONDS[,BYTES,SECONDS]` (whole bytes, seconds as a plain
    /// decimal: `250000,1,50000,0.1`); "" for zero pairs (no limit).
    public var dataRateLimits: String?
    /// `MaxKeyFrameInterval` in frames (0: the encoder chooses).
    public var maxKeyFrameInterval: Int?
    /// `MaxKeyFrameIntervalDuration` in seconds (0: no limit).
    public var maxKeyFrameIntervalDuration: Rational?
    public var allowFrameReordering: Bool?
    public var entropyMode: EntropyMode?
    public var profileLevel: ProfileLevel?
    public var realTime: Bool?
    /// `ExpectedFrameRate` in frames per second (a hint to the encoder: recorded, not applied).
    public var expectedFrameRate: Rational?
    public var allowOpenGOP: Bool?
    /// `ConstantBitRate` in bit/s.
    public var constantBitRate: Int?
    /// `VariableBitRate` in bit/s.
    public var variableBitRate: Int?
    /// `VBVMaxBitRate` in bit/s.
    public var vbvMaxBitRate: Int?
    /// `VBVBufferDuration` in seconds (> 0).
    public var vbvBufferDuration: Rational?
    /// `VBVInitialDelayPercentage`, 0 to 100.
    public var vbvInitialDelayPercentage: Rational?
    /// `MaxFrameDelayCount` in frames (nil: Apple's default, unlimited).
    public var maxFrameDelayCount: Int?
    /// `--vt-compat` / `"vt-compat": true`: resolve combinations as VideoToolbox is reported to (docs/videotoolbox.md).
    public var compat = false

    public init() {}

    /// Apple's prefix of property names.
    public static let propertyPrefix = "kVTCompressionPropertyKey_"
    /// Apple's prefix of ProfileLevel values.
    public static let profileLevelPrefix = "kVTProfileLevel_"
    /// Apple's prefix of H264EntropyMode values.
    public static let entropyModePrefix = "kVTH264EntropyMode_"
    /// Apple's default VBVBufferDuration, 2.5 s.
    public static let defaultVBVBufferDuration = try! Rational(5, 2)
    /// Apple's default VBVInitialDelayPercentage, 90.
    public static let defaultVBVInitialDelayPercentage = Rational(90)

    /// Whether no property is given and vt-compat is off.
    public var isEmpty: Bool { self == VideoToolboxSettings() }

    /// Whether an experiment setting key names a VideoToolbox property rather than an x264 option: it starts with an
    /// upper-case letter or `kVT` (x264's names are lower case), or it is a property's name in another case.
    public static func isPropertyKey(_ key: String) -> Bool {
        if key.hasPrefix("kVT") { return true }
        if let first = key.unicodeScalars.first, ("A"..."Z").contains(first) { return true }
        let bare = key.lowercased().hasPrefix(propertyPrefix.lowercased()) ? String(key.dropFirst(propertyPrefix.count)) : key
        return Property.allCases.contains { $0.rawValue.caseInsensitiveCompare(bare) == .orderedSame }
    }

    /// The property a name stands for, with or without Apple's prefix.
    /// - Throws: `.usage` "unknown VideoToolbox property 'NAME' (did you mean 'NEAREST'?)", the nearest name by edit
    ///   distance (ignoring case).
    public static func property(named name: String) throws -> Property {
        let bare = name.hasPrefix(propertyPrefix) ? String(name.dropFirst(propertyPrefix.count)) : name
        if let p = Property(rawValue: bare) { return p }
        // The suggestion compares the name without the prefix in any letter case.
        let plain = (name.lowercased().hasPrefix(propertyPrefix.lowercased()) ? String(name.dropFirst(propertyPrefix.count)) : name).lowercased()
        let nearest = Property.allCases.min { a, b in
            editDistance(a.rawValue.lowercased(), plain) < editDistance(b.rawValue.lowercased(), plain)
        }!
        throw LabError.usage("unknown VideoToolbox property '\(EncodeSettings.visible(name))' (did you mean '\(nearest.rawValue)'?)")
    }

    /// Levenshtein distance between two strings, by Unicode scalar.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        if x.isEmpty { return y.count }
        var row = Array(0...y.count)
        for i in 1...x.count {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: y.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (x[i - 1] == y[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[y.count]
    }

    /// Takes one property by Apple's name (with or without `kVTCompressionPropertyKey_`) and its value as text.
    ///
    /// - Throws: `.usage` for an unknown name (with the nearest known name), and "bad value for VideoToolbox property
    ///   'NAME': 'VALUE' (REASON)" for a value of the wrong shape or unit: a bit rate that is not a whole number of
    ///   bit/s from 1000 to 2147483647 (AverageBitRate also 0), a frame count that is not a whole number ≥ 0, seconds
    ///   that are not a decimal or N/D ≥ 0 (> 0 for VBVBufferDuration), a percentage outside 0-100, a boolean other than
    ///   true/false/1/0, an entropy mode other than CAVLC/CABAC, a ProfileLevel outside Apple's H.264 list or one x264
    ///   cannot signal, DataRateLimits not in pairs, with more than two pairs, or with bytes or seconds not above 0.
    public mutating func set(_ name: String, _ value: String?) throws {
        let property = try Self.property(named: name)
        let text = value ?? ""
        func bad(_ reason: String) -> LabError {
            LabError.usage("bad value for VideoToolbox property '\(EncodeSettings.visible(name))': '\(EncodeSettings.visible(text))' (\(reason))")
        }
        func bitRate(allowZero: Bool = false) throws -> Int {
            guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(text), n <= Int(Int32.max) else {
                throw bad("a whole number of bit/s\(allowZero ? ", 0 or" : "") from 1000 to \(Int32.max)")
            }
            if allowZero && n == 0 { return 0 }
            guard n >= 1000 else {
                throw bad("below 1000 bit/s: x264 takes whole kbit/s\(allowZero ? " (0 lets the encoder choose)" : "")")
            }
            return n
        }
        func boolean() throws -> Bool {
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: throw bad("a boolean: true, false, 1 or 0")
            }
        }
        func number(_ what: String) throws -> Rational {
            guard let r = Self.exactNumber(text) else {
                throw bad(text.hasPrefix("-") ? "\(what) must not be negative" : "\(what) as a decimal (3.5) or a fraction (7/2)")
            }
            return r
        }
        switch property {
        case .averageBitRate: averageBitRate = try bitRate(allowZero: true)
        case .constantBitRate: constantBitRate = try bitRate()
        case .variableBitRate: variableBitRate = try bitRate()
        case .vbvMaxBitRate: vbvMaxBitRate = try bitRate()
        case .dataRateLimits: dataRateLimits = try Self.canonicalDataRateLimits(text, bad: bad)
        case .maxKeyFrameInterval:
            // One range for encode and check: x264's keyint carries the frame limit, and X264_KEYINT_MAX_INFINITE
            // (1 << 30) is its "no limit".
            let infinite = KeyframeRule.x264KeyintInfinite
            guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(text), n < infinite else {
                throw bad("a whole number of frames from 0 (the encoder chooses) to \(infinite - 1), x264's largest keyint (\(infinite), X264_KEYINT_MAX_INFINITE, is no limit)")
            }
            maxKeyFrameInterval = n
        case .maxKeyFrameIntervalDuration: maxKeyFrameIntervalDuration = try number("seconds (0: no limit)")
        case .expectedFrameRate: expectedFrameRate = try number("frames per second")
        case .vbvBufferDuration:
            let d = try number("seconds")
            guard d > .zero else { throw bad("the VBV buffer duration must be above 0 seconds") }
            vbvBufferDuration = d
        case .vbvInitialDelayPercentage:
            let p = try number("a percentage")
            guard p <= Rational(100) else { throw bad("a percentage from 0 to 100") }
            vbvInitialDelayPercentage = p
        case .allowFrameReordering: allowFrameReordering = try boolean()
        case .maxFrameDelayCount:
            guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(text), n <= Int(Int32.max) else {
                throw bad("a whole number of frames from 0 to \(Int32.max); Apple's default, kVTUnlimitedFrameDelayCount (-1), is the property not given")
            }
            maxFrameDelayCount = n
        case .realTime: realTime = try boolean()
        case .allowOpenGOP: allowOpenGOP = try boolean()
        case .h264EntropyMode:
            let bare = text.hasPrefix(Self.entropyModePrefix) ? String(text.dropFirst(Self.entropyModePrefix.count)) : text
            guard let mode = EntropyMode(rawValue: bare) else { throw bad("CAVLC or CABAC") }
            entropyMode = mode
        case .profileLevel:
            profileLevel = try Self.profileLevel(text, bad: bad)
        }
    }

    /// Parses a ProfileLevel value (see ``set(_:_:)``).
    static func profileLevel(_ text: String, bad: (String) -> LabError) throws -> ProfileLevel {
        let bare = text.hasPrefix(profileLevelPrefix) ? String(text.dropFirst(profileLevelPrefix.count)) : text
        let parts = bare.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let list = "Apple's H.264 list: H264_Baseline_1_3, H264_{Baseline,Main,High}_{3_0,3_1,3_2,4_0,4_1,4_2,5_0,5_1,5_2}, H264_{Baseline,Main,High,ConstrainedBaseline}_AutoLevel"
        guard parts.count == 3, parts[0] == "H264" else {
            if parts.first == "HEVC" || parts.first == "MP4V" || parts.first == "H263" {
                throw bad("the lab encodes H.264 only (\(list))")
            }
            throw bad("not one of \(list)")
        }
        let (profile, level) = (parts[1], parts[2])
        if profile == "Extended" && (level == "5_0" || level == "AutoLevel") {
            throw bad("x264 cannot signal the Extended profile (profile_idc 88): it has no Extended profile")
        }
        if profile == "ConstrainedHigh" && level == "AutoLevel" {
            throw bad("x264 cannot signal Constrained High: it never sets constraint_set4_flag and constraint_set5_flag")
        }
        guard let levels = ProfileLevel.levels[profile], level == "AutoLevel" || levels.contains(level) else {
            throw bad("not one of \(list)")
        }
        return ProfileLevel(profile: profile, level: level == "AutoLevel" ? nil : level)
    }

    /// The canonical flat text of a DataRateLimits value: numbers separated by commas (spaces around them ignored),
    /// an even count of at most four, bytes whole and above 0, seconds a decimal above 0; written back as whole bytes
    /// and plain decimals (`250000,1,50000,0.1`). Empty or blank text is zero pairs: "".
    static func canonicalDataRateLimits(_ text: String, bad: (String) -> LabError) throws -> String {
        if text.allSatisfy({ $0 == " " }) { return "" }
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard numbers.count % 2 == 0 else {
            throw bad("\(numbers.count) numbers: expected BYTES,SECONDS pairs")
        }
        guard numbers.count <= 4 else {
            throw bad("\(numbers.count / 2) pairs: at most two BYTES,SECONDS pairs")
        }
        var out: [String] = []
        for k in stride(from: 0, to: numbers.count, by: 2) {
            let (bytes, seconds) = (numbers[k], numbers[k + 1])
            guard !bytes.isEmpty, bytes.utf8.allSatisfy({ (48...57).contains($0) }), let b = Int64(bytes), b > 0 else {
                throw bad("pair \(k / 2 + 1): bytes '\(bytes)' must be a whole number above 0")
            }
            guard let s = decimal(seconds), s > .zero else {
                throw bad("pair \(k / 2 + 1): seconds '\(seconds)' must be a decimal above 0")
            }
            out += [String(b), Self.text(s)]
        }
        return out.joined(separator: ",")
    }

    /// A plain decimal `D+`, `D+.D*` or `.D+` (no sign, no exponent, at most 18 decimals), exactly; nil otherwise.
    static func decimal(_ text: String) -> Rational? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !text.isEmpty, parts.count <= 2, parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
              !(parts.count == 2 && parts[0].isEmpty && parts[1].isEmpty) else { return nil }
        let whole = parts[0].drop { $0 == "0" }
        var fraction = parts.count == 2 ? Substring(parts[1]) : ""
        while fraction.last == "0" { fraction.removeLast() }
        guard fraction.count <= 18, whole.count + fraction.count <= 18 else { return nil }
        let digits = Int64(String(whole) + String(fraction)) ?? 0
        var scale: Int64 = 1
        for _ in 0..<fraction.count { scale *= 10 }
        return try? Rational(digits, scale)
    }

    /// A number ≥ 0 as a plain decimal (``decimal(_:)``) or a fraction `N/D` of whole numbers, D > 0; nil otherwise.
    static func exactNumber(_ text: String) -> Rational? {
        if let r = decimal(text) { return r }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }),
              let n = Int64(parts[0]), let d = Int64(parts[1]), d > 0 else { return nil }
        return try? Rational(n, d)
    }

    /// A rational ≥ 0 as text: a plain decimal when it has one (`7/2` → `3.5`, `1/10` → `0.1`), else `N/D`.
    static func text(_ r: Rational) -> String {
        var d = r.denominator
        var twos = 0, fives = 0
        while d % 2 == 0 { d /= 2; twos += 1 }
        while d % 5 == 0 { d /= 5; fives += 1 }
        let places = max(twos, fives)
        guard d == 1, places <= 18 else { return r.description }
        if places == 0 { return String(r.numerator) }
        // r = n / (2^a 5^b): scale to 10^places.
        let scaled = Int128(r.numerator) * (Int128(power(10, places)) / Int128(r.denominator))
        let unit = Int128(power(10, places))
        var fraction = String(scaled % unit)
        fraction = String(repeating: "0", count: places - fraction.count) + fraction
        return "\(scaled / unit).\(fraction)"
    }

    private static func power(_ base: Int64, _ exponent: Int) -> Int64 {
        var p: Int64 = 1
        for _ in 0..<exponent { p *= base }
        return p
    }

    /// An experiment's DataRateLimits value, a list of `[bytes, seconds]` pairs of JSON numbers, as the command
    /// line's flat text (the pairs' shape only: ``set(_:_:)`` checks the numbers). A string is taken as the flat text.
    /// - Throws: `.usage` "DataRateLimits must be a list of [bytes, seconds] pairs, got ..." for any other shape.
    public static func dataRateLimitsText(_ value: Any) throws -> String {
        if let s = value as? String { return s }
        func shapeError() -> LabError {
            let shown = (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]))
                .map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
            return LabError.usage("DataRateLimits must be a list of [bytes, seconds] pairs, got \(shown)")
        }
        guard let pairs = value as? [Any] else { throw shapeError() }
        var numbers: [String] = []
        for pair in pairs {
            guard let p = pair as? [Any], p.count == 2 else { throw shapeError() }
            for n in p {
                guard let number = n as? NSNumber, String(cString: number.objCType) != "c" else { throw shapeError() }
                let d = number.doubleValue
                numbers.append(d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d))
            }
        }
        return numbers.joined(separator: ",")
    }

    /// The properties given, canonical, by Apple's name: bit rates and frame counts as JSON numbers, booleans as
    /// booleans, everything else as text (seconds, rates and percentages as plain decimals or N/D, DataRateLimits as
    /// its flat text, H264EntropyMode and ProfileLevel without Apple's prefix).
    public var canonicalProperties: [String: Any] {
        var o: [String: Any] = [:]
        func put(_ p: Property, _ v: Any?) { if let v { o[p.rawValue] = v } }
        put(.averageBitRate, averageBitRate)
        put(.dataRateLimits, dataRateLimits)
        put(.maxKeyFrameInterval, maxKeyFrameInterval)
        put(.maxKeyFrameIntervalDuration, maxKeyFrameIntervalDuration.map(Self.text))
        put(.allowFrameReordering, allowFrameReordering)
        put(.h264EntropyMode, entropyMode?.rawValue)
        put(.profileLevel, profileLevel?.name)
        put(.realTime, realTime)
        put(.expectedFrameRate, expectedFrameRate.map(Self.text))
        put(.allowOpenGOP, allowOpenGOP)
        put(.constantBitRate, constantBitRate)
        put(.variableBitRate, variableBitRate)
        put(.vbvMaxBitRate, vbvMaxBitRate)
        put(.vbvBufferDuration, vbvBufferDuration.map(Self.text))
        put(.vbvInitialDelayPercentage, vbvInitialDelayPercentage.map(Self.text))
        put(.maxFrameDelayCount, maxFrameDelayCount)
        return o
    }

    /// Whether DataRateLimits holds at least one pair.
    var hasDataRateLimits: Bool { !(dataRateLimits ?? "").isEmpty }

    /// The number of DataRateLimits pairs given.
    var dataRateLimitPairs: Int { (dataRateLimits ?? "").isEmpty ? 0 : (dataRateLimits!.split(separator: ",").count / 2) }
}

/// VideoToolbox's two keyframe limits as the run applies them: what the keyframe rule (`KeyframeRule`) is built from.
public struct VTKeyframeLimits: Equatable, Sendable {
    /// MaxKeyFrameInterval as given, in frames (0 when not given: the encoder chooses).
    public let maxFrames: Int
    /// MaxKeyFrameIntervalDuration as given, in seconds (0 when not given: no limit).
    public let maxDuration: Rational
    /// Whether vt-compat resolves the pair (both set: the time limit alone).
    public let vtCompat: Bool
    /// At a constant frame rate, the keyint that carries the duration limit, ⌊T ÷ frame duration⌋
    /// (``KeyframeRule/durationKeyint(maxDuration:frameDuration:)``); nil without a duration limit or at a variable rate.
    public internal(set) var durationKeyint: Int? = nil
    /// Whether the lab forces IDRs for the duration limit (variable-rate timestamps), x264's scene cuts off.
    public internal(set) var forcesIDRs = false
}

/// How the run's frames are timed, for the keyframe mapping: at a constant frame duration x264's keyint carries
/// MaxKeyFrameIntervalDuration; at a variable rate it cannot.
public enum VTKeyframeTiming: Equatable, Sendable {
    /// Every frame lasts `frameDuration` seconds (the CLI's constant-rate plan).
    case constantRate(frameDuration: Rational)
    /// The timestamps stage's times (a timecode file, a schedule, the clip's own times, an offset or precision stage).
    case variableRate
}

/// What DataRateLimits becomes on x264 for one run, computed by the caller who knows the frame rate (the lab's
/// `DataRateLimits.vbv(frameRate:vtCompat:)` and `DataRateLimits.abrTargetKbps(for:)`).
public struct VTDataRateVBV: Equatable, Sendable {
    /// `vbv-maxrate`, kbit/s.
    public var maxrateKbps: Int
    /// `vbv-bufsize`, kbit.
    public var bufsizeKbit: Int
    /// The ABR target the lab uses when no AverageBitRate and no x264 rate is given, kbit/s.
    public var targetKbps: Int
    public init(maxrateKbps: Int, bufsizeKbit: Int, targetKbps: Int) {
        self.maxrateKbps = maxrateKbps; self.bufsizeKbit = bufsizeKbit; self.targetKbps = targetKbps
    }
}

/// Where the vt-compat resolutions come from (docs/videotoolbox.md names them in its table).
enum VTSources {
    static let dataRateLimitsNoBFrames = "openradar 51207635, 'kVTCompressionPropertyKey_DataRateLimits omits B frames' (iOS 12.3)"
    static let baselineCAVLC = "FFmpeg's videotoolboxenc.c drops CABAC for Baseline ('CABAC entropy requires main or high profile')"
    static let timeLimitAlone = "the 15 fps report in the lab's issue 10: MaxKeyFrameInterval 30 with MaxKeyFrameIntervalDuration 3.5 keyframed every 3.5 s"
    static let firstPairOnly = "Apple QA1958: limits in order of precedence, some encoders honour only the first"
}

// MARK: - The mapping onto x264

extension EncodeSettings {
    /// x264 parameters a VideoToolbox property may set, and the x264 option names (as ``set(_:_:)`` stores them,
    /// `no-` forms included) that set the same parameter: a user's x264 option wins over the property.
    static let vtParameterOptions: [String: Set<String>] = [
        "rate": ["bitrate", "qp", "crf"],
        "vbv-maxrate": ["vbv-maxrate"], "vbv-bufsize": ["vbv-bufsize"], "vbv-init": ["vbv-init"],
        "keyint": ["keyint"], "scenecut": ["scenecut", "no-scenecut", "noscenecut"],
        "bframes": ["bframes"], "cabac": ["cabac", "no-cabac", "nocabac"],
        "level": ["level", "level-idc"],
        "rc-lookahead": ["rc-lookahead"], "sync-lookahead": ["sync-lookahead"],
        "sliced-threads": ["sliced-threads", "no-sliced-threads", "nosliced-threads"],
        "mbtree": ["mbtree", "no-mbtree", "nombtree"],
        "open-gop": ["open-gop", "no-open-gop", "noopen-gop"],
        "intra-refresh": ["intra-refresh", "no-intra-refresh", "nointra-refresh"],
    ]

    /// The last x264 option the user gave that sets `parameter` (a key of ``vtParameterOptions``).
    func userOption(setting parameter: String) -> X264Option? {
        guard let names = Self.vtParameterOptions[parameter] else { return nil }
        return options.last { names.contains($0.name) }
    }

    /// `--name value` (or `--name`) for messages.
    static func flagText(_ o: X264Option) -> String { o.value.map { "--\(o.name) \($0)" } ?? "--\(o.name)" }

    /// The VideoToolbox properties turned into x264 options, a tune, a profile, an rc mode and adjustments, before the
    /// lab's `--rc` expansion. `self` holds the user's settings (its `options` are the given ones).
    func videoToolboxMapping(dataRateLimitsVBV: ((String, Bool) throws -> VTDataRateVBV?)?,
                             keyframeTiming: VTKeyframeTiming? = nil) throws -> VTMapping {
        let vt = videoToolbox
        let compat = vt.compat
        var m = VTMapping()
        func contradiction(_ text: String) -> LabError { LabError.usage("contradictory settings: \(text)") }
        let drl = vt.hasDataRateLimits
        // Apple's documented incompatibilities (each property's page, "not compatible with").
        if vt.constantBitRate != nil {
            if vt.averageBitRate != nil { throw contradiction("ConstantBitRate with AverageBitRate (Apple: ConstantBitRate is not compatible with AverageBitRate and DataRateLimits)") }
            if drl { throw contradiction("ConstantBitRate with DataRateLimits (Apple: ConstantBitRate is not compatible with AverageBitRate and DataRateLimits)") }
        }
        let vbvKeys: [(String, Bool)] = [("VariableBitRate", vt.variableBitRate != nil), ("VBVMaxBitRate", vt.vbvMaxBitRate != nil),
                                         ("VBVBufferDuration", vt.vbvBufferDuration != nil),
                                         ("VBVInitialDelayPercentage", vt.vbvInitialDelayPercentage != nil)]
        for (name, given) in vbvKeys where given {
            if vt.averageBitRate != nil { throw contradiction("\(name) with AverageBitRate (Apple: \(name) is incompatible with AverageBitRate and DataRateLimits)") }
            if drl { throw contradiction("\(name) with DataRateLimits (Apple: \(name) is incompatible with AverageBitRate and DataRateLimits)") }
        }
        if vt.constantBitRate != nil {
            for (name, given) in vbvKeys.prefix(2) where given {
                throw contradiction("\(name) with ConstantBitRate (Apple: \(name) is not compatible with ConstantBitRate)")
            }
        }
        // The profile in effect: the x264 option wins over ProfileLevel.
        let baseline: Bool
        if let pl = vt.profileLevel {
            if let p = profile {
                if p.lowercased() != pl.x264Profile {
                    m.adjustments.append("ProfileLevel \(pl.name) (profile \(pl.x264Profile)) overridden by the x264 option --profile \(p)")
                }
            } else {
                m.profile = pl.x264Profile
            }
            baseline = (profile ?? pl.x264Profile).lowercased() == "baseline"
        } else {
            baseline = profile?.lowercased() == "baseline"
        }
        if baseline && vt.entropyMode == .cabac && !compat {
            throw contradiction("H264EntropyMode CABAC with profile Baseline\(vt.profileLevel.map { " (ProfileLevel \($0.name))" } ?? "") (Baseline has no CABAC; Apple: an entropy mode the profile does not support gives undefined results; --vt-compat resolves it as VideoToolbox encoders are reported to: CAVLC)")
        }

        // Each x264 parameter the properties set, once, with the properties that set it (for messages).
        func emit(_ parameter: String, _ option: X264Option, because reason: String) {
            if let i = m.planned.firstIndex(where: { $0.parameter == parameter }) {
                m.planned[i].reasons.append(reason)
            } else {
                m.planned.append(.init(parameter: parameter, option: option, reasons: [reason]))
            }
        }

        // Rate control.
        func kbps(_ bits: Int, _ name: String) -> Int {
            if bits % 1000 != 0 {
                m.adjustments.append("\(name) \(bits) bit/s is not a whole kbit/s: x264 gets \(bits / 1000) kbit/s (\(bits / 1000 * 1000) bit/s, rounded down)")
            }
            return bits / 1000
        }
        let userRate = userOption(setting: "rate")
        func requireRC(_ mode: RateControlMode, for name: String) throws {
            if let r = rc, r != mode { throw contradiction("rc \(r.rawValue) with \(name) (which is the lab's rc \(mode.rawValue))") }
            m.rc = mode
        }
        var vtBitrateKbps: Int?
        if let b = vt.averageBitRate {
            if b == 0 {
                // Apple's default: the encoder chooses. Nothing to map.
            } else {
                if let r = rc, r == .cqp || r == .crf { throw contradiction("rc \(r.rawValue) with AverageBitRate") }
                let k = kbps(b, "AverageBitRate")
                vtBitrateKbps = k
                emit("rate", X264Option("bitrate", String(k)), because: "AverageBitRate=\(b)")
            }
        }
        if let c = vt.constantBitRate {
            if let u = userRate, u.name != "bitrate" {
                throw contradiction("ConstantBitRate with the x264 option \(Self.flagText(u)) (a constant bit rate needs a bitrate)")
            }
            try requireRC(.cbr, for: "ConstantBitRate")
            let k = kbps(c, "ConstantBitRate")
            vtBitrateKbps = k
            emit("rate", X264Option("bitrate", String(k)), because: "ConstantBitRate=\(c)")
        }
        if let v = vt.variableBitRate {
            try requireRC(.vbr, for: "VariableBitRate")
            let k = kbps(v, "VariableBitRate")
            vtBitrateKbps = k
            emit("rate", X264Option("bitrate", String(k)), because: "VariableBitRate=\(v)")
        }
        // The VBV of Apple's VBV keys: the maxrate x264 will have, then the buffer as a duration of it.
        let vbvFromVT = vt.constantBitRate != nil || vt.variableBitRate != nil || vt.vbvMaxBitRate != nil
        if vbvFromVT || vt.vbvBufferDuration != nil || vt.vbvInitialDelayPercentage != nil {
            var maxrateKbps: Int?
            if let mx = vt.vbvMaxBitRate {
                let k = kbps(mx, "VBVMaxBitRate")
                emit("vbv-maxrate", X264Option("vbv-maxrate", String(k)), because: "VBVMaxBitRate=\(mx)")
                maxrateKbps = k
            }
            if let u = userOption(setting: "vbv-maxrate"), let s = u.value, let d = Double(s), d.isFinite, d >= 0 {
                // The x264 option wins: the buffer is a duration of the maxrate x264 will have.
                maxrateKbps = Int(d)
            } else if maxrateKbps == nil {
                // The lab's rc mode in effect adds vbv-maxrate from the bitrate x264 will have (the user's --bitrate, else
                // the properties'): cbr the bitrate, vbr 1.5 x the bitrate (``RateControlMode/vbr``).
                let bitrate = userRate?.name == "bitrate" ? userRate?.value.flatMap { Double($0) }.map { Int($0) } : vtBitrateKbps
                if let b = bitrate {
                    switch m.rc ?? rc {
                    case .cbr: maxrateKbps = b
                    case .vbr: maxrateKbps = Int((Double(b) * vbrDefaultMaxrateFactor).rounded())
                    default: break
                    }
                }
            }
            if maxrateKbps == nil && (vt.vbvBufferDuration != nil || vt.vbvInitialDelayPercentage != nil) {
                let name = vt.vbvBufferDuration != nil ? "VBVBufferDuration" : "VBVInitialDelayPercentage"
                throw contradiction("\(name) without a VBV rate (give ConstantBitRate, VariableBitRate or VBVMaxBitRate, or the x264 option --vbv-maxrate)")
            }
            // Apple's defaults (2.5 s, 90 %) apply to a VBV the properties made; with only the x264 option's rate,
            // only the keys given.
            if let maxrate = maxrateKbps, let d = vt.vbvBufferDuration ?? (vbvFromVT ? VideoToolboxSettings.defaultVBVBufferDuration : nil) {
                let exact = try d.times(Int64(maxrate))
                let kbit = Int(exact.numerator / exact.denominator)
                guard kbit >= 1, kbit <= Int(Int32.max) / 1000 else {
                    throw contradiction("VBVBufferDuration \(VideoToolboxSettings.text(d)) s of vbv-maxrate \(maxrate) kbit/s is \(VideoToolboxSettings.text(exact)) kbit: x264's vbv-bufsize must be a whole 1 to \(Int(Int32.max) / 1000) kbit")
                }
                let given = vt.vbvBufferDuration != nil ? "VBVBufferDuration=\(VideoToolboxSettings.text(d))" : "Apple's default VBVBufferDuration 2.5"
                if exact.denominator != 1 {
                    m.adjustments.append("\(given) s x vbv-maxrate \(maxrate) kbit/s = \(VideoToolboxSettings.text(exact)) kbit: x264 gets vbv-bufsize \(kbit) (whole kbit, rounded down)")
                }
                emit("vbv-bufsize", X264Option("vbv-bufsize", String(kbit)), because: given)
            }
            if maxrateKbps != nil, let p = vt.vbvInitialDelayPercentage ?? (vbvFromVT ? VideoToolboxSettings.defaultVBVInitialDelayPercentage : nil) {
                let fraction = try p / Rational(100)
                let given = vt.vbvInitialDelayPercentage != nil ? "VBVInitialDelayPercentage=\(VideoToolboxSettings.text(p))" : "Apple's default VBVInitialDelayPercentage 90"
                emit("vbv-init", X264Option("vbv-init", VideoToolboxSettings.text(fraction)), because: given)
            }
        }
        // DataRateLimits: the VBV the caller computes (it knows the frame rate).
        if drl, let limits = vt.dataRateLimits {
            if compat && vt.dataRateLimitPairs == 2 {
                let first = limits.split(separator: ",").prefix(2).joined(separator: ",")
                m.adjustments.append("vt-compat: DataRateLimits \(limits): only the first pair (\(first)) is honoured (\(VTSources.firstPairOnly))")
            }
            if let map = dataRateLimitsVBV {
                if let vbv = try map(limits, compat) {
                    emit("vbv-maxrate", X264Option("vbv-maxrate", String(vbv.maxrateKbps)), because: "DataRateLimits=\(limits)")
                    emit("vbv-bufsize", X264Option("vbv-bufsize", String(vbv.bufsizeKbit)), because: "DataRateLimits=\(limits)")
                    if vtBitrateKbps == nil && userRate == nil && rc != .cqp && rc != .crf {
                        m.adjustments.append("DataRateLimits without AverageBitRate: the lab's target bitrate \(vbv.targetKbps) kbit/s, below vbv-maxrate \(vbv.maxrateKbps) kbit/s (VideoToolbox picks its own target below the limits)")
                        emit("rate", X264Option("bitrate", String(vbv.targetKbps)), because: "DataRateLimits=\(limits) (the lab's target)")
                    }
                }
            } else {
                m.adjustments.append("DataRateLimits \(limits): not mapped onto x264's VBV (the caller gave no frame rate to map it with)")
            }
            if compat {
                let also = vt.allowFrameReordering == true ? " (AllowFrameReordering=true notwithstanding)" : ""
                m.adjustments.append("vt-compat: DataRateLimits present: no B-frames (bframes 0)\(also), as VideoToolbox was reported to do (\(VTSources.dataRateLimitsNoBFrames))")
                emit("bframes", X264Option("bframes", "0"), because: "vt-compat with DataRateLimits")
            }
        }

        // Keyframes: x264's keyint carries the frame limit, and at a constant frame rate the duration limit too, so
        // x264 restarts its counts at its own scene cuts; at a variable rate the lab forces IDRs for the duration
        // limit and x264's scene cuts are off (KeyframeRule.Placement).
        if vt.maxKeyFrameInterval != nil || vt.maxKeyFrameIntervalDuration != nil {
            let n = vt.maxKeyFrameInterval ?? 0
            let t = vt.maxKeyFrameIntervalDuration ?? .zero
            let tText = VideoToolboxSettings.text(t)
            let infinite = KeyframeRule.x264KeyintInfinite
            var limits = VTKeyframeLimits(maxFrames: n, maxDuration: t, vtCompat: compat)
            let timeAlone = compat && n > 0 && t > .zero
            // The keyint x264 has without the duration limit: the user's --keyint (it wins over MaxKeyFrameInterval),
            // MaxKeyFrameInterval, none under vt-compat's time limit alone (infinite), else x264's own (250).
            let userKeyint = userOption(setting: "keyint")
            var keyint: (value: Int?, reason: String)?
            if timeAlone {
                keyint = (nil, "vt-compat: MaxKeyFrameIntervalDuration=\(tText) alone")
            } else if n > 0 {
                keyint = (n, "MaxKeyFrameInterval=\(n)")
                // x264's keyint carries the frame limit: a larger one (or none) would break the rule the check counts
                // against, which stays MaxKeyFrameInterval as given; a smaller one is kept.
                if let u = userKeyint, Self.keyintValue(u.value).map({ $0 > n }) ?? true {
                    throw contradiction("the x264 option \(Self.flagText(u)) with MaxKeyFrameInterval \(n) (x264's keyint carries the frame limit: at most \(n) frames; give --keyint \(n) or less, or no --keyint)")
                }
            }
            // The rule counts from IDR pictures; x264's keyframes are IDRs only without open GOPs and periodic intra
            // refresh (with them, a keyframe is a recovery point in a non-IDR picture).
            for parameter in ["open-gop", "intra-refresh"] {
                if let u = userOption(setting: parameter), !Self.isOff(u) {
                    let rule = [n > 0 ? "MaxKeyFrameInterval \(n)" : nil, t > .zero ? "MaxKeyFrameIntervalDuration \(tText)" : nil]
                        .compactMap { $0 }.joined(separator: " and ")
                    throw contradiction("the x264 option \(Self.flagText(u)) with \(rule.isEmpty ? "MaxKeyFrameInterval \(n)" : rule) (the keyframe rule counts from IDR pictures, and with \(Self.flagText(u)) x264's keyframes after the first are not IDRs)")
                }
            }
            var timeAloneKeyint = "keyint infinite"
            if t > .zero, let timing = keyframeTiming {
                switch timing {
                case .constantRate(let d):
                    guard let dk = KeyframeRule.durationKeyint(maxDuration: t, frameDuration: d), dk < infinite else {
                        throw LabError.usage("bad value for VideoToolbox property 'MaxKeyFrameIntervalDuration': '\(tText)' (at \(VideoToolboxSettings.text(try d.reciprocal)) frames/s that is more than \(infinite - 1) frames, x264's largest keyint)")
                    }
                    limits.durationKeyint = dk
                    let frameSide: Int?
                    if let u = userKeyint {
                        frameSide = Self.keyintValue(u.value)
                        if frameSide.map({ $0 > dk }) ?? true {
                            throw contradiction("the x264 option \(Self.flagText(u)) with MaxKeyFrameIntervalDuration \(tText) at \(VideoToolboxSettings.text(try d.reciprocal)) frames/s (x264's keyint carries the duration limit: at most ⌊\(tText) s ÷ \(VideoToolboxSettings.text(d)) s⌋ = \(dk) frames; give --keyint \(dk) or less, or no --keyint)")
                        }
                    } else {
                        frameSide = timeAlone ? nil : (n > 0 ? n : KeyframeRule.x264DefaultKeyint)
                    }
                    if frameSide.map({ dk < $0 }) ?? true {
                        keyint = (dk, "MaxKeyFrameIntervalDuration=\(tText) at \(VideoToolboxSettings.text(try d.reciprocal)) frames/s (⌊\(tText) s ÷ \(VideoToolboxSettings.text(d)) s⌋ = \(dk) frames)")
                        timeAloneKeyint = "keyint \(dk)"
                    }
                case .variableRate:
                    limits.forcesIDRs = true
                    if let u = userOption(setting: "scenecut"), !Self.isOff(u) {
                        throw contradiction("the x264 option \(Self.flagText(u)) with MaxKeyFrameIntervalDuration \(tText) on variable-rate timestamps (the lab forces the duration limit's IDRs and needs x264's scene-cut detection off, scenecut 0, to count from every IDR as it encodes)")
                    }
                    m.adjustments.append("MaxKeyFrameIntervalDuration=\(tText) with variable-rate timestamps: x264's keyint cannot carry a duration, so the lab forces an IDR where the rule needs one and turns x264's scene-cut detection off (scenecut 0), since x264 reports a scene cut only after its lookahead")
                    emit("scenecut", X264Option("scenecut", "0"), because: "MaxKeyFrameIntervalDuration=\(tText) with variable-rate timestamps")
                }
            }
            if timeAlone {
                m.adjustments.append("vt-compat: MaxKeyFrameInterval \(n) with MaxKeyFrameIntervalDuration \(tText): the time limit alone is applied (\(timeAloneKeyint)), as \(VTSources.timeLimitAlone)")
            }
            if let k = keyint {
                emit("keyint", X264Option("keyint", k.value.map(String.init) ?? "infinite"), because: k.reason)
            }
            m.keyframeLimits = limits
        }
        if vt.allowFrameReordering == false {
            emit("bframes", X264Option("bframes", "0"), because: "AllowFrameReordering=false")
        }
        // Entropy and profile.
        if let mode = vt.entropyMode {
            if mode == .cabac && baseline {
                // Only under vt-compat (refused above otherwise).
                m.adjustments.append("vt-compat: H264EntropyMode CABAC with profile Baseline: CAVLC, as \(VTSources.baselineCAVLC)")
                emit("cabac", X264Option("no-cabac", nil), because: "vt-compat: Baseline with H264EntropyMode=CABAC")
            } else {
                emit("cabac", mode == .cavlc ? X264Option("no-cabac", nil) : X264Option("cabac", nil), because: "H264EntropyMode=\(mode.rawValue)")
            }
        }
        if let pl = vt.profileLevel {
            if let level = pl.x264Level { emit("level", X264Option("level", level), because: "ProfileLevel=\(pl.name)") }
            if pl.isBaseline && profile == nil {
                m.adjustments.append("ProfileLevel \(pl.name): Baseline has no CABAC and no B-frames: CAVLC and bframes 0 (x264_param_apply_profile would turn them off without a word)")
                emit("cabac", X264Option("no-cabac", nil), because: "ProfileLevel=\(pl.name)")
                emit("bframes", X264Option("bframes", "0"), because: "ProfileLevel=\(pl.name)")
            }
        }
        // Real time.
        if vt.realTime == true {
            let tunes = (tune ?? "").lowercased().split(whereSeparator: { X264Names.tuneSeparators.contains($0) })
            if !tunes.contains("zerolatency") { m.tune = "zerolatency" }
            m.adjustments.append("RealTime=true: the lab's choice is x264's tune zerolatency (no lookahead, no B-frames, sliced threads, no mbtree); VideoToolbox's RealTime does not itself turn frame reordering off")
            // The parameters the tune sets, which a user's x264 option overrides (it applies after the tune).
            for (parameter, value) in [("bframes", "0"), ("rc-lookahead", "0"), ("sync-lookahead", "0"), ("sliced-threads", "1"), ("mbtree", "0")] {
                if let u = userOption(setting: parameter) {
                    m.adjustments.append("RealTime=true (tune zerolatency: \(parameter) \(value)) overridden by the x264 option \(Self.flagText(u))")
                }
            }
        }
        if let open = vt.allowOpenGOP {
            m.adjustments.append("AllowOpenGOP=\(open) ignored: Apple documents it for HEVC; H.264 keyframes stay IDR pictures")
        }
        // The x264 option wins where it sets the same parameter.
        for p in m.planned {
            if let u = userOption(setting: p.parameter) {
                m.adjustments.append("\(p.reasons.joined(separator: ", ")) (\(Self.flagText(p.option).dropFirst(2))) overridden by the x264 option \(Self.flagText(u))")
            } else {
                m.options.append(p.option)
            }
        }
        return m
    }
}

extension EncodeSettings {
    /// The keyint an x264 `--keyint` value gives (x264's `keyint` parse: "infinite" anywhere in it is no limit, else
    /// atoi, clipped by x264 to 1 ... X264_KEYINT_MAX_INFINITE); nil for no limit or a value x264 will refuse.
    static func keyintValue(_ value: String?) -> Int? {
        guard let v = value else { return nil }
        if v.contains("infinite") { return nil }
        guard let k = Int(v.trimmingCharacters(in: .whitespaces)) else { return nil }
        let clipped = min(max(k, 1), KeyframeRule.x264KeyintInfinite)
        return clipped >= KeyframeRule.x264KeyintInfinite ? nil : clipped
    }

    /// Whether an x264 scene-cut option turns scene-cut detection off (`--no-scenecut`, `--scenecut 0`).
    static func isOff(_ o: X264Option) -> Bool {
        if o.name.hasPrefix("no") { return true }
        guard let v = o.value?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return v == "0" || v == "false" || v == "no"
    }
}

/// The result of ``EncodeSettings/videoToolboxMapping(dataRateLimitsVBV:keyframeTiming:)``.
struct VTMapping {
    struct Planned { var parameter: String; var option: X264Option; var reasons: [String] }
    /// Every parameter the properties set, in the order first set.
    var planned: [Planned] = []
    /// The x264 options to apply before the user's (those the user's x264 options do not override).
    var options: [X264Option] = []
    /// A tune to add to the user's (`zerolatency` for RealTime).
    var tune: String?
    /// x264's profile from ProfileLevel, when the user gave none.
    var profile: String?
    /// The lab's rc mode the properties need (cbr for ConstantBitRate, vbr for VariableBitRate).
    var rc: RateControlMode?
    var adjustments: [String] = []
    var keyframeLimits: VTKeyframeLimits?
}
