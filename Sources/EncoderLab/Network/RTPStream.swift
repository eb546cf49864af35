import Foundation
import H264

/// Packetization-mode 0 (single NAL unit packets) and a NAL unit it cannot send: one message for `rtp pack --mode
/// single` and `encode --rtp mode=single`.
enum RTPSingleMode {
    /// The first NAL unit of `units` larger than a single NAL unit packet at `mtu` holds (`mtu` - 12, the RTP header),
    /// described: its index in its access unit and in the stream, its type and size, the room, and what to do (FU-A,
    /// or the mtu that fits every NAL unit of the stream; FU-A alone when none does); nil when every one fits.
    /// - Parameters:
    ///   - nonInterleaved: how the command asks for packetization-mode 1 ("mode=non-interleaved", "--mode non-interleaved").
    ///   - mtuName: how it names the mtu ("an mtu", "an --mtu").
    ///   - frame: more about access unit k (", display frame 3"), or "".
    static func refusal(_ units: [AccessUnit], mtu: Int, nonInterleaved: String, mtuName: String,
                        frame: (Int) -> String = { _ in "" }) -> String? {
        let room = mtu - RTPPacket.fixedHeaderSize
        for (k, unit) in units.enumerated() {
            guard let (i, nal) = unit.nalUnits.enumerated().first(where: { $0.element.bytes.count > room }) else { continue }
            let needed = (units.flatMap(\.nalUnits).map(\.bytes.count).max() ?? 0) + RTPPacket.fixedHeaderSize
            let largest = RTPPacketizer.mtuRange.upperBound
            let todo = needed <= largest ? "use \(nonInterleaved) (FU-A), or \(mtuName) of at least \(needed)"
                : "no mtu fits it (it needs \(needed), the largest is \(largest)): use \(nonInterleaved) (FU-A)"
            let type = nal.nalUnitType
            return "NAL unit \(i) of access unit \(k) (\(type), nal_unit_type \(type.rawValue); the stream's NAL unit \(unit.nalUnitIndices.lowerBound + i)\(frame(k))) "
                + "is \(nal.bytes.count) bytes, larger than the \(room) bytes a single NAL unit packet holds at mtu \(mtu) (after the 12-byte RTP header); "
                + "single NAL unit mode (packetization-mode 0) cannot fragment: \(todo)"
        }
        return nil
    }
}

/// `enclab rtp pack`: an H.264 stream as RTP packets (RFC 6184, ``RTPPacketizer``) in a pcap capture, and its SDP.
public enum RTPPack {
    public struct Options: Sendable {
        public var packetizer = RTPPacketizer.Options()
        /// UDP source and destination port, 1...65,535.
        public var port = 5004
        /// Where to write the SDP; nil for none.
        public var sdpPath: String?
        /// The frame rate for a stream whose SPS has no VUI timing (as `convert --fps`).
        public var fps: (num: Int, den: Int)?
        public init() {}
    }

