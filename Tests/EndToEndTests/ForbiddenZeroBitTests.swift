import Foundation
import Testing
import EncoderLab

/// `enclab inspect` on an x264 stream with one NAL unit header's forbidden_zero_bit set (H.264 7.4.1: it shall
/// be 0): listed with the bit, a warning naming the NAL unit and its offset, exit 0; `--strict` makes it an
/// error (65). Which NAL unit is affected is found by scanning the bytes here and confirmed by FFmpeg.
@Suite("inspect: forbidden_zero_bit, end to end", .serialized)
struct ForbiddenZeroBitTests {
    let cli = CommandLineTests()

    /// NAL units of an Annex B stream by a plain scan: the offset after each 00 00 01 and the size up to the next
    /// start code (its 4-byte form's zero_byte and any trailing zeros excluded).
    static func scan(_ bytes: [UInt8]) -> [(offset: Int, size: Int)] {
        var starts: [Int] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts.enumerated().map { k, start in
            var end = k + 1 < starts.count ? starts[k + 1] - 3 : bytes.count
            while end > start && bytes[end - 1] == 0 { end -= 1 }
            return (start, end - start)
        }
    }

    /// A 6-frame x264 stream (no B-frames, one slice a picture: SPS, PPS, SEI, IDR, then one P slice a picture)
    /// and the same stream with the top bit of NAL unit 5's header byte (the second P slice) flipped.
    func makeStreams(_ dir: String) throws -> (offset: Int, nals: [(offset: Int, size: Int)]) {
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 9).write(to: "\(dir)/c.y4m")
        let x = try CommandLineTests.process("/usr/bin/x264", ["--quiet", "--threads", "1", "--bframes", "0", "--qp", "40",
                                                              "-o", "s.264", "c.y4m"], in: dir)
        try #require(x.status == 0, "\(x.stderr)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.264")))
        let nals = Self.scan(bytes)
        // nal_unit_type is the header's low 5 bits: 7 SPS, 8 PPS, 6 SEI, 5 IDR slice, then 1 (slices).
        try #require(nals.map { Int(bytes[$0.offset] & 0x1F) } == [7, 8, 6, 5, 1, 1, 1, 1, 1])
        try #require(nals.allSatisfy { bytes[$0.offset] & 0x80 == 0 })
        let offset = nals[5].offset
        bytes[offset] ^= 0x80
        try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/f.264"))
        return (offset, nals)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("listed with the bit (text and --json), a warning naming NAL unit 5 and its offset, exit 0")
    func lenient() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (offset, nals) = try makeStreams(dir)
        let warning = "warning: f.264: NAL unit 5 at byte \(offset) has forbidden_zero_bit 1 (H.264 7.4.1: shall be 0); listed and read as its nal_unit_type 1 (Slice) says\n"

        let text = try cli.enclab(["inspect", "f.264"], in: dir)
        #expect(text.status == 0)
        #expect(text.stderr == warning)
        let flagged = text.stdout.split(separator: "\n").filter { $0.contains("forbidden_zero_bit") }
        #expect(flagged == ["  [5] offset \(offset) size \(nals[5].size) type 1 (Slice) ref_idc 2 forbidden_zero_bit 1"])

        let r = try cli.enclab(["inspect", "f.264", "--json"], in: dir)
        #expect(r.status == 0)
        #expect(r.stderr == warning)
        let listed = try #require(try json(r.stdout)["nal_units"] as? [[String: Any]])
        #expect(listed.map { $0["forbidden_zero_bit"] as? Int } == [0, 0, 0, 0, 0, 1, 0, 0, 0])
        #expect(listed.map { $0["offset"] as? Int } == nals.map(\.offset))
        // Apart from the bit, the listing is the original stream's.
        let original = try json(try cli.enclab(["inspect", "s.264", "--json"], in: dir).stdout)
        let originalNALs = try #require(original["nal_units"] as? [[String: Any]])
        #expect(originalNALs.map { $0["forbidden_zero_bit"] as? Int } == Array(repeating: 0, count: 9))
        let strip = { (list: [[String: Any]]) in list.map { $0.filter { $0.key != "forbidden_zero_bit" }.mapValues { "\($0)" } } }
        #expect(strip(listed) == strip(originalNALs))
        let units = try #require(try json(r.stdout)["access_units"] as? [[String: Any]])
        #expect(units.map { $0["nal_units"] as? [Int] } == [[0, 1, 2, 3], [4], [5], [6], [7], [8]])

        // FFmpeg's reader refuses that one NAL unit ("Invalid NAL unit ..., skipping.") in the third packet, the
        // access unit (2) that holds NAL unit 5; no other packet is affected.
        let trace = try CommandLineTests.process("/usr/bin/ffmpeg", ["-hide_banner", "-nostats", "-i", "f.264", "-c", "copy",
                                                                    "-bsf:v", "trace_headers", "-f", "null", "-"], in: dir)
        var packet = -1
        var refused: [Int] = []
        for line in trace.stderr.split(separator: "\n") where line.contains("[trace_headers") {
            if line.contains("Packet:") { packet += 1 }
            if line.contains("Invalid NAL unit") { refused.append(packet) }
        }
        #expect(refused == [2])
    }

    @Test("--strict: exit 65, one line naming the NAL unit and its offset, nothing listed; a clean stream passes")
    func strict() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (offset, nals) = try makeStreams(dir)
        for args in [["inspect", "f.264", "--strict"], ["inspect", "--json", "--strict", "f.264"]] {
            let r = try cli.enclab(args, in: dir)
            #expect(r.status == 65)
            #expect(r.stderr == "enclab: f.264: NAL unit 5 at byte \(offset) has forbidden_zero_bit 1 (H.264 7.4.1: shall be 0)\n")
            #expect(r.stdout.isEmpty)
        }
        let clean = try cli.enclab(["inspect", "s.264", "--strict"], in: dir)
        #expect(clean.status == 0 && clean.stderr.isEmpty)
        // As AVCC with 4-byte lengths, NAL unit 5's header sits after six lengths and NAL units 0-4:
        // 6 * 4 + the sum of their sizes.
        #expect(try cli.enclab(["convert", "--to", "avcc", "f.264", "f.avcc"], in: dir).status == 0)
        let avccOffset = 6 * 4 + nals[0..<5].reduce(0) { $0 + $1.size }
        let avcc = try cli.enclab(["inspect", "f.avcc", "--from", "avcc", "--strict"], in: dir)
        #expect(avcc.status == 65)
        #expect(avcc.stderr == "enclab: f.avcc: NAL unit 5 at byte \(avccOffset) has forbidden_zero_bit 1 (H.264 7.4.1: shall be 0)\n")
    }
}
