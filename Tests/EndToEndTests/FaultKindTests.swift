import Foundation
import Testing
import EncoderLab

/// Issue 17, item 6, by kind: writing through planted links, runs done without their files, devices and read-only
/// places given as the database, end to end. Witnesses: the bytes of the planted targets (unchanged), lstat of the
/// written files (regular files, not links), PNG and SVG ends (``DiskFullTests/isComplete(_:)``), sqlite3 counts.
@Suite("hostile kinds: planted links, done without files, devices and read-only places, end to end", .serialized)
struct FaultKindTests {
    typealias CLI = CommandLineTests

    static let victimText = "the victim's own bytes\n"

    /// The enclab under test: the built one, or `ENCLAB_TEST_BINARY` (to see these tests fail on an older build).
    static var binary: String { ProcessInfo.processInfo.environment["ENCLAB_TEST_BINARY"] ?? CLI.binary }

    /// A folder with `c.y4m` (6 frames) encoded into `lab.sqlite`, its run folder under `out/`; returns the folder
    /// and the run key's first 16 hex digits.
    static func lab() throws -> (dir: String, key: String) {
        let dir = CLI().scratch()
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 17).write(to: "\(dir)/c.y4m")
        let r = try CLI.process(Self.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--plots", "render", "--db", "lab.sqlite", "--out", "out"], in: dir)
        guard r.status == 0 else { throw LabError(.software, "encode: \(r.stderr)") }
        let key = try CLI().sqlite("\(dir)/lab.sqlite", "SELECT substr(run_key, 1, 16) FROM runs")[0]
        return (dir, key)
    }

