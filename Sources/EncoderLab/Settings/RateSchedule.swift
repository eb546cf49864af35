import Foundation
import H264

/// A rate schedule (`--rate-schedule SPEC`, experiment key `rate-schedule`): changes of the encoder's rate-control
/// targets during a run, each from a given frame or time on (docs/rate-control-in-motion.md).
///
/// ## Grammar
///
/// ```
/// SPEC   = ITEM *(";" ITEM)                    no spaces, no empty items
/// ITEM   = WHEN ":" SET *("," SET)              the changes at one point
///        | "ramp(" WHEN ".." WHEN "," NAME "=" NUMBER ".." NUMBER "," "step=" STEP ")"
///        | "file:" PATH                         a trace file: ITEMs, one or more a line (";" between them),
///                                               blank lines and lines starting with "#" skipped
/// WHEN   = FRAME | SECONDS                      FRAME: the input frame index from 0 (after --seek), e.g. 125
///                                               SECONDS: DECIMAL "s", the time from the first frame's PTS, e.g. 4.5s
/// SET    = NAME "=" VALUE
/// NAME   = bitrate | vbv-maxrate | vbv-bufsize  x264's names: whole kbit/s (kbit for vbv-bufsize), 1 to 2000000
///        | crf                                  x264's crf, a decimal 0 to 51
///        | AverageBitRate                       Apple's, whole bit/s 1000 to 2000000000 (x264 gets ⌊bits / 1000⌋ kbit/s)
///        | DataRateLimits                       Apple's BYTES,SECONDS[,BYTES,SECONDS], mapped onto vbv-maxrate and
///                                               vbv-bufsize as the lab maps the property (``DataRateLimits/vbv(frameRate:vtCompat:)``)
/// STEP   = FRAME | SECONDS                      of the WHENs' kind, > 0
/// ```
///
/// A ramp from W1 to W2 sets NAME at W1, W1 + STEP, ... and at W2 (the last step may be shorter) to the value
/// interpolated linearly between the two NUMBERs, rounded to nearest (ties away from zero) for whole-number names and
/// to 0.01 for crf. Both WHENs of a ramp are of one kind and W2 is after W1; a ramp names one of bitrate,
/// vbv-maxrate, vbv-bufsize, crf, AverageBitRate.
///
/// Example: `150:bitrate=300;10s:vbv-maxrate=500,vbv-bufsize=500;ramp(0s..5s,bitrate=600..300,step=0.5s)`.
///
/// ``spec`` is the canonical text the run key hashes: every change as its own `WHEN:NAME=VALUE` item in the order
/// given (ramps and trace files expanded), times as decimals with `s`.
///
/// Errors: ``LabError`` `.usage` (exit 64) naming `--rate-schedule`, the item and what is wrong; a trace file that
/// cannot be read is `.noInput` (66).
public struct RateSchedule: Sendable, Equatable {
    /// Where a change lands: an input frame index (display order, from the first frame encoded) or a time from the
    /// first frame's PTS (the first frame whose PTS is at or after it).
    public enum When: Sendable, Equatable, Hashable {
        case frame(Int)
        case seconds(Rational)

        /// `125` or `4.5s`.
        public var text: String {
            switch self {
            case .frame(let f): return String(f)
            case .seconds(let s): return "\(DataRateLimits.decimal(s))s"
            }
        }
    }

    /// A target the schedule changes, in x264's names or Apple's.
    public enum Name: String, Sendable, CaseIterable {
        case bitrate
        case vbvMaxrate = "vbv-maxrate"
        case vbvBufsize = "vbv-bufsize"
        case crf
        case averageBitRate = "AverageBitRate"
        case dataRateLimits = "DataRateLimits"
    }

    /// One change: from `when` on, `name` is `value` (canonical text).
    public struct Change: Sendable, Equatable {
        public var when: When
        public var name: Name
        public var value: String

        public var text: String { "\(when.text):\(name.rawValue)=\(value)" }
    }

    /// The changes in the order given, ramps and trace files expanded.
    public let changes: [Change]

    /// The canonical text (the run key's).
    public var spec: String { changes.map(\.text).joined(separator: ";") }

