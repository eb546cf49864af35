import Foundation
import Testing
@testable import EncoderLab
import H264

/// The one-process drawing of many runs' plots: the driver script holds only the lab's words and folder names, user
/// text only as single-quoted arguments; the pictures equal what a process per plot draws.
@Suite("plot queue: many runs' plots in one gnuplot process")
struct PlotQueueTests {
    @Test("the driver line: cd into the run folder, reset, the staging folder, call with quotes doubled; anything else is drawn alone")
    func driverLines() {
        let p = PlotQueue.Plot(folder: "/o/0123456789abcdef", name: "frames", arguments: ["it's \"x\" @ARG1 `ls`", "", "b"])
        let s = ".enclab-plot-12-ABCDEF01"
        #expect(PlotQueue.driverLines(p, directory: "/o", staging: s) ==
                "cd '0123456789abcdef'\nreset\nenclab_staging = '.enclab-plot-12-ABCDEF01/'\ncall 'frames.gp' 'it''s \"x\" @ARG1 `ls`' '' 'b'\ncd '..'\n")
        #expect(PlotQueue.driverLines(p, directory: "/o/", staging: s) != nil)
        // Not a direct subfolder, a name with a quote, a control character in an argument, a staging name that is not
        // a plain folder name: no line (drawn alone).
        #expect(PlotQueue.driverLines(.init(folder: "/o/a/b", name: "frames", arguments: []), directory: "/o", staging: s) == nil)
        #expect(PlotQueue.driverLines(.init(folder: "/o/x'y", name: "frames", arguments: []), directory: "/o", staging: s) == nil)
        #expect(PlotQueue.driverLines(.init(folder: "/o/..", name: "frames", arguments: []), directory: "/o", staging: s) == nil)
        #expect(PlotQueue.driverLines(.init(folder: "/o/ab", name: "frames", arguments: ["a\nsystem 'x'"]), directory: "/o", staging: s) == nil)
        #expect(PlotQueue.driverLines(.init(folder: "/o/ab", name: "fr'ames", arguments: []), directory: "/o", staging: s) == nil)
        #expect(PlotQueue.driverLines(p, directory: "/o", staging: "a/b") == nil)
        #expect(PlotQueue.driverLines(p, directory: "/o", staging: "x'") == nil)
    }

    @Test("three runs' plots drawn by one process equal those of a process each; a hostile title stays text")
    func batchEqualsSeparate() throws {
        let root = NSTemporaryDirectory() + "enclab-plotqueue-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let titles = ["plain", "it's a 'quote'; system('touch PWNED')", "back\\slash ` $HOME @ARG2"]
        let queue = PlotQueue()
        for (i, title) in titles.enumerated() {
            let frames = (0..<12).map { k in
                LabStore.FrameRow(codedIndex: k, displayIndex: k, type: k == 0 ? "IDR" : "P", sizeBytes: 900 + 37 * k * (i + 1),
                                  pts: Int64(k), dts: Int64(k) - 1, qp: 30, psnrY: 35 + Double(k % 3), psnrAvg: 36 + Double(k % 2), ssim: nil)
            }
            let input = RunPlotInput(title: title, fps: try Rational(25, 1), timebaseNum: 1, timebaseDen: 25,
                                     targetKbps: 300, maxrateKbps: nil, frames: frames)
            try Plots.writeRunPlots(input, dir: "\(root)/batch/run\(i)", queue: queue)
            try Plots.writeRunPlots(input, dir: "\(root)/alone/run\(i)")
        }
        #expect(queue.pending.count == 6)
        // Only scripts and data so far.
        #expect(!FileManager.default.fileExists(atPath: "\(root)/batch/run0/frames.png"))
        try queue.draw(in: "\(root)/batch")
        #expect(queue.pending.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "\(root)/batch/PWNED"))
        for i in titles.indices {
            for name in ["frames", "psnr"] {
                for ext in ["gp", "dat", "svg"] where !(name == "psnr" && ext == "dat") {
                    let file = ext == "dat" ? "frames.dat" : "\(name).\(ext)"
                    let a = try Data(contentsOf: URL(fileURLWithPath: "\(root)/batch/run\(i)/\(file)"))
                    let b = try Data(contentsOf: URL(fileURLWithPath: "\(root)/alone/run\(i)/\(file)"))
                    #expect(a == b, "run\(i)/\(file)")
                }
                try Plots.checkComplete("\(root)/batch/run\(i)/\(name).png")
            }
            let svg = try String(contentsOfFile: "\(root)/batch/run\(i)/frames.svg", encoding: .utf8)
            #expect(svg.contains("<text>\(titles[i].replacingOccurrences(of: "&", with: "&amp;"))</text>") || svg.contains(titles[i]))
        }
    }

    @Test("writeScriptAndData writes a run's data and scripts and draws nothing; render draws the same pictures as writeRunPlots")
    func scriptsThenRender() throws {
        let root = NSTemporaryDirectory() + "enclab-plotsplit-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let frames = (0..<12).map { k in
            LabStore.FrameRow(codedIndex: k, displayIndex: k, type: k == 0 ? "IDR" : "P", sizeBytes: 900 + 37 * k,
                              pts: Int64(k), dts: Int64(k) - 1, qp: 30, psnrY: 35 + Double(k % 3), psnrAvg: 36 + Double(k % 2), ssim: nil)
        }
        let input = RunPlotInput(title: "it's 'x'", fps: try Rational(25, 1), timebaseNum: 1, timebaseDen: 25,
                                 targetKbps: 300, maxrateKbps: nil, frames: frames)
        let plots = try Plots.writeScriptAndData(input, dir: "\(root)/split/run")
        #expect(plots.map(\.name) == ["frames", "psnr"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(root)/split/run").sorted() == ["frames.dat", "frames.gp", "psnr.gp"])
        #expect(!Plots.runPicturesComplete("\(root)/split/run"))
        try Plots.render(plots)
        #expect(Plots.runPicturesComplete("\(root)/split/run"))
        try Plots.writeRunPlots(input, dir: "\(root)/whole/run")
        for file in ["frames.dat", "frames.gp", "psnr.gp", "frames.svg", "psnr.svg"] {
            #expect(FileManager.default.contents(atPath: "\(root)/split/run/\(file)") == FileManager.default.contents(atPath: "\(root)/whole/run/\(file)"), "\(file)")
        }
    }
}
