/// An H.264 encoder as the lab drives it: what goes in is pictures with their PTS and the frame type the timestamps
/// stage forces (``TimedPicture``), one at a time in display order; what comes out is coded frames in decode order
/// (``EncodedFrame``: NAL units, picture type, QP). Each implementation is the only place that touches its library;
/// x264 (``X264Session``) is the one today.
public protocol VideoEncoder: AnyObject {
    /// The parameters the encoder settled on when it opened (rate control, GOP, threads, timebase).
    var resolved: ResolvedParameters { get }
    /// Encodes one picture, or, given nil, drains one frame the encoder holds.
    /// - Returns: the coded frame the encoder output, if any (with look-ahead or B-frames, output lags input).
    func encode(_ picture: TimedPicture?) throws -> EncodedFrame?
    /// Frames the encoder still holds: drain them with `encode(nil)` until 0.
    var delayedFrames: Int { get }
    /// The encoder's warnings and errors since the last call.
    func takeWarnings() -> [String]
    /// The most frames the encoder says it will hold (x264's `x264_encoder_maximum_delayed_frames`), read once when
    /// it opened; nil for an encoder that does not say.
    var maximumDelayedFrames: Int? { get }
    /// Rate-control values from the next picture on (a rate schedule, ``RateSchedule``).
    /// - Throws: `.usage` for an encoder that cannot change its targets while running.
    func setRateTargets(_ targets: X264RateTargets) throws
}

extension VideoEncoder {
    public var maximumDelayedFrames: Int? { nil }
    public func setRateTargets(_ targets: X264RateTargets) throws {
        throw LabError.usage("--rate-schedule: this encoder cannot change its rate-control targets while running")
    }
}

extension X264Session: VideoEncoder {}