    /// Parses `text` (the type's grammar).
    /// - Throws: `.usage` naming `--rate-schedule`, the item and the fault; `.noInput` for a trace file not readable.
    public init(parsing text: String) throws {
        guard !text.isEmpty else { throw LabError.usage("--rate-schedule: the schedule is empty (give e.g. '150:bitrate=300')") }
        changes = try Self.items(text, shown: text)
        guard !changes.isEmpty else { throw LabError.usage("--rate-schedule \(Self.quoted(text)): no change in it") }
        var seen: Set<String> = []
        for c in changes where !seen.insert("\(c.when.text) \(c.name.rawValue)").inserted {
            throw LabError.usage("--rate-schedule \(Self.quoted(text)): \(c.name.rawValue) is set twice at \(c.when.text)")
        }
    }

    static func quoted(_ s: String) -> String { "'\(s)'" }

    private static func items(_ text: String, shown: String, depth: Int = 0) throws -> [Change] {
        var out: [Change] = []
        for raw in text.split(separator: ";", omittingEmptySubsequences: false) {
            let item = String(raw)
            guard !item.isEmpty else {
                throw LabError.usage("--rate-schedule \(quoted(shown)): empty item (two ';' in a row, or one at either end)")
            }
            if item.hasPrefix("file:") {
                guard depth == 0 else { throw LabError.usage("--rate-schedule \(quoted(shown)): a trace file names another trace file (\(item))") }
                let path = String(item.dropFirst(5))
                guard !path.isEmpty else { throw LabError.usage("--rate-schedule \(quoted(shown)): 'file:' needs a path") }
                guard let data = FileManager.default.contents(atPath: path), let body = String(data: data, encoding: .utf8) else {
                    throw LabError.noInput("--rate-schedule: cannot read the trace file \(path)")
                }
                for (n, line) in body.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let l = line.trimmingCharacters(in: .whitespacesAndNewlines)
                    if l.isEmpty || l.hasPrefix("#") { continue }
                    do { out += try items(l, shown: l, depth: 1) } catch let e as LabError {
                        throw LabError(e.kind, "\(path):\(n + 1): \(e.message)")
                    }
                }
            } else if item.hasPrefix("ramp(") {
                out += try ramp(item, shown: shown)
            } else {
                out += try point(item, shown: shown)
            }
        }
        return out
    }

    private static func bad(_ item: String, _ shown: String, _ what: String) -> LabError {
        LabError.usage("--rate-schedule \(quoted(shown)): item \(quoted(item)): \(what)")
    }

    /// `WHEN:NAME=VALUE[,NAME=VALUE]`; DataRateLimits takes the comma-separated numbers after it up to the next `=`.
    private static func point(_ item: String, shown: String) throws -> [Change] {
        guard let colon = item.firstIndex(of: ":") else { throw bad(item, shown, "needs WHEN:NAME=VALUE (e.g. 150:bitrate=300 or 5s:bitrate=300)") }
        let when = try parseWhen(String(item[..<colon]), item: item, shown: shown)
        let rest = String(item[item.index(after: colon)...])
        guard !rest.isEmpty else { throw bad(item, shown, "no NAME=VALUE after ':'") }
        var sets: [(String, String)] = []
        for token in rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            if let eq = token.firstIndex(of: "=") {
                sets.append((String(token[..<eq]), String(token[token.index(after: eq)...])))
            } else if let last = sets.last, last.0 == Name.dataRateLimits.rawValue {
                sets[sets.count - 1].1 += ",\(token)"
            } else {
                throw bad(item, shown, "\(quoted(token)) is not NAME=VALUE")
            }
        }
        return try sets.map { name, value in
            let n = try parseName(name, item: item, shown: shown)
            return Change(when: when, name: n, value: try canonicalValue(n, value, item: item, shown: shown))
        }
    }

    /// `ramp(W1..W2,NAME=A..B,step=S)`.
    private static func ramp(_ item: String, shown: String) throws -> [Change] {
        guard item.hasSuffix(")") else { throw bad(item, shown, "a ramp ends with ')'") }
        let inner = item.dropFirst(5).dropLast()
        let parts = inner.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let form = "needs ramp(W1..W2,NAME=A..B,step=S), e.g. ramp(0s..5s,bitrate=600..300,step=0.5s)"
        guard parts.count == 3, parts[2].hasPrefix("step="), let eq = parts[1].firstIndex(of: "=") else { throw bad(item, shown, form) }
        func range(_ s: String) throws -> (String, String) {
            let r = s.components(separatedBy: "..")
            guard r.count == 2, !r[0].isEmpty, !r[1].isEmpty else { throw bad(item, shown, form) }
            return (r[0], r[1])
        }
        let (w1, w2) = try range(parts[0])
        let from = try parseWhen(w1, item: item, shown: shown), to = try parseWhen(w2, item: item, shown: shown)
        let step = try parseWhen(String(parts[2].dropFirst(5)), item: item, shown: shown)
        let name = try parseName(String(parts[1][..<eq]), item: item, shown: shown)
        guard name != .dataRateLimits else { throw bad(item, shown, "a ramp cannot set DataRateLimits (give its changes one by one)") }
        let (a, b) = try range(String(parts[1][parts[1].index(after: eq)...]))
        // Both ends are checked as values of the name.
        let va = try canonicalValue(name, a, item: item, shown: shown), vb = try canonicalValue(name, b, item: item, shown: shown)
        guard let x = Double(va), let y = Double(vb) else { throw bad(item, shown, form) }
        // Points of the ramp as exact rationals of the WHEN's unit.
        let points: [Rational]
        let start: Rational, end: Rational
        switch (from, to, step) {
        case (.frame(let f1), .frame(let f2), .frame(let s)):
            guard f2 > f1 else { throw bad(item, shown, "the ramp's end \(f2) is not after its start \(f1)") }
            guard s > 0 else { throw bad(item, shown, "step must be above 0") }
            start = Rational(Int64(f1)); end = Rational(Int64(f2))
            points = stride(from: f1, to: f2, by: s).map { Rational(Int64($0)) } + [end]
        case (.seconds(let t1), .seconds(let t2), .seconds(let s)):
            guard t1 < t2 else { throw bad(item, shown, "the ramp's end \(to.text) is not after its start \(from.text)") }
            guard Rational.zero < s else { throw bad(item, shown, "step must be above 0") }
            start = t1; end = t2
            var p: [Rational] = []
            var t = t1
            while t < t2 {
                p.append(t)
                guard p.count <= 100_000 else { throw bad(item, shown, "more than 100000 steps") }
                t = try t + s
            }
            points = p + [t2]
        default:
            throw bad(item, shown, "the ramp's two ends and its step must all be frames or all be times")
        }
        let span = try end - start
        return try points.map { p in
            let fraction = try ((p - start) / span).approximateValue
            let v = x + (y - x) * fraction
            let value: String
            if name == .crf {
                value = format((v * 100).rounded(.toNearestOrAwayFromZero) / 100)
            } else {
                value = String(Int64(v.rounded(.toNearestOrAwayFromZero)))
            }
            let when: When = (from.isFrame) ? .frame(Int(p.numerator)) : .seconds(p)
            return Change(when: when, name: name, value: try canonicalValue(name, value, item: item, shown: shown))
        }
    }

    private static func parseName(_ name: String, item: String, shown: String) throws -> Name {
        guard let n = Name(rawValue: name) ?? Name.allCases.first(where: { "kVTCompressionPropertyKey_\($0.rawValue)" == name }) else {
            throw bad(item, shown, "unknown name \(quoted(name)) (names: \(Name.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return n
    }

    /// `125` (a frame) or `4.5s` (seconds, at most 6 decimals).
    private static func parseWhen(_ text: String, item: String, shown: String) throws -> When {
        if text.hasSuffix("s") {
            let number = String(text.dropLast())
            guard let r = decimal(number, places: 6) else {
                throw bad(item, shown, "time \(quoted(text)) must be a decimal number of seconds followed by 's' (e.g. 4.5s), at most 6 decimals")
            }
            return .seconds(r)
        }
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit), let f = Int(text), f <= Int(Int32.max) else {
            throw bad(item, shown, "\(quoted(text)) is neither a frame index (0 to \(Int32.max)) nor a time (e.g. 4.5s)")
        }
        return .frame(f)
    }

    /// A non-negative decimal without sign or exponent, at most `places` decimals.
    static func decimal(_ text: String, places: Int) -> Rational? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit), fraction.allSatisfy(\.isASCIIDigit),
              parts.count == 1 || !fraction.isEmpty, fraction.count <= places, whole.count <= 12 else { return nil }
        var scale: Int64 = 1
        for _ in 0..<fraction.count { scale *= 10 }
        guard let w = Int64(whole), let f = fraction.isEmpty ? 0 : Int64(fraction) else { return nil }
        return try? Rational(w * scale + f, scale)
    }

    static func format(_ d: Double) -> String { d == d.rounded() ? String(Int64(d)) : String(d) }

    /// The value's canonical text, checked against the name's range.
    private static func canonicalValue(_ name: Name, _ value: String, item: String, shown: String) throws -> String {
        func whole(_ range: ClosedRange<Int64>, _ unit: String) throws -> String {
            guard !value.isEmpty, value.allSatisfy(\.isASCIIDigit), let n = Int64(value), range.contains(n) else {
                throw bad(item, shown, "\(name.rawValue) must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound), got \(quoted(value))")
            }
            return String(n)
        }
        switch name {
        case .bitrate, .vbvMaxrate: return try whole(1...2_000_000, "kbit/s")
        case .vbvBufsize: return try whole(1...2_000_000, "kbit")
        case .averageBitRate: return try whole(1000...2_000_000_000, "bit/s")
        case .crf:
            guard let r = decimal(value, places: 3), r <= Rational(51) else {
                throw bad(item, shown, "crf must be a decimal from 0 to 51 (at most 3 decimals), got \(quoted(value))")
            }
            return format(r.approximateValue)
        case .dataRateLimits:
            let limits: DataRateLimits
            do { limits = try DataRateLimits(parsing: value) } catch let e as LabError where e.kind == .usage {
                throw bad(item, shown, e.message)
            }
            guard !limits.pairs.isEmpty else {
                throw bad(item, shown, "DataRateLimits needs BYTES,SECONDS (turning the limits off is not a change x264 can make)")
            }
            return limits.description
        }
    }
}

