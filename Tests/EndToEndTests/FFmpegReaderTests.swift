import Foundation
import Testing
import EncoderLab

/// A clip is read as the one file it is: ffmpeg must not choose, from the clip's name or its bytes, a reader that
/// opens other files (an image sequence named by `%03d`, an HLS playlist, an ffconcat script).
@Suite("ffmpeg reads a clip as one file, end to end", .serialized)
struct FFmpegReaderTests {
    typealias CLI = CommandLineTests

    static func run(_ executable: String, _ arguments: [String], in dir: String) throws -> CLI.Result {
        let r = try CLI.process(executable, arguments, in: dir)
        guard r.status == 0 else { throw LabError(.software, "\(executable) \(arguments): \(r.stderr)") }
        return r
    }

    /// ffmpeg writes a test pattern: `frames` frames of `size` at 10 fps, with the given output options.
    static func makeVideo(_ name: String, size: String, frames: Int, options: [String], in dir: String) throws {
        _ = try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=10",
                                        "-frames:v", "\(frames)"] + options + [name], in: dir)
    }

    @Test("an mp4 named img%03d.png beside img001.png ... is read as the mp4, not as the PNG sequence its name spells")
    func sequenceName() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Three 32x16 PNGs img001.png ... img003.png, and a 12-frame 96x64 mp4, renamed to img%03d.png.
        try Self.makeVideo("img%03d.png", size: "32x16", frames: 3, options: ["-f", "image2"], in: dir)
        try Self.makeVideo("clip.mp4", size: "96x64", frames: 12, options: ["-c:v", "mpeg4", "-f", "mp4"], in: dir)
        try FileManager.default.copyItem(atPath: "\(dir)/clip.mp4", toPath: "\(dir)/img%03d.png")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/img003.png"))
        // ffprobe's count of the mp4's frames, read under a name that spells no sequence, mov demuxer only.
        let probed = try Self.run("/usr/bin/ffprobe", ["-v", "error", "-format_whitelist", "mov", "-count_frames",
                                                       "-select_streams", "v:0", "-show_entries",
                                                       "stream=nb_read_frames,width,height", "-of", "csv=p=0", "clip.mp4"], in: dir)
        #expect(probed.stdout == "96,64,12\n")

        let r = try CLI.process(CLI.binary, ["encode", "img%03d.png", "--threads", "1", "--preset", "ultrafast", "--db", "lab.sqlite",
                                             "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try CommandLineTests().sqlite("\(dir)/lab.sqlite", "SELECT status, clip, width || ',' || height || ',' || frames FROM runs")
                == ["done|img%03d.png|\(probed.stdout.dropLast())"])
    }

    @Test("a clip whose bytes are an HLS playlist or an ffconcat script naming other.ts is refused with 65, naming the clip",
          arguments: [
              ("playlist.mp4", "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nother.ts\n#EXT-X-ENDLIST\n", "hls"),
              ("list.mkv", "ffconcat version 1.0\nfile other.ts\n", "concat"),
          ])
    func readersOfOtherFiles(name: String, text: String, format: String) throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.makeVideo("other.ts", size: "64x48", frames: 5, options: ["-c:v", "mpeg2video", "-f", "mpegts"], in: dir)
        try text.write(toFile: "\(dir)/\(name)", atomically: true, encoding: .utf8)
        // ffmpeg left to itself reads other.ts through it (so the file is what this test says it is).
        let plain = try Self.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=format_name", "-of", "csv=p=0", name], in: dir)
        #expect(plain.stdout == "\(format)\n")

        let r = try CLI.process(CLI.binary, ["encode", name, "--threads", "1", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("enclab: \(name): ffmpeg reads it as '\(format)', a format that reads other files"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        if FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite") {
            #expect(try CommandLineTests().sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["0"])
        }
    }
}
