import Foundation
import H264

/// A frame type the timestamps stage's keyframe-forcing step (``KeyframeForcing``) may force on an input picture:
/// x264's `x264_picture_t.i_type`
/// (x264.h `X264_TYPE_AUTO`, `X264_TYPE_IDR`, `X264_TYPE_I`, `X264_TYPE_P`, `X264_TYPE_B`). `auto` lets x264 decide.
public enum ForcedFrameType: String, Sendable, Codable, CaseIterable {
    case auto, idr, i, p, b
}

/// Where a run's presentation times come from.
public enum TimestampSource: String, Sendable, Codable {
    /// The clip's constant rate. Alone (no offset, rebase, precision or clamp) it is timed as x264's CLI times y4m
    /// input: `b_vfr_input=0`, timebase fps_den/fps_num, PTS = frame index, and streams stay byte-identical to
    /// the CLI's; with any of those stages, frame k's time is k / rate, in microseconds.
    case constantRate = "constant-rate"
    /// The clip's own timestamps (`--pts-source file`, ``SourceTimes/frames(path:)``).
    case file
    /// A timecode v2 file (`--tcfile-in`, ``TimecodeV2``).
    case tcfile
    /// A generated schedule (`--pts-schedule`, ``PTSSchedule``).
    case schedule
}

/// The microsecond stages of a plan other than the CLI's constant-rate one: the source's times, then offset →
/// rebase → precision → clamp (``TimestampSettings``). x264 gets the result with timebase 1/1000000 and
/// `b_vfr_input=1`.
public struct PTSStages: Sendable, Equatable {
    /// Where the source times come from.
    public enum Times: Sendable, Equatable {
        /// Frame k (after `--seek`) at k / rate.
        case constantRate
        /// Listed times in µs, entry k for frame k after `--seek` (the file's own), and the last listed
        /// frame's duration in µs when the file gives it.
        case list([Int64], lastDuration: Int64?)
        /// A timecode v2 file's entries from `seek` on.
        case tcfile(TimecodeV2, seek: Int)
        /// A schedule, generated from the first frame after `--seek`, on the given clock.
        case schedule(PTSSchedule, PTSClock)
    }
    public var times: Times
    public var offset: PTSOffset?
    public var rebase: Bool
    public var precision: PTSPrecision?
    public var clamp: Bool
    /// The SHA-256 of the timecode file's bytes (part of the run key), nil for other sources.
    public var tcfileSHA256: String?
}

/// Gives the frames of a run their microsecond times, one after another (the stages keep state: the rebase
/// needs the first time, the clamp the largest so far, a schedule its generated prefix).
public struct PTSStamper {
    public let stages: PTSStages
    /// The nominal rate (the clip's), frames per second.
    public let frameRate: Rational
    private var first: Int64?
    private var largest: Int64?
    private var generated: [Int64] = []
    private var listed: [Int64] = []
    /// The nominal frame duration in whole µs as x264's CLI computes ticks_per_frame (x264.c: timebase_den ·
    /// fps_den / timebase_num / fps_num, truncated), at least 1: what ``PTSStages/clamp`` adds.
    public let clampStep: Int64

    public init(stages: PTSStages, frameRate: Rational) {
        self.stages = stages
        self.frameRate = frameRate
        let step = Int128(1_000_000) * Int128(frameRate.denominator) / Int128(frameRate.numerator)
        clampStep = max(1, Int64(clamping: step))
    }

    /// Source frame k's time (after `--seek`) in µs, before any stage.
    /// - Throws: `.data` naming the timecode file and line, or the clip, when there is no time for frame k.
    public mutating func sourceTime(_ k: Int) throws -> Int64 {
        switch stages.times {
        case .constantRate:
            return try frameRate.reciprocal.microseconds(ticks: Int64(k))
        case .list(let times, _):
            guard k < times.count else {
                throw LabError.data("the clip decoded to more frames than its timestamps list (\(times.count)): frame \(k) has no time")
            }
            return times[k]
        case .tcfile(let file, let seek):
            if k >= listed.count {
                // Whole prefixes are checked (increasing, present), growing by doubling.
                let want = min(max(k + 1, 2 * listed.count), max(k + 1, file.times.count - seek))
                listed = try file.ptsMicroseconds(seek: seek, frames: want)
            }
            return listed[k]
        case .schedule(let schedule, let clock):
            if k >= generated.count {
                let g = schedule.generateWithCaptureClock(frames: max(k + 1, 2 * generated.count, 64))
                generated = clock == .capture ? g.capture : g.pts
            }
            return generated[k]
        }
    }