extension RateSchedule.When {
    var isFrame: Bool { if case .frame = self { return true } else { return false } }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// The rate-control values x264 is handed for one picture (x264_picture_t.param): nil leaves a value as it is.
public struct X264RateTargets: Sendable, Equatable {
    /// `rc.i_bitrate`, kbit/s.
    public var bitrateKbps: Int?
    /// `rc.i_vbv_max_bitrate`, kbit/s.
    public var vbvMaxrateKbps: Int?
    /// `rc.i_vbv_buffer_size`, kbit.
    public var vbvBufsizeKbit: Int?
    /// `rc.f_rf_constant`.
    public var crf: Double?

    public init(bitrateKbps: Int? = nil, vbvMaxrateKbps: Int? = nil, vbvBufsizeKbit: Int? = nil, crf: Double? = nil) {
        self.bitrateKbps = bitrateKbps; self.vbvMaxrateKbps = vbvMaxrateKbps; self.vbvBufsizeKbit = vbvBufsizeKbit; self.crf = crf
    }

    public var isEmpty: Bool { self == X264RateTargets() }
}

/// One change as the run resolved it: the frame it landed on, what x264 was handed and whether x264 applied it
/// (`rate_changes`, docs/schema.md).
public struct RateChangeRecord: Sendable, Equatable {
    /// Its place in the schedule's ``RateSchedule/changes``.
    public var changeIndex: Int
    public var requestedFrame: Int?
    public var requestedTimeSeconds: Double?
    public var name: String
    public var value: String
    /// The x264 values it became (`bitrate=300`, `vbv-maxrate=1900,vbv-bufsize=100`).
    public var x264: String
    /// The input frame (display index) whose picture carried it; nil when the run ended before it.
    public var frame: Int?
    /// `frame` when x264 applied it (or the value was in force already), nil otherwise.
    public var appliedFrame: Int?
    /// `applied`, `unchanged` (the value in force already), `ignored` (x264 kept the old value without a word),
    /// `refused` (x264 kept it and logged why), `not-reached` (the run ended before its frame or time).
    public var status: String
    /// Why, for every status but `applied` (x264's rule or log line); nil otherwise.
    public var reason: String?
    /// The bitrate the change aims the stream at, kbit/s, for the step response: the new bitrate (bitrate,
    /// AverageBitRate) or the new vbv-maxrate (vbv-maxrate, DataRateLimits); nil for crf and vbv-bufsize.
    public var targetKbps: Double?
}

/// x264's rules for a target changed on a running encoder (x264 0.164, encoder/encoder.c `encoder_try_reconfig`,
/// `validate_parameters`; encoder/ratecontrol.c `x264_ratecontrol_init_reconfigurable`), applied to the run's
/// changes in order. The lab decides what x264 did from these rules and from x264's log lines, never from
/// `x264_encoder_reconfig`'s return or the read-back parameters (which show a new bitrate x264 does not use).
///
/// - VBV off when the encoder opened (vbv-maxrate or vbv-bufsize 0): no bitrate or VBV value is copied (encoder.c,
///   "VBV can't be turned on if it wasn't on to begin with"): ignored. A VBV value of 0 is never copied either.
/// - NAL HRD on (`--nal-hrd`, which the lab's `--rc cbr` sets): any change of bitrate, vbv-maxrate or vbv-bufsize
///   (and any crf change, which reconfigures the rate control too) makes x264 log "VBV parameters cannot be changed
///   when NAL HRD is in use" and keep its VBV and bitrate: refused. A crf change under CRF still applies.
/// - ABR with VBV whose vbv-maxrate was above the bitrate at open: x264 reads the bitrate once, when it opens
///   (ratecontrol.c `rc->bitrate`): a bitrate change is ignored; vbv-maxrate and vbv-bufsize apply.
/// - ABR whose vbv-maxrate was at most the bitrate at open (x264's CBR, `b_vbv_min_rate`): a bitrate change applies
///   and x264 sets vbv-maxrate to it (the lab hands both, as `--rc cbr` does); a vbv-maxrate change alone is
///   overwritten by the bitrate: ignored; vbv-bufsize applies.
/// - CRF: crf applies (with or without VBV); bitrate is not CRF's: ignored; VBV values as above. CQP: all ignored.
/// - vbv-bufsize below one frame at vbv-maxrate: applied as one frame (x264 logs "VBV buffer size cannot be smaller
///   than one frame").
public struct RateChangeRules: Sendable {
    public struct Opened: Sendable {
        /// `abr`, `crf` or `cqp`.
        public var rcMethod: String
        public var bitrateKbps: Int
        public var vbvMaxrateKbps: Int
        public var vbvBufsizeKbit: Int
        public var crf: Double
        /// x264's `i_nal_hrd` (0 none).
        public var nalHrd: Int
        public var frameRate: Rational

