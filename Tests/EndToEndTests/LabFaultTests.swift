import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// Faults around the lab's outputs, tools, experiments and processes (issue 6): each case through the built binary,
/// checked by its exit status, its message and what it left on disk (the sqlite3 CLI reads the database).
@Suite("faults: outputs, tools, experiment size, interrupts, shared folders", .serialized)
struct LabFaultTests {
    typealias Result = CommandLineTests.Result

    /// Runs the built enclab in `dir` with `environment` changes (``CommandLineTests/process(_:_:in:environment:limit:)``).
    static func enclab(_ arguments: [String], in dir: String, environment: [String: String] = [:]) throws -> Result {
        try TestSupport.enclab(arguments, in: dir, environment: environment)
    }

    static func scratch() -> String { TestSupport.scratchFolder("enclab-faults") }

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try TestSupport.sqlite(db, sql) }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test("a grid over the run limit is refused at once, naming --max-runs; --max-runs raises the limit")
    func maxRuns() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        // 10 lists of 4 values: 4^10 = 1,048,576 points on 1 clip.
        let lists = (0..<10).map { "\"k\($0)\": [1, 2, 3, 4]" }.joined(separator: ", ")
        try "{\"name\": \"huge\", \"clips\": [\"c.y4m\"], \"grid\": {\(lists)}}".write(toFile: "\(dir)/huge.json", atomically: true, encoding: .utf8)
        let huge = try Self.enclab(["run", "huge.json"], in: dir)
        #expect(huge.status == 64)
        #expect(huge.stderr == "enclab: huge.json: expands to 1048576 runs (clips x grid points), over the limit of 100000; raise it with --max-runs N (see 'enclab run --help')\n")
        #expect(!Self.exists("\(dir)/results"))
        // 2 clips x 2 values = 4 runs: refused under --max-runs 3, checked and run under --max-runs=4.
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 2).write(to: "\(dir)/d.y4m")
        try #"{"name": "four", "clips": ["c.y4m", "d.y4m"], "base": {"threads": 1}, "grid": {"crf": [20, 30]}}"#.write(toFile: "\(dir)/four.json", atomically: true, encoding: .utf8)
        let three = try Self.enclab(["run", "four.json", "--max-runs", "3"], in: dir)
        #expect(three.status == 64 && three.stderr.contains("expands to 4 runs"), "\(three.stderr)")
        let four = try Self.enclab(["run", "four.json", "--max-runs=4"], in: dir)
        #expect(four.status == 0, "\(four.stderr)")
        #expect(try Self.sqlite("\(dir)/results/four.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["4"])
    }

    @Test("a missing ffmpeg, or gnuplot with --plots render (the default writes scripts only), is found before anything is made", arguments: ["ffmpeg", "gnuplot"])
    func missingTool(tool: String) throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        // A PATH holding every program enclab runs but `tool`.
        try FileManager.default.createDirectory(atPath: "\(dir)/bin", withIntermediateDirectories: true)
        for program in ["ffmpeg", "ffprobe", "gnuplot"] where program != tool {
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/bin/\(program)", withDestinationPath: "/usr/bin/\(program)")
        }
        let r = try Self.enclab(["encode", "c.y4m", "--threads", "1"] + (tool == "gnuplot" ? ["--plots", "render"] : []), in: dir, environment: ["PATH": "\(dir)/bin"])
        #expect(r.status == 70)
        #expect(r.stderr.hasPrefix("enclab: \(tool) not found on PATH"), "\(r.stderr)")
        #expect(!Self.exists("\(dir)/results"), "nothing is made before the tools are found")
    }

    @Test("encode of a missing clip leaves no database or folder behind")
    func missingClipLeavesNothing() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Self.enclab(["encode", "missing.y4m"], in: dir)
        #expect(r.status == 66)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test("outputs that cannot be created are 73, naming the path; nothing is recorded")
    func outputsThatCannotBeCreated() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        try "a file".write(toFile: "\(dir)/taken", atomically: true, encoding: .utf8)
        let out = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--out", "taken", "--db", "lab.sqlite"], in: dir)
        #expect(out.status == 73)
        #expect(out.stderr == "enclab: taken: exists and is not a folder\n")
        #expect(!Self.exists("\(dir)/lab.sqlite"))
        // convert onto a folder names the folder.
        let stream = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "lab.sqlite"], in: dir)
        #expect(stream.status == 0, "\(stream.stderr)")
        try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: true)
        let convert = try Self.enclab(["convert", "--to", "avcc", "\(try CommandLineTests.runFolder("\(dir)/lab.sqlite"))/stream.264", "folder"], in: dir)
        #expect(convert.status == 73)
        #expect(convert.stderr == "enclab: folder: is a folder, not a file to write\n")
    }

    @Test("a run killed with SIGKILL leaves no row and no run folder; the next start removes its temporary folder")
    func killed() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 320, height: 240, frames: 200, seed: 5).write(to: "\(dir)/big.y4m")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        p.arguments = ["encode", "big.y4m", "--preset", "veryslow", "--threads", "1", "--db", "k.sqlite"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let out = "\(dir)/results/encode"
        var temporary: String?
        for _ in 0..<400 where temporary == nil {
            Thread.sleep(forTimeInterval: 0.05)
            temporary = (try? FileManager.default.contentsOfDirectory(atPath: out))?.first { $0.hasPrefix(".tmp-") }
        }
        let name = try #require(temporary)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal)
        #expect(try Self.sqlite("\(dir)/k.sqlite", "SELECT count(*) FROM runs") == ["0"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [name])
        // The next run starts by removing the dead process's folder, then completes.
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        let next = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "k.sqlite"], in: dir)
        #expect(next.status == 0, "\(next.stderr)")
        let key = try Self.sqlite("\(dir)/k.sqlite", "SELECT run_key FROM runs")[0]
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [String(key.prefix(16))])
        #expect(try Self.sqlite("\(dir)/k.sqlite", "SELECT run_id, status FROM runs") == ["1|done"])
    }

    @Test("SIGINT during an experiment's up-front checks is honoured at once: 130, nothing recorded")
    func interruptedChecks() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        // 80 clips that ffmpeg decodes (each check starts an ffmpeg) x 5 rates: checks that outlast the wait below.
        let made = try CommandLineTests.process("/usr/bin/ffmpeg", ["-v", "error", "-i", "c.y4m", "-c:v", "libx264", "c.mp4"], in: dir)
        try #require(made.status == 0, "\(made.stderr)")
        for k in 0..<80 { try FileManager.default.createSymbolicLink(atPath: "\(dir)/c\(k).mp4", withDestinationPath: "c.mp4") }
        let clips = (0..<80).map { "\"c\($0).mp4\"" }.joined(separator: ", ")
        try "{\"name\": \"slow\", \"clips\": [\(clips)], \"grid\": {\"crf\": [20, 25, 30, 35, 40]}}"
            .write(toFile: "\(dir)/slow.json", atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
        p.arguments = ["run", "slow.json"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        try p.run()
        Thread.sleep(forTimeInterval: 1)
        #expect(p.isRunning, "the checks of 400 runs on 80 clips outlast one second")
        p.interrupt()
        p.waitUntilExit()
        #expect(p.terminationStatus == 130)
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "enclab: interrupted by SIGINT\n")
        #expect(!Self.exists("\(dir)/results"))
    }

    @Test("two processes with different databases and one --out never share a run folder")
    func sharedOutConcurrently() throws {
        for trial in 0..<4 {
            let dir = Self.scratch()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try SyntheticClip(width: 64, height: 48, frames: 6, seed: UInt64(trial)).write(to: "\(dir)/c.y4m")
            // Both started before either is waited for.
            let processes = try (0..<2).map { k -> Process in
                let p = Process()
                p.executableURL = URL(fileURLWithPath: CommandLineTests.binary)
                // Even trials: other settings (two keys, two folders); odd trials: the same key, one folder.
                let crf = trial % 2 == 0 ? String(20 + 10 * k) : "25"
                p.arguments = ["encode", "c.y4m", "--threads", "1", "--crf", crf, "--db", "\(k).sqlite", "--out", "shared"]
                p.currentDirectoryURL = URL(fileURLWithPath: dir)
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                try p.run()
                return p
            }
            processes.forEach { $0.waitUntilExit() }
            let statuses = processes.map(\.terminationStatus)
            #expect(trial % 2 == 0 ? statuses == [0, 0] : statuses.sorted() == [0, 64], "\(statuses)")
            // Every folder is claimed by exactly one database, whose row has the folder's stream bytes; nothing
            // else is left (no temporary folder).
            let entries = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/shared")
            #expect(!entries.contains { $0.hasPrefix(".") }, "\(entries)")
            let folders = entries.filter { !$0.hasPrefix(".") }
            #expect(folders.count == statuses.filter { $0 == 0 }.count)
            for folder in folders {
                let size = try FileManager.default.attributesOfItem(atPath: "\(dir)/shared/\(folder)/stream.264")[.size] as! Int
                let claims = try (0..<2).flatMap { k in
                    try Self.sqlite("\(dir)/\(k).sqlite", "SELECT bytes FROM runs WHERE stream_path = 'shared/\(folder)/stream.264' AND status = 'done'")
                }
                #expect(claims == [String(size)], "\(folder): \(claims)")
            }
        }
    }

    @Test("one-letter database, output folder and experiment file names work (Foundation traps on them)")
    func oneLetterNames() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        let encode = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "d", "--out", "o"], in: dir)
        #expect(encode.status == 0, "\(encode.stderr)")
        let key = try Self.sqlite("\(dir)/d", "SELECT run_key FROM runs")[0]
        #expect(try Self.sqlite("\(dir)/d", "SELECT status, stream_path FROM runs") == ["done|o/\(key.prefix(16))/stream.264"])
        try #"{"name": "e", "clips": ["c.y4m"], "base": {"threads": 1}}"#.write(toFile: "\(dir)/e", atomically: true, encoding: .utf8)
        let run = try Self.enclab(["run", "e", "--db", "f", "--out", "p"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.sqlite("\(dir)/f", "SELECT count(*) FROM runs WHERE status = 'done'") == ["1"])
    }

    @Test("enclab plot on a copy of the database in another folder writes the runs' own data files, byte for byte")
    func plotFromCopy() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 8, seed: 3).write(to: "\(dir)/c.y4m")
        try #"{"name": "p", "clips": ["c.y4m"], "base": {"threads": 1}, "grid": {"crf": [25, 35]}}"#.write(toFile: "\(dir)/p.json", atomically: true, encoding: .utf8)
        #expect(try Self.enclab(["run", "p.json"], in: dir).status == 0)
        try FileManager.default.createDirectory(atPath: "\(dir)/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(dir)/results/p.sqlite", toPath: "\(dir)/elsewhere/copy.sqlite")
        let r = try Self.enclab(["plot", "--db", "elsewhere/copy.sqlite", "--out", "replot"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        for id in 1...2 {
            let folder = try CommandLineTests.runFolder("\(dir)/results/p.sqlite", id)
            let name = Paths.fileName(folder)
            for file in ["frames.dat", "frames.gp", "psnr.gp"] {
                #expect(FileManager.default.contents(atPath: "\(dir)/replot/\(name)/\(file)") == FileManager.default.contents(atPath: "\(dir)/\(folder)/\(file)"), "\(name)/\(file)")
            }
        }
        #expect(FileManager.default.contents(atPath: "\(dir)/replot/rd.dat") == FileManager.default.contents(atPath: "\(dir)/results/p/rd.dat"))
        #expect(FileManager.default.contents(atPath: "\(dir)/replot/rd.dat") != nil)
    }

    @Test("a preset, tune or profile of 70,000 characters is refused with 64, never hangs; x264's spellings still work",
          arguments: ["--preset", "--tune", "--profile"])
    func longNames(flag: String) throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        // Killed after 60 s if it hangs (it used to deadlock on x264's error text in a pipe): the status is then 9.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        p.arguments = ["-s", "KILL", "60", CommandLineTests.binary, "encode", "c.y4m", flag, String(repeating: "x", count: 70_000)]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 64, "\(message.prefix(200))")
        #expect(message.split(separator: "\n").count == 1)
        #expect(!Self.exists("\(dir)/results"))
    }

    @Test("x264's own spellings of presets and tunes are taken: an index, any case, several tunes")
    func presetSpellings() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 32, height: 32, frames: 2, seed: 1).write(to: "\(dir)/c.y4m")
        for flags in [["--preset", "5"], ["--preset", "MEDIUM"], ["--tune", "film,fastdecode"], ["--tune", "Film.ZeroLatency"]] {
            let r = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"] + flags, in: dir)
            #expect(r.status == 0, "\(flags): \(r.stderr)")
        }
        // --preset 5 is medium: the same run key as --preset medium, so the second is already done.
        let r = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite", "--preset", "medium"], in: dir)
        #expect(r.stdout.split(separator: "\n").first?.hasSuffix("(already done)") == true, "\(r.stdout)")
    }
}
