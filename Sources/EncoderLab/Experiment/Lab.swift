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

/// Runs encodes end to end: clip → x264 session → stream file, verification and plots in a temporary folder →
/// one store transaction that records the run and moves its folder into place. One run = one `runs` row, written
/// once.
public final class Lab {
    public let store: LabStore
    /// Folder for run outputs (`run-<id>/stream.264` and its plots).
    public let outDirectory: String
    /// Where warnings are reported as they happen (stderr for the CLI).
    public var warn: (String) -> Void = { FileHandle.standardError.write(Data("warning: \($0)\n".utf8)) }

    /// Opens the output folder and the database, in that order, after checking that the outside programs every
    /// run needs are there (nothing is created when one is missing).
    /// - Throws: `.software` when ffmpeg or gnuplot is missing; `.cantCreate` (73) when the output folder cannot
    ///   be created or written; the store's errors for the database.
    public init(databasePath: String, outDirectory: String) throws {
        try Self.requireTools()
        try OutputFiles.makeDirectory(outDirectory)
        try OutputFiles.checkWritable(outDirectory)
        store = try LabStore(path: databasePath)
        self.outDirectory = outDirectory
        Self.removeAbandonedFolders(in: outDirectory)
    }

    /// The outside programs every run needs: ffmpeg (the input decode and every run's verification) and gnuplot
    /// (the plots), looked up on PATH before anything is recorded.
    /// - Throws: `.software` naming the program and its Debian package.
    public static func requireTools() throws {
        _ = try Tools.require("ffmpeg", package: "ffmpeg")
        _ = try Tools.require("gnuplot", package: "gnuplot-nox")
    }

    /// The prefix of a run's folder while it is being written: `.tmp-HOST-PID-UUID`.
    static let temporaryPrefix = ".tmp-"

    /// A temporary folder name for this process: its host and process id tell a later start whether its maker is gone.
    static func temporaryName() -> String {
        "\(temporaryPrefix)\(ProcessInfo.processInfo.hostName.replacingOccurrences(of: "-", with: "_"))-\(getpid())-\(UUID().uuidString)"
    }

    /// Removes temporary run folders left by a process of this host that is gone (killed outright mid-run).
    /// Folders of live processes and of other hosts (a folder shared over a network) are left alone.
    static func removeAbandonedFolders(in dir: String) {
        let host = ProcessInfo.processInfo.hostName.replacingOccurrences(of: "-", with: "_")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where name.hasPrefix(temporaryPrefix) {
            let parts = name.dropFirst(temporaryPrefix.count).split(separator: "-", maxSplits: 2)
            guard parts.count == 3, parts[0] == host, let pid = Int32(parts[1]), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { OutputFiles.removeTree("\(dir)/\(name)") }
        }
    }

    private static func input(for clip: Clip) -> EncoderInput {
        let i = clip.info
        return EncoderInput(width: i.width, height: i.height, fpsNum: i.fpsNum, fpsDen: i.fpsDen, sarWidth: i.sarWidth,
                            sarHeight: i.sarHeight, interlacing: i.interlacing, frameTotal: i.frameCountHint ?? 0)
    }

