import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// `enclab inspect` and `enclab convert` given streams that hold nothing, streams sized to exhaust memory, and
/// packets whose fields break PACKETS.md (issue 17, item 6: silent nonsense, memory on hostile sizes).
@Suite("inspect and convert on empty, huge and inconsistent streams, end to end", .serialized)
struct HostileStreamTests {
    let cli = CommandLineTests()

    func run(_ tool: String, _ args: [String], in dir: String) throws -> CommandLineTests.Result {
        try CommandLineTests.process("/usr/bin/\(tool)", args, in: dir)
    }

    func write(_ bytes: [UInt8], _ dir: String, _ name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/\(name)"))
    }

    func exists(_ dir: String, _ name: String) -> Bool { FileManager.default.fileExists(atPath: "\(dir)/\(name)") }

    /// `enclab ARGS` with its address space limited to `megabytes` (`ulimit -v` in the shell that execs it): an
    /// allocation beyond the limit fails, and Swift ends the process with SIGTRAP or SIGABRT instead of exit 65.
    func enclabLimited(_ megabytes: Int, _ arguments: [String], in dir: String) throws -> CommandLineTests.Result {
        try TestSupport.process("/bin/sh", ["-c", "ulimit -v \(megabytes * 1024) && exec \"$0\" \"$@\"", TestSupport.binary] + arguments, in: dir)
    }

