import Foundation
import Testing
@testable import EncoderLab

/// The plots drawn by a real gnuplot from hostile titles, key titles and folder names: nothing runs, the plots
/// are drawn, and the texts come out in the SVG as they went in.
@Suite("gnuplot plots: user strings are data", .serialized)
struct PlotTests {
    /// Strings that ran commands (or broke the script) when pasted into a gnuplot script: a newline ending the
    /// string and starting a `system` line, a quote closing the string, gnuplot's backquote substitution and
    /// `@` macros, `$0` (gnuplot 4's call arguments), backslashes, and XML's own characters.
    static let hostile = [
        "x\nsystem \"touch PWNED\"\n#",
        "o';system('touch PWNED');'",
        "q\";system(\"touch PWNED\");\"",
        "`touch PWNED`",
        "@ARG1 @ARG2 $0 $1 \\",
        "back\\slash\\' \\\" \\n",
        "John's clips & <tags>",
    ]

    /// A folder under `scratch` whose own name and parent's name are hostile.
    static func hostileFolder(_ scratch: Scratch) throws -> (parent: String, dir: String) {
        let parent = scratch.file("o';system('touch PWNED');'")
        let dir = "\(parent)/x\nsystem \"touch PWNED\"\n#`touch PWNED`"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return (parent, dir)
    }

