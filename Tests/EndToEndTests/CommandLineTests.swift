import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// The built `enclab` run as a user runs it: stdout, stderr and exit status checked.
@Suite("enclab command line, end to end", .serialized)
struct CommandLineTests {
    static let root = TestSupport.repositoryRoot

    /// The `enclab` binary next to this test bundle (``TestSupport/binary``).
    static var binary: String { TestSupport.binary }

    /// A finished process (``TestSupport/Result``).
    typealias Result = TestSupport.Result

    func enclab(_ arguments: [String], in dir: String) throws -> Result {
        try TestSupport.enclab(arguments, in: dir)
    }

    /// ``TestSupport/process(_:_:in:environment:limit:)``, the one process runner of the tests.
    static func process(_ executable: String, _ arguments: [String], in dir: String, environment: [String: String] = [:],
                        limit: Int = 600) throws -> Result {
        try TestSupport.process(executable, arguments, in: dir, environment: environment, limit: limit)
    }

    typealias KilledFlag = TestSupport.KilledFlag

    func scratch() -> String { TestSupport.scratchFolder("enclab-e2e") }

    /// The folder of run `runID` in database `db` (relative to the command's folder, as stored): the parent of its
    /// `stream_path`, read with sqlite3.
    static func runFolder(_ db: String, _ runID: Int = 1) throws -> String {
        let path = try process("/usr/bin/sqlite3", [db, "SELECT stream_path FROM runs WHERE run_id = \(runID)"], in: "/").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return Paths.parent(path)
    }

