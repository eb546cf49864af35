import Foundation
import H264

/// What a run's RTP stage measured (`rtp_frames`, `rtp_loss_frames`, `rtp_runs`; docs/rtp.md, "A run's RTP stage").
public struct RTPRunMeasurements: Sendable {
    /// One coded frame (decode order) as sent.
    public struct SentFrame: Sendable, Equatable {
        public var codedIndex: Int
        public var displayIndex: Int
        /// RTP packets of its access unit.
        public var packets: Int
        /// Those packets' bytes, RTP headers included.
        public var rtpBytes: Int
        /// With a loss model: its packets the channel lost.
        public var lostPackets: Int?
    }

    /// One displayed frame under loss (display order).
    public struct LossFrame: Sendable, Equatable {
        public var displayIndex: Int
        public var state: LossRecovery.State
        /// libavcodec flagged the picture it output (`decode_error_flags` not 0: it concealed errors).
        public var concealed: Bool
        /// The squared errors of the picture shown (the one output, or for a frozen frame the one shown before it)
        /// against the source picture.
        public var errors: PlaneErrors
        public var psnr: PSNR.Picture
        /// The loss-free decode's luma PSNR of the same frame (the run's `frames.psnr_y`).
        public var lossFreePSNRY: Double?
        /// Frames from this frame's loss event's first frame (0 on the first), nil outside an event.
        public var eventFrame: Int?
    }

    public var settings: RTPRunSettings
    public var frames: [SentFrame] = []
    public var packets = 0
    /// The most RTP bytes one access unit sent (its packets go out back to back at its DTS: the largest burst).
    public var largestBurstBytes = 0
    /// RTP packet bytes less the NAL unit bytes they carry (``RTPPack/overheadBytes(_:)``).
    public var rtpOverheadBytes = 0
    /// The NAL unit bytes sent (start codes not counted).
    public var payloadBytes = 0

    // With a loss model:
    public var lossFrames: [LossFrame] = []
    public var summary: LossRecovery.Summary?
    public var statistics: RTPDepacketizer.Statistics?
    /// Packets the channel lost (of `packets`).
    public var packetsLost = 0
    /// Access units libavcodec refused outright.
    public var refusedAccessUnits = 0
    /// Pictures libavcodec output that name no frame still to show (no pts, or one already shown or past the end).
    public var strayPictures = 0
    /// The damaged stream's path (`damaged.264` in the run's folder).
    public var damagedStreamPath: String?
}

