import Foundation
import Testing
import EncoderLab

/// Issue 19 item 11: a run's charts are written as data and gnuplot scripts on the run's path, and their pictures are
/// drawn where they are looked at (`enclab plot`, `enclab report`) or, with `--plots render`, on the run's path as before.
@Suite("plots off the run's path, end to end")
struct PlotsOffPathTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    static let pictures = ["frames.png", "frames.svg", "psnr.png", "psnr.svg"]
    static let scripts = ["frames.dat", "frames.gp", "psnr.gp"]

    @Test("encode writes frames.dat, frames.gp and psnr.gp and no picture; plot draws them there; --plots render draws them at once")
    func encodeWritesScriptsOnly() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 8, seed: 21).write(to: "\(dir)/c.y4m")
        let e = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--db", "e.sqlite", "--out", "out"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let folder = "\(dir)/\(try CLI.runFolder("\(dir)/e.sqlite"))"
        for name in Self.scripts + ["stream.264"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: "\(folder)/\(name)")[.size] as? Int) ?? 0
            #expect(size > 0, "\(name)")
        }
        for name in Self.pictures { #expect(!FileManager.default.fileExists(atPath: "\(folder)/\(name)"), "\(name)") }
        // frames.dat has one row per stored frame (sqlite3 counts them).
        let rows = try String(contentsOfFile: "\(folder)/frames.dat", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(try ["\(rows.count)"] == cli.sqlite("\(dir)/e.sqlite", "SELECT count(*) FROM frames"))
        // The same command again: already done, and still no picture drawn on its path.
        let again = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--db", "e.sqlite", "--out", "out"], in: dir)
        #expect(again.status == 0 && again.stdout.contains("(already done)"), "\(again.stdout) \(again.stderr)")
        for name in Self.pictures { #expect(!FileManager.default.fileExists(atPath: "\(folder)/\(name)"), "\(name)") }
        // enclab plot into the same folder draws the pictures in the run's folder, whole.
        let p = try cli.enclab(["plot", "--db", "e.sqlite", "--out", "out"], in: dir)
        #expect(p.status == 0, "\(p.stderr)")
        for name in Self.pictures { #expect((try? DiskFullTests.isComplete("\(folder)/\(name)")) == true, "\(name)") }
        // --plots render: drawn on the run's path, as before.
        let r = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--crf", "35", "--plots", "render",
                                "--db", "e.sqlite", "--out", "out"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = "\(dir)/\(try CLI.runFolder("\(dir)/e.sqlite", 2))"
        for name in Self.pictures { #expect((try? DiskFullTests.isComplete("\(rendered)/\(name)")) == true, "\(name)") }
    }

    @Test("run writes every run's scripts and no picture (its rd plot drawn); report then links only pictures that exist")
    func runThenReport() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 10, seed: 22).write(to: "\(dir)/c.y4m")
        try #"{"name": "off", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [24, 34]}}"#
            .write(toFile: "\(dir)/e.json", atomically: false, encoding: .utf8)
        let r = try cli.enclab(["run", "e.json", "--db", "lab.sqlite", "--out", "O"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        for id in [1, 2] {
            let folder = "\(dir)/\(try CLI.runFolder("\(dir)/lab.sqlite", id))"
            for name in Self.scripts { #expect(FileManager.default.fileExists(atPath: "\(folder)/\(name)"), "\(id) \(name)") }
            for name in Self.pictures { #expect(!FileManager.default.fileExists(atPath: "\(folder)/\(name)"), "\(id) \(name)") }
        }
        #expect((try? DiskFullTests.isComplete("\(dir)/O/rd.png")) == true)
        let report = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "R"], in: dir)
        #expect(report.status == 0, "\(report.stderr)")
        // Every page reachable from the index: each img src (and each link to a picture) is a whole file beside it.
        var images = 0
        for page in try ReportTests.pages(from: "\(dir)/R/index.html") {
            let html = try String(contentsOfFile: page, encoding: .utf8)
            for link in ReportTests.links(html) where !link.hasPrefix("http") && !link.hasPrefix("#") && !link.hasPrefix("data:") {
                let path = link.split(separator: "#")[0]
                guard path.hasSuffix(".png") || path.hasSuffix(".svg") else { continue }
                let file = Paths.parent(page) + "/" + (String(path).removingPercentEncoding ?? String(path))
                #expect((try? DiskFullTests.isComplete(file)) == true, "\(page): \(link)")
                if html.contains("src=\"\(link)\"") { images += 1 }
            }
        }
        #expect(images > 0)
    }

    @Test("--plots takes scripts, render or none; --no-plots with another --plots is refused", arguments: ["encode", "run"])
    func flagValues(command: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let operand = command == "encode" ? "c.y4m" : "e.json"
        let bad = try cli.enclab([command, operand, "--plots", "pictures"], in: dir)
        #expect(bad.status == 64 && bad.stderr == "enclab: --plots needs scripts, render or none, got 'pictures' (see 'enclab \(command) --help')\n", "\(bad.stderr)")
        let both = try cli.enclab([command, operand, "--plots", "render", "--no-plots"], in: dir)
        #expect(both.status == 64 && both.stderr == "enclab: --no-plots contradicts --plots render; give one of them (see 'enclab \(command) --help')\n", "\(both.stderr)")
        // The help says where the pictures come from.
        let help = try cli.enclab(["help", command], in: dir)
        #expect(help.stdout.contains("--plots scripts|render|none") && help.stdout.contains("'enclab plot --db"), "\(help.stdout)")
    }
}