    static func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// Whether `path` is a regular file (lstat: a symbolic link is not).
    static func isRegular(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    static func isLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    // MARK: writing through planted links

    @Test("plot: links planted in the run folder (each picture, data file and script) are replaced, their targets untouched")
    func plotLinksInRunFolder() throws {
        let (dir, key) = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/P/\(key)", withIntermediateDirectories: true)
        let names = ["frames.png", "frames.svg", "psnr.png", "psnr.svg", "frames.dat", "frames.gp", "psnr.gp"]
        for name in names {
            try Self.victimText.write(toFile: "\(dir)/victim-\(name)", atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/P/\(key)/\(name)", withDestinationPath: "\(dir)/victim-\(name)")
        }
        let r = try CLI.process(Self.binary, ["plot", "--db", "lab.sqlite", "--out", "P"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        for name in names {
            #expect(Self.text("\(dir)/victim-\(name)") == Self.victimText, "victim of \(name) overwritten")
            #expect(Self.isRegular("\(dir)/P/\(key)/\(name)"), "\(name) is not a regular file")
        }
        for name in ["frames.png", "frames.svg", "psnr.png", "psnr.svg"] {
            #expect(try DiskFullTests.isComplete("\(dir)/P/\(key)/\(name)"), "\(name)")
        }
        // No staging folder or temporary file is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/P/\(key)").filter { $0.hasPrefix(".") } == [])
    }

    @Test("plot: a run folder that is a symbolic link is refused with 73 naming it; the folder it points to is untouched")
    func plotRunFolderIsLink() throws {
        let (dir, key) = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/victim", withIntermediateDirectories: true)
        try Self.victimText.write(toFile: "\(dir)/victim/frames.dat", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(dir)/P", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/P/\(key)", withDestinationPath: "\(dir)/victim")
        let r = try CLI.process(Self.binary, ["plot", "--db", "lab.sqlite", "--out", "P"], in: dir)
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr == "enclab: P/\(key): is a symbolic link; the lab writes only into folders it made, never through a link (remove it)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/victim") == ["frames.dat"])
        #expect(Self.text("\(dir)/victim/frames.dat") == Self.victimText)
    }

    @Test("run: links planted as the experiment's rd.png, rd.svg and rd.dat are replaced, their targets untouched")
    func runRateDistortionLinks() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 18).write(to: "\(dir)/c.y4m")
        try #"{"name": "links", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [24, 34]}}"#
            .write(toFile: "\(dir)/e.json", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(dir)/O", withIntermediateDirectories: true)
        let names = ["rd.png", "rd.svg", "rd.dat", "rd.gp"]
        for name in names {
            try Self.victimText.write(toFile: "\(dir)/victim-\(name)", atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/O/\(name)", withDestinationPath: "\(dir)/victim-\(name)")
        }
        let r = try CLI.process(Self.binary, ["run", "e.json", "--db", "lab.sqlite", "--out", "O"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        for name in names {
            #expect(Self.text("\(dir)/victim-\(name)") == Self.victimText, "victim of \(name) overwritten")
            #expect(Self.isRegular("\(dir)/O/\(name)"), "\(name)")
        }
        #expect(try DiskFullTests.isComplete("\(dir)/O/rd.png") && DiskFullTests.isComplete("\(dir)/O/rd.svg"))
    }

    @Test("start-up settling: a link named as a dead process's temporary folder of a done run is not moved into place or written through")
    func settlingLink() throws {
        let (dir, key) = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fullKey = try CLI().sqlite("\(dir)/lab.sqlite", "SELECT run_key FROM runs")[0]
        // The run's folder moved away (the victim), and a link to it planted under the name settling looks for:
        // .tmp-KEY-DATABASE-HOST-PID-RANDOM, DATABASE the first 8 hex digits of the SHA-256 of the database's real path.
        try FileManager.default.moveItem(atPath: "\(dir)/out/\(key)", toPath: "\(dir)/victim")
        try Self.victimText.write(toFile: "\(dir)/victim/frames.png", atomically: false, encoding: .utf8)
        let real = try #require(Paths.real("\(dir)/lab.sqlite"))
        let database = try CLI.process("/bin/sh", ["-c", "printf '%s' \"$0\" | sha256sum | cut -c1-8", real], in: "/").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let host = ProcessInfo.processInfo.hostName.replacingOccurrences(of: "-", with: "_")
        let planted = "\(dir)/out/.tmp-\(fullKey)-\(database)-\(host)-4194303-abcdef12"
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: "\(dir)/victim")
        let r = try CLI.process(Self.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--plots", "render", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.text("\(dir)/victim/frames.png") == Self.victimText)
        // The run was encoded again into a folder of its own, not the link.
        #expect(!Self.isLink("\(dir)/out/\(key)"))
        #expect(try DiskFullTests.isComplete("\(dir)/out/\(key)/frames.png"))
    }

    // MARK: done without its files

    @Test("encode: a done run whose pictures are missing or cut short is 'already done' and has them drawn again")
    func encodeRedrawsMissingPictures() throws {
        let (dir, key) = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.removeItem(atPath: "\(dir)/out/\(key)/frames.png")
        // A picture cut short, as a full disk or a kill leaves it.
        let svg = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/out/\(key)/psnr.svg"))
        try svg.prefix(100).write(to: URL(fileURLWithPath: "\(dir)/out/\(key)/psnr.svg"))
        let r = try CLI.process(Self.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--plots", "render", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("(already done)"), "\(r.stdout)")
        for name in ["frames.png", "frames.svg", "psnr.png", "psnr.svg"] {
            #expect((try? DiskFullTests.isComplete("\(dir)/out/\(key)/\(name)")) == true, "\(name)")
        }
        #expect(try CLI().sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs") == ["1"])
    }

    @Test("run: a resumed sweep draws the missing pictures of its runs already done")
    func runRedrawsMissingPictures() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 19).write(to: "\(dir)/c.y4m")
        try #"{"name": "again", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [24, 34]}}"#
            .write(toFile: "\(dir)/e.json", atomically: false, encoding: .utf8)
        let first = try CLI.process(Self.binary, ["run", "e.json", "--plots", "render", "--db", "lab.sqlite", "--out", "O"], in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        let keys = try CLI().sqlite("\(dir)/lab.sqlite", "SELECT substr(run_key, 1, 16) FROM runs ORDER BY run_id")
        #expect(keys.count == 2)
        for key in keys { for name in ["frames.png", "psnr.svg"] { try FileManager.default.removeItem(atPath: "\(dir)/O/\(key)/\(name)") } }
        let again = try CLI.process(Self.binary, ["run", "e.json", "--plots", "render", "--db", "lab.sqlite", "--out", "O"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("(2 already done before)"), "\(again.stdout)")
        for key in keys {
            for name in ["frames.png", "frames.svg", "psnr.png", "psnr.svg"] {
                #expect((try? DiskFullTests.isComplete("\(dir)/O/\(key)/\(name)")) == true, "\(key)/\(name)")
            }
        }
    }

    @Test("a done run with no frames stored (a damaged database) is encoded again, not kept as done")
    func doneWithoutFrames() throws {
        let (dir, _) = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try CLI().sqlite("\(dir)/lab.sqlite", "DELETE FROM frames")
        let r = try CLI.process(Self.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--plots", "render", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("(already done)"), "\(r.stdout)")
        // One done run, with the clip's 6 frames (written in the SyntheticClip above).
        #expect(try CLI().sqlite("\(dir)/lab.sqlite", "SELECT count(*), sum(status = 'done') FROM runs") == ["1|1"])
        #expect(try CLI().sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM frames") == ["6"])
    }

    // MARK: devices and read-only places

    @Test("--db naming a device or a fifo: refused before SQLite opens it, nothing made beside it", arguments: ["encode", "plot"])
    func databaseDevice(command: String) throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 4, seed: 20).write(to: "\(dir)/c.y4m")
        #expect(mkfifo("\(dir)/fifo.sqlite", 0o644) == 0)
        let beside = ["/dev/null-journal", "/dev/null-wal", "/dev/null-shm"]
        let before = beside.filter { FileManager.default.fileExists(atPath: $0) }
        defer { for path in beside where !before.contains(path) { unlink(path) } }
        for db in ["/dev/null", "fifo.sqlite"] {
            let arguments = command == "encode" ? ["encode", "c.y4m", "--threads", "1", "--db", db, "--out", "O"] : ["plot", "--db", db, "--out", "O"]
            let r = try CLI.process(Self.binary, arguments, in: dir, limit: 60)
            let kind = db == "/dev/null" ? "a character device" : "a fifo"
            if command == "encode" {
                #expect(r.status == 64, "\(db): \(r.stderr)")
                #expect(r.stderr == "enclab: --db needs a database file path, got '\(db)' (\(kind), not a regular file) (see 'enclab encode --help')\n")
            } else {
                #expect(r.status == 66, "\(db): \(r.stderr)")
                #expect(r.stderr == "enclab: \(db): is \(kind), not a database file\n")
            }
        }
        #expect(beside.filter { FileManager.default.fileExists(atPath: $0) } == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["c.y4m", "fifo.sqlite"])
    }

    /// Whether a read-only bind mount can be made in a private mount namespace here (root with CAP_SYS_ADMIN).
    static let readOnlyMountsWork: Bool = {
        let dir = NSTemporaryDirectory() + "enclab-ro-probe-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try? CLI.process("/usr/bin/unshare", ["-m", "sh", "-c", "mount --bind \"$0\" \"$0\" && mount -o remount,ro,bind \"$0\" && ! touch \"$0/x\" 2>/dev/null", dir], in: "/")
        return r?.status == 0
    }()

    @Test("commands that only read work on a database in a read-only mount (WAL database, nothing beside it), and change nothing",
          .enabled(if: readOnlyMountsWork, "read-only bind mounts in a private namespace (unshare -m) are not permitted here"),
          arguments: ["plot", "report", "check", "compare", "export", "merge"])
    func readOnlyMount(command: String) throws {
        let (dir, _) = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A second run, for compare.
        let second = try CLI.process(Self.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--crf", "35", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(second.status == 0, "\(second.stderr)")
        try FileManager.default.createDirectory(atPath: "\(dir)/ro", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: "\(dir)/lab.sqlite", toPath: "\(dir)/ro/lab.sqlite")
        // Still a WAL database (the mode is kept in the file): reading it needs a -shm file beside it.
        #expect(try CLI().sqlite("\(dir)/ro/lab.sqlite", "PRAGMA journal_mode") == ["wal"])
        let before = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ro/lab.sqlite"))
        let arguments: [String]
        switch command {
        case "plot": arguments = ["plot", "--db", "ro/lab.sqlite", "--out", "P"]
        case "report": arguments = ["report", "--db", "ro/lab.sqlite", "--out", "R"]
        case "check": arguments = ["check", "--db", "ro/lab.sqlite", "--run", "1", "--expect", "MaxKeyFrameInterval=250"]
        case "compare": arguments = ["compare", "--db", "ro/lab.sqlite", "1", "2"]
        case "export": arguments = ["export", "--db", "ro/lab.sqlite", "--table", "runs", "--format", "csv", "--out", "runs.csv"]
        default: arguments = ["merge", "m.sqlite", "ro/lab.sqlite"]
        }
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        let r = try CLI.process("/usr/bin/unshare", ["-m", "sh", "-c", """
            mount --bind ro ro && mount -o remount,ro,bind ro || exit 99
            "$0" \(quoted)
            """, Self.binary], in: dir)
        #expect(r.status == 0 || (command == "check" && r.status == 1), "\(command): \(r.status) \(r.stderr)")
        #expect(!r.stderr.contains("cannot"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/ro") == ["lab.sqlite"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ro/lab.sqlite")) == before)
        switch command {
        case "plot": #expect(try DiskFullTests.isComplete("\(dir)/P/" + CLI().sqlite("\(dir)/ro/lab.sqlite", "SELECT substr(run_key, 1, 16) FROM runs WHERE run_id = 1")[0] + "/frames.png"))
        case "export":
            // The same export of the same file where it can be written (read with its -shm made beside it).
            let again = try CLI.process(Self.binary, ["export", "--db", "ro/lab.sqlite", "--table", "runs", "--format", "csv", "--out", "again.csv"], in: dir)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/runs.csv")) == Data(contentsOf: URL(fileURLWithPath: "\(dir)/again.csv")))
        case "merge": #expect(try CLI().sqlite("\(dir)/m.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["2"])
        case "compare": #expect(r.stdout.contains("stream_bytes"), "\(r.stdout)")
        default: break
        }
    }

    @Test("an older database (schema version 2) in a read-only mount: plot and compare read a migrated copy; the file is unchanged",
          .enabled(if: readOnlyMountsWork, "read-only bind mounts in a private namespace (unshare -m) are not permitted here"))
    func readOnlyOlderSchema() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/ro", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(CLI.root)/Tests/EncoderLabTests/Fixtures/v2-ad1e90e.sqlite", toPath: "\(dir)/ro/v2.sqlite")
        let before = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ro/v2.sqlite"))
        #expect(try CLI().sqlite("\(dir)/ro/v2.sqlite", "PRAGMA user_version") == ["2"])
        let r = try CLI.process("/usr/bin/unshare", ["-m", "sh", "-c", """
            mount --bind ro ro && mount -o remount,ro,bind ro || exit 99
            "$0" plot --db ro/v2.sqlite --out P || exit $?
            "$0" compare --db ro/v2.sqlite 1 2
            """, Self.binary], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("run 1: frames and psnr plots in P/"), "\(r.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ro/v2.sqlite")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/ro") == ["v2.sqlite"])
    }
}
