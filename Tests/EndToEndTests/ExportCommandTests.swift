import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// `enclab export` through the built binary: CSV read back by Python's csv module and JSON Lines by its json module,
/// every field compared with what the sqlite3 CLI prints for the same rows (text as hex, numbers by `quote()`,
/// which SQLite writes in a form that reads back to the same double), with hostile text in the runs; `--run`,
/// `--out` (atomic), `metrics` (`run_metrics`) and the errors.
@Suite("enclab export, end to end", .serialized)
struct ExportCommandTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// A clip name no exporter should trip on: comma, double quotes, LF, CRLF, `<script>`, non-ASCII, an emoji.
    static let hostileSQL = "'a,b \"quoted\" ' || char(10) || 'second line' || char(13, 10) || '<script>alert(1)</script> é 日本 🎬'"
    static let hostileText = "a,b \"quoted\" \nsecond line\r\n<script>alert(1)</script> é 日本 🎬"

    func sqlite(_ db: String, _ sql: String) throws {
        let r = try CLI.process("/usr/bin/sqlite3", [db, sql], in: "/")
        try #require(r.status == 0 && r.stderr.isEmpty, "sqlite3: \(r.stderr)")
    }

    /// A folder with `lab.sqlite` holding two runs of a 4-frame clip (made by `enclab encode`), then changed with the
    /// sqlite3 CLI: run 1's clip and error hostile text, run 2's crop empty text, awkward reals in frames (0.1 + 0.2,
    /// 1/3, 1e-300, 123456789.123456789) and a NULL.
    func lab() throws -> String {
        let dir = cli.scratch()
        try TestSupport.makeClip(in: dir, SyntheticClip(width: 64, height: 48, frames: 4, seed: 3))
        try TestSupport.makeDatabase(in: dir, runs: [["--crf", "23"], ["--crf", "30"]])
        try sqlite("\(dir)/lab.sqlite", """
            UPDATE runs SET clip = \(Self.hostileSQL), error = 'say "hi", then' || char(10) || 'go' WHERE run_id = 1;
            UPDATE runs SET crop = '' WHERE run_id = 2;
            UPDATE frames SET qp = 0.1 + 0.2, ssim = 1.0 / 3 WHERE run_id = 1 AND coded_index = 0;
            UPDATE frames SET qp = 1e-300, psnr_u = NULL WHERE run_id = 1 AND coded_index = 1;
            UPDATE frames SET qp = 123456789.123456789 WHERE run_id = 2 AND coded_index = 2;
            INSERT INTO frame_quality_metrics (run_id, display_index, vmaf, xpsnr) VALUES (1, 0, 93.25, 41.5), (2, 3, 0.1 + 0.2, NULL);
            """)
        return dir
    }

    /// Reads `file` (csv or jsonl) with Python's csv or json module and compares each row with the sqlite3 CLI's
    /// output of `SELECT * FROM (source) ORDER BY order`: the header (or keys) must be `columns`; a text cell is
    /// read by sqlite3 as hex(); a number by quote(): an integer must be written the same, a real must parse to the
    /// same double and look like a real; NULL must be an empty CSV field or JSON null. Prints "ok N" (rows).
    static let checker = #"""
    import sys, csv, json, subprocess
    fmt, path, db, source, order, columns = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], json.loads(sys.argv[6])
    def q(c): return '"' + c.replace('"', '""') + '"'
    cells = ", ".join("CASE typeof(%s) WHEN 'text' THEN 'T' || hex(%s) ELSE quote(%s) END" % (q(c), q(c), q(c)) for c in columns)
    out = subprocess.run(["sqlite3", "-readonly", "-ascii", db, "SELECT %s FROM (%s) ORDER BY %s" % (cells, source, order)],
                         capture_output=True, check=True).stdout.decode()
    expected = [r.split("\x1f") for r in out.split("\x1e") if r != ""]
    if fmt == "csv":
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f, strict=True))
        assert rows[0] == columns, ("header", rows[0], columns)
        rows = rows[1:]
        raw = open(path, "rb").read()
        assert raw.endswith(b"\r\n"), "last record does not end with CRLF"
    else:
        rows = []
        for line in open(path, encoding="utf-8").read().split("\n")[:-1]:
            obj = json.loads(line)
            assert list(obj.keys()) == columns, ("keys", list(obj.keys()), columns)
            rows.append(list(obj.values()))
    assert len(rows) == len(expected), ("rows", len(rows), len(expected))
    for i, (row, want) in enumerate(zip(rows, expected)):
        assert len(row) == len(want), (i, row, want)
        for c, got, w in zip(columns, row, want):
            where = (i, c, got, w)
            if w == "NULL":
                assert got == ("" if fmt == "csv" else None), where
            elif w.startswith("T"):
                assert got == bytes.fromhex(w[1:]).decode("utf-8"), where
            elif "." in w or "e" in w or "E" in w:
                if fmt == "csv":
                    assert ("." in got or "e" in got) and float(got) == float(w), where
                else:
                    assert type(got) is float and got == float(w), where
            else:
                assert (got == w) if fmt == "csv" else (type(got) is int and got == int(w)), where
    print("ok", len(rows))
    """#

    /// Runs ``checker`` on `file`; returns its stdout.
    func check(_ format: String, _ file: String, db: String, source: String, order: String, columns: [String]) throws -> String {
        let json = "[" + columns.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let r = try CLI.process("/usr/bin/python3", ["-c", Self.checker, format, file, db, source, order, json], in: "/")
        #expect(r.status == 0, "python: \(r.stderr)")
        return r.stdout
    }

    /// The table's columns in order, as the sqlite3 CLI lists them.
    func columns(_ db: String, _ table: String) throws -> [String] {
        try CLI.process("/usr/bin/sqlite3", [db, "SELECT name FROM pragma_table_info('\(table)') ORDER BY cid"], in: "/").stdout
            .split(separator: "\n").map(String.init)
    }

    /// frames with run_key after run_id, pts_time after pts and dts_time after dts, then the perceptual quality of
    /// frame_quality_metrics (schema 8), as export writes them.
    func frameColumns(_ db: String) throws -> [String] {
        var c = try columns(db, "frames")
        c.insert("run_key", at: c.firstIndex(of: "run_id")! + 1)
        c.insert("pts_time", at: c.firstIndex(of: "pts")! + 1)
        c.insert("dts_time", at: c.firstIndex(of: "dts")! + 1)
        return c + Self.qualityColumns
    }
    static let qualityColumns = ["vmaf", "vmaf_neg", "vmaf_4k", "psnr_hvs", "float_ssim", "ms_ssim", "ciede2000", "xpsnr"]
    /// The times as sqlite3 works them out: ticks x timebase_num / timebase_den in doubles, rounded to 6 decimals (the
    /// checker compares the number export writes with it as a double).
    let framesSource = "SELECT f.*, r.run_key AS run_key, round(f.pts * 1.0 * r.timebase_num / r.timebase_den, 6) AS pts_time, "
        + "round(f.dts * 1.0 * r.timebase_num / r.timebase_den, 6) AS dts_time, "
        + ExportCommandTests.qualityColumns.map { "q.\($0) AS \($0)" }.joined(separator: ", ")
        + " FROM frames AS f JOIN runs AS r ON r.run_id = f.run_id"
        + " LEFT JOIN frame_quality_metrics AS q ON q.run_id = f.run_id AND q.display_index = f.display_index"

    @Test("frames and runs, CSV and JSONL, to stdout and to --out: every field as sqlite3 reads it", arguments: ["csv", "jsonl"])
    func tables(format: String) throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        let before = try Data(contentsOf: URL(fileURLWithPath: db))

        let frames = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "frames", "--format", format], in: dir)
        #expect(frames.status == 0 && frames.stderr.isEmpty, "\(frames.stderr)")
        try frames.stdout.write(toFile: "\(dir)/frames.out", atomically: true, encoding: .utf8)
        #expect(try check(format, "\(dir)/frames.out", db: db, source: framesSource, order: "run_id, coded_index",
                          columns: try frameColumns(db)) == "ok 8\n")

        // export makes no folders (a missing one is 73, ExportOutputTests): sub/ is made here.
        try FileManager.default.createDirectory(atPath: "\(dir)/sub", withIntermediateDirectories: false)
        let runs = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", format, "--out", "sub/runs.\(format)"], in: dir)
        #expect(runs.status == 0 && runs.stderr.isEmpty, "\(runs.stderr)")
        #expect(runs.stdout == "export: 2 runs rows to sub/runs.\(format)\n")
        #expect(try check(format, "\(dir)/sub/runs.\(format)", db: db, source: "SELECT * FROM runs", order: "run_id",
                          columns: try columns(db, "runs")) == "ok 2\n")
        // The hostile text is there as text, whole (the checker compared it byte for byte with sqlite3's hex).
        let text = try String(contentsOfFile: "\(dir)/sub/runs.\(format)", encoding: .utf8)
        if format == "csv" {
            #expect(text.contains("\"" + Self.hostileText.replacingOccurrences(of: "\"", with: "\"\"") + "\""))
            #expect(text.hasPrefix("run_id,run_key,experiment,clip,"))
            #expect(text.contains(",\"\","), "run 2's empty crop as a quoted empty field")
        } else {
            #expect(text.contains(#""clip":"a,b \"quoted\" \nsecond line\r\n<script>alert(1)</script> é 日本 🎬""#))
            #expect(text.split(separator: "\n").count == 2)
        }
        // Read-only: the database is unchanged, and no file appeared beside it.
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        // (A read-only reader of a WAL database leaves its -wal and -shm beside it, as the sqlite3 CLI's does: the
        // -wal empty, nothing written.)
        let listing = try FileManager.default.contentsOfDirectory(atPath: dir).sorted().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") }
        #expect(listing == ["c.y4m", "frames.out", "lab.sqlite", "results", "sub"], "\(listing)")
        if let wal = try? FileManager.default.attributesOfItem(atPath: "\(db)-wal") { #expect(wal[.size] as? Int == 0) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/sub") == ["runs.\(format)"])
    }

    @Test("reals keep every digit: 0.1 + 0.2, 1/3, 1e-300 and 123456789.12345679 are written in a form that reads back exactly")
    func reals() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "frames", "--format", "csv"], in: dir)
        #expect(r.status == 0)
        let lines = r.stdout.components(separatedBy: "\r\n")
        let header = lines[0].split(separator: ",").map(String.init)
        let qp = try #require(header.firstIndex(of: "qp")), ssim = try #require(header.firstIndex(of: "ssim"))
        func field(_ line: Int, _ column: Int) -> String { String(lines[line].split(separator: ",", omittingEmptySubsequences: false)[column]) }
        // Swift's shortest round-trip forms, written out: the doubles nearest 0.3, 1/3, 1e-300 and 123456789.123456789.
        #expect(field(1, qp) == "0.30000000000000004")
        #expect(field(1, ssim) == "0.3333333333333333")
        #expect(field(2, qp) == "1e-300")
        #expect(field(7, qp) == "123456789.12345679")
        #expect(field(2, try #require(header.firstIndex(of: "psnr_u"))) == "")
    }

    @Test("--run selects runs by id or key prefix; metrics exports run_metrics whatever its columns, then run_delay's max_delay_frames, the skipped_frames count and rtp_runs' columns")
    func runsAndMetrics() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lab.sqlite"
        let r = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "frames", "--format", "jsonl", "--run", "2", "--out", "two.jsonl"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try check("jsonl", "\(dir)/two.jsonl", db: db, source: framesSource + " WHERE f.run_id = 2", order: "run_id, coded_index",
                          columns: try frameColumns(db)) == "ok 4\n")
        let key = try CLI.process("/usr/bin/sqlite3", [db, "SELECT substr(run_key, 1, 10) FROM runs WHERE run_id = 1"], in: "/").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let byKey = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "runs", "--format", "csv", "--run", key, "--out", "one.csv"], in: dir)
        #expect(byKey.status == 0, "\(byKey.stderr)")
        #expect(try check("csv", "\(dir)/one.csv", db: db, source: "SELECT * FROM runs WHERE run_id = 1", order: "run_id",
                          columns: try columns(db, "runs")) == "ok 1\n")

        // run_metrics as the lab fills it after every run (and `enclab analyze` again): every column, as SQLite holds it.
        let analyze = try cli.enclab(["analyze", "--db", "lab.sqlite"], in: dir)
        #expect(analyze.status == 0, "\(analyze.stderr)")
        let metricsColumns = try columns(db, "run_metrics")
        #expect(metricsColumns.first == "run_id" && metricsColumns.contains("psnr_global") && metricsColumns.count > 40)
        let runCount = try CLI.process("/usr/bin/sqlite3", [db, "SELECT count(*) FROM run_metrics"], in: "/").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for format in ["csv", "jsonl"] {
            let m = try cli.enclab(["export", "--db", "lab.sqlite", "--table", "metrics", "--format", format, "--out", "m.\(format)"], in: dir)
            #expect(m.status == 0, "\(m.stderr)")
            // Then each run's max_delay_frames from run_delay, its count of skipped_frames rows (schema 8) and its RTP
            // stage from rtp_runs (schema 9), as sqlite3 joins them.
            let rtp = ["packets", "max_packets_per_frame", "largest_burst_bytes", "rtp_overhead_bytes", "loss", "packets_lost",
                       "frames_broken", "frames_frozen", "loss_events", "mean_recovery_frames", "max_recovery_frames",
                       "unrecovered_events", "mean_psnr_y"]
            let named = rtp.map { $0.hasPrefix("rtp_") ? $0 : "rtp_" + $0 }
            #expect(try check(format, "\(dir)/m.\(format)", db: db,
                              source: "SELECT m.*, d.max_delay_frames AS max_delay_frames, (SELECT count(*) FROM skipped_frames AS s WHERE s.run_id = m.run_id) AS skipped_frames, "
                                  + zip(rtp, named).map { "p.\($0) AS \($1)" }.joined(separator: ", ")
                                  + " FROM run_metrics AS m LEFT JOIN run_delay AS d ON d.run_id = m.run_id LEFT JOIN rtp_runs AS p ON p.run_id = m.run_id",
                              order: "run_id", columns: metricsColumns + ["max_delay_frames", "skipped_frames"] + named) == "ok \(runCount)\n")
        }
    }

    @Test("errors: one line, the sysexits status, and an existing --out left as it was with no temporary file beside it")
    func errors() throws {
        let dir = try lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try sqlite("\(dir)/lab.sqlite", "DROP TABLE IF EXISTS run_metrics")
        try "old".write(toFile: "\(dir)/keep.csv", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: "\(dir)/empty.sqlite", contents: Data())
        let cases: [([String], Int32, String)] = [
            (["--table", "metrics", "--format", "csv", "--out", "keep.csv"], 66,
             "lab.sqlite: no run_metrics table (run 'enclab analyze --db FILE' on it to compute the run metrics)"),
            (["--table", "frames", "--format", "csv", "--out", "keep.csv", "--run", "9"], 66, "lab.sqlite: no run with id '9'"),
            (["--table", "frames", "--format", "csv", "--out", "folder"], 73, "folder: is a folder, not a file to write"),
            (["--table", "lines", "--format", "csv"], 64, "--table must be frames, runs or metrics, got 'lines' (see 'enclab export --help')"),
            (["--table", "runs", "--format", "tsv"], 64, "--format must be csv or jsonl, got 'tsv' (see 'enclab export --help')"),
            (["--table", "runs"], 64, "export needs --format csv|jsonl (see 'enclab export --help')"),
            (["--table", "runs", "--format", "csv", "--run", "x"], 64,
             "--run 'x': expected a run id (12 or run-12) or a run key or its first 8 or more hex digits (see 'enclab export --help')"),
        ]
        for (arguments, status, message) in cases {
            let r = try cli.enclab(["export", "--db", "lab.sqlite"] + arguments, in: dir)
            #expect(r.status == status && r.stdout.isEmpty, "\(arguments): \(r.status) \(r.stderr)")
            #expect(r.stderr == "enclab: \(message)\n", "\(arguments)")
        }
        for (db, status, message) in [("missing.sqlite", Int32(66), "missing.sqlite: no such database"),
                                      ("empty.sqlite", 65, "empty.sqlite: not an enclab database (no tables: an empty file or an empty SQLite database)")] {
            let r = try cli.enclab(["export", "--db", db, "--table", "runs", "--format", "csv", "--out", "keep.csv"], in: dir)
            #expect(r.status == status && r.stderr == "enclab: \(message)\n", "\(r.stderr)")
        }
        #expect(try String(contentsOfFile: "\(dir)/keep.csv", encoding: .utf8) == "old")
        let listing = try FileManager.default.contentsOfDirectory(atPath: dir).sorted().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") }
        #expect(listing == ["c.y4m", "empty.sqlite", "folder", "keep.csv", "lab.sqlite", "results"], "\(listing)")
        #expect(try FileManager.default.attributesOfItem(atPath: "\(dir)/empty.sqlite")[.size] as? Int == 0)
    }
}
