import Foundation
import H264
import Testing
@testable import EncoderLab

/// `Matroska.write` checked with ffprobe and ffmpeg on the written file: the times of its packets and of its decoded
/// frames, their count, its time base and the decoded pictures, for streams made by the x264 CLI.
@Suite("Matroska: exact microsecond timestamps, checked with ffprobe on the written file", .serialized)
struct MatroskaTests {
    /// 96x64 at 25 fps, 40 frames.
    static let clip = SyntheticClip(width: 96, height: 64, frames: 40, fpsNum: 25, fpsDen: 1, seed: 11)
    /// B-frames with a pyramid: decode order differs from display order.
    static let bframeFlags = ["--quiet", "--threads", "1", "--bframes", "3", "--b-pyramid", "normal", "--keyint", "16"]

    /// The x264 CLI's stream of ``clip`` with `flags`, at `scratch/name`.
    func x264Stream(_ flags: [String], scratch: Scratch, name: String = "clip.264") throws -> String {
        let source = scratch.file("clip.y4m")
        try Self.clip.write(to: source)
        let out = scratch.file(name)
        let cli = try Witness.x264(flags + ["-o", out, source])
        try #require(cli.status == 0, "\(cli.stderr)")
        return out
    }

    /// Irregular times: from `start`, gaps of 20,000 to 60,000 µs with any microsecond, from a seeded generator.
    static func irregularTimes(start: Int64, count: Int, seed: UInt64) -> [Int64] {
        var rng = SplitMix64(seed: seed)
        var t = start
        return (0..<count).map { _ in
            defer { t += 20_000 + Int64(rng.next() % 40_001) }
            return t
        }
    }

    /// ffprobe's `pts` of every packet, in file (decode) order.
    static func packetPTS(_ mkv: String) throws -> [Int] {
        let out = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts", "-of", "json", Witness.file(mkv)])
        return (Witness.json(out.stdout)["packets"] as? [[String: Any]] ?? []).compactMap { $0["pts"] as? Int }
    }

    /// ffprobe's `pts` of every decoded frame, in the decoder's output (display) order.
    static func framePTS(_ mkv: String) throws -> [Int] {
        let out = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_frames", "-show_entries", "frame=pts", "-of", "json", Witness.file(mkv)])
        return (Witness.json(out.stdout)["frames"] as? [[String: Any]] ?? []).compactMap { $0["pts"] as? Int }
    }

