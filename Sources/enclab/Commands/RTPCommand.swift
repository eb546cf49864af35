import EncoderLab
import Foundation
import H264

/// `enclab rtp pack STREAM OUT.pcap` and `enclab rtp unpack CAPTURE OUT.264`: H.264 over RTP (RFC 6184) in pcap captures.
struct RTPCommand: Command {
    let name = "rtp"
    let summary = "an H.264 stream as RTP packets (RFC 6184) in a pcap capture, and a capture's RTP stream back to Annex B"
    let operands = "pack STREAM|--db FILE --run KEY|ID OUT.pcap | unpack CAPTURE OUT.264"
    static let packOnly: Set<String> = ["--mtu", "--mode", "--aggregate", "--seq", "--timestamp", "--pt", "--fps", "--db", "--run"]
    let flags = [
        Flag("--mtu", value: "BYTES", about: "pack: the largest RTP packet in bytes, its 12-byte RTP header included (GStreamer rtph264pay's mtu), 28...65507",
             default: "1400"),
        Flag("--mode", value: "single|non-interleaved", about: "pack: packetization-mode 0 (single NAL unit packets only) or 1 "
             + "(also STAP-A and FU-A)", default: "non-interleaved"),
        Flag("--aggregate", value: "none|max-stap", about: "pack, non-interleaved: whether NAL units of one access unit share STAP-A "
             + "packets (rtph264pay's aggregate-mode; its zero-latency gives max-stap's packets for whole access units)", default: "max-stap"),
        Flag("--port", value: "N", about: "pack: the UDP port written (source and destination); unpack: take datagrams to this port only",
             default: "pack 5004; unpack any"),
        Flag("--ssrc", value: "SSRC", about: "pack: the SSRC written; unpack: take packets of this SSRC only (decimal or 0x hexadecimal)",
             default: "pack 0x00000000; unpack any"),
        Flag("--sdp", value: "FILE", about: "pack: write the SDP (sprop-parameter-sets, profile-level-id, packetization-mode) here; "
             + "unpack: read its sprop-parameter-sets and write them before the first NAL unit", default: "none"),
        Flag("--seq", value: "N", about: "pack: the first packet's sequence number, 0...65535 (it wraps at 65536)", default: "0"),
        Flag("--timestamp", value: "N", about: "pack: the RTP timestamp of PTS 0, 0...4294967295 (it wraps at 2^32)", default: "0"),
        Flag("--pt", value: "PT", about: "pack: the payload type, 96...127", default: "96"),
        Flag("--fps", value: "NUM[/DEN]", about: "pack: the frame rate for a stream whose SPS has no VUI timing",
             default: "2 x num_units_in_tick / time_scale from the SPS VUI"),
        Flag("--parameter-sets", value: "VALUE", about: "unpack: parameter sets sent beside the stream, written before the first "
             + "NAL unit: a file of Annex B SPS/PPS NAL units, or SDP's sprop-parameter-sets (base64 NAL units separated by "
             + "commas); pack refuses it (64)", default: "none: the stream carries its parameter sets"),
        Flag("--db", value: "FILE", about: "pack, with --run and no STREAM: the database of the run to send", default: "none"),
        Flag("--run", value: "KEY|ID", about: "pack, with --db: send this stored run's stream (its stream_path), timed by its frames' stored "
             + "PTS and DTS (a run id, run key or 8+ hex digits of one)", default: "none"),
    ]
    let about = """
        pack reads STREAM (Annex B, AVCC or the lab's packets, as inspect reads them) and writes its access units as RTP \
        packets (RFC 6184) in OUT.pcap, an Ethernet/IPv4/UDP capture (10.0.0.1 to 10.0.0.2) that Wireshark and tshark \
        open (decode the port as RTP). Timestamps are the PTS on the 90 kHz clock from --timestamp (modulo 2^32), the \
        marker bit is set on each access unit's last packet (--db FILE --run ID instead of STREAM: a stored run's \
        stream, timed by its frames' stored PTS and DTS), sequence numbers count from --seq (modulo 2^16); each \
        access unit's packets carry its DTS as their capture time. Parameter sets go in band as the stream has them. \
        stdout gets one line: packets by kind, the largest, the most per access unit, the RTP overhead.

        unpack reads CAPTURE (pcap or pcapng; Ethernet, raw IP or Linux cooked link type) and writes one RTP stream's \
        NAL units to OUT.264 (Annex B, 4-byte start codes), which inspect, convert and check read like any stream. \
        Packets are put in sequence number order (across the 16-bit wrap), duplicates dropped, STAP-A split and FU-A \
        reassembled; a NAL unit that lost a fragment is discarded whole (RFC 6184 5.8). stderr gets the counts: \
        packets, lost, duplicates, reordered, RFC 3550's interarrival jitter, and each incomplete access unit \
        (its first slice not at macroblock 0, a lost fragment, a sequence gap inside it or after its last packet \
        without the marker bit). stdout gets one line: the stream chosen, access units, NAL units, OUT's size.
        """
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "written"),
        (64, "usage: no pack/unpack, a bad flag or value, a pack flag with unpack, a stream without timing and no --fps, "
            + "a capture with several RTP streams and no --port/--ssrc to choose one"),
        (65, "bad data: STREAM does not parse, a NAL unit too large for --mtu in single mode; CAPTURE is not a capture, "
            + "is truncated, has another link type (named), holds no RTP packet on the port, or its RTP gives no NAL unit; "
            + "an --sdp file without sprop-parameter-sets or with one that is not base64"),
        (66, "STREAM, CAPTURE or the --sdp/--parameter-sets file is missing"),
        (73, "OUT or the --sdp file cannot be created"),
        (74, "a write failed part-way"),
    ]
    let example = """
        enclab rtp pack stream.264 stream.pcap --mtu 1200 --sdp stream.sdp --seq 65530 --timestamp 4294960000
        enclab rtp unpack stream.pcap back.264 --port 5004
        """

    enum Options {
        case pack(input: String, output: String, options: RTPPack.Options, stored: (db: String, run: String)?)
        case unpack(capture: String, output: String, options: RTPUnpack.Options)
    }

    /// A whole number in `range` (decimal, or hexadecimal after 0x).
    static func integer(_ parsed: ParsedArguments, _ name: String, _ range: ClosedRange<Int>) throws -> Int? {
        guard let text = parsed.value(name) else { return nil }
        let value = text.lowercased().hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text)
        guard let value, range.contains(value) else {
            throw LabError(.usage, "\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
        }
        return value
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        let rest = parsed.rest
        guard let verb = rest.first, ["pack", "unpack"].contains(verb) else {
            throw LabError(.usage, "rtp needs pack or unpack, got \(rest.first.map { "'\($0)'" } ?? "nothing")")
        }
        let stored = parsed.value("--run")
        if verb == "pack" && (stored != nil) != (parsed.value("--db") != nil) { throw LabError(.usage, "rtp pack: --run and --db go together") }
        guard rest.count == (stored == nil ? 3 : 2) else {
            throw LabError(.usage, verb == "pack" ? (stored == nil ? "rtp pack takes STREAM and OUT.pcap" : "rtp pack --db --run takes OUT.pcap alone (no STREAM)")
                                                  : "rtp unpack takes CAPTURE and OUT.264")
        }
        let ssrc = try Self.integer(parsed, "--ssrc", 0...Int(UInt32.max)).map { UInt32($0) }
        let port = try Self.integer(parsed, "--port", 1...65_535)
        let sdp = try parsed.path("--sdp", what: "a file")
        if verb == "unpack" {
            if let misplaced = Self.packOnly.first(where: { parsed.value($0) != nil }) {
                throw LabError(.usage, "\(misplaced) goes with rtp pack, not unpack")
            }
            var o = RTPUnpack.Options()
            o.port = port
            o.ssrc = ssrc
            o.sdpPath = sdp
            o.parameterSets = parsed.value("--parameter-sets")
            return .unpack(capture: rest[1], output: rest[2], options: o)
        }
        if parsed.value("--parameter-sets") != nil { throw LabError(.usage, "--parameter-sets goes with rtp unpack, not pack") }
        var o = RTPPack.Options()
        o.port = port ?? 5004
        o.sdpPath = sdp
        o.packetizer.ssrc = ssrc ?? 0
        o.packetizer.mtu = try Self.integer(parsed, "--mtu", RTPPacketizer.mtuRange) ?? 1400
        o.packetizer.firstSequenceNumber = UInt16(try Self.integer(parsed, "--seq", 0...65_535) ?? 0)
        o.packetizer.timestampOffset = UInt32(try Self.integer(parsed, "--timestamp", 0...Int(UInt32.max)) ?? 0)
        o.packetizer.payloadType = try Self.integer(parsed, "--pt", 96...127) ?? 96
        if let mode = parsed.value("--mode") {
            guard let m = RTPPacketizer.Mode(rawValue: mode) else { throw LabError(.usage, "--mode must be single or non-interleaved, got '\(mode)'") }
            o.packetizer.mode = m
        }
        if let aggregate = parsed.value("--aggregate") {
            guard let a = RTPPacketizer.Aggregation(rawValue: aggregate) else { throw LabError(.usage, "--aggregate must be none or max-stap, got '\(aggregate)'") }
            if o.packetizer.mode == .singleNALUnit && a == .stapA { throw LabError(.usage, "--aggregate max-stap needs --mode non-interleaved (STAP-A is not sent in packetization-mode 0)") }
            o.packetizer.aggregation = a
        }
        if let fps = parsed.value("--fps") {
            let parts = fps.split(separator: "/").map { Int($0) }
            guard (1...2).contains(parts.count), let num = parts[0], let den = parts.count == 2 ? parts[1] : 1, num > 0, den > 0 else {
                throw LabError(.usage, "--fps must be NUM or NUM/DEN, got '\(fps)'")
            }
            o.fps = (num, den)
        }
        if let stored, let db = try parsed.path("--db", what: "a database file") {
            return .pack(input: "", output: rest[1], options: o, stored: (db, stored))
        }
        return .pack(input: rest[1], output: rest[2], options: o, stored: nil)
    }

    func run(_ options: Options) throws -> Int32 {
        func warn(_ line: String) { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
        switch options {
        case let .pack(given, output, o, stored):
            var input = given
            var times: [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)]?
            if let stored {
                let run = try RTPPack.storedRun(databasePath: stored.db, run: stored.run)
                (input, times) = (run.streamPath, run.times)
            }
            let s = try RTPPack.run(input: input, output: output, options: o, storedTimes: times)
            for w in s.warnings { warn("warning: \(oneLine(w))") }
            print("\(input) (\(s.accessUnits) access units, \(s.nalUnits) NAL units) -> \(output) (\(s.packets) RTP packets: \(s.single) single NAL unit, "
                  + "\(s.stapA) STAP-A, \(s.fuA) FU-A; largest \(s.largestPacketBytes) bytes, at most \(s.mostPacketsPerAccessUnit) per access unit, "
                  + "\(s.rtpOverheadBytes) bytes of RTP overhead; \(s.captureBytes) bytes)")
        case let .unpack(capture, output, o):
            let s = try RTPUnpack.run(capture: capture, output: output, options: o)
            for w in s.warnings { warn("warning: \(oneLine(w))") }
            let st = s.statistics
            warn("\(capture): \(st.received) RTP packets (UDP port \(s.port), SSRC \(RTPUnpack.hex(s.ssrc)), payload type \(s.payloadType)): "
                 + "\(st.expected) expected, \(st.lost) lost, \(st.duplicates) duplicates, \(st.reordered) reordered, "
                 + String(format: "jitter %.2f ms (%.1f ticks of 90 kHz)", st.jitterMilliseconds, st.jitterTicks)
                 + ", \(st.discardedNALUnits) NAL units discarded for a lost fragment, \(s.incomplete.count) incomplete access units")
            for i in s.incomplete.prefix(20) {
                warn("  access unit \(i.index) (PTS \(decimal(Double(i.ptsMicroseconds) / 1_000_000, places: 6)) s): incomplete: \(i.reasons.joined(separator: "; "))")
            }
            if s.incomplete.count > 20 { warn("  ... \(s.incomplete.count - 20) more incomplete access units") }
            print("\(capture) (\(s.linkType), UDP port \(s.port), SSRC \(RTPUnpack.hex(s.ssrc))) -> \(output) (annexb, \(s.accessUnits) access units, \(s.nalUnits) NAL units, \(s.bytes) bytes)")
        }
        return 0
    }
}
