import Foundation
import H264

/// The verify stage (README, "How every run is verified").
enum VerifyStage {
    /// Verify stage: parses the stream back and checks it, round-trips it through packets (writing
    /// `packets.bin` and `from-packets.264` beside it), and decodes both streams with FFmpeg's decoder.
    /// - Throws: `.software` when the stream contradicts x264's report, the packet round trip changes it, or
    ///   the two decodes differ: each means the lab cannot vouch for the run.
    static func run(frames: [EncodedFrame], resolved r: ResolvedParameters, settings: EncodeSettings, clipPath: String,
                    input: EncoderInput, inputFrames: Int, folder runDir: String)
        throws -> (StreamVerification, [LabStore.DecodedFrameRecord]) {
        let streamPath = "\(runDir)/stream.264"
        let stream = [UInt8](try Data(contentsOf: Paths.fileURL(streamPath)))
        let verification = try StreamCheck.verify(stream: stream, frames: frames, resolved: r, profile: settings.profile)
        if let bad = verification.failures.first {
            throw LabError.software("\(streamPath): the stream disagrees with x264's report: \(bad.name) expected \(bad.expected), found \(bad.actual)")
        }
        let (packets, rebuilt) = try StreamCheck.packetRoundTrip(verification.accessUnits, frames: frames,
                                                                 timebaseNum: r.timebaseNum, timebaseDen: r.timebaseDen)
        let packetsPath = "\(runDir)/packets.bin", rebuiltPath = "\(runDir)/from-packets.264"
        try OutputFiles.write(packets, to: packetsPath)
        try OutputFiles.write(rebuilt, to: rebuiltPath)
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
        var expected = [Int: PlaneErrors]()
        for f in frames {
            expected[f.displayIndex] = PlaneErrors.x264(psnrY: f.psnrY, psnrU: f.psnrU, psnrV: f.psnrV,
                                                        width: input.width, height: input.height)
        }
        var records: [LabStore.DecodedFrameRecord] = []
        for (source, list) in [("stream", fromStream), ("packets", fromPackets)] {
            for (k, e) in list.enumerated() {
                records.append(.init(source: source, displayIndex: k, errors: e, matchesX264: expected[k] == e))
            }
        }
        return (verification, records)
    }

}
