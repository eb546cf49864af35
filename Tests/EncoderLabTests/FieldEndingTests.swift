import Foundation
import Testing
import EncoderLab

/// Issue 17, items 4 and 5: streams as cameras, RTP stacks and ffmpeg write them, through `enclab check` and `enclab
/// inspect` (the built binary). Each stream is ffmpeg's (libx264) rewritten here by a plain byte edit; what it holds
/// comes from FFmpeg (trace_headers, its decoder's messages and frame count, ffprobe's packets and frames), never from
/// the lab.
@Suite("field-stream endings and packing, and check without times, against trace_headers and FFmpeg's decode", .serialized)
struct FieldEndingTests {
    /// 30 frames of 64x48 at 25 fps from ffmpeg's libx264: an IDR every 10 frames, SPS and PPS before each
    /// (repeat-headers), no scene-cut IDR; `flags` adds to ffmpeg's output options.
    func ffmpegStream(_ name: String, in scratch: Scratch, frames: Int = 30, rate: Int = 25, gop: Int = 10, _ flags: [String] = ["-bf", "0"]) throws {
        let r = try Witness.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=\(rate)", "-frames:v", String(frames),
                                           "-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", String(gop), "-refs", "3"] + flags
                                           + ["-x264-params", "repeat-headers=1:scenecut=0", Witness.file(scratch.file(name))])
        try #require(r.status == 0, "\(r.stderr)")
    }

    func enclab(_ arguments: [String], in scratch: Scratch) throws -> (status: Int32, lines: [String], stderr: String) {
        let r = try Witness.enclab(arguments, in: scratch.path)
        return (r.status, r.stdout.split(separator: "\n").map(String.init), r.stderr)
    }

    func bytes(_ scratch: Scratch, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file(name))))
    }

    func write(_ bytes: [UInt8], _ scratch: Scratch, _ name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.file(name)))
    }

    /// Where each NAL unit starts (just after its 00 00 01) in an Annex B stream, by a plain scan.
    func nalStarts(_ d: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var i = 0
        while i + 2 < d.count {
            if d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts
    }

    /// ffmpeg's decoder on a file: its messages at warning level and above, and the frames it output.
    func decode(_ path: String) throws -> (messages: String, frames: Int?) {
        let r = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-v", "warning", "-i", Witness.file(path), "-f", "null", "-"])
        return (r.stderr, try Witness.frameCount(path))
    }

    /// trace_headers' lines (without the "[trace_headers @ 0x...] " prefix) and its other messages.
    func trace(_ path: String) throws -> [String] {
        let r = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-i", Witness.file(path), "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        return r.stderr.split(separator: "\n").map { line in
            line.hasPrefix("[trace_headers") ? String(line.drop { $0 != "]" }.dropFirst(2)) : String(line)
        }
    }

    // MARK: - Item 4: check without times

    @Test("a raw stream without times (ffmpeg's, fixed_frame_rate_flag 0): frame-counting rules checked, a rule needing times refused by name")
    func untimedRawStream() throws {
        let scratch = Scratch()
        try ffmpegStream("s.264", in: scratch)
        // trace_headers: the SPS says fixed_frame_rate_flag 0 (no times for check), IDR pictures in packets 0, 10, 20.
        let t = try Witness.traceHeaders(scratch.file("s.264")).packets
        try #require(t.count == 30 && t.flatMap { $0 }.filter { $0.type == 7 }.allSatisfy { $0.values["fixed_frame_rate_flag"] == 0 })
        try #require(t.indices.filter { k in t[k].contains { $0.type == 5 } } == [0, 10, 20])
        // Gaps of 10 frames (0-10, 10-20, 20 to the end at 30): kept at 10; at 9 each of the three is one violation.
        let kept = try enclab(["check", "s.264", "--expect", "MaxKeyFrameInterval=10", "--expect", "AllowFrameReordering=false",
                               "--expect", "H264EntropyMode=CABAC"], in: scratch)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.lines.count == 1 && kept.lines[0].hasPrefix("check s.264: 30 frames (IDR 3, I 0, P 27, Bref 0, B 0), no times (a raw Annex B stream has no container times, no --tcfile-in was given, and its SPS has fixed_frame_rate_flag 0"), "\(kept.lines)")
        #expect(kept.lines.first?.hasSuffix("; largest GOP 10 frames: no violations (MaxKeyFrameInterval=10 ok, AllowFrameReordering=false ok, H264EntropyMode=CABAC ok)") == true, "\(kept.lines)")
        let broken = try enclab(["check", "s.264", "--expect", "MaxKeyFrameInterval=9"], in: scratch)
        #expect(broken.status == 1, "\(broken.stderr)")
        #expect(Array(broken.lines.dropLast()) == [
            "MaxKeyFrameInterval=9: 10 frames from keyframe 0 to keyframe 10, more than 9 (display order)",
            "MaxKeyFrameInterval=9: 10 frames from keyframe 10 to keyframe 20, more than 9 (display order)",
            "MaxKeyFrameInterval=9: 10 frames from keyframe 20 to the end, more than 9 (display order)",
        ], "\(broken.lines)")
        // A rule that needs times is refused, 65, naming it; so is --db (it stores times), and no database is made.
        for (rule, needs) in [("MaxKeyFrameIntervalDuration=2", "MaxKeyFrameIntervalDuration=2 needs them"),
                              ("DataRateLimits=100000,1", "DataRateLimits=100000,1 needs them")] {
            let refused = try enclab(["check", "s.264", "--expect", "MaxKeyFrameInterval=10", "--expect", rule], in: scratch)
            #expect(refused.status == 65 && refused.lines.isEmpty, "\(refused)")
            #expect(refused.stderr.hasPrefix("enclab: s.264: no times: a raw Annex B stream has no container times") && refused.stderr.contains(needs), "\(refused.stderr)")
        }
        let stored = try enclab(["check", "s.264", "--db", "lab.sqlite", "--expect", "MaxKeyFrameInterval=10"], in: scratch)
        #expect(stored.status == 65 && stored.stderr.contains("--db stores frames with their times"), "\(stored.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("lab.sqlite")))
    }

    @Test("a raw stream without times with B-frames: AllowFrameReordering=false finds each B frame trace_headers finds")
    func untimedReordering() throws {
        let scratch = Scratch()
        try ffmpegStream("b.264", in: scratch, ["-bf", "2"])
        let t = try Witness.traceHeaders(scratch.file("b.264")).packets
        let bFrames = t.filter { p in p.contains { ($0.type == 1 || $0.type == 5) && ($0.values["slice_type"] ?? 0) % 5 == 1 } }.count
        try #require(bFrames > 0)
        let r = try enclab(["check", "b.264", "--expect", "AllowFrameReordering=false"], in: scratch)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.lines.dropLast().count == bFrames && r.lines.dropLast().allSatisfy { $0.hasPrefix("AllowFrameReordering=false: frame ") && $0.contains("has B slices") }, "\(r.lines)")
    }

    // MARK: - Item 5: endings

    /// The stream with every SPS NAL unit rewritten by `edit` (its escaped bytes after the header byte).
    func rewriteSPS(_ d: [UInt8], _ edit: ([UInt8]) -> [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        let starts = nalStarts(d)
        var p = 0
        for (k, s) in starts.enumerated() where d[s] & 31 == 7 {
            var e = k + 1 < starts.count ? starts[k + 1] - 3 : d.count
            while d[e - 1] == 0 { e -= 1 }
            out += d[p...s] + edit(Array(d[(s + 1)..<e]))
            p = e
        }
        return out + d[p...]
    }

    @Test("an SPS with data after rbsp_trailing_bits, and one with no stop bit: warned, refused with --strict; FFmpeg decodes all 30 frames")
    func spsEndings() throws {
        let scratch = Scratch()
        try ffmpegStream("s.264", in: scratch)
        let s = try bytes(scratch, "s.264")
        // Two bytes appended after the SPS's last byte, and the SPS's last bit equal to 1 (the stop bit) cleared.
        try write(rewriteSPS(s) { $0 + [0xAB, 0xCD] }, scratch, "junk.264")
        try write(rewriteSPS(s) { b in var b = b; b[b.count - 1] &= b[b.count - 1] &- 1; return b.last == 0 ? Array(b.dropLast()) : b }, scratch, "nostop.264")
        // trace_headers on junk.264: the stop bit is the last bit of a byte (bit 167 from the header's first bit, so
        // the trailing bits end with byte 21), and the NAL unit goes on for 2 more bytes, which it does not read.
        let junk = try trace(scratch.file("junk.264"))
        try #require(junk.contains { $0.hasPrefix("167 ") && $0.contains("rbsp_stop_one_bit") && $0.hasSuffix("= 1") }, "\(junk.prefix(80))")
        // trace_headers on nostop.264: bit 167 is 0 where the stop bit is due; FFmpeg's decoder overreads the VUI.
        let nostop = try trace(scratch.file("nostop.264"))
        try #require(nostop.contains("rbsp_stop_one_bit out of range: 0, but must be in [1,1]."), "\(nostop.suffix(20))")
        let nostopDecode = try decode(scratch.file("nostop.264"))
        try #require(nostopDecode.messages.contains("Overread VUI by 3 bits") && nostopDecode.frames == 30, "\(nostopDecode)")
        try #require(try decode(scratch.file("junk.264")).frames == 30)
        // Bit 167 from the header's first bit is bit 159 of the RBSP, in its byte 19; junk.264's last bit equal to 1 is
        // the last bit of 0xCD, two bytes later: bit 175.
        let nalUnits = nalStarts(s).count
        for (name, problem) in [("junk.264", "data after the end of seq_parameter_set_rbsp: its rbsp_stop_one_bit is due here, and bits equal to 1 follow up to bit 175 (2 bytes after the byte where the stop bit is due)"),
                                ("nostop.264", "no rbsp_stop_one_bit after seq_parameter_set_rbsp: no bit equal to 1 follows its last syntax element")] {
            let lenient = try enclab(["inspect", name], in: scratch)
            #expect(lenient.status == 0, "\(name): \(lenient.stderr)")
            // One warning: the SPS is repeated byte for byte before each IDR, and a repeat is not warned about again.
            // Bit 159 of the RBSP is bit 167 counted from the NAL unit header's first bit.
            let warnings = lenient.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
            #expect(warnings.count == 1 && warnings[0].contains("NAL unit 0 at byte 4 (SPS): rbsp_trailing_bits: \(problem) (at bit 159); accepted: "), "\(name): \(lenient.stderr)")
            #expect(lenient.lines[0] == "\(name): annexb, \(nalUnits) NAL units, 30 access units", "\(lenient.lines[0])")
            let strict = try enclab(["inspect", name, "--strict"], in: scratch)
            // --strict names the NAL unit and its byte in the file, as the warning does (trial 1, minor finding).
            #expect(strict.status == 65 && strict.stderr.contains("\(name): NAL unit 0 at byte 4 (SPS): invalid rbsp_trailing_bits at byte 19: \(problem) (at bit 159)"), "\(name): \(strict.stderr)")
        }
    }

    @Test("an SEI whose last payload ends the NAL unit (no rbsp_trailing_bits): FFmpeg's 'SEI type 5 size 288 truncated at 287'; warned, refused with --strict")
    func seiWithoutTrailingBits() throws {
        let scratch = Scratch()
        try ffmpegStream("s.264", in: scratch)
        var d = try bytes(scratch, "s.264")
        // Before the first IDR slice's start code: SEI, payloadType 5, payloadSize 36 (16 bytes of uuid, then 20
        // bytes of text ending in '!', 0x21, whose last bit is 1), and no 0x80 after it.
        let idr = try #require(nalStarts(d).first { d[$0] & 31 == 5 })
        let payload = Array(0x41...0x50 as ClosedRange<UInt8>) + Array("enclab field ending!".utf8)
        try #require(payload.count == 36)
        let startCode = d[idr - 4] == 0 ? idr - 4 : idr - 3   // x264 writes 3- and 4-byte start codes
        d.insert(contentsOf: [0, 0, 0, 1, 0x06, 5, 36] + payload, at: startCode)
        try write(d, scratch, "sei.264")
        // FFmpeg takes the payload's last bit equal to 1 for the stop bit: 36 x 8 = 288 bits of payload, 287 left.
        let ffmpeg = try decode(scratch.file("sei.264"))
        try #require(ffmpeg.messages.contains("SEI type 5 size 288 truncated at 287") && ffmpeg.frames == 30, "\(ffmpeg)")
        let lenient = try enclab(["inspect", "sei.264"], in: scratch)
        #expect(lenient.status == 0, "\(lenient.stderr)")
        let problem = "no rbsp_trailing_bits after the last sei_message (payloadType 5, payloadSize 36): the NAL unit ends with its payload"
        #expect(lenient.stderr.contains("(SEI): rbsp_trailing_bits at byte 38: \(problem); accepted: its messages are read"), "\(lenient.stderr)")
        let strict = try enclab(["inspect", "sei.264", "--strict"], in: scratch)
        // The SEI's header is just after the 00 00 00 01 inserted at startCode; it takes the IDR slice's index.
        let index = try #require(nalStarts(d).firstIndex(of: startCode + 4))
        #expect(strict.status == 65 && strict.stderr.contains("sei.264: NAL unit \(index) at byte \(startCode + 4) (SEI): rbsp_trailing_bits at byte 38: \(problem)"), "\(strict.stderr)")
    }

    @Test("nal_unit_type 2 (a P slice's header masked) in a High profile stream: FFmpeg skips it and decodes 29 frames; warned, ignored, refused with --strict")
    func dataPartitionOutsideExtended() throws {
        let scratch = Scratch()
        try ffmpegStream("s.264", in: scratch)
        var d = try bytes(scratch, "s.264")
        let starts = nalStarts(d)
        let slice = try #require(starts.filter { d[$0] & 31 == 1 }.dropFirst(3).first)
        let index = try #require(starts.firstIndex(of: slice))
        d[slice] = d[slice] & 0xE0 | 2
        try write(d, scratch, "dp.264")
        let t = try Witness.traceHeaders(scratch.file("dp.264")).packets.flatMap { $0 }
        try #require(t.first { $0.type == 7 }?.values["profile_idc"] == 100)
        let ffmpeg = try decode(scratch.file("dp.264"))
        try #require(ffmpeg.messages.contains("data partitioning is not implemented") && ffmpeg.frames == 29, "\(ffmpeg)")
        let lenient = try enclab(["inspect", "dp.264"], in: scratch)
        // Ignored as FFmpeg ignores it: it joins the picture before it, which is one picture; 29 frames, as decoded.
        #expect(lenient.status == 0 && lenient.lines[0] == "dp.264: annexb, \(starts.count) NAL units, 29 access units", "\(lenient.lines.first ?? "") \(lenient.stderr)")
        #expect(lenient.lines.count > 1 && lenient.lines[1].hasPrefix("Frames (a field pair counted once): 29 "), "\(lenient.lines.prefix(2))")
        let problem = "Slice data partition A in a stream of profile_idc 100: only the Extended profile (88) has data partitioning (H.264 A.2)"
        #expect(lenient.stderr.contains("NAL unit \(index) at byte \(slice) (Slice data partition A): nal_unit_type: 2: \(problem)"), "\(lenient.stderr)")
        let strict = try enclab(["inspect", "dp.264", "--strict"], in: scratch)
        #expect(strict.status == 65 && strict.stderr.contains("dp.264: NAL unit \(index) at byte \(slice) (Slice data partition A): nal_unit_type: 2: \(problem)"), "\(strict.stderr)")
    }

    @Test("a partition A (22 88 84 21 80) inserted before the second slice: FFmpeg's parser makes it a packet with no picture and decodes 30 frames; the lab counts 30 access units and frames, and --strict names its byte")
    func insertedDataPartition() throws {
        let scratch = Scratch()
        try ffmpegStream("s.264", in: scratch)
        var d = try bytes(scratch, "s.264")
        let starts = nalStarts(d)
        // The second slice (the first P slice): a 00 00 00 01 and the partition A NAL unit of trial 1 before its start code.
        let second = try #require(starts.filter { [1, 5].contains(d[$0] & 31) }.dropFirst().first)
        let index = try #require(starts.firstIndex(of: second))
        let startCode = d[second - 4] == 0 ? second - 4 : second - 3
        d.insert(contentsOf: [0, 0, 0, 1, 0x22, 0x88, 0x84, 0x21, 0x80], at: startCode)
        try write(d, scratch, "dp.264")
        // FFmpeg: 31 packets, one of them the partition alone (9 bytes, nothing trace_headers can read in it: "missing
        // picture in access unit"), 30 holding slices; its decoder outputs 30 frames.
        let packets = try Witness.traceHeaders(scratch.file("dp.264")).packets
        try #require(packets.count == 31 && packets.filter { $0.contains { [1, 5].contains($0.type) } }.count == 30, "\(packets.map { $0.map(\.type) })")
        try #require(try Witness.packetSizes(scratch.file("dp.264")).contains(9))
        let ffmpeg = try decode(scratch.file("dp.264"))
        try #require(ffmpeg.messages.contains("missing picture in access unit with size 9") && ffmpeg.frames == 30, "\(ffmpeg)")
        let lenient = try enclab(["inspect", "dp.264"], in: scratch)
        #expect(lenient.status == 0 && lenient.lines.first == "dp.264: annexb, \(starts.count + 1) NAL units, 30 access units", "\(lenient.lines.prefix(2)) \(lenient.stderr)")
        #expect(lenient.lines.count > 1 && lenient.lines[1].hasPrefix("Frames (a field pair counted once): 30 (0 field pairs, 0 non-paired fields): IDR 3, I 0, P 27,"), "\(lenient.lines.prefix(2))")
        #expect(lenient.stderr.contains("NAL unit \(index) at byte \(startCode + 4) (Slice data partition A): nal_unit_type: 2: "), "\(lenient.stderr)")
        // The partition is in the first access unit (the IDR picture's), which stays one I picture.
        let json = Witness.json(try Witness.enclab(["inspect", "dp.264", "--json"], in: scratch.path).stdout)
        let first = try #require((json["access_units"] as? [[String: Any]])?.first)
        #expect((first["nal_units"] as? [Int])?.last == index && (first["slice_types"] as? [String]) == ["I"], "\(first)")
        let check = try enclab(["check", "dp.264", "--expect", "MaxKeyFrameInterval=10"], in: scratch)
        #expect(check.status == 0 && check.lines.contains { $0.hasPrefix("check dp.264: 30 frames (IDR 3, I 0, P 27,") }, "\(check.lines) \(check.stderr)")
        let strict = try enclab(["inspect", "dp.264", "--strict"], in: scratch)
        #expect(strict.status == 65 && strict.stderr.contains("dp.264: NAL unit \(index) at byte \(startCode + 4) (Slice data partition A): nal_unit_type: 2: "), "\(strict.stderr)")
    }

    @Test("partitions B and C with nal_ref_idc 1 after a non-reference B slice of a High stream: ignored, the picture stays a non-reference B as trace_headers has it")
    func partitionsAfterNonReferenceB() throws {
        let scratch = Scratch()
        try ffmpegStream("b.264", in: scratch, ["-bf", "1"])
        var d = try bytes(scratch, "b.264")
        // The first non-reference slice (nal_ref_idc 0, type 1); 00 00 00 01 23 88 80 and 00 00 00 01 24 88 80 after it.
        let starts = nalStarts(d)
        let k = try #require(starts.firstIndex { d[$0] & 0x1F == 1 && d[$0] & 0x60 == 0 })
        let next = k + 1 < starts.count ? (d[starts[k + 1] - 4] == 0 ? starts[k + 1] - 4 : starts[k + 1] - 3) : d.count
        d.insert(contentsOf: [0, 0, 0, 1, 0x23, 0x88, 0x80, 0, 0, 0, 1, 0x24, 0x88, 0x80], at: next)
        try write(d, scratch, "bc.264")
        // trace_headers: B slices (slice_type 1 or 6) with nal_ref_idc 0 and with nal_ref_idc not 0, one per packet here.
        let slices = try Witness.traceHeaders(scratch.file("bc.264")).packets.compactMap { $0.first { [1, 5].contains($0.type) } }
        let b = slices.filter { $0.values["slice_type"].map { $0 % 5 == 1 } == true }
        let nonReference = b.filter { $0.refIdc == 0 }.count, reference = b.count - nonReference
        try #require(slices.count == 30 && nonReference > 0, "\(slices.map(\.values))")
        try #require(try decode(scratch.file("bc.264")).frames == 30)
        let r = try enclab(["inspect", "bc.264"], in: scratch)
        #expect(r.status == 0 && r.lines.count > 1 && r.lines[1].hasSuffix("Bref \(reference), B \(nonReference)"), "\(r.lines.prefix(2)) \(r.stderr)")
    }

    // MARK: - Item 5: packing

    /// s.mp4 from the stream, and p.mp4: each keyframe packet's NAL units from its SPS on packed behind the SPS's
    /// one length, the later lengths overwritten with start codes 00 00 00 01 (the same size: the MP4 is edited in
    /// place at the packet positions ffprobe gives).
    func packedMP4(in scratch: Scratch) throws {
        try ffmpegStream("s.264", in: scratch)
        let mux = try Witness.run("ffmpeg", ["-v", "error", "-y", "-i", Witness.file(scratch.file("s.264")), "-c", "copy", Witness.file(scratch.file("s.mp4"))])
        try #require(mux.status == 0, "\(mux.stderr)")
        var d = try bytes(scratch, "s.mp4")
        let probe = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos,size,flags", "-of", "json", Witness.file(scratch.file("s.mp4"))])
        let packets = (Witness.json(probe.stdout)["packets"] as? [[String: Any]]) ?? []
        var packed = 0
        for p in packets where (p["flags"] as? String)?.hasPrefix("K") == true {
            let pos = try #require(Int(p["pos"] as? String ?? "")), size = try #require(Int(p["size"] as? String ?? ""))
            var lengths: [Int] = []   // where each 4-byte length is
            var q = pos
            while q < pos + size {
                lengths.append(q)
                q += 4 + (Int(d[q]) << 24 | Int(d[q + 1]) << 16 | Int(d[q + 2]) << 8 | Int(d[q + 3]))
            }
            let first = try #require(lengths.firstIndex { d[$0 + 4] & 31 == 7 })
            let total = pos + size - lengths[first] - 4
            d.replaceSubrange(lengths[first]..<lengths[first] + 4, with: [UInt8(total >> 24), UInt8(total >> 16 & 255), UInt8(total >> 8 & 255), UInt8(total & 255)])
            for l in lengths[(first + 1)...] { d.replaceSubrange(l..<l + 4, with: [0, 0, 0, 1]) }
            packed += 1
        }
        try #require(packed == 3)
        try write(d, scratch, "p.mp4")
    }

    @Test("SPS, start code, PPS, start code, IDR behind one AVCC length (p.mp4): split as FFmpeg splits it (30 frames), warned; --strict refuses")
    func packedBehindOneLength() throws {
        let scratch = Scratch()
        try packedMP4(in: scratch)
        // FFmpeg: trace_headers splits the first packet into SPS, PPS, SEI, IDR slice and the others into SPS, PPS,
        // IDR slice; its decoder outputs 30 frames.
        let traced = try Witness.traceHeaders(scratch.file("p.mp4")).packets
        try #require(traced.count == 30 && traced[0].map(\.type) == [7, 8, 6, 5] && traced[10].map(\.type) == [7, 8, 5] && traced[20].map(\.type) == [7, 8, 5], "\(traced.prefix(1))")
        try #require(try decode(scratch.file("p.mp4")).frames == 30)
        // check reads the MP4 through ffprobe and ffmpeg: 30 frames, 3 IDR, one warning per packed length.
        let r = try enclab(["check", "p.mp4", "--expect", "MaxKeyFrameInterval=10"], in: scratch)
        #expect(r.status == 0 && r.lines.count == 1 && r.lines[0].hasPrefix("check p.mp4: 30 frames (IDR 3, I 0, P 27, Bref 0, B 0) over 1.2 s"), "\(r.lines) \(r.stderr)")
        let warnings = r.stderr.split(separator: "\n").filter { $0.contains("start code 0x000001 inside a NAL unit") }
        #expect(warnings.count == 3 && warnings.allSatisfy { $0.contains("NAL units packed as Annex B behind one length; accepted: split at its start codes into") }, "\(r.stderr)")
        // inspect on the same packets as a raw AVCC stream with the MP4's avcC record (as ffmpeg copies them).
        let copy = try Witness.run("ffmpeg", ["-v", "error", "-y", "-i", Witness.file(scratch.file("p.mp4")), "-map", "0:v:0", "-c", "copy", "-f", "data", Witness.file(scratch.file("p.avcc"))])
        try #require(copy.status == 0, "\(copy.stderr)")
        let mp4 = try bytes(scratch, "p.mp4")
        let box = try #require((4..<(mp4.count - 4)).first { mp4[$0..<($0 + 4)].elementsEqual(Array("avcC".utf8)) })
        let boxSize = Int(mp4[box - 4]) << 24 | Int(mp4[box - 3]) << 16 | Int(mp4[box - 2]) << 8 | Int(mp4[box - 1])
        try write(Array(mp4[(box + 4)..<(box - 4 + boxSize)]), scratch, "p.avcC")
        let inspected = try enclab(["inspect", "p.avcc", "--in-avcc-config", "p.avcC"], in: scratch)
        let nalUnits = traced.reduce(0) { $0 + $1.count }
        #expect(inspected.status == 0 && inspected.lines[0] == "p.avcc: avcc, \(nalUnits) NAL units, 30 access units", "\(inspected.lines.first ?? "") \(inspected.stderr)")
        let strict = try enclab(["inspect", "p.avcc", "--in-avcc-config", "p.avcC", "--strict"], in: scratch)
        #expect(strict.status == 65 && strict.stderr.contains("invalid NALUnit at byte "), "\(strict.stderr)")
    }

    @Test("sprop-parameter-sets ending in a comma: the empty part skipped with a warning; --strict refuses it")
    func spropTrailingComma() throws {
        let scratch = Scratch()
        try ffmpegStream("s.264", in: scratch)
        let d = try bytes(scratch, "s.264")
        let starts = nalStarts(d)
        func nal(_ type: UInt8) throws -> [UInt8] {
            let k = try #require(starts.firstIndex { d[$0] & 31 == type })
            var e = starts[k + 1] - 3
            while d[e - 1] == 0 { e -= 1 }
            return Array(d[starts[k]..<e])
        }
        let value = try [nal(7), nal(8)].map { Data($0).base64EncodedString() }.joined(separator: ",") + ","
        let lenient = try enclab(["inspect", "s.264", "--parameter-sets", value], in: scratch)
        #expect(lenient.status == 0, "\(lenient.stderr)")
        #expect(lenient.stderr.contains("sprop-parameter-sets[2]: empty (two commas in a row, or one at either end); accepted: skipped"), "\(lenient.stderr)")
        #expect(lenient.lines.contains { $0.hasPrefix("SPS #0 (id 0) out of band") }, "\(lenient.lines.prefix(4))")
        let strict = try enclab(["inspect", "s.264", "--parameter-sets", value, "--strict"], in: scratch)
        #expect(strict.status == 65 && strict.stderr.contains("invalid sprop-parameter-sets[2] at byte \(value.count): empty"), "\(strict.stderr)")
    }

    // MARK: - Item 5: edit lists

    @Test("an MP4 whose edit list starts at 0.5 s (ffmpeg -ss 0.5 -c copy): check counts the 75 frames shown over 2.5 s, as ffprobe's frames, not the 90 packets")
    func editList() throws {
        let scratch = Scratch()
        try ffmpegStream("e0.mp4", in: scratch, frames: 90, rate: 30, gop: 30)
        let cut = try Witness.run("ffmpeg", ["-v", "error", "-y", "-ss", "0.5", "-i", Witness.file(scratch.file("e0.mp4")), "-c", "copy", Witness.file(scratch.file("e.mp4"))])
        try #require(cut.status == 0, "\(cut.stderr)")
        // ffprobe: 90 packets, 15 of them flagged discarded (D); 75 frames decoded and shown; IDRs at packets 0, 30, 60.
        let packets = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0", Witness.file(scratch.file("e.mp4"))])
        let flags = packets.stdout.split(separator: "\n")
        try #require(flags.count == 90 && flags.filter { $0.contains("D") }.count == 15 && flags.prefix(15).allSatisfy { $0.contains("D") }, "\(flags)")
        let frames = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_frames", "-show_entries", "frame=pts", "-of", "csv=p=0", Witness.file(scratch.file("e.mp4"))])
        try #require(frames.stdout.split(separator: "\n").count == 75)
        try #require(try Witness.frameCount(scratch.file("e.mp4")) == 75)
        // Shown: frames 15-89 of the clip, with the IDRs of frames 30 and 60; 75 frames at 30 fps last 2.5 s.
        let r = try enclab(["check", "e.mp4", "--expect", "MaxKeyFrameInterval=90"], in: scratch)
        #expect(r.status == 0 && r.lines.count == 1 && r.lines[0].hasPrefix("check e.mp4: 75 frames (IDR 2, I 0, P 73, Bref 0, B 0) over 2.5 s, times from the container"), "\(r.lines) \(r.stderr)")
        #expect(r.stderr.contains("15 of its 90 video packets are before the start of its edit list"), "\(r.stderr)")
    }
}