    /// A 6-frame x264 CLI stream without B-frames: IDR then five P pictures, with VUI timing (25 fps).
    func x264(_ dir: String) throws {
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 3).write(to: "\(dir)/c.y4m")
        let x = try run("x264", ["--quiet", "--threads", "1", "--bframes", "0", "--fps", "25", "-o", "s.264", "c.y4m"], in: dir)
        try #require(x.status == 0, "\(x.stderr)")
    }

    // MARK: Streams with no NAL unit

    /// One version-1 packet with no parameter set and an empty body, by PACKETS.md's layout: version 1, flags 0,
    /// decode_order, pts_us and dts_us 0 (24 bytes), sps_count 0, pps_count 0, body_length 0.
    static let emptyPacket: [UInt8] = [1, 0] + [UInt8](repeating: 0, count: 24) + [0, 0] + [0, 0, 0, 0]

    /// The streams with no NAL unit, by file name.
    static let nothing: [String: [UInt8]] = [
        // 4 KiB of 0x00: no start code, every AVCC length 0, packet version 0.
        "zeros.264": [UInt8](repeating: 0, count: 4096),
        // A lone 4-byte start code: one empty NAL unit.
        "lone.264": [0, 0, 0, 1],
        // 1,000 start codes back to back: 1,000 empty NAL units.
        "codes.264": Array([[UInt8]](repeating: [0, 0, 1], count: 1000).joined()),
        // A packet file whose one packet carries nothing.
        "empty.pkt": emptyPacket,
    ]

    @Test("a stream with no NAL unit: inspect and convert exit 65 naming the file and what it holds, and no output is written",
          arguments: [
              ("zeros.264", "no NAL unit: its 4096 bytes are all 0x00 (no start code, and no length or packet other than 0)"),
              ("lone.264", "no NAL unit in its 4 bytes: 1 start code, followed by no NAL unit"),
              ("codes.264", "no NAL unit in its 3000 bytes: 1000 start codes, each followed by no NAL unit"),
              ("empty.pkt", "no NAL unit in its 32 bytes: 1 packet with no parameter set and an empty body"),
          ])
    func noNALUnit(name: String, message: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try write(try #require(Self.nothing[name]), dir, name)
        // FFmpeg finds no picture in the Annex B ones either.
        if name.hasSuffix(".264") {
            let decoded = try run("ffmpeg", ["-v", "quiet", "-f", "h264", "-i", name, "-f", "framemd5", "-"], in: dir)
            #expect(decoded.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.isEmpty)
        }
        for args in [["inspect", name], ["inspect", "--json", name]] {
            let r = try cli.enclab(args, in: dir)
            #expect(r.status == 65 && r.stdout.isEmpty && r.stderr == "enclab: \(name): \(message)\n", "\(args): \(r.status) \(r.stderr)")
        }
        for to in ["avcc", "annexb", "packets"] {
            let r = try cli.enclab(["convert", "--to", to, "--fps", "25", name, "out.\(to)"], in: dir)
            #expect(r.status == 65 && r.stderr == "enclab: \(name): \(message)\n", "\(to): \(r.status) \(r.stderr)")
            #expect(!exists(dir, "out.\(to)"), "convert --to \(to) wrote an output")
        }
        // Nothing left behind by the temporary names either.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(left == [name])
    }

    // MARK: Memory on hostile sizes

    @Test("64 MiB of 0x00 and 48 MiB of start codes: exit 65 within 512 MiB of address space, a few lines on stderr; a real stream works there")
    func hostileSizes() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir)
        // The limit is not too tight for the lab itself: a real stream is inspected and converted within it. (The
        // binary, its libraries and the Swift runtime map about 270 MiB: under 250 MiB even a real stream aborts.)
        let real = try enclabLimited(512, ["inspect", "s.264"], in: dir)
        #expect(real.status == 0, "\(real.stderr)")
        let converted = try enclabLimited(512, ["convert", "--to", "packets", "s.264", "s.pkt"], in: dir)
        #expect(converted.status == 0, "\(converted.stderr)")

        let zeros = 64 << 20
        _ = FileManager.default.createFile(atPath: "\(dir)/zeros.264", contents: nil)
        let handle = try #require(FileHandle(forWritingAtPath: "\(dir)/zeros.264"))
        try handle.truncate(atOffset: UInt64(zeros))   // a sparse file of zero bytes
        try handle.close()
        for args in [["inspect", "zeros.264"], ["inspect", "--from", "avcc", "--length-size", "1", "zeros.264"],
                     ["convert", "--to", "avcc", "zeros.264", "z.avcc"]] {
            let r = try enclabLimited(512, args, in: dir)
            #expect(r.status == 65 && r.stderr == "enclab: zeros.264: no NAL unit: its \(zeros) bytes are all 0x00 (no start code, and no length or packet other than 0)\n",
                    "\(args): \(r.status) \(r.stderr.prefix(300))")
        }
        #expect(!exists(dir, "z.avcc"))

        // 16 Mi start codes back to back: not all zero, so the file is read and split; every start code is an
        // empty NAL unit.
        let count = 16 << 20
        try write(Array([[UInt8]](repeating: [0, 0, 1], count: count).joined()), dir, "codes.264")
        let codes = try enclabLimited(512, ["inspect", "codes.264"], in: dir)
        #expect(codes.status == 65 && codes.stderr == "enclab: codes.264: no NAL unit in its \(3 * count) bytes: \(count) start codes, each followed by no NAL unit\n",
                "\(codes.status) \(codes.stderr.prefix(300))")
    }

    @Test("16 MiB of AUDs (and of AUD + 1 byte): exit 65 within 512 MiB of address space, one line naming what is missing; no output")
    func nothingToDecode() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 4 Mi access unit delimiters (00 00 01 09: nal_unit_type 9, no payload), and 16 MiB of 00 00 01 09 F0
        // (an AUD with primary_pic_type 7 and its stop bit): no SPS, no PPS, no slice.
        let auds = 4 << 20
        try write(Array([[UInt8]](repeating: [0, 0, 1, 9], count: auds).joined()), dir, "a.264")
        let longAUDs = (16 << 20) / 5
        try write(Array([[UInt8]](repeating: [0, 0, 1, 9, 0xF0], count: longAUDs).joined()), dir, "s.264")
        for (name, count) in [("a.264", auds), ("s.264", longAUDs)] {
            let line = "enclab: \(name): nothing to decode: no SPS, no PPS and no slice among its \(count) NAL units (\(count) AUD (nal_unit_type 9))\n"
            for args in [["inspect", name], ["inspect", "--json", name], ["convert", "--to", "packets", name, "p.out"],
                         ["convert", "--to", "avcc", name, "p.out"]] {
                let r = try enclabLimited(512, args, in: dir)
                #expect(r.status == 65 && r.stderr == line && r.stdout.isEmpty && !r.killed, "\(args): \(r.status) \(r.stderr.prefix(300))")
            }
        }
        #expect(!exists(dir, "p.out"))
    }

    @Test("SIGINT while convert parses a long stream: exit 130, no success line and no output")
    func interruptedConvert() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir)
        // The x264 stream then 1 Mi AUDs: each AUD after a picture starts an access unit, so parsing takes seconds.
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.264")))
        try write(original + Array([[UInt8]](repeating: [0, 0, 1, 9, 0xF0], count: 1 << 20).joined()), dir, "l.264")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        p.arguments = ["convert", "--to", "avcc", "l.264", "l.avcc"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        Thread.sleep(forTimeInterval: 1.5)   // started, reading and splitting the 5 MiB
        #expect(p.isRunning, "convert finished within 1.5 s: the test needs a longer stream")
        kill(p.processIdentifier, SIGINT)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 130 && stdout.isEmpty && stderr.hasSuffix("enclab: interrupted by SIGINT\n"),
                "\(p.terminationStatus) \(stdout.prefix(200)) \(stderr.suffix(300))")
        #expect(!exists(dir, "l.avcc"))
    }

    @Test("a real stream followed by 1 Mi empty NAL units: exit 0, one warning listing 16 offsets and the count of the rest")
    func manyEmptyNALUnits() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir)
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.264")))
        try #require(original.last != 0)
        let count = 1 << 20
        try write(original + Array([[UInt8]](repeating: [0, 0, 1], count: count).joined()), dir, "e.264")
        // Empty NAL unit k (from 0) would have its header just after its start code: at original.count + 3k + 3.
        let offsets = (0..<16).map { original.count + 3 * $0 + 3 }
        let message = "e.264: \(count) empty NAL units at bytes \(offsets.map(String.init).joined(separator: ", ")) and \(count - 16) more from byte \(original.count + 3 * 16 + 3) on (nal_unit: start code followed by no NAL unit (empty NAL unit)); skipped, as FFmpeg's splitter does"
        let r = try enclabLimited(512, ["inspect", "e.264"], in: dir)
        #expect(r.status == 0 && r.stderr == "warning: \(message)\n", "\(r.status) \(r.stderr.prefix(500))")
        // The listing is the original's: as many lines as without the empty NAL units, plus the warning's two.
        let plain = try cli.enclab(["inspect", "s.264"], in: dir)
        #expect(r.stdout.split(separator: "\n").count == plain.stdout.split(separator: "\n").count + 2)
        let json = try enclabLimited(512, ["inspect", "--json", "e.264"], in: dir)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let warnings = try #require(root["warnings"] as? [[String: Any]])
        #expect(warnings.count == 1 && warnings.first?["count"] as? Int == count && warnings.first?["byte_offsets"] as? [Int] == offsets)
    }

    // MARK: Packets that break PACKETS.md

    /// The byte offset of each packet of a packet file, by PACKETS.md's layout: 26 fixed bytes, sps_count and each
    /// SPS behind a u16 length, pps_count and each PPS behind a u16 length, a u32 body_length and the body.
    static func packetOffsets(_ b: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var p = 0
        func u16(_ at: Int) -> Int { Int(b[at]) << 8 | Int(b[at + 1]) }
        while p < b.count {
            offsets.append(p)
            var q = p + 26
            for _ in 0..<2 {
                let n = Int(b[q]); q += 1
                for _ in 0..<n { q += 2 + u16(q) }
            }
            let body = Int(b[q]) << 24 | Int(b[q + 1]) << 16 | Int(b[q + 2]) << 8 | Int(b[q + 3])
            p = q + 4 + body
        }
        return offsets
    }

    static func setBigEndian(_ b: inout [UInt8], at: Int, _ value: Int64) {
        for k in 0..<8 { b[at + k] = UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (56 - 8 * UInt64(k))) }
    }

    static func bigEndian(_ b: [UInt8], at: Int) -> Int64 {
        Int64(bitPattern: (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(b[at + $1]) })
    }

    @Test("packets whose flags, decode_order or dts_us contradict their NAL units: a warning naming packet and byte, refused with --strict")
    func packetPromises() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir)
        // ffprobe: the second picture is a P picture (no IDR).
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "frame=pict_type,key_frame", "-of", "csv=p=0", "s.264"], in: dir)
        #expect(probe.stdout.split(separator: "\n").prefix(2).map { $0.split(separator: ",").prefix(2).joined(separator: ",") } == ["1,I", "0,P"])
        let made = try cli.enclab(["convert", "--to", "packets", "s.264", "s.pkt"], in: dir)
        try #require(made.status == 0, "\(made.stderr)")
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.pkt")))
        let offsets = Self.packetOffsets(good)
        try #require(offsets.count == 6 && good[offsets[0] + 1] == 1 && good[offsets[1] + 1] == 0)
        // The lab's own packets keep every promise: no warning even with --strict.
        let clean = try cli.enclab(["inspect", "--strict", "s.pkt"], in: dir)
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")

        let (p1, p2) = (offsets[1], offsets[2])
        var idr = good
        idr[p1 + 1] = 1   // flags bit 0 on the P picture of packet 1
        var order = good
        for k in 2..<6 { Self.setBigEndian(&order, at: offsets[k] + 2, Int64(k + 3)) }   // 5, 6, 7, 8 after 0, 1: a jump
        var times = good
        let pts = Self.bigEndian(good, at: p1 + 10)
        Self.setBigEndian(&times, at: p1 + 18, pts + 1)   // packet 1's dts_us one microsecond after its pts_us
        let cases: [(String, [UInt8], String)] = [
            ("idr.pkt", idr, "packet 1 at byte \(p1): flags (byte \(p1 + 1)): bit 0 says IDR, but the body holds no IDR slice (nal_unit_type 5); its nal_unit_types: 1"),
            ("order.pkt", order, "packet 2 at byte \(p2): decode_order (byte \(p2 + 2)): 5, expected 2 (0 for the first packet, +1 per packet)"),
            ("times.pkt", times, "packet 1 at byte \(p1): dts_us (byte \(p1 + 18)): \(pts + 1) is after pts_us \(pts) (dts_us <= pts_us)"),
        ]
        for (name, bytes, problem) in cases {
            try write(bytes, dir, name)
            let lenient = try cli.enclab(["inspect", name], in: dir)
            #expect(lenient.status == 0 && lenient.stderr == "warning: \(name): \(problem) (PACKETS.md); accepted\n", "\(name): \(lenient.stderr)")
            #expect(lenient.stdout.contains("  \(name): \(problem) (PACKETS.md); accepted\n"))
            let strict = try cli.enclab(["inspect", "--strict", name], in: dir)
            #expect(strict.status == 65 && strict.stderr == "enclab: \(name): \(problem) (PACKETS.md)\n", "\(name): \(strict.status) \(strict.stderr)")
            let converted = try cli.enclab(["convert", "--strict", "--to", "annexb", name, "\(name).264"], in: dir)
            #expect(converted.status == 65 && !exists(dir, "\(name).264"))
        }
    }
}
