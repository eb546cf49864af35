import Foundation
import Testing
import EncoderLab

/// `enclab report` on hostile databases and output folders: stored paths naming a named pipe or a device, an
/// interrupt while a child (ffmpeg, gnuplot) will not end, `--out` holding planted symbolic links or other content,
/// experiment names whose safe forms coincide, damaged `run_metrics` values.
@Suite("enclab report, hostile input", .serialized)
struct ReportHostileTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// One clip (64x48, `frames` frames at 25 fps), crf at `crfs`, run by the built enclab with database `dir/lab.sqlite`.
    static func tiny(in dir: String, frames: Int = 30, crfs: [Int] = [26, 34]) throws {
        try SyntheticClip(width: 64, height: 48, frames: frames, seed: 7).write(to: "\(dir)/c.y4m")
        let json: [String: Any] = ["name": "tiny", "clips": ["c.y4m"], "base": ["threads": 1, "preset": "ultrafast"],
                                   "grid": ["mode": crfs.map { ["rc": "crf", "crf": $0] }]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/tiny.json"))
        let r = try CLI.process(CLI.binary, ["run", "tiny.json", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// A stand-in for `name` in `dir/bin` that writes its pid to `dir/pids/NAME.PID`, ignores SIGINT and, unless
    /// `noteTerm`, SIGTERM too (as ffmpeg blocked opening a named pipe does: it restarts the call), and never ends
    /// by itself; with `noteTerm` a SIGTERM writes `dir/pids/term.PID` and is otherwise ignored.
    static func stub(_ name: String, in dir: String, noteTerm: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: "\(dir)/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(dir)/pids", withIntermediateDirectories: true)
        let script = noteTerm ? """
            #!/bin/sh
            trap '' INT
            trap 'echo > "\(dir)/pids/term.$$"' TERM
            echo "$@" > "\(dir)/pids/\(name).$$"
            while :; do sleep 0.1; done

            """ : """
            #!/bin/sh
            trap '' INT TERM
            echo "$@" > "\(dir)/pids/\(name).$$"
            exec sleep 100000

            """
        try script.write(toFile: "\(dir)/bin/\(name)", atomically: true, encoding: .utf8)
        chmod("\(dir)/bin/\(name)", 0o755)
    }

    /// The pids of the stand-ins `name` started so far (from their pid files).
    static func stubPIDs(_ name: String, in dir: String) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(dir)/pids")) ?? [])
            .filter { $0.hasPrefix("\(name).") }.compactMap { Int32($0.dropFirst(name.count + 1)) }
    }

    /// Whether process `pid` is gone: no /proc entry, or a zombie (ended, not yet reaped by init).
    static func ended(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // "PID (COMM) STATE ...": the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// Waits (polling every 0.1 s, at most `limit` seconds, so a lab that never gets there fails instead of stalling
    /// the suite) until `condition` holds; returns whether it did.
    static func poll(limit: Double = 120, _ condition: () -> Bool) -> Bool {
        var waited = 0.0
        while !condition() {
            if waited >= limit { return false }
            usleep(100_000); waited += 0.1
        }
        return true
    }

    /// The built enclab started in `dir` with `environment` added, its outputs collected; ``finish(limit:)`` waits
    /// for it (SIGKILL after `limit` seconds, `killed` set).
    final class Started: @unchecked Sendable {
        let process = Process()
        private let out = Pipe(), err = Pipe()
        private var errBytes = Data(), outBytes = Data()
        private let group = DispatchGroup()

        init(_ arguments: [String], in dir: String, environment: [String: String]) throws {
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: dir)
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = out
            process.standardError = err
            try process.run()
            group.enter(); group.enter()
            DispatchQueue.global().async { [self] in errBytes = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
            DispatchQueue.global().async { [self] in outBytes = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        }

        var pid: Int32 { process.processIdentifier }

        func finish(limit: Int = 120) -> CLI.Result {
            let killed = CLI.KilledFlag()
            let pid = process.processIdentifier
            let watchdog = DispatchWorkItem { [self] in if process.isRunning { killed.set(); kill(pid, SIGKILL) } }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit), execute: watchdog)
            process.waitUntilExit()
            group.wait()
            watchdog.cancel()
            return CLI.Result(status: process.terminationStatus, stdout: String(decoding: outBytes, as: UTF8.self),
                              stderr: String(decoding: errBytes, as: UTF8.self), killed: killed.get())
        }
    }

    /// The entries of `dir` whose names start with `prefix`.
    static func entries(_ dir: String, prefix: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasPrefix(prefix) }
    }

    @Test("a stream or clip path naming a named pipe or a device is reported missing (page, table, stderr), never opened")
    func nonRegularFiles() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.tiny(in: dir)
        let fifo = "\(dir)/stream.fifo", clipFifo = "\(dir)/clip.fifo"
        for path in [fifo, clipFifo] { #expect(mkfifo(path, 0o644) == 0) }
        _ = try cli.sqlite("\(dir)/lab.sqlite", """
            UPDATE runs SET stream_path = '\(fifo)' WHERE run_id = 1;
            UPDATE runs SET stream_path = '/dev/urandom', clip = '\(clipFifo)' WHERE run_id = 2
            """)
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT run_id, stream_path FROM runs ORDER BY run_id") == ["1|\(fifo)", "2|/dev/urandom"])
        // Before: ffmpeg -f h264 -i file:.../stream.fifo waited for a writer for ever.
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1,2"], in: dir, limit: 180)
        #expect(!r.killed && r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("enclab: note: stream missing for runs 1, 2; source missing for run 2 (marked in the report)"), "\(r.stderr)")
        for id in [1, 2] {
            let page = try String(contentsOfFile: "\(dir)/rep/tiny/run-\(id)/index.html", encoding: .utf8)
            #expect(page.contains("(stream file missing on this machine, or not a regular file)"), "run \(id)")
            #expect(page.contains("is missing on this machine or not a regular file"), "run \(id)")
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep/tiny/run-\(id)/worst-decoded.png"))
        }
        let run2 = try String(contentsOfFile: "\(dir)/rep/tiny/run-2/index.html", encoding: .utf8)
        #expect(run2.contains("(source file missing on this machine, or not a regular file)"))
        let experiment = try String(contentsOfFile: "\(dir)/rep/tiny/index.html", encoding: .utf8)
        #expect(experiment.contains("stream missing, source missing"))
    }

    @Test("SIGTERM while ffmpeg will not end: the child is killed, report exits 130, the old report stays, no temporary folder")
    func interruptKillsChildren() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.tiny(in: dir)
        // A previous report, made with the real ffmpeg.
        let first = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir, limit: 180)
        try #require(first.status == 0, "\(first.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/rep/index.html"))
        try Self.stub("ffmpeg", in: dir)
        let started = try Started(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir,
                                  environment: ["PATH": "\(dir)/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        // The worst-frame picture's decode starts the stand-in, which ignores SIGTERM and SIGINT.
        let up = Self.poll { !Self.stubPIDs("ffmpeg", in: dir).isEmpty }
        #expect(up, "the stand-in ffmpeg never started")
        kill(started.pid, SIGTERM)
        let r = started.finish()
        // Before: the lab stayed blocked reading the child's output, the signal unseen (killed by the watchdog).
        #expect(!r.killed && r.status == 130, "\(r.stderr)")
        #expect(r.stderr.hasSuffix("enclab: interrupted by SIGTERM\n"), "\(r.stderr)")
        for pid in Self.stubPIDs("ffmpeg", in: dir) {
            #expect(Self.poll(limit: 10) { Self.ended(pid) }, "stand-in ffmpeg \(pid) still running")
            if !Self.ended(pid) { kill(pid, SIGKILL) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/rep/index.html")) == before)
        #expect(Self.entries(dir, prefix: ".rep.").isEmpty, "\(Self.entries(dir, prefix: "."))")
    }

    @Test("two SIGINTs while gnuplot draws: exit 130 at once, gnuplot killed, no driver script in TMPDIR, no temporary folder")
    func secondSignal() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.tiny(in: dir)
        try Self.stub("gnuplot", in: dir, noteTerm: true)
        try FileManager.default.createDirectory(atPath: "\(dir)/tmp", withIntermediateDirectories: true)
        let started = try Started(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir,
                                  environment: ["PATH": "\(dir)/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                                                "TMPDIR": "\(dir)/tmp/"])
        let up = Self.poll { !Self.stubPIDs("gnuplot", in: dir).isEmpty }
        #expect(up, "the stand-in gnuplot never started")
        kill(started.pid, SIGINT)
        // The first signal is passed on to the child as SIGTERM (which the stand-in notes and ignores); before, nothing
        // reached it, and the poll gives up.
        _ = Self.poll(limit: 30) { Self.entries("\(dir)/pids", prefix: "term.").count > 0 }
        kill(started.pid, SIGINT)
        let r = started.finish()
        #expect(!r.killed && r.status == 130, "\(r.stderr)")
        for pid in Self.stubPIDs("gnuplot", in: dir) {
            #expect(Self.poll(limit: 10) { Self.ended(pid) }, "stand-in gnuplot \(pid) still running")
            if !Self.ended(pid) { kill(pid, SIGKILL) }
        }
        // Before: /tmp/enclab-plots-PID-....gp stayed (the second signal exits before its defer), and rep held run
        // pages without an index.
        #expect(Self.entries("\(dir)/tmp", prefix: "enclab-plots-").isEmpty, "\(Self.entries("\(dir)/tmp", prefix: ""))")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep"))
        #expect(Self.entries(dir, prefix: ".rep.").isEmpty)
    }

    @Test("--out: planted symbolic links and other content are refused (73) and untouched; a previous report is replaced, not merged into")
    func outFolder() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.tiny(in: dir)
        let fm = FileManager.default
        try "victim\n".write(toFile: "\(dir)/victim.txt", atomically: true, encoding: .utf8)
        // A report folder whose index.html is a link to a file outside.
        try fm.createDirectory(atPath: "\(dir)/rs", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(dir)/rs/index.html", withDestinationPath: "../victim.txt")
        let a = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rs", "--runs", "1"], in: dir)
        #expect(a.status == 73)
        #expect(a.stderr == "enclab: rs: exists, and is not a previous enclab report (no .enclab-report file in it): give a new folder, or remove it first\n", "\(a.stderr)")
        #expect(try String(contentsOfFile: "\(dir)/victim.txt", encoding: .utf8) == "victim\n")
        // A folder with the experiment's folder name linked elsewhere.
        try fm.createDirectory(atPath: "\(dir)/elsewhere", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(dir)/rs2", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(dir)/rs2/tiny", withDestinationPath: "../elsewhere")
        let b = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rs2", "--runs", "1"], in: dir)
        #expect(b.status == 73 && b.stderr.hasPrefix("enclab: rs2: exists, and is not a previous enclab report"), "\(b.stderr)")
        #expect(try fm.contentsOfDirectory(atPath: "\(dir)/elsewhere").isEmpty)
        // --out itself a link to a folder, and a file.
        try fm.createSymbolicLink(atPath: "\(dir)/ln", withDestinationPath: "elsewhere")
        let c = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "ln", "--runs", "1"], in: dir)
        #expect(c.status == 73 && c.stderr.hasPrefix("enclab: ln: is a symbolic link, and is not a previous enclab report"), "\(c.stderr)")
        let d = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "victim.txt", "--runs", "1"], in: dir)
        #expect(d.status == 73 && d.stderr.hasPrefix("enclab: victim.txt: exists and is not a folder"), "\(d.stderr)")
        #expect(try fm.contentsOfDirectory(atPath: "\(dir)/elsewhere").isEmpty)
        #expect(try String(contentsOfFile: "\(dir)/victim.txt", encoding: .utf8) == "victim\n")
        // A previous report is replaced whole: a file added to it since is gone, the marker is there.
        let e = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        #expect(fm.fileExists(atPath: "\(dir)/rep/.enclab-report") && fm.fileExists(atPath: "\(dir)/rep/tiny/run-1/index.html"))
        try "stale\n".write(toFile: "\(dir)/rep/stale.txt", atomically: true, encoding: .utf8)
        let f = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "2"], in: dir)
        #expect(f.status == 0, "\(f.stderr)")
        #expect(!fm.fileExists(atPath: "\(dir)/rep/stale.txt"))
        #expect(!fm.fileExists(atPath: "\(dir)/rep/tiny/run-1") && fm.fileExists(atPath: "\(dir)/rep/tiny/run-2/index.html"))
        // An empty folder is used.
        try fm.createDirectory(atPath: "\(dir)/empty", withIntermediateDirectories: true)
        let g = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "empty", "--runs", "1"], in: dir)
        #expect(g.status == 0 && fm.fileExists(atPath: "\(dir)/empty/index.html"), "\(g.stderr)")
        // No temporary folder is left beside any of them.
        #expect(Self.entries(dir, prefix: ".").isEmpty, "\(Self.entries(dir, prefix: "."))")
    }

    @Test("experiments experiment-1, ../x, experiment-2 and <b>: four folders, each page its own experiment's")
    func folderNames() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.tiny(in: dir, crfs: [18, 26, 34, 42])
        let names = ["experiment-1", "../x", "experiment-2", "<b>"]
        _ = try cli.sqlite("\(dir)/lab.sqlite", names.enumerated().map { "UPDATE runs SET experiment = '\($1)' WHERE run_id = \($0 + 1);" }.joined())
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT experiment FROM runs ORDER BY run_id") == names)
        let r = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--worst", "1"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/rep").filter { name in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: "\(dir)/rep/\(name)", isDirectory: &isDir) && isDir.boolValue
        }
        #expect(folders.count == 5 && folders.contains("assets"), "\(folders): four experiments and the charts' assets")
        #expect(folders.contains("experiment-1") && folders.contains("experiment-2"))
        // Each linked page is its experiment's: the heading names it (escaped), the run table holds its one run.
        let index = try String(contentsOfFile: "\(dir)/rep/index.html", encoding: .utf8)
        let links = ReportTests.links(index).filter { $0.hasSuffix("/index.html") }
        #expect(Set(links).count == 4, "\(links)")
        let escaped = ["experiment-1", "../x", "experiment-2", "&lt;b&gt;"]
        var seen: [String] = []
        for link in links {
            #expect(!link.hasPrefix(".") && !link.dropLast("/index.html".count).contains("/"), "\(link)")
            let page = try String(contentsOfFile: "\(dir)/rep/\(link)", encoding: .utf8)
            for (k, e) in escaped.enumerated() where page.contains("<h1>Experiment \(e)</h1>") {
                seen.append(e)
                #expect(page.contains("<a href=\"run-\(k + 1)/index.html\">\(k + 1)</a>"), "\(link)")
            }
        }
        #expect(seen.sorted() == escaped.sorted(), "\(seen)")
    }

    @Test("damaged run_metrics values are 65 naming database, run and column; a short run without a rate gets no bitrate plot, not a gnuplot failure")
    func damagedMetrics() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 10 frames at 25 fps: 0.4 s, so no 1-second window is full.
        try Self.tiny(in: dir, frames: 10, crfs: [26])
        let db = "\(dir)/lab.sqlite"
        let stored = try cli.sqlite(db, "SELECT bitrate_kbps, span_seconds FROM run_metrics WHERE run_id = 1")
        #expect(stored.count == 1 && stored[0].split(separator: "|")[1] == "0.4", "\(stored)")
        _ = try cli.sqlite(db, "UPDATE run_metrics SET bitrate_kbps = 'abc' WHERE run_id = 1")
        #expect(try cli.sqlite(db, "SELECT typeof(bitrate_kbps) FROM run_metrics WHERE run_id = 1") == ["text"])
        // Before: 70, "gnuplot failed ... all points y value undefined".
        let a = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        #expect(a.status == 65)
        #expect(a.stderr == "enclab: lab.sqlite: run 1: run_metrics.bitrate_kbps holds the text 'abc', not a number (a damaged row)\n", "\(a.stderr)")
        _ = try cli.sqlite(db, "UPDATE run_metrics SET bitrate_kbps = \(stored[0].split(separator: "|")[0]), span_seconds = -1 WHERE run_id = 1")
        let b = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        #expect(b.status == 65)
        #expect(b.stderr == "enclab: lab.sqlite: run 1: run_metrics.span_seconds holds -1.0, must be above 0 (a damaged row)\n", "\(b.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep"))
        // A run without its run_metrics row (as before `enclab analyze`): no rate to draw a line at.
        _ = try cli.sqlite(db, "DELETE FROM run_metrics WHERE run_id = 1")
        let c = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        #expect(c.status == 0, "\(c.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/tiny/run-1/index.html", encoding: .utf8)
        #expect(page.contains("No plot: the stream lasts less than 1 s of decode time"))
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep/tiny/run-1/bitrate.png"))
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rep/tiny/run-1/sizes.png"))
    }
}
