import EncoderLab
import EnclabTestSupport
import Foundation
import Testing

/// `enclab rtp pack` and `enclab rtp unpack` against GStreamer's rtph264pay and rtph264depay (gstreamer1.0-plugins-good),
/// tshark's RTP and H.264 dissectors, and the stream's own NAL units.
///
/// GStreamer's packets are caught with `rtph264pay ! identity ! multifilesink`: multifilesink writes each buffer to a
/// file of its own, and `identity` (a GstBaseTransform, which has no chain_list) breaks the buffer lists rtph264pay
/// pushes for FU-A fragments into single buffers, so each file is one RTP packet. The raw stream reaches it through
/// `h264parse` without timestamps, so GStreamer's RTP timestamps are all its `timestamp-offset`: the comparison with
/// GStreamer leaves bytes 4-7 (the timestamp) out, and tshark checks the lab's timestamps against arithmetic instead.
@Suite("rtp pack and unpack, end to end", .serialized)
struct RTPCommandTests {
    /// A 10-frame 96x64 stream from the x264 CLI at 25 fps; `bframes` B-frames, 2 slices per picture.
    func makeStream(_ dir: String, bframes: Int) throws {
        try SyntheticClip(width: 96, height: 64, frames: 10, seed: 5).write(to: "\(dir)/c.y4m")
        let x = try TestSupport.tool("x264", ["--quiet", "--threads", "1", "--bframes", "\(bframes)", "--slices", "2", "--keyint", "5",
                                              "-o", "\(dir)/s.264", "\(dir)/c.y4m"])
        try #require(x.status == 0, "\(x.stderr)")
    }

