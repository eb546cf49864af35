/// How long the encoder held each frame (issue 21, item 3; docs/schema.md "Encoder delay"): from what each coded
/// frame says of its encode call (``EncodedFrame/outputCall``, ``EncodedFrame/delayedFrames``), the run's largest
/// delay, its first output's delay, x264's own bound and VideoToolbox's `MaxFrameDelayCount` checked against them.
public struct EncoderDelay: Equatable, Sendable {
    /// One coded frame: `frame_delays`.
    public struct Frame: Equatable, Sendable {
        public var codedIndex: Int
        /// Its input (display) index: the encode call that handed it in.
        public var inputIndex: Int
        /// The encode call (from 0: one per picture handed in, then one per flush call) that returned it.
        public var outputCall: Int
        /// The frames the encoder held after that call (`x264_encoder_delayed_frames`).
        public var delayedFrames: Int
        /// The calls after its own before it came out: what `MaxFrameDelayCount` bounds.
        public var held: Int { outputCall - inputIndex }
    }

    public var frames: [Frame]
    /// The largest ``Frame/delayedFrames``.
    public var maxDelayFrames: Int
    /// The first output's call: the calls that returned nothing before it (the frames held then).
    public var firstOutputDelayFrames: Int
    /// The largest ``Frame/held``.
    public var maxHeldFrames: Int
    /// `x264_encoder_maximum_delayed_frames`, read when the encoder opened; nil for an encoder without it.
    public var maximumDelayedFrames: Int?
    /// `MaxFrameDelayCount`, nil when not given.
    public var frameDelayLimit: Int?
    /// Frames held longer than ``frameDelayLimit`` (``Frame/held`` above it); nil without a limit.
    public var framesOverLimit: Int?

    /// The delay of `frames` (decode order), nil when a frame does not say its call (an encoder that does not report it).
    public init?(frames: [EncodedFrame], maximumDelayedFrames: Int?, limit: Int?) {
        var rows: [Frame] = []
        rows.reserveCapacity(frames.count)
        for f in frames {
            guard let call = f.outputCall, let held = f.delayedFrames else { return nil }
            rows.append(Frame(codedIndex: f.codedIndex, inputIndex: f.displayIndex, outputCall: call, delayedFrames: held))
        }
        guard let first = rows.first else { return nil }
        self.frames = rows
        maxDelayFrames = rows.map(\.delayedFrames).max()!
        firstOutputDelayFrames = first.outputCall
        maxHeldFrames = rows.map(\.held).max()!
        self.maximumDelayedFrames = maximumDelayedFrames
        frameDelayLimit = limit
        framesOverLimit = limit.map { l in rows.filter { $0.held > l }.count }
    }

    /// The run's warnings: frames held beyond x264's own bound, and beyond MaxFrameDelayCount (with the longest hold).
    public var warnings: [String] {
        var out: [String] = []
        if let m = maximumDelayedFrames, maxDelayFrames > m {
            out.append("encoder delay: x264 held \(maxDelayFrames) frames after a call, more than its x264_encoder_maximum_delayed_frames \(m)")
        }
        if let limit = frameDelayLimit, let over = framesOverLimit, over > 0 {
            let worst = frames.max { $0.held < $1.held }!
            out.append("MaxFrameDelayCount=\(limit): \(over) of \(frames.count) frames held longer (the longest: input frame \(worst.inputIndex) came out at encode call \(worst.outputCall), \(worst.held) calls after its own)")
        }
        return out
    }
}
