import Foundation
import Testing
import EncoderLab

/// `enclab analyze` and `enclab compare` on damaged databases made with the sqlite3 CLI: frame sizes and stored
/// metrics at the ends of Int64 (which trapped or were stored wrapped), huge and tiny reals, text and NULLs, DTS
/// going back, no frames; compare's messages and its read-only opening; merge's message for a folder.
@Suite("analyze and compare refuse damaged rows (65 naming database, run, column), never trap, end to end", .serialized)
struct MetricsGuardTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// A folder with `c.y4m` (8 frames) encoded twice (crf 23 and 30, runs 1 and 2) into `lab.sqlite`: each run
    /// has its `run_metrics` row, written when it was recorded.
    func lab() throws -> String {
        let dir = cli.scratch()
        try SyntheticClip(width: 64, height: 48, frames: 8, seed: 9).write(to: "\(dir)/c.y4m")
        for crf in ["23", "30"] {
            let r = try cli.enclab(["encode", "c.y4m", "--preset", "ultrafast", "--threads", "1", "--crf", crf, "--db", "lab.sqlite"], in: dir)
            try #require(r.status == 0, "\(r.stderr)")
        }
        return dir
    }

    /// Every row of run_metrics and run_gops as the sqlite3 CLI prints them.
    func metricsDump(_ db: String) throws -> [String] {
        try cli.sqlite(db, "SELECT * FROM run_metrics ORDER BY run_id; SELECT * FROM run_gops ORDER BY run_id, gop_index")
    }

    static let again = "(run 'enclab analyze --db lab.sqlite --run 1' to compute it again)"

    @Test("compare with a damaged run_metrics row: 65 naming the database, run, column and value", arguments: [
        ("UPDATE run_metrics SET stream_bytes = 9223372036854775807 WHERE run_id = 1",
         "lab.sqlite: run 1: run_metrics.stream_bytes holds 9223372036854775807, outside 0...9007199254740992 (2^53) \(again)"),
        ("UPDATE run_metrics SET stream_bytes = -9223372036854775808 WHERE run_id = 2",
         "lab.sqlite: run 2: run_metrics.stream_bytes holds -9223372036854775808, outside 0...9007199254740992 (2^53) (run 'enclab analyze --db lab.sqlite --run 2' to compute it again)"),
        ("UPDATE run_metrics SET bitrate_kbps = 1e999 WHERE run_id = 1",
         "lab.sqlite: run 1: run_metrics.bitrate_kbps holds inf, not a finite number \(again)"),
        ("UPDATE run_metrics SET frames = 'many' WHERE run_id = 1",
         "lab.sqlite: run 1: run_metrics.frames holds the text 'many', expected an integer \(again)"),
    ])
    func damagedMetrics(sql: String, message: String) throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try cli.sqlite("\(dir)/lab.sqlite", sql)
        let r = try cli.enclab(["compare", "--db", "lab.sqlite", "1", "2"], in: dir)
        #expect(r.status == 65 && r.stdout.isEmpty, "\(r.status) \(r.stderr)")
        #expect(r.stderr == "enclab: \(message)\n")
    }

    @Test("compare shows a real of 1e308 as 1e+308, not 309 digits; B − A and the % from the stored values")
    func hugeReal() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        _ = try cli.sqlite(db, "UPDATE run_metrics SET bitrate_kbps = 1e308 WHERE run_id = 1; UPDATE run_metrics SET span_seconds = 2.5e-7 WHERE run_id = 2")
        let r = try cli.enclab(["compare", "--db", "lab.sqlite", "1", "2"], in: dir)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        let rows = r.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let bText = try cli.sqlite(db, "SELECT bitrate_kbps FROM run_metrics WHERE run_id = 2").first ?? ""
        let b = try #require(Double(bText))
        // B − A = b − 1e308 = −1e308 to a double's precision; (B − A) / |A| = −100 %.
        #expect(rows.first { $0.first == "bitrate_kbps" } == ["bitrate_kbps", "1e+308", String(format: "%.3f", b), "-1e+308", "-100.00"])
        let aText = try cli.sqlite(db, "SELECT span_seconds FROM run_metrics WHERE run_id = 1").first ?? ""
        let a = try #require(Double(aText))
        #expect(rows.first { $0.first == "span_seconds" } == ["span_seconds", String(format: "%.3f", a), "2.5e-07",
                                                               String(format: "%+.3f", 2.5e-7 - a), String(format: "%+.2f", (2.5e-7 - a) / a * 100)])
        #expect(r.stdout.split(separator: "\n").allSatisfy { $0.count < 120 }, "\(r.stdout)")
    }

    @Test("frames of 2^63-1, 2 x 2^62 or -1000 bytes: analyze and compare's fresh computation 65 naming database, run, frame, column, value; the stored metrics as they were", arguments: [
        ("UPDATE frames SET size_bytes = 9223372036854775807 WHERE run_id = 1 AND coded_index = 0", "coded_index 0: size_bytes 9223372036854775807"),
        ("UPDATE frames SET size_bytes = 4611686018427387904 WHERE run_id = 1 AND coded_index IN (2, 3)", "coded_index 2: size_bytes 4611686018427387904"),
        ("UPDATE frames SET size_bytes = -1000 WHERE run_id = 1 AND coded_index = 5", "coded_index 5: size_bytes -1000"),
    ])
    func hugeFrames(sql: String, frame: String) throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        _ = try cli.sqlite(db, sql)
        let before = try metricsDump(db)
        let message = "enclab: lab.sqlite: run 1: frame \(frame) is outside 0...1099511627776 (2^40), not a frame size that can be analysed\n"
        let analyze = try cli.enclab(["analyze", "--db", "lab.sqlite", "--run", "1"], in: dir)
        #expect(analyze.status == 65 && analyze.stdout.isEmpty, "\(analyze.status) \(analyze.stderr)")
        #expect(analyze.stderr == message)
        #expect(try metricsDump(db) == before)
        // compare computes afresh a run without run_metrics rows, by the same rules.
        _ = try cli.sqlite(db, "DELETE FROM run_gops WHERE run_id = 1; DELETE FROM run_metrics WHERE run_id = 1")
        let compare = try cli.enclab(["compare", "--db", "lab.sqlite", "2", "1"], in: dir)
        #expect(compare.status == 65 && compare.stdout.isEmpty, "\(compare.status) \(compare.stderr)")
        #expect(compare.stderr == message)
    }

    @Test("analyze on damaged rows: text, DTS going back, NULLs, no frames; the lines of runs analysed before a failure are printed")
    func damagedRows() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        // Run 2 damaged, run 1 fine: run 1 is analysed (its line out) before run 2 is refused.
        let cases: [(String, Int32, String)] = [
            ("UPDATE frames SET qp = 'high' WHERE run_id = 2 AND coded_index = 1", 65,
             "enclab: lab.sqlite: run 2: frame coded_index 1: qp holds the text 'high', expected a finite number or NULL\n"),
            ("UPDATE frames SET pts = 'soon' WHERE run_id = 2 AND coded_index = 4", 65,
             "enclab: lab.sqlite: run 2: frame coded_index 4: pts holds the text 'soon', expected an integer\n"),
            ("UPDATE frames SET dts = 1152921504606846977 WHERE run_id = 2 AND coded_index = 7", 65,
             "enclab: lab.sqlite: run 2: frame coded_index 7: dts 1152921504606846977 is outside -1152921504606846976...1152921504606846976 (2^60 ticks)\n"),
            ("DELETE FROM frames WHERE run_id = 2", 65, "enclab: lab.sqlite: run 2: done, but no frames are stored\n"),
            ("UPDATE frames SET dts = 100 - coded_index WHERE run_id = 2", 0, ""),
            ("UPDATE frames SET qp = NULL, sse_y = NULL, ssim = NULL WHERE run_id = 2", 0, ""),
        ]
        let pristine = try Data(contentsOf: URL(fileURLWithPath: db))
        for (sql, status, message) in cases {
            try pristine.write(to: URL(fileURLWithPath: db))
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
            _ = try cli.sqlite(db, sql)
            let r = try cli.enclab(["analyze", "--db", "lab.sqlite"], in: dir)
            #expect(r.status == status, "\(sql): \(r.status) \(r.stderr)")
            // stderr: the progress lines ("analyze  1/2 runs  run 1"), then the error.
            #expect(r.stderr.split(separator: "\n").filter { !$0.hasPrefix("analyze ") }.map { $0 + "\n" }.joined() == message, "\(sql): \(r.stderr)")
            #expect(r.stdout == (status == 0 ? "analysed run 1\nanalysed run 2\n" : "analysed run 1\n"), "\(sql)")
        }
        // DTS going back: the peak window counts each frame at the largest DTS so far; the row is stored, sizes summed.
        #expect(try cli.sqlite(db, "SELECT m.stream_bytes = (SELECT sum(size_bytes) FROM frames WHERE run_id = 2) FROM run_metrics m WHERE run_id = 2") == ["1"])
    }

    @Test("compare reads only: a version-5 database stays version 5, byte for byte, with no copy left in TMPDIR; its runs named 'run'")
    func readOnly() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        let expected = try cli.enclab(["compare", "--db", "lab.sqlite", "1", "2"], in: dir)
        #expect(expected.status == 0, "\(expected.stderr)")
        // Back to version 5 as that version left it: no metrics tables.
        _ = try cli.sqlite(db, "DROP TABLE run_metrics; DROP TABLE run_gops; PRAGMA user_version = 5; PRAGMA wal_checkpoint(TRUNCATE)")
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        try FileManager.default.createDirectory(atPath: "\(dir)/tmp", withIntermediateDirectories: false)
        let r = try CLI.process(CLI.binary, ["compare", "--db", "lab.sqlite", "1", "2"], in: dir, environment: ["TMPDIR": "\(dir)/tmp"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        // The same table, computed afresh from the frames (what the lab stored at record time).
        #expect(r.stdout == expected.stdout)
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        #expect(try cli.sqlite(db, "PRAGMA user_version; SELECT count(*) FROM sqlite_master WHERE name IN ('run_metrics', 'run_gops')") == ["5", "0"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/tmp").isEmpty)

        let bad = try cli.enclab(["compare", "--db", "lab.sqlite", "1", "x"], in: dir)
        #expect(bad.status == 64)
        #expect(bad.stderr == "enclab: run 'x': expected a run id (12 or run-12) or a run key or its first 8 or more hex digits (see 'enclab compare --help')\n")
    }

    @Test("merge with a folder as OUT names its operand, not --db")
    func mergeFolder() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: false)
        let r = try cli.enclab(["merge", "folder", "lab.sqlite"], in: dir)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: merge OUT.sqlite needs a database file path, got 'folder' (a folder) (see 'enclab merge --help')\n")
    }
}