    /// Frame k's time as handed to x264, in µs; frames must be stamped in order from 0.
    /// - Throws: `.data` from ``sourceTime(_:)``; `.usage` naming `--pts-offset` when the sum overflows; a time
    ///   beyond ±``limit`` is `.data` when the input's own time (the clip's, the timecode file's, named with its
    ///   line) is beyond it or no offset was added, `.usage` when a setting (`--pts-offset`, `--pts-schedule`) took it there.
    public mutating func stamp(_ k: Int) throws -> Int64 {
        let source = try sourceTime(k)
        var t = source
        if let offset = stages.offset { t = try offset.apply(t) }
        if stages.rebase {
            if first == nil { first = t }
            t = Int64(clamping: Int128(t) - Int128(first!))
        }
        if let precision = stages.precision { t = precision.apply(t) }
        if stages.clamp, let l = largest, t <= l { t = Int64(clamping: Int128(l) + Int128(clampStep)) }
        guard t.magnitude <= Self.limit.magnitude else {
            let cause: String
            switch stages.times {
            case .list: cause = "the clip's own time"
            case .tcfile: cause = "the timecode file's time"
            case .schedule: cause = "--pts-schedule's time"
            case .constantRate: cause = "the constant-rate time"
            }
            // The time's own place first: the timecode file and its line.
            var place = "timestamps"
            if case .tcfile(let file, let seek) = stages.times, seek + k < file.lines.count {
                place = "\(file.path): line \(file.lines[seek + k])"
            }
            let message = "\(place): frame \(k)'s PTS \(t) µs (\(cause)\(stages.offset.map { " with --pts-offset \($0)" } ?? "")) is beyond ±2^59 µs, "
                + "the range the lab's analysis and plots keep times in (x264's DTS, and spans, must stay within 64 bits)"
            // Bad data when the input's own time (the clip's, the timecode file's) is beyond the range whatever the
            // stages do, as any other bad time of the input is; a usage error when a setting took it there.
            switch stages.times {
            case .list, .tcfile, .constantRate:
                if source.magnitude > Self.limit.magnitude || stages.offset == nil { throw LabError.data(message) }
            case .schedule:
                break
            }
            throw LabError.usage(message)
        }
        largest = max(largest ?? t, t)
        return t
    }

    /// The largest magnitude of a PTS handed to x264: 2^59 µs (18,000 years), half of what the plots accept
    /// (``FrameRanges/maximumTimestampTicks``), so x264's DTS (a PTS minus its reorder delay) and every span
    /// stay in range.
    public static let limit: Int64 = 1 << 59

    /// The duration of source frame k in µs where the source knows it (the next timecode entry, the next
    /// scheduled time, the next listed time minus this one), else nil.
    public mutating func knownDuration(_ k: Int) -> Int64? {
        switch stages.times {
        case .constantRate: return nil
        case .list(let times, let last): return k + 1 < times.count ? times[k + 1] - times[k] : k + 1 == times.count ? last : nil
        case .tcfile(let file, let seek):
            guard seek + k + 1 < file.times.count, let d = try? (file.times[seek + k + 1] - file.times[seek + k]),
                  let us = try? Rational(1, d.denominator).microseconds(ticks: d.numerator) else { return nil }
            return us
        case .schedule:
            guard let a = try? sourceTime(k), let b = try? sourceTime(k + 1) else { return nil }
            return b - a
        }
    }
}

/// One input picture as the encoder receives it: the picture, its presentation time in the plan's timebase, its
/// input frame number (after `--seek`), and the frame type the keyframe-forcing step forces (`auto`: none).
public struct TimedPicture {
    public var picture: Picture
    /// Presentation time in ticks of ``TimestampPlan/timebase``.
    public var pts: Int64
    /// Input frame number after `--seek`, from 0 (display order).
    public var index: Int
    public var forcedType: ForcedFrameType
}