        public init(rcMethod: String, bitrateKbps: Int, vbvMaxrateKbps: Int, vbvBufsizeKbit: Int, crf: Double, nalHrd: Int, frameRate: Rational) {
            self.rcMethod = rcMethod; self.bitrateKbps = bitrateKbps; self.vbvMaxrateKbps = vbvMaxrateKbps
            self.vbvBufsizeKbit = vbvBufsizeKbit; self.crf = crf; self.nalHrd = nalHrd; self.frameRate = frameRate
        }
    }

    /// x264's log line when it refuses a VBV change under NAL HRD (ratecontrol.c).
    public static let hrdRefusal = "VBV parameters cannot be changed when NAL HRD is in use"

    let opened: Opened
    /// x264 had VBV on when it opened.
    let vbvOn: Bool
    /// x264's CBR (`b_vbv_min_rate`).
    let minRate: Bool
    /// What x264's rate control uses now.
    private(set) var bitrate: Int, maxrate: Int, bufsize: Int, crf: Double
    /// What the lab hands x264 (its `h->param` as x264 holds it after copying).
    private(set) var handed: X264RateTargets
    /// How many times x264 should have logged ``hrdRefusal``.
    private(set) var expectedRefusalLines = 0

    public init(_ o: Opened) {
        opened = o
        vbvOn = o.vbvMaxrateKbps > 0 && o.vbvBufsizeKbit > 0
        minRate = o.rcMethod == "abr" && vbvOn && o.vbvMaxrateKbps <= o.bitrateKbps
        bitrate = o.bitrateKbps; maxrate = o.vbvMaxrateKbps; bufsize = o.vbvBufsizeKbit; crf = o.crf
        handed = X264RateTargets(bitrateKbps: o.bitrateKbps, vbvMaxrateKbps: o.vbvMaxrateKbps, vbvBufsizeKbit: o.vbvBufsizeKbit, crf: o.crf)
    }

