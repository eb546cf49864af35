import Foundation
import H264

/// The VideoToolbox rules `enclab check` tests a stream against, given as `--expect NAME=VALUE` in Apple's names
/// and units (with or without `kVTCompressionPropertyKey_`), read by ``VideoToolboxSettings/set(_:_:)``:
/// - `MaxKeyFrameInterval` (frames; 0: the encoder chooses, so no frame limit is checked);
/// - `MaxKeyFrameIntervalDuration` (seconds; 0: no limit);
/// - `DataRateLimits` (`BYTES,SECONDS[,BYTES,SECONDS]`; empty: no limit);
/// - `AllowFrameReordering` (true/false/1/0; only false is a rule: true allows reordering and checks nothing);
/// - `H264EntropyMode` (`CAVLC` or `CABAC`, with or without `kVTH264EntropyMode_`).
/// The other properties describe what an encoder is asked for, not a property of the stream it wrote: refused.
public struct StreamExpectations: Sendable, Equatable {
    /// The properties a stream can be checked against, in the order the check reports them.
    public static let checkable: [VideoToolboxSettings.Property] = [
        .maxKeyFrameInterval, .maxKeyFrameIntervalDuration, .dataRateLimits, .allowFrameReordering, .h264EntropyMode,
    ]

    public var maxKeyFrameInterval: Int?
    /// Seconds, exact.
    public var maxKeyFrameIntervalDuration: Rational?
    public var dataRateLimits: DataRateLimits?
    public var allowFrameReordering: Bool?
    public var entropyMode: VideoToolboxSettings.EntropyMode?
    /// Each expectation as `NAME=VALUE` in Apple's bare name and the canonical value (`MaxKeyFrameIntervalDuration=3.5`,
    /// `DataRateLimits=250000,1`), in ``checkable`` order: how the report names its rules.
    public private(set) var rules: [String: String] = [:]

    /// Reads `--expect` values, each `NAME=VALUE`.
    /// - Throws: `.usage` for none at all, a word without `=`, a name given twice with different values, an unknown name ("unknown
    ///   VideoToolbox property 'X' (did you mean 'Y'?)", the nearest checkable name by edit distance), a property
    ///   that is not a rule of the stream (AverageBitRate...), and the messages of ``VideoToolboxSettings/set(_:_:)``
    ///   for a bad value ("bad value for VideoToolbox property 'NAME': 'VALUE' (REASON)").
    public init(parsing words: [String]) throws {
        guard !words.isEmpty else {
            throw LabError.usage("check needs at least one --expect NAME=VALUE (\(Self.checkable.map(\.rawValue).joined(separator: ", ")))")
        }
        var vt = VideoToolboxSettings()
        var seen: [VideoToolboxSettings.Property: String] = [:]
        for word in words {
            guard let eq = word.firstIndex(of: "=") else {
                throw LabError.usage("--expect needs NAME=VALUE (a VideoToolbox property, e.g. MaxKeyFrameInterval=30), got '\(EncodeSettings.visible(word))'")
            }
            let name = String(word[..<eq]), value = String(word[word.index(after: eq)...])
            let bare = name.hasPrefix(VideoToolboxSettings.propertyPrefix) ? String(name.dropFirst(VideoToolboxSettings.propertyPrefix.count)) : name
            guard let property = VideoToolboxSettings.Property(rawValue: bare) else {
                let nearest = Self.checkable.min { a, b in
                    VideoToolboxSettings.editDistance(a.rawValue.lowercased(), bare.lowercased())
                        < VideoToolboxSettings.editDistance(b.rawValue.lowercased(), bare.lowercased())
                }!
                throw LabError.usage("unknown VideoToolbox property '\(EncodeSettings.visible(name))' (did you mean '\(nearest.rawValue)'?)")
            }
            guard Self.checkable.contains(property) else {
                throw LabError.usage("--expect \(property.rawValue): not a rule a stream can be checked against (check takes \(Self.checkable.map(\.rawValue).joined(separator: ", ")))")
            }
            if let earlier = seen[property], earlier != value {
                throw LabError.usage("--expect \(property.rawValue) given twice ('\(EncodeSettings.visible(earlier))' and '\(EncodeSettings.visible(value))')")
            }
            seen[property] = value
            try vt.set(name, value)
        }
        maxKeyFrameInterval = vt.maxKeyFrameInterval
        maxKeyFrameIntervalDuration = vt.maxKeyFrameIntervalDuration
        dataRateLimits = try vt.dataRateLimits.map { try DataRateLimits(parsing: $0) }
        allowFrameReordering = vt.allowFrameReordering
        entropyMode = vt.entropyMode
        if let n = maxKeyFrameInterval { rules["MaxKeyFrameInterval"] = String(n) }
        if let t = maxKeyFrameIntervalDuration { rules["MaxKeyFrameIntervalDuration"] = VideoToolboxSettings.text(t) }
        if let d = dataRateLimits { rules["DataRateLimits"] = d.description }
        if let r = allowFrameReordering { rules["AllowFrameReordering"] = r ? "true" : "false" }
        if let m = entropyMode { rules["H264EntropyMode"] = m.rawValue }
    }