/// A run's RTP stage (``RTPRunSettings``), run after the verify stage on the stream the run wrote.
public enum RTPRunStage {
    /// Packetizes the run's stream and, with a loss model, sends it through the channel, depacketizes what arrives,
    /// writes it as `damaged.264` in `folder` and decodes it, measuring each displayed frame against the source.
    /// - Parameters:
    ///   - frames: the run's coded frames (decode order).
    ///   - timebase: the frames' PTS and DTS timebase.
    ///   - lossFreePSNRY: the loss-free decode's luma PSNR per display index (nil: no error).
    ///   - displayCount: the pictures handed to the encoder (display indices 0..<displayCount).
    ///   - clipPath, seek: the source clip, read again for the measurement (`seek` pictures skipped).
    /// - Throws: `.data` when the stream does not parse into one access unit per frame or the packetizer refuses it
    ///   (single NAL unit mode with a NAL unit larger than the MTU allows); `.cantCreate`/`.ioError` for damaged.264.
    static func run(settings: RTPRunSettings, streamPath: String, folder: String, frames: [EncodedFrame], timebase: Rational,
                    lossFreePSNRY: [Int: Double?], displayCount: Int, clipPath: String, seek: Int,
                    width: Int, height: Int) throws -> RTPRunMeasurements {
        var m = RTPRunMeasurements(settings: settings)
        let parsed = try Bitstream.open(StreamInput(path: streamPath))
        let units = parsed.accessUnits
        // Messages name the run's clip and setting: the stream is in the run's temporary folder, gone once it fails.
        guard units.count == frames.count else {
            throw LabError.data("\(clipPath): the run's stream has \(units.count) access units for \(frames.count) coded frames; the RTP stage (--rtp \(settings.rtpSpec)) needs one access unit per frame")
        }
        var options = RTPPacketizer.Options()
        options.mtu = settings.mtu
        options.mode = settings.mode
        // Packetization-mode 0 sends each NAL unit whole in one packet, its 12-byte RTP header included in the mtu.
        if settings.mode == .singleNALUnit,
           let refusal = RTPSingleMode.refusal(units, mtu: settings.mtu, nonInterleaved: "mode=non-interleaved", mtuName: "an mtu",
                                               frame: { "; display frame \(frames[$0].displayIndex)" }) {
            throw LabError.data("\(clipPath): --rtp \(settings.rtpSpec): \(refusal)")
        }
        let made: [RTPPacketizer.Output]
        let pts: [Int64], dts: [Int64]
        do {
            pts = try frames.map { try timebase.microseconds(ticks: $0.pts) }
            dts = try frames.map { try timebase.microseconds(ticks: $0.dts) }
            made = try RTPPacketizer.packetize(zip(units, pts).map { .init(nalUnits: $0.nalUnits, ptsMicroseconds: $1) }, options: options)
        } catch let e as H264Error {
            throw LabError.data("\(clipPath): the RTP stage (--rtp \(settings.rtpSpec)): \(e)")
        }
        m.frames = frames.enumerated().map { .init(codedIndex: $0, displayIndex: $1.displayIndex, packets: 0, rtpBytes: 0) }
        for p in made {
            let size = RTPPacket.fixedHeaderSize + p.packet.payload.count
            m.frames[p.accessUnit].packets += 1
            m.frames[p.accessUnit].rtpBytes += size
            m.rtpOverheadBytes += RTPPack.overheadBytes(p.packet)
        }
        m.packets = made.count
        m.largestBurstBytes = m.frames.map(\.rtpBytes).max() ?? 0
        m.payloadBytes = units.reduce(0) { $0 + $1.nalUnits.reduce(0) { $0 + $1.bytes.count } }
        guard let channel = settings.channel else { return m }

        // The channel: each access unit's packets sent at its DTS (from the first frame's), as `rtp pack` times them.
        let firstDTS = dts.first ?? 0
        let sendSeconds = made.map { Double(dts[$0.accessUnit] - firstDTS) / 1_000_000 }
        let outcome = RTPChannel.transmit(sendSeconds: sendSeconds, spec: channel)
        for (p, lost) in zip(made, outcome.lost) where lost { m.frames[p.accessUnit].lostPackets = (m.frames[p.accessUnit].lostPackets ?? 0) + 1 }
        for k in m.frames.indices where m.frames[k].lostPackets == nil { m.frames[k].lostPackets = 0 }
        m.packetsLost = outcome.lost.filter { $0 }.count
        let result = RTPDepacketizer.depacketize(outcome.arrivals.map { .init(packet: made[$0.sent].packet, arrivalSeconds: $0.seconds) })
        m.statistics = result.statistics
        let damagedPath = "\(folder)/damaged.264"
        try StagedFiles.write([(AnnexB.write(result.accessUnits.flatMap(\.nalUnits)), damagedPath)])
        m.damagedStreamPath = damagedPath

        // The display index of each RTP timestamp sent.
        var displayOf: [UInt32: Int] = [:]
        for p in made { displayOf[p.packet.timestamp] = frames[p.accessUnit].displayIndex }

        // The damaged decode, measured as it comes out against the source read again in display order.
        let clip = try Clip(path: clipPath)
        for _ in 0..<seek { _ = try clip.next() }
        var nextShown = 0
        var lastShown: [UInt8]?
        var rows: [(errors: PlaneErrors, output: Bool, concealed: Bool)] = []
        // No picture shown yet: a mid-grey picture (128 in every plane) stands for the empty screen.
        let grey = [UInt8](repeating: 128, count: width * height * 3 / 2)
        func source() throws -> Picture {
            guard let p = try clip.next() else {
                throw LabError.data("\(clipPath): ended before picture \(nextShown + seek) while measuring the RTP stage's damaged decode")
            }
            return p
        }
        func show(upTo end: Int) throws {
            while nextShown < end {
                let s = try source()
                let held = lastShown ?? grey
                let e = held.withUnsafeBufferPointer { h in s.withUnsafeBytes { H264StreamDecoder.squaredErrors(packed: h, source: $0, width: width, height: height) } }
                rows.append((e, false, false))
                nextShown += 1
            }
        }
        let decoder = try DamagedStreamDecoder(width: width, height: height)
        decoder.output = { pts, picture, concealed in
            guard let pts, let picture, pts >= Int64(nextShown), pts < Int64(displayCount) else { m.strayPictures += 1; return }
            try show(upTo: Int(pts))
            let s = try source()
            let e = picture.withUnsafeBufferPointer { h in s.withUnsafeBytes { H264StreamDecoder.squaredErrors(packed: h, source: $0, width: width, height: height) } }
            rows.append((e, true, concealed))
            lastShown = picture
            nextShown += 1
        }
        for au in result.accessUnits {
            try Interruption.check()
            guard let d = displayOf[au.rtpTimestamp] else { continue }
            try decoder.decode(AnnexB.write(au.nalUnits), displayIndex: Int64(d))
        }
        try decoder.finish()
        try show(upTo: displayCount)
        m.refusedAccessUnits = decoder.refused

        let psnrs = rows.map { PSNR.picture($0.errors, width: width, height: height) }
        // Slots the encoder skipped (no coded frame shows there): held on both sides, not lost by the network.
        let coded = Set(frames.map(\.displayIndex))
        let summary = LossRecovery.summarize(rows.indices.map {
            LossRecovery.Frame(psnrY: psnrs[$0].y, lossFreePSNRY: lossFreePSNRY[$0] ?? nil, output: rows[$0].output,
                               coded: coded.contains($0))
        })
        var eventFrame = [Int?](repeating: nil, count: rows.count)
        for e in summary.events { for k in 0..<e.frames { eventFrame[e.first + k] = k } }
        m.lossFrames = rows.indices.map {
            .init(displayIndex: $0, state: summary.states[$0], concealed: rows[$0].concealed, errors: rows[$0].errors,
                  psnr: psnrs[$0], lossFreePSNRY: lossFreePSNRY[$0] ?? nil, eventFrame: eventFrame[$0])
        }
        m.summary = summary
        return m
    }
}