    /// One change in x264's names, with its verdict.
    public struct Verdict: Sendable, Equatable {
        public var status: String
        public var reason: String?
    }

    /// Applies the changes landing on one frame (x264's names and values, in order) and returns the values to hand
    /// x264 with that picture (all four, cumulative) and one verdict per change.
    public mutating func apply(_ changes: [(name: RateSchedule.Name, value: Double)]) -> (targets: X264RateTargets, verdicts: [Verdict]) {
        var next = handed
        for (name, value) in changes {
            switch name {
            case .bitrate: next.bitrateKbps = Int(value)
            case .vbvMaxrate: next.vbvMaxrateKbps = Int(value)
            case .vbvBufsize: next.vbvBufsizeKbit = Int(value)
            case .crf: next.crf = value
            default: preconditionFailure("Apple's names are mapped before the rules")
            }
        }
        let givesMaxrate = changes.contains { $0.name == .vbvMaxrate }
        // x264's CBR: the bitrate carries vbv-maxrate with it (as --rc cbr hands both).
        if minRate, changes.contains(where: { $0.name == .bitrate }), !givesMaxrate { next.vbvMaxrateKbps = next.bitrateKbps }
        let copiesVBV = vbvOn && (next.vbvMaxrateKbps ?? 0) > 0 && (next.vbvBufsizeKbit ?? 0) > 0
        let vbvDiffers = copiesVBV && (next.bitrateKbps != handed.bitrateKbps || next.vbvMaxrateKbps != handed.vbvMaxrateKbps
                                       || next.vbvBufsizeKbit != handed.vbvBufsizeKbit)
        let rcReconfig = vbvDiffers || next.crf != handed.crf
        let hrdRefuses = vbvOn && opened.nalHrd != 0 && rcReconfig
        if hrdRefuses { expectedRefusalLines += 1 }
        var verdicts: [Verdict] = []
        var newBitrate = bitrate, newMaxrate = maxrate, newBufsize = bufsize, newCRF = crf
        for (name, value) in changes {
            func inForce(_ current: Double) -> Verdict? {
                current == value ? Verdict(status: "unchanged", reason: "\(name.rawValue) \(RateSchedule.format(value)) is in force already") : nil
            }
            switch name {
            case .crf:
                if let v = inForce(crf) { verdicts.append(v); continue }
                if opened.rcMethod != "crf" {
                    verdicts.append(Verdict(status: "ignored", reason: "the rate-control method is \(opened.rcMethod): x264 copies crf but reads it only under CRF"))
                } else {
                    newCRF = value
                    verdicts.append(Verdict(status: "applied", reason: hrdRefuses ? "x264 also logged '\(Self.hrdRefusal)' (a crf change reconfigures the rate control)" : nil))
                }
            case .bitrate, .vbvMaxrate, .vbvBufsize:
                let current = name == .bitrate ? bitrate : name == .vbvMaxrate ? maxrate : bufsize
                if let v = inForce(Double(current)) { verdicts.append(v); continue }
                if !vbvOn {
                    verdicts.append(Verdict(status: "ignored", reason: "VBV was off when x264 opened (encoder.c: \"VBV can't be turned on if it wasn't on to begin with\"): x264 copies no bitrate or VBV value"))
                } else if opened.nalHrd != 0 {
                    verdicts.append(Verdict(status: "refused", reason: "NAL HRD is on (nal-hrd \(opened.nalHrd == 2 ? "cbr" : "vbr")): x264 logged '\(Self.hrdRefusal)'"))
                } else if name == .bitrate && opened.rcMethod != "abr" {
                    verdicts.append(Verdict(status: "ignored", reason: "the rate-control method is \(opened.rcMethod): it has no bitrate target"))
                } else if name == .bitrate && !minRate {
                    verdicts.append(Verdict(status: "ignored", reason: "ABR with vbv-maxrate above the bitrate: x264 reads the bitrate only when it opens (ratecontrol.c sets rc->bitrate once); the read-back parameters show the new value all the same"))
                } else if name == .vbvMaxrate && minRate && !changes.contains(where: { $0.name == .bitrate }) {
                    if Int(value) < bitrate {
                        // validate_parameters lowers the bitrate to it, then x264's CBR sets vbv-maxrate to the bitrate.
                        newBitrate = Int(value); newMaxrate = Int(value)
                        verdicts.append(Verdict(status: "applied", reason: "x264's CBR: the bitrate follows it down (x264 logs \"max bitrate less than average bitrate, assuming CBR\")"))
                    } else {
                        verdicts.append(Verdict(status: "ignored", reason: "x264's CBR (vbv-maxrate at the bitrate when it opened): x264 sets vbv-maxrate back to the bitrate (ratecontrol.c), so a vbv-maxrate above the bitrate alone does not change"))
                    }
                } else if name == .vbvMaxrate && opened.rcMethod == "abr" && Int(value) < bitrate {
                    newMaxrate = Int(value)
                    verdicts.append(Verdict(status: "applied", reason: "below the bitrate: x264 logs \"max bitrate less than average bitrate, assuming CBR\" but its rate control keeps the bitrate it opened with"))
                } else {
                    switch name {
                    case .bitrate: newBitrate = Int(value); if minRate { newMaxrate = Int(value) }
                    case .vbvMaxrate: newMaxrate = Int(value)
                    default: newBufsize = Int(value)
                    }
                    verdicts.append(Verdict(status: "applied", reason: nil))
                }
            default: preconditionFailure("Apple's names are mapped before the rules")
            }
        }
        // vbv-bufsize at least one frame at vbv-maxrate (ratecontrol.c, truncating in floating point).
        if vbvOn && opened.nalHrd == 0 {
            let oneFrame = Int(Double(newMaxrate) / opened.frameRate.approximateValue)
            if newBufsize < oneFrame {
                newBufsize = oneFrame
                if let i = changes.firstIndex(where: { $0.name == .vbvBufsize || $0.name == .vbvMaxrate }), verdicts[i].status == "applied" {
                    verdicts[i].reason = "x264 raised vbv-bufsize to one frame, \(oneFrame) kbit (\"VBV buffer size cannot be smaller than one frame\")"
                }
            }
        }
        bitrate = newBitrate; maxrate = newMaxrate; bufsize = newBufsize; crf = newCRF
        // What x264's h->param holds now: the copied values (even when unused), as x264 adjusted them.
        if copiesVBV {
            if hrdRefuses {
                handed.bitrateKbps = next.bitrateKbps; handed.vbvMaxrateKbps = next.vbvMaxrateKbps; handed.vbvBufsizeKbit = next.vbvBufsizeKbit
            } else {
                let b = next.bitrateKbps ?? 0, m = next.vbvMaxrateKbps ?? 0
                handed.bitrateKbps = minRate ? newBitrate : opened.rcMethod == "abr" ? min(b, m) : b
                handed.vbvMaxrateKbps = minRate ? newBitrate : m
                handed.vbvBufsizeKbit = newBufsize
            }
        }
        handed.crf = next.crf
        return (next, verdicts)
    }
}

/// A rate schedule during one run: which changes are due at each picture, what x264 is handed with it, and the
/// record of each change (``RateChangeRecord``) with x264's verdict (``RateChangeRules``).
public struct RateScheduleRun: Sendable {
    private struct Mapped: Sendable {
        var parts: [(name: RateSchedule.Name, value: Double)]
        var x264: String
        var targetKbps: Double?
    }