    /// Every file named PWNED under `root`, and in the test's own working directory.
    static func pwned(under root: String) -> [String] {
        var found = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [])
            .filter { ($0 as NSString).lastPathComponent == "PWNED" }.map { "\(root)/\($0)" }
        let cwd = FileManager.default.currentDirectoryPath + "/PWNED"
        if FileManager.default.fileExists(atPath: cwd) {
            found.append(cwd)
            try? FileManager.default.removeItem(atPath: cwd)
        }
        return found
    }

    /// The `<text>` contents of an SVG, unescaped as gnuplot's svg terminal escapes them (`&amp;`, `&lt;`).
    static func svgTexts(_ path: String) throws -> [String] {
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        return svg.components(separatedBy: "<text>").dropFirst().compactMap { $0.components(separatedBy: "</text>").first }
            .map { $0.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&amp;", with: "&") }
    }

    /// A drawn PNG starts with the PNG signature (89 50 4E 47 0D 0A 1A 0A).
    static func isPNG(_ path: String) -> Bool {
        (try? Data(contentsOf: URL(fileURLWithPath: path)).prefix(8)) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test("run plots: hostile titles and folders run nothing, and the title is drawn as given", arguments: hostile)
    func runPlots(title: String) throws {
        let scratch = Scratch()
        let (_, dir) = try Self.hostileFolder(scratch)
        // 10 frames at 25 fps, timebase 1/25: an IDR of 8000 bytes, then P frames of 1000.
        let frames = (0..<10).map { i in
            LabStore.FrameRow(codedIndex: i, displayIndex: i, type: i == 0 ? "IDR" : "P", sizeBytes: i == 0 ? 8000 : 1000,
                              pts: Int64(i), dts: Int64(i), qp: 26, psnrY: 40, psnrAvg: 41, ssim: 0.98)
        }
        let drawn = Result {
            try Plots.writeRunPlots(frames: frames, timebaseNum: 1, timebaseDen: 25, fpsNum: 25, fpsDen: 1,
                                    targetKbps: 300, maxrateKbps: 450, title: title, dir: dir)
        }
        #expect(Self.pwned(under: scratch.path).isEmpty)
        try drawn.get()
        for name in ["frames", "psnr"] {
            #expect(Self.isPNG("\(dir)/\(name).png"), "\(name).png")
            let texts = try Self.svgTexts("\(dir)/\(name).svg")
            // Control characters are shown as escapes (a newline as the two characters \ and n); nothing else changes.
            #expect(texts.contains(title.replacingOccurrences(of: "\n", with: "\\n")), "\(texts)")
            // The script names only its fixed files: no byte of the title or the folder is in it.
            let script = try String(contentsOfFile: "\(dir)/\(name).gp", encoding: .utf8)
            #expect(!script.contains("PWNED") && !script.contains(dir))
        }
        let keys = try Self.svgTexts("\(dir)/frames.svg")
        #expect(keys.contains("target rate 300 kbit/s") && keys.contains("VBV maxrate 450 kbit/s"))
        // The data file is numbers only: 10 rows after the header, frame 0 is 8000 * 8 / 1000 = 64 kbit, type 0 (IDR).
        let rows = try String(contentsOfFile: "\(dir)/frames.dat", encoding: .utf8).split(separator: "\n")
        #expect(rows.count == 11 && rows[1].hasPrefix("0 0 64.0 0 "))
    }

    @Test("rate-distortion plot: hostile clip names and grid labels are each series' key title, in order")
    func experimentPlot() throws {
        let scratch = Scratch()
        let (_, dir) = try Self.hostileFolder(scratch)
        // One series per hostile clip name (with rc mode crf) and per hostile grid label (clip plain.y4m), two points each.
        var points: [Plots.RDPoint] = []
        var id: Int64 = 0
        for (i, name) in Self.hostile.enumerated() {
            for (kbps, psnr) in [(100.0 + Double(i), 30.0), (200.0 + Double(i), 35.0)] {
                id += 1
                points.append(.init(clip: name, mode: "crf", kbps: kbps, psnr: psnr, runID: id))
                id += 1
                points.append(.init(clip: "plain.y4m", mode: "abr bframes=\(name)", kbps: kbps, psnr: psnr + 1, runID: id))
            }
        }
        let drawn = Result { try Plots.writeExperimentPlot(points: points, title: "exp \(Self.hostile[0])", dir: dir) }
        #expect(Self.pwned(under: scratch.path).isEmpty)
        try drawn.get()
        #expect(Self.isPNG("\(dir)/rd.png"))
        // The key titles as the lab names the curves of a chart of several clips ("clip configuration"): by clip, then in
        // the order of each curve's first run; control characters shown as escapes.
        let expected = (Self.hostile.map { ($0, "\($0) crf") } + Self.hostile.map { ("plain.y4m", "plain.y4m abr bframes=\($0)") })
            .enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }
            .map { $0.element.1.replacingOccurrences(of: "\n", with: "\\n") }
        let texts = try Self.svgTexts("\(dir)/rd.svg")
        #expect(texts.contains("exp x\\nsystem \"touch PWNED\"\\n#"))
        #expect(Array(texts.filter { expected.contains($0) }) == expected, "\(texts)")
        let script = try String(contentsOfFile: "\(dir)/rd.gp", encoding: .utf8)
        #expect(!script.contains("PWNED") && !script.contains(dir))
        // rd.dat: a header, then one block per curve, each a one-line comment naming it and its two points.
        let data = try String(contentsOfFile: "\(dir)/rd.dat", encoding: .utf8)
        #expect(data.hasPrefix("# bitrate_kbps psnr_global run_id, one block per curve\n# "))
        #expect(data.components(separatedBy: "\n\n\n").filter { !$0.isEmpty }.map { $0.split(separator: "\n").filter { !$0.hasPrefix("# bitrate_kbps") }.count }
                == Array(repeating: 3, count: expected.count))
        #expect(data.split(separator: "\n").filter { $0.hasPrefix("# ") }.dropFirst().map { String($0.dropFirst(2)) } == expected)
    }

    @Test("shown: control characters as escapes, long text cut with an ellipsis")
    func shown() {
        #expect(Plots.shown("a\nb\tc\rd\u{1B}e\u{7F}") == #"a\nb\tc\rd\u{1b}e\u{7f}"#)
        #expect(Plots.shown("it's \"@ARG1\" `x` $0 é") == "it's \"@ARG1\" `x` $0 é")
        #expect(Plots.shown("abcdef", limit: 4) == "abc…")
        #expect(Plots.shown("abcd", limit: 4) == "abcd")
        #expect(Plots.shown(String(repeating: "x", count: 600)).unicodeScalars.count == Plots.textLimit)
    }
}
