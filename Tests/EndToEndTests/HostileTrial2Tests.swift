import Foundation
import Testing
import EncoderLab

/// Hostile trial 2, findings 3-5: a working folder that is not UTF-8, the report's damaged-frame messages without
/// the database, non-finite reals stored in a frame's quality columns.
@Suite("hostile trial 2: a working folder not UTF-8, damaged frames named with their database, non-finite stored reals", .serialized)
struct HostileTrial2Tests {
    let kinds = HostileKindTests()
    var cli: CommandLineTests { kinds.cli }

    /// The readers of stored frames and the arguments each is run with in a folder holding `lab.sqlite`.
    static let readers: [String: [String]] = [
        "plot": ["plot", "--db", "lab.sqlite", "--out", "P"],
        "report": ["report", "--db", "lab.sqlite", "--out", "R"],
        "analyze": ["analyze", "--db", "lab.sqlite", "--run", "1"],
        "check": ["check", "--db", "lab.sqlite", "--run", "1", "--expect", "AllowFrameReordering=true"],
    ]

    @Test("a working folder whose path is not UTF-8 is refused (64, naming it with its bytes escaped) before anything is made, not a 70 from ffmpeg or gnuplot part-way")
    func workingFolderNotUTF8() throws {
        let dir = try kinds.encoded()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The folder "d\xE9" (Latin-1 'dé'), made and entered by sh; enclab is started in it.
        let encode = try kinds.shell(#"mkdir "$(printf 'd\351')" && cd "$(printf 'd\351')" && exec "$0" encode ../c.y4m --threads 1 --db ../new.sqlite --out ../NEW"#, in: dir)
        #expect(encode.status == 64, "\(encode.status) \(encode.stderr)")
        #expect(encode.stderr.hasPrefix("enclab: the working folder is not valid UTF-8: '/") && encode.stderr.contains(#"/d\xE9' ("#), "\(encode.stderr)")
        let plot = try kinds.shell(#"cd "$(printf 'd\351')" && exec "$0" plot --db ../lab.sqlite --out pp"#, in: dir)
        #expect(plot.status == 64 && plot.stderr.contains(#"/d\xE9' ("#), "\(plot.status) \(plot.stderr)")
        // Nothing made: no database, no --out folder, nothing in the folder itself (ls counts names whatever their bytes).
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/new.sqlite") && !FileManager.default.fileExists(atPath: "\(dir)/NEW"))
        #expect(try kinds.shell(#"ls -A "$(printf 'd\351')" | wc -l"#, in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        // The same commands in a UTF-8 folder work: the refusal is the folder's name, not the command.
        try FileManager.default.createDirectory(atPath: "\(dir)/dé", withIntermediateDirectories: false)
        let good = try cli.enclab(["plot", "--db", "../lab.sqlite", "--out", "pp"], in: "\(dir)/dé")
        #expect(good.status == 0, "\(good.stderr)")
    }

    @Test("a frame's damaged size or pts is named with the database by every reader: report as plot, analyze and check --run do (65)",
          arguments: [("size_bytes", "-5", "size_bytes -5 is outside 0...1099511627776 (2^40), not a frame size that can be"),
                      ("pts", "9223372036854775807", "pts 9223372036854775807 is outside -1152921504606846976...1152921504606846976 (2^60 ticks)")])
    func damagedFrameNamesDatabase(column: String, value: String, reason: String) throws {
        let dir = try kinds.encoded()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try cli.sqlite("\(dir)/lab.sqlite", "UPDATE frames SET \(column) = \(value) WHERE run_id = 1 AND coded_index = 3")
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT \(column) FROM frames WHERE run_id = 1 AND coded_index = 3") == [value])
        for (name, arguments) in Self.readers.sorted(by: { $0.key < $1.key }) {
            let r = try cli.enclab(arguments, in: dir)
            #expect(r.status == 65, "\(name): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("enclab: lab.sqlite: run 1: frame coded_index 3: \(reason)"), "\(name): \(r.stderr)")
        }
    }

    @Test("a non-finite real stored in a frame's quality column (sqlite3 keeps 1e999 as Inf) is refused by every reader of that column (65 naming the database, run, frame and column), not averaged or drawn",
          arguments: [("psnr_y", "-1e999", "-Inf", ["plot", "report", "check"]),
                      ("psnr_avg", "1e999", "Inf", ["plot", "report", "check"]),
                      ("ssim", "1e999", "Inf", ["plot", "analyze", "check"]),
                      ("qp", "-1e999", "-Inf", ["plot", "analyze", "check"])])
    func nonFiniteStoredReal(column: String, value: String, shown: String, readers: [String]) throws {
        let dir = try kinds.encoded()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try cli.sqlite("\(dir)/lab.sqlite", "UPDATE frames SET \(column) = \(value) WHERE run_id = 1 AND coded_index = 2")
        // The witness: sqlite3 reads back a REAL that is infinite.
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT typeof(\(column)), \(column) FROM frames WHERE run_id = 1 AND coded_index = 2") == ["real|\(shown)"])
        let inf = value.hasPrefix("-") ? "-inf" : "inf"
        for name in readers {
            let r = try cli.enclab(Self.readers[name]!, in: dir)
            #expect(r.status == 65, "\(name): \(r.status) \(r.stdout) \(r.stderr)")
            let message = name == "analyze"
                ? "lab.sqlite: run 1: frame coded_index 2: \(column) holds the real \(inf), expected a finite number or NULL"
                : "lab.sqlite: run 1, frame 2 in coded order: column \(column) holds the real \(inf), expected a finite number or NULL"
            #expect(r.stderr.contains("enclab: \(message)"), "\(name): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/P"))
    }
}