    @Test("rtp pack refuses a stream whose send times pass 2^32 s (a pcap record's 32-bit ts_sec would wrap to 0): 65 naming the access unit, no capture written; one second less is packed")
    func captureTimeWraps() throws {
        let dir = TestSupport.scratchFolder("enclab-rtp")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 3, seed: 5).write(to: "\(dir)/c.y4m")
        // --fps 1/2147483648: the SPS says 2^31 s a frame (num_units_in_tick 2^31, time_scale 2), so the third access
        // unit is sent 2 x 2^31 = 2^32 s after the first.
        let x = try TestSupport.tool("x264", ["--quiet", "--threads", "1", "--keyint", "1", "--fps", "1/2147483648", "-o", "\(dir)/s.264", "\(dir)/c.y4m"])
        try #require(x.status == 0, "\(x.stderr)")
        let r = try TestSupport.enclab(["rtp", "pack", "s.264", "l.pcap"], in: dir)
        #expect(r.status == 65, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("s.264: access unit 2 (decode order) would be sent 4294967296.000000 s after the first, past the latest capture time a pcap record holds"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/l.pcap"))
        // Two access units (the last sent 2^31 s after the first) fit: tshark reads both times.
        let two = try TestSupport.tool("x264", ["--quiet", "--threads", "1", "--keyint", "1", "--fps", "1/2147483648", "--frames", "2", "-o", "\(dir)/t.264", "\(dir)/c.y4m"])
        try #require(two.status == 0, "\(two.stderr)")
        let p = try TestSupport.enclab(["rtp", "pack", "t.264", "t.pcap"], in: dir)
        #expect(p.status == 0, "\(p.stderr)")
        let times = try TestSupport.tool("tshark", ["-r", "\(dir)/t.pcap", "-T", "fields", "-e", "frame.time_epoch"])
        // Each access unit's packets at its time (FU-A: several a picture), in order.
        let seen = times.stdout.split(separator: "\n").map { Double($0) ?? -1 }
        #expect(Array(Set(seen)).sorted() == [0, 2_147_483_648] && seen == seen.sorted(), "\(seen)")
    }

    /// The NAL units of an Annex B file, split at start codes (trailing zero bytes belong to no NAL unit): a splitter
    /// of the test's own, not the lab's.
    static func nalUnits(_ path: String) throws -> [[UInt8]] {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var starts: [Int] = []
        var i = 0
        while i + 2 < b.count {
            if b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts.enumerated().map { k, s in
            var e = k + 1 < starts.count ? starts[k + 1] - 3 : b.count
            while e > s && b[e - 1] == 0 { e -= 1 }
            return Array(b[s..<e])
        }
    }

    /// Each UDP payload of a capture, by tshark.
    static func udpPayloads(_ pcap: String) throws -> [[UInt8]] {
        let t = try TestSupport.tool("tshark", ["-r", pcap, "-T", "fields", "-e", "udp.payload"])
        try #require(t.status == 0, "\(t.stderr)")
        return t.lines.map { line in
            let digits = Array(line)
            return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
        }
    }

    /// rtph264pay's packets for the raw stream, one per file, in order.
    static func gstreamerPackets(_ dir: String, mtu: Int, aggregate: String) throws -> [[UInt8]] {
        let out = "\(dir)/gst-\(aggregate)"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let g = try TestSupport.tool("gst-launch-1.0", ["-q", "filesrc", "location=\(dir)/s.264", "!", "h264parse", "!", "rtph264pay", "mtu=\(mtu)",
                                                        "aggregate-mode=\(aggregate)", "config-interval=0", "pt=96", "seqnum-offset=65530",
                                                        "ssrc=305419896", "timestamp-offset=0", "!", "identity", "!", "multifilesink",
                                                        "location=\(out)/p%05d.rtp"])
        try #require(g.status == 0, "\(g.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        return try files.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(out)/\($0)"))) }
    }

    /// Packet boundaries and payload bytes (STAP-A, FU-A, single NAL unit), marker bits, sequence numbers across the
    /// 16-bit wrap and SSRC equal rtph264pay's at the same MTU, for both aggregate modes; the timestamp bytes aside.
    @Test(arguments: ["max-stap", "none"])
    func packetsAsRtph264pay(aggregate: String) throws {
        let dir = TestSupport.scratchFolder("rtp-pay")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir, bframes: 2)
        let r = try TestSupport.enclab(["rtp", "pack", "s.264", "l.pcap", "--mtu", "100", "--aggregate", aggregate, "--seq", "65530",
                                        "--ssrc", "0x12345678"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let lab = try Self.udpPayloads("\(dir)/l.pcap")
        let gst = try Self.gstreamerPackets(dir, mtu: 100, aggregate: aggregate)
        func masked(_ p: [UInt8]) -> [UInt8] { Array(p[0..<4]) + Array(p[8...]) }
        #expect(lab.count == gst.count)
        #expect(lab.map(masked) == gst.map(masked))
        #expect(lab.allSatisfy { $0.count <= 100 })
        let kinds = Set(lab.map { Int($0[12] & 0x1F) })
        #expect(kinds.contains(28) && (aggregate == "none" || kinds.contains(24)))
    }

    /// tshark's RTP dissector reads the headers: sequence numbers from 65534 across the wrap, timestamps
    /// 4294960000 + 3600 k modulo 2^32 for frame k (25 fps, no B-frames: PTS k x 40 ms, 40 ms x 90 kHz = 3600), the
    /// marker on each access unit's last packet, payload type 96; its H.264 dissector finds the FU-A start and end bits
    /// paired and the UDP and IPv4 checksums good.
    @Test func headersAsTshark() throws {
        let dir = TestSupport.scratchFolder("rtp-tshark")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir, bframes: 0)
        let r = try TestSupport.enclab(["rtp", "pack", "s.264", "l.pcap", "--mtu", "200", "--seq", "65534", "--timestamp", "4294960000",
                                        "--port", "6000"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let t = try TestSupport.tool("tshark", ["-r", "\(dir)/l.pcap", "-d", "udp.port==6000,rtp", "-d", "rtp.pt==96,h264",
                                                "-o", "udp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-T", "fields",
                                                "-e", "rtp.seq", "-e", "rtp.timestamp", "-e", "rtp.marker", "-e", "rtp.p_type",
                                                "-e", "h264.start.bit", "-e", "h264.end.bit", "-e", "udp.checksum.status", "-e", "ip.checksum.status"])
        try #require(t.status == 0, "\(t.stderr)")
        let rows = t.lines.map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count > 10)
        #expect(rows.map { Int($0[0])! } == rows.indices.map { (65_534 + $0) % 65_536 })
        #expect(rows.allSatisfy { $0[3] == "96" && $0[6] == "1" && $0[7] == "1" })
        // Frame k's packets carry 4294960000 + 3600 k mod 2^32; the frame changes after each marker.
        var frame = 0
        for row in rows {
            #expect(UInt64(row[1])! == (4_294_960_000 + 3600 * UInt64(frame)) % 4_294_967_296)
            if row[2] == "1" { frame += 1 }
        }
        #expect(frame == 10)
        // Every FU-A start is closed by an end before the next start.
        var open = false
        for row in rows where !row[4].isEmpty {
            if row[4] == "1" || row[4] == "True" { #expect(!open); open = true }
            if row[5] == "1" || row[5] == "True" { #expect(open); open = false }
        }
        #expect(!open)
    }

    /// The lab's capture read back gives the stream's NAL units, byte for byte, in order; GStreamer's rtph264depay fed
    /// the same packets (pcapparse) gives the same NAL units (no sprop-parameter-sets in its caps, so it adds none);
    /// `inspect` reads the result.
    @Test func unpackGivesTheStreamBackAsRtph264depay() throws {
        let dir = TestSupport.scratchFolder("rtp-depay")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir, bframes: 2)
        let p = try TestSupport.enclab(["rtp", "pack", "s.264", "l.pcap", "--mtu", "120", "--seq", "65500", "--timestamp", "4294967000",
                                        "--sdp", "s.sdp"], in: dir)
        #expect(p.status == 0, "\(p.stderr)")
        let u = try TestSupport.enclab(["rtp", "unpack", "l.pcap", "back.264"], in: dir)
        #expect(u.status == 0, "\(u.stderr)")
        #expect(u.stderr.contains(" 0 lost, 0 duplicates, 0 reordered"), "\(u.stderr)")
        #expect(u.stderr.contains("0 incomplete access units"), "\(u.stderr)")
        let original = try Self.nalUnits("\(dir)/s.264")
        #expect(try Self.nalUnits("\(dir)/back.264") == original)
        let g = try TestSupport.tool("gst-launch-1.0", ["-q", "filesrc", "location=\(dir)/l.pcap", "!", "pcapparse", "!",
                                                        "application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96", "!",
                                                        "rtph264depay", "!", "video/x-h264,stream-format=byte-stream", "!", "filesink",
                                                        "location=\(dir)/gst.264"])
        try #require(g.status == 0, "\(g.stderr)")
        #expect(try Self.nalUnits("\(dir)/gst.264") == original)
        let i = try TestSupport.enclab(["inspect", "back.264"], in: dir)
        #expect(i.status == 0, "\(i.stderr)")
        // With the SDP's sprop-parameter-sets (CRLF lines), the SPS and PPS (x264's first two NAL units) come first, as
        // rtph264depay writes its caps' parameter sets.
        let sdp = try TestSupport.enclab(["rtp", "unpack", "l.pcap", "sdp.264", "--sdp", "s.sdp"], in: dir)
        #expect(sdp.status == 0, "\(sdp.stderr)")
        #expect(try Self.nalUnits("\(dir)/sdp.264") == Array(original.prefix(2)) + original)
        #expect(original.prefix(2).map { $0[0] & 0x1F } == [7, 8])
        // The same capture as pcapng (editcap, from tshark's wireshark-common) reads the same.
        let e = try TestSupport.tool("editcap", ["-F", "pcapng", "\(dir)/l.pcap", "\(dir)/l.pcapng"])
        try #require(e.status == 0, "\(e.stderr)")
        let ng = try TestSupport.enclab(["rtp", "unpack", "l.pcapng", "ng.264"], in: dir)
        #expect(ng.status == 0, "\(ng.stderr)")
        #expect(try Self.nalUnits("\(dir)/ng.264") == original)
    }

    /// A stored run sent with its frames' stored PTS: each access unit's RTP timestamp (tshark, on its marker packet) is
    /// `pts × timebase_num / timebase_den × 90000` from the frames table (sqlite3), in decode order.
    @Test func storedRunTimedByItsStoredPTS() throws {
        let dir = TestSupport.scratchFolder("rtp-run")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try TestSupport.makeDatabase(in: dir, runs: [["--crf", "23", "--bframes", "2"]])
        let r = try TestSupport.enclab(["rtp", "pack", "--db", db, "--run", "1", "r.pcap"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let timebase = try TestSupport.sqlite(db, "SELECT timebase_num || ' ' || timebase_den FROM runs WHERE run_id = 1")[0].split(separator: " ").map { Int64($0)! }
        let pts = try TestSupport.sqlite(db, "SELECT pts FROM frames WHERE run_id = 1 ORDER BY coded_index").map { Int64($0)! }
        let t = try TestSupport.tool("tshark", ["-r", "\(dir)/r.pcap", "-d", "udp.port==5004,rtp", "-T", "fields", "-e", "rtp.timestamp", "-e", "rtp.marker"])
        var stamps: [Int64] = []
        for line in t.lines {
            let fields = line.split(separator: "\t").map(String.init)
            if fields.count == 2 && fields[1] == "1", let stamp = Int64(fields[0]) { stamps.append(stamp) }
        }
        #expect(stamps.count == pts.count && pts.count > 2)
        let expected: [Int64] = pts.map { (p: Int64) -> Int64 in p * timebase[0] * 90_000 / timebase[1] }
        #expect(stamps == expected)
    }

    /// A pcap by hand: the 24-byte global header (magic a1b2c3d4 little-endian, version 2.4, snaplen 65535, link type)
    /// and records (16-byte header: seconds, microseconds, captured length, original length).
    static func pcap(linkType: UInt32, records: [[UInt8]], cut: Int = 0) -> [UInt8] {
        func le(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        var out = le(0xA1B2C3D4) + [2, 0, 4, 0] + le(0) + le(0) + le(65_535) + le(linkType)
        for (k, r) in records.enumerated() { out += le(UInt32(k)) + le(0) + le(UInt32(r.count)) + le(UInt32(r.count)) + r }
        return Array(out.dropLast(cut))
    }

    /// An IPv4/UDP datagram to port 5004 without checksums (raw IP link type), carrying `payload`.
    static func rawUDP(_ payload: [UInt8]) -> [UInt8] {
        let total = 28 + payload.count
        return [0x45, 0, UInt8(total >> 8), UInt8(total & 0xFF), 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]
            + [0x13, 0x8C, 0x13, 0x8C, UInt8((total - 20) >> 8), UInt8((total - 20) & 0xFF), 0, 0] + payload
    }

    @Test func badCapturesAreRefusedWithTheirReason() throws {
        let dir = TestSupport.scratchFolder("rtp-bad")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An RTP packet holding one slice NAL unit: V=2, M=1, PT 96, seq 1, timestamp 0, SSRC 1.
        let rtp: [UInt8] = [0x80, 0xE0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x65, 0x88, 0x84]
        func write(_ name: String, _ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/\(name)")) }
        // Link type 101 (LINKTYPE_RAW): read.
        try write("good.pcap", Self.pcap(linkType: 101, records: [Self.rawUDP(rtp)]))
        let good = try TestSupport.enclab(["rtp", "unpack", "good.pcap", "good.264"], in: dir)
        #expect(good.status == 0, "\(good.stderr)")
        // The file ends 5 bytes into the record's data.
        try write("cut.pcap", Self.pcap(linkType: 101, records: [Self.rawUDP(rtp), Self.rawUDP(rtp)], cut: 38))
        let cut = try TestSupport.enclab(["rtp", "unpack", "cut.pcap", "out.264"], in: dir)
        #expect(cut.status == 65 && cut.stderr.contains("cut.pcap: record 1 cannot be read"), "\(cut.stderr)")
        // Link type 105 (IEEE 802.11).
        try write("wifi.pcap", Self.pcap(linkType: 105, records: [Self.rawUDP(rtp)]))
        let wifi = try TestSupport.enclab(["rtp", "unpack", "wifi.pcap", "out.264"], in: dir)
        #expect(wifi.status == 65 && wifi.stderr.contains("link type IEEE802_11"), "\(wifi.stderr)")
        // A UDP datagram that is not RTP (first byte 0x12: version 0).
        try write("dns.pcap", Self.pcap(linkType: 101, records: [Self.rawUDP([0x12, 0x34, 0x01, 0x00] + [UInt8](repeating: 0, count: 12))]))
        let dns = try TestSupport.enclab(["rtp", "unpack", "dns.pcap", "out.264", "--port", "5004"], in: dir)
        #expect(dns.status == 65 && dns.stderr.contains("is not RTP"), "\(dns.stderr)")
        let any = try TestSupport.enclab(["rtp", "unpack", "dns.pcap", "out.264"], in: dir)
        #expect(any.status == 65 && any.stderr.contains("no RTP packets"), "\(any.stderr)")
        // Not a capture at all.
        try write("text.pcap", Array("hello, not a capture\n".utf8))
        let text = try TestSupport.enclab(["rtp", "unpack", "text.pcap", "out.264"], in: dir)
        #expect(text.status == 65, "\(text.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/out.264"))
        // A NAL unit over the MTU in single NAL unit mode.
        try makeStream(dir, bframes: 0)
        let single = try TestSupport.enclab(["rtp", "pack", "s.264", "o.pcap", "--mode", "single", "--aggregate", "none", "--mtu", "100"], in: dir)
        #expect(single.status == 65 && single.stderr.contains("(packetization-mode 0) cannot fragment"), "\(single.stderr)")
    }

    /// The message said "invalid NAL unit 3 of access unit 0 at byte 3" (an index printed as a byte offset) and, at
    /// mtu 65507, still "use non-interleaved mode or a larger MTU", though no larger mtu exists. Sizes and types here
    /// are the test's own split of the file at its start codes.
    @Test("pack --mode single with a NAL unit over the mtu: 65 naming it (index, type, size) against mtu - 12 and the mtu that fits all, or saying no mtu fits and FU-A is needed")
    func singleModeTooLarge() throws {
        let dir = TestSupport.scratchFolder("rtp-single")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir, bframes: 0)
        let nals = try Self.nalUnits("\(dir)/s.264")
        let (index, nal) = try #require(nals.enumerated().first { $0.element.count > 100 - 12 })
        let needed = nals.map(\.count).max()! + 12
        let r = try TestSupport.enclab(["rtp", "pack", "s.264", "o.pcap", "--mode", "single", "--mtu", "100"], in: dir)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("enclab: s.264: --mode single: NAL unit "), "\(r.stderr)")
        #expect(r.stderr.hasSuffix(", nal_unit_type \(nal[0] & 0x1f); the stream's NAL unit \(index)) is \(nal.count) bytes, larger than the 88 bytes a single "
                                   + "NAL unit packet holds at mtu 100 (after the 12-byte RTP header); single NAL unit mode (packetization-mode 0) cannot "
                                   + "fragment: use --mode non-interleaved (FU-A), or an --mtu of at least \(needed)\n"), "\(r.stderr)")
        #expect(!r.stderr.contains("at byte"), "\(r.stderr)")
        // The mtu offered fits every NAL unit; one byte less does not.
        #expect(try TestSupport.enclab(["rtp", "pack", "s.264", "o.pcap", "--mode", "single", "--mtu", "\(needed - 1)"], in: dir).status == 65)
        let fits = try TestSupport.enclab(["rtp", "pack", "s.264", "o.pcap", "--mode", "single", "--mtu", "\(needed)"], in: dir)
        #expect(fits.status == 0, "\(fits.stderr)")
        // Lossless (qp 0) noise: the IDR slice is over 65495 bytes, more than the largest mtu (65507) holds.
        try SyntheticClip(width: 640, height: 480, frames: 1, seed: 5).write(to: "\(dir)/n.y4m")
        let x = try TestSupport.tool("x264", ["--quiet", "--threads", "1", "--preset", "veryfast", "--qp", "0", "-o", "\(dir)/n.264", "\(dir)/n.y4m"])
        try #require(x.status == 0, "\(x.stderr)")
        let bigNeeded = try Self.nalUnits("\(dir)/n.264").map(\.count).max()! + 12
        try #require(bigNeeded > 65_507, "\(bigNeeded)")
        let big = try TestSupport.enclab(["rtp", "pack", "n.264", "n.pcap", "--mode", "single", "--mtu", "65507"], in: dir)
        #expect(big.status == 65, "\(big.stderr)")
        #expect(big.stderr.hasSuffix("at mtu 65507 (after the 12-byte RTP header); single NAL unit mode (packetization-mode 0) cannot fragment: "
                                     + "no mtu fits it (it needs \(bigNeeded), the largest is 65507): use --mode non-interleaved (FU-A)\n"), "\(big.stderr)")
        #expect(!big.stderr.contains("larger MTU") && !big.stderr.contains("at byte"), "\(big.stderr)")
    }

    /// The read paths no capture of the lab's own takes (issue 23): IPv6 (over Ethernet, in a pcapng written by
    /// Wireshark's text2pcap), LINUX_SLL (`tcpdump -i any`; the 16-byte cooked header by hand, which tshark reads as
    /// sll:ethertype:ip:udp:rtp), a NAL unit with forbidden_zero_bit 1 (kept, with a warning naming it), and an --sdp
    /// file whose sprop-parameter-sets is not base64 (65 naming the file, not "no such file" 66).
    @Test func ipv6AndLinuxCookedCapturesForbiddenBitAndMalformedSDP() throws {
        let dir = TestSupport.scratchFolder("rtp-paths")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func write(_ name: String, _ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/\(name)")) }
        func read(_ name: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name)"))) }
        // One RTP packet holding an IDR slice NAL unit: V=2, M=1, PT 96, seq 1, timestamp 0, SSRC 1.
        let rtp: [UInt8] = [0x80, 0xE0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x65, 0x88, 0x84]
        try ("0000  " + rtp.map { String(format: "%02x", $0) }.joined(separator: " ") + "\n").write(toFile: "\(dir)/rtp.txt", atomically: true, encoding: .utf8)
        let t2p = try TestSupport.tool("text2pcap", ["-q", "-6", "::1,::2", "-u", "5004,5004", "\(dir)/rtp.txt", "\(dir)/v6.pcapng"])
        try #require(t2p.status == 0, "\(t2p.stderr)")
        let v6Protocols = try TestSupport.tool("tshark", ["-r", "\(dir)/v6.pcapng", "-d", "udp.port==5004,rtp", "-T", "fields", "-e", "frame.protocols"])
        #expect(v6Protocols.lines == ["eth:ethertype:ipv6:udp:rtp"], "\(v6Protocols.lines)")
        let v6 = try TestSupport.enclab(["rtp", "unpack", "v6.pcapng", "v6.264"], in: dir)
        #expect(v6.status == 0, "\(v6.stderr)")
        #expect(try read("v6.264") == [0, 0, 0, 1, 0x65, 0x88, 0x84])
        // LINUX_SLL (113): packet type 0, ARPHRD_ETHER 1, address length 6, 8 address bytes, protocol 0x0800.
        let sll: [UInt8] = [0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00] + Self.rawUDP(rtp)
        try write("sll.pcap", Self.pcap(linkType: 113, records: [sll]))
        let sllProtocols = try TestSupport.tool("tshark", ["-r", "\(dir)/sll.pcap", "-d", "udp.port==5004,rtp", "-T", "fields", "-e", "frame.protocols"])
        #expect(sllProtocols.lines == ["sll:ethertype:ip:udp:rtp"], "\(sllProtocols.lines)")
        let cooked = try TestSupport.enclab(["rtp", "unpack", "sll.pcap", "sll.264"], in: dir)
        #expect(cooked.status == 0 && cooked.stdout.contains("LINUX_SLL"), "\(cooked.stdout) \(cooked.stderr)")
        #expect(try read("sll.264") == [0, 0, 0, 1, 0x65, 0x88, 0x84])
        // forbidden_zero_bit 1 (header 0xE5: F 1, NRI 3, type 5): kept as received, with a warning.
        var marked = rtp
        marked[12] = 0xE5
        try write("f.pcap", Self.pcap(linkType: 101, records: [Self.rawUDP(marked)]))
        let f = try TestSupport.enclab(["rtp", "unpack", "f.pcap", "f.264"], in: dir)
        #expect(f.status == 0 && f.stderr.contains("access unit 0 (RTP timestamp 0), NAL unit 0 (nal_unit_type 5) has forbidden_zero_bit 1"), "\(f.stderr)")
        #expect(try read("f.264") == [0, 0, 0, 1, 0xE5, 0x88, 0x84])
        // An SDP whose sprop-parameter-sets is not base64: 65 naming the file.
        try "v=0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z0IA!!,aM4=\r\n"
            .write(toFile: "\(dir)/bad.sdp", atomically: true, encoding: .utf8)
        let sdp = try TestSupport.enclab(["rtp", "unpack", "sll.pcap", "sdp.264", "--sdp", "bad.sdp"], in: dir)
        #expect(sdp.status == 65 && sdp.stderr.contains("--sdp bad.sdp: sprop-parameter-sets 'Z0IA!!,aM4=' is not base64"), "\(sdp.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/sdp.264"))
    }
}