/// The timestamps stage's plan: gives each picture its PTS in a stated timebase (the stage's keyframe-forcing step,
/// ``KeyframeForcing``, decides forced frame types as the pictures go to the encoder).
///
/// Every time is exact: the frame rate and the timebase are ``Rational``s (no floating-point fps anywhere), and
/// conversion to microseconds happens only in ``Rational/microseconds(ticks:)``.
public struct TimestampPlan: Sendable, Equatable {
    public var source: TimestampSource
    /// The clip's nominal frame rate in frames per second (y4m's F tag, or ffmpeg's rate for decoded input).
    public var frameRate: Rational
    /// Seconds per PTS tick; x264's `i_timebase_num/i_timebase_den`.
    public var timebase: Rational
    /// x264's `b_vfr_input`: whether rate control uses the timestamps (1) or the frame rate (0).
    public var variableFrameRate: Bool
    /// The microsecond stages, for every plan but the CLI's constant-rate one (timebase 1/1000000 then).
    public var stages: PTSStages?
    /// The settings the plan was made from (for the record and the run key).
    public var settings = TimestampSettings()

    /// The constant-rate plan of x264's CLI for a clip of rate `fpsNum/fpsDen`: timebase fps_den/fps_num (reduced),
    /// PTS = frame index, `b_vfr_input=0`.
    /// - Throws: `.data` when the rate is not positive.
    public static func constantRate(fpsNum: Int, fpsDen: Int) throws -> TimestampPlan {
        guard fpsNum > 0, fpsDen > 0, let rate = try? Rational(Int64(fpsNum), Int64(fpsDen)) else {
            throw LabError.data("frame rate \(fpsNum)/\(fpsDen) is not a positive rate")
        }
        return TimestampPlan(source: .constantRate, frameRate: rate, timebase: try rate.reciprocal,
                             variableFrameRate: false)
    }

    /// A microsecond plan: timebase 1/1000000, `b_vfr_input=1` (which wins over what a tune sets, as with x264's
    /// `--tcfile-in`), x264's fps kept at the clip's nominal `frameRate`.
    public static func microseconds(source: TimestampSource, frameRate: Rational, stages: PTSStages,
                                    settings: TimestampSettings) -> TimestampPlan {
        TimestampPlan(source: source, frameRate: frameRate, timebase: microsecond, variableFrameRate: true,
                      stages: stages, settings: settings)
    }

    /// One microsecond, the timebase of every plan with ``stages``.
    public static let microsecond = try! Rational(1, 1_000_000)

    /// Stamps input frame `index` (after `--seek`) with the constant-rate plan's PTS, the frame index.
    public func stamp(_ picture: Picture, index: Int) -> TimedPicture {
        TimedPicture(picture: picture, pts: Int64(index), index: index, forcedType: .auto)
    }

    /// Stamps input frame `index` (after `--seek`) with the stamper's time when the plan has ``stages`` (frames
    /// in order from 0), else as ``stamp(_:index:)``.
    public func stamp(_ picture: Picture, index: Int, stamper: inout PTSStamper?) throws -> TimedPicture {
        guard stamper != nil else { return stamp(picture, index: index) }
        let pts = try stamper!.stamp(index)
        return TimedPicture(picture: picture, pts: pts, index: index, forcedType: .auto)
    }

    /// A fresh stamper for a run, nil for the CLI's constant-rate plan.
    public func makeStamper() -> PTSStamper? {
        stages.map { PTSStamper(stages: $0, frameRate: frameRate) }
    }

    /// Ticks one frame lasts at the nominal rate (1 for the constant-rate plan).
    public var frameTicks: Rational { get throws { try (frameRate.reciprocal) / timebase } }

    /// The span of `frames` input frames at the nominal rate, in seconds.
    public func duration(frames: Int) throws -> Rational {
        try frameRate.reciprocal.times(Int64(frames))
    }

    /// A JSON-ready description for the run's settings (`timestamps`): source, frame rate, timebase and the stages.
    public var jsonObject: [String: Any] {
        var o: [String: Any] = ["source": source.rawValue, "frame_rate": frameRate.description, "timebase": timebase.description,
                                "vfr_input": variableFrameRate]
        let t = settings
        if let file = t.tcfile { o["tcfile_in"] = file; o["tcfile_sha256"] = stages?.tcfileSHA256 ?? NSNull() }
        if let s = t.schedule { o["schedule"] = s; o["clock"] = (t.clock ?? .schedule).rawValue }
        if case .schedule(let schedule, _)? = stages?.times { o["schedule_canonical"] = schedule.spec }
        if let off = t.offset { o["offset_us"] = off.microseconds }
        if t.rebase { o["rebase"] = true }
        if let p = t.precision { o["precision"] = p.description }
        if t.clamp { o["clamp"] = true }
        return o
    }
}

