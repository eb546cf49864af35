import Foundation
import Testing
import EncoderLab

/// Sweeps at scale, through the built `enclab`: `--jobs`, `--shard`, `merge`, and a sweep killed with SIGKILL and
/// run again. Every comparison reads the databases with the sqlite3 CLI.
@Suite("enclab run --jobs/--shard, enclab merge, a killed sweep resumed, end to end", .serialized)
struct SweepTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// 6 runs (crf 20/30/40 x bframes 0/2) of a 64x48 clip of 8 frames, threads 1 (repeatable bytes).
    static let experiment = #"""
        {"name": "sw", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"},
         "grid": {"crf": [20, 30, 40], "bframes": [0, 2]}}
        """#

    /// A folder with the clip, the experiment, and its sweep run once with --jobs 1 into ref.sqlite.
    struct Fixture {
        var dir: String
        static func make() throws -> Fixture {
            let dir = CommandLineTests().scratch()
            try SyntheticClip(width: 64, height: 48, frames: 8, seed: 12).write(to: "\(dir)/c.y4m")
            try SweepTests.experiment.write(toFile: "\(dir)/sw.json", atomically: true, encoding: .utf8)
            let r = try CLI.process(CLI.binary, ["run", "sw.json", "--jobs", "1", "--db", "ref.sqlite", "--out", "ref"], in: dir)
            guard r.status == 0 else { throw LabError(.software, "reference sweep: \(r.stderr)") }
            return Fixture(dir: dir)
        }
    }
    static let fixture = Result { try Fixture.make() }

    /// A new folder holding the fixture's clip and experiment (not its databases).
    func copyOfInputs() throws -> String {
        let f = try Self.fixture.get()
        let dir = cli.scratch()
        for name in ["c.y4m", "sw.json"] { try FileManager.default.copyItem(atPath: "\(f.dir)/\(name)", toPath: "\(dir)/\(name)") }
        return dir
    }

    /// The tables of a run's rows as sqlite3 lists them: every table with a run_id column but runs.
    func childTables(_ db: String) throws -> [String] {
        try cli.sqlite(db, """
            SELECT name FROM sqlite_master m WHERE type = 'table' AND name != 'runs'
              AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'run_id') ORDER BY name
            """)
    }

    /// Every done run's rows by run key, as sqlite3 reads them: `runs` (key, status, frames, bytes, settings) and each
    /// child table's rows with run_id replaced by the run's key, sorted: equal for two databases exactly when they
    /// hold the same runs with the same per-frame numbers, whatever their run ids.
    func rowsByKey(_ db: String) throws -> [String] {
        var lines = try cli.sqlite(db, "SELECT 'runs', run_key, status, frames, bytes, settings FROM runs WHERE status = 'done'")
        for table in try childTables(db) {
            let columns = try cli.sqlite(db, "SELECT 't.\"' || name || '\"' FROM pragma_table_info('\(table)') WHERE name != 'run_id' ORDER BY cid")
            lines += try cli.sqlite(db, """
                SELECT '\(table)', r.run_key, \(columns.joined(separator: ", ")) FROM "\(table)" t JOIN runs r USING (run_id) WHERE r.status = 'done'
                """)
        }
        return lines.sorted()
    }

    func doneKeys(_ db: String) throws -> [String] {
        try cli.sqlite(db, "SELECT run_key FROM runs WHERE status = 'done' ORDER BY run_key")
    }

    @Test("--jobs 2 with threads 1 records the same rows as --jobs 1, each run once")
    func jobsSameRows() throws {
        let f = try Self.fixture.get()
        let dir = try copyOfInputs()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["run", "sw.json", "--jobs", "2", "--db", "j.sqlite", "--out", "j"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("6 runs done: database j.sqlite, plots in j\n"), "\(r.stdout)")
        // One progress line per run on stderr (not a terminal): "run  K/6 runs  ...  LABEL".
        let progress = r.stderr.split(separator: "\n").filter { $0.hasPrefix("run  ") }
        #expect(progress.count == 6 && progress.last?.hasPrefix("run  6/6 runs  ") == true, "\(r.stderr)")
        let reference = try rowsByKey("\(f.dir)/ref.sqlite")
        #expect(reference.count > 6 * 8)
        #expect(try rowsByKey("\(dir)/j.sqlite") == reference)
        #expect(try cli.sqlite("\(dir)/j.sqlite", "SELECT count(*), count(DISTINCT run_key) FROM runs") == ["6|6"])
        // The sweep ended with a checkpoint: the write-ahead log is empty or gone.
        let wal = (try? FileManager.default.attributesOfItem(atPath: "\(dir)/j.sqlite-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
        // Run again: every run already done, nothing encoded.
        let again = try cli.enclab(["run", "sw.json", "--jobs", "2", "--db", "j.sqlite", "--out", "j"], in: dir)
        #expect(again.status == 0 && again.stdout.hasSuffix("6 runs done (6 already done before): database j.sqlite, plots in j\n"), "\(again.stdout)")
        #expect(try cli.sqlite("\(dir)/j.sqlite", "SELECT count(*) FROM runs") == ["6"])
    }

    @Test("--shard K/3 takes every third run: the shards partition the runs; merge keeps each once and remaps run ids")
    func shardsAndMerge() throws {
        let f = try Self.fixture.get()
        let dir = try copyOfInputs()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var shardKeys: [[String]] = []
        for k in 1...3 {
            let r = try cli.enclab(["run", "sw.json", "--shard", "\(k)/3", "--jobs", "2", "--db", "s\(k).sqlite", "--out", "s\(k)"], in: dir)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.hasSuffix("2 runs done (shard \(k)/3 of 6 runs): database s\(k).sqlite, plots in s\(k)\n"), "\(r.stdout)")
            shardKeys.append(try doneKeys("\(dir)/s\(k).sqlite"))
            // Each shard numbers its runs from 1: the ids collide across shards.
            #expect(try cli.sqlite("\(dir)/s\(k).sqlite", "SELECT run_id FROM runs ORDER BY run_id") == ["1", "2"])
        }
        // Exactly a partition: no key in two shards, together every key of the unsharded sweep.
        let all = try doneKeys("\(f.dir)/ref.sqlite")
        #expect(all.count == 6)
        #expect(Set(shardKeys.flatMap { $0 }).count == 6 && shardKeys.flatMap { $0 }.sorted() == all)
        // The grid expands with its keys sorted, the last varying fastest: (bframes 0: crf 20, 30, 40), (bframes 2: ...).
        // Shard 1 takes indices 0 and 3, shard 2 indices 1 and 4.
        #expect(try cli.sqlite("\(dir)/s1.sqlite", "SELECT json_extract(settings, '$.label') FROM runs ORDER BY 1")
                == ["bframes=0 crf=20", "bframes=2 crf=20"])
        #expect(try cli.sqlite("\(dir)/s2.sqlite", "SELECT json_extract(settings, '$.label') FROM runs ORDER BY 1")
                == ["bframes=0 crf=30", "bframes=2 crf=30"])
        // Shard 1 given twice: its runs are there already the second time.
        let m = try cli.enclab(["merge", "m.sqlite", "s1.sqlite", "s2.sqlite", "s3.sqlite", "s1.sqlite"], in: dir)
        #expect(m.status == 0 && m.stderr.isEmpty, "\(m.stderr)")
        #expect(m.stdout == """
            s1.sqlite: 2 runs, 2 copied
            s2.sqlite: 2 runs, 2 copied
            s3.sqlite: 2 runs, 2 copied
            s1.sqlite: 2 runs, 0 copied
            m.sqlite: 6 runs from 4 databases (2 already there left out, 0 conflicts)

            """)
        #expect(try cli.sqlite("\(dir)/m.sqlite", "SELECT count(*), count(DISTINCT run_key), min(run_id), max(run_id) FROM runs") == ["6|6|1|6"])
        #expect(try rowsByKey("\(dir)/m.sqlite") == rowsByKey("\(f.dir)/ref.sqlite"))
        // Every child row points at a run of the merged database, and each table has as many rows as the shards'.
        #expect(try cli.sqlite("\(dir)/m.sqlite", "PRAGMA foreign_key_check").isEmpty)
        #expect(try cli.sqlite("\(dir)/m.sqlite", "PRAGMA integrity_check") == ["ok"])
        for table in try childTables("\(dir)/m.sqlite") {
            let merged = Int(try cli.sqlite("\(dir)/m.sqlite", "SELECT count(*) FROM \(table)")[0])!
            let shards = try (1...3).map { Int(try cli.sqlite("\(dir)/s\($0).sqlite", "SELECT count(*) FROM \(table)")[0])! }.reduce(0, +)
            #expect(merged == shards, "\(table)")
        }
        // Nothing left beside the output (the temporary database was renamed into place).
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") }.isEmpty)
        // A second merge onto the same output is refused, the output untouched.
        let again = try cli.enclab(["merge", "m.sqlite", "s1.sqlite"], in: dir)
        #expect(again.status == 64 && again.stderr == "enclab: m.sqlite: exists; merge writes a new database (name another or remove it) (see 'enclab merge --help')\n")
    }

    @Test("merge: the same key with other per-frame rows is a conflict, reported; both runs kept, the second as failed")
    func mergeConflict() throws {
        let f = try Self.fixture.get()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: "\(f.dir)/ref.sqlite", toPath: "\(dir)/a.sqlite")
        try FileManager.default.copyItem(atPath: "\(f.dir)/ref.sqlite", toPath: "\(dir)/b.sqlite")
        // b's run 2 as another thread schedule under VBV would leave it: one frame 1 byte larger.
        _ = try cli.sqlite("\(dir)/b.sqlite", "UPDATE frames SET size_bytes = size_bytes + 1 WHERE run_id = 2 AND coded_index = 0; UPDATE runs SET bytes = bytes + 1 WHERE run_id = 2")
        let key = try cli.sqlite("\(dir)/b.sqlite", "SELECT run_key FROM runs WHERE run_id = 2")[0]
        let r = try cli.enclab(["merge", "m.sqlite", "a.sqlite", "b.sqlite"], in: dir)
        #expect(r.status == 0)
        #expect(r.stderr == "warning: run key \(key): run 2 of b.sqlite has other per-frame rows than run 2 of a.sqlite; the latter stays done, the former is run 7 of m.sqlite, status failed (merge conflict)\n")
        #expect(r.stdout.hasSuffix("m.sqlite: 7 runs from 2 databases (5 already there left out, 1 conflict)\n"), "\(r.stdout)")
        #expect(try cli.sqlite("\(dir)/m.sqlite", "SELECT run_id, status, substr(error, 1, 15) FROM runs WHERE run_key = '\(key)' ORDER BY run_id")
                == ["2|done|", "7|failed|merge conflict:"])
        // Neither run's frames are lost: a's as they were, b's with its larger frame.
        let sizes = "SELECT group_concat(size_bytes) FROM (SELECT size_bytes FROM frames WHERE run_id = ? ORDER BY coded_index)"
        #expect(try cli.sqlite("\(dir)/m.sqlite", sizes.replacingOccurrences(of: "?", with: "2"))
                == cli.sqlite("\(dir)/a.sqlite", sizes.replacingOccurrences(of: "?", with: "2")))
        #expect(try cli.sqlite("\(dir)/m.sqlite", sizes.replacingOccurrences(of: "?", with: "7"))
                == cli.sqlite("\(dir)/b.sqlite", sizes.replacingOccurrences(of: "?", with: "2")))
        #expect(try cli.sqlite("\(dir)/m.sqlite", "SELECT count(*) FROM decoded_frames WHERE run_id = 7")
                == cli.sqlite("\(dir)/b.sqlite", "SELECT count(*) FROM decoded_frames WHERE run_id = 2"))
    }

    @Test("merge refuses what it cannot merge: a missing input (66), a newer schema (65); an older one is migrated in a copy")
    func mergeRefusals() throws {
        let f = try Self.fixture.get()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = try cli.enclab(["merge", "m.sqlite", "nope.sqlite"], in: dir)
        #expect(missing.status == 66 && missing.stderr == "enclab: nope.sqlite: no such file\n")
        let usage = try cli.enclab(["merge", "m.sqlite"], in: dir)
        #expect(usage.status == 64 && usage.stderr == "enclab: merge needs at least one IN.sqlite after m.sqlite (see 'enclab merge --help')\n")
        try FileManager.default.copyItem(atPath: "\(f.dir)/ref.sqlite", toPath: "\(dir)/new.sqlite")
        _ = try cli.sqlite("\(dir)/new.sqlite", "PRAGMA user_version = 99")
        let newer = try cli.enclab(["merge", "m.sqlite", "new.sqlite"], in: dir)
        #expect(newer.status == 65 && newer.stderr.hasPrefix("enclab: new.sqlite: written by a newer enclab (schema version 99;"), "\(newer.stderr)")
        // Schema 4 (before the keyframe tables): migrated in a temporary copy, the input left as it was.
        try FileManager.default.copyItem(atPath: "\(f.dir)/ref.sqlite", toPath: "\(dir)/old.sqlite")
        _ = try cli.sqlite("\(dir)/old.sqlite", "DROP TABLE keyframe_violations; DROP TABLE keyframe_analysis; DROP TABLE data_rate_windows; PRAGMA user_version = 4")
        let old = try cli.enclab(["merge", "m.sqlite", "old.sqlite"], in: dir)
        #expect(old.status == 0, "\(old.stderr)")
        #expect(try cli.sqlite("\(dir)/old.sqlite", "PRAGMA user_version") == ["4"])
        #expect(try cli.sqlite("\(dir)/m.sqlite", "PRAGMA user_version") == [String(LabStore.schemaVersion)])
        #expect(try rowsByKey("\(dir)/m.sqlite") == rowsByKey("\(f.dir)/ref.sqlite"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test("a sweep killed with SIGKILL mid-way keeps its finished runs whole; run again, it ends with every run done once, as an uninterrupted sweep")
    func killedAndResumed() throws {
        // Runs long enough (240 frames, preset medium: about 0.25 s each here) that the sweep cannot finish between
        // two polls: the fixture's 8-frame runs are recorded within milliseconds of each other.
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 240, seed: 12).write(to: "\(dir)/c.y4m")
        try SweepTests.experiment.replacingOccurrences(of: "ultrafast", with: "medium")
            .write(toFile: "\(dir)/sw.json", atomically: true, encoding: .utf8)
        let reference = try cli.enclab(["run", "sw.json", "--jobs", "2", "--db", "ref.sqlite", "--out", "ref"], in: dir)
        #expect(reference.status == 0, "\(reference.stderr)")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = ["run", "sw.json", "--jobs", "2", "--db", "k.sqlite", "--out", "k"]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Killed once the first run is recorded while others are under way (polled: no clock decides).
        while p.isRunning {
            let done = (try? cli.sqlite("\(dir)/k.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'").first.flatMap { Int($0) }) ?? 0
            if done >= 1 { break }
            usleep(20_000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGKILL)
        let done = Int(try cli.sqlite("\(dir)/k.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'")[0])!
        #expect(done >= 1 && done < 6, "killed mid-way: \(done) of 6 done")
        #expect(try cli.sqlite("\(dir)/k.sqlite", "PRAGMA integrity_check") == ["ok"])
        // No partial run: every stored run has all its frames (the run row and its frames are one transaction).
        #expect(try cli.sqlite("\(dir)/k.sqlite", "SELECT count(*) FROM runs r WHERE frames != (SELECT count(*) FROM frames f WHERE f.run_id = r.run_id)") == ["0"])
        #expect(try cli.sqlite("\(dir)/k.sqlite", "SELECT count(*) FROM runs WHERE status != 'done'") == ["0"])
        let again = try cli.enclab(["run", "sw.json", "--jobs", "2", "--db", "k.sqlite", "--out", "k"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasSuffix("6 runs done (\(done) already done before): database k.sqlite, plots in k\n"), "\(again.stdout)")
        #expect(try cli.sqlite("\(dir)/k.sqlite", "SELECT count(*), count(DISTINCT run_key), sum(status = 'done') FROM runs") == ["6|6|6"])
        #expect(try rowsByKey("\(dir)/k.sqlite") == rowsByKey("\(dir)/ref.sqlite"))
        // The killed process's temporary folders were settled: each run's folder, nothing else.
        let entries = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/k").sorted()
        #expect(entries.filter { $0.hasPrefix(".") }.isEmpty, "\(entries)")
        #expect(entries.filter { $0.count == 16 } == (try doneKeys("\(dir)/k.sqlite")).map { String($0.prefix(16)) }.sorted())
    }

    @Test("--jobs and --shard refuse bad values (64) before anything is written")
    func badValues() throws {
        let dir = try copyOfInputs()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (flag, value, message) in [
            ("--jobs", "0", "--jobs needs a whole number from 1 to 1024, got '0'"),
            ("--jobs", "two", "--jobs needs a whole number from 1 to 1024, got 'two'"),
            ("--jobs", "+2", "--jobs needs a whole number from 1 to 1024, got '+2'"),
            ("--shard", "0/2", "--shard needs K/N with 1 <= K <= N, got 0/2"),
            ("--shard", "3/2", "--shard needs K/N with 1 <= K <= N, got 3/2"),
            ("--shard", "1", "--shard needs K/N (whole numbers, 1 <= K <= N, e.g. 2/8), got '1'"),
        ] {
            let r = try cli.enclab(["run", "sw.json", flag, value, "--db", "x.sqlite"], in: dir)
            #expect(r.status == 64 && r.stderr == "enclab: \(message) (see 'enclab run --help')\n", "\(flag) \(value): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["c.y4m", "sw.json"])
    }
}
