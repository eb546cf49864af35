import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// What a review of the report's pages found (issue 19): the run and check pages' tables, their configuration, the
/// warnings of a run on its own page, the charts' limits and time origin, the keyframe limits on the keyframe
/// timeline, and the overlays' gnuplot files, styles and `--overlay`. Expectations come from sqlite3's reading of the
/// database and from arithmetic written out here.
@Suite("enclab report: run, check and overlay pages", .serialized)
struct ReportReviewTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// 64x48, 60 frames at 25 fps (2.4 s): run 1 ABR 300 kbit/s, run 2 CBR 300 kbit/s (target = vbv-maxrate),
    /// run 3 CRF 30 with `--pts-offset 1000000000000`, run 4 a `check --db` of a keyint-25 stream (IDR at 0, 25, 50)
    /// against MaxKeyFrameInterval=20 and MaxKeyFrameIntervalDuration=0.5; the report with a page for each.
    static func lab(in dir: String, report: [String] = []) throws {
        try ReportLab.make(in: dir, clip: SyntheticClip(width: 64, height: 48, frames: 60, seed: 11),
                           runs: [["--rc", "abr", "--bitrate", "300"], ["--rc", "cbr", "--bitrate", "300"],
                                  ["--rc", "crf", "--crf", "30", "--pts-offset", "1000000000000"]],
                           common: ["--threads", "1", "--preset", "ultrafast"],
                           expect: ["MaxKeyFrameInterval=20", "MaxKeyFrameIntervalDuration=0.5"], report: report)
    }

    static func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    @Test("run page: no empty header row; whole-number metrics without decimals, three name/value pairs a row; the run's warnings; target = vbv-maxrate one line; a PTS offset said once")
    func runPages() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        let abr = try Self.read("\(dir)/rep/encode/run-1/index.html")
        let cbr = try Self.read("\(dir)/rep/encode/run-2/index.html")
        // The facts table has no header row (main wrote <th></th><th></th>).
        #expect(!cbr.contains("<th></th>"))
        // Whole numbers as sqlite3 counts them, without ".000"; a real metric keeps 3 decimals.
        let frames = try cli.sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM frames WHERE run_id = 2")[0]
        #expect(frames == "60")
        #expect(cbr.contains("<td class=\"name\">frames</td><td class=\"value\">60</td>"), "frames without decimals")
        let bytes = try cli.sqlite("\(dir)/lab.sqlite", "SELECT stream_bytes FROM run_metrics WHERE run_id = 2")[0]
        #expect(cbr.contains("<td class=\"name\">stream_bytes</td><td class=\"value\">\(bytes)</td>"))
        let psnr = try cli.sqlite("\(dir)/lab.sqlite", "SELECT printf('%.3f', psnr_global) FROM run_metrics WHERE run_id = 2")[0]
        #expect(cbr.contains("<td class=\"name\">psnr_global (dB)</td><td class=\"value\">\(psnr)</td>"))
        // Three pairs a row: the metrics table's rows hold at most 3 name cells.
        let metrics = String(cbr[try #require(cbr.range(of: "id=\"metrics\"")).upperBound...])
        let table = String(metrics[..<(try #require(metrics.range(of: "</table>"))).lowerBound])
        for row in table.components(separatedBy: "<tr>").dropFirst() {
            #expect(row.components(separatedBy: "class=\"name\"").count - 1 <= 3)
        }
        // The ABR run's page warns that the clip (60 frames at 25 fps: its stream spans 2.4 s) is too short for ABR's start-up.
        #expect(abr.contains("class=\"short-clip\""), "the run page shows the run's warning")
        #expect(abr.contains("spans 2.400 s"))
        #expect(!cbr.contains("class=\"short-clip\""), "no short-clip warning for CBR")
        // CBR: target 300 = vbv-maxrate 300 (sqlite3's resolved settings): one line, in the chart data and bitrate.gp.
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT json_extract(settings, '$.resolved.vbv_maxrate_kbps') FROM runs WHERE run_id = 2") == ["300"])
        #expect(cbr.contains("\"name\":\"target = vbv-maxrate 300 kbit/s\""))
        #expect(!cbr.contains("\"name\":\"target 300 kbit/s\""))
        let gp = try Self.read("\(dir)/rep/encode/run-2/bitrate.gp")
        #expect(gp.contains("title 'target = vbv-maxrate 300 kbit/s'"))
        // Run 3's PTS start at 10^12 µs = 1000000 s (its first PTS as sqlite3 reads it, times the timebase): said
        // once above its charts, and in no other run's page.
        let offset = try Self.read("\(dir)/rep/encode/run-3/index.html")
        let first = try cli.sqlite("\(dir)/lab.sqlite", "SELECT min(pts), timebase_num, timebase_den FROM frames JOIN runs USING (run_id) WHERE run_id = 3")[0]
            .split(separator: "|").map { Int64($0)! }
        #expect(first[0] * first[1] == 1_000_000 * first[2], "the first PTS is 10^6 s")
        #expect(offset.components(separatedBy: "class=\"chart-origin\"").count == 2, "said once")
        #expect(offset.contains("0 s = the first PTS, \(first[0]) ticks of \(first[1])/\(first[2]) s (1000000 s)"))
        #expect(!abr.contains("class=\"chart-origin\""))
    }

    @Test("check page: the stream, the limits and check as the source; the keyframe deadlines and violations on the keyframe timeline")
    func checkPage() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        let id = try cli.sqlite("\(dir)/lab.sqlite", "SELECT run_id FROM runs WHERE experiment = 'check'")[0]
        let page = try Self.read("\(dir)/rep/check/run-\(id)/index.html")
        #expect(!page.contains("unknown"), "no 'unknown' configuration")
        #expect(page.contains("<td class=\"text\">checked against</td><td class=\"text\">MaxKeyFrameInterval=20, MaxKeyFrameIntervalDuration=0.5</td>"))
        #expect(page.contains("<td class=\"text\">source</td><td class=\"text\"><code>enclab check --db</code>"))
        #expect(page.contains("<td class=\"text\">stream</td><td class=\"text\">keyint25.264</td>"))
        // The IDR pictures as sqlite3 reads them: 0, 25, 50 (display order), 60 frames at 25 fps.
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT group_concat(display_index) FROM (SELECT display_index FROM frames WHERE run_id = \(id) AND type = 'IDR' ORDER BY display_index)") == ["0,25,50"])
        // Deadlines: frame k + 20 at (k + 20) / 25 s, none past frame 60; k / 25 + 0.5 s, none past 2.4 s.
        let due = try Self.read("\(dir)/rep/check/run-\(id)/keyframe-limits.dat").split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").map(String.init) }
        let expected: [(Int, Int, Double)] = [(0, 0, 20.0 / 25), (1, 0, 0.5), (0, 25, 45.0 / 25), (1, 25, 25.0 / 25 + 0.5)]
        #expect(due.count == expected.count, "\(due)")
        for (kind, after, seconds) in expected {
            #expect(due.contains { $0[0] == "\(kind)" && $0[1] == "\(after)" && abs(Double($0[2])! - seconds) < 1e-9 }, "deadline \(kind) after \(after) at \(seconds) s: \(due)")
        }
        // Violations as sqlite3 reads keyframe_violations, each a stretch on the timeline.
        let stored = try cli.sqlite("\(dir)/lab.sqlite", "SELECT kind || ' ' || start_frame || ' ' || end_frame FROM keyframe_violations WHERE run_id = \(id) ORDER BY ordinal")
        #expect(stored.contains("frame-limit 0 25") && stored.contains("frame-limit 25 50"))
        let drawn = try Self.read("\(dir)/rep/check/run-\(id)/keyframe-violations.dat").split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
        #expect(drawn == stored)
        let gp = try Self.read("\(dir)/rep/check/run-\(id)/keyframes.gp")
        #expect(gp.contains("title 'next keyframe due (MaxKeyFrameInterval=20)'") && gp.contains("title 'next keyframe due (MaxKeyFrameIntervalDuration=0.5)'"))
        #expect(gp.contains("'keyframe-violations.dat'"))
        // The interactive timeline carries the same deadlines and stretches.
        #expect(page.contains("id=\"chart-keyframes\""))
        #expect(page.contains("{\"x\":0.8,\"name\":\"next keyframe due (MaxKeyFrameInterval=20)\""))
        // One legend entry for the stretches over either limit (one red), naming the kinds the run has; each shaded
        // from where its limit passed: frame 0 + 20 at 25 fps = 0.8 s, PTS 0 + 0.5 s = 0.5 s, to the IDR at 1.0 s.
        #expect(page.contains("{\"from\":0.8,\"to\":1.0,\"name\":\"violation: frame-limit, duration-limit\""))
        #expect(page.contains("{\"from\":0.5,\"to\":1.0,\"name\":\"violation: frame-limit, duration-limit\""))
        // The experiment page's runs table names the check run's configuration by its limits.
        let experiment = try Self.read("\(dir)/rep/check/index.html")
        #expect(experiment.contains("check MaxKeyFrameInterval=20 MaxKeyFrameIntervalDuration=0.5"))
    }

    @Test("overlays: --overlay chooses the runs shown (an unknown id is 64 naming it); each chart with its gnuplot files; a configuration's colour and marker as on the rate-quality chart")
    func overlays() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir, report: ["--overlay", "1,3"])
        let page = try Self.read("\(dir)/rep/encode/index.html")
        for view in ["bitrate", "sizes", "psnr"] {
            for ext in ["gp", "dat", "png", "svg"] {
                #expect(FileManager.default.fileExists(atPath: "\(dir)/rep/encode/ov1-\(view).\(ext)"), "ov1-\(view).\(ext)")
            }
            #expect(page.contains("<a href=\"ov1-\(view).gp\">"))
        }
        // One block per offered run, in run id order; runs 1 and 3 shown at first, the default choice (run 2, cbr)
        // offered hidden.
        let json = try #require(page.range(of: "data-group=\"clip-1\">").map { String(page[$0.upperBound...]) })
        #expect(json.contains("{\"id\":1,") && json.contains("{\"id\":3,") && json.contains("{\"id\":2,"))
        #expect(page.contains("data-run=\"0\" checked") && !page.contains("data-run=\"1\" checked") && page.contains("data-run=\"2\" checked"))
        // Colours by configuration: the experiment's configurations sorted (abr, cbr, crf), the k-th the k-th colour of
        // the rate-quality chart's palette; rq-1.gp draws abr in the first.
        let rq = try Self.read("\(dir)/rep/encode/rq-1.gp")
        #expect(rq.contains("#1f77b4") && rq.contains("#ff7f0e") && rq.contains("#2ca02c"))
        func colour(_ id: Int) throws -> String {
            let from = try #require(json.range(of: "{\"id\":\(id),\"name\":"))
            let rest = json[from.upperBound...]
            let c = try #require(rest.range(of: "\"colour\":\""))
            return String(rest[c.upperBound...].prefix(7))
        }
        #expect(try colour(1) == "#1f77b4" && colour(2) == "#ff7f0e" && colour(3) == "#2ca02c")
        #expect(json.contains("{\"id\":3,\"name\":\"run 3: crf"))
        let gp = try Self.read("\(dir)/rep/encode/ov1-bitrate.gp")
        #expect(gp.contains("lc rgb '#1f77b4' title 'run 1'") && gp.contains("pt 4"), "abr: colour 1, gnuplot's open square (pt 4) as in rq-1.gp")
        // An id the database does not hold: 64, naming it.
        let bad = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep2", "--overlay", "1,99"], in: dir)
        #expect(bad.status == 64 && bad.stderr.contains("--overlay 99"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep2"))
    }

    @Test("overlays of 7 configurations: runs, legends and keyframe lanes in run id order (not by configuration name); the first 6 shown, the 7th offered hidden")
    func overlayOrderAndCap() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 20, seed: 3).write(to: "\(dir)/c.y4m")
        // An experiment of 7 configurations, keyint 70, 60, ..., 10 (runs 1 ... 7): their names ("crf keyint=10", ...)
        // sort the other way.
        let json: [String: Any] = ["name": "order", "clips": ["c.y4m"], "base": ["threads": 1, "preset": "ultrafast", "rc": "crf", "crf": 30],
                                   "grid": ["keyint": [70, 60, 50, 40, 30, 20, 10]]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/order.json"))
        let run = try CLI.process(CLI.binary, ["run", "order.json", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(run.status == 0, "\(run.stderr)")
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT group_concat(json_extract(settings, '$.resolved.keyint'), ',') FROM (SELECT settings FROM runs ORDER BY run_id)") == ["70,60,50,40,30,20,10"])
        let ids = try cli.sqlite("\(dir)/lab.sqlite", "SELECT run_id FROM runs ORDER BY run_id")
        #expect(ids == ["1", "2", "3", "4", "5", "6", "7"])
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/rep").first { FileManager.default.fileExists(atPath: "\(dir)/rep/\($0)/ov1-psnr.dat") })
        let page = try Self.read("\(dir)/rep/\(folder)/index.html")
        // The runs of the clip's group and of its keyframe timeline, in their order.
        func runIDs(_ group: String) throws -> [String] {
            let start = try #require(page.range(of: "class=\"enclab-chart-data\" data-group=\"\(group)\">"))
            let block = String(page[start.upperBound...].prefix { $0 != "<" })
            // Runs' ids are numbers (a chart's id is a string).
            return block.components(separatedBy: "{\"id\":").dropFirst().map { String($0.prefix { $0.isNumber }) }.filter { !$0.isEmpty }
        }
        let grouped = try runIDs("clip-1"), lanes = try runIDs("clip-1-keyframes")
        #expect(grouped == ids, "\(grouped)")
        #expect(lanes == ids, "\(lanes)")
        // The picker: boxes 0...5 (runs 1...6) checked, box 6 (run 7) offered unchecked.
        for k in 0..<6 { #expect(page.contains("data-group=\"clip-1\" data-run=\"\(k)\" checked>"), "box \(k) checked") }
        #expect(page.contains("data-group=\"clip-1\" data-run=\"6\">"), "box 6 offered, not checked")
        let picker = try #require(page.range(of: "<div class=\"run-picker\">").map { String(page[$0.upperBound...].prefix { $0 != "\n" }) })
        let named = picker.components(separatedBy: "</span>run ").dropFirst().map { String($0.prefix { $0.isNumber }) }
        #expect(named == ids, "picker order \(named)")
        // The gnuplot picture draws the shown runs' blocks only: runs 1...6.
        let gp = try Self.read("\(dir)/rep/\(folder)/ov1-psnr.gp")
        #expect(gp.contains("title 'run 6'") && !gp.contains("title 'run 7'"))
    }
}
