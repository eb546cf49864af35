import Foundation
import H264

/// A frame type the timestamps stage may force on an input picture: x264's `x264_picture_t.i_type`
/// (x264.h `X264_TYPE_AUTO`, `X264_TYPE_IDR`, `X264_TYPE_I`, `X264_TYPE_P`, `X264_TYPE_B`). `auto` lets x264 decide.
public enum ForcedFrameType: String, Sendable, Codable, CaseIterable {
    case auto, idr, i, p, b
}

/// Where a run's presentation times come from.
public enum TimestampSource: String, Sendable, Codable {
    /// The clip's constant rate, as x264's CLI times y4m input: `b_vfr_input=0`, timebase fps_den/fps_num,
    /// PTS = frame index. Streams stay byte-identical to the CLI's.
    case constantRate = "constant-rate"
}

/// One input picture as the encoder receives it: the picture, its presentation time in the plan's timebase, its
/// input frame number (after `--seek`), and a frame type to force, if any.
public struct TimedPicture {
    public var picture: Picture
    /// Presentation time in ticks of ``TimestampPlan/timebase``.
    public var pts: Int64
    /// Input frame number after `--seek`, from 0 (display order).
    public var index: Int
    public var forcedType: ForcedFrameType
}

/// The timestamps stage: gives each picture its PTS in a stated timebase and, optionally, a forced frame type.
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
    /// Frame types to force, by input frame number (after `--seek`); absent frames are `auto`.
    public var forcedTypes: [Int: ForcedFrameType]

    /// The constant-rate plan of x264's CLI for a clip of rate `fpsNum/fpsDen`: timebase fps_den/fps_num (reduced),
    /// PTS = frame index, `b_vfr_input=0`.
    /// - Throws: `.data` when the rate is not positive.
    public static func constantRate(fpsNum: Int, fpsDen: Int, forcedTypes: [Int: ForcedFrameType] = [:]) throws -> TimestampPlan {
        guard fpsNum > 0, fpsDen > 0, let rate = try? Rational(Int64(fpsNum), Int64(fpsDen)) else {
            throw LabError.data("frame rate \(fpsNum)/\(fpsDen) is not a positive rate")
        }
        return TimestampPlan(source: .constantRate, frameRate: rate, timebase: try rate.reciprocal,
                             variableFrameRate: false, forcedTypes: forcedTypes)
    }

    /// Stamps input frame `index` (after `--seek`).
    public func stamp(_ picture: Picture, index: Int) -> TimedPicture {
        TimedPicture(picture: picture, pts: Int64(index), index: index, forcedType: forcedTypes[index] ?? .auto)
    }

    /// Ticks one frame lasts at the nominal rate (1 for the constant-rate plan).
    public var frameTicks: Rational { get throws { try (frameRate.reciprocal) / timebase } }

    /// The span of `frames` input frames at the nominal rate, in seconds.
    public func duration(frames: Int) throws -> Rational {
        try frameRate.reciprocal.times(Int64(frames))
    }

    /// A JSON-ready description for the run's settings (`timestamps`): source, frame rate, timebase, forced types.
    public var jsonObject: [String: Any] {
        var o: [String: Any] = ["source": source.rawValue, "frame_rate": frameRate.description, "timebase": timebase.description,
                                "vfr_input": variableFrameRate]
        if !forcedTypes.isEmpty {
            o["forced_types"] = Dictionary(uniqueKeysWithValues: forcedTypes.map { (String($0.key), $0.value.rawValue) })
        }
        return o
    }
}