    /// A stored run's stream and its frames' stored PTS and DTS in microseconds (decode order).
    /// - Parameter run: a run id (`12`, `run-12`), a run key or its first 8 or more hex digits.
    /// - Throws: as ``RuleCheck``'s stored runs: `.usage` for a malformed or ambiguous selector; `.noInput` for a
    ///   missing database, run or stream file; `.data` for a run that is not done, has no frames or timebase.
    public static func storedRun(databasePath: String, run selector: String) throws -> (streamPath: String, times: [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)]) {
        try LabStore.requireDatabaseFile(databasePath)
        try LabStore.requireLabDatabase(path: databasePath)
        let store = try LabStore.reading(path: databasePath)
        let run = try LabStore.select([selector], rows: try store.runs(), keys: try store.runKeys(), databasePath: databasePath)[0]
        let name = "run \(run.runID) of \(databasePath)"
        guard run.status == "done" else { throw LabError.data("\(name): status \(run.status), it has no stream to send") }
        guard let n = run.timebaseNum, let d = run.timebaseDen, n > 0, d > 0 else {
            throw LabError.data("\(name): timebase_num/timebase_den are not two numbers above 0")
        }
        guard let path = RunPage.locate(run.streamPath, databasePath: databasePath) else {
            throw LabError.noInput("\(name): its stream \(run.streamPath ?? "(none stored)") is not found (from here, the database's folder or its parent)")
        }
        let frames = try store.frames(run: run.runID)
        guard !frames.isEmpty else { throw LabError.data("\(name): done, but no frames are stored") }
        do {
            let times = try frames.map {
                (try Packet.microseconds(ticks: $0.pts, timebaseNumerator: Int64(n), timebaseDenominator: Int64(d)),
                 try Packet.microseconds(ticks: $0.dts, timebaseNumerator: Int64(n), timebaseDenominator: Int64(d)))
            }
            return (path, times)
        } catch let e as H264Error {
            throw LabError.data("\(name): a stored time does not fit in microseconds: \(e)")
        }
    }

    public struct Summary: Sendable {
        public var accessUnits = 0
        public var nalUnits = 0
        public var packets = 0
        /// Packets by kind: single NAL unit, STAP-A, FU-A.
        public var single = 0, stapA = 0, fuA = 0
        /// The largest RTP packet, bytes (header included).
        public var largestPacketBytes = 0
        /// The most packets one access unit took.
        public var mostPacketsPerAccessUnit = 0
        /// RTP overhead: 12 bytes of header per packet, 1 + 2 per NAL unit in a STAP-A, 2 per FU-A packet less the NAL
        /// unit header bytes FU-A does not send.
        public var rtpOverheadBytes = 0
        /// The capture file's size.
        public var captureBytes = 0
        public var warnings: [String] = []
    }

    /// The bytes of one packet the packetizer made that are not NAL unit bytes: 12 bytes of RTP header; in a STAP-A
    /// its 1-byte header and 2 bytes of size per NAL unit; in an FU-A the FU indicator and header, less the NAL unit
    /// header they replace (on the start fragment).
    public static func overheadBytes(_ packet: RTPPacket) -> Int {
        switch Int(packet.payload[0] & 0x1F) {
        case 24:
            var p = 1, count = 0
            while p + 2 <= packet.payload.count { p += 2 + (Int(packet.payload[p]) << 8 | Int(packet.payload[p + 1])); count += 1 }
            return 12 + 1 + 2 * count
        case 28:
            return 12 + 2 - (packet.payload[1] & 0x80 != 0 ? 1 : 0)
        default:
            return 12
        }
    }

    /// Reads `input` (Annex B, AVCC or the lab's packets, as `inspect` reads them), packetizes it and writes `output`
    /// (and the SDP) whole or not at all.
    /// - Throws: `.usage` for a port outside 1...65,535, an output naming the input, a stream without timing and no fps;
    ///   `.noInput`, `.data` as ``Bitstream/open(_:)``, and `.data` for what the packetizer refuses (an MTU too small
    ///   for a NAL unit in single NAL unit mode, a NAL unit type 24...31); `.cantCreate`, `.ioError` for the outputs.
    /// - Parameter storedTimes: a stored run's PTS and DTS per frame (``storedRun(databasePath:run:)``), used instead of
    ///   derived ones; refused (65) when the stream's access units are not as many (a field-coded run).
    public static func run(input: String, output: String, options: Options, storedTimes: [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)]? = nil) throws -> Summary {
        guard (1...65_535).contains(options.port) else { throw LabError.usage("--port must be 1...65535, got \(options.port)") }
        guard RTPPacketizer.mtuRange.contains(options.packetizer.mtu) else {
            throw LabError.usage("--mtu must be \(RTPPacketizer.mtuRange.lowerBound)...\(RTPPacketizer.mtuRange.upperBound) bytes (the RTP packet, its 12-byte header included, as rtph264pay's mtu), got \(options.packetizer.mtu)")
        }
        if Convert.sameFile(output, input) { throw LabError.usage("the output '\(output)' is the input '\(input)': rtp pack would overwrite its input") }
        if let sdp = options.sdpPath {
            if Convert.sameFile(sdp, input) { throw LabError.usage("--sdp '\(sdp)' is the input '\(input)': rtp pack would overwrite its input") }
            if Convert.sameFile(sdp, output) { throw LabError.usage("--sdp '\(sdp)' is the output '\(output)': one file cannot hold both") }
        }
        let parsed = try Bitstream.open(StreamInput(path: input))
        let units = parsed.accessUnits
        var summary = Summary()
        summary.warnings = parsed.warnings.map(\.message)
        let times: [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)]
        if let storedTimes {
            times = storedTimes
        } else if let packets = parsed.stream.packets {
            times = packets.map { ($0.ptsMicroseconds, $0.dtsMicroseconds) }
        } else {
            times = try Convert.derivedTimes(units, fps: options.fps, path: input)
        }
        guard times.count == units.count else {
            throw LabError.data("\(input): \(times.count) stored times for \(units.count) access units (one time per access unit is needed)")
        }
        if options.packetizer.mode == .singleNALUnit,
           let refusal = RTPSingleMode.refusal(units, mtu: options.packetizer.mtu, nonInterleaved: "--mode non-interleaved", mtuName: "an --mtu") {
            throw LabError.data("\(input): --mode single: \(refusal)")
        }
        let inputs = zip(units, times).map { RTPPacketizer.AccessUnitInput(nalUnits: $0.nalUnits, ptsMicroseconds: $1.ptsMicroseconds) }
        let made: [RTPPacketizer.Output]
        let sdp: String?
        do {
            made = try RTPPacketizer.packetize(inputs, options: options.packetizer)
            sdp = try options.sdpPath.map { _ in
                try RTPSessionDescription.text(parameterSets: units.flatMap(\.nalUnits).filter { $0.nalUnitType == .sps || $0.nalUnitType == .pps },
                                               mode: options.packetizer.mode, payloadType: options.packetizer.payloadType,
                                               port: options.port, address: "10.0.0.2")
            }
        } catch let e as H264Error {
            throw LabError.data("\(input): \(e)")
        }
        // Each access unit's packets are sent at its DTS, from the first one's (decode order, as a live sender does).
        let firstDTS = times.first?.dtsMicroseconds ?? 0
        var datagrams: [(timeSeconds: Double, payload: [UInt8])] = []
        var perUnit = [Int](repeating: 0, count: units.count)
        for m in made {
            let bytes = m.packet.serialize()
            datagrams.append((Double(times[m.accessUnit].dtsMicroseconds - firstDTS) / 1_000_000, bytes))
            perUnit[m.accessUnit] += 1
            summary.largestPacketBytes = max(summary.largestPacketBytes, bytes.count)
            switch Int(m.packet.payload[0] & 0x1F) {
            case 24: summary.stapA += 1
            case 28: summary.fuA += 1
            default: summary.single += 1
            }
            summary.rtpOverheadBytes += Self.overheadBytes(m.packet)
        }
        // A pcap record holds its capture time's whole seconds in 32 bits (ts_sec): a later time would wrap to 0.
        if let k = datagrams.firstIndex(where: { $0.timeSeconds >= Pcap.latestCaptureSeconds }) {
            let unit = made[k].accessUnit
            throw LabError.data("\(input): access unit \(unit) (decode order) would be sent \(String(format: "%.6f", datagrams[k].timeSeconds)) s after the first, "
                                + "past the latest capture time a pcap record holds (2^32 s after the first packet): the stream's timing makes it that long; nothing written")
        }
        let capture = try Pcap.ethernetCapture(datagrams, port: options.port)
        try Interruption.check()
        var files = [(bytes: capture, path: output)]
        if let sdp, let path = options.sdpPath { files.append((Array(sdp.utf8), path)) }
        try StagedFiles.write(files)
        summary.accessUnits = units.count
        summary.nalUnits = units.reduce(0) { $0 + $1.nalUnits.count }
        summary.packets = made.count
        summary.mostPacketsPerAccessUnit = perUnit.max() ?? 0
        summary.captureBytes = capture.count
        return summary
    }
}

