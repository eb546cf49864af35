import Foundation

/// What one finished run produced.
public struct RunOutcome: Sendable {
    public var runID: Int64
    public var clip: String
    public var label: String
    public var frames: Int
    public var bytes: Int
    /// bytes * 8 / duration / 1000.
    public var kbps: Double
    /// Mean of the per-frame psnr_avg (x264's "PSNR Mean ... Avg"), nil without PSNR.
    public var meanPSNR: Double?
    public var streamPath: String
    public var warnings: [String]
    public var rcMode: String
}

/// Runs encodes end to end: clip → x264 session → stream file and store → plots. One run = one `runs` row.
public final class Lab {
    public let store: LabStore
    /// Folder for run outputs (`run-<id>/stream.264` and its plots).
    public let outDirectory: String
    /// The run being encoded, if any (marked `failed` when the process is interrupted).
    public private(set) var currentRun: Int64?
    /// Where warnings are reported as they happen (stderr for the CLI).
    public var warn: (String) -> Void = { FileHandle.standardError.write(Data("warning: \($0)\n".utf8)) }

    /// - Throws: `.noInput` when the database cannot be opened; `.software` when the output folder cannot be made.
    public init(databasePath: String, outDirectory: String) throws {
        do { try FileManager.default.createDirectory(atPath: outDirectory, withIntermediateDirectories: true) } catch {
            throw LabError.software("\(outDirectory): cannot create output folder: \(error.localizedDescription)")
        }
        store = try LabStore(path: databasePath)
        self.outDirectory = outDirectory
    }

    private static func input(for clip: Clip) -> EncoderInput {
        let i = clip.info
        return EncoderInput(width: i.width, height: i.height, fpsNum: i.fpsNum, fpsDen: i.fpsDen, sarWidth: i.sarWidth,
                            sarHeight: i.sarHeight, interlacing: i.interlacing, frameTotal: i.frameCountHint ?? 0)
    }

    /// Checks that each clip opens and has a first frame, and that each run's settings are accepted by x264,
    /// before anything is recorded. (A frame damaged later in a clip is found when it is read: that run fails.)
    /// - Throws: the first problem found, naming the clip or setting.
    public static func validate(_ runs: [Experiment.Run]) throws {
        var inputs: [String: EncoderInput] = [:]
        for run in runs {
            let input: EncoderInput
            if let known = inputs[run.clip] { input = known } else {
                let clip = try Clip(path: run.clip)
                try checkSupported(clip)
                guard try clip.next() != nil else { throw LabError.data("\(run.clip): no whole frame to encode") }
                input = Self.input(for: clip)
                inputs[run.clip] = input
            }
            do {
                try X264Session.validate(try run.settings.resolved(), input: input)
            } catch let e as LabError where !run.label.isEmpty {
                throw LabError(e.kind, "run '\(run.label)': \(e.message)")
            }
        }
    }

    /// Refuses what x264's CLI would encode differently from the lab: full-range y4m input.
    static func checkSupported(_ clip: Clip) throws {
        if clip.header.fullRange {
            throw LabError.data("\(clip.info.path): full-range input (XCOLORRANGE=FULL) is not supported; convert it to limited range first (ffmpeg -vf scale=out_range=tv)")
        }
    }