    public let schedule: RateSchedule
    private var rules: RateChangeRules
    private let mapped: [Mapped]
    private var records: [RateChangeRecord?]

    /// - Parameters:
    ///   - opened: the rate control x264 opened with.
    ///   - vtCompat: DataRateLimits honours its first pair only (as the property's mapping does).
    /// - Throws: `.usage` naming `--rate-schedule` for DataRateLimits too small for an x264 VBV.
    public init(_ schedule: RateSchedule, opened: RateChangeRules.Opened, vtCompat: Bool) throws {
        self.schedule = schedule
        rules = RateChangeRules(opened)
        records = Array(repeating: nil, count: schedule.changes.count)
        mapped = try schedule.changes.map { c in
            let v = Double(c.value) ?? 0
            switch c.name {
            case .bitrate: return Mapped(parts: [(.bitrate, v)], x264: "bitrate=\(c.value)", targetKbps: v)
            case .vbvMaxrate: return Mapped(parts: [(.vbvMaxrate, v)], x264: "vbv-maxrate=\(c.value)", targetKbps: v)
            case .vbvBufsize: return Mapped(parts: [(.vbvBufsize, v)], x264: "vbv-bufsize=\(c.value)", targetKbps: nil)
            case .crf: return Mapped(parts: [(.crf, v)], x264: "crf=\(c.value)", targetKbps: nil)
            case .averageBitRate:
                // As the property's mapping: whole kbit/s, rounded down.
                let k = (Int64(c.value) ?? 0) / 1000
                return Mapped(parts: [(.bitrate, Double(k))], x264: "bitrate=\(k)", targetKbps: Double(k))
            case .dataRateLimits:
                do {
                    guard let vbv = try DataRateLimits(parsing: c.value).vbv(frameRate: opened.frameRate, vtCompat: vtCompat) else {
                        throw LabError.usage("no limit")
                    }
                    return Mapped(parts: [(.vbvMaxrate, Double(vbv.maxrateKbps)), (.vbvBufsize, Double(vbv.bufsizeKbit))],
                                  x264: "vbv-maxrate=\(vbv.maxrateKbps),vbv-bufsize=\(vbv.bufsizeKbit)", targetKbps: Double(vbv.maxrateKbps))
                } catch let e as LabError {
                    throw LabError.usage("--rate-schedule \(RateSchedule.quoted(schedule.spec)): \(c.text): \(e.message)")
                }
            }
        }
    }

