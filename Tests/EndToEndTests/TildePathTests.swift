import Foundation
import Testing
import EncoderLab

/// A `~` in a path the user gives is a name like any other: Foundation's `URL(fileURLWithPath:)` expands a leading
/// `~` to the home folder, and nothing of enclab's may do that.
@Suite("paths starting with ~ are names, end to end", .serialized)
struct TildePathTests {
    typealias CLI = CommandLineTests

    @Test("encode --out '~', '~/sub' and '~root' write their runs there, and plot --out '~' draws there", arguments: ["~", "~/sub", "~root"])
    func tildeOut(out: String) throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 5, seed: 9).write(to: "\(dir)/tiny.y4m")
        let r = try CLI.process(CLI.binary, ["encode", "tiny.y4m", "--threads", "1", "--db", "d.sqlite", "--out", out], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let key = try CLI().sqlite("\(dir)/d.sqlite", "SELECT run_key FROM runs WHERE status = 'done'")
        try #require(key.count == 1)
        let folder = "\(out)/\(key[0].prefix(16))"
        #expect(try CLI.runFolder("\(dir)/d.sqlite") == folder)
        for name in ["stream.264", "packets.bin", "from-packets.264", "frames.dat", "frames.gp", "psnr.gp"] {
            #expect(FileManager.default.fileExists(atPath: "\(dir)/\(folder)/\(name)"), "\(name)")
        }
        // Redrawn into a folder named ~ (its own run's folder when --out was ~).
        let plot = try CLI.process(CLI.binary, ["plot", "--db", "d.sqlite", "--out", "~"], in: dir)
        #expect(plot.status == 0, "\(plot.stderr)")
        #expect(plot.stdout == "run 1: frames and psnr plots in ~/\(key[0].prefix(16))\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/~/\(key[0].prefix(16))/frames.dat"))
                == Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(folder)/frames.dat")))
    }
}
