/// An H.264 encoder as the lab drives it: what goes in is pictures with their PTS and the frame type the timestamps
/// stage forces (``TimedPicture``), one at a time in display order; what comes out is coded frames in decode order
/// (``EncodedFrame``: NAL units, picture type, QP) and the pictures the encoder dropped (``SkippedFrame``). Each
/// implementation is the only place that touches its library: x264 (``X264Session``) and OpenH264
/// (``OpenH264Session``).
public protocol VideoEncoder: AnyObject {
    /// The parameters the encoder settled on when it opened (rate control, GOP, threads, timebase).
    var resolved: ResolvedParameters { get }
    /// Encodes one picture, or, given nil, drains one frame the encoder holds.
    /// - Returns: the coded frame the encoder output, if any (with look-ahead or B-frames, output lags input; a
    ///   picture the encoder dropped gives none and is in ``takeSkipped()``).
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
    /// The pictures the encoder dropped since the last call (OpenH264's frame skip); x264 drops none.
    func takeSkipped() -> [SkippedFrame]
    /// The encoder's name (`x264`, `openh264`) and library version, as the run records them.
    var name: EncoderName { get }
    var version: String { get }
}

extension VideoEncoder {
    public var maximumDelayedFrames: Int? { nil }
    public func setRateTargets(_ targets: X264RateTargets) throws {
        throw LabError.usage("--rate-schedule: this encoder cannot change its rate-control targets while running")
    }
}

/// A picture that went into the encoder and never came out: OpenH264's `videoFrameTypeSkip` (its rate control's
/// frame skip). Stored in `skipped_frames` (docs/schema.md).
public struct SkippedFrame: Sendable, Equatable {
    /// The input frame number (display order, after `--seek`), from 0.
    public var inputIndex: Int
    /// The PTS it was handed in with, in the run's timebase.
    public var pts: Int64
    /// What a receiver shows in its place, the previous decoded picture, against this picture's source: squared errors
    /// per plane (the verify stage's); nil without the decode or with no picture decoded before it.
    public var held: PlaneErrors?
    public init(inputIndex: Int, pts: Int64, held: PlaneErrors? = nil) { self.inputIndex = inputIndex; self.pts = pts; self.held = held }
}

extension X264Session: VideoEncoder {
    public func takeSkipped() -> [SkippedFrame] { [] }
    public var name: EncoderName { .x264 }
    public var version: String { x264Version }
}

extension OpenH264Session: VideoEncoder {
    public var name: EncoderName { .openh264 }
    public var version: String { openH264Version }
}

/// Opens the encoder the settings name (`encoder`, x264 by default).
/// - Throws: the session's errors (``X264Session/init(settings:input:)``, ``OpenH264Session/init(settings:input:)``).
public func makeEncoder(_ settings: EncodeSettings, input: EncoderInput) throws -> any VideoEncoder {
    switch settings.encoder {
    case .x264: return try X264Session(settings: settings, input: input)
    case .openh264: return try OpenH264Session(settings: settings, input: input)
    }
}
