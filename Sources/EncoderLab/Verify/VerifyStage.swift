import Foundation
import H264

/// How a run is verified (`--verify`, the setting `verify`).
public enum VerifyMode: String, Sendable, CaseIterable {
    /// The stream parsed back and checked, round-tripped through packets, and decoded by libavcodec against the
    /// source: the stored PSNRs are the lab's (the default).
    case full
    /// As `full` without the decode: the stored PSNRs are x264's own report, and the run is marked unverified
    /// (`runs.settings` `$.resolved.verify` = `none`), for speed studies.
    case none
}

/// The verify stage (docs/verification.md, "How every run is verified"), fed as the stream is written so that memory stays flat
/// in clip length: each source picture as it is handed to x264 (``source(_:)``), each frame's bytes as they are
/// written to `stream.264` (``written(_:bytes:)``), then ``finish(frames:resolved:profile:)``.
///
/// Per access unit: parsed back and checked (``StreamCheck``), round-tripped through packets (appending to
/// `packets.bin` and `from-packets.264`, compared NAL unit by NAL unit: ``PacketRoundTrip``) and, unless
/// `verify` is `none`, decoded by libavcodec (``H264StreamDecoder``), each decoded picture measured against its
/// source picture, held only until it is decoded.
///
/// When x264 encodes on threads of its own, this work runs on a thread of its own too (``SerialWorker``), in the
/// order the pictures and frames were handed over, with its nice value 5 above the pipeline's: it takes the CPU time
/// x264's threads leave, and yields to them while they have work, instead of holding up the next picture on the
/// pipeline's thread. At most 16 handovers wait, so memory stays bounded. An error in that work is thrown by a later
/// handover or by ``finish(frames:resolved:profile:width:height:)``, which waits for it all. With x264 at one
/// thread (a sweep's runs each meant to use one core) the work stays on the pipeline's thread. A stage let go
/// before its finish (a run that failed) is freed on the thread that lets it go: the handovers still waiting are
/// dropped, the one under way is waited for, and no verify work runs after that.
///
/// Why nice 5: it cost the least wall time against x264's CLI both on an idle machine and on one kept busy by other
/// runs, where a thread far below the others (nice 19, SCHED_IDLE) starves; the measurements are in
/// results/verify-thread-priority.md.
final class VerifyStage {
    let streamPath: String
    let mode: VerifyMode
    /// The state the work changes. The verify thread's jobs hold it, not the stage, so that the stage's last
    /// reference is the pipeline's: its `deinit` (which stops the thread) runs when the pipeline lets it go, on the
    /// pipeline's thread, never on the verify thread from inside a job.
    private let work: Work
    /// The thread the work runs on, when it has one (see ``init(folder:width:height:timebaseNum:timebaseDen:mode:background:)``);
    /// not private so that tests can hold it busy.
    let worker: SerialWorker?

    deinit { worker?.stop() }

    /// The parse-back, the packet files and the decoder: used by one thread at a time (the verify thread's jobs, then
    /// ``finish(frames:resolved:profile:width:height:)`` after the drain).
    private final class Work {
        var check: StreamCheck
        let decoder: H264StreamDecoder?
        let packets: PacketSink
        let streamPath: String
        init(check: StreamCheck, decoder: H264StreamDecoder?, packets: PacketSink, streamPath: String) {
            self.check = check; self.decoder = decoder; self.packets = packets; self.streamPath = streamPath
        }
        /// - Throws: the `H264` module's errors as `.software` naming the stream and the frame (the encoder's own
        ///   stream: the lab cannot vouch for it), libavcodec's as ``H264StreamDecoder/decode(_:)``.
        func written(_ frame: EncodedFrame, bytes: [UInt8]) throws {
            do {
                try check.add(frame, bytes: bytes)
            } catch let e as H264Error {
                throw LabError.software("\(streamPath): frame \(frame.codedIndex) (decode order) cannot be read back or carried in a packet: \(e)")
            }
            try decoder?.decode(bytes)
        }
    }

