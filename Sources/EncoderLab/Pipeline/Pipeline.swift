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
    /// The keyframe rule the timestamps stage's keyframe-forcing step keeps (``KeyframeForcing``), nil without one.
    public var keyframeRule: KeyframeRule?
}

/// What one run produced, before the store's writer records it: a `Sendable` value.
public struct RunResult: Sendable {
    public var spec: RunSpec
    /// The folder the run's files were written to (a temporary name until the writer moves it into place).
    public var folder: String
    /// Warnings in the order they arose (x264's, the clip's, the verification's).
    public var warnings: [String]
    /// What the encoding session's x264 settled on.
    public var resolved: ResolvedParameters
    /// What the run measured, computed once here and written by the store as given.
    public var measured: RunMeasurements
    /// `runs.crop` and `runs.ffmpeg_version`.
    public var crop: String?
    public var ffmpegVersion: String?
    public var createdAt: Date
}

/// The run's stages, in order: input (the clip), timestamps (each picture's PTS and forced type), encode (x264),
/// output (the stream and its companions in the run's folder), verify (the stream parsed back and decoded
/// independently). ``Runner/check(_:experiment:)`` runs the first of them far enough to refuse bad input before
/// anything is written; ``execute(_:in:matroska:quality:warn:)`` runs them all. Only the store's writer (``Runner``) records the result.
public enum Pipeline {
    /// The run spec of a checked run, once its clip's digest is known.
    public static func spec(_ checked: CheckedRun, clip: ClipIdentity) -> RunSpec {
        RunSpec(experiment: checked.experiment, label: checked.label, axesJSON: checked.axesJSON, clip: clip,
                settings: checked.settings, input: checked.input, keyframeRule: checked.keyframeRule, resolved: checked.resolved, x264Build: x264Version,
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
        input.timestamps = try TimestampPlan.nominal(fpsNum: i.fpsNum, fpsDen: i.fpsDen)
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
    ///   contradicts x264, its packet round trip changes it or libavcodec's decode fails, `.cantCreate`/`.ioError` for output, `.interrupted`.
    /// - Parameter matroska: also write `stream.mkv` with the PTS x264 returned (``Matroska``); times a container
    ///   cannot hold (decreasing, negative) leave it out with a warning, the run is still done.
    /// - Parameter quality: `--metrics`: each decoded picture (display order) scored by libvmaf against the source
    ///   picture it was measured against (``LibVMAF``), the scores in ``RunMeasurements/perceptual``; the run fails
    ///   (65) unless libvmaf scored exactly the displayed frames.
    public static func execute(_ spec: RunSpec, in folder: String, matroska: Bool = false, quality: QualityRequest? = nil,
                               warn: (String) -> Void) throws -> RunResult {
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
        var stamper = plan.makeStamper()
        var inputPTS: [Int64] = []
        // Encode.
        let session = try makeEncoder(settings, input: input)
        let encoderName = session.name.rawValue
        // The adjustments the settings made (VideoToolbox's properties resolved onto x264), said once per run.
        var warnings = settings.adjustments + session.takeWarnings().map { "\(encoderName): \($0)" }
        if let w = input.timingWarning { warnings.append(w) }
        warnings.forEach(warn)
        // The rate schedule: each change handed to x264 with the picture it lands on (``RateScheduleRun``).
        let opened = session.resolved
        var rateSchedule = try settings.rateSchedule.map {
            try RateScheduleRun($0, opened: RateChangeRules.Opened(
                rcMethod: opened.rcMethod, bitrateKbps: opened.bitrateKbps, vbvMaxrateKbps: opened.vbvMaxrateKbps,
                vbvBufsizeKbit: opened.vbvBufsizeKbit, crf: opened.crf, nalHrd: opened.nalHrd, frameRate: opened.frameRate),
                vtCompat: settings.videoToolbox.compat)
        }
        // Output.
        let streamPath = "\(folder)/stream.264"
        let out = try OutputFile(streamPath)
        var frames: [EncodedFrame] = []
        // Pictures the encoder dropped (OpenH264's frame skip): stored, counted, handed to the verify stage as dropped.
        var skipped: [SkippedFrame] = []
        // Each frame's bytes without start codes (DataRateLimits counts NAL units alone, so raw and MP4 count alike).
        var payloadBytes: [Int] = []
        // --metrics: libvmaf's ffmpeg, started now and fed the pairs by the verify stage's decoder as it measures
        // them, scoring while x264 encodes (its logs in the run's folder, removed after).
        if let quality { try QualityMetric.check(quality.metrics, width: input.width, height: input.height, clip: spec.clip.path) }
        let pairs = try quality.map {
            try PairedPictures(inside: folder, width: input.width, height: input.height, metrics: $0.metrics,
                               ffmpeg: $0.ffmpeg, threads: session.resolved.threads)
        }
        defer { pairs?.remove() }
        // Verify, as the stream is written: each access unit parsed back, round-tripped through packets and decoded.
        let verify = try VerifyStage(folder: folder, width: input.width, height: input.height,
                                     timebaseNum: session.resolved.timebaseNum, timebaseDen: session.resolved.timebaseDen,
                                     mode: settings.verify, background: session.resolved.threads > 1, pairs: pairs)
        if session.name == .openh264 { verify.measureSkippedPictures() }
        func keep(_ frame: EncodedFrame?) throws {
            guard var frame else { return }
            payloadBytes.append(frame.nals.reduce(0) { $0 + $1.bytes.count - Self.startCodeLength($1.bytes) })
            var bytes: [UInt8] = []
            bytes.reserveCapacity(frame.sizeBytes)
            for nal in frame.nals { bytes += nal.bytes }
            try out.write(bytes)
            frame.nals = []
            try verify.written(frame, bytes: bytes)
            frames.append(frame)
        }
        var index = 0
        // The keyframe rule (VideoToolbox's limits), kept by the timestamps stage's keyframe-forcing step
        // (``KeyframeForcing``), which needs the next frame's PTS: frames are read one ahead.
        let rule = spec.keyframeRule
        let nominalTicks = max(1, Int64(clamping: (try plan.frameTicks).roundedToNearest))
        var forcing = KeyframeForcing(rule: rule, nominalFrameTicks: nominalTicks)
        var current: TimedPicture? = try plan.stamp(try firstPicture(clip, seek: settings.seek ?? 0), index: 0, stamper: &stamper)
        while var timed = current {
            try Interruption.check()
            inputPTS.append(timed.pts)
            // --frames N reads no frame after the Nth.
            let following = settings.frames.map({ index + 1 < $0 }) ?? true ? try clip.next() : nil
            let next = try following.map { try plan.stamp($0, index: index + 1, stamper: &stamper) }
            try forcing.force(&timed, nextPTS: next?.pts)
            if var schedule = rateSchedule {
                let since = try Rational(timed.pts - (inputPTS.first ?? timed.pts)) * opened.timebase
                if let targets = try schedule.due(frame: timed.index, secondsFromFirst: since) { try session.setRateTargets(targets) }
                rateSchedule = schedule
            }
            let frame = try session.encode(timed)
            // The source picture goes to the verify stage after the encoder has seen it, unless it dropped it: the
            // decode's pictures pair with the coded ones in display order.
            let dropped = session.takeSkipped()
            skipped += dropped
            if dropped.contains(where: { $0.inputIndex == timed.index }) {
                try verify.skipped(timed.picture, inputIndex: timed.index)
            } else {
                try verify.source(timed.picture)
            }
            try keep(frame)
            index += 1
            current = next
        }
        // The clip is read: it must still be the file whose digest the run's key holds.
        try spec.clip.requireUnchanged()
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
        let x264Warnings = session.takeWarnings()
        for w in collapsed(x264Warnings).map({ "\(encoderName): \($0)" }) {
            warn(w)
            warnings.append(w)
        }
        // Each change with the frame it took effect on; a change x264 did not apply is said, never dropped.
        let rateChanges = rateSchedule.map { $0.finish(frames: index, x264Warnings: x264Warnings) }
        for w in rateChanges?.warnings ?? [] {
            warn(w)
            warnings.append(w)
        }
        guard !frames.isEmpty else { throw LabError.data("\(spec.clip.path): no whole frame to encode") }
        let r = session.resolved
        // The encoder's delay per frame, checked against its own bound and MaxFrameDelayCount.
        let delay = EncoderDelay(frames: frames, maximumDelayedFrames: session.maximumDelayedFrames,
                                 limit: settings.videoToolbox.maxFrameDelayCount)
        for w in delay?.warnings ?? [] {
            warn(w)
            warnings.append(w)
        }
        // Timestamps, as handed in and as returned.
        let analysis = try TimestampAnalysis.analyse(
            inputPTS: inputPTS, frames: frames.map { .init(pts: $0.pts, dts: $0.dts, sizeBytes: $0.sizeBytes) }, timebase: r.timebase,
            lastDuration: stamper.flatMap { s in var s = s; return s.knownDuration(inputPTS.count - 1) },
            nominalFrameTicks: nominalTicks, targetKbps: r.rcMethod == "abr" && r.bitrateKbps > 0 ? Double(r.bitrateKbps) : nil,
            warnings: x264Warnings)
        if matroska {
            // The PTS x264 returned, in display order, in µs.
            var pts = [Int64](repeating: 0, count: index)
            for f in frames where pts.indices.contains(f.displayIndex) { pts[f.displayIndex] = try r.timebase.microseconds(ticks: f.pts) }
            do {
                // x264's frame count, not the stream read whole again: the verify stage (still at work on its own
                // thread when x264 has threads) fails the run below unless the stream has one access unit per x264
                // frame, so a stream.mkv made from a count the stream contradicts is never kept (its folder goes).
                try Matroska.write(stream: streamPath, ptsMicroseconds: pts, to: "\(folder)/stream.mkv", knownFrames: frames.count)
            } catch let e as LabError where e.kind == .data {
                let w = Matroska.notWrittenWarning(e)
                warn(w)
                warnings.append(w)
            }
        }
        // Verify.
        let (verification, decoded) = try verify.finish(frames: frames, resolved: r, profile: settings.profile,
                                                        width: input.width, height: input.height)
        // The QP a decoder shows: each decoded picture's mean macroblock QP (libavcodec's AVVideoEncParams), which is
        // x264's own per-frame QP= value (docs/openh264.md, "QP"). OpenH264 reports no QP: its runs store this one,
        // rounded to 2 decimals as x264 rounds its own (``MacroblockQP/x264Rounded``). x264's runs keep x264's; a frame
        // where x264's printed value cannot be a 2-decimal rounding of the decoded mean is said.
        var qpKnown = session.name == .x264
        if settings.verify == .full {
            let order = frames.map(\.displayIndex).sorted()
            var decodedQP: [Int: MacroblockQP] = [:]
            for (k, q) in verify.decodedMeanQP.enumerated() where k < order.count {
                if let q { decodedQP[order[k]] = q }
            }
            if session.name == .openh264, decodedQP.count == frames.count {
                for k in frames.indices { frames[k].qp = decodedQP[frames[k].displayIndex]?.x264Rounded ?? 0 }
                qpKnown = true
            } else if session.name == .x264 {
                let differ = frames.filter { f in decodedQP[f.displayIndex].map { !$0.agrees(withPrinted: f.qp) } ?? false }
                if let f = differ.first, let d = decodedQP[f.displayIndex] {
                    let mean = String(format: "%.4f", d.mean)
                    let w = "x264's QP differs from the decoded mean macroblock QP in \(differ.count) frames (first: display index \(f.displayIndex), x264 \(f.qp), decoded \(mean) = \(d.total) / \(d.blocks) macroblocks); frames.qp keeps x264's"
                    warn(w)
                    warnings.append(w)
                }
            }
        }
        // The run's per-frame measurements, computed once (what the store records as given); one warning when
        // x264's report differs from the lab's quality.
        let perFrame = RunMeasurements.perFrame(frames: frames, decoded: decoded, width: input.width, height: input.height,
                                                unverified: settings.verify == .none, encoderReportsPSNR: session.name == .x264)
        let measured = zip(frames, perFrame.quality).compactMap { f, q in q.map { (displayIndex: f.displayIndex, quality: $0) } }
        if let w = FrameQuality.warning(measured) {
            warn(w)
            warnings.append(w)
        }
        // The keyframe rule: the keyframes it expects, counted from every IDR in the stream, against the stream's.
        var keyframes: KeyframeAnalysis?
        if let rule {
            let actual = frames.filter { $0.type == .idr }.map(\.displayIndex).sorted()
            var ruleWarnings: [String] = []
            do {
                let expected = try rule.expectedKeyframes(pts: inputPTS, nominalFrameTicks: nominalTicks, streamKeyframes: actual, forced: forcing.forced)
                let end = try KeyframeRule.endPTS(lastPTS: inputPTS.max() ?? 0, nominalFrameTicks: nominalTicks)
                let analysis = KeyframeAnalysis(rule: rule, expected: expected, actual: actual, forced: forcing.forced,
                                                check: try rule.violations(keyframes: actual, pts: inputPTS, endPTS: end))
                keyframes = analysis
                if let w = analysis.mismatchWarning { ruleWarnings.append(w) }
            } catch let e as LabError where e.kind == .data {
                let what = forcing.forced.isEmpty ? "no IDR forced" : "IDRs forced at \(forcing.forced.map(String.init).joined(separator: ", ")) (display order)"
                let stop = forcing.stopped.map { "; none forced from the first PTS that is not after its predecessor (\($0))" } ?? ""
                ruleWarnings.append("keyframe rule not checked: \(e.message); \(what)\(stop)")
            }
            for w in ruleWarnings {
                warn(w)
                warnings.append(w)
            }
        }
        // DataRateLimits: every window of each pair's length over decode time.
        let limits = try DataRateLimits.given(in: settings)
        let windows = try limits.map {
            try $0.check(dtsTicks: frames.map(\.dts), sizesBytes: payloadBytes, timebase: r.timebase)
        }
        var measurements = RunMeasurements(
            frames: frames, quality: perFrame.quality, decoded: perFrame.decoded, timebaseNum: r.timebaseNum,
            timebaseDen: r.timebaseDen, durationSeconds: try (analysis.span ?? plan.duration(frames: index)).approximateValue,
            inputFrames: index, truncatedBytes: clip.truncatedBytes,
            settingsJSON: settingsJSON(spec, resolved: r, plan: plan, encoder: (session.name, session.version), skipped: skipped.count),
            verification: verification)
        measurements.inputPTS = inputPTS
        // Each dropped picture as a receiver sees it: the previous decoded picture against its source.
        let held = Dictionary(verify.skippedErrors.map { ($0.inputIndex, $0.errors) }, uniquingKeysWith: { a, _ in a })
        for k in skipped.indices { skipped[k].held = held[skipped[k].inputIndex] ?? nil }
        measurements.skipped = skipped
        // OpenH264 gives no per-frame QP (``OpenH264Session``): its frames.qp is the decoded mean, NULL without the decode.
        measurements.qpKnown = qpKnown
        measurements.timestampAnalysis = analysis
        measurements.timestampSource = (input.timestamps?.source ?? .constantRate).rawValue
        measurements.keyframes = keyframes
        measurements.dataRateWindows = windows
        measurements.dataRateLimitsVTCompat = limits != nil && settings.videoToolbox.compat
        measurements.encoderDelay = delay
        if let pairs {
            // Every input picture scored, or the run fails: each coded one against its source, each dropped one as the
            // picture a receiver shows in its place (the previous decoded one) against its source.
            let unscored = verify.skippedErrors.filter { $0.errors == nil }.map(\.inputIndex)
            let scores = try LibVMAF.scoreInputs(pairs, inputs: index, unscored: unscored)
            for w in [LibVMAF.unscoredWarning(unscored), scores.missingWarning()].compactMap({ $0 }) {
                warn(w)
                warnings.append(w)
            }
            measurements.perceptual = scores
        }
        measurements.rateChanges = rateChanges?.records
        // The RTP stage (--rtp, --loss): the stream as packets and, with a loss model, its damaged decode.
        if let rtp = settings.rtp {
            var lossFree: [Int: Double?] = [:]
            for (f, q) in zip(frames, perFrame.quality) { lossFree[f.displayIndex] = q?.psnr.y }
            measurements.rtp = try RTPRunStage.run(settings: rtp, streamPath: streamPath, folder: folder, frames: frames, timebase: r.timebase,
                                                   lossFreePSNRY: lossFree, displayCount: index, clipPath: spec.clip.path,
                                                   seek: settings.seek ?? 0, width: input.width, height: input.height)
        }
        return RunResult(spec: spec, folder: folder, warnings: warnings, resolved: r, measured: measurements,
                         crop: clip.info.cropDescription, ffmpegVersion: clip.info.ffmpegVersion, createdAt: createdAt)
    }

    /// The length of the Annex B start code a NAL unit's bytes begin with (x264 writes 4-byte ones before parameter
    /// sets and a picture's first NAL unit, 3-byte ones elsewhere), 0 without one.
    static func startCodeLength(_ bytes: [UInt8]) -> Int {
        if bytes.count >= 4, bytes[0] == 0, bytes[1] == 0, bytes[2] == 0, bytes[3] == 1 { return 4 }
        if bytes.count >= 3, bytes[0] == 0, bytes[1] == 0, bytes[2] == 1 { return 3 }
        return 0
    }

    /// Repeated lines as one, with their count: x264 warns once per frame about a non-increasing PTS.
    static func collapsed(_ lines: [String]) -> [String] {
        var counts: [String: Int] = [:], order: [String] = []
        for l in lines {
            if counts[l] == nil { order.append(l) }
            counts[l, default: 0] += 1
        }
        return order.map { counts[$0]! > 1 ? "\($0) (\(counts[$0]!) times)" : $0 }
    }

    /// The structured settings of `runs.settings` (docs/schema.md): the settings as given and resolved,
    /// the grid's axes and values, x264's resolved parameters with each value's provenance, and the timestamps plan.
    /// With `encoder` other than x264: `encoder` {`name`, `version` (OpenH264's WelsGetCodecVersion)}, `skipped_frames`
    /// (the count of pictures it dropped) and `openh264_params` (every settled SEncParamExt field) in place of `x264_options`.
    static func settingsJSON(_ spec: RunSpec, resolved r: ResolvedParameters?, plan: TimestampPlan?,
                             encoder: (name: EncoderName, version: String)? = nil, skipped: Int = 0) -> String {
        var object = spec.settings.jsonObject
        object["label"] = spec.label
        object["axes"] = (try? JSONSerialization.jsonObject(with: Data(spec.axesJSON.utf8), options: [.fragmentsAllowed])) ?? [String: Any]()
        if let r {
            var resolved = r.jsonObject
            // An unverified run (--verify none: x264's PSNR stored, no decode) says so; absent means verified.
            if spec.settings.verify != .full { resolved["verify"] = spec.settings.verify.rawValue }
            object["resolved"] = resolved
            object["provenance"] = r.provenance
            if let e = encoder, e.name != .x264 {
                object["openh264_params"] = r.optionsString
            } else {
                object["x264_options"] = r.optionsString
            }
        }
        if let e = encoder, e.name != .x264 {
            object["encoder"] = ["name": e.name.rawValue, "version": e.version]
            object["skipped_frames"] = skipped
        }
        if let plan { object["timestamps"] = plan.jsonObject }
        return JSON.string(object)
    }
}
