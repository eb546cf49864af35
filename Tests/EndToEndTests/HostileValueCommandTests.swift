import Foundation
import Testing
import EncoderLab

/// The built `enclab` given values an attacker chose: non-finite and wrapping numbers, NULs in experiment files,
/// clip paths through symbolic links, `convert` paths that name its own input, rates whose times overflow, and
/// database paths that name folders or look like SQLite URIs. Each is checked against the file system, sqlite3,
/// sha256sum or the bytes of the files.
@Suite("enclab with hostile values, end to end", .serialized)
struct HostileValueCommandTests {
    let cli = CommandLineTests()

    func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try CommandLineTests.process("/usr/bin/sqlite3", [db, sql], in: "/").stdout.split(separator: "\n").map(String.init)
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("encode: --crf nan and --keyint 2^31 are usage errors, before any database or run", arguments: [
        (["--crf", "nan"], "bad value for setting 'crf': 'nan' (not a finite number)"),
        (["--crf", "-inf"], "bad value for setting 'crf': '-inf' (not a finite number)"),
        (["--crf=1e400"], "bad value for setting 'crf': '1e400' (not a finite number)"),
        (["--keyint", "2147483648"], "bad value for setting 'keyint': '2147483648' (outside x264's int range)"),
        (["--keyint", "99999999999999999999"], "bad value for setting 'keyint': '99999999999999999999' (outside x264's int range)"),
        (["-b", "4294967298"], "bad value for setting 'bframes': '4294967298' (outside x264's int range)"),
    ])
    func badNumbers(flags: [String], message: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        let r = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--db", "lab.sqlite"] + flags, in: dir)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: \(message) (see 'enclab encode --help')\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite"))
    }

    @Test("run: a grid value 'nan', a NUL in a clip or a setting value, are usage errors naming the key; no run is stored")
    func badExperiments() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/tiny.y4m")
        let cases = [
            (#"{"name": "a", "clips": ["tiny.y4m"], "grid": {"crf": ["nan"]}}"#, "a.json: grid: bad value for setting 'crf': 'nan' (not a finite number)"),
            (#"{"name": "b", "clips": ["tiny.y4m\u0000.mp4"]}"#, "b.json: key 'clips': path 1 'tiny.y4m\\0.mp4' holds a NUL character"),
            (#"{"name": "c", "clips": ["tiny.y4m"], "base": {"keyint": "5\u0000garbage"}}"#, "c.json: base: bad value for setting 'keyint': '5\\0garbage' (holds a NUL character)"),
        ]
        for (json, message) in cases {
            let name = String(message.prefix(while: { $0 != "." }))
            try json.write(toFile: "\(dir)/\(name).json", atomically: true, encoding: .utf8)
            let r = try cli.enclab(["run", "\(name).json", "--db", "lab.sqlite"], in: dir)
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderr == "enclab: \(message) (see 'enclab run --help')\n")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite"))
    }

    @Test("run: a clip path through a symbolic link reads the file the system reads, as encode does")
    func symlinkedClip() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(dir)/exp", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(dir)/real/sub", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(dir)/exp/link", withDestinationPath: "../real/sub")
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/real/clip.y4m")
        try SyntheticClip(width: 32, height: 32, frames: 3, seed: 2).write(to: "\(dir)/exp/clip.y4m")
        try #"{"name": "s", "clips": ["link/../clip.y4m"], "base": {"threads": 1}}"#.write(toFile: "\(dir)/exp/s.json", atomically: true, encoding: .utf8)
        let r = try cli.enclab(["run", "exp/s.json", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let sum = try CommandLineTests.process("/usr/bin/sha256sum", ["real/clip.y4m"], in: dir).stdout.prefix(64)
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT clip, clip_sha256, frames FROM runs WHERE status = 'done'")
                == ["exp/link/../clip.y4m|\(sum)|2"])
        let e = try cli.enclab(["encode", "exp/link/../clip.y4m", "--threads", "1", "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        #expect(try sqlite("\(dir)/e.sqlite", "SELECT clip_sha256, frames FROM runs") == ["\(sum)|2"])
    }

    /// A 6-frame stream from the x264 CLI, with B-frames.
    func makeStream(_ dir: String) throws {
        try SyntheticClip(width: 32, height: 32, frames: 6, seed: 3).write(to: "\(dir)/c.y4m")
        let x = try CommandLineTests.process("/usr/bin/x264", ["--quiet", "--threads", "1", "--bframes", "2", "-o", "a.264", "c.y4m"], in: dir)
        try #require(x.status == 0, "\(x.stderr)")
    }

    @Test("convert: an output or avcC path that names the input or the other output is refused; nothing is written")
    func convertOntoItself() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir)
        try FileManager.default.createDirectory(atPath: "\(dir)/d", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/link.264", withDestinationPath: "a.264")
        let input = try bytes("\(dir)/a.264")
        let cases: [([String], String)] = [
            (["--to", "avcc", "a.264", "a.264"], "the output 'a.264' is the input 'a.264': convert would overwrite its input"),
            (["--to", "avcc", "a.264", "d/../a.264"], "the output 'd/../a.264' is the input 'a.264': convert would overwrite its input"),
            (["--to", "annexb", "a.264", "link.264"], "the output 'link.264' is the input 'a.264': convert would overwrite its input"),
            (["--to", "avcc", "--avcc-config", "a.264", "a.264", "o.avcc"], "--avcc-config 'a.264' is the input 'a.264': convert would overwrite its input"),
            (["--to", "avcc", "--avcc-config", "b.avcc", "a.264", "b.avcc"], "--avcc-config 'b.avcc' is the output 'b.avcc': one file cannot hold both"),
            (["--to", "avcc", "--avcc-config", "./b.avcc", "a.264", "d/../b.avcc"], "--avcc-config './b.avcc' is the output 'd/../b.avcc': one file cannot hold both"),
        ]
        for (args, message) in cases {
            let r = try cli.enclab(["convert"] + args, in: dir)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr == "enclab: \(message) (see 'enclab convert --help')\n")
        }
        #expect(try bytes("\(dir)/a.264") == input)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a.264", "c.y4m", "d", "link.264"])
        // Different files still convert: the avcC record beside the stream.
        let ok = try cli.enclab(["convert", "--to", "avcc", "--avcc-config", "b.avcC", "a.264", "b.avcc"], in: dir)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try bytes("\(dir)/b.avcC").first == 1)   // configurationVersion
    }

    @Test("convert: an --fps whose frame duration cannot time the stream in 64-bit microseconds is a usage error naming --fps")
    func fpsOverflow() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeStream(dir)
        // 922337203685477 s a frame: the 2nd frame is at 9.2e20 us, past Int64.max (9.2e18 us).
        #expect(922_337_203_685_477 * 1_000_000 as Double > Double(Int64.max))
        let r = try cli.enclab(["convert", "--to", "packets", "--fps", "1/922337203685477", "a.264", "o.pk"], in: dir)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr == "enclab: --fps 1/922337203685477: a frame duration of 922337203685477/1 s puts the times of a.264's 6 access units beyond 64-bit microseconds (see 'enclab convert --help')\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/o.pk"))
        // The longest duration that fits 6 frames: 5 x d us <= Int64.max, d = 1844674407370 s.
        let fits = try cli.enclab(["convert", "--to", "packets", "--fps", "1/1844674407370", "a.264", "o.pk"], in: dir)
        #expect(fits.status == 0, "\(fits.stderr)")
    }

    @Test("--db: a folder path is refused and creates nothing; file:NAME is a plain file name, as ./file:NAME is")
    func databasePaths() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        let folder = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--db", "dir/", "--out", "o"], in: dir)
        #expect(folder.status == 64)
        #expect(folder.stderr == "enclab: --db needs a database file path, got 'dir/' (a folder) (see 'enclab encode --help')\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/dir"))
        let uri = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--db", "file:y.sqlite", "--out", "o"], in: dir)
        #expect(uri.status == 0, "\(uri.stderr)")
        // sqlite3 given the path with ./ (never a URI) finds the run in the file named file:y.sqlite.
        #expect(try sqlite("\(dir)/file:y.sqlite", "SELECT status, frames FROM runs") == ["done|2"])
        let again = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--db", "./file:y.sqlite", "--out", "o", "--force"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sqlite("\(dir)/file:y.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["1"])
    }
}
