import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// Inputs that used to trap, hang or be misread, run through the built `enclab`: each gives its sysexits status
/// and a message naming the tag, flag or file.
@Suite("enclab on faulty inputs, end to end", .serialized)
struct InputFaultTests {
    typealias Result = CommandLineTests.Result

    /// ``CommandLineTests/process(_:_:in:environment:limit:)`` with a 120-second limit.
    static func process(_ executable: String, _ arguments: [String], in dir: String, limit: Int = 120) throws -> Result {
        try CommandLineTests.process(executable, arguments, in: dir, limit: limit)
    }

    func enclab(_ arguments: [String], in dir: String) throws -> Result { try TestSupport.enclab(arguments, in: dir, limit: 120) }

    func scratch() -> String { TestSupport.scratchFolder("enclab-fault") }

    /// A y4m of 3 64x48 frames under `header` (its W and H must stay 64 and 48 for the frame bytes to match).
    func y4m(_ path: String, header: String) throws {
        let clip = path + ".src"
        try SyntheticClip(width: 64, height: 48, frames: 3, seed: 3).write(to: clip)
        var data = try Data(contentsOf: URL(fileURLWithPath: clip))
        let newline = data.firstIndex(of: 0x0A)!
        data.replaceSubrange(0..<newline, with: Data(header.utf8))
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// An mp4 of a synthetic clip (libx264 through ffmpeg), given to ffmpeg as a file: URL.
    func mp4(_ path: String, frames: Int) throws {
        let clip = path + ".y4m"
        try SyntheticClip(width: 64, height: 48, frames: frames, seed: 4).write(to: clip)
        let r = try Self.process("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", "file:" + clip,
                                                  "-c:v", "libx264", "-g", "5", "-pix_fmt", "yuv420p", "file:" + path], in: "/")
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Frames ffprobe decodes from `path` (an absolute path, given as a file: URL).
    func ffprobeFrames(_ path: String) throws -> Int? {
        let r = try Self.process("/usr/bin/env", ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                                                  "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", "file:" + path], in: "/")
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try Self.process("/usr/bin/sqlite3", [db, sql], in: "/").stdout.split(separator: "\n").map(String.init)
    }

    @Test("y4m header numbers beyond x264's C ints: exit 65 naming the tag and value", arguments: [
        ("F25:1 A3000000000:1", "y4m header sample aspect ratio A3000000000:1 must be num:den with each from 0 to 2147483647"),
        ("F25:1 A1:99999999999", "y4m header sample aspect ratio A1:99999999999 must be num:den with each from 0 to 2147483647"),
        ("F99999999999:1", "y4m header frame rate F99999999999:1 must be num:den with each from 1 to 2147483647"),
        ("F25:99999999999999999999", "y4m header tag F must be num:den, got '25:99999999999999999999'"),
    ])
    func headerNumbers(tags: String, message: String) throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try y4m("\(dir)/c.y4m", header: "YUV4MPEG2 W64 H48 \(tags)")
        let r = try enclab(["encode", "c.y4m", "--threads", "1"], in: dir)
        #expect(!r.killed)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr == "enclab: c.y4m: \(message)\n")
    }

    @Test("a width or height beyond reason: exit 65 naming the tag", arguments: ["W99999 H48", "W64 H4294967344"])
    func pictureSize(size: String) throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try y4m("\(dir)/c.y4m", header: "YUV4MPEG2 \(size) F25:1")
        let r = try enclab(["encode", "c.y4m"], in: dir)
        #expect(r.status == 65, "\(r.stderr)")
        let tag = size.hasPrefix("W64") ? "H" : "W"
        #expect(r.stderr.hasPrefix("enclab: c.y4m: y4m header \(tag) must be a \(tag == "W" ? "width" : "height") of 1 to 16384"), "\(r.stderr)")
    }

    @Test("--frames and --seek past x264's int on an ffmpeg-decoded input: exit 64 naming the flag", arguments: [
        (["--frames", "3000000000"], "setting 'frames' must be at most 2147483647 frames (x264 counts frames in a C int), got '3000000000'"),
        (["--seek", "3000000000"], "setting 'seek' must be at most 2147483647 frames (x264 counts frames in a C int), got '3000000000'"),
        (["--seek", "2000000000", "--frames", "2000000000"], "settings 'seek' (2000000000) plus 'frames' (2000000000) must be at most 2147483647 frames (x264 counts frames in a C int)"),
    ])
    func frameFlags(flags: [String], message: String) throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try mp4("\(dir)/c.mp4", frames: 4)
        let r = try enclab(["encode", "c.mp4"] + flags, in: dir)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr == "enclab: \(message) (see 'enclab encode --help')\n", "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/results"))
    }

    @Test("a named pipe without a writer, /dev/zero and /dev/stdin are refused with 66, without hanging")
    func notRegularFiles() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkfifo("\(dir)/pipe.y4m", 0o600) == 0)
        for (path, kind) in [("pipe.y4m", "a named pipe"), ("/dev/zero", "a character device"), ("/dev/stdin", "a character device")] {
            let r = try enclab(["encode", path], in: dir)
            #expect(!r.killed, "\(path) hung")
            #expect(r.status == 66, "\(path): \(r.stderr)")
            #expect(r.stderr == "enclab: \(path): not a regular file (\(kind)); enclab reads a clip twice, give it a file\n")
        }
    }

    @Test("clips named like ffmpeg protocols are read as files: frames equal ffprobe's count of the same file")
    func protocolLikeNames() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // a.mp4 has 9 frames; the clips 5: read as the concat protocol, 'concat:a.mp4|a.mp4' would be a.mp4's frames.
        try mp4("\(dir)/a.mp4", frames: 9)
        try mp4("\(dir)/five.mp4", frames: 5)
        let names = ["12:30.mp4", "concat:a.mp4|a.mp4"]
        for name in names { try FileManager.default.copyItem(atPath: "\(dir)/five.mp4", toPath: "\(dir)/\(name)") }
        #expect(try ffprobeFrames("\(dir)/a.mp4") == 9)
        for (k, name) in names.enumerated() {
            // The copies have the same bytes, so the same run key: each gets a database and folder of its own.
            let r = try enclab(["encode", name, "--threads", "1", "--db", "lab\(k).sqlite", "--out", "out\(k)"], in: dir)
            #expect(r.status == 0, "\(name): \(r.stderr)")
            let expected = try #require(try ffprobeFrames("\(dir)/\(name)"))
            #expect(expected == 5)
            #expect(try sqlite("\(dir)/lab\(k).sqlite", "SELECT status, frames, clip FROM runs WHERE run_id = 1") == ["done|\(expected)|\(name)"])
        }
    }

    @Test("--out naming a folder like a protocol: the independent decode reads the stream as a file")
    func outputFolderLikeProtocol() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 2).write(to: "\(dir)/c.y4m")
        let r = try enclab(["encode", "c.y4m", "--threads", "1", "--db", "lab.sqlite", "--out", "res:1"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT status, frames FROM runs") == ["done|6"])
        #expect(try ffprobeFrames("\(dir)/\(try CommandLineTests.runFolder("\(dir)/lab.sqlite"))/stream.264") == 6)
    }
}