    /// Writes `packets.bin` and `from-packets.264` one access unit at a time.
    private final class PacketSink {
        var roundTrip: PacketRoundTrip
        let packetsFile: OutputFile, rebuiltFile: OutputFile
        init(folder: String, timebaseNum: Int, timebaseDen: Int) throws {
            roundTrip = PacketRoundTrip(timebaseNum: timebaseNum, timebaseDen: timebaseDen)
            packetsFile = try OutputFile("\(folder)/packets.bin")
            rebuiltFile = try OutputFile("\(folder)/from-packets.264")
        }
        func add(_ unit: AccessUnit, _ frame: EncodedFrame?) throws {
            // An access unit past x264's frames fails the count check; it has no times to make a packet with.
            guard let frame else { return }
            let (packet, annexB) = try roundTrip.next(unit, pts: frame.pts, dts: frame.dts)
            try packetsFile.write(packet)
            try rebuiltFile.write(annexB)
        }
    }

    /// - Parameters:
    ///   - folder: the run's folder (`stream.264` is written there by the output stage).
    ///   - width, height: the encoded picture size (even).
    ///   - timebaseNum, timebaseDen: the run's timebase (x264's), for the packets' microseconds.
    ///   - mode: `.none` skips the decode.
    ///   - background: run the work on a thread of its own (when x264 encodes on threads of its own).
    /// - Throws: `.cantCreate` for the packet files; `.software` when libavcodec's decoder cannot be opened.
    ///   - pairs: with `--metrics`, where the decoder writes each decoded picture and its source picture for libvmaf;
    ///     the stream is then decoded even with `mode` `.none` (whose finish still returns no decoded pictures).
    init(folder: String, width: Int, height: Int, timebaseNum: Int, timebaseDen: Int, mode: VerifyMode,
         background: Bool, pairs: PairedPictures? = nil) throws {
        streamPath = "\(folder)/stream.264"
        self.mode = mode
        let sink = try PacketSink(folder: folder, timebaseNum: timebaseNum, timebaseDen: timebaseDen)
        let decoder = mode == .full || pairs != nil ? try H264StreamDecoder(width: width, height: height, name: streamPath) : nil
        decoder?.pairs = pairs
        work = Work(check: StreamCheck { unit, frame in try sink.add(unit, frame) }, decoder: decoder, packets: sink, streamPath: streamPath)
        worker = background ? SerialWorker(name: "enclab verify", limit: 16, niceIncrement: 5) : nil
    }

    /// The next source picture in display order, as handed to x264.
    /// - Throws: the error of earlier work on the verify thread (see ``written(_:bytes:)``).
    func source(_ picture: Picture) throws {
        guard let decoder = work.decoder else { return }
        if let worker { try worker.submit { decoder.source(picture) } } else { decoder.source(picture) }
    }

    /// A source picture the encoder dropped (OpenH264's frame skip), in display order among ``source(_:)``'s: measured
    /// against the decoded picture before it (what a receiver shows again). Without the decode, nothing.
    /// - Throws: the error of earlier work on the verify thread.
    func skipped(_ picture: Picture, inputIndex: Int) throws {
        guard let decoder = work.decoder else { return }
        if let worker { try worker.submit { decoder.skipped(picture, inputIndex: inputIndex) } } else { decoder.skipped(picture, inputIndex: inputIndex) }
    }

    /// Keeps each decoded picture until the next, so that dropped pictures can be measured (``skipped(_:inputIndex:)``):
    /// called before the first picture, for an encoder that drops pictures (OpenH264).
    func measureSkippedPictures() { work.decoder?.measuresSkipped = true }

    /// Each decoded picture's macroblock QPs (sum and count) as libavcodec decoded it (``H264StreamDecoder/meanQP``), in display order,
    /// after ``finish(frames:resolved:profile:width:height:)``; empty without the decode.
    var decodedMeanQP: [MacroblockQP?] { work.decoder?.meanQP ?? [] }

