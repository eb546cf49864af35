import Foundation
import Testing
import EncoderLab

/// Plots redrawn from a database alone: the built `enclab` runs a small experiment, its database is copied to
/// another folder, and `PlotFromStore.redraw` draws from the copy the data files the runs wrote, byte for byte.
@Suite("plots redrawn from a copied database, end to end", .serialized)
struct PlotFromStoreEndToEndTests {
    /// A clip name that is gnuplot syntax, shell syntax and a macro if pasted into a script.
    static let hostileClip = #"it's "b" $(touch PWNED) `touch PWNED` @ARG1.y4m"#

    /// 2 clips x 2 grid points (CRF 30 and ABR 200 kbit/s, so one plot has a target line and one the mean rate),
    /// run by the built enclab into `dir/out` with `dir/lab.sqlite`.
    static func experiment(in dir: String) throws {
        try SyntheticClip(width: 64, height: 48, frames: 30, seed: 3).write(to: "\(dir)/a.y4m")
        try SyntheticClip(width: 64, height: 48, frames: 30, seed: 4).write(to: "\(dir)/\(hostileClip)")
        let json: [String: Any] = [
            "name": "tiny", "clips": ["a.y4m", hostileClip], "base": ["threads": 1, "preset": "ultrafast"],
            "grid": ["mode": [["rc": "crf", "crf": 30], ["rc": "abr", "bitrate": 200]]],
        ]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/tiny.json"))
        let r = try CommandLineTests.process(CommandLineTests.binary, ["run", "tiny.json", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// The sqlite3 CLI's output lines.
    static func sqlite(_ db: String, _ sql: String) throws -> [String] {
        let r = try CommandLineTests.process("/usr/bin/sqlite3", [db, sql], in: "/")
        guard r.status == 0 else { throw LabError(.software, "sqlite3 \(db): \(r.stderr)") }
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// Each done run's id and the folder the run wrote its plots into (its stream's folder, as the store holds it).
    static func runFolders(_ db: String, relativeTo dir: String) throws -> [(id: String, folder: String, name: String)] {
        try sqlite(db, "SELECT run_id, stream_path FROM runs WHERE status = 'done' ORDER BY run_id").map { line in
            let parts = line.split(separator: "|", maxSplits: 1).map(String.init)
            let stream = parts[1].hasPrefix("/") ? parts[1] : "\(dir)/\(parts[1])"
            let folder = Paths.parent(stream)
            return (parts[0], folder, Paths.fileName(folder))
        }
    }

    @Test("redraw from a copied database: each run's frames.dat and the rd.dat are the run's own, byte for byte")
    func redrawCopy() throws {
        let dir = NSTemporaryDirectory() + "enclab-plot-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.experiment(in: dir)
        let runs = try Self.runFolders("\(dir)/lab.sqlite", relativeTo: dir)
        #expect(runs.count == 4)
        // The database alone, in another folder (the lab closed it: no -wal is left beside it).
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite-wal"))
        try FileManager.default.createDirectory(atPath: "\(dir)/copy", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(dir)/lab.sqlite", toPath: "\(dir)/copy/lab.sqlite")

        // No --out: the copy's path without its extension. Folders are the keys' first 16 hex digits, as the run's.
        let lines = try PlotFromStore.redraw(databasePath: "\(dir)/copy/lab.sqlite", outDirectory: nil, runs: [])
        let out = "\(dir)/copy/lab"
        #expect(runs.allSatisfy { $0.name.count == 16 && $0.name.allSatisfy(\.isHexDigit) })
        #expect(lines == runs.map { "run \($0.id): frames and psnr plots in \(out)/\($0.name)" } + ["experiment tiny: rd plot in \(out)"])
        for run in runs {
            for name in ["frames.dat", "frames.gp", "psnr.gp"] {
                #expect(try Self.bytes("\(out)/\(run.name)/\(name)") == Self.bytes("\(run.folder)/\(name)"), "run \(run.id) \(name)")
            }
            for name in ["frames", "psnr"] {
                #expect(PlotTestsSupport.isPNG("\(out)/\(run.name)/\(name).png"))
                #expect(FileManager.default.fileExists(atPath: "\(out)/\(run.name)/\(name).svg"))
            }
        }
        // The command line with a relative --db and no --out: beside the database (copy2/lab/), as 'enclab help plot'
        // says, nothing in the working folder.
        try FileManager.default.createDirectory(atPath: "\(dir)/copy2", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(dir)/lab.sqlite", toPath: "\(dir)/copy2/lab.sqlite")
        let cli = try CommandLineTests.process(CommandLineTests.binary, ["plot", "--db", "copy2/lab.sqlite", "--run", runs[0].id], in: dir)
        #expect(cli.status == 0 && cli.stdout.hasPrefix("run \(runs[0].id): frames and psnr plots in copy2/lab/\(runs[0].name)\n"), "\(cli.stdout) \(cli.stderr)")
        #expect(PlotTestsSupport.isPNG("\(dir)/copy2/lab/\(runs[0].name)/frames.png"))
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/lab"))
        let help = try CommandLineTests.process(CommandLineTests.binary, ["help", "plot"], in: dir)
        #expect(help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                    .contains("(default: beside the database, its path without the extension: results/q.sqlite -> results/q, q.sqlite -> ./q;"), "\(help.stdout)")
        // The experiment's rd plot: the same data and script as the run wrote at the end of `enclab run`.
        for name in ["rd.dat", "rd.gp"] { #expect(try Self.bytes("\(out)/\(name)") == Self.bytes("\(dir)/out/\(name)"), "\(name)") }
        #expect(PlotTestsSupport.isPNG("\(out)/rd.png"))
        // Two curves per clip (abr, crf), one point each, by clip (then in the order of their first run).
        #expect(try String(contentsOfFile: "\(out)/rd.dat", encoding: .utf8).split(separator: "\n")
                    .filter { $0.hasPrefix("# ") && !$0.hasPrefix("# bitrate_kbps") }.map { $0.split(separator: " ").dropLast().joined(separator: " ") }
                == ["# a.y4m", "# a.y4m", "# \(Self.hostileClip)", "# \(Self.hostileClip)"])
        #expect(Set(try String(contentsOfFile: "\(out)/rd.dat", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("# ") && !$0.hasPrefix("# bitrate_kbps") })
                == ["# a.y4m abr", "# a.y4m crf", "# \(Self.hostileClip) abr", "# \(Self.hostileClip) crf"])
        // The hostile clip name is a title, drawn as given, and ran nothing.
        let hostileRun = try Self.sqlite("\(dir)/lab.sqlite", "SELECT min(run_id) FROM runs WHERE clip LIKE 'it%'")[0]
        let hostileName = try #require(runs.first { $0.id == hostileRun }).name
        let svg = try String(contentsOfFile: "\(out)/\(hostileName)/frames.svg", encoding: .utf8)
        #expect(svg.contains("\(Self.hostileClip) crf=30 rc=crf"))
        #expect((FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).allSatisfy { !$0.hasSuffix("PWNED") })

        // One run by id: its folder and its experiment's rd plot, nothing else.
        let one = "\(dir)/copy/one"
        #expect(try PlotFromStore.redraw(databasePath: "\(dir)/copy/lab.sqlite", outDirectory: one, runs: [runs[1].id])
                == ["run \(runs[1].id): frames and psnr plots in \(one)/\(runs[1].name)", "experiment tiny: rd plot in \(one)"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: one).sorted() == ["rd.dat", "rd.gp", "rd.png", "rd.svg", runs[1].name].sorted())
        #expect(try Self.bytes("\(one)/\(runs[1].name)/frames.dat") == Self.bytes("\(runs[1].folder)/frames.dat"))
    }

    @Test("plot of a check run: its psnr chart says a check run has no source to measure against, not 'lossless, or none was decoded'")
    func checkRunPSNR() throws {
        let dir = NSTemporaryDirectory() + "enclab-plot-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 10, seed: 3).write(to: "\(dir)/a.y4m")
        let e = try CommandLineTests.process(CommandLineTests.binary, ["encode", "a.y4m", "--threads", "1", "--preset", "ultrafast", "--no-plots",
                                                                       "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let stream = try #require(try Self.sqlite("\(dir)/lab.sqlite", "SELECT stream_path FROM runs").first)
        try FileManager.default.copyItem(atPath: stream.hasPrefix("/") ? stream : "\(dir)/\(stream)", toPath: "\(dir)/dev.264")
        let c = try CommandLineTests.process(CommandLineTests.binary, ["check", "--expect", "MaxKeyFrameInterval=250", "--db", "lab.sqlite", "dev.264"], in: dir)
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
        #expect(try Self.sqlite("\(dir)/lab.sqlite", "SELECT run_id, experiment FROM runs ORDER BY run_id") == ["1|encode", "2|check"])
        for id in ["1", "2"] {
            let p = try CommandLineTests.process(CommandLineTests.binary, ["plot", "--db", "lab.sqlite", "--run", id, "--out", "plots-\(id)"], in: dir)
            #expect(p.status == 0, "\(p.stderr)")
        }
        func script(_ id: String) throws -> String {
            let found = try #require(FileManager.default.enumerator(atPath: "\(dir)/plots-\(id)")?.compactMap { $0 as? String }.first { $0.hasSuffix("psnr.gp") })
            return try String(contentsOfFile: "\(dir)/plots-\(id)/\(found)", encoding: .utf8)
        }
        let check = try script("2")
        #expect(check.contains("no PSNR: a check run (enclab check --db) has no source clip to measure against"), "\(check)")
        #expect(!check.contains("lossless"))
        // The encode has PSNR: its chart plots it, no label.
        #expect(!(try script("1")).contains("no PSNR"))
    }

    @Test("redraw by run key prefix: the run's folder is its key's first 16 hex digits (keys set with sqlite3)")
    func redrawByKey() throws {
        let dir = NSTemporaryDirectory() + "enclab-plot-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.experiment(in: dir)
        let runs = try Self.runFolders("\(dir)/lab.sqlite", relativeTo: dir)
        let db = "\(dir)/keyed.sqlite"
        try FileManager.default.copyItem(atPath: "\(dir)/lab.sqlite", toPath: db)
        // Keys with chosen prefixes replace the ones the runs were given (runs 3 and 4 share the prefix c0ffee03).
        if try Self.sqlite(db, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'run_key'") == ["0"] {
            _ = try Self.sqlite(db, "ALTER TABLE runs ADD COLUMN run_key TEXT")
        }
        func key(_ i: Int) -> String { "c0ffee0\(min(i, 3))" + String(repeating: String(i), count: 56) }
        for (i, run) in runs.enumerated() {
            _ = try Self.sqlite(db, "UPDATE runs SET run_key = '\(key(i + 1))' WHERE run_id = \(run.id)")
        }
        let out = "\(dir)/plots"
        #expect(throws: LabError(.usage, "--run 'c0ffee03': ambiguous, the keys of runs \(runs[2].id), \(runs[3].id) start with it; give more digits")) {
            try PlotFromStore.redraw(databasePath: db, outDirectory: out, runs: ["c0ffee03"])
        }
        #expect(try PlotFromStore.redraw(databasePath: db, outDirectory: out, runs: ["c0ffee034"])
                == ["run \(runs[3].id): frames and psnr plots in \(out)/c0ffee0344444444", "experiment tiny: rd plot in \(out)"])
        #expect(try Self.bytes("\(out)/c0ffee0344444444/frames.dat") == Self.bytes("\(runs[3].folder)/frames.dat"))
        // All runs: each in its key's folder, each frames.dat the run's own.
        let all = try PlotFromStore.redraw(databasePath: db, outDirectory: out, runs: [])
        #expect(all.count == 5)
        for (i, run) in runs.enumerated() {
            #expect(try Self.bytes("\(out)/\(key(i + 1).prefix(16))/frames.dat") == Self.bytes("\(run.folder)/frames.dat"))
        }
    }
}

/// Helpers shared with the unit tests' PlotTests, which this target cannot see.
enum PlotTestsSupport {
    /// A drawn PNG starts with the PNG signature (89 50 4E 47 0D 0A 1A 0A).
    static func isPNG(_ path: String) -> Bool {
        (try? Data(contentsOf: URL(fileURLWithPath: path)).prefix(8)) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }
}