    /// The values to hand x264 with input picture `frame` (display index), `secondsFromFirst` after the first
    /// picture's PTS, or nil when no change is due there. Each change is due at the first picture at or after its
    /// frame or time.
    /// - Throws: `.usage` naming `--rate-schedule` when two changes written at different points (a frame and a time,
    ///   or two times) land on this one picture and set the same x264 target (AverageBitRate is x264's bitrate,
    ///   DataRateLimits its vbv-maxrate and vbv-bufsize): only one value can be handed with a picture, so which of
    ///   them was in force would depend on the order they were written in. The same point written twice is refused
    ///   when the schedule is parsed; this is the same rule once the times are pictures.
    public mutating func due(frame: Int, secondsFromFirst: Rational) throws -> X264RateTargets? {
        var landing: [Int] = []
        for (i, c) in schedule.changes.enumerated() where records[i] == nil {
            switch c.when {
            case .frame(let f): if f <= frame { landing.append(i) }
            case .seconds(let t): if t <= secondsFromFirst { landing.append(i) }
            }
        }
        guard !landing.isEmpty else { return nil }
        var setBy: [RateSchedule.Name: Int] = [:]
        for i in landing {
            for part in mapped[i].parts {
                if let earlier = setBy[part.name] {
                    let a = schedule.changes[earlier], b = schedule.changes[i]
                    throw LabError.usage("--rate-schedule \(RateSchedule.quoted(schedule.spec)): \(a.text) and \(b.text) both land on "
                        + "input frame \(frame): x264's \(part.name.rawValue) would be set twice with one picture; keep one of them")
                }
                setBy[part.name] = i
            }
        }
        let parts = landing.flatMap { mapped[$0].parts }
        let (targets, verdicts) = rules.apply(parts)
        var k = 0
        let order = ["unchanged": 0, "applied": 1, "ignored": 2, "refused": 3]
        for i in landing {
            let c = schedule.changes[i], m = mapped[i]
            let mine = Array(verdicts[k..<k + m.parts.count])
            k += m.parts.count
            let status = mine.map(\.status).max { order[$0, default: 0] < order[$1, default: 0] } ?? "applied"
            let reasons = zip(m.parts, mine).compactMap { p, v in v.reason.map { m.parts.count > 1 ? "\(p.name.rawValue): \($0)" : $0 } }
            var time: Double?
            var requested: Int?
            switch c.when {
            case .frame(let f): requested = f
            case .seconds(let t): time = t.approximateValue
            }
            records[i] = RateChangeRecord(changeIndex: i, requestedFrame: requested, requestedTimeSeconds: time, name: c.name.rawValue,
                                          value: c.value, x264: m.x264, frame: frame,
                                          appliedFrame: status == "applied" || status == "unchanged" ? frame : nil,
                                          status: status, reason: reasons.isEmpty ? nil : reasons.joined(separator: "; "),
                                          targetKbps: m.targetKbps)
        }
        return targets
    }