    /// Runs in sqlite3 (an independent reader) and returns its output lines.
    func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try Self.process("/usr/bin/sqlite3", [db, sql], in: "/").stdout.split(separator: "\n").map(String.init)
    }

    @Test("encode writes a done run, its stream and plots, with default paths under results/")
    func encode() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 10, seed: 5).write(to: "\(dir)/c.y4m")
        let r = try enclab(["encode", "c.y4m", "--threads", "1", "--rc", "cbr", "--bitrate", "2000"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("run 1  c.y4m"))
        #expect(try sqlite("\(dir)/results/encode.sqlite", "SELECT status, frames, json_extract(settings, '$.rc') FROM runs") == ["done|10|cbr"])
        // nal-hrd cbr makes x264 write filler: recorded in its own column, and counted in size_bytes.
        #expect(try sqlite("\(dir)/results/encode.sqlite", "SELECT sum(filler_bytes) > 0 FROM frames") == ["1"])
        // The run's folder is named by the first 16 hex digits of its run key.
        let key = try sqlite("\(dir)/results/encode.sqlite", "SELECT run_key FROM runs")[0]
        #expect(try Self.runFolder("\(dir)/results/encode.sqlite") == "results/encode/\(key.prefix(16))")
        // The charts' data and scripts; their pictures are drawn off the run's path (enclab plot, enclab report).
        for file in ["stream.264", "frames.dat", "frames.gp", "psnr.gp"] {
            #expect(FileManager.default.fileExists(atPath: "\(dir)/results/encode/\(key.prefix(16))/\(file)"), "\(file)")
        }
    }

    @Test("run expands an experiment into its runs and draws the rate-distortion plot")
    func experiment() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 8, seed: 6).write(to: "\(dir)/c.y4m")
        let json = #"{"name": "tiny", "clips": ["c.y4m"], "base": {"threads": 1}, "grid": {"crf": [24, 34]}}"#
        try json.write(toFile: "\(dir)/tiny.json", atomically: true, encoding: .utf8)
        let r = try enclab(["run", "tiny.json"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("2 runs done"))
        #expect(try sqlite("\(dir)/results/tiny.sqlite", "SELECT count(*) FROM runs WHERE status = 'done' AND experiment = 'tiny'") == ["2"])
        #expect(FileManager.default.fileExists(atPath: "\(dir)/results/tiny/rd.png"))
        #expect(FileManager.default.fileExists(atPath: "\(dir)/results/tiny/rd.svg"))
    }

    @Test("bad input: one line naming the file or setting, sysexits status, and no run in the database", arguments: [
        (["encode", "missing.y4m"], Int32(66), "enclab: missing.y4m: no such file"),
        (["encode", "bad.y4m"], Int32(65), "enclab: bad.y4m: y4m header has no height (H tag)"),
        (["encode", "c.y4m", "--frobnicate", "3"], Int32(64), "enclab: unknown setting 'frobnicate'"),
        (["encode", "c.y4m", "--keyint", "abc"], Int32(64), "enclab: bad value for setting 'keyint': 'abc'"),
        (["encode", "c.y4m", "--rc", "cbr"], Int32(64), "enclab: contradictory settings: rc cbr needs 'bitrate'"),
        (["encode", "c.y4m", "--keyint"], Int32(64), "enclab: flag '--keyint' needs an argument"),
        (["encode", "notvideo.mp4"], Int32(65), "enclab: notvideo.mp4: ffmpeg could not decode it"),
        (["run", "nope.json"], Int32(66), "enclab: nope.json: no such experiment file"),
        (["run", "bad.json"], Int32(64), "enclab: bad.json: unknown key 'clip' (expected name, clips, base, grid, description, report, metrics)"),
        (["encode", "c.y4m", "--seek", "10"], Int32(65), "enclab: c.y4m: no whole frame to encode after skipping 10 (--seek)"),
        (["encode", "c.y4m", "--rc", "vbr", "--bitrate", "300", "--nal-hrd", "cbr"], Int32(64), "enclab: contradictory settings: rc vbr with nal-hrd cbr"),
        (["encode", "c.y4m", "--tune", "cinema"], Int32(64), "enclab: bad tune 'cinema'"),
        (["frobnicate"], Int32(64), "enclab: unknown command 'frobnicate' (encode, run, merge, plot, report, analyze, measure, compare, inspect, convert, check, rtp, bd-rate, export, version, help)"),
    ])
    func badInput(arguments: [String], status: Int32, message: String) throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 5).write(to: "\(dir)/c.y4m")
        try "YUV4MPEG2 W64 F25:1\nFRAME\n".write(toFile: "\(dir)/bad.y4m", atomically: true, encoding: .utf8)
        try "this is not a video".write(toFile: "\(dir)/notvideo.mp4", atomically: true, encoding: .utf8)
        try #"{"name": "b", "clip": ["c.y4m"]}"#.write(toFile: "\(dir)/bad.json", atomically: true, encoding: .utf8)
        let r = try enclab(arguments + ["--db", "lab.sqlite"], in: dir)
        #expect(r.status == status)
        #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        // A usage error ends by pointing at the help of its command (the command list for an unknown one).
        let help = ["encode", "run"].contains(arguments[0]) ? "enclab \(arguments[0]) --help" : "enclab help"
        #expect((status == 64) == r.stderr.hasSuffix(" (see '\(help)')\n"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        if FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite") {
            #expect(try sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs") == ["0"])
        }
    }

    @Test("--profile is a ceiling, --frames 0 means every frame, and the database path must keep what it is given")
    func profileFramesAndDatabase() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 5).write(to: "\(dir)/c.y4m")
        // ultrafast needs only Constrained Baseline; x264 writes profile_idc 66 under --profile high.
        let r = try enclab(["encode", "c.y4m", "--preset", "ultrafast", "--profile", "high", "--frames", "0", "--db", "a.sqlite"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try sqlite("\(dir)/a.sqlite", "SELECT frames FROM runs; SELECT profile_idc FROM parameter_sets WHERE kind = 'sps'") == ["6", "66"])
        let memory = try enclab(["encode", "c.y4m", "--db", ":memory:"], in: dir)
        #expect(memory.status == 64 && memory.stderr == "enclab: --db needs a database file path, got ':memory:' (SQLite would keep nothing there) (see 'enclab encode --help')\n")
        try "not a database".write(toFile: "\(dir)/text.sqlite", atomically: true, encoding: .utf8)
        let foreign = try enclab(["encode", "c.y4m", "--db", "text.sqlite"], in: dir)
        #expect(foreign.status == 65)
        #expect(try String(contentsOfFile: "\(dir)/text.sqlite", encoding: .utf8) == "not a database")
    }

    @Test("two databases cannot share a run folder: the same run key under the same --out is refused with 64")
    func sharedOutFolder() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 5).write(to: "\(dir)/c.y4m")
        #expect(try enclab(["encode", "c.y4m", "--db", "a.sqlite", "--out", "shared"], in: dir).status == 0)
        let folder = try Self.runFolder("\(dir)/a.sqlite")
        let before = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(folder)/stream.264"))
        // The same clip and settings from another database: the same key, so the same folder.
        let r = try enclab(["encode", "c.y4m", "--db", "b.sqlite", "--out", "shared"], in: dir)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: \(folder) already exists (from another database?): give this database its own --out (see 'enclab encode --help')\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(folder)/stream.264")) == before)
        // The refused run leaves no database without runs behind (issue 17: nothing is left by refused work).
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/b.sqlite"))
        // Other settings are another key and another folder beside it.
        #expect(try enclab(["encode", "c.y4m", "--crf", "40", "--db", "b.sqlite", "--out", "shared"], in: dir).status == 0)
        #expect(try Self.runFolder("\(dir)/b.sqlite") != folder)
    }

    @Test("SIGINT during an encode marks the run failed with no frames, exit 130")
    func interrupted() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 640, height: 360, frames: 300, seed: 5).write(to: "\(dir)/big.y4m")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.binary)
        p.arguments = ["encode", "big.y4m", "--preset", "veryslow", "--db", "i.sqlite"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Wait until the run is encoding (its temporary folder holds stream bytes), then interrupt it.
        var running = false
        for _ in 0..<400 where !running {
            Thread.sleep(forTimeInterval: 0.05)
            let out = "\(dir)/results/encode"
            running = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).contains { name in
                name.hasPrefix(".tmp-") && ((try? FileManager.default.attributesOfItem(atPath: "\(out)/\(name)/stream.264")[.size] as? Int) ?? 0) > 0
            }
        }
        try #require(running)
        p.interrupt()
        p.waitUntilExit()
        #expect(p.terminationStatus == 130)
        #expect(try sqlite("\(dir)/i.sqlite", "SELECT status, error, (SELECT count(*) FROM frames) FROM runs") == ["failed|interrupted by SIGINT|0"])
    }

    @Test("a truncated last frame is encoded up to the last whole frame, with a warning naming the file and bytes")
    func truncated() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 5, seed: 5).write(to: "\(dir)/c.y4m")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/c.y4m"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("FRAME\n".utf8) + Data(count: 100))
        try handle.close()
        let r = try enclab(["encode", "c.y4m", "--threads", "1", "--db", "lab.sqlite"], in: dir)
        #expect(r.status == 0)
        // 64x48 4:2:0 is 64*48*3/2 = 4608 picture bytes; the partial frame is "FRAME\n" (6 bytes) + 100.
        #expect(r.stderr == "warning: c.y4m: 106 bytes after the last whole frame do not make a frame (FRAME line + 4608 picture bytes); encoded the 5 whole frames\n")
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT status, frames, truncated_bytes, json_array_length(warnings) FROM runs") == ["done|5|106|1"])
    }

    @Test("a run that fails midway is marked failed and keeps no frames")
    func failureMidRun() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A stream whose second FRAME marker is damaged: the header opens, the first frame encodes, then it fails.
        var data = Data("YUV4MPEG2 W16 H16 F25:1\nFRAME\n".utf8) + Data(count: 384)
        data += Data("FRAXE\n".utf8) + Data(count: 384)
        try data.write(to: URL(fileURLWithPath: "\(dir)/d.y4m"))
        let r = try enclab(["encode", "d.y4m", "--threads", "1", "--db", "lab.sqlite"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr == "enclab: d.y4m: frame 1 does not start with FRAME (y4m stream damaged)\n")
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT status, error, (SELECT count(*) FROM frames) FROM runs") == ["failed|d.y4m: frame 1 does not start with FRAME (y4m stream damaged)|0"])
    }
}