extension TimestampPlan {
    /// The plan of a run whose clip is timed at its nominal rate `fpsNum/fpsDen` alone: the CLI's constant-rate plan;
    /// nil when the rate is not two positive numbers (the encoder refuses such a clip).
    public static func nominal(fpsNum: Int, fpsDen: Int) throws -> TimestampPlan? {
        guard fpsNum > 0, fpsDen > 0 else { return nil }
        return try constantRate(fpsNum: fpsNum, fpsDen: fpsDen)
    }

    /// The timestamps stage's plan for one run (docs/timestamps.md): the CLI's constant-rate plan when no
    /// timestamp setting is given, else a microsecond plan whose source times are read and checked here, before
    /// anything is written.
    /// - Parameters:
    ///   - t: the run's timestamp settings.
    ///   - fpsNum, fpsDen: the clip's nominal rate.
    ///   - clipPath: the clip, for `--pts-source file` and messages.
    ///   - decodedByFFmpeg: whether the clip is decoded by ffmpeg (only such clips have their own timestamps).
    ///   - frameCount: the frames the run will encode when known (after `--seek`, at most `--frames`): a
    ///     timecode file must have that many entries from `--seek` on.
    /// - Throws: `.usage` for `--pts-source file` on a y4m clip and for an offset that overflows; `.noInput`
    ///   for a missing timecode file; `.data` naming the timecode file and line (too few entries, a bad or
    ///   non-increasing time) or the clip (no timestamps, too few frames).
    public static func make(_ t: TimestampSettings, fpsNum: Int, fpsDen: Int, clipPath: String, decodedByFFmpeg: Bool,
                            seek: Int, frames: Int?, frameCount: Int?) throws -> TimestampPlan {
        let rate = try Rational(Int64(fpsNum), Int64(fpsDen))
        if t.isDefault { return try TimestampPlan.constantRate(fpsNum: fpsNum, fpsDen: fpsDen) }
        try t.check()
        let source: TimestampSource
        var times: PTSStages.Times = .constantRate
        var tcfileSHA: String?
        var known = frameCount
        if let path = t.tcfile {
            source = .tcfile
            let file = try TimecodeV2.read(path: path)
            tcfileSHA = try SHA256.file(path)
            if let n = known { _ = try file.ptsMicroseconds(seek: seek, frames: n) }
            times = .tcfile(file, seek: seek)
        } else if let spec = t.schedule {
            source = .schedule
            times = .schedule(try PTSSchedule(parsing: spec, nominalRate: rate), t.clock ?? .schedule)
        } else if t.fromFile {
            source = .file
            guard decodedByFFmpeg else {
                throw LabError.usage("--pts-source file: \(clipPath) is y4m, which holds no timestamps (give --tcfile-in or --pts-schedule)")
            }
            let read = try SourceTimes.frames(path: clipPath)
            let all = try read.microseconds(path: clipPath)
            guard all.count > seek else {
                throw LabError.data("\(clipPath): ffprobe lists \(all.count) frames, none after --seek \(seek)")
            }
            var list = Array(all[seek...])
            var lastDuration = read.lastDuration.flatMap { try? read.timebase.microseconds(ticks: $0) }
            if let f = frames, list.count > f {
                lastDuration = list[f] - list[f - 1]
                list = Array(list.prefix(f))
            }
            known = list.count
            times = .list(list, lastDuration: lastDuration)
        } else {
            source = .constantRate
        }
        let stages = PTSStages(times: times, offset: t.offset, rebase: t.rebase, precision: t.precision, clamp: t.clamp,
                               tcfileSHA256: tcfileSHA)
        // Every stage runs once over the frames known now, so an overflow is refused before anything is written.
        if let n = known {
            var stamper = PTSStamper(stages: stages, frameRate: rate)
            for k in 0..<n { _ = try stamper.stamp(k) }
        }
        return TimestampPlan.microseconds(source: source, frameRate: rate, stages: stages, settings: t)
    }
}