    /// `NAME=VALUE` of a property given, nil otherwise.
    public func rule(_ property: VideoToolboxSettings.Property) -> String? {
        rules[property.rawValue].map { "\(property.rawValue)=\($0)" }
    }

    /// Every rule given, `NAME=VALUE`, in ``checkable`` order.
    public var ruleNames: [String] { Self.checkable.compactMap(rule) }
}

/// What `enclab check` checks: a stream's frames in decode order with their times and bytes, and its PPSs; from a
/// stream read from elsewhere (``init(_:)``) or from a stored run (``CheckRuns/storedRun(databasePath:run:)``).
public struct RuleCheckInput: Sendable {
    public struct Frame: Sendable, Equatable {
        public var codedIndex: Int
        public var displayIndex: Int
        /// IDR, I, P, Bref or B.
        public var type: String
        /// Ticks of ``RuleCheckInput/timebase``.
        public var pts: Int64
        public var dts: Int64
        /// The bytes DataRateLimits counts.
        public var bytes: Int
        public var hasBSlices: Bool
        /// Its place in the bitstream's output order (picture order counts), for the reordering check.
        public var outputRank: Int

        public init(codedIndex: Int, displayIndex: Int, type: String, pts: Int64, dts: Int64, bytes: Int, hasBSlices: Bool, outputRank: Int) {
            self.codedIndex = codedIndex; self.displayIndex = displayIndex; self.type = type; self.pts = pts; self.dts = dts
            self.bytes = bytes; self.hasBSlices = hasBSlices; self.outputRank = outputRank
        }
    }

    /// A PPS with content new for its id (a repeat of the one in force is left out).
    public struct PPS: Sendable, Equatable {
        public var id: Int
        /// Where it is: `NAL unit 4`, or `out of band`.
        public var place: String
        public var entropyCodingModeFlag: Int
    }

    /// How messages name it: the stream's path, or `run 3 of lab.sqlite`.
    public var name: String
    /// Seconds per tick.
    public var timebase: Rational
    /// Decode order.
    public var frames: [Frame]
    /// The end of the last frame in display order, in ticks.
    public var endPTS: Int64
    /// The PPSs; nil when not known (a stored run without parameter sets).
    public var pictureParameterSets: [PPS]?
    /// Where the times came from, for the summary (`the container (mov,mp4,...)`).
    public var timesFrom: String
    /// What the bytes of a frame are, for the summary when they are not the NAL units alone; nil when they are.
    public var bytesNote: String?
    /// Why the input has no times (``ForeignStream/TimeSource/none(reason:)``), nil when it has them: its PTS and DTS
    /// are then places in output and decode order, and a rule that needs times is refused.
    public var untimed: String?

    /// The input of a stream read from elsewhere: bytes are its NAL units without start codes or length prefixes.
    public init(_ stream: ForeignStream) {
        name = stream.path
        timebase = stream.timebase
        frames = stream.frames.map {
            Frame(codedIndex: $0.codedIndex, displayIndex: $0.displayIndex, type: $0.type.rawValue, pts: $0.pts, dts: $0.dts,
                  bytes: $0.payloadBytes, hasBSlices: $0.hasBSlices, outputRank: $0.outputRank)
        }
        endPTS = stream.endPTS
        var last: [Int: String] = [:]
        var ppss: [PPS] = []
        for p in stream.parameterSets where p.kind == "pps" {
            guard last[p.id] != p.fieldsJSON, let flag = p.entropyCodingModeFlag else { continue }
            last[p.id] = p.fieldsJSON
            ppss.append(PPS(id: p.id, place: p.nalUnitIndex.map { "NAL unit \($0)" } ?? "out of band", entropyCodingModeFlag: flag))
        }
        pictureParameterSets = ppss
        timesFrom = stream.timeSource.description
        bytesNote = nil
        untimed = stream.timeSource.untimed
    }