/// `enclab rtp unpack`: one RTP stream of a capture back to an Annex B stream (``RTPDepacketizer``).
public enum RTPUnpack {
    public struct Options: Sendable {
        /// Take UDP datagrams to this destination port only.
        public var port: Int?
        /// Take RTP packets of this SSRC only.
        public var ssrc: UInt32?
        /// `--parameter-sets VALUE` (a file of SPS/PPS or a sprop-parameter-sets value) or the sprop-parameter-sets of
        /// `--sdp FILE`: written before the first NAL unit, as rtph264depay does with the caps' sprop-parameter-sets.
        public var parameterSets: String?
        public var sdpPath: String?
        public init() {}
    }

    public struct Summary: Sendable {
        public var linkType = ""
        public var records = 0
        public var udpDatagrams = 0
        public var port = 0
        public var ssrc: UInt32 = 0
        public var payloadType = 0
        public var statistics = RTPDepacketizer.Statistics()
        public var accessUnits = 0
        public var nalUnits = 0
        /// Each incomplete access unit: its index, PTS in microseconds from the first, and why.
        public var incomplete: [(index: Int, ptsMicroseconds: Int64, reasons: [String])] = []
        /// Each access unit's PTS in microseconds from the first, in decode order.
        public var ptsMicroseconds: [Int64] = []
        public var bytes = 0
        public var warnings: [String] = []
    }

