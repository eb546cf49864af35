import Foundation
import Testing
import EncoderLab

/// `--no-plots`: the runs are recorded as ever and no per-run plot is drawn (a speed study's setting); `enclab plot`
/// draws them later from the store, the same data files a run that plots writes.
@Suite("--no-plots, end to end")
struct NoPlotsTests {
    let cli = CommandLineTests()

    @Test("encode and run with --no-plots: runs done, no frames/psnr files; enclab plot draws them as a plotting run would")
    func noPlots() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 8, seed: 12).write(to: "\(dir)/c.y4m")
        let e = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "30", "--no-plots", "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let json: [String: Any] = ["name": "np", "clips": ["c.y4m"], "base": ["threads": 1], "grid": ["crf": [25, 35]]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/np.json"))
        let r = try cli.enclab(["run", "np.json", "--no-plots", "--db", "r.sqlite", "--out", "r"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        // The same runs with plots, for the data files.
        let p = try cli.enclab(["run", "np.json", "--db", "p.sqlite", "--out", "p"], in: dir)
        #expect(p.status == 0, "\(p.stderr)")
        let fm = FileManager.default
        for (db, ids) in [("e.sqlite", [1]), ("r.sqlite", [1, 2])] {
            for id in ids {
                let folder = "\(dir)/\(try CommandLineTests.runFolder("\(dir)/\(db)", id))"
                #expect(fm.fileExists(atPath: "\(folder)/stream.264"))
                for file in ["frames.dat", "frames.gp", "frames.png", "frames.svg", "psnr.gp", "psnr.png", "psnr.svg"] {
                    #expect(!fm.fileExists(atPath: "\(folder)/\(file)"), "\(folder)/\(file)")
                }
            }
        }
        // Stored the same: the rows of both sweeps' frames are equal (sqlite3), plots or not.
        let rows = { (db: String) in
            try CommandLineTests.process("/usr/bin/sqlite3", ["\(dir)/\(db)", "SELECT r.run_key, f.coded_index, f.size_bytes, f.psnr_y FROM frames f JOIN runs r USING (run_id) ORDER BY 1, 2"], in: "/").stdout
        }
        #expect(try rows("r.sqlite") == rows("p.sqlite"))
        #expect(try !rows("r.sqlite").isEmpty)
        // enclab plot draws them later: frames.dat equal to the plotting sweep's, byte for byte.
        let d = try cli.enclab(["plot", "--db", "r.sqlite", "--out", "r"], in: dir)
        #expect(d.status == 0, "\(d.stderr)")
        for id in [1, 2] {
            let drawn = "\(dir)/\(try CommandLineTests.runFolder("\(dir)/r.sqlite", id))"
            let plotted = "\(dir)/\(try CommandLineTests.runFolder("\(dir)/p.sqlite", id))"
            #expect(fm.contents(atPath: "\(drawn)/frames.dat") == fm.contents(atPath: "\(plotted)/frames.dat"))
            for file in ["frames.png", "frames.svg", "psnr.png", "psnr.svg"] { #expect(fm.fileExists(atPath: "\(drawn)/\(file)")) }
        }
    }
}