    /// Checks that each clip opens and has a first frame, and that each run's settings are accepted by x264,
    /// before anything is recorded. (A frame damaged later in a clip is found when it is read: that run fails.)
    /// - Throws: the first problem found, naming the clip or setting; `.interrupted` at once after SIGINT/SIGTERM.
    public static func validate(_ runs: [Experiment.Run]) throws {
        var inputs: [String: EncoderInput] = [:]
        for run in runs {
            try Interruption.check()
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

    /// Encodes one clip with one set of settings, verifies it, draws its plots and records it.
    ///
    /// Everything is written under a temporary folder first; then one transaction inserts the run's row, its
    /// frames and checks, and moves the folder to `OUT/run-ID` (renameat2 RENAME_NOREPLACE: another database's
    /// folder of that name is never written into) before it commits. A run that fails after its clip and encoder
    /// opened is recorded `failed` with its error and no frames; a failure to write the output records nothing.
    /// - Throws: `LabError` for bad input or settings (nothing recorded), or for a failure mid-run.
    public func run(experiment: String, clipPath: String, settings raw: EncodeSettings, label: String = "") throws -> RunOutcome {
        let settings = try raw.resolved()
        let clip = try Clip(path: clipPath)
        try Self.checkSupported(clip)
        let input = Self.input(for: clip)
        let session = try X264Session(settings: settings, input: input)
        // x264's warnings about the settings (a VBV ignored, a rate assumed) are part of the run's record.
        var warnings = session.takeWarnings().map { "x264: \($0)" }
        warnings.forEach(warn)
        // The first picture is read before anything is written, so an input without one records nothing.
        let seek = settings.seek ?? 0
        var first: Picture?
        repeat { first = try clip.next() } while first != nil && clip.framesRead <= seek
        guard let firstPicture = first else {
            throw LabError.data("\(clipPath): no whole frame to encode\(seek > 0 ? " after skipping \(seek) (--seek)" : "")\(clip.truncatedBytes.map { " (\($0) bytes of a partial frame)" } ?? "")")
        }
        var settingsObject = settings.jsonObject
        settingsObject["label"] = label
        let start = LabStore.RunStart(
            experiment: experiment, clip: clipPath, settingsJSON: JSON.string(settingsObject),
            crop: clip.info.cropDescription, ffmpegVersion: clip.info.ffmpegVersion,
            width: input.width, height: input.height, fpsNum: input.fpsNum, fpsDen: input.fpsDen)
        let createdAt = Date()
        let temporary = "\(outDirectory)/\(Self.temporaryName())"
        try OutputFiles.makeNewDirectory(temporary)
        defer { OutputFiles.removeTree(temporary) }
        do {
            let out = try OutputFile("\(temporary)/stream.264")
            var frames: [EncodedFrame] = []
            func keep(_ frame: EncodedFrame?) throws {
                guard var frame else { return }
                for nal in frame.nals { try out.write(nal.bytes) }
                frame.nals = []
                frames.append(frame)
            }
            var index = 0
            var next: Picture? = firstPicture
            while settings.frames.map({ index < $0 }) ?? true, let picture = next {
                try Interruption.check()
                try keep(try session.encode(picture, pts: Int64(index), displayIndex: index))
                index += 1
                // --frames N reads no frame after the Nth.
                next = settings.frames.map({ index < $0 }) ?? true ? try clip.next() : nil
            }
            while session.delayedFrames > 0 {
                try Interruption.check()
                try keep(try session.encode(nil, pts: 0, displayIndex: 0))
            }
            try out.close()
            if let partial = clip.truncatedBytes {
                let w = "\(clipPath): \(partial) bytes after the last whole frame do not make a frame (FRAME line + \(clip.header.pictureBytes) picture bytes); encoded the \(clip.framesRead) whole frames"
                warn(w)
                warnings.append(w)
            }
            for w in clip.warnings {
                warn(w)
                warnings.append(w)
            }
            warnings += session.takeWarnings().map { "x264: \($0)" }
            guard !frames.isEmpty else { throw LabError.data("\(clipPath): no whole frame to encode") }
            let r = session.resolved
            var resolvedSettings = settingsObject
            resolvedSettings["resolved"] = r.jsonObject
            let duration = Double(index) * Double(r.fpsDen) / Double(r.fpsNum)
            let (verification, decoded) = try verify(frames: frames, resolved: r, settings: settings, clipPath: clipPath,
                                                     input: input, inputFrames: index, runDir: temporary,
                                                     streamPath: "\(temporary)/stream.264")
            if let disagreement = decoded.first(where: { !$0.matchesX264 && $0.source == "stream" }) {
                let w = "stream.264: x264's PSNR of display frame \(disagreement.displayIndex) differs from FFmpeg's decode of the stream (see decoded_frames.matches_x264)"
                warnings.append(w)
            }
            let outDirectory = self.outDirectory
            let finished = LabStore.RunRecord.Finished(
                frames: frames, timebaseNum: r.timebaseNum, timebaseDen: r.timebaseDen, durationSeconds: duration,
                streamPath: { "\(outDirectory)/run-\($0)/stream.264" }, inputFrames: index,
                truncatedBytes: clip.truncatedBytes, settingsJSON: JSON.string(resolvedSettings),
                verification: verification, decoded: decoded)
            // The plots are drawn from the rows the store will hold, before the run is recorded.
            let target = r.rcMethod == "abr" ? Double(r.bitrateKbps) : nil
            let title = "\((clipPath as NSString).lastPathComponent) \(label.isEmpty ? settings.x264Arguments.joined(separator: " ") : label)"
            try Plots.writeRunPlots(frames: frames.map(LabStore.FrameRow.init), timebaseNum: r.timebaseNum,
                                    timebaseDen: r.timebaseDen, fpsNum: r.fpsNum, fpsDen: r.fpsDen,
                                    targetKbps: target,
                                    maxrateKbps: r.vbvMaxrateKbps > 0 && Double(r.vbvMaxrateKbps) != target ? Double(r.vbvMaxrateKbps) : nil,
                                    title: title, dir: temporary)
            try Interruption.check()
            var finalDir: String?
            let runID: Int64
            do {
                runID = try store.recordRun(.init(start: start, createdAt: createdAt, warnings: warnings, outcome: .done(finished))) { runID in
                    let target = "\(outDirectory)/run-\(runID)"
                    // Run folders are named by run_id, which is per database: never write into another database's folder.
                    guard try OutputFiles.renameNoReplace(temporary, target) else {
                        throw LabError.usage("\(target) already exists (from another database?): give this database its own --out")
                    }
                    finalDir = target
                }
            } catch {
                // The folder was moved but the row did not commit: move it back, so it is removed with the rest.
                if let finalDir { _ = try? OutputFiles.renameNoReplace(finalDir, temporary) }
                throw error
            }
            let bytes = frames.reduce(0) { $0 + $1.sizeBytes }
            return RunOutcome(runID: runID, clip: clipPath, label: label, frames: frames.count, bytes: bytes,
                              kbps: Double(bytes) * 8 / 1000 / duration,
                              meanPSNR: Self.mean(frames.compactMap(\.psnrAvg)), streamPath: "\(finalDir ?? "")/stream.264",
                              warnings: warnings, rcMode: settings.rc?.rawValue ?? r.rcMethod)
        } catch {
            var failure = error as? LabError ?? LabError.software(error.localizedDescription)
            if let signal = Interruption.received { failure = LabError(.interrupted, "interrupted by \(signal)") }
            // Output that could not be written, a database that could not take the run, a folder that is another
            // database's: nothing is recorded. Anything else mid-run is recorded as a failed run.
            if ![.cantCreate, .ioError, .tempFail, .usage].contains(failure.kind) && store.database.damage == nil {
                _ = try? store.recordRun(.init(start: start, createdAt: createdAt, warnings: warnings,
                                               outcome: .failed(error: failure.message))) { _ in }
            }
            throw failure
        }
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

    /// Runs every run of an experiment in order, after validating them all (unless the caller already did:
    /// `enclab run` validates before it opens the database), then draws the experiment's
    /// rate-distortion plot (`rd.png/svg` in the output folder).
    /// - Parameter progress: called after each run.
    public func run(_ experiment: Experiment, validated: Bool = false, progress: (RunOutcome) -> Void = { _ in }) throws -> [RunOutcome] {
        if !validated { try Self.validate(experiment.runs) }
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