    /// Encodes one clip with one set of settings, records it, and draws its plots.
    ///
    /// The run is written `running` once the clip and encoder have opened; its frames and `done` land in one
    /// transaction at the end; on any error after that it is marked `failed` (with no frames) and the error is
    /// rethrown.
    /// - Throws: `LabError` for bad input or settings (nothing recorded), or for a failure mid-run (run `failed`).
    public func run(experiment: String, clipPath: String, settings raw: EncodeSettings, label: String = "") throws -> RunOutcome {
        let settings = try raw.resolved()
        let clip = try Clip(path: clipPath)
        try Self.checkSupported(clip)
        let input = Self.input(for: clip)
        let session = try X264Session(settings: settings, input: input)
        // x264's warnings about the settings (a VBV ignored, a rate assumed) are part of the run's record.
        var warnings = session.takeWarnings().map { "x264: \($0)" }
        warnings.forEach(warn)
        // The first picture is read before the run is recorded, so an input without one records nothing.
        let seek = settings.seek ?? 0
        var first: Picture?
        repeat { first = try clip.next() } while first != nil && clip.framesRead <= seek
        guard let firstPicture = first else {
            throw LabError.data("\(clipPath): no whole frame to encode\(seek > 0 ? " after skipping \(seek) (--seek)" : "")\(clip.truncatedBytes.map { " (\($0) bytes of a partial frame)" } ?? "")")
        }
        var settingsObject = settings.jsonObject
        settingsObject["label"] = label
        let runID = try store.beginRun(.init(
            experiment: experiment, clip: clipPath, settingsJSON: JSON.string(settingsObject),
            crop: clip.info.cropDescription, ffmpegVersion: clip.info.ffmpegVersion,
            width: input.width, height: input.height, fpsNum: input.fpsNum, fpsDen: input.fpsDen))
        let runDir = "\(outDirectory)/run-\(runID)"
        let streamPath = "\(runDir)/stream.264"
        // Run folders are named by run_id, which is per database: never write into another database's folder.
        if FileManager.default.fileExists(atPath: runDir) {
            try? store.forgetRun(runID)
            throw LabError.usage("\(runDir) already exists (from another database?): give this database its own --out")
        }
        currentRun = runID
        defer { currentRun = nil }
        let outcome: RunOutcome
        let target: Double?
        let resolved: ResolvedParameters
        do {
            try FileManager.default.createDirectory(atPath: runDir, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: streamPath, contents: nil),
                  let out = FileHandle(forWritingAtPath: streamPath) else {
                throw LabError.software("\(streamPath): cannot create stream file")
            }
            defer { try? out.close() }
            var frames: [EncodedFrame] = []
            func keep(_ frame: EncodedFrame?) throws {
                guard var frame else { return }
                for nal in frame.nals { try out.write(contentsOf: nal.bytes) }
                frame.nals = []
                frames.append(frame)
            }
            var index = 0
            var next: Picture? = firstPicture
            while settings.frames.map({ index < $0 }) ?? true, let picture = next {
                try Interruption.check()
                try keep(try session.encode(picture, pts: Int64(index), displayIndex: index))
                index += 1
                next = try clip.next()
            }
            while session.delayedFrames > 0 {
                try keep(try session.encode(nil, pts: 0, displayIndex: 0))
            }
            if let partial = clip.truncatedBytes {
                let w = "\(clipPath): \(partial) bytes after the last whole frame do not make a frame (FRAME line + \(clip.header.pictureBytes) picture bytes); encoded the \(clip.framesRead) whole frames"
                warn(w)
                warnings.append(w)
            }
            warnings += session.takeWarnings().map { "x264: \($0)" }
            guard !frames.isEmpty else { throw LabError.data("\(clipPath): no whole frame to encode") }
            let r = session.resolved
            var resolvedSettings = settingsObject
            resolvedSettings["resolved"] = r.jsonObject
            let duration = Double(index) * Double(r.fpsDen) / Double(r.fpsNum)
            try out.synchronize()
            let (verification, decoded) = try verify(frames: frames, resolved: r, settings: settings, clipPath: clipPath,
                                                     input: input, inputFrames: index, runDir: runDir, streamPath: streamPath)
            if let disagreement = decoded.first(where: { !$0.matchesX264 && $0.source == "stream" }) {
                let w = "\(streamPath): x264's PSNR of display frame \(disagreement.displayIndex) differs from FFmpeg's decode of the stream (see decoded_frames.matches_x264)"
                warnings.append(w)
            }
            try store.finishRun(runID, .init(
                frames: frames, timebaseNum: r.timebaseNum, timebaseDen: r.timebaseDen, durationSeconds: duration,
                streamPath: streamPath, width: input.width, height: input.height, inputFrames: index,
                truncatedBytes: clip.truncatedBytes, warnings: warnings, settingsJSON: JSON.string(resolvedSettings),
                verification: verification, decoded: decoded))
            outcome = RunOutcome(runID: runID, clip: clipPath, label: label, frames: frames.count,
                                 bytes: frames.reduce(0) { $0 + $1.sizeBytes },
                                 kbps: Double(frames.reduce(0) { $0 + $1.sizeBytes }) * 8 / 1000 / duration,
                                 meanPSNR: Self.mean(frames.compactMap(\.psnrAvg)), streamPath: streamPath,
                                 warnings: warnings, rcMode: settings.rc?.rawValue ?? r.rcMethod)
            target = r.rcMethod == "abr" ? Double(r.bitrateKbps) : nil
            resolved = r
        } catch {
            try? store.failRun(runID, error: (error as? LabError)?.message ?? error.localizedDescription)
            throw error
        }
        // The run is done and stored; its plots are drawn from the store.
        let title = "run \(runID): \((clipPath as NSString).lastPathComponent) \(label.isEmpty ? settings.x264Arguments.joined(separator: " ") : label)"
        try Plots.writeRunPlots(frames: try store.frames(run: runID), timebaseNum: resolved.timebaseNum,
                                timebaseDen: resolved.timebaseDen, fpsNum: resolved.fpsNum, fpsDen: resolved.fpsDen,
                                targetKbps: target,
                                maxrateKbps: resolved.vbvMaxrateKbps > 0 && Double(resolved.vbvMaxrateKbps) != target ? Double(resolved.vbvMaxrateKbps) : nil,
                                title: title, dir: runDir)
        return outcome
    }