    /// The video stream's time base as ffprobe reports it.
    static func timeBase(_ mkv: String) throws -> String {
        let out = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base", "-of", "csv=p=0", Witness.file(mkv)])
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The MD5 of each decoded picture (ffmpeg's framemd5), in output order.
    static func pictureHashes(_ path: String) throws -> [String] {
        let out = try Witness.run("ffmpeg", ["-hide_banner", "-v", "error", "-i", Witness.file(path), "-f", "framemd5", "-"])
        return out.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// What every written file must show: the time base 1/1000000, one packet per frame, the packets' times (decode
    /// order) the given ones as a set, the decoded frames' times (display order) the given ones in order.
    func expectExactTimes(_ mkv: String, _ pts: [Int64]) throws {
        #expect(try Self.timeBase(mkv) == "1/1000000")
        let packets = try Self.packetPTS(mkv)
        #expect(packets.count == pts.count)
        #expect(packets.sorted() == pts.map { Int($0) })
        #expect(try Self.framePTS(mkv) == pts.map { Int($0) })
        #expect(try Witness.frameCount(mkv) == pts.count)
    }

    @Test("constant-rate stream with B-frames: display-order times exact, packets out of order, pictures unchanged")
    func constantRate() throws {
        let scratch = Scratch()
        let stream = try x264Stream(Self.bframeFlags, scratch: scratch)
        // 25 fps: frame k at k x 40,000 µs.
        let pts = (0..<Int64(Self.clip.frames)).map { $0 * 40_000 }
        let mkv = scratch.file("out.mkv")
        let warnings = try Matroska.write(stream: stream, ptsMicroseconds: pts, to: mkv)
        #expect(warnings == [])
        try expectExactTimes(mkv, pts)
        // The times follow display order: with B-frames the packets (decode order) carry them out of order. Were
        // the entries given in decode order, the packets would be sorted and the decoded frames not.
        #expect(try Self.packetPTS(mkv) != pts.map { Int($0) })
        // The same pictures as the raw stream decodes to.
        let raw = try Self.pictureHashes(stream)
        #expect(raw.count == Self.clip.frames)
        #expect(try Self.pictureHashes(mkv) == raw)
        // No temporary file is left beside the output.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["clip.264", "clip.y4m", "out.mkv"])
    }

    @Test("x264 --tcfile-in stream (irregular times, --timebase 1/1000000): the same times in the Matroska file")
    func timecodeFileStream() throws {
        let scratch = Scratch()
        let pts = Self.irregularTimes(start: 0, count: Self.clip.frames, seed: 5)
        // x264's timecode file, in milliseconds with three decimals.
        let tc = "# timecode format v2\n" + pts.map { String(format: "%lld.%03lld", $0 / 1000, $0 % 1000) }.joined(separator: "\n") + "\n"
        try tc.write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        let stream = try x264Stream(Self.bframeFlags + ["--tcfile-in", scratch.file("tc.txt"), "--timebase", "1/1000000"], scratch: scratch)
        let mkv = scratch.file("out.mkv")
        try Matroska.write(stream: stream, ptsMicroseconds: pts, to: mkv)
        try expectExactTimes(mkv, pts)
        #expect(Set(pts.map { $0 % 1000 }).count > 10, "times with microseconds that milliseconds would round away")
    }

    @Test("an offset of 10^12 µs is kept exactly, and so are times up to the limit 10^15 µs")
    func largeOffsets() throws {
        let scratch = Scratch()
        let stream = try x264Stream(Self.bframeFlags, scratch: scratch)
        let offset = Self.irregularTimes(start: 1_000_000_000_000 + 7, count: Self.clip.frames, seed: 9)
        try Matroska.write(stream: stream, ptsMicroseconds: offset, to: scratch.file("offset.mkv"))
        try expectExactTimes(scratch.file("offset.mkv"), offset)
        #expect(offset[0] == 1_000_000_000_007)

        // Ending exactly at the limit: 10^15 µs minus the span, then the same gaps.
        let gaps = Self.irregularTimes(start: 0, count: Self.clip.frames, seed: 13)
        let top = gaps.map { Matroska.largestPTSMicroseconds - gaps.last! + $0 }
        #expect(top.last == 1_000_000_000_000_000)
        try Matroska.write(stream: stream, ptsMicroseconds: top, to: scratch.file("top.mkv"))
        try expectExactTimes(scratch.file("top.mkv"), top)
    }

    @Test("a repeated time (a duplicate PTS) is kept: two packets with the same pts")
    func repeatedTime() throws {
        let scratch = Scratch()
        let stream = try x264Stream(Self.bframeFlags, scratch: scratch)
        var pts = (0..<Int64(Self.clip.frames)).map { $0 * 40_000 }
        pts[5] = pts[4]
        try Matroska.write(stream: stream, ptsMicroseconds: pts, to: scratch.file("dup.mkv"))
        try expectExactTimes(scratch.file("dup.mkv"), pts)
        #expect(try Self.packetPTS(scratch.file("dup.mkv")).filter { $0 == 160_000 }.count == 2)
    }

    @Test("names with ':', ',', '@', a leading '-' and non-ASCII letters are paths to mkvmerge, not options")
    func hostileNames() throws {
        let scratch = Scratch()
        let folder = scratch.file("@we:ird, -x é")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let stream = try x264Stream(Self.bframeFlags, scratch: scratch, name: "@we:ird, -x é/-s, @x.264")
        let pts = Self.irregularTimes(start: 33, count: Self.clip.frames, seed: 3)
        let mkv = folder + "/+o:@.mkv"
        try Matroska.write(stream: stream, ptsMicroseconds: pts, to: mkv)
        try expectExactTimes(mkv, pts)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["+o:@.mkv", "-s, @x.264"])
    }

    @Test("the timestamp file: mkvmerge's v2 header, milliseconds with exactly three decimals")
    func timecodeText() {
        #expect(Matroska.timecodeText([0, 7, 33_367, 40_000, 1_000_000_000_000_007]) ==
                "# timestamp format v2\n0.000\n0.007\n33.367\n40.000\n1000000000000.007\n")
    }

    @Test("bad input: 65 naming the frame or the counts, 66 for a missing stream, 64 for the stream as output; nothing written")
    func badInput() throws {
        let scratch = Scratch()
        let stream = try x264Stream(Self.bframeFlags, scratch: scratch)
        let good = (0..<Int64(Self.clip.frames)).map { $0 * 40_000 }
        let mkv = scratch.file("out.mkv")
        // mkvmerge itself writes a file for a short list (warning, exit status 1, the last times made up) and
        // ignores extra entries: the lab counts the frames first.
        #expect(throws: LabError(.data, "\(stream): 40 frames, but 39 presentation times given")) {
            try Matroska.write(stream: stream, ptsMicroseconds: Array(good.dropLast()), to: mkv)
        }
        #expect(throws: LabError(.data, "\(stream): 40 frames, but 41 presentation times given")) {
            try Matroska.write(stream: stream, ptsMicroseconds: good + [1_600_000], to: mkv)
        }
        var back = good
        back[7] = 239_999
        #expect(throws: LabError(.data, "\(stream): frame 7 (display order): presentation time 239999 µs is before frame 6's 240000 µs (a container orders frames by their times)")) {
            try Matroska.write(stream: stream, ptsMicroseconds: back, to: mkv)
        }
        var negative = good
        negative[0] = -1
        #expect(throws: LabError(.data, "\(stream): frame 0 (display order): presentation time -1 µs is negative (Matroska times start at 0)")) {
            try Matroska.write(stream: stream, ptsMicroseconds: negative, to: mkv)
        }
        let beyond = good.map { $0 + 1_000_000_000_000_000 - 1_560_000 + 1 }
        #expect(throws: LabError(.data, "\(stream): frame 39 (display order): presentation time 1000000000000001 µs is above 1000000000000000 µs, beyond which mkvmerge loses microseconds")) {
            try Matroska.write(stream: stream, ptsMicroseconds: beyond, to: mkv)
        }
        #expect(throws: LabError(.noInput, "\(scratch.file("none.264")): no such file")) {
            try Matroska.write(stream: scratch.file("none.264"), ptsMicroseconds: good, to: mkv)
        }
        try Data("not a stream".utf8).write(to: URL(fileURLWithPath: scratch.file("text.264")))
        #expect(throws: LabError.self) {
            try Matroska.write(stream: scratch.file("text.264"), ptsMicroseconds: good, to: mkv)
        }
        do {
            try Matroska.write(stream: scratch.file("text.264"), ptsMicroseconds: good, to: mkv)
        } catch let error as LabError {
            #expect(error.kind == .data && error.message.hasPrefix(scratch.file("text.264") + ": "), "\(error)")
        }
        #expect(throws: LabError(.usage, "the Matroska output '\(stream)' is the stream '\(stream)': it would overwrite its input")) {
            try Matroska.write(stream: stream, ptsMicroseconds: good, to: stream)
        }
        #expect(!FileManager.default.fileExists(atPath: mkv))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["clip.264", "clip.y4m", "text.264"])
    }

    @Test("refused times leave an existing output as it was; a later good write replaces it")
    func existingOutput() throws {
        let scratch = Scratch()
        let stream = try x264Stream(Self.bframeFlags, scratch: scratch)
        let mkv = scratch.file("out.mkv")
        try Data("old".utf8).write(to: URL(fileURLWithPath: mkv))
        let good = (0..<Int64(Self.clip.frames)).map { $0 * 40_000 }
        #expect(throws: LabError.self) { try Matroska.write(stream: stream, ptsMicroseconds: [0], to: mkv) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: mkv)) == Data("old".utf8))
        try Matroska.write(stream: stream, ptsMicroseconds: good, to: mkv)
        try expectExactTimes(mkv, good)
    }
}
