import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// Issue 17, item 6, by kind: messages that keep their subject, stored nonsense refused, names that are not UTF-8,
/// experiment files read strictly, refused work that leaves nothing behind, signals from the first instant of main.
@Suite("hostile kinds: subjects, stored nonsense, names, experiment files, leftovers, signals at start", .serialized)
struct HostileKindTests {
    typealias Result = CommandLineTests.Result
    let cli = CommandLineTests()

    func enclab(_ arguments: [String], in dir: String) throws -> Result { try cli.enclab(arguments, in: dir) }

    /// `script` run by /bin/sh in `dir` with `$0` the enclab binary (for arguments Swift cannot hold: bytes that are
    /// not UTF-8, made with printf).
    func shell(_ script: String, in dir: String) throws -> Result {
        try CommandLineTests.process("/bin/sh", ["-c", script, CommandLineTests.binary], in: dir)
    }

    /// A scratch folder with `c.y4m` (6 frames of 64x48).
    func folder() throws -> String {
        let dir = cli.scratch()
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 3).write(to: "\(dir)/c.y4m")
        return dir
    }

    /// `folder()` with `c.y4m` encoded into `lab.sqlite` (run 1) and `OUT`.
    func encoded() throws -> String {
        let dir = try folder()
        let r = try enclab(["encode", "c.y4m", "--preset", "ultrafast", "--threads", "1", "--db", "lab.sqlite", "--out", "OUT"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        return dir
    }

    func names(in dir: String) -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []) }

    // MARK: messages that lose their subject

    @Test("an x264 flag neither x264 nor the lab knows is named as unknown, with or without '=' and wherever it stands (64, nothing made)",
          arguments: [
            (["encode", "c.y4m", "--frobnicate"], "frobnicate"),
            (["encode", "--frobnicate", "c.y4m"], "frobnicate"),
            (["encode", "c.y4m", "--no-frobnicate", "d.y4m"], "no-frobnicate"),
            (["encode", "c.y4m", "--frobnicate=3"], "frobnicate"),
          ])
    func unknownFlag(arguments: [String], name: String) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 2, seed: 4).write(to: "\(dir)/d.y4m")
        // The witness: the x264 CLI does not know the name either.
        let x264 = try CommandLineTests.process("/usr/bin/x264", ["--quiet", "--\(name)", "1", "-o", "/dev/null", "c.y4m"], in: dir)
        #expect(x264.status != 0 && x264.stderr.contains(name), "\(x264.stderr)")
        let r = try enclab(arguments + ["--db", "lab.sqlite", "--out", "OUT"], in: dir)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: unknown setting '\(name)' (see 'enclab encode --help')\n")
        #expect(names(in: dir) == ["c.y4m", "d.y4m"])
    }

    @Test("a message over 500 characters keeps its reason: the long path loses its middle, not the words after it")
    func longPath() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = (0..<6).map { String(repeating: Character(UnicodeScalar(UInt8(97 + $0))), count: 120) }.joined(separator: "/") + "/missing.y4m"
        let r = try enclab(["encode", path, "--db", "lab.sqlite"], in: dir)
        #expect(r.status == 66)
        let line = r.stderr.dropLast()
        #expect(r.stderr.hasSuffix(": no such file\n") && !line.contains("\n"), "\(r.stderr)")
        #expect(line.count <= 500 + "enclab: ".count, "\(line.count)")
        // Both ends of the path are still there, its middle shortened.
        #expect(line.hasPrefix("enclab: " + String(repeating: "a", count: 40)) && line.contains("ffff/missing.y4m: no such file") && line.contains("..."))
    }

    // MARK: silent nonsense in the store

    @Test("a PSNR stored as text or a BLOB is refused by plot and report (65 naming the database, the run, the frame and the column), not drawn as NaN",
          arguments: [
            ("'abc'", "the text 'abc'"),
            ("X'00ff'", "a BLOB of 2 bytes"),
          ])
    func textOrBlobPSNR(value: String, found: String) throws {
        let dir = try encoded()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try cli.sqlite("\(dir)/lab.sqlite", "UPDATE frames SET psnr_y = \(value) WHERE run_id = 1 AND coded_index = 2")
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT typeof(psnr_y) FROM frames WHERE coded_index = 2") == [value.hasPrefix("X") ? "blob" : "text"])
        let message = "lab.sqlite: run 1, frame 2 in coded order: column psnr_y holds \(found), expected a finite number or NULL"
        let plot = try enclab(["plot", "--db", "lab.sqlite", "--out", "P"], in: dir)
        #expect(plot.status == 65 && plot.stderr == "enclab: \(message)\n", "\(plot.status) \(plot.stderr)")
        // The refused plot leaves no empty folder behind.
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/P"))
        let report = try enclab(["report", "--db", "lab.sqlite", "--out", "R"], in: dir)
        #expect(report.status == 65 && report.stderr.contains(message), "\(report.status) \(report.stderr)")
    }

    @Test("an INT64_MAX PTS in a stored run is refused by check --run (65 naming the database, run, frame and value), not a span of -1.96 s")
    func hugeStoredPTS() throws {
        let dir = try encoded()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try cli.sqlite("\(dir)/lab.sqlite", "UPDATE frames SET pts = 9223372036854775807 WHERE run_id = 1 AND coded_index = 1")
        let r = try enclab(["check", "--db", "lab.sqlite", "--run", "1", "--expect", "AllowFrameReordering=true"], in: dir)
        #expect(r.status == 65, "\(r.status) \(r.stdout) \(r.stderr)")
        // 2^60 = 1152921504606846976, written out.
        #expect(r.stderr == "enclab: lab.sqlite: run 1: frame coded_index 1: pts 9223372036854775807 is outside -1152921504606846976...1152921504606846976 (2^60 ticks)\n")
        #expect(!r.stdout.contains(" -"), "\(r.stdout)")
    }

    // MARK: names

    @Test("an argument that is not UTF-8 is refused (64, named with its bytes escaped) before anything is made, not read with U+FFFD")
    func notUTF8() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An existing clip whose name holds the byte 0xFF: Foundation would look for "c\u{FFFD}.y4m" instead.
        let clip = try shell(#"cp c.y4m "$(printf 'c\377.y4m')" && exec "$0" encode "$(printf 'c\377.y4m')" --db lab.sqlite --out OUT"#, in: dir)
        #expect(clip.status == 64)
        #expect(clip.stderr == #"enclab: argument 2 is not valid UTF-8: 'c\xFF.y4m' (the lab reads file names and values as UTF-8 text; rename the file) (see 'enclab encode --help')"# + "\n")
        // Two databases named by different bytes would have become one file "a\u{FFFD}.sqlite".
        let db = try shell(#"exec "$0" encode c.y4m --db "$(printf 'a\376.sqlite')" --out OUT"#, in: dir)
        #expect(db.status == 64 && db.stderr.contains(#"'a\xFE.sqlite'"#), "\(db.stderr)")
        // Nothing made: the folder holds the clip and its copy only (ls counts names whatever their bytes).
        #expect(try shell("ls -A | wc -l", in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    }

    @Test("a refused database or run leaves nothing behind: no --out folders made for it, no database without runs")
    func leftovers() throws {
        let dir = try encoded()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A database that is not the lab's (a text file): 65, and the --out folders made before it was opened are gone.
        try "notes, not a database\n".write(toFile: "\(dir)/notes.sqlite", atomically: true, encoding: .utf8)
        let text = try enclab(["encode", "c.y4m", "--threads", "1", "--db", "notes.sqlite", "--out", "NEW/deeper"], in: dir)
        #expect(text.status == 65, "\(text.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/NEW"))
        #expect(try String(contentsOfFile: "\(dir)/notes.sqlite", encoding: .utf8) == "notes, not a database\n")
        // A run refused because its folder is another database's: the new database is not left behind.
        let other = try enclab(["encode", "c.y4m", "--preset", "ultrafast", "--threads", "1", "--db", "other.sqlite", "--out", "OUT"], in: dir)
        #expect(other.status == 64 && other.stderr.contains("already exists (from another database?)"), "\(other.stderr)")
        #expect(names(in: dir).subtracting(["lab.sqlite-wal", "lab.sqlite-shm"]) == ["c.y4m", "lab.sqlite", "OUT", "notes.sqlite"], "\(names(in: dir))")
    }

    // MARK: experiment files

    @Test("experiment files: a key given twice, a description that is not a string and an empty clip are refused (64 naming them)",
          arguments: [
            (#"{"name": "d", "name": "e", "clips": ["c.y4m"]}"#,
             "exp.json: key 'name' is given twice in the top-level object (a JSON reader would keep only the last)"),
            (#"{"name": "d", "clips": ["c.y4m"], "grid": {"crf": [20], "crf": [30]}}"#,
             "exp.json: key 'crf' is given twice in 'grid' (a JSON reader would keep only the last)"),
            (#"{"name": "d", "clips": ["c.y4m"], "base": {"crf": 20, "\u0063rf": 30}}"#,
             "exp.json: key 'crf' is given twice in 'base' (a JSON reader would keep only the last)"),
            (#"{"name": "d", "clips": ["c.y4m"], "grid": {"mode": [{"rc": "crf", "crf": 20, "rc": "cqp"}]}}"#,
             "exp.json: key 'rc' is given twice in an entry of 'grid'.'mode' (a JSON reader would keep only the last)"),
            (#"{"name": "d", "clips": ["c.y4m"], "description": 5}"#,
             "exp.json: key 'description' must be a string, got a number (5)"),
            (#"{"name": "d", "clips": ["c.y4m", ""]}"#,
             #"exp.json: key 'clips': path 2 is empty (""), not a clip"#),
          ])
    func experimentFile(json: String, message: String) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try json.write(toFile: "\(dir)/exp.json", atomically: true, encoding: .utf8)
        let r = try enclab(["run", "exp.json", "--db", "lab.sqlite", "--out", "OUT"], in: dir)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: \(message) (see 'enclab run --help')\n")
        #expect(names(in: dir) == ["c.y4m", "exp.json"])
    }

    @Test("experiment files: keys repeated in different objects, and braces, quotes and keys inside strings, are no duplicates")
    func experimentFileNoDuplicate() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let json = #"""
            {"name": "d", "description": "a \"name\": {\"name\", [\"clips\"]} \\", "clips": ["c.y4m"],
             "base": {"threads": 1, "frames": 2, "preset": "ultrafast"},
             "grid": {"mode": [{"rc": "crf", "crf": 30}, {"rc": "crf", "crf": 31}]}}
            """#
        try json.write(toFile: "\(dir)/exp.json", atomically: true, encoding: .utf8)
        let r = try enclab(["run", "exp.json", "--db", "lab.sqlite", "--out", "OUT", "--no-plots"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["2"])
    }

    @Test("a stream without its SPS: check (which takes no out-of-band parameter sets) says what is missing without advising --in-avcc-config or --parameter-sets, which it refuses; inspect, which takes them, advises them")
    func missingSPSAdvice() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let x = try TestSupport.tool("x264", ["--quiet", "--threads", "1", "-o", "\(dir)/s.264", "\(dir)/c.y4m"])
        try #require(x.status == 0, "\(x.stderr)")
        // The SPS NAL units (type 7) taken out by the test's own scan of 4-byte start codes (x264 writes them).
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/s.264")))
        var starts: [Int] = []
        for i in 0..<(b.count - 4) where b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 0 && b[i + 3] == 1 { starts.append(i) }
        var out: [UInt8] = []
        for (k, s) in starts.enumerated() where b[s + 4] & 0x1F != 7 { out += b[s..<(k + 1 < starts.count ? starts[k + 1] : b.count)] }
        #expect(out.count < b.count)
        try Data(out).write(to: URL(fileURLWithPath: "\(dir)/nosps.264"))
        let check = try cli.enclab(["check", "nosps.264", "--expect", "MaxKeyFrameInterval=30"], in: dir)
        #expect(check.status == 65, "\(check.stderr)")
        #expect(check.stderr.contains("refers to a parameter set not seen before") && !check.stderr.contains("--parameter-sets")
                && !check.stderr.contains("--in-avcc-config"), "\(check.stderr)")
        let inspect = try cli.enclab(["inspect", "nosps.264"], in: dir)
        #expect(inspect.status == 65 && inspect.stderr.contains("give them with --in-avcc-config FILE (AVCC) or --parameter-sets VALUE"), "\(inspect.stderr)")
    }

    // MARK: signals at start

    /// Whether process `pid` has taken SIGINT and SIGTERM over from the default action (caught or ignored, as
    /// /proc/PID/status says in SigCgt and SigIgn: bits 1 and 14 for signals 2 and 15).
    static func tookSignals(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        var mask: UInt64 = 0
        for line in status.split(separator: "\n") where line.hasPrefix("SigCgt:") || line.hasPrefix("SigIgn:") {
            mask |= UInt64(line.split(separator: "\t").last.map(String.init) ?? "", radix: 16) ?? 0
        }
        let both: UInt64 = (1 << (SIGINT - 1)) | (1 << (SIGTERM - 1))
        return mask & both == both
    }

    /// Spawns enclab with `arguments` (absolute paths) as a shell does: SIGINT and SIGTERM at their default action
    /// and unblocked, or, with `blocked`, blocked (as a program spawning from a libdispatch worker thread leaves
    /// them); stdin and stdout /dev/null, stderr into `stderrPath`. - Returns: the pid.
    static func spawn(_ arguments: [String], blocked: Bool, stderrPath: String) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var both = sigset_t()
        sigemptyset(&both)
        sigaddset(&both, SIGINT)
        sigaddset(&both, SIGTERM)
        var mask = sigset_t()
        sigemptyset(&mask)
        if blocked { mask = both }
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setsigdefault(&attributes, &both)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([CommandLineTests.binary] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, CommandLineTests.binary, &actions, &attributes, argv, environ)
        guard status == 0 else { throw LabError(.software, "posix_spawn: \(String(cString: strerror(status)))") }
        return pid
    }

    @Test("a named pipe with no writer: the first SIGTERM or SIGINT ends inspect and rtp unpack with 130 while they wait for it (they waited for a writer before, the signal unheeded)",
          arguments: [(["inspect"], SIGTERM), (["rtp", "unpack"], SIGTERM), (["inspect"], SIGINT)])
    func signalWhileWaitingOnFIFO(command: [String], signal: Int32) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = "\(dir)/pipe"
        #expect(mkfifo(fifo, 0o600) == 0)
        let extra = command == ["rtp", "unpack"] ? ["\(dir)/out.264"] : []
        let pid = try Self.spawn(command + [fifo] + extra, blocked: false, stderrPath: "\(dir)/err.txt")
        // Waits until the process sits in open(2) of the pipe (the kernel's wait_for_partner), at most 20 s.
        let start = Date()
        func waiting() -> Bool {
            ((try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "") == "wait_for_partner"
        }
        while !waiting() && Date().timeIntervalSince(start) < 20 { usleep(20_000) }
        #expect(waiting(), "never waited on the pipe")
        kill(pid, signal)
        // It must end by itself within 10 s; else it is killed and the test fails.
        var status: Int32 = 0
        var ended = false
        let sent = Date()
        while Date().timeIntervalSince(sent) < 10 {
            if waitpid(pid, &status, WNOHANG) == pid { ended = true; break }
            usleep(20_000)
        }
        if !ended { kill(pid, SIGKILL); waitpid(pid, &status, 0) }
        #expect(ended, "still waiting 10 s after the signal")
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        let stderr = (try? String(contentsOfFile: "\(dir)/err.txt", encoding: .utf8)) ?? ""
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 130, "status \(status)")
        #expect(stderr == "enclab: interrupted by \(name) while waiting for \(fifo)\n", "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/out.264"))
    }

    @Test("SIGINT or SIGTERM as soon as the process has taken them over (the first thing main does) ends it with 130, every time; also when spawned with them blocked",
          arguments: [(SIGINT, false), (SIGTERM, false), (SIGINT, true)])
    func signalAtStart(signal: Int32, blocked: Bool) throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        var endings: [String] = []
        for k in 0..<25 {
            let pid = try Self.spawn(["encode", "\(dir)/c.y4m", "--threads", "1", "--crf", "\(20 + k)", "--db", "\(dir)/lab.sqlite",
                                      "--out", "\(dir)/OUT"], blocked: blocked, stderrPath: "\(dir)/err.txt")
            // Polled without sleeping: the signal goes the moment the dispositions change.
            let start = Date()
            while !Self.tookSignals(pid) && Date().timeIntervalSince(start) < 20 {}
            kill(pid, signal)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let stderr = (try? String(contentsOfFile: "\(dir)/err.txt", encoding: .utf8)) ?? ""
            // wait(2)'s status: the low 7 bits are the signal that ended the process, 0 for an exit, whose code is bits 8-15.
            let ended = status & 0x7f == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(status & 0x7f)"
            if !(ended == "exit 130" && stderr == "enclab: interrupted by \(name)\n") { endings.append("\(k): \(ended) \(stderr)") }
        }
        #expect(endings.isEmpty, "\(endings)")
        // An interrupted encode leaves no done run.
        if FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite") {
            #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["0"])
        }
    }
}