    /// Verify stage: parses the stream back and checks it, round-trips it through packets (writing
    /// `packets.bin` and `from-packets.264` beside it), and decodes both streams with FFmpeg's decoder.
    /// - Throws: `.software` when the stream contradicts x264's report, the packet round trip changes it, or
    ///   the two decodes differ: each means the lab cannot vouch for the run.
    private func verify(frames: [EncodedFrame], resolved r: ResolvedParameters, settings: EncodeSettings, clipPath: String,
                        input: EncoderInput, inputFrames: Int, runDir: String, streamPath: String)
        throws -> (StreamVerification, [LabStore.DecodedFrameRecord]) {
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: streamPath)))
        let verification = try StreamCheck.verify(stream: stream, frames: frames, resolved: r, profile: settings.profile)
        if let bad = verification.failures.first {
            throw LabError.software("\(streamPath): the stream disagrees with x264's report: \(bad.name) expected \(bad.expected), found \(bad.actual)")
        }
        let (packets, rebuilt) = try StreamCheck.packetRoundTrip(verification.accessUnits, frames: frames,
                                                                 timebaseNum: r.timebaseNum, timebaseDen: r.timebaseDen)
        let packetsPath = "\(runDir)/packets.bin", rebuiltPath = "\(runDir)/from-packets.264"
        try Data(packets).write(to: URL(fileURLWithPath: packetsPath))
        try Data(rebuilt).write(to: URL(fileURLWithPath: rebuiltPath))
        let decodes = try IndependentDecode.measure(streams: [streamPath, rebuiltPath], source: clipPath, width: input.width,
                                                    height: input.height, seek: settings.seek ?? 0, frames: inputFrames)
        let (fromStream, fromPackets) = (decodes[0], decodes[1])
        guard fromStream.count == frames.count else {
            throw LabError.software("\(streamPath): FFmpeg decoded \(fromStream.count) pictures, x264 reported \(frames.count)")
        }
        guard fromStream == fromPackets else {
            throw LabError.software("\(rebuiltPath): the stream rebuilt from packets decodes differently from \(streamPath)")
        }
        // x264's squared error per display index, recovered from its PSNR (zero when it measured none: --qp 0).
        let luma = input.width * input.height
        var expected = [Int: PlaneErrors]()
        for f in frames {
            if let y = f.psnrY, let u = f.psnrU, let v = f.psnrV {
                expected[f.displayIndex] = PlaneErrors(sseY: IndependentDecode.sse(fromPSNR: y, samples: luma),
                                                       sseU: IndependentDecode.sse(fromPSNR: u, samples: luma / 4),
                                                       sseV: IndependentDecode.sse(fromPSNR: v, samples: luma / 4))
            } else {
                expected[f.displayIndex] = PlaneErrors(sseY: 0, sseU: 0, sseV: 0)
            }
        }
        var records: [LabStore.DecodedFrameRecord] = []
        for (source, list) in [("stream", fromStream), ("packets", fromPackets)] {
            for (k, e) in list.enumerated() {
                records.append(.init(source: source, displayIndex: k, errors: e, matchesX264: expected[k] == e))
            }
        }
        return (verification, records)
    }

    static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// Runs every run of an experiment in order, after validating them all, then draws the experiment's
    /// rate-distortion plot (`rd.png/svg` in the output folder).
    /// - Parameter progress: called after each run.
    public func run(_ experiment: Experiment, progress: (RunOutcome) -> Void = { _ in }) throws -> [RunOutcome] {
        try Self.validate(experiment.runs)
        var outcomes: [RunOutcome] = []
        for run in experiment.runs {
            let outcome = try self.run(experiment: experiment.name, clipPath: run.clip, settings: run.settings, label: run.label)
            outcomes.append(outcome)
            progress(outcome)
        }
        let points = outcomes.compactMap { o -> Plots.RDPoint? in
            guard let psnr = o.meanPSNR else { return nil }
            // One line per clip and setting apart from the rate: the grid label without its qp/crf/bitrate.
            let others = o.label.split(separator: " ").filter { !["qp=", "crf=", "bitrate=", "rc="].contains(where: $0.hasPrefix) }
            let mode = ([o.rcMode] + others.map(String.init)).joined(separator: " ")
            return Plots.RDPoint(clip: (o.clip as NSString).lastPathComponent, mode: mode, kbps: o.kbps, psnr: psnr)
        }
        try Plots.writeExperimentPlot(points: points, title: "\(experiment.name): bitrate against PSNR", dir: outDirectory)
        return outcomes
    }
}
