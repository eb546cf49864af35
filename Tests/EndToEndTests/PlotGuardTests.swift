import Foundation
import Testing
import EncoderLab

/// `enclab plot` on databases it must not draw from or write into, and into folders it must not write: damaged
/// frame values (which trapped), files that are not enclab databases (which it turned into ones), and run
/// folders of another database (which it overwrote).
@Suite("plot refuses what it cannot draw and where it must not write, end to end", .serialized)
struct PlotGuardTests {
    typealias CLI = CommandLineTests

    /// A folder with `c.y4m` (8 frames) encoded into `lab.sqlite`, run folder under `out/`.
    static func lab() throws -> String {
        let dir = CLI().scratch()
        try SyntheticClip(width: 64, height: 48, frames: 8, seed: 12).write(to: "\(dir)/c.y4m")
        let r = try CLI.process(CLI.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--db", "lab.sqlite", "--out", "out"], in: dir)
        guard r.status == 0 else { throw LabError(.software, "encode: \(r.stderr)") }
        return dir
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("damaged frames (size_bytes of 2^63-1, dts at both ends of Int64): 65 naming the database, run and frame, no trap", arguments: [
        ("UPDATE frames SET size_bytes = 9223372036854775807",
         "enclab: x.sqlite: run 1: frame coded_index 0: size_bytes 9223372036854775807 is outside 0...1099511627776 (2^40), not a frame size that can be plotted\n"),
        ("UPDATE frames SET dts = CASE WHEN coded_index = 0 THEN -9223372036854775807 ELSE 9223372036854775807 END",
         "enclab: x.sqlite: run 1: frame coded_index 0: dts -9223372036854775807 is outside -1152921504606846976...1152921504606846976 (2^60 ticks)\n"),
        ("UPDATE frames SET size_bytes = -5 WHERE coded_index = 3",
         "enclab: x.sqlite: run 1: frame coded_index 3: size_bytes -5 is outside 0...1099511627776 (2^40), not a frame size that can be plotted\n"),
    ])
    func damagedValues(sql: String, message: String) throws {
        let dir = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: "\(dir)/lab.sqlite", toPath: "\(dir)/x.sqlite")
        _ = try CLI().sqlite("\(dir)/x.sqlite", sql)
        let r = try CLI.process(CLI.binary, ["plot", "--db", "x.sqlite", "--out", "P"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr == message)
    }

    /// x264 writes a DTS below the one before it when it is given PTS that go back (issue 9): such a run is
    /// drawn (its window bitrate counting each frame at the largest DTS so far), not refused.
    @Test("decreasing DTS are drawn: plot exits 0 with every frame in frames.dat and both charts")
    func decreasingDTS() throws {
        let dir = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try CLI().sqlite("\(dir)/lab.sqlite", "UPDATE frames SET dts = 100 - coded_index")
        let r = try CLI.process(CLI.binary, ["plot", "--db", "lab.sqlite", "--out", "P"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let runFolder = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/P").filter { !$0.hasPrefix(".") }
        #expect(runFolder.count == 1)
        let folder = "\(dir)/P/\(runFolder.first ?? "")"
        let data = try String(contentsOfFile: "\(folder)/frames.dat", encoding: .utf8)
        #expect(data.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 8)
        #expect(FileManager.default.fileExists(atPath: "\(folder)/frames.png") && FileManager.default.fileExists(atPath: "\(folder)/psnr.png"))
    }

    @Test("a file that is not an enclab database: 65 'not an enclab database', the file byte for byte as it was; a missing one 66",
          arguments: ["empty", "sqlite-no-tables", "sqlite-other-tables"])
    func notEnclab(kind: String) throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/x.sqlite"
        switch kind {
        case "empty": try Data().write(to: URL(fileURLWithPath: db))
        case "sqlite-no-tables": _ = try CLI().sqlite(db, "CREATE TABLE t (a); DROP TABLE t;")
        default: _ = try CLI().sqlite(db, "CREATE TABLE notes (a); INSERT INTO notes VALUES (1);")
        }
        let before = try Self.bytes(db)
        #expect(kind == "empty" ? before.isEmpty : before.prefix(16) == Data("SQLite format 3\0".utf8))
        let r = try CLI.process(CLI.binary, ["plot", "--db", "x.sqlite"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("enclab: x.sqlite: not an enclab database ("), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(try Self.bytes(db) == before)
        // Nothing beside it: no journal, no WAL, no plot folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["x.sqlite"])
        let missing = try CLI.process(CLI.binary, ["plot", "--db", "none.sqlite"], in: dir)
        #expect(missing.status == 66 && missing.stderr == "enclab: none.sqlite: no such database\n")
    }

    @Test("plot --out onto another database's run folder (same run key, its stream.264 there): 64 before writing anything")
    func anotherDatabasesFolder() throws {
        let dir = try Self.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The same clip and settings into another database and folder: the same run key, the same folder name.
        let r = try CLI.process(CLI.binary, ["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--db", "b.sqlite", "--out", "outB"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let folderA = try CLI.runFolder("\(dir)/lab.sqlite"), folderB = try CLI.runFolder("\(dir)/b.sqlite")
        #expect(Paths.fileName(folderA) == Paths.fileName(folderB) && folderA == "out/\(Paths.fileName(folderA))")
        // A's plot data marked, so that a rewrite with the same numbers would show.
        let marked = "\(dir)/\(folderA)/frames.dat"
        try (try String(contentsOfFile: marked, encoding: .utf8) + "# database A\n").write(toFile: marked, atomically: true, encoding: .utf8)
        let files = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/\(folderA)").sorted()
        let before = try files.map { try Self.bytes("\(dir)/\(folderA)/\($0)") }

        let plot = try CLI.process(CLI.binary, ["plot", "--db", "b.sqlite", "--out", "out"], in: dir)
        #expect(plot.status == 64)
        #expect(plot.stderr == "enclab: \(folderA): holds another run's stream, not run 1's of b.sqlite (\(folderB)/stream.264): give plot its own --out (see 'enclab plot --help')\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/\(folderA)").sorted() == files)
        #expect(try files.map { try Self.bytes("\(dir)/\(folderA)/\($0)") } == before)

        // Each database into its own folders: fine, from the folder it ran in and from another folder.
        #expect(try CLI.process(CLI.binary, ["plot", "--db", "lab.sqlite", "--out", "out"], in: dir).status == 0)
        let elsewhere = try CLI.process(CLI.binary, ["plot", "--db", "\(dir)/b.sqlite", "--out", "\(dir)/outB"], in: "/")
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        // A symbolic link to the run's own out folder is the same folder.
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/alias", withDestinationPath: "\(dir)/out")
        #expect(try CLI.process(CLI.binary, ["plot", "--db", "lab.sqlite", "--out", "alias"], in: dir).status == 0)
    }
}