    /// Every change's record (those never due: `not-reached`) and the warnings to give: one per change x264 did not
    /// apply, and one when x264's log (`x264Warnings`, what it logged during the encode) holds the HRD refusal a
    /// number of times other than the rules predict.
    public func finish(frames: Int, x264Warnings: [String]) -> (records: [RateChangeRecord], warnings: [String]) {
        var out: [RateChangeRecord] = []
        var warnings: [String] = []
        for (i, c) in schedule.changes.enumerated() {
            if let r = records[i] {
                out.append(r)
                if r.status == "ignored" || r.status == "refused" {
                    warnings.append("rate schedule: \(c.text) (x264 \(r.x264)) at frame \(r.frame ?? -1) \(r.status) by x264: \(r.reason ?? "")")
                }
            } else {
                var time: Double?
                var requested: Int?
                switch c.when {
                case .frame(let f): requested = f
                case .seconds(let t): time = t.approximateValue
                }
                let reason = "the run ended before it (\(frames) frames)"
                out.append(RateChangeRecord(changeIndex: i, requestedFrame: requested, requestedTimeSeconds: time, name: c.name.rawValue,
                                            value: c.value, x264: mapped[i].x264, frame: nil, appliedFrame: nil, status: "not-reached",
                                            reason: reason, targetKbps: mapped[i].targetKbps))
                warnings.append("rate schedule: \(c.text) not reached: \(reason)")
            }
        }
        let logged = x264Warnings.filter { $0.contains(RateChangeRules.hrdRefusal) }.count
        if logged != rules.expectedRefusalLines {
            warnings.append("rate schedule: x264 logged '\(RateChangeRules.hrdRefusal)' \(logged) times where the lab's rules expected \(rules.expectedRefusalLines): the statuses of rate_changes follow the rules")
        }
        return (out, warnings)
    }
}