    /// The held-picture errors of the dropped pictures (``skipped(_:inputIndex:)``), after ``finish(frames:resolved:profile:width:height:)``.
    var skippedErrors: [(inputIndex: Int, errors: PlaneErrors?)] { work.decoder?.skippedErrors ?? [] }

    /// One frame as written to the stream, in decode order: `bytes` are its NAL units with their start codes.
    /// - Throws: the `H264` module's error for bytes that do not parse; `.software` for a packet round trip that
    ///   changes them or a decode libavcodec refuses; with a verify thread, thrown by this call or a later one.
    func written(_ frame: EncodedFrame, bytes: [UInt8]) throws {
        if let worker {
            try worker.submit { [work] in try work.written(frame, bytes: bytes) }
        } else {
            try work.written(frame, bytes: bytes)
        }
    }

    /// Ends the stream: the checks that need all of it, the decoder flushed.
    /// - Returns: the checks and parameter sets, and the decoded pictures (source `stream`, then the same
    ///   values as source `packets`: the stream rebuilt from packets has the same NAL units, which proves the same
    ///   decode; empty without the decode).
    /// - Throws: `.software` when the stream contradicts x264's report or the decode does not give one picture per
    ///   frame: each means the lab cannot vouch for the run.
    func finish(frames: [EncodedFrame], resolved r: ResolvedParameters, profile: String?, width: Int, height: Int)
        throws -> (StreamVerification, [DecodedFrame]) {
        try worker?.drain()
        worker?.stop()
        let verification = try work.check.finish(resolved: r, profile: profile)
        try work.packets.packetsFile.close()
        try work.packets.rebuiltFile.close()
        if let bad = verification.failures.first {
            throw LabError.software("\(streamPath): the stream disagrees with x264's report: \(bad.name) expected \(bad.expected), found \(bad.actual)")
        }
        guard let decoder = work.decoder else { return (verification, []) }
        let decoded = try decoder.finish()
        guard decoded.count == frames.count else {
            throw LabError.software("\(streamPath): libavcodec decoded \(decoded.count) pictures, x264 reported \(frames.count)")
        }
        // Decoded for --metrics alone: the run stays unverified, its PSNRs x264's.
        if mode == .none { return (verification, []) }
        // x264's squared error per display index, recovered from its PSNR (zero when it measured none: --qp 0).
        var expected = [Int: PlaneErrors]()
        for f in frames {
            expected[f.displayIndex] = PlaneErrors.x264(psnrY: f.psnrY, psnrU: f.psnrU, psnrV: f.psnrV, width: width, height: height)
        }
        // The k-th decoded picture (display order) is the k-th coded frame in display order: its input frame number
        // is k unless the encoder dropped pictures before it (OpenH264's frame skip, ``SkippedFrame``).
        let displayOrder = frames.map(\.displayIndex).sorted()
        var records: [DecodedFrame] = []
        records.reserveCapacity(2 * decoded.count)
        for source in ["stream", "packets"] {
            for (k, e) in decoded.enumerated() {
                let index = displayOrder[k]
                records.append(.init(source: source, displayIndex: index, errors: e, matchesX264: expected[index] == e))
            }
        }
        return (verification, records)
    }
}

/// One picture of an independent decode, compared with its source picture: what the verify stage measured, which the
/// store writes as given (one `decoded_frames` row each).
public struct DecodedFrame: Sendable {
    /// `stream` (the written Annex B file) or `packets` (the stream rebuilt from packets).
    public var source: String
    public var displayIndex: Int
    public var errors: PlaneErrors
    /// Whether x264's per-plane squared error (from its PSNR; 0 for lossless) equals this one.
    public var matchesX264: Bool

    public init(source: String, displayIndex: Int, errors: PlaneErrors, matchesX264: Bool) {
        self.source = source
        self.displayIndex = displayIndex
        self.errors = errors
        self.matchesX264 = matchesX264
    }
}
