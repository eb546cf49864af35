import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// The built `enclab` given names and values that were gnuplot code when pasted into its plot scripts: each run
/// must work (exit 0, `done`, plots drawn) and run nothing.
@Suite("enclab with hostile names and values, end to end", .serialized)
struct HostileInputTests {
    typealias Result = CommandLineTests.Result

    func enclab(_ arguments: [String], in dir: String) throws -> Result { try TestSupport.enclab(arguments, in: dir) }

    func scratch() -> String { CommandLineTests().scratch() }

    func sqlite(_ db: String, _ sql: String) throws -> [String] { try CommandLineTests().sqlite(db, sql) }

    /// Every path under `dir` (recursively) whose last component is `name`.
    func files(named name: String, under dir: String) -> [String] {
        (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).filter { ($0 as NSString).lastPathComponent == name }
    }

    /// The run's plots, each non-empty.
    func expectPlots(in runDir: String) {
        for file in ["frames.png", "frames.svg", "psnr.png", "psnr.svg"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: "\(runDir)/\(file)")[.size] as? Int) ?? 0
            #expect(size > 0, "\(runDir)/\(file)")
        }
    }

    @Test("hostile x264 setting value, output folder or clip name: exit 0, run done, plots drawn, nothing run", arguments: [
        // A setting value with a newline started a gnuplot line in the title.
        (["encode", "c.y4m", "--opencl-clbin", "x\nsystem \"touch PWNED\"\n#"], "c.y4m", "results/encode",
         #"c.y4m --opencl-clbin x\nsystem "touch PWNED"\n# --threads 1"#),
        // An output folder closed the quoted path of set output.
        (["encode", "c.y4m", "--out", "o';system('touch PWNED');'"], "c.y4m", "o';system('touch PWNED');'",
         "c.y4m --threads 1"),
        // A clip file name with a newline and a system line, in the title.
        (["encode", "n\nsystem \"touch PWNED\"\n#.y4m"], "n\nsystem \"touch PWNED\"\n#.y4m", "results/encode",
         #"n\nsystem "touch PWNED"\n#.y4m --threads 1"#),
        // An apostrophe in the output folder ended the path at "John" (a stray file, and gnuplot failed).
        (["encode", "c.y4m", "--out", "John's clips"], "c.y4m", "John's clips", "c.y4m --threads 1"),
    ])
    func hostile(arguments: [String], clip: String, out: String, title: String) throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 5).write(to: "\(dir)/\(clip)")
        let r = try enclab(arguments + ["--threads", "1", "--plots", "render", "--db", "lab.sqlite"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(files(named: "PWNED", under: dir).isEmpty)
        #expect(files(named: "John", under: dir).isEmpty)
        // The folder holds only what enclab was given or asked to write: the clip, the database (and its WAL
        // files), the output folder.
        let top = Set(try FileManager.default.contentsOfDirectory(atPath: dir)).subtracting(["lab.sqlite-wal", "lab.sqlite-shm"])
        #expect(top == [clip, "lab.sqlite", String(out.split(separator: "/")[0])])
        #expect(try sqlite("\(dir)/lab.sqlite", "SELECT status, frames, clip FROM runs") == "done|6|\(clip)".split(separator: "\n").map(String.init))
        let folder = try CommandLineTests.runFolder("\(dir)/lab.sqlite")
        #expect(Paths.parent(folder) == out)
        expectPlots(in: "\(dir)/\(folder)")
        // The title is drawn as given, a newline shown as \n.
        for plot in ["frames.svg", "psnr.svg"] {
            let svg = try String(contentsOfFile: "\(dir)/\(folder)/\(plot)", encoding: .utf8)
            #expect(svg.contains("<text>\(title)</text>"), "\(plot)")
        }
    }

    @Test("an experiment with hostile clip names and grid labels in a hostile folder: every run done, rd plot drawn")
    func experiment() throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = "c'l\"ip\nsystem \"touch PWNED\"\n#`touch PWNED`.y4m"
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 6).write(to: "\(dir)/\(clip)")
        let experiment: [String: Any] = [
            "name": "hostile", "clips": [clip], "base": ["threads": 1],
            "grid": ["crf": [24, 34], "opencl-clbin": ["x';system('touch PWNED');'", "y\nsystem \"touch PWNED\"\n#"]],
        ]
        try JSONSerialization.data(withJSONObject: experiment).write(to: URL(fileURLWithPath: "\(dir)/h.json"))
        let out = "John's \"rd\" @ARG1"
        let r = try enclab(["run", "h.json", "--plots", "render", "--out", out], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(files(named: "PWNED", under: dir).isEmpty)
        #expect(files(named: "John", under: dir).isEmpty)
        #expect(try sqlite("\(dir)/results/hostile.sqlite", "SELECT status, count(*) FROM runs GROUP BY status") == ["done|4"])
        let shownClipName = clip.replacingOccurrences(of: "\n", with: "\\n")
        for id in 1...4 {
            let folder = "\(dir)/\(try CommandLineTests.runFolder("\(dir)/results/hostile.sqlite", id))"
            expectPlots(in: folder)
            // The per-run plots of a sweep are drawn by one gnuplot process (`call` with single-quoted arguments):
            // each title arrives whole, quotes and all.
            for plot in ["frames.svg", "psnr.svg"] {
                let svg = try String(contentsOfFile: "\(folder)/\(plot)", encoding: .utf8)
                #expect(svg.contains("<text>\(shownClipName) "), "\(plot)")
                #expect(svg.contains("opencl-clbin=x';system('touch PWNED');'") || svg.contains("opencl-clbin=y\\nsystem \"touch PWNED\"\\n#"), "\(plot)")
            }
        }
        // Two series (one per opencl-clbin value, crf dropped from the label), their key titles as given.
        let svg = try String(contentsOfFile: "\(dir)/\(out)/rd.svg", encoding: .utf8)
        // One clip: the key names the configuration only (the report's rq chart is the same chart); the second curve
        // lies on the first and says so after its own title.
        #expect(svg.contains("<text>crf opencl-clbin=x';system('touch PWNED');'</text>"))
        #expect(svg.contains("<text>crf opencl-clbin=y\\nsystem \"touch PWNED\"\\n# [on crf opencl-clbin=x';system('touch PWNED');': every point within 1 % of the axes]</text>"))
    }
}