    /// The `sprop-parameter-sets` value of an SDP's `a=fmtp` line (lines end in CRLF or LF: "\r\n" is one Character).
    /// - Throws: `.noInput` for a missing file; `.data` when it has no sprop-parameter-sets.
    static func sprop(sdpPath: String) throws -> String {
        let text = String(decoding: try readFile(sdpPath, naming: "--sdp \(sdpPath)"), as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("a=fmtp:") {
            for part in line.split(separator: ";") {
                let field = part.trimmingCharacters(in: .whitespaces)
                let words = field.split(separator: " ")
                if let last = words.last, last.hasPrefix("sprop-parameter-sets=") {
                    return String(last.dropFirst("sprop-parameter-sets=".count))
                }
            }
        }
        throw LabError.data("--sdp \(sdpPath): no a=fmtp line with sprop-parameter-sets")
    }

    /// Reads `capture`, picks one RTP stream, depacketizes it and writes `output` (Annex B, 4-byte start codes).
    /// - Throws: `.usage` for a port outside 1...65,535, both --sdp and --parameter-sets, an output naming the
    ///   capture, or several RTP streams and no --port/--ssrc to choose; `.noInput` for a missing capture; `.data` for
    ///   a capture libpcap refuses or that is truncated, a link type other than EN10MB, RAW or LINUX_SLL, a datagram on
    ///   the chosen port that is not RTP, no RTP packets (naming what the first UDP datagram was), or no NAL unit
    ///   left; `.cantCreate`, `.ioError` for the output.
    public static func run(capture: String, output: String, options: Options) throws -> Summary {
        if let port = options.port, !(1...65_535).contains(port) { throw LabError.usage("--port must be 1...65535, got \(port)") }
        if options.sdpPath != nil && options.parameterSets != nil { throw LabError.usage("--sdp and --parameter-sets both give the parameter sets: give one") }
        if Convert.sameFile(output, capture) { throw LabError.usage("the output '\(output)' is the capture '\(capture)': rtp unpack would overwrite its input") }
        var outOfBand: OutOfBandParameterSets?
        var summary = Summary()
        if let path = options.sdpPath {
            outOfBand = try OutOfBandParameterSets.parameterSets(try sprop(sdpPath: path), sdp: path)
        } else if let value = options.parameterSets {
            outOfBand = try OutOfBandParameterSets.parameterSets(value)
        }
        summary.warnings += outOfBand?.warnings.map { "\(outOfBand!.source): \($0)" } ?? []
        let read = try Pcap.readUDP(path: capture)
        summary.linkType = read.linkType
        summary.records = read.records
        summary.udpDatagrams = read.datagrams.count
        summary.warnings += read.warnings
        var candidates = read.datagrams
        if let port = options.port { candidates = candidates.filter { $0.destinationPort == port } }
        var parsed: [(d: UDPDatagram, p: RTPPacket)] = []
        var firstRefusal: String?
        for d in candidates {
            do {
                let p = try RTPPacket(parsing: d.payload)
                // RTCP (RFC 5761 4: payload types 72...76 with the marker bit are RTCP's 200...204) is not RTP media.
                if (72...76).contains(p.payloadType) && p.marker {
                    if firstRefusal == nil { firstRefusal = "record \(d.record) (UDP port \(d.destinationPort)) is RTCP (packet type \(p.payloadType + 128))" }
                    continue
                }
                parsed.append((d, p))
            } catch let e as H264Error {
                let why = "record \(d.record) (UDP port \(d.sourcePort) to \(d.destinationPort), \(d.payload.count) bytes) is not RTP: \(e)"
                if options.port != nil { throw LabError.data("\(capture): \(why)") }
                if firstRefusal == nil { firstRefusal = why }
            }
        }
        if let ssrc = options.ssrc { parsed = parsed.filter { $0.p.ssrc == ssrc } }
        guard let first = parsed.first else {
            let selection = [options.port.map { "UDP port \($0)" }, options.ssrc.map { "SSRC \(hex($0))" }].compactMap { $0 }.joined(separator: ", ")
            var message = "\(capture): no RTP packets\(selection.isEmpty ? "" : " on \(selection)") among its \(read.records) records (\(read.datagrams.count) UDP datagrams)"
            if let firstRefusal { message += "; \(firstRefusal)" }
            throw LabError.data(message)
        }
        var streams: [(port: Int, ssrc: UInt32, count: Int)] = []
        for (d, p) in parsed {
            if let i = streams.firstIndex(where: { $0.port == d.destinationPort && $0.ssrc == p.ssrc }) { streams[i].count += 1 } else {
                streams.append((d.destinationPort, p.ssrc, 1))
            }
        }
        if streams.count > 1 {
            let list = streams.map { "UDP port \($0.port) SSRC \(hex($0.ssrc)) (\($0.count) packets)" }.joined(separator: ", ")
            throw LabError.usage("\(capture) holds \(streams.count) RTP streams: \(list); choose one with --port and --ssrc")
        }
        summary.port = first.d.destinationPort
        summary.ssrc = first.p.ssrc
        summary.payloadType = first.p.payloadType
        let result = RTPDepacketizer.depacketize(parsed.map { RTPDepacketizer.Received(packet: $0.p, arrivalSeconds: $0.d.timeSeconds) })
        summary.statistics = result.statistics
        summary.warnings += result.warnings.map { "\(capture): \($0)" }
        // A NAL unit with forbidden_zero_bit 1 (RFC 6184 5.3: the sender or a network element marks a NAL unit that may
        // hold bit errors or syntax violations) is kept as it came, with a warning naming it.
        for (a, unit) in result.accessUnits.enumerated() {
            for (n, nal) in unit.nalUnits.enumerated() where nal.forbiddenZeroBit != 0 {
                summary.warnings.append("\(capture): access unit \(a) (RTP timestamp \(unit.rtpTimestamp)), NAL unit \(n) (nal_unit_type \(nal.nalUnitType.rawValue)) has forbidden_zero_bit 1 (RFC 6184 5.3: it may hold bit errors); kept as received")
            }
        }
        let nals = (outOfBand?.nalUnits ?? []) + result.accessUnits.flatMap(\.nalUnits)
        guard !result.accessUnits.isEmpty else {
            throw LabError.data("\(capture): the RTP stream (UDP port \(summary.port), SSRC \(hex(summary.ssrc))) gives no NAL unit")
        }
        summary.accessUnits = result.accessUnits.count
        summary.nalUnits = nals.count
        summary.ptsMicroseconds = result.accessUnits.map(\.ptsMicroseconds)
        summary.incomplete = result.accessUnits.enumerated().filter { !$1.incomplete.isEmpty }.map { ($0, $1.ptsMicroseconds, $1.incomplete) }
        let bytes = AnnexB.write(nals)
        summary.bytes = bytes.count
        try Interruption.check()
        try StagedFiles.write([(bytes, output)])
        return summary
    }

    /// `0x` and 8 hexadecimal digits.
    public static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