    public init(name: String, timebase: Rational, frames: [Frame], endPTS: Int64, pictureParameterSets: [PPS]?, timesFrom: String, bytesNote: String?) {
        self.name = name; self.timebase = timebase; self.frames = frames; self.endPTS = endPTS
        self.pictureParameterSets = pictureParameterSets; self.timesFrom = timesFrom; self.bytesNote = bytesNote
    }
}

/// What a check found.
public struct RuleCheckReport: Sendable {
    /// One broken rule, as one printed line: `RULE: what`, the rule as `NAME=VALUE`.
    public struct Violation: Sendable, Equatable {
        public var rule: String
        public var text: String
        public var line: String { "\(rule): \(text)" }
    }
    public var violations: [Violation]
    /// The keyframe analysis (the rule's limits, or none when neither keyframe property is given); nil when the
    /// times cannot be checked against it and no keyframe property asks for it.
    public var keyframes: KeyframeAnalysis?
    /// The DataRateLimits windows, one per pair; nil without DataRateLimits.
    public var dataRateWindows: [DataRateLimits.WindowCheck]?
    /// The one summary line: frames, span, where times came from, the largest GOP in frames and the longest in seconds (two GOPs
    /// when they differ), and per rule its count.
    public var summary: String
}

/// `enclab check`: a stream's frames against ``StreamExpectations``.
public enum RuleCheck {
    /// Holds the input's times to the range every reader of frames holds them to (``FrameRanges/maximumTimestampTicks``,
    /// -2^60 ... 2^60 ticks), so that no span, gap or window of them overflows 64 bits: an INT64_MAX PTS made a span
    /// of -1.96 s.
    /// - Throws: `.data` "NAME: frame coded_index C: pts V is outside -2^60...2^60 ticks ..." (or the end's).
    public static func checkTimes(_ input: RuleCheckInput) throws {
        let limit = FrameRanges.maximumTimestampTicks
        func refuse(_ what: String, _ value: Int64) -> LabError {
            LabError.data("\(input.name): \(what) \(value) is outside -\(limit)...\(limit) (2^60 ticks of \(input.timebase) s), where its spans would not fit 64 bits")
        }
        for f in input.frames {
            for (name, value) in [("pts", f.pts), ("dts", f.dts)] where !(-limit...limit).contains(value) {
                throw refuse("frame coded_index \(f.codedIndex): \(name)", value)
            }
        }
        guard (-limit...limit).contains(input.endPTS) else { throw refuse("the end PTS", input.endPTS) }
    }

