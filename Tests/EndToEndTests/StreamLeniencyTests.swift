import Foundation
import Testing
import EncoderLab

/// Streams from the field through `enclab inspect` and `enclab convert` (issue 8): a value an earlier edition
/// allowed, empty NAL units, parameter sets that change, recovery points, parameter sets sent out of band. Each
/// stream is made from the x264 CLI's output by a plain rewrite here, and checked against FFmpeg (trace_headers,
/// ffprobe, framemd5) reading the same bytes.
@Suite("inspect and convert: lenient parsing, parameter sets, recovery points, end to end", .serialized)
struct StreamLeniencyTests {
    let cli = CommandLineTests()

    func run(_ tool: String, _ args: [String], in dir: String) throws -> CommandLineTests.Result {
        try CommandLineTests.process("/usr/bin/\(tool)", args, in: dir)
    }

    func bytes(_ dir: String, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name)")))
    }

    func write(_ bytes: [UInt8], _ dir: String, _ name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: "\(dir)/\(name)"))
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// An x264 CLI stream of `frames` synthetic frames.
    func x264(_ dir: String, _ name: String, width: Int, height: Int, frames: Int, _ flags: [String] = []) throws {
        try SyntheticClip(width: width, height: height, frames: frames, seed: 11).write(to: "\(dir)/\(name).y4m")
        let x = try run("x264", ["--quiet", "--threads", "1"] + flags + ["-o", name, "\(name).y4m"], in: dir)
        try #require(x.status == 0, "\(x.stderr)")
    }

    /// ffmpeg's decode of a raw H.264 file, one MD5 a picture (framemd5 lines without the header comments).
    func framemd5(_ dir: String, _ name: String) throws -> [String] {
        let r = try run("ffmpeg", ["-v", "error", "-f", "h264", "-i", name, "-f", "framemd5", "-"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// trace_headers of a raw H.264 file: its lines after the first "Packet:" (the extradata's copies of the
    /// parameter sets come before), without the "[trace_headers @ 0x...] " prefix.
    func trace(_ dir: String, _ name: String) throws -> [String] {
        let r = try run("ffmpeg", ["-hide_banner", "-nostats", "-i", name, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"], in: dir)
        let lines = r.stderr.split(separator: "\n").filter { $0.hasPrefix("[trace_headers") }
            .map { String($0.drop { $0 != "]" }.dropFirst(2)) }
        return Array(lines.drop { !$0.hasPrefix("Packet:") })
    }

    /// NAL units by a plain scan for 00 00 01 (ForbiddenZeroBitTests.scan), as byte arrays.
    func nalUnits(_ data: [UInt8]) -> [[UInt8]] {
        ForbiddenZeroBitTests.scan(data).map { Array(data[$0.offset..<($0.offset + $0.size)]) }
    }

    /// Emulation prevention removed (the 03 after 00 00) and inserted again, written out for the rewrite.
    static func unescape(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        for x in b {
            if zeros >= 2 && x == 3 { zeros = 0; continue }
            out.append(x); zeros = x == 0 ? zeros + 1 : 0
        }
        return out
    }
    static func escape(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        for x in b {
            if zeros >= 2 && x <= 3 { out.append(3); zeros = 0 }
            out.append(x); zeros = x == 0 ? zeros + 1 : 0
        }
        return out
    }

    // MARK: 1. A value the 2003 edition allowed

    /// 5 frames of 160x96 from the x264 CLI (s.264), and mv.264: the same with log2_max_mv_length_horizontal and
    /// _vertical rewritten from 9 to 16, at the bit positions trace_headers gives (counted from the NAL unit's
    /// first bit, header included, in the bytes without emulation prevention).
    /// - Returns: the horizontal field's position in mv.264 as trace_headers counts it.
    func makeMVStream(_ dir: String) throws -> Int {
        try x264(dir, "s.264", width: 160, height: 96, frames: 5)
        let lines = try trace(dir, "s.264")
        func field(_ name: String, _ lines: [String]) throws -> (position: Int, value: Int) {
            let line = try #require(lines.first { $0.split(separator: " ").dropFirst().first.map(String.init) == name }, "\(name)")
            let f = line.split(separator: " ")
            return (try #require(Int(f[0])), try #require(Int(f[f.count - 1])))
        }
        let h = try field("log2_max_mv_length_horizontal", lines), v = try field("log2_max_mv_length_vertical", lines)
        // ue(9) is 0001010, 7 bits: vertical follows horizontal.
        try #require(h.value == 9 && v.value == 9 && v.position == h.position + 7)
        let original = try bytes(dir, "s.264")
        let located = ForbiddenZeroBitTests.scan(original)
        try #require(original[located[0].offset] & 0x1F == 7)
        let sps = Self.unescape(Array(original[located[0].offset..<(located[0].offset + located[0].size)]))
        var bits = sps.flatMap { b in (0..<8).map { (b >> (7 - $0)) & 1 } }
        let stop = try #require(bits.lastIndex(of: 1))
        bits.removeSubrange(stop...)
        try #require(Array(bits[h.position..<(h.position + 14)]) == [0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0])
        // ue(16): 16 + 1 = 10001 behind four zeros, twice; then the stop bit and zeros to the byte boundary.
        let ue16: [UInt8] = [0, 0, 0, 0, 1, 0, 0, 0, 1]
        bits.replaceSubrange(h.position..<(h.position + 14), with: ue16 + ue16)
        bits.append(1)
        while bits.count % 8 != 0 { bits.append(0) }
        let rewritten = Self.escape(stride(from: 0, to: bits.count, by: 8).map { k in bits[k..<(k + 8)].reduce(0) { $0 << 1 | $1 } })
        let mv = Array(original[..<located[0].offset]) + rewritten + Array(original[(located[0].offset + located[0].size)...])
        try write(mv, dir, "mv.264")
        // trace_headers reads 16 in both fields of mv.264, 9 bits apart.
        let after = try trace(dir, "mv.264")
        let (h2, v2) = (try field("log2_max_mv_length_horizontal", after), try field("log2_max_mv_length_vertical", after))
        try #require(h2.value == 16 && v2.value == 16 && h2.position == h.position && v2.position == h.position + 9)
        return h.position
    }

    @Test("log2_max_mv_length 16: FFmpeg decodes the same pictures; accepted with a warning per field, refused with --strict")
    func mvLength() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let position = try makeMVStream(dir)
        #expect(try framemd5(dir, "mv.264") == framemd5(dir, "s.264"))
        #expect(try framemd5(dir, "s.264").count == 5)
        // Bit offsets in the RBSP leave out the NAL unit header's 8 bits; the SPS's header is at byte 4.
        let reason = "accepted: the 2003 edition allowed 0-16, and VUI does not affect decoding (H.264 Annex E)"
        let expected = [
            "mv.264: NAL unit 0 at byte 4 (SPS): log2_max_mv_length_horizontal out of range (0-15): 16 (at bit \(position - 8)); \(reason)",
            "mv.264: NAL unit 0 at byte 4 (SPS): log2_max_mv_length_vertical out of range (0-15): 16 (at bit \(position + 1)); \(reason)",
        ]
        let text = try cli.enclab(["inspect", "mv.264"], in: dir)
        #expect(text.status == 0)
        #expect(text.stderr == expected.map { "warning: \($0)\n" }.joined())
        #expect(text.stdout.hasSuffix("Warnings (accepted; --strict refuses them):\n" + expected.map { "  \($0)\n" }.joined()))
        let r = try cli.enclab(["inspect", "mv.264", "--json"], in: dir)
        #expect(r.status == 0)
        let root = try json(r.stdout)
        let warnings = try #require(root["warnings"] as? [[String: Any]])
        #expect(warnings.map { $0["element"] as? String } == ["log2_max_mv_length_horizontal", "log2_max_mv_length_vertical"])
        #expect(warnings.map { $0["value"] as? Int } == [16, 16])
        #expect(warnings.map { $0["allowed_range"] as? [Int] } == [[0, 15], [0, 15]])
        #expect(warnings.map { $0["nal_unit"] as? Int } == [0, 0])
        #expect(warnings.map { $0["bit_offset"] as? Int } == [position - 8, position + 1])
        #expect(warnings.map { $0["message"] as? String } == expected)
        let sps = try #require((root["sps"] as? [[String: Any]])?.first)
        let vui = try #require(sps["vui_parameters"] as? [String: Any])
        #expect(vui["log2_max_mv_length_horizontal"] as? Int == 16 && vui["log2_max_mv_length_vertical"] as? Int == 16)
        // The access units are the original stream's.
        let original = try json(try cli.enclab(["inspect", "s.264", "--json"], in: dir).stdout)
        #expect((original["warnings"] as? [Any])?.isEmpty == true)
        func pictures(_ root: [String: Any]) -> [String] {
            (root["access_units"] as? [[String: Any]] ?? []).map { "\($0["picture"] ?? "") \($0["nal_units"] ?? "")" }
        }
        #expect(pictures(root) == pictures(original) && pictures(root).count == 5)

        for args in [["inspect", "mv.264", "--strict"], ["inspect", "--json", "--strict", "mv.264"]] {
            let strict = try cli.enclab(args, in: dir)
            #expect(strict.status == 65 && strict.stdout.isEmpty)
            #expect(strict.stderr == "enclab: mv.264: NAL unit 0 at byte 4 (SPS): log2_max_mv_length_horizontal out of range (0-15): 16 (at bit \(position - 8))\n")
        }
        let convert = try cli.enclab(["convert", "--to", "avcc", "mv.264", "mv.avcc"], in: dir)
        #expect(convert.status == 0 && convert.stderr == expected.map { "warning: \($0)\n" }.joined())
        let refused = try cli.enclab(["convert", "--to", "avcc", "--strict", "mv.264", "strict.avcc"], in: dir)
        #expect(refused.status == 65 && !FileManager.default.fileExists(atPath: "\(dir)/strict.avcc"))
    }

    // MARK: 2. Empty NAL units

    @Test("empty NAL units in Annex B and AVCC: skipped with one counted warning, FFmpeg decodes the same pictures; --strict refuses")
    func emptyNALUnits() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir, "s.264", width: 64, height: 48, frames: 6, ["--bframes", "0"])
        let original = try bytes(dir, "s.264")
        let located = ForbiddenZeroBitTests.scan(original)
        try #require(located.count == 9)
        // Annex B: 00 00 01 inserted just before the 4-byte start code of NAL unit 4 (the first P slice, which starts
        // an access unit): an empty NAL unit whose header would sit 3 bytes on, where the next start code's
        // zero_byte is; and 00 00 01 at the end: another. (Inserted between the SEI and the IDR slice of access
        // unit 0 instead, FFmpeg 5.1's raw H.264 parser loses a picture: "Frame num change from 0 to 1".)
        let cut = located[4].offset - 4
        try #require(Array(original[cut..<located[4].offset]) == [0, 0, 0, 1])
        let annexB = Array(original[..<cut]) + [0, 0, 1] + Array(original[cut...]) + [0, 0, 1]
        try write(annexB, dir, "e.264")
        #expect(try framemd5(dir, "e.264") == framemd5(dir, "s.264"))
        let message = "e.264: 2 empty NAL units at bytes \(cut + 3), \(annexB.count) (nal_unit: start code followed by no NAL unit (empty NAL unit)); skipped, as FFmpeg's splitter does"
        let r = try cli.enclab(["inspect", "e.264", "--json"], in: dir)
        #expect(r.status == 0 && r.stderr == "warning: \(message)\n")
        let root = try json(r.stdout)
        let warnings = try #require(root["warnings"] as? [[String: Any]])
        #expect(warnings.count == 1 && warnings.first?["count"] as? Int == 2)
        #expect(warnings.first?["byte_offsets"] as? [Int] == [cut + 3, annexB.count] && warnings.first?["message"] as? String == message)
        // The NAL units listed are the original's, those after the insertion 3 bytes on.
        let listed = try #require(root["nal_units"] as? [[String: Any]])
        #expect(listed.map { $0["offset"] as? Int } == located.enumerated().map { $0.offset < 4 ? $0.element.offset : $0.element.offset + 3 })
        #expect(listed.map { $0["size"] as? Int } == located.map(\.size))
        let strict = try cli.enclab(["inspect", "e.264", "--strict"], in: dir)
        #expect(strict.status == 65)
        #expect(strict.stderr == "enclab: e.264: invalid nal_unit at byte \(cut + 3): start code followed by no NAL unit (empty NAL unit)\n")

        // AVCC, 4-byte lengths, by hand: a length of 0 before NAL unit 2 and one at the end.
        let units = nalUnits(original)
        func avcc(_ nals: [[UInt8]]) -> [UInt8] {
            var out: [UInt8] = []
            for n in nals {
                let length: [UInt8] = [0, 0, UInt8(n.count >> 8), UInt8(n.count & 0xFF)]   // each under 65,536 bytes here
                out += length + n
            }
            return out
        }
        let zero: [UInt8] = [0, 0, 0, 0]
        let withEmpty = avcc(Array(units[..<2])) + zero + avcc(Array(units[2...])) + zero
        try write(withEmpty, dir, "e.avcc")
        let firstEmpty = 8 + units[0].count + units[1].count
        let a = try cli.enclab(["inspect", "e.avcc", "--from", "avcc", "--json"], in: dir)
        #expect(a.status == 0)
        #expect(a.stderr == "warning: e.avcc: 2 empty NAL units at bytes \(firstEmpty), \(withEmpty.count - 4) (NALUnitLength: length 0 (a NAL unit has at least its header byte)); skipped, as FFmpeg does\n")
        let avccListed = try #require(try json(a.stdout)["nal_units"] as? [[String: Any]])
        #expect(avccListed.map { $0["size"] as? Int } == units.map(\.count))
        let s = try cli.enclab(["inspect", "e.avcc", "--from", "avcc", "--strict"], in: dir)
        #expect(s.status == 65 && s.stderr == "enclab: e.avcc: invalid NALUnitLength at byte \(firstEmpty): length 0 (a NAL unit has at least its header byte)\n")
        // Converted back to Annex B (the empty ones dropped), FFmpeg decodes the original's pictures.
        let back = try cli.enclab(["convert", "--to", "annexb", "--from", "avcc", "e.avcc", "back.264"], in: dir)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try framemd5(dir, "back.264") == framemd5(dir, "s.264"))
        let refused = try cli.enclab(["convert", "--to", "annexb", "--from", "avcc", "--strict", "e.avcc", "strict.264"], in: dir)
        #expect(refused.status == 65)
    }

    // MARK: 3. Parameter sets that change

    @Test("a resolution switch (two x264 streams, both SPS id 0): each SPS as it appears, per-AU occurrences as ffprobe's sizes; avcC refused unless --avcc-config-first")
    func resolutionSwitch() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir, "a.264", width: 64, height: 48, frames: 3, ["--bframes", "0"])
        try x264(dir, "b.264", width: 96, height: 64, frames: 3, ["--bframes", "0"])
        let (a, b) = (try bytes(dir, "a.264"), try bytes(dir, "b.264"))
        try write(a + b, dir, "ab.264")
        let (nalsA, nalsB) = (nalUnits(a), nalUnits(b))
        try #require(nalsA.prefix(2).map { $0[0] & 0x1F } == [7, 8] && nalsB.prefix(2).map { $0[0] & 0x1F } == [7, 8])
        let switchAt = nalsA.count
        // ffprobe: the size of each decoded picture, in order.
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "frame=width,height", "-of", "compact=p=0:nk=1", "ab.264"], in: dir)
        let sizes = probe.stdout.split(separator: "\n").map { $0.split(separator: "|").prefix(2).joined(separator: "x") }
        #expect(sizes == ["64x48", "64x48", "64x48", "96x64", "96x64", "96x64"])

        let r = try cli.enclab(["inspect", "ab.264", "--json"], in: dir)
        #expect(r.status == 0 && r.stderr.isEmpty)
        let root = try json(r.stdout)
        let sps = try #require(root["sps"] as? [[String: Any]])
        #expect(sps.map { $0["nal_unit"] as? Int } == [0, switchAt])
        #expect(sps.map { $0["content"] as? String } == ["first", "changed"])
        #expect(sps.map { $0["seq_parameter_set_id"] as? Int } == [0, 0])
        #expect(sps.map { $0["occurrence"] as? Int } == [0, 1])
        let pps = try #require(root["pps"] as? [[String: Any]])
        #expect(pps.map { $0["nal_unit"] as? Int } == [1, switchAt + 1])
        // The second PPS repeats the first when its bytes after the header are the same.
        #expect(pps.map { $0["content"] as? String } == ["first", nalsA[1].dropFirst() == nalsB[1].dropFirst() ? "repeated" : "changed"])
        #expect(pps.map { $0["sps_occurrence"] as? Int } == [0, 1])
        let units = try #require(root["access_units"] as? [[String: Any]])
        let named = units.compactMap { u in (u["sps"] as? Int).map { sps[$0] } }.map { "\($0["width"] ?? "")x\($0["height"] ?? "")" }
        #expect(named == sizes)
        #expect(units.map { $0["pps"] as? Int } == [0, 0, 0, 1, 1, 1])
        let text = try cli.enclab(["inspect", "ab.264"], in: dir).stdout
        #expect(text.contains("\nSPS #1 (id 0) at NAL unit \(switchAt), new content: profile_idc "))
        #expect(text.contains("\n  3: NAL \(switchAt)-\(switchAt + 3) slices I -> IDR, SPS #1 PPS #1, random access\n"))

        // One avcC record cannot describe it: refused, nothing written.
        let refused = try cli.enclab(["convert", "--to", "avcc", "--avcc-config", "ab.avcC", "ab.264", "ab.avcc"], in: dir)
        #expect(refused.status == 65)
        #expect(refused.stderr == "enclab: ab.264: the parameter sets change at NAL unit \(switchAt) (SPS id 0 given new content): an avcC record holds one set per id, and ISO/IEC 14496-15 needs a new sample entry there; --avcc-config-first writes the first ones\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/ab.avcc") && !FileManager.default.fileExists(atPath: "\(dir)/ab.avcC"))
        let first = try cli.enclab(["convert", "--to", "avcc", "--avcc-config", "ab.avcC", "--avcc-config-first", "ab.264", "ab.avcc"], in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        // The record (ISO/IEC 14496-15 5.3.3.1): byte 5 is 111 + numOfSequenceParameterSets, then a 16-bit length
        // and the SPS: a.264's.
        let record = try bytes(dir, "ab.avcC")
        let length = Int(record[6]) << 8 | Int(record[7])
        #expect(record[5] & 0x1F == 1 && Array(record[8..<(8 + length)]) == nalsA[0])
    }

    // MARK: 5. Recovery points

    /// Per packet of trace_headers: ffmpeg's "key frame" flag and the recovery point SEI's four fields, if any.
    func recoveryPoints(_ lines: [String]) -> [(key: Bool, fields: [Int]?)] {
        var out: [(key: Bool, fields: [Int]?)] = []
        for line in lines {
            if line.hasPrefix("Packet:") { out.append((line.contains("key frame"), nil)); continue }
            let f = line.split(separator: " ")
            guard f.count >= 4, let v = Int(f[f.count - 1]), !out.isEmpty else { continue }
            if ["recovery_frame_cnt", "exact_match_flag", "broken_link_flag", "changing_slice_group_idc"].contains(String(f[1])) {
                out[out.count - 1].fields = (out[out.count - 1].fields ?? []) + [v]
            }
        }
        return out
    }

    @Test("recovery points of an open-GOP and an intra-refresh stream: the access units and fields trace_headers shows", arguments: [
        ["--open-gop", "--keyint", "10", "--min-keyint", "10", "--bframes", "2"], ["--intra-refresh", "--keyint", "10"],
    ])
    func recoveryPointStreams(flags: [String]) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir, "r.264", width: 64, height: 48, frames: 30, flags)
        let traced = recoveryPoints(try trace(dir, "r.264"))
        try #require(traced.count == 30)
        let r = try cli.enclab(["inspect", "r.264", "--json"], in: dir)
        #expect(r.status == 0 && r.stderr.isEmpty)
        let units = try #require(try json(r.stdout)["access_units"] as? [[String: Any]])
        try #require(units.count == 30)
        let listed = units.map { u -> [Int]? in
            guard let p = u["recovery_point"] as? [String: Any] else { return nil }
            return ["recovery_frame_cnt", "exact_match_flag", "broken_link_flag", "changing_slice_group_idc"].map {
                (p[$0] as? Int) ?? ((p[$0] as? Bool).map { $0 ? 1 : 0 } ?? -1)
            }
        }
        #expect(listed.map { $0 ?? [] } == traced.map { $0.fields ?? [] })
        // Recovery points on pictures that are not IDR: at least two (the stream has three keyint periods).
        let points = units.indices.filter { listed[$0] != nil }
        #expect(points.count >= 2 && points.allSatisfy { units[$0]["idr"] as? Bool == false }, "\(points)")
        // A random access point is an IDR or a recovery point: what FFmpeg's parser flags as a key frame.
        #expect(units.map { $0["random_access"] as? Bool } == traced.map(\.key))
        let text = try cli.enclab(["inspect", "r.264"], in: dir).stdout
        let k = try #require(points.first), f = try #require(listed[k])
        #expect(text.contains("\n  \(k): NAL ") && text.contains(", recovery point (recovery_frame_cnt \(f[0]) exact_match_flag \(f[1]) broken_link_flag \(f[2]) changing_slice_group_idc \(f[3])), random access\n"))
    }

    // MARK: 6. Parameter sets sent out of band

    @Test("slices without their SPS/PPS, given them by --in-avcc-config, a --parameter-sets file or sprop-parameter-sets: as the full stream; FFmpeg decodes the conversions")
    func outOfBand() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try x264(dir, "s.264", width: 64, height: 48, frames: 5)
        let nals = nalUnits(try bytes(dir, "s.264"))
        let (sps, pps) = (try #require(nals.first { $0[0] & 0x1F == 7 }), try #require(nals.first { $0[0] & 0x1F == 8 }))
        #expect(nals.filter { [7, 8].contains($0[0] & 0x1F) }.count == 2)
        let slices = nals.filter { ![7, 8].contains($0[0] & 0x1F) }
        let startCode: [UInt8] = [0, 0, 0, 1]
        try write(slices.flatMap { startCode + $0 }, dir, "slices.264")
        try write(startCode + sps + startCode + pps, dir, "ps.264")
        func be(_ n: Int, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(n >> (8 * $0) & 0xFF) } }
        try write(slices.flatMap { be($0.count, 4) + $0 }, dir, "slices.avcc")
        // avcC by hand: version 1, profile/compatibility/level from the SPS, FF (4-byte lengths), E1 (one SPS), its
        // length and bytes, 01 (one PPS), its length and bytes.
        try write([1, sps[1], sps[2], sps[3], 0xFF, 0xE1] + be(sps.count, 2) + sps + [1] + be(pps.count, 2) + pps, dir, "s.avcC")
        let sprop = [sps, pps].map { Data($0).base64EncodedString() }.joined(separator: ",")

        func summary(_ r: CommandLineTests.Result) throws -> [String] {
            let root = try json(r.stdout)
            let units = (root["access_units"] as? [[String: Any]] ?? []).map { "\($0["picture"] ?? "") \($0["slice_types"] ?? "")" }
            let sets = (root["sps"] as? [[String: Any]] ?? []).map { "\($0["width"] ?? "")x\($0["height"] ?? "") \($0["nal_unit"] ?? "")" }
            return units + sets
        }
        let full = try summary(try cli.enclab(["inspect", "s.264", "--json"], in: dir))
        #expect(full.count == 6 && full.last == "64x48 0")
        let missing = try cli.enclab(["inspect", "slices.264"], in: dir)
        #expect(missing.status == 65 && missing.stderr.contains("pic_parameter_set_id 0 refers to a parameter set not seen before"))
        let outOfBandFull = Array(full.dropLast()) + ["64x48 <null>"]
        for args in [["slices.avcc", "--in-avcc-config", "s.avcC"], ["slices.264", "--parameter-sets", "ps.264"],
                     ["slices.264", "--parameter-sets", sprop], ["slices.264", "--parameter-sets=sprop-parameter-sets=\(sprop)"]] {
            let r = try cli.enclab(["inspect", "--json"] + args, in: dir)
            #expect(r.status == 0 && r.stderr.isEmpty, "\(args): \(r.stderr)")
            #expect(try summary(r) == outOfBandFull, "\(args)")
        }
        let text = try cli.enclab(["inspect", "slices.avcc", "--in-avcc-config", "s.avcC"], in: dir).stdout
        #expect(text.contains("\nSPS #0 (id 0) out of band (--in-avcc-config s.avcC): profile_idc "))
        // Converted to Annex B, the parameter sets go in band first: FFmpeg decodes the original's pictures.
        let original = try framemd5(dir, "s.264")
        #expect(original.count == 5)
        for (args, out) in [(["--in-avcc-config", "s.avcC", "slices.avcc"], "a.264"), (["--parameter-sets", sprop, "slices.264"], "b.264")] {
            let r = try cli.enclab(["convert", "--to", "annexb"] + args + [out], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try framemd5(dir, out) == original)
        }
        // AVCC in, AVCC and avcC out: the same sample bytes and a record with the same parameter sets.
        let same = try cli.enclab(["convert", "--to", "avcc", "--in-avcc-config", "s.avcC", "--avcc-config", "o.avcC", "slices.avcc", "o.avcc"], in: dir)
        #expect(same.status == 0, "\(same.stderr)")
        let (written, given) = (try bytes(dir, "o.avcc"), try bytes(dir, "slices.avcc"))
        #expect(written == given)
        // Then, for High profile (100), the extension block: FD (chroma_format 1), F8, F8 (bit depths 8), 00.
        let recordTail = Array(try bytes(dir, "o.avcC").suffix(sps.count + pps.count + 7))
        #expect(sps[1] == 100 && recordTail == sps + [1] + be(pps.count, 2) + pps + [0xFD, 0xF8, 0xF8, 0x00])

        // Bad input: one line naming the flag, the exit class of what is wrong.
        let cases: [([String], Int32, String)] = [
            (["slices.264", "--parameter-sets", "Z2QAC"], 65,
             "enclab: --parameter-sets 'Z2QAC': no such file, and not a sprop-parameter-sets value: invalid sprop-parameter-sets[0] at byte 0: not base64: 5 characters, not a multiple of 4\n"),
            (["slices.264", "--parameter-sets", "missing.264"], 66,
             "enclab: --parameter-sets 'missing.264': no such file (nor a sprop-parameter-sets value: base64 parts separated by commas)\n"),
            (["slices.264", "--parameter-sets", "slices.264"], 65,
             "enclab: --parameter-sets slices.264: NAL unit 0 is nal_unit_type 6 (SEI), not an SPS (7) or PPS (8)\n"),
            (["slices.avcc", "--in-avcc-config", "s.264"], 65,
             "enclab: --in-avcc-config s.264: not an avcC record: invalid configurationVersion at byte 0: must be 1: 0\n"),
            (["slices.avcc", "--in-avcc-config", "missing.avcC"], 66, "enclab: --in-avcc-config missing.avcC: no such file\n"),
            (["slices.avcc", "--in-avcc-config", "s.avcC", "--parameter-sets", "ps.264"], 64,
             "enclab: --in-avcc-config and --parameter-sets both give the parameter sets: give one (see 'enclab inspect --help')\n"),
            (["slices.264", "--in-avcc-config", "s.avcC", "--from", "annexb"], 64,
             "enclab: --in-avcc-config goes with AVCC input, not --from annexb (see 'enclab inspect --help')\n"),
            (["slices.avcc", "--in-avcc-config", "s.avcC", "--length-size", "2"], 64,
             "enclab: --length-size 2 disagrees with --in-avcc-config s.avcC, whose lengthSizeMinusOne says 4 bytes (see 'enclab inspect --help')\n"),
        ]
        for (args, status, stderr) in cases {
            let r = try cli.enclab(["inspect"] + args, in: dir)
            #expect(r.status == status && r.stderr == stderr && r.stdout.isEmpty, "\(args): \(r.status) \(r.stderr)")
        }
        let convert = try cli.enclab(["convert", "--to", "annexb", "--parameter-sets", "Z2QAC", "slices.264", "x.264"], in: dir)
        #expect(convert.status == 65 && convert.stderr.hasPrefix("enclab: --parameter-sets 'Z2QAC': "))
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.264"))
    }
}
