import Foundation
import H264

/// The clock a generated schedule's frames are stamped from (`--pts-clock`).
public enum PTSClock: String, Sendable, Codable, CaseIterable {
    /// The times the recorder's drop/duplicate logic stamps (``PTSSchedule/generate(frames:)``).
    case schedule
    /// The remedy: the times the frames had on the capture clock, before that logic
    /// (``PTSSchedule/generateWithCaptureClock(frames:)``'s `capture`).
    case capture
}

/// The timestamps stage as a run's settings give it: where the presentation times come from, and what happens to
/// them on the way to the encoder (docs/timestamps.md). All default to the clip's constant rate handed over as
/// x264's CLI does (timebase 1/fps, PTS = frame index), which keeps streams byte-identical to the CLI's.
///
/// The stages, in order: source (constant rate, the file's own times, a timecode v2 file, or a generated
/// schedule, optionally on its capture clock) → `--pts-offset` → `--pts-rebase` → `--pts-precision` →
/// `--pts-clamp` → x264, in microseconds.
public struct TimestampSettings: Equatable, Sendable {
    /// `--pts-source file`: the clip's own timestamps (ffprobe's `best_effort_timestamp` of each decoded frame);
    /// only for clips decoded by ffmpeg.
    public var fromFile = false
    /// `--pts-source constant-rate` given explicitly (the default anyway; kept to refuse it beside another source).
    public var constantRateGiven = false
    /// `--tcfile-in FILE`: a timecode v2 file (``TimecodeV2``), entry k for source frame k.
    public var tcfile: String?
    /// `--pts-schedule SPEC`: a generated schedule, as given (``PTSSchedule``'s grammar).
    public var schedule: String?
    /// `--pts-clock`: which of the schedule's clocks stamps the frames; only with a schedule.
    public var clock: PTSClock?
    /// `--pts-offset MICROSECONDS`: added to every time.
    public var offset: PTSOffset?
    /// `--pts-rebase`: the first frame's time (after the offset) is subtracted from every time, before the
    /// precision stage.
    public var rebase = false
    /// `--pts-precision`: the representation each time passes through before the encoder.
    public var precision: PTSPrecision?
    /// `--pts-clamp`: a time not after the largest so far becomes that largest plus one nominal frame duration
    /// (x264 CLI's main-loop rule, x264.c).
    public var clamp = false

    public init() {}

    /// The setting names the timestamps stage takes (as `--name` flags, or experiment keys).
    public static let names: Set<String> = ["pts-source", "tcfile-in", "pts-schedule", "pts-clock", "pts-offset",
                                            "pts-rebase", "pts-precision", "pts-clamp"]
    /// Those of ``names`` that are switches without a value.
    public static let switches: Set<String> = ["pts-rebase", "pts-clamp"]

    /// Whether nothing is set: the constant-rate plan of x264's CLI.
    public var isDefault: Bool {
        var plain = self
        plain.constantRateGiven = false
        return plain == TimestampSettings()
    }

    /// Takes one setting of ``names``.
    /// - Throws: `.usage` naming the flag and the value or part that is wrong.
    mutating func set(_ name: String, _ value: String?) throws {
        func text() throws -> String {
            guard let v = value, !v.isEmpty else { throw LabError.usage("--\(name) needs a value") }
            return v
        }
        func switchValue() throws -> Bool {
            switch value {
            case nil, "true": return true
            case "false": return false
            default: throw LabError.usage("--\(name) is a switch without a value, got '\(value ?? "")'")
            }
        }
        switch name {
        case "pts-source":
            let v = try text()
            switch v {
            case "file": fromFile = true; constantRateGiven = false
            case "constant-rate": fromFile = false; constantRateGiven = true
            default: throw LabError.usage("--pts-source must be constant-rate or file, got \(TimecodeV2.quoted(v))")
            }
        case "tcfile-in": tcfile = try text()
        case "pts-schedule":
            let v = try text()
            // The grammar is checked here (the nominal rate only fills in a missing rate=).
            _ = try PTSSchedule(parsing: v, nominalRate: Rational(25))
            schedule = v
        case "pts-clock":
            let v = try text()
            guard let c = PTSClock(rawValue: v) else {
                throw LabError.usage("--pts-clock must be schedule or capture, got \(TimecodeV2.quoted(v))")
            }
            clock = c
        case "pts-offset": offset = try PTSOffset(parsing: try text())
        case "pts-rebase": rebase = try switchValue()
        case "pts-precision": precision = try PTSPrecision(parsing: try text())
        case "pts-clamp": clamp = try switchValue()
        default: preconditionFailure("not a timestamps setting: \(name)")
        }
    }

    /// Refuses settings that contradict each other: more than one source (`--pts-source file` or `constant-rate`,
    /// `--tcfile-in`, `--pts-schedule`), or `--pts-clock` without a schedule.
    /// - Throws: `.usage` naming the flags.
    public func check() throws {
        let sources = [fromFile ? "--pts-source file" : constantRateGiven ? "--pts-source constant-rate" : nil,
                       tcfile.map { _ in "--tcfile-in" }, schedule.map { _ in "--pts-schedule" }].compactMap { $0 }
        if sources.count > 1 {
            throw LabError.usage("contradictory settings: \(sources.joined(separator: " and ")) are both timestamp sources; give one")
        }
        if clock != nil && schedule == nil {
            throw LabError.usage("contradictory settings: --pts-clock chooses a clock of --pts-schedule, which is not given")
        }
    }

    /// The settings as x264-CLI-style flags, in stage order (for `x264_args` and messages).
    public var arguments: [String] {
        var a: [String] = []
        if fromFile { a += ["--pts-source", "file"] }
        if let t = tcfile { a += ["--tcfile-in", t] }
        if let s = schedule { a += ["--pts-schedule", s] }
        if let c = clock { a += ["--pts-clock", c.rawValue] }
        if let o = offset { a += ["--pts-offset", o.description] }
        if rebase { a.append("--pts-rebase") }
        if let p = precision { a += ["--pts-precision", p.description] }
        if clamp { a.append("--pts-clamp") }
        return a
    }
}