    /// Checks `input` against `expect`.
    ///
    /// - Keyframes are the frames of type IDR (an IDR picture, `nal_unit_type` 5). MaxKeyFrameInterval and
    ///   MaxKeyFrameIntervalDuration are checked by ``KeyframeRule/violations(keyframes:pts:endPTS:)`` on the
    ///   display-order PTS, MaxKeyFrameInterval 0 meaning no frame limit: each gap between keyframes (and from the
    ///   last to the end) longer than the limit is one violation, a stall (two adjacent frames further apart than
    ///   the duration limit) is one of its own.
    /// - DataRateLimits: ``DataRateLimits/check(dtsTicks:sizesBytes:timebase:)`` over the frames' DTS and bytes;
    ///   each window over a pair's limit is one violation (counted in the summary), printed as one line per pair
    ///   naming how many and the worst.
    /// - AllowFrameReordering=false: each frame with a B slice, or output (by picture order count) before a frame
    ///   decoded earlier, is one violation. A VUI max_num_reorder_frames above 0 alone is not: it declares room
    ///   for reordering, not reordering.
    /// - H264EntropyMode: each PPS with new content whose entropy_coding_mode_flag is not the mode's (CAVLC 0,
    ///   CABAC 1) is one violation.
    /// - Without times (``RuleCheckInput/untimed``), MaxKeyFrameInterval and AllowFrameReordering count frames in
    ///   display and decode order and H264EntropyMode reads the PPSs as usual; lines and summary name no seconds.
    /// - Throws: `.data` naming the input when the display-order PTS do not increase (with a keyframe property
    ///   given), H264EntropyMode is asked of an input whose PPSs are not known, or the input has no times and a rule
    ///   needs them (MaxKeyFrameIntervalDuration above 0, DataRateLimits), naming the rule.
    ///   A frame's PTS or DTS, or the end, outside -2^60 ... 2^60 ticks is `.data` too (``checkTimes(_:)``).
    public static func check(_ input: RuleCheckInput, _ expect: StreamExpectations) throws -> RuleCheckReport {
        var violations: [RuleCheckReport.Violation] = []
        var counts: [String: Int] = [:]
        /// One line; `count` violations (a DataRateLimits pair's line counts its windows over the limit).
        func add(_ rule: String, _ text: String, count: Int = 1) {
            violations.append(.init(rule: rule, text: text))
            counts[rule, default: 0] += count
        }
        try checkTimes(input)
        let tb = input.timebase
        func seconds(_ ticks: Int64) -> String { Self.seconds(ticks, tb) }
        // Without times only the rules that count frames are checked: MaxKeyFrameIntervalDuration above 0 and
        // DataRateLimits need times.
        if let why = input.untimed {
            var needing: [String] = []
            if let d = expect.maxKeyFrameIntervalDuration, d > .zero, let r = expect.rule(.maxKeyFrameIntervalDuration) { needing.append(r) }
            if let limits = expect.dataRateLimits, !limits.pairs.isEmpty, let r = expect.rule(.dataRateLimits) { needing.append(r) }
            if !needing.isEmpty {
                throw LabError.data("\(input.name): no times: \(why); \(needing.joined(separator: " and ")) \(needing.count == 1 ? "needs" : "need") them "
                                    + "(give --tcfile-in FILE; MaxKeyFrameInterval, AllowFrameReordering and H264EntropyMode need none)")
            }
        }
        let timed = input.untimed == nil
        let byDisplay = input.frames.sorted { $0.displayIndex < $1.displayIndex }
        let pts = byDisplay.map(\.pts)

        // Keyframes.
        let keyframeRules = [expect.rule(.maxKeyFrameInterval), expect.rule(.maxKeyFrameIntervalDuration)]
        var keyframes: KeyframeAnalysis?
        do {
            let rule = try KeyframeRule(maxFrames: expect.maxKeyFrameInterval ?? 0, maxDuration: expect.maxKeyFrameIntervalDuration ?? .zero,
                                        timebase: tb)
            let actual = byDisplay.filter { $0.type == FrameType.idr.rawValue }.map(\.displayIndex)
            let check = try rule.violations(keyframes: actual, pts: pts, endPTS: input.endPTS)
            let last = pts.last ?? 0
            let expected = try rule.expectedKeyframes(pts: pts, nominalFrameTicks: max(1, input.endPTS &- last), streamKeyframes: actual)
            keyframes = KeyframeAnalysis(rule: rule, expected: expected, actual: actual, forced: [], check: check)
        } catch let e as LabError where e.kind == .data {
            if keyframeRules.contains(where: { $0 != nil }) { throw LabError.data("\(input.name): \(e.message)") }
        }
        if let k = keyframes {
            let isKey = Set(k.actual)
            func place(_ frame: Int) -> String {
                if frame >= pts.count { return timed ? "the end (\(seconds(input.endPTS)) s)" : "the end" }
                return "\(isKey.contains(frame) ? "keyframe" : "frame") \(frame)" + (timed ? " (\(seconds(pts[frame])) s)" : "")
            }
            for v in k.check.violations {
                let span = Self.text(v.durationSeconds)
                switch v.kind {
                case .frameLimit:
                    guard let rule = keyframeRules[0], let limit = k.rule.frameLimit else { continue }
                    add(rule, "\(v.frames) frames from \(place(v.startFrame)) to \(place(v.endFrame)), more than \(limit) (display order\(timed ? ", \(span) s" : ""))")
                case .durationLimit:
                    guard let rule = keyframeRules[1], let limit = k.rule.durationLimit else { continue }
                    add(rule, "\(span) s from \(place(v.startFrame)) to \(place(v.endFrame)), more than \(VideoToolboxSettings.text(limit)) s (display order, \(v.frames) frames)")
                case .stall:
                    guard let rule = keyframeRules[1], let limit = k.rule.durationLimit else { continue }
                    add(rule, "stall: \(span) s between \(place(v.startFrame)) and \(place(v.endFrame)), more than \(VideoToolboxSettings.text(limit)) s (display order); no keyframe could have prevented it")
                }
            }
        }

        // DataRateLimits.
        var windows: [DataRateLimits.WindowCheck]?
        if let limits = expect.dataRateLimits, let rule = expect.rule(.dataRateLimits) {
            let decode = input.frames.sorted { $0.codedIndex < $1.codedIndex }
            let checks = try limits.check(dtsTicks: decode.map(\.dts), sizesBytes: decode.map(\.bytes), timebase: tb)
            windows = checks
            for (n, c) in checks.enumerated() where c.windowsOverLimit > 0 {
                guard let w = c.worst else { continue }
                add(rule, "pair \(n + 1), \(c.pair.bytes) bytes in \(VideoToolboxSettings.text(c.pair.seconds)) s: \(c.windowsOverLimit) of \(c.windowCount) windows hold more; the worst, frames \(w.startIndex)-\(w.endIndex) (decode order) from \(seconds(w.startTicks)) s, holds \(w.bytes) bytes (\(String(format: "%.3f", w.ratio.approximateValue)) x the limit)",
                    count: c.windowsOverLimit)
            }
        }

        // AllowFrameReordering=false.
        if expect.allowFrameReordering == false, let rule = expect.rule(.allowFrameReordering) {
            var latest: (rank: Int, coded: Int)?
            for f in input.frames.sorted(by: { $0.codedIndex < $1.codedIndex }) {
                var why: [String] = []
                if f.hasBSlices { why.append("has B slices") }
                if let l = latest, f.outputRank < l.rank {
                    why.append("is output before frame \(l.coded), which is decoded before it")
                }
                if !why.isEmpty {
                    add(rule, "frame \(f.codedIndex) in decode order (display \(f.displayIndex), \(f.type)) \(why.joined(separator: " and "))")
                }
                if latest == nil || f.outputRank > latest!.rank { latest = (f.outputRank, f.codedIndex) }
            }
        }

        // H264EntropyMode.
        if let mode = expect.entropyMode, let rule = expect.rule(.h264EntropyMode) {
            guard let ppss = input.pictureParameterSets else {
                throw LabError.data("\(input.name): no PPS is known, so H264EntropyMode cannot be checked")
            }
            let wanted = mode == .cabac ? 1 : 0
            for p in ppss where p.entropyCodingModeFlag != wanted {
                add(rule, "PPS id \(p.id) (\(p.place)): entropy_coding_mode_flag \(p.entropyCodingModeFlag) (\(p.entropyCodingModeFlag == 1 ? "CABAC" : "CAVLC")), expected \(wanted) (\(mode.rawValue))")
            }
        }

        // Violations by rule, in the order of ``StreamExpectations/checkable`` (each rule's in frame order).
        let order = expect.ruleNames
        violations = violations.enumerated().sorted {
            ((order.firstIndex(of: $0.element.rule) ?? order.count), $0.offset) < ((order.firstIndex(of: $1.element.rule) ?? order.count), $1.offset)
        }.map(\.element)

        // The summary.
        var pictures: [String: Int] = [:]
        for f in input.frames { pictures[f.type, default: 0] += 1 }
        let first = pts.first ?? 0
        var summary = "check \(input.name): \(input.frames.count) frames ("
        summary += ["IDR", "I", "P", "Bref", "B"].map { "\($0) \(pictures[$0] ?? 0)" }.joined(separator: ", ")
        if let why = input.untimed {
            summary += "), no times (\(why)): frames counted"
        } else {
            summary += ") over \(seconds(input.endPTS &- first)) s, times from \(input.timesFrom)"
        }
        if let k = keyframes {
            summary += "; largest GOP \(k.check.largestGOPFrames) frames" + (timed ? ", longest GOP \(Self.text(k.check.largestGOPSeconds)) s" : "")
        }
        if let note = input.bytesNote, expect.dataRateLimits != nil { summary += "; \(note)" }
        let perRule = expect.ruleNames.map { rule in counts[rule].map { "\(rule) \($0)" } ?? "\(rule) ok" }
        let total = counts.values.reduce(0, +)
        summary += violations.isEmpty ? ": no violations (\(perRule.joined(separator: ", ")))"
            : ": \(total) violation\(total == 1 ? "" : "s") (\(perRule.joined(separator: ", ")))"
        return RuleCheckReport(violations: violations, keyframes: keyframes, dataRateWindows: windows, summary: summary)
    }

    /// `ticks` of `timebase` in seconds: a plain decimal when it has at most 6 places, else rounded to 6.
    static func seconds(_ ticks: Int64, _ timebase: Rational) -> String {
        guard let exact = try? timebase.times(ticks) else { return String(format: "%.6f", Double(ticks) * timebase.approximateValue) }
        return text(exact)
    }

    /// A number of seconds as a plain decimal of at most 6 places when it is one, else rounded to 6 places.
    static func text(_ r: Rational) -> String {
        let t = r < .zero ? "-" + VideoToolboxSettings.text((try? Rational(0) - r) ?? .zero) : VideoToolboxSettings.text(r)
        if !t.contains("/"), (t.split(separator: ".").dropFirst().first?.count ?? 0) <= 6 { return t }
        return String(format: "%.6f", r.approximateValue)
    }
}
