import Foundation
import Testing
import EncoderLab

/// `inspect` and `convert` on a field-coded (PAFF) stream, made by ``FieldStream`` (4 frames of 64x64 at 25 fps,
/// coded as 8 fields, the first field of frames 0 and 2 an IDR), checked against FFmpeg's reading of the same
/// bytes: `trace_headers` (field_pic_flag, bottom_field_flag, nal_unit_type per slice), ffprobe (8 packets of
/// 0.020 s, 4 decoded frames of 64x64) and `-c copy -f framecrc` (each packet's PTS, DTS and duration).
@Suite("field pictures, end to end", .serialized)
struct FieldPictureTests {
    let cli = CommandLineTests()

    func run(_ tool: String, _ args: [String], in dir: String) throws -> CommandLineTests.Result {
        let r = try CommandLineTests.process("/usr/bin/\(tool)", args, in: dir)
        try #require(r.status == 0, "\(tool) \(args): \(r.stderr)")
        return r
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// (nal_unit_type, field_pic_flag, bottom_field_flag) of each slice, as trace_headers reads them.
    func tracedSlices(_ file: String, in dir: String) throws -> [(type: Int, field: Int, bottom: Int)] {
        let trace = try run("ffmpeg", ["-hide_banner", "-nostats", "-i", file, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"], in: dir)
        var slices: [(type: Int, field: Int, bottom: Int)] = []
        var type = 0
        for line in trace.stderr.split(separator: "\n") {
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 4, let v = Int(f[f.count - 1]) else { continue }
            switch f[f.count - 4] {
            case "nal_unit_type": type = v
            case "field_pic_flag": slices.append((type, v, 0))
            case "bottom_field_flag": slices[slices.count - 1].bottom = v
            default: break
            }
        }
        return slices
    }

    /// (flags, pts_us, dts_us) of each packet of a packet file (PACKETS.md: flags at byte 1, pts_us at 10, dts_us
    /// at 18; then the parameter sets and the body, walked by their lengths).
    func packets(_ path: String) throws -> [(flags: UInt8, pts: Int64, dts: Int64)] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func i64(_ o: Int) -> Int64 { bytes[o..<(o + 8)].reduce(Int64(0)) { $0 << 8 | Int64($1) } }
        func u(_ o: Int, _ n: Int) -> Int { bytes[o..<(o + n)].reduce(0) { $0 << 8 | Int($1) } }
        var out: [(flags: UInt8, pts: Int64, dts: Int64)] = []
        var o = 0
        while o < bytes.count {
            out.append((bytes[o + 1], i64(o + 10), i64(o + 18)))
            var p = o + 26
            let sps = u(p, 1); p += 1
            for _ in 0..<sps { p += 2 + u(p, 2) }
            let pps = u(p, 1); p += 1
            for _ in 0..<pps { p += 2 + u(p, 2) }
            p += 4 + u(p, 4)
            o = p
        }
        return out
    }

    /// The hashes of `ffmpeg -f framemd5` lines (one per decoded picture).
    func md5s(_ args: [String], in dir: String) throws -> [String] {
        let r = try run("ffmpeg", ["-hide_banner", "-v", "error"] + args + ["-f", "framemd5", "-"], in: dir)
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    @Test("the hand-made stream is what it claims: 8 field slices, 8 packets of 0.020 s, 4 frames of 64x64 decoded exactly")
    func witnesses() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FieldStream.make(in: dir, name: "paff.264", idrFrames: [0, 2])
        let slices = try tracedSlices("paff.264", in: dir)
        #expect(slices.map(\.type) == [5, 1, 1, 1, 5, 1, 1, 1])
        #expect(slices.map(\.field) == [1, 1, 1, 1, 1, 1, 1, 1])
        #expect(slices.map(\.bottom) == [0, 1, 0, 1, 0, 1, 0, 1])
        let durations = try run("ffprobe", ["-v", "error", "-show_entries", "packet=duration_time", "-of", "csv=p=0", "paff.264"], in: dir)
        #expect(durations.stdout.split(separator: "\n") == Array(repeating: "0.020000", count: 8))
        let decoded = try run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=width,height,nb_read_frames", "-of", "csv=p=0", "paff.264"], in: dir)
        #expect(decoded.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "64,64,4")
        // FFmpeg decodes the fields into the pictures of the field encode woven top field first, and not bottom first.
        let paff = try md5s(["-i", "paff.264"], in: dir)
        #expect(paff.count == 4)
        #expect(paff == (try md5s(["-i", "fields.264", "-vf", "weave=first_field=top"], in: dir)))
        #expect(paff != (try md5s(["-i", "fields.264", "-vf", "weave=first_field=bottom"], in: dir)))
    }

    @Test("inspect: 8 field access units with their flags, in 4 frames (field pairs) of which 2 are IDR frames")
    func inspect() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FieldStream.make(in: dir, name: "paff.264", idrFrames: [0, 2])
        let slices = try tracedSlices("paff.264", in: dir)
        let r = try cli.enclab(["inspect", "paff.264", "--json"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let root = try json(r.stdout)
        let units = try #require(root["access_units"] as? [[String: Any]])
        try #require(units.count == 8 && slices.count == 8)
        for (u, s) in zip(units, slices) {
            #expect(u["field_pic_flag"] as? Bool == (s.field == 1))
            #expect(u["bottom_field_flag"] as? Bool == (s.bottom == 1))
            #expect(u["idr"] as? Bool == (s.type == 5))
        }
        // Access units 2k and 2k+1 are frame k.
        #expect(units.map { $0["frame"] as? Int } == [0, 0, 1, 1, 2, 2, 3, 3])
        let frames = try #require(root["frames"] as? [[String: Any]])
        #expect(frames.map { $0["access_units"] as? [Int] } == [[0, 1], [2, 3], [4, 5], [6, 7]])
        #expect(frames.map { $0["structure"] as? String } == Array(repeating: "complementary reference field pair", count: 4))
        #expect(frames.map { $0["picture"] as? String } == ["IDR", "I", "IDR", "I"])
        let counts = try #require(root["frame_counts"] as? [String: Any])
        #expect(counts["frames"] as? Int == 4 && counts["field_pairs"] as? Int == 2 * 2 && counts["non_paired_fields"] as? Int == 0)
        #expect(counts["pictures"] as? [String: Int] == ["IDR": 2, "I": 2, "P": 0, "Bref": 0, "B": 0])

        let text = try cli.enclab(["inspect", "paff.264"], in: dir)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.contains("Frames (a field pair counted once): 4 (4 field pairs, 0 non-paired fields): IDR 2, I 2, P 0, Bref 0, B 0"))
        let fieldLines = lines.filter { $0.contains(" field of frame ") }
        #expect(fieldLines.count == 8)
        for (k, line) in fieldLines.enumerated() {
            #expect(line.hasSuffix("\(slices[k].bottom == 1 ? "bottom" : "top") field of frame \(k / 2)"), "\(line)")
        }
    }

    @Test("convert to packets: a field lasts one tick (0.020 s at 25 fps); PTS and DTS are FFmpeg's, and the packets decode the same")
    func packetTimes() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FieldStream.make(in: dir, name: "paff.264", idrFrames: [0, 2])
        // FFmpeg's times for the raw stream's packets, timebase 1/1200000 s (the "#tb" line), as microseconds.
        let crc = try run("ffmpeg", ["-hide_banner", "-v", "error", "-i", "paff.264", "-c", "copy", "-f", "framecrc", "-"], in: dir)
        #expect(crc.stdout.contains("#tb 0: 1/1200000\n"))
        let ffmpeg = crc.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            $0.split(separator: ",").map { Int64($0.trimmingCharacters(in: .whitespaces)) ?? 0 }.map { $0 * 1_000_000 / 1_200_000 }
        }   // stream, dts, pts, duration, size, crc
        try #require(ffmpeg.count == 8)
        #expect(ffmpeg.allSatisfy { $0[3] == 20_000 })

        let r = try cli.enclab(["convert", "--to", "packets", "paff.264", "p.pkt"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: "\(dir)/p.pkt")[.size] as? Int)
        #expect(r.stdout == "paff.264 (annexb, 25 NAL units, 8 access units) -> p.pkt (packets, \(size) bytes)\n")
        let times = try packets("\(dir)/p.pkt")
        try #require(times.count == 8)
        #expect(times.map(\.pts) == ffmpeg.map { $0[2] })
        #expect(times.map(\.dts) == ffmpeg.map { $0[1] })
        #expect(times.map(\.pts) == (0..<8).map { Int64($0) * 20_000 })   // 8 x 0.020 s: 4 frames at 25 fps
        #expect(times.map(\.flags) == [1, 0, 0, 0, 1, 0, 0, 0])

        // --fps gives the frame rate: a field is half a frame.
        for (fps, step) in [("25", Int64(20_000)), ("50", 10_000), ("30000/1001", 16_683)] {
            let f = try cli.enclab(["convert", "--to", "packets", "--fps", fps, "paff.264", "f.pkt"], in: dir)
            #expect(f.status == 0, "\(f.stderr)")
            let t = try packets("\(dir)/f.pkt").map(\.pts)
            #expect(t[1] == step, "--fps \(fps)")
            // 7 fields of 1001/60000 s: 116,783.33 us, rounded.
            if fps == "30000/1001" { #expect(t[7] == 116_783) }
        }

        // Back to Annex B from the packets: FFmpeg decodes the same pictures.
        let back = try cli.enclab(["convert", "--to", "annexb", "p.pkt", "back.264"], in: dir)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try md5s(["-i", "back.264"], in: dir) == md5s(["-i", "paff.264"], in: dir))
    }

    @Test("a progressive stream: one frame per access unit, no field lines")
    func progressive() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 3).write(to: "\(dir)/c.y4m")
        _ = try run("x264", ["--quiet", "--threads", "1", "--bframes", "2", "-o", "s.264", "c.y4m"], in: dir)
        let root = try json(try cli.enclab(["inspect", "s.264", "--json"], in: dir).stdout)
        let units = try #require(root["access_units"] as? [[String: Any]])
        #expect(units.map { $0["frame"] as? Int } == Array(0..<6))
        #expect(units.allSatisfy { $0["field_pic_flag"] as? Bool == false && $0["bottom_field_flag"] as? Bool == false })
        let counts = try #require(root["frame_counts"] as? [String: Any])
        let pictures = try #require(counts["pictures"] as? [String: Int])
        #expect(counts["frames"] as? Int == 6 && counts["field_pairs"] as? Int == 0 && pictures.values.reduce(0, +) == 6)
        // The frames table's names, counted from the access units' own.
        #expect(pictures["IDR"] == units.filter { $0["picture"] as? String == "IDR" }.count && pictures["IDR"] == 1)
        let text = try cli.enclab(["inspect", "s.264"], in: dir)
        #expect(!text.stdout.contains(" field of frame "))
    }
}
