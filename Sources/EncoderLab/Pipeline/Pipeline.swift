import Foundation
import H264

/// A run checked before anything is written: its clip opened and its first frame read, its settings resolved
/// (once) and opened by x264. ``Pipeline/spec(_:clip:)`` turns it into a ``RunSpec`` once the clip's digest is known.
public struct CheckedRun: Sendable {
    public var experiment: String
    public var label: String
    public var axesJSON: String
    public var clipPath: String
    /// Resolved settings (``EncodeSettings/resolved()`` ran once, here).
    public var settings: EncodeSettings
    public var input: EncoderInput
    public var resolved: ResolvedParameters
}

/// What one run produced, before the store's writer records it: a `Sendable` value.
public struct RunResult: Sendable {
    public var spec: RunSpec
    /// The folder the run's files were written to (a temporary name until the writer moves it into place).
    public var folder: String
    /// The coded frames in decode order (their NAL bytes are in `stream.264`, not here).
    public var frames: [EncodedFrame]
    /// Frames read from the clip and encoded.
    public var inputFrames: Int
    /// Bytes after the last whole frame of the clip, if any.
    public var truncatedBytes: Int?
    /// Warnings in the order they arose (x264's, the clip's, the verification's).
    public var warnings: [String]
    /// What the encoding session's x264 settled on.
    public var resolved: ResolvedParameters
    /// The stream parsed back and checked.
    public var verification: StreamVerification
    /// The independent decodes, per picture.
    public var decoded: [LabStore.DecodedFrameRecord]
    /// The span of the input frames at the nominal rate, in seconds.
    public var duration: Rational
    /// The structured settings recorded in `runs.settings`.
    public var settingsJSON: String
    /// `runs.crop` and `runs.ffmpeg_version`.
    public var crop: String?
    public var ffmpegVersion: String?
    public var createdAt: Date
}

/// The run's stages, in order: input (the clip), timestamps (each picture's PTS and forced type), encode (x264),
/// output (the stream and its companions in the run's folder), verify (the stream parsed back and decoded
/// independently). ``Lab/check(_:experiment:)`` runs the first of them far enough to refuse bad input before
/// anything is written; ``execute(_:in:warn:)`` runs them all. Only the store's writer (``Lab``) records the result.
public enum Pipeline {
    /// The run spec of a checked run, once its clip's digest is known.
    public static func spec(_ checked: CheckedRun, clip: ClipIdentity) -> RunSpec {
        RunSpec(experiment: checked.experiment, label: checked.label, axesJSON: checked.axesJSON, clip: clip,
                settings: checked.settings, input: checked.input, resolved: checked.resolved, x264Build: x264Version,
                measurementVersion: measurementVersion)
    }

    /// Refuses what x264's CLI would encode differently from the lab: full-range y4m input.
    static func checkSupported(_ clip: Clip) throws {
        if clip.header.fullRange {
            throw LabError.data("\(clip.info.path): full-range input (XCOLORRANGE=FULL) is not supported; convert it to limited range first (ffmpeg -vf scale=out_range=tv)")
        }
    }

    /// The input stage's facts about a clip, with the timestamps stage's constant-rate plan.
    static func encoderInput(_ clip: Clip) throws -> EncoderInput {
        let i = clip.info
        var input = EncoderInput(width: i.width, height: i.height, fpsNum: i.fpsNum, fpsDen: i.fpsDen,
                                 sarWidth: i.sarWidth, sarHeight: i.sarHeight, interlacing: i.interlacing,
                                 frameTotal: i.frameCountHint ?? 0)
        if i.fpsNum > 0 && i.fpsDen > 0 {
            input.timestamps = try TimestampPlan.constantRate(fpsNum: i.fpsNum, fpsDen: i.fpsDen)
        }
        return input
    }

    /// Skips `seek` frames and returns the next one.
    /// - Throws: `.data` "no whole frame to encode" when the clip has none.
    static func firstPicture(_ clip: Clip, seek: Int) throws -> Picture {
        var first: Picture?
        repeat { first = try clip.next() } while first != nil && clip.framesRead <= seek
        guard let first else {
            throw LabError.data("\(clip.info.path): no whole frame to encode\(seek > 0 ? " after skipping \(seek) (--seek)" : "")\(clip.truncatedBytes.map { " (\($0) bytes of a partial frame)" } ?? "")")
        }
        return first
    }

