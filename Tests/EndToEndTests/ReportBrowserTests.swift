import EnclabTestSupport
import Foundation
import Testing
import EncoderLab

/// The report's interactive charts in a real browser: Debian's chromium driven through WebDriver by
/// `scripts/report-browser.py` (Debian's `/usr/bin/python3` with python3-selenium, `/usr/bin/chromedriver` from
/// chromium-driver; `scripts/setup.sh --tests` installs them), on a report the built enclab writes. What the script
/// checks is read from the database with Python's sqlite3 and formatted there (see the script's documentation).
@Suite("enclab report in chromium", .serialized)
struct ReportBrowserTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    static let script = "\(CLI.root)/scripts/report-browser.py"

    /// The browser check's tools, or a failure naming the packages to install.
    static func requireBrowser() throws {
        for tool in ["/usr/bin/python3", "/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) missing: install the Debian packages chromium-driver and python3-selenium (bash scripts/setup.sh --tests)")
            throw CancellationError()
        }
    }

    /// A small experiment (ReportTests.experiment: crf and cbr with a VBV, B-frames, one clip whose name is HTML and
    /// script), a `check --db` run with two DataRateLimits pairs, and their report with pages for every run.
    static func report(in dir: String) throws {
        try ReportTests.experiment(in: dir)
        let stream = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/out").sorted()
            .map { "\(dir)/out/\($0)/stream.264" }.first { FileManager.default.fileExists(atPath: $0) }
        let mp4 = "\(dir)/checked.mp4"
        let remux = try CLI.process("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", try #require(stream), "-c", "copy", mp4], in: dir)
        try #require(remux.status == 0, "\(remux.stderr)")
        let check = try CLI.process(CLI.binary, ["check", "--expect", "DataRateLimits=2000,0.5,600,0.1", "--db", "lab.sqlite", mp4], in: dir)
        try #require(check.status == 1, "the check finds violations: \(check.stdout)\(check.stderr)")
        let ids = try CLI.process("/usr/bin/sqlite3", ["lab.sqlite", "SELECT group_concat(run_id) FROM runs WHERE status = 'done'"], in: dir)
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", ids.stdout.trimmingCharacters(in: .whitespacesAndNewlines)], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
    }

    @Test("run and experiment pages in chromium: no console errors; one chart row per stored frame; hover shows the frame's stored values; drag zooms every chart of the page")
    func charts() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.report(in: dir)
        let r = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep"], in: dir, limit: 900)
        #expect(r.status == 0 && r.stdout.hasSuffix("ok\n"), "\(r.stdout)\(r.stderr)")
        // The check run's page draws one chart per DataRateLimits pair.
        let checkPage = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/rep/check").first { $0.hasPrefix("run-") }
        let html = try String(contentsOfFile: "\(dir)/rep/check/\(try #require(checkPage))/index.html", encoding: .utf8)
        #expect(html.contains("id=\"chart-datarate-1\"") && html.contains("id=\"chart-datarate-2\""))
    }

    @Test("a run scored with --metrics vmaf,psnr-hvs in chromium: one chart per stored metric, one point per frame, the hovered frame's VMAF and PSNR-HVS as sqlite3 reads them")
    func perceptualCharts() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try QualityMetricsTests.clip(dir, frames: 12, size: "176x144")
        let e = try CLI.process(CLI.binary, ["encode", "c.y4m", "--threads", "1", "--crf", "30", "--bframes", "2", "--no-plots",
                                             "--metrics", "vmaf,psnr-hvs", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(e.status == 0, "\(e.stderr)")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let page = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/rep").compactMap { folder -> String? in
            let p = "rep/\(folder)/run-1/index.html"
            return FileManager.default.fileExists(atPath: "\(dir)/\(p)") ? p : nil
        }.first
        let html = try String(contentsOfFile: "\(dir)/\(try #require(page))", encoding: .utf8)
        #expect(html.contains("id=\"chart-q-vmaf\"") && html.contains("id=\"chart-q-psnr-hvs\""))
        // The gnuplot picture's data: one line per frame, the values as stored (sqlite3), by display index.
        let folder = (page! as NSString).deletingLastPathComponent
        let dat = try String(contentsOfFile: "\(dir)/\(folder)/perceptual.dat", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(dat.count == 12)
        let stored = try TestSupport.sqlite("\(dir)/lab.sqlite", "SELECT display_index, vmaf, psnr_hvs FROM frame_quality_metrics WHERE run_id = 1")
        var byDisplay: [Int: (Double, Double)] = [:]
        for s in stored { let f = s.split(separator: "|"); byDisplay[Int(f[0])!] = (Double(f[1])!, Double(f[2])!) }
        for line in dat {
            let f = line.split(separator: " ").map { Double($0)! }
            let s = byDisplay[Int(f[1])]
            #expect(s != nil && abs(f[3] - s!.0) <= 1e-9 && abs(f[4] - s!.1) <= 1e-9, "\(line) against \(String(describing: s))")
        }
        for ext in ["gp", "png"] { #expect(FileManager.default.fileExists(atPath: "\(dir)/\(folder)/perceptual.\(ext)")) }
        let b = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep", "--run-page", page!], in: dir, limit: 900)
        #expect(b.status == 0 && b.stdout.hasSuffix("ok\n"), "\(b.stdout)\(b.stderr)")
    }

    @Test("run, check and overlay pages in chromium: the first frame right of the y axis, every table within 1280 px, the keyframe limits on the keyframe timeline")
    func reviewedPages() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReportReviewTests.lab(in: dir)
        let r = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep"], in: dir, limit: 900)
        #expect(r.status == 0 && r.stdout.hasSuffix("ok\n"), "\(r.stdout)\(r.stderr)")
    }

    @Test("overlay in chromium: each chart's y range fits the runs shown (not a hidden run's larger frames: sqlite3's largest frame of the shown runs), follows a run shown or hidden with its box; the dashed lines' labels each drawn once, apart, over the data")
    func overlayRangesAndLabels() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 160, height: 120, frames: 40, seed: 7).write(to: "\(dir)/c.y4m")
        // Runs 1 crf 15 and 4 crf 40: one configuration, run 4 (the lower rate of two) shown, run 1 offered hidden;
        // runs 2 (abr 200: a target line) and 3 (cbr 200: target = vbv-maxrate, one line at the same height) shown.
        for flags in [["--crf", "15"], ["--rc", "abr", "--bitrate", "200"], ["--rc", "cbr", "--bitrate", "200"], ["--crf", "40"]] {
            let e = try CLI.process(CLI.binary, ["encode", "c.y4m"] + flags + ["--threads", "1", "--preset", "ultrafast", "--no-plots", "--db", "lab.sqlite", "--out", "out"], in: dir)
            try #require(e.status == 0, "\(e.stderr)")
        }
        // Run 1's largest frame is larger than any of runs 2 to 4 (sqlite3): a range fitted to every run is too tall.
        let largest = try cli.sqlite("\(dir)/lab.sqlite", "SELECT (SELECT max(size_bytes) FROM frames WHERE run_id = 1) > (SELECT max(size_bytes) FROM frames WHERE run_id > 1)")
        #expect(largest == ["1"])
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1,2,3,4"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/encode/index.html", encoding: .utf8)
        #expect(page.contains("data-run=\"0\">") && page.contains("data-run=\"3\" checked>"), "run 1 offered hidden, run 4 shown")
        // Run 4, the crf configuration's run shown, is drawn solid (no dash); run 1, hidden, dashed.
        let start = try #require(page.range(of: "class=\"enclab-chart-data\" data-group=\"clip-1\">"))
        let block = String(page[start.upperBound...].prefix { $0 != "<" })
        let data = try #require(try JSONSerialization.jsonObject(with: Data(block.utf8)) as? [String: Any])
        let charts = try #require(data["charts"] as? [[String: Any]])
        let psnr = try #require(charts.first { $0["id"] as? String == "ov1-psnr" }?["series"] as? [[String: Any]])
        #expect(psnr.first { $0["run"] as? Int == 3 }.map { $0["dash"] == nil } == true, "run 4 solid: \(psnr)")
        #expect(psnr.first { $0["run"] as? Int == 0 }.map { $0["dash"] != nil } == true, "run 1 dashed: \(psnr)")
        let check = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep"], in: dir, limit: 900)
        #expect(check.status == 0 && check.stdout.hasSuffix("ok\n"), "\(check.stdout)\(check.stderr)")
    }

    @Test("pictures skipped by the encoder (OpenH264's frame skip) in chromium: the keyframe timeline's marks named 'skipped by the encoder' are the skipped_frames rows (sqlite3), its legend names them; its IDR frames after skipped pictures at their own PTS; the run page's 'OpenH264 settings' row; no ABR start-up note for OpenH264; the configuration 'openh264 bitrate'")
    func skippedFrames() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let noise = try CLI.process("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25,noise=alls=40:allf=t",
                                                        "-frames:v", "40", "-pix_fmt", "yuv420p", "-y", "file:\(dir)/n.y4m"], in: dir)
        try #require(noise.status == 0, "\(noise.stderr)")
        // An IDR every 10 coded frames: the IDRs after the first come after skipped pictures.
        let run = try CLI.process(CLI.binary, ["encode", "n.y4m", "--encoder", "openh264", "--bitrate", "200", "--bEnableFrameSkip", "true", "--keyint", "10",
                                               "--no-plots", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(run.status == 0, "\(run.stderr)")
        let skipped = try CLI.process("/usr/bin/sqlite3", ["lab.sqlite", "SELECT count(*) FROM skipped_frames"], in: dir)
        #expect((Int(skipped.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0, "the run skips pictures")
        // A keyframe whose display_index (its input index) is not its place among the coded frames: pictures were skipped before it.
        let late = try CLI.process("/usr/bin/sqlite3", ["lab.sqlite", """
            SELECT count(*) FROM frames f WHERE type IN ('IDR', 'I') AND display_index != (SELECT count(*) FROM frames g WHERE g.run_id = f.run_id AND g.pts < f.pts)
            """], in: dir)
        #expect((Int(late.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0, "a keyframe comes after skipped pictures")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let check = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep"], in: dir, limit: 900)
        #expect(check.status == 0 && check.stdout.hasSuffix("ok\n"), "\(check.stdout)\(check.stderr)")
    }

    @Test("a run with a rate schedule in chromium: the bitrate chart's staircase equals the stored rate_changes at every frame (sqlite3), each change marked at its frame, and the change x264 ignored is on the page with its status and warning")
    func rateStaircase() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 160, height: 120, frames: 60, seed: 5).write(to: "\(dir)/c.y4m")
        // x264's CBR without HRD: bitrate changes apply; vbv-maxrate above the bitrate alone is set back (ignored).
        let e = try CLI.process(CLI.binary, ["encode", "c.y4m", "--preset", "veryfast", "--threads", "1", "--bitrate", "300", "--vbv-maxrate", "300",
                                             "--vbv-bufsize", "300", "--rate-schedule", "10:bitrate=200;20:vbv-maxrate=500;30:bitrate=150",
                                             "--no-plots", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(e.status == 0, "\(e.stderr)")
        let statuses = try CLI.process("/usr/bin/sqlite3", ["lab.sqlite", "SELECT group_concat(status) FROM rate_changes"], in: dir)
        #expect(statuses.stdout == "applied,ignored,applied\n")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let check = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep"], in: dir, limit: 900)
        #expect(check.status == 0 && check.stdout.hasSuffix("ok\n"), "\(check.stdout)\(check.stderr)")
    }

    @Test("a run with the RTP stage under loss in chromium: the packets chart's points are the rtp_frames rows, the loss chart's frozen marks the rtp_loss_frames frozen rows, the rtp-run table's numbers the rtp_runs row (sqlite3); the experiment page offers the RTP columns behind its chooser only")
    func rtpStage() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 160, height: 120, frames: 30, seed: 5).write(to: "\(dir)/c.y4m")
        let e = try CLI.process(CLI.binary, ["encode", "c.y4m", "--preset", "veryfast", "--threads", "1", "--qp", "24", "--keyint", "12",
                                             "--rtp", "mtu=500", "--loss", "bernoulli:p=0.05,seed=1", "--no-plots", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(e.status == 0, "\(e.stderr)")
        // The seed loses packets and freezes frames, so the marks have something to be compared with.
        let lossy = try CLI.process("/usr/bin/sqlite3", ["lab.sqlite", "SELECT packets_lost > 0, frames_frozen > 0 FROM rtp_runs"], in: dir)
        #expect(lossy.stdout == "1|1\n", "\(lossy.stdout)")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let check = try CLI.process("/usr/bin/python3", [Self.script, "--db", "lab.sqlite", "--report", "rep"], in: dir, limit: 900)
        #expect(check.status == 0 && check.stdout.hasSuffix("ok\n"), "\(check.stdout)\(check.stderr)")
        // The experiment page: the RTP columns are in the chooser and hidden by default.
        let page = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/rep").first { FileManager.default.fileExists(atPath: "\(dir)/rep/\($0)/run-1/index.html") }
        let html = try String(contentsOfFile: "\(dir)/rep/\(try #require(page))/index.html", encoding: .utf8)
        #expect(html.contains("<th class=\"text\" hidden>RTP: loss model</th>") || html.contains("<th hidden>RTP: loss model</th>"))
        #expect(html.contains("<input type=\"checkbox\" data-col=") && html.contains("> RTP: packets lost</label>"))
    }

    @Test("the report's assets: dygraphs copied without source maps, so the folder works offline; chart data cannot close its script element")
    func assets() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReportTests.small(in: dir, file: "small.json", db: "lab.sqlite")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1,5"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        for name in ["dygraph.min.js", "synchronizer.js", "dygraph.min.css", "enclab-charts.js"] {
            let text = try String(contentsOfFile: "\(dir)/rep/assets/\(name)", encoding: .utf8)
            #expect(!text.contains("sourceMappingURL"), "\(name) keeps a source map")
            #expect(text.count > 1000, "\(name) is not the library")
        }
        let original = try String(contentsOfFile: "/usr/share/javascript/dygraphs/dygraph.min.js", encoding: .utf8)
        let copied = try String(contentsOfFile: "\(dir)/rep/assets/dygraph.min.js", encoding: .utf8)
        #expect(original.hasPrefix(copied.trimmingCharacters(in: .newlines)), "dygraph.min.js is Debian's, its last line (the map) removed")
        // Every page links its scripts inside the report, nothing from the network.
        for page in ["rep/small/index.html", "rep/small/run-1/index.html"] {
            let html = try String(contentsOfFile: "\(dir)/\(page)", encoding: .utf8)
            #expect(html.contains("assets/dygraph.min.js\"></script>"))
            #expect(!html.contains("src=\"http") && !html.contains("href=\"http"), "\(page) loads nothing from the network")
        }
    }

    @Test("a label that is HTML and script reaches the chart data as JSON escapes: no '<' between a data block's tags")
    func escapedData() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReportTests.experiment(in: dir)
        let id = try cli.sqlite("\(dir)/lab.sqlite", "SELECT min(run_id) FROM runs WHERE clip LIKE 'a<script>%'")[0]
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", id], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        for page in ["rep/tiny/index.html", "rep/tiny/run-\(id)/index.html"] {
            let html = try String(contentsOfFile: "\(dir)/\(page)", encoding: .utf8)
            var blocks = 0
            var rest = Substring(html)
            while let open = rest.range(of: "class=\"enclab-chart-data\"") {
                rest = rest[open.upperBound...]
                let start = try #require(rest.firstIndex(of: ">"))
                let end = try #require(rest.range(of: "</script>"))
                let block = rest[rest.index(after: start)..<end.lowerBound]
                #expect(!block.contains("<"), "\(page): a data block holds '<'")
                if page.contains("run-") { #expect(block.contains("\\u003cscript\\u003e"), "\(page): the clip's name is in the data, escaped") }
                blocks += 1
                rest = rest[end.upperBound...]
            }
            #expect(blocks >= 1, "\(page) has chart data")
        }
    }

    @Test("an experiment named assets gets a folder of its own (its name mapped with a hash); assets/ stays the charts' scripts")
    func experimentNamedAssets() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReportTests.small(in: dir, file: "small.json", db: "lab.sqlite")
        _ = try cli.sqlite("\(dir)/lab.sqlite", "UPDATE runs SET experiment = 'assets'")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        // The folder: the name's safe form, '-', the first 8 hex digits of the SHA-256 of "assets" (sha256sum's).
        let digest = try CLI.process("/bin/sh", ["-c", "printf %s assets | sha256sum | cut -c1-8"], in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let experiment = "\(dir)/rep/assets-\(digest)/index.html"
        #expect(FileManager.default.fileExists(atPath: experiment), "no \(experiment)")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rep/assets-\(digest)/run-1/index.html"))
        #expect(try String(contentsOfFile: "\(dir)/rep/index.html", encoding: .utf8).contains("href=\"assets-\(digest)/index.html\""))
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rep/assets/dygraph.min.js"))
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep/assets/index.html"))
    }

    @Test("per-rate tables in chromium: every row pairs points at comparable rates as sqlite3 reads them (an equal target_kbps, or a value read between the test runs around the anchor's rate or PSNR), never by rank")
    func perRatePairs() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 3 points a configuration (too few for BD-rate: per-rate tables): abr (the anchor) and cbr asked for the same
        // rates, crf on CRF values (no target).
        let modes: [[String: Any]] = [200, 400, 800].map { ["rc": "abr", "bitrate": $0] } + [200, 400, 800].map { ["rc": "cbr", "bitrate": $0] }
            + [22, 30, 38].map { ["rc": "crf", "crf": $0] }
        try ReportSummaryTests.run(in: dir, name: "pr", modes: modes)
        let r = try CLI.process(CLI.binary, ["report", "--db", "pr.sqlite", "--out", "rep"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/pr/index.html", encoding: .utf8)
        #expect(page.contains("data-pairing=\"target\"") && page.contains("data-pairing=\"interpolated\""))
        let runPage = try #require(FileManager.default.enumerator(atPath: "\(dir)/rep/pr")?.compactMap { $0 as? String }
            .first { $0.hasPrefix("run-") && $0.hasSuffix("/index.html") })
        let check = try CLI.process("/usr/bin/python3", [Self.script, "--db", "pr.sqlite", "--report", "rep", "--run-page", "rep/pr/\(runPage)"], in: dir, limit: 900)
        #expect(check.status == 0 && check.stdout.hasSuffix("ok\n"), "\(check.stdout)\(check.stderr)")
    }

    @Test("the experiment page's summary table fits a 1280 px window without scrolling")
    func summaryTableFits() throws {
        try Self.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ReportTests.small(in: dir, file: "small.json", db: "lab.sqlite")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let check = try CLI.process("/usr/bin/python3", [Self.script, "--table-page", "rep/small/index.html"], in: dir)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }
}
