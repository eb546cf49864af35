import Foundation
import Testing
import EncoderLab

/// `enclab inspect` and `enclab convert` on streams written by the x264 CLI, checked against ffprobe and
/// trace_headers' reading of the same bytes.
@Suite("inspect and convert, end to end", .serialized)
struct BitstreamCommandTests {
    let cli = CommandLineTests()

    func run(_ tool: String, _ args: [String], in dir: String) throws -> CommandLineTests.Result {
        try CommandLineTests.process("/usr/bin/\(tool)", args, in: dir)
    }

    /// A 20-frame stream from the x264 CLI with B-frames (pyramid) and 2 slices per picture.
    func makeStream(_ dir: String) throws {
        try SyntheticClip(width: 64, height: 48, frames: 20, seed: 8).write(to: "\(dir)/c.y4m")
        let x = try run("x264", ["--quiet", "--threads", "1", "--bframes", "3", "--slices", "2", "-o", "s.264", "c.y4m"], in: dir)
        try #require(x.status == 0, "\(x.stderr)")
    }

    @Test("inspect --json: NAL units and access units agree with ffprobe and trace_headers")
    func inspectJSON() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir)
        let r = try cli.enclab(["inspect", "s.264", "--json"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let nals = try #require(root["nal_units"] as? [[String: Any]])
        let units = try #require(root["access_units"] as? [[String: Any]])
        #expect(units.count == 20)
        // trace_headers reads nal_unit_type and nal_ref_idc of every NAL unit of the same file, in order
        // (the first SPS and PPS are printed twice: once from the extradata ffmpeg extracts).
        let trace = try run("ffmpeg", ["-hide_banner", "-nostats", "-i", "s.264", "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"], in: dir)
        var traced: [(Int, Int)] = []
        var ref = 0
        var packetsSeen = false
        for line in trace.stderr.split(separator: "\n") {
            if line.contains("Packet:") { packetsSeen = true; continue }
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard packetsSeen, f.count >= 4, let v = Int(f[f.count - 1]) else { continue }
            if f[f.count - 4] == "nal_ref_idc" || f.dropLast(3).last == "nal_ref_idc" { ref = v }
            if f.contains("nal_unit_type") { traced.append((v, ref)) }
        }
        #expect(traced.count == nals.count)
        for (n, t) in zip(nals, traced) {
            #expect(n["nal_unit_type"] as? Int == t.0)
            #expect(n["nal_ref_idc"] as? Int == t.1)
        }
        // Two slices per picture.
        #expect(units.allSatisfy { ($0["slice_types"] as? [String])?.count == 2 })
        // Offsets point at NAL headers: the byte before each is the 0x01 of a start code.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.264")))
        for n in nals {
            let offset = try #require(n["offset"] as? Int), size = try #require(n["size"] as? Int)
            #expect(bytes[offset - 1] == 1 && offset + size <= bytes.count)
            #expect(Int(bytes[offset] & 0x1F) == n["nal_unit_type"] as? Int)
        }
        let sps = try #require((root["sps"] as? [[String: Any]])?.first)
        #expect(sps["width"] as? Int == 64 && sps["height"] as? Int == 48)
        #expect(sps["profile_idc"] as? Int == 100)
    }

    @Test("convert Annex B -> AVCC (+avcC) -> packets -> Annex B keeps every slice and SEI byte, and ffprobe decodes it")
    func convertChain() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir)
        for args in [["convert", "--to", "avcc", "s.264", "s.avcc", "--avcc-config", "s.avcC", "--length-size", "2"],
                     ["convert", "--to", "packets", "--length-size", "2", "s.avcc", "s.pkt"],
                     ["convert", "--to", "annexb", "s.pkt", "back.264"]] {
            let r = try cli.enclab(args, in: dir)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let original = try cli.enclab(["inspect", "s.264", "--json"], in: dir)
        let back = try cli.enclab(["inspect", "back.264", "--json"], in: dir)
        func payloads(_ json: String, _ file: String) throws -> [[UInt8]] {
            let root = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(file)")))
            return (root["nal_units"] as! [[String: Any]]).compactMap { n in
                let type = n["nal_unit_type"] as! Int
                guard [1, 5, 6].contains(type) else { return nil }
                let o = n["offset"] as! Int, s = n["size"] as! Int
                return Array(bytes[o..<(o + s)])
            }
        }
        #expect(try payloads(original.stdout, "s.264") == payloads(back.stdout, "back.264"))
        let probe = try run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", "back.264"], in: dir)
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "20")
        // avcC: version 1, profile 100, lengthSizeMinusOne = 1 (2-byte lengths) in the low 2 bits of byte 4.
        let avcC = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.avcC")))
        #expect(avcC[0] == 1 && avcC[1] == 100 && avcC[4] & 3 == 1)
    }

    @Test("packets derived from Annex B carry the PTS and DTS the x264 CLI's FLV has (ms)")
    func packetTimes() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir)
        let x = try run("x264", ["--quiet", "--threads", "1", "--bframes", "3", "--slices", "2", "-o", "s.flv", "c.y4m"], in: dir)
        try #require(x.status == 0)
        let r = try cli.enclab(["convert", "--to", "packets", "s.264", "s.pkt"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try run("ffprobe", ["-v", "error", "-show_packets", "-show_entries", "packet=pts,dts", "-of", "csv=p=0", "s.flv"], in: dir)
        let flv = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { Int($0) } }
        // Packet layout (PACKETS.md): pts_us at byte 10, dts_us at 18 of each packet; walk the file.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.pkt")))
        func i64(_ o: Int) -> Int64 { bytes[o..<(o + 8)].reduce(Int64(0)) { $0 << 8 | Int64($1) } }
        func u(_ o: Int, _ n: Int) -> Int { bytes[o..<(o + n)].reduce(0) { $0 << 8 | Int($1) } }
        var times: [(Int64, Int64)] = []
        var o = 0
        while o < bytes.count {
            times.append((i64(o + 10), i64(o + 18)))
            var p = o + 26
            let sps = u(p, 1); p += 1
            for _ in 0..<sps { p += 2 + u(p, 2) }
            let pps = u(p, 1); p += 1
            for _ in 0..<pps { p += 2 + u(p, 2) }
            p += 4 + u(p, 4)
            o = p
        }
        try #require(times.count == flv.count && times.count == 20)
        // FLV times are milliseconds with DTS starting at 0: compare PTS - DTS and DTS steps (25 fps: 40 ms).
        for k in 0..<20 {
            #expect((times[k].0 - times[k].1) / 1000 == Int64(flv[k][0] - flv[k][1]), "packet \(k)")
            if k > 0 { #expect((times[k].1 - times[k - 1].1) / 1000 == Int64(flv[k][1] - flv[k - 1][1])) }
        }
    }

    @Test("bad streams: one line naming the file and what is wrong, exit 65")
    func badStream() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A start code, then an SPS header byte and nothing else: profile_idc cannot be read.
        try Data([0, 0, 0, 1, 0x67]).write(to: URL(fileURLWithPath: "\(dir)/cut.264"))
        let r = try cli.enclab(["inspect", "cut.264"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("enclab: cut.264: "))
        #expect(r.stderr.split(separator: "\n").count == 1)
        let missing = try cli.enclab(["convert", "--to", "avcc", "none.264", "o.avcc"], in: dir)
        #expect(missing.status == 66 && missing.stderr == "enclab: none.264: no such file\n")
        let size = try cli.enclab(["convert", "--to", "avcc", "--length-size", "3", "cut.264", "o.avcc"], in: dir)
        #expect(size.status == 64 && size.stderr == "enclab: --length-size must be 1, 2 or 4, got '3' (see 'enclab convert --help')\n")
    }
}