    /// Runs every stage of `spec`, writing the run's files into `folder` (which must exist and be empty).
    /// - Parameter warn: called with each warning as it arises (stderr for the CLI).
    /// - Throws: the stage's error: `.data` for a clip damaged past its first frame, `.software` when the stream
    ///   contradicts x264 or the decodes disagree, `.cantCreate`/`.ioError` for output, `.interrupted`.
    public static func execute(_ spec: RunSpec, in folder: String, warn: (String) -> Void) throws -> RunResult {
        let createdAt = Date()
        let settings = spec.settings
        // Input.
        let clip = try Clip(path: spec.clip.path)
        try checkSupported(clip)
        let input = spec.input
        guard clip.info.width == input.width, clip.info.height == input.height,
              clip.info.fpsNum == input.fpsNum, clip.info.fpsDen == input.fpsDen else {
            throw LabError.data("\(spec.clip.path): changed since it was checked (\(clip.info.width)x\(clip.info.height) at \(clip.info.fpsNum)/\(clip.info.fpsDen))")
        }
        // Timestamps.
        let plan = try input.timestamps ?? TimestampPlan.constantRate(fpsNum: input.fpsNum, fpsDen: input.fpsDen)
        // Encode.
        let session = try X264Session(settings: settings, input: input)
        var warnings = session.takeWarnings().map { "x264: \($0)" }
        warnings.forEach(warn)
        // Output.
        let streamPath = "\(folder)/stream.264"
        let out = try OutputFile(streamPath)
        var frames: [EncodedFrame] = []
        func keep(_ frame: EncodedFrame?) throws {
            guard var frame else { return }
            for nal in frame.nals { try out.write(nal.bytes) }
            frame.nals = []
            frames.append(frame)
        }
        var index = 0
        var next: Picture? = try firstPicture(clip, seek: settings.seek ?? 0)
        while settings.frames.map({ index < $0 }) ?? true, let picture = next {
            try Interruption.check()
            try keep(try session.encode(plan.stamp(picture, index: index)))
            index += 1
            // --frames N reads no frame after the Nth.
            next = settings.frames.map({ index < $0 }) ?? true ? try clip.next() : nil
        }
        while session.delayedFrames > 0 {
            try Interruption.check()
            try keep(try session.encode(nil))
        }
        try out.close()
        if let partial = clip.truncatedBytes {
            let w = "\(spec.clip.path): \(partial) bytes after the last whole frame do not make a frame (FRAME line + \(clip.header.pictureBytes) picture bytes); encoded the \(clip.framesRead) whole frames"
            warn(w)
            warnings.append(w)
        }
        for w in clip.warnings {
            warn(w)
            warnings.append(w)
        }
        warnings += session.takeWarnings().map { "x264: \($0)" }
        guard !frames.isEmpty else { throw LabError.data("\(spec.clip.path): no whole frame to encode") }
        let r = session.resolved
        // Verify.
        let (verification, decoded) = try VerifyStage.run(frames: frames, resolved: r, settings: settings,
                                                          clipPath: spec.clip.path, input: input, inputFrames: index,
                                                          folder: folder)
        // The lab's own quality per frame (what the store records); one warning when x264's report differs from it.
        let qualities = FrameQuality.measure(frames: frames, decoded: decoded, width: input.width, height: input.height)
        let measured = zip(frames, qualities).compactMap { f, q in q.map { (displayIndex: f.displayIndex, quality: $0) } }
        if let w = FrameQuality.warning(measured) { warnings.append(w) }
        return RunResult(spec: spec, folder: folder, frames: frames, inputFrames: index, truncatedBytes: clip.truncatedBytes,
                         warnings: warnings, resolved: r, verification: verification, decoded: decoded,
                         duration: try plan.duration(frames: index), settingsJSON: settingsJSON(spec, resolved: r, plan: plan),
                         crop: clip.info.cropDescription, ffmpegVersion: clip.info.ffmpegVersion, createdAt: createdAt)
    }

    /// The structured settings of `runs.settings` (README, "Database schema"): the settings as given and resolved,
    /// the grid's axes and values, x264's resolved parameters with each value's provenance, and the timestamps plan.
    static func settingsJSON(_ spec: RunSpec, resolved r: ResolvedParameters?, plan: TimestampPlan?) -> String {
        var object = spec.settings.jsonObject
        object["label"] = spec.label
        object["axes"] = (try? JSONSerialization.jsonObject(with: Data(spec.axesJSON.utf8), options: [.fragmentsAllowed])) ?? [String: Any]()
        if let r {
            object["resolved"] = r.jsonObject
            object["provenance"] = r.provenance
            object["x264_options"] = r.optionsString
        }
        if let plan { object["timestamps"] = plan.jsonObject }
        return JSON.string(object)
    }
}
