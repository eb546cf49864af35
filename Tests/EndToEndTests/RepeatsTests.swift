import Foundation
import Testing
import EncoderLab

/// Runs that x264 cannot repeat (issue 17, item 2) and merge's trust in its inputs (item 6), through the built
/// `enclab`; every database is read back with the sqlite3 CLI.
@Suite("repeatable runs, repeats in merge and report; merge of damaged inputs, end to end", .serialized)
struct RepeatsTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// x264 0.164 under VBV (ratecontrol.c reads other threads' frame-size estimates).
    static let vbv = ["--bitrate", "150", "--vbv-maxrate", "150", "--vbv-bufsize", "150", "--nal-hrd", "cbr"]

    func folder() throws -> String {
        let dir = cli.scratch()
        try SyntheticClip(width: 96, height: 64, frames: 24, seed: 17).write(to: "\(dir)/c.y4m")
        return dir
    }

    func bytes(_ path: String) -> Data { (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }

    @Test("threads 2 with VBV in two processes: repeatable 0 in runs and the runs export; merge keeps both done as repeats; the report shows their spread")
    func threadedRepeats() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["a", "b"] {
            let r = try cli.enclab(["encode", "c.y4m", "--threads", "2"] + Self.vbv + ["--db", "\(name).sqlite", "--out", name], in: dir)
            try #require(r.status == 0, "\(r.stderr)")
            #expect(try cli.sqlite("\(dir)/\(name).sqlite", "SELECT status, repeatable FROM runs") == ["done|0"])
            _ = try cli.sqlite("\(dir)/\(name).sqlite", "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let export = try cli.enclab(["export", "--db", "a.sqlite", "--table", "runs", "--format", "jsonl"], in: dir)
        #expect(export.status == 0, "\(export.stderr)")
        let row = (try? JSONSerialization.jsonObject(with: Data(export.stdout.utf8))) as? [String: Any]
        #expect(row?["repeatable"] as? Int == 0, "\(export.stdout)")
        let key = try cli.sqlite("\(dir)/a.sqlite", "SELECT run_key FROM runs")[0]
        #expect(try cli.sqlite("\(dir)/b.sqlite", "SELECT run_key FROM runs") == [key])
        // Two processes of x264 0.164 with two threads under VBV may give the same bytes on a small clip: then b's
        // run is made what another thread schedule leaves, one frame 1 byte larger.
        let same = bytes("\(dir)/a/\(key.prefix(16))/stream.264") == bytes("\(dir)/b/\(key.prefix(16))/stream.264")
        if same {
            _ = try cli.sqlite("\(dir)/b.sqlite", "UPDATE frames SET size_bytes = size_bytes + 1 WHERE run_id = 1 AND coded_index = 0; UPDATE runs SET bytes = bytes + 1 WHERE run_id = 1")
        }
        // A stored repeatable 1 is not taken either: merge works it out from the settings (2 threads under VBV).
        _ = try cli.sqlite("\(dir)/b.sqlite", "UPDATE runs SET repeatable = 1")
        let m = try cli.enclab(["merge", "m.sqlite", "a.sqlite", "b.sqlite"], in: dir)
        #expect(m.status == 0, "\(m.stderr)")
        #expect(m.stderr == "note: run key \(key): run 1 of b.sqlite is a repeat of run 1 of a.sqlite with other per-frame rows (the run is not repeatable); both stay done, the repeat as run 2 of m.sqlite\n")
        #expect(m.stdout.hasSuffix("m.sqlite: 2 runs from 2 databases (0 already there left out, 0 conflicts, 1 repeat of runs that are not repeatable)\n"), "\(m.stdout)")
        #expect(try cli.sqlite("\(dir)/m.sqlite", "SELECT run_id, run_key, status, repeatable, error IS NULL FROM runs ORDER BY run_id")
                == ["1|\(key)|done|0|1", "2|\(key)|done|0|1"])
        // The report: the runs table's column and the noise floor, bytes min–max as sqlite3 reads them.
        let spread = try cli.sqlite("\(dir)/m.sqlite", "SELECT min(bytes) || '–' || max(bytes) FROM runs")[0]
        let report = try cli.enclab(["report", "--db", "m.sqlite", "--out", "rep", "--runs", "1,2"], in: dir)
        #expect(report.status == 0, "\(report.stderr)")
        let page = (try? String(contentsOfFile: "\(dir)/rep/encode/index.html", encoding: .utf8)) ?? ""
        #expect(page.contains("<h2>Repeats (noise floor)</h2>") && page.contains("<td class=\"text\">\(spread)</td>"), "\(spread)")
        // The summary table marks each such run with a badge (the "repeatable" column is behind the column chooser).
        #expect(page.components(separatedBy: "<span class=\"missing\">not repeatable</span>").count - 1 == 2)
        let run = (try? String(contentsOfFile: "\(dir)/rep/encode/run-1/index.html", encoding: .utf8)) ?? ""
        #expect(run.contains("x264 with 2 threads under VBV"))
        // plot --db draws each repeat into a folder of its own: the key's 16 digits and the run id.
        let plot = try cli.enclab(["plot", "--db", "m.sqlite", "--out", "plots"], in: dir)
        #expect(plot.status == 0, "\(plot.stderr)")
        for id in [1, 2] {
            let folder = "plots/\(key.prefix(16))-run-\(id)"
            #expect(plot.stdout.contains("run \(id): frames and psnr plots in \(folder)\n"), "\(plot.stdout)")
            #expect(FileManager.default.fileExists(atPath: "\(dir)/\(folder)/frames.dat"), "\(folder)")
        }
        // The two data files differ as the repeats' per-frame rows do.
        #expect(bytes("\(dir)/plots/\(key.prefix(16))-run-1/frames.dat") != bytes("\(dir)/plots/\(key.prefix(16))-run-2/frames.dat"))
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/plots/\(key.prefix(16))"))
        // A sweep resumed over the stored run says that it is not repeatable.
        let again = try cli.enclab(["encode", "c.y4m", "--threads", "2"] + Self.vbv + ["--db", "m.sqlite", "--out", "a"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("(already done; not repeatable: stored from an earlier process, a new encode would give other bytes; 2 repeats stored, this is the first)"), "\(again.stdout)")
    }

    @Test("threads 1 with VBV in two processes: repeatable 1, byte-identical streams, merged as one run")
    func oneThreadRepeatable() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["a", "b"] {
            let r = try cli.enclab(["encode", "c.y4m", "--threads", "1"] + Self.vbv + ["--db", "\(name).sqlite", "--out", name], in: dir)
            try #require(r.status == 0, "\(r.stderr)")
            #expect(try cli.sqlite("\(dir)/\(name).sqlite", "SELECT status, repeatable FROM runs") == ["done|1"])
        }
        let key = try cli.sqlite("\(dir)/a.sqlite", "SELECT run_key FROM runs")[0]
        let a = bytes("\(dir)/a/\(key.prefix(16))/stream.264"), b = bytes("\(dir)/b/\(key.prefix(16))/stream.264")
        let same = !a.isEmpty && a == b
        #expect(same)
        let m = try cli.enclab(["merge", "m.sqlite", "a.sqlite", "b.sqlite"], in: dir)
        #expect(m.status == 0 && m.stderr.isEmpty, "\(m.stderr)")
        #expect(try cli.sqlite("\(dir)/m.sqlite", "SELECT count(*), sum(repeatable) FROM runs") == ["1|1"])
    }

    @Test("--non-deterministic is not repeatable even with one thread; threads 2 without VBV is; 2 sliced threads under VBV are not, and sliced threads x264 cuts to one are")
    func rule() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 160 pixels high (10 macroblock rows): x264 keeps 2 sliced threads; at 64 (4 rows) it resolves them to 1.
        try SyntheticClip(width: 192, height: 160, frames: 6, seed: 3).write(to: "\(dir)/tall.y4m")
        let r1 = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--non-deterministic", "--crf", "30", "--db", "l.sqlite", "--out", "o"], in: dir)
        #expect(r1.status == 0, "\(r1.stderr)")
        let r2 = try cli.enclab(["encode", "c.y4m", "--threads", "2", "--bitrate", "150", "--db", "l.sqlite", "--out", "o"], in: dir)
        #expect(r2.status == 0, "\(r2.stderr)")
        for clip in ["tall.y4m", "c.y4m"] {
            let r = try cli.enclab(["encode", clip, "--threads", "2", "--sliced-threads"] + Self.vbv + ["--db", "l.sqlite", "--out", "o"], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
        }
        // The threads x264 resolved, as its SEI options string in each stream says (strings(1) on the stream).
        let threads = try (3...4).map { id -> String in
            let path = try cli.sqlite("\(dir)/l.sqlite", "SELECT stream_path FROM runs WHERE run_id = \(id)")[0]
            let text = try CLI.process("/usr/bin/strings", [path], in: dir).stdout
            return text.split(separator: " ").first { $0.hasPrefix("threads=") }.map(String.init) ?? ""
        }
        #expect(threads == ["threads=2", "threads=1"])
        #expect(try cli.sqlite("\(dir)/l.sqlite", "SELECT run_id, repeatable FROM runs ORDER BY run_id") == ["1|0", "2|1", "3|0", "4|1"])
    }

    // MARK: merge of damaged inputs

    /// A folder with `a.sqlite`: one done run of the clip (threads 1).
    func intact() throws -> String {
        let dir = try folder()
        let r = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "30", "--db", "a.sqlite", "--out", "a"], in: dir)
        guard r.status == 0 else { throw LabError(.software, "encode: \(r.stderr)") }
        // Everything in the main file, so that a copy of it alone is the whole database.
        _ = try cli.sqlite("\(dir)/a.sqlite", "PRAGMA wal_checkpoint(TRUNCATE)")
        return dir
    }

    @Test("merge: a damaged copy of a done run is stored failed naming its input and run, and never demotes the intact copy",
          arguments: [
            ("negative size", "UPDATE frames SET size_bytes = -5 WHERE coded_index = 3", "frame coded_index 3: size_bytes -5 is outside 0...1099511627776 (2^40), not a frame size that can be merged"),
            ("text size", "UPDATE frames SET size_bytes = 'abc' WHERE coded_index = 3", "frame coded_index 3: size_bytes is the text 'abc', not an integer"),
            ("INT64_MAX size", "UPDATE frames SET size_bytes = 9223372036854775807 WHERE coded_index = 3", "frame coded_index 3: size_bytes 9223372036854775807 is outside 0...1099511627776 (2^40), not a frame size that can be merged"),
            ("INT64_MAX pts", "UPDATE frames SET pts = 9223372036854775807 WHERE coded_index = 3", "frame coded_index 3: pts 9223372036854775807 is outside -1152921504606846976...1152921504606846976 (2^60 ticks)"),
            ("text pts", "UPDATE frames SET pts = 'x' WHERE coded_index = 3", "frame coded_index 3: pts is the text 'x', not an integer"),
            ("no frames", "DELETE FROM frames", "it has no frames"),
            ("a row the schema refuses", "PRAGMA ignore_check_constraints = 1; UPDATE frames SET sse_y = -1 WHERE coded_index = 3",
             "a row of frames is refused by the schema: CHECK constraint failed: sse_y >= 0"),
            // A BLOB is named as one (SQLite's storage class), not read as NULL.
            ("BLOB size", "UPDATE frames SET size_bytes = x'0102' WHERE coded_index = 3", "frame coded_index 3: size_bytes is a BLOB, not an integer"),
            ("BLOB in another column", "PRAGMA ignore_check_constraints = 1; UPDATE frames SET qp = x'01' WHERE coded_index = 3",
             "a row of frames holds a BLOB in qp, which the lab never stores"),
            // The runs row, one kind of column at a time.
            ("text bytes", "UPDATE runs SET bytes = 'lots'", "runs.bytes is the text 'lots', not an integer"),
            ("real width", "UPDATE runs SET width = 1.5", "runs.width is the real 1.5, not an integer"),
            ("negative fps", "UPDATE runs SET fps_num = -25", "runs.fps_num is -25, not a non-negative integer"),
            ("no timebase", "UPDATE runs SET timebase_den = NULL", "runs.timebase_den is NULL, not an integer"),
            ("BLOB duration", "UPDATE runs SET duration_s = x'00'", "runs.duration_s is a BLOB, not a number"),
            ("text duration", "UPDATE runs SET duration_s = 'long'", "runs.duration_s is the text 'long', not a number"),
            ("settings not JSON", "UPDATE runs SET settings = '{not json'", "runs.settings is the text '{not json', not a JSON object"),
            ("settings a JSON array", "UPDATE runs SET settings = '[1]'", "runs.settings is the text '[1]', not a JSON object"),
            ("warnings not an array", "UPDATE runs SET warnings = '{}'", "runs.warnings is the text '{}', not a JSON array"),
          ])
    func damaged(kind: String, damage: String, reason: String) throws {
        let dir = try intact()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: "\(dir)/a.sqlite", toPath: "\(dir)/d.sqlite")
        _ = try cli.sqlite("\(dir)/d.sqlite", damage)
        let key = try cli.sqlite("\(dir)/a.sqlite", "SELECT run_key FROM runs")[0]
        // Either order: the intact copy stays done.
        for (out, inputs) in [("m1.sqlite", ["d.sqlite", "a.sqlite"]), ("m2.sqlite", ["a.sqlite", "d.sqlite"])] {
            let m = try cli.enclab(["merge", out] + inputs, in: dir)
            #expect(m.status == 0, "\(kind): \(m.stderr)")
            let damagedID = inputs[0] == "d.sqlite" ? 1 : 2
            #expect(m.stderr == "warning: d.sqlite: run 1 is done there, but \(reason): stored as failed (run \(damagedID) of \(out)), without its rows\n", "\(kind)")
            #expect(!m.stderr.contains(".merge-"))
            #expect(try cli.sqlite("\(dir)/\(out)", "SELECT run_id, run_key, status, error FROM runs ORDER BY run_id")
                    == (1...2).map { id in
                        id == damagedID ? "\(id)|\(key)|failed|damaged: run 1 of d.sqlite is done there, but \(reason); stored here as failed, without its rows"
                                        : "\(id)|\(key)|done|" }, "\(kind)")
            // The damaged run's rows are not copied; the intact run's are all there.
            #expect(try cli.sqlite("\(dir)/\(out)", "SELECT count(*) FROM frames WHERE run_id = \(damagedID)") == ["0"])
            #expect(try cli.sqlite("\(dir)/\(out)", "SELECT count(*) FROM frames") == cli.sqlite("\(dir)/a.sqlite", "SELECT count(*) FROM frames"))
        }
    }

    @Test("merge works runs.repeatable out again from the run's settings: a stored 0 on a run of one thread without VBV does not make other rows a repeat")
    func repeatableNotTrusted() throws {
        let dir = try intact()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The witness: x264's own options string, as stored, says one thread and no VBV (x264 writes vbv_bufsize only with VBV).
        let options = try cli.sqlite("\(dir)/a.sqlite", "SELECT json_extract(settings, '$.x264_options') FROM runs")[0]
        #expect(options.contains(" threads=1 ") && !options.contains("vbv_bufsize"), "\(options)")
        try FileManager.default.copyItem(atPath: "\(dir)/a.sqlite", toPath: "\(dir)/d.sqlite")
        _ = try cli.sqlite("\(dir)/d.sqlite", "UPDATE runs SET repeatable = 0; UPDATE frames SET size_bytes = size_bytes + 1 WHERE coded_index = 0; UPDATE runs SET bytes = bytes + 1")
        for (out, inputs) in [("m1.sqlite", ["d.sqlite", "a.sqlite"]), ("m2.sqlite", ["a.sqlite", "d.sqlite"])] {
            let m = try cli.enclab(["merge", out] + inputs, in: dir)
            #expect(m.status == 0, "\(m.stderr)")
            #expect(m.stderr.contains("conflict") && !m.stderr.contains("repeat"), "\(m.stderr)")
            #expect(try cli.sqlite("\(dir)/\(out)", "SELECT run_id, status, repeatable FROM runs ORDER BY run_id") == ["1|done|1", "2|failed|1"])
        }
    }

    @Test("merge's errors name the input, not its temporary files: a runs row the schema refuses (65), in an input of this version and in one migrated in a copy")
    func errorsNameTheInput() throws {
        let dir = try intact()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A run key that is not 64 hex digits, written past the CHECK.
        try FileManager.default.copyItem(atPath: "\(dir)/a.sqlite", toPath: "\(dir)/bad.sqlite")
        _ = try cli.sqlite("\(dir)/bad.sqlite", "PRAGMA ignore_check_constraints = 1; UPDATE runs SET run_key = 'xyz'")
        let r = try cli.enclab(["merge", "m.sqlite", "a.sqlite", "bad.sqlite"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("enclab: bad.sqlite: run 1: its runs row is refused by the schema (damaged): CHECK constraint failed: "), "\(r.stderr)")
        // The same as schema version 5 (run_metrics and run_gops dropped): migrated in a temporary copy, where the
        // copy of runs refuses it.
        try FileManager.default.copyItem(atPath: "\(dir)/bad.sqlite", toPath: "\(dir)/old.sqlite")
        _ = try cli.sqlite("\(dir)/old.sqlite", "DROP TABLE run_gops; DROP TABLE run_metrics; PRAGMA user_version = 5")
        let o = try cli.enclab(["merge", "n.sqlite", "old.sqlite"], in: dir)
        #expect(o.status == 65)
        #expect(o.stderr.hasPrefix("enclab: old.sqlite: cannot be migrated to schema version \(LabStore.schemaVersion) (damaged): CHECK constraint failed: "), "\(o.stderr)")
        for e in [r.stderr, o.stderr] { #expect(!e.contains(".merge-"), "\(e)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".merge-") }.isEmpty)
    }

    @Test("a sweep resumed over runs that are not repeatable says so in its summary")
    func resumedSweep() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #"{"name": "rp", "clips": ["c.y4m"], "base": {"threads": 2, "vbv-maxrate": 150, "vbv-bufsize": 150}, "grid": {"bitrate": [150]}}"#
            .write(toFile: "\(dir)/rp.json", atomically: true, encoding: .utf8)
        let first = try cli.enclab(["run", "rp.json", "--db", "l.sqlite", "--out", "o"], in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        let again = try cli.enclab(["run", "rp.json", "--db", "l.sqlite", "--out", "o"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("1 runs done (1 already done before, 1 of them not repeatable (x264 with several threads under VBV, or --non-deterministic): their stored bytes are one sample each, from an earlier process; one thread (--threads 1) gives a repeatable encode): database l.sqlite"), "\(again.stdout)")
    }

    @Test("merge removes the temporary files a killed merge left (its own names, dead PIDs, regular files only), and nothing else")
    func staleTemporaryFiles() throws {
        let dir = try intact()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A PID that is no process any more: a child that has exited and been waited for.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = child.processIdentifier, alive = getpid()
        let stale = [".m.sqlite.merge-\(dead)-0A1B2C3D", ".m.sqlite.merge-\(dead)-0A1B2C3D-wal", ".m.sqlite.merge-\(dead)-0A1B2C3D-shm",
                     ".m.sqlite.merge-\(dead)-0A1B2C3D-in0", ".m.sqlite.merge-\(dead)-0A1B2C3D-in1-wal", ".other.sqlite.merge-\(dead)-FFFFFFFF"]
        let kept = [".m.sqlite.merge-notes", "m.sqlite.merge-\(dead)-0A1B2C3D", ".m.sqlite.merge-\(alive)-0A1B2C3D",
                    ".m.sqlite.merge-\(dead)-0a1b2c3d", ".m.sqlite.merge-\(dead)-0A1B2C3D.bak", "target"]
        for name in stale + kept { try Data("x".utf8).write(to: URL(fileURLWithPath: "\(dir)/\(name)")) }
        // A symbolic link with a stale name: not a regular file, so neither it nor its target is touched.
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/.l.sqlite.merge-\(dead)-0A1B2C3D", withDestinationPath: "target")
        let m = try cli.enclab(["merge", "n.sqlite", "a.sqlite"], in: dir)
        #expect(m.status == 0, "\(m.stderr)")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: dir))
        for name in stale { #expect(!left.contains(name), "\(name)") }
        for name in kept + [".l.sqlite.merge-\(dead)-0A1B2C3D"] { #expect(left.contains(name), "\(name)") }
        #expect(m.stderr.contains("note: removed ./.m.sqlite.merge-\(dead)-0A1B2C3D, left by a merge that was killed\n"), "\(m.stderr)")
    }
}
