import Foundation
import Testing
import EncoderLab

/// Issue 19, items 1 and 7, through the built `enclab`: the run folder's rate-quality chart and the report's are one
/// chart of one named metric (checked against `run_metrics` read by sqlite3), with one style per configuration; time
/// axes start at the run's first PTS (no tic label in exponent notation under `--pts-offset 10^12`); PTS steps are exact.
@Suite("charts: one definition, time axes and exact steps, end to end", .serialized)
struct ChartDefinitionTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// The data rows of a rate-quality data file (comments and empty lines left out), as written.
    static func rows(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// The `<text>` contents of an SVG (gnuplot's tic labels, titles, key titles).
    static func svgTexts(_ path: String) throws -> [String] {
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        return svg.components(separatedBy: "<text>").dropFirst().compactMap { $0.components(separatedBy: "</text>").first }
    }

    /// Whether a text is a number in exponent notation (`1e+06`, `1.00001e+06`, `2E-5`).
    static func isExponent(_ text: String) -> Bool {
        text.range(of: #"^\s*[-+]?[0-9.]+[eE][-+]?[0-9]+\s*$"#, options: .regularExpression) != nil
    }

    @Test("rd.dat holds run_metrics.psnr_global and bitrate_kbps for every point; the report's rq-1 is the same chart")
    func rateQualityIsOneChart() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 20, seed: 3).write(to: "\(dir)/c.y4m")
        let json: [String: Any] = [
            "name": "one", "clips": ["c.y4m"], "base": ["threads": 1, "preset": "ultrafast"],
            "grid": ["mode": [["rc": "crf", "crf": 20], ["rc": "crf", "crf": 35], ["rc": "abr", "bitrate": 300], ["rc": "abr", "bitrate": 900]]],
        ]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/one.json"))
        let r = try CLI.process(CLI.binary, ["run", "one.json", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        // Every point of rd.dat is a run's stored run_metrics row, read by sqlite3 (which prints 15 significant digits).
        let stored = try cli.sqlite("\(dir)/lab.sqlite", "SELECT run_id, bitrate_kbps, psnr_global FROM run_metrics ORDER BY run_id")
        var metrics: [Int64: (Double, Double)] = [:]
        for line in stored {
            let f = line.split(separator: "|")
            metrics[Int64(f[0])!] = (Double(f[1])!, Double(f[2])!)
        }
        #expect(metrics.count == 4)
        let rd = try Self.rows("\(dir)/out/rd.dat")
        #expect(rd.count == 4)
        for row in rd {
            let f = row.split(separator: " ")
            try #require(f.count == 3, "rd.dat row '\(row)': expected bitrate_kbps, the metric and run_id")
            let id = Int64(f[2])!, kbps = Double(f[0])!, psnr = Double(f[1])!
            let m = try #require(metrics[id], "run \(id)")
            #expect(abs(kbps - m.0) <= 1e-9 * m.0 && abs(psnr - m.1) <= 1e-9 * m.1, "run \(id): \(row) against \(m)")
        }
        #expect(try String(contentsOfFile: "\(dir)/out/rd.gp", encoding: .utf8).contains("PSNR, pooled squared error"))
        // The report's chart of the clip: the same rows, and each configuration in the same colour and marker.
        let report = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep"], in: dir)
        try #require(report.status == 0, "\(report.stderr)")
        #expect(try Self.rows("\(dir)/rep/one/rq-1.dat") == rd)
        let rdScript = try String(contentsOfFile: "\(dir)/out/rd.gp", encoding: .utf8).replacingOccurrences(of: "'rd.", with: "'X.")
        let rqScript = try String(contentsOfFile: "\(dir)/rep/one/rq-1.gp", encoding: .utf8).replacingOccurrences(of: "'rq-1.", with: "'X.")
        #expect(rdScript == rqScript)
        // Two configurations, two colours and two markers.
        let styles = Set(rdScript.split(separator: "\n").compactMap { line -> Substring? in
            guard let pt = line.range(of: " pt "), let title = line.range(of: " title ") else { return nil }
            return line[pt.lowerBound..<title.lowerBound]
        })
        #expect(styles.count == 2, "\(styles)")
        // The rate axis fitted to the data: every labelled tic inside the data's range widened by 4 %.
        let rates = rd.map { Double($0.split(separator: " ")[0])! }
        let tics = rdScript.split(separator: "\n").first { $0.hasPrefix("set xtics (") }.map(String.init) ?? ""
        let values = tics.split(separator: ",").compactMap { Double($0.split(separator: " ").last!.trimmingCharacters(in: CharacterSet(charactersIn: ")"))) }
        #expect(values.count >= 4, "\(tics)")
        #expect(values.allSatisfy { $0 >= rates.min()! / 1.04 - 1e-9 && $0 <= rates.max()! * 1.04 + 1e-9 }, "\(tics) for \(rates)")
    }

    @Test("--pts-offset 10^12: no time axis has a tic label in exponent notation; the offset is said in the title")
    func timeAxesFromTheFirstPTS() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 40, seed: 4).write(to: "\(dir)/c.y4m")
        let r = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--rc", "cbr", "--bitrate", "400",
                                "--vbv-maxrate", "400", "--vbv-bufsize", "400", "--pts-offset", "1000000000000",
                                "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let report = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        try #require(report.status == 0, "\(report.stderr)")
        let page = "\(dir)/rep/encode/run-1"
        let files = try FileManager.default.contentsOfDirectory(atPath: page)
        for name in ["bitrate", "keyframes", "vbv"] {
            let script = try String(contentsOfFile: "\(page)/\(name).gp", encoding: .utf8)
            #expect(script.contains(ChartTime.axisFormat), "\(name).gp")
            #expect(script.contains("set title '0 s = the first PTS, 1000000000000 ticks of 1/1000000 s (1000000 s)'"), "\(name).gp")
            // The times in the data: seconds from the first PTS (the clip lasts 40 / 25 = 1.6 s).
            for line in try Self.rows("\(page)/\(name).dat") {
                let t = Double(line.split(separator: " ")[1])!
                #expect(abs(t) < 10, "\(name).dat: \(line)")
            }
        }
        // What gnuplot drew: no text of any picture in exponent notation.
        let svgs = files.filter { $0.hasSuffix(".svg") }
        #expect(svgs.count >= 5, "\(files)")
        for svg in svgs {
            let texts = try Self.svgTexts("\(page)/\(svg)")
            #expect(!texts.contains(where: Self.isExponent), "\(svg): \(texts.filter(Self.isExponent))")
        }
    }

    @Test("the PTS steps of a constant 30000/1001 run are one value, in ticks, labelled with their exact ms")
    func exactSteps() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 60, fpsNum: 30000, fpsDen: 1001, seed: 6).write(to: "\(dir)/c.y4m")
        let r = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        // The timebase as stored (x264 CLI's constant-rate plan: 1001/30000 s), read by sqlite3.
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT timebase_num, timebase_den FROM runs") == ["1001|30000"])
        let report = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        try #require(report.status == 0, "\(report.stderr)")
        let rows = try Self.rows("\(dir)/rep/encode/run-1/timestamps.dat")
        #expect(rows.count == 59)
        #expect(Set(rows.map { $0.split(separator: " ")[1] }) == ["1"], "\(Set(rows.map { $0.split(separator: " ")[1] }))")
        // The tic of the one step: 1 tick, 1001/30 ms.
        let texts = try Self.svgTexts("\(dir)/rep/encode/run-1/timestamps.svg")
        #expect(texts.contains { $0.hasPrefix("1 (1001/30 ms") }, "\(texts)")
    }
}
