import Foundation
import Testing
import EncoderLab

/// `enclab export --out` on paths it must not replace (the database and its -wal and -shm under any spelling or
/// link, a FIFO, a character device, a socket, a symbolic link) and into a folder that is not there. Each file's kind
/// is read with coreutils' `stat -c %F`, the database with the sqlite3 CLI and its bytes.
@Suite("enclab export --out: never the database, never over a device, FIFO or link; no folders made, end to end", .serialized)
struct ExportOutputTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// A folder with `c.y4m` (4 frames) encoded once into `lab.sqlite`.
    func lab() throws -> String {
        let dir = cli.scratch()
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 5).write(to: "\(dir)/c.y4m")
        let r = try cli.enclab(["encode", "c.y4m", "--preset", "ultrafast", "--threads", "1", "--db", "lab.sqlite"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        return dir
    }

    /// What coreutils' stat says `path` is ("regular file", "fifo", "character special file", "socket", "symbolic link").
    static func kind(_ path: String) throws -> String {
        try CLI.process("/usr/bin/stat", ["-c", "%F", path], in: "/").stdout.trimmingCharacters(in: .newlines)
    }

    /// The runs table as export writes it to stdout (the reference for what a written --out must hold).
    func runsCSV(_ dir: String) throws -> String {
        let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("run_id,run_key,"))
        return r.stdout
    }

    @Test("--out naming the database or its -wal/-shm, by any path or link: 64, the database byte for byte as it was and whole")
    func database() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        try FileManager.default.createDirectory(atPath: "\(dir)/sub", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/link.sqlite", withDestinationPath: "lab.sqlite")
        try FileManager.default.linkItem(atPath: db, toPath: "\(dir)/hard.sqlite")
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        // -wal and -shm first by name only (SQLite removed them when the encode closed the database), then, once an
        // export has left them beside it (a read-only reader does), as the files they are.
        let outs = ["lab.sqlite-wal", "lab.sqlite-shm", "lab.sqlite-journal", "lab.sqlite", "./lab.sqlite", db, "sub/../lab.sqlite",
                    "link.sqlite", "hard.sqlite", "lab.sqlite-wal", "lab.sqlite-shm", "\(dir)/sub/../lab.sqlite-wal"]
        for out in outs {
            let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "frames", "--format", "csv", "--out", out], in: dir)
            #expect(r.status == 64 && r.stdout.isEmpty, "\(out): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("enclab: --out \(out) is the database") && r.stderr.hasSuffix("(see 'enclab export --help')\n"),
                    "\(out): \(r.stderr)")
        }
        let direct = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "lab.sqlite"], in: dir)
        #expect(direct.stderr == "enclab: --out lab.sqlite is the database being exported (lab.sqlite); export only reads it: name another file (see 'enclab export --help')\n")
        let wal = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "lab.sqlite-wal"], in: dir)
        #expect(wal.stderr == "enclab: --out lab.sqlite-wal is the database's write-ahead log (lab.sqlite-wal); export only reads it: name another file (see 'enclab export --help')\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        #expect(try cli.sqlite(db, "PRAGMA integrity_check; SELECT count(*) FROM frames") == ["ok", "4"])
        #expect(try Self.kind("\(dir)/link.sqlite") == "symbolic link")
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: db + suffix) {
            // The -wal of a reader holds nothing (0 bytes); neither holds CSV.
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: db + suffix)), as: UTF8.self)
            #expect(!text.contains("run_id"), "\(suffix)")
        }
        #expect(!FileManager.default.fileExists(atPath: db + "-journal"))
    }

    @Test("an existing FIFO is written into (a reader gets the CSV), never replaced")
    func fifo() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = try runsCSV(dir)
        #expect(mkfifo("\(dir)/pipe", 0o644) == 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/cat")
        reader.arguments = ["\(dir)/pipe"]
        let got = Pipe()
        reader.standardOutput = got
        try reader.run()
        let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "pipe"], in: dir)
        let kind = try Self.kind("\(dir)/pipe")
        // A replaced FIFO leaves cat waiting in open(2) forever: end it then (SIGKILL: the test process may ignore
        // SIGTERM, Interruption.install, and cat inherits that).
        if kind != "fifo" { kill(reader.processIdentifier, SIGKILL) }
        reader.waitUntilExit()
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(r.stdout == "export: 1 runs row to pipe\n")
        #expect(kind == "fifo")
        #expect(String(decoding: got.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == expected)
    }

    @Test("character devices and pipes are written into, never replaced: a null device 0, a full one 74 (no space), stdout on a pipe the CSV")
    func devices() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = try runsCSV(dir)
        // The device nodes of this test's own (mknod, as root) when it may make them, else the system's.
        // Device numbers 1:3 and 1:7 (Linux's devices.txt), as gnu_dev_makedev encodes them: minor | major << 8.
        var null = "/dev/null", full = "/dev/full"
        func usable(_ path: String) -> Bool {
            let fd = open(path, O_WRONLY)
            if fd >= 0 { close(fd) }
            return fd >= 0
        }
        if getuid() == 0 && mknod("\(dir)/null", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0
            && mknod("\(dir)/full", S_IFCHR | 0o666, dev_t(1 << 8 | 7)) == 0 && usable("\(dir)/null") && usable("\(dir)/full") {
            (null, full) = ("\(dir)/null", "\(dir)/full")
        }
        let toNull = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "frames", "--format", "jsonl", "--out", null], in: dir)
        #expect(toNull.status == 0 && toNull.stderr.isEmpty, "\(toNull.stderr)")
        #expect(toNull.stdout == "export: 4 frames rows to \(null)\n")
        #expect(try Self.kind(null) == "character special file")
        let toFull = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "frames", "--format", "csv", "--out", full], in: dir)
        #expect(toFull.status == 74 && toFull.stdout.isEmpty)
        #expect(toFull.stderr == "enclab: \(full): write failed: No space left on device\n")
        #expect(try Self.kind(full) == "character special file")
        // The command's stdout is a pipe: a link like /dev/stdout (its own, /proc/self/fd/1, so that no system file is
        // at stake) leads to it, a FIFO; the CSV comes before the count line.
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/stdout", withDestinationPath: "/proc/self/fd/1")
        let toStdout = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "stdout"], in: dir)
        #expect(toStdout.status == 0 && toStdout.stderr.isEmpty, "\(toStdout.stderr)")
        #expect(toStdout.stdout == expected + "export: 1 runs row to stdout\n")
        #expect(try Self.kind("\(dir)/stdout") == "symbolic link")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains("enclab-export") }.isEmpty)
    }

    @Test("a symbolic link to a file keeps the link and replaces its target; a socket and a dangling link are 73, left as they are")
    func links() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = try runsCSV(dir)
        try FileManager.default.createDirectory(atPath: "\(dir)/elsewhere", withIntermediateDirectories: false)
        try "old".write(toFile: "\(dir)/elsewhere/target.csv", atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/link.csv", withDestinationPath: "elsewhere/target.csv")
        let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "link.csv"], in: dir)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(try Self.kind("\(dir)/link.csv") == "symbolic link")
        #expect(try String(contentsOfFile: "\(dir)/elsewhere/target.csv", encoding: .utf8) == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/elsewhere") == ["target.csv"])

        let bind = try CLI.process("/usr/bin/python3", ["-c", "import socket; socket.socket(socket.AF_UNIX).bind('sock')"], in: dir)
        try #require(bind.status == 0, "\(bind.stderr)")
        let socket = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "sock"], in: dir)
        #expect(socket.status == 73 && socket.stderr == "enclab: sock: is a socket, not a file, character device or FIFO to write\n", "\(socket.stderr)")
        #expect(try Self.kind("\(dir)/sock") == "socket")

        try FileManager.default.createSymbolicLink(atPath: "\(dir)/dangling.csv", withDestinationPath: "missing/x.csv")
        let dangling = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "dangling.csv"], in: dir)
        #expect(dangling.status == 73 && dangling.stderr.hasPrefix("enclab: dangling.csv: a symbolic link to nothing"), "\(dangling.stderr)")
        #expect(try Self.kind("\(dir)/dangling.csv") == "symbolic link")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/missing"))
    }

    @Test("a missing folder is 73 naming it, and is not made; a file where the folder should be is 73 too")
    func missingFolder() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "nodir/deeper/x.csv"], in: dir)
        #expect(r.status == 73 && r.stdout.isEmpty)
        #expect(r.stderr == "enclab: nodir/deeper: no such folder for --out nodir/deeper/x.csv (export makes no folders)\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/nodir"))
        let file = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--out", "c.y4m/x.csv"], in: dir)
        #expect(file.status == 73 && file.stderr == "enclab: c.y4m: not a folder, so --out c.y4m/x.csv cannot be made in it\n", "\(file.stderr)")
        #expect(try Self.kind("\(dir)/c.y4m") == "regular file")
    }
}
