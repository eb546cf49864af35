import Foundation
import Testing
import EncoderLab

/// `enclab report` run by the built binary on a small experiment: the pages exist, every link resolves, every plot
/// file is non-empty, user text is escaped, a missing stream is reported and not fatal, and the worst-PSNR frame's
/// pictures are the right pictures (checked against ffmpeg's own extraction of the same frame numbers).
@Suite("enclab report, end to end", .serialized)
struct ReportTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// A clip name that is HTML if pasted into a page (no `/`: it is a file name).
    static let hostileClip = #"a<script>alert("x")<b>&amp;'.y4m"#
    /// Frames skipped at the start of each clip (`seek`): the source picture of display index d is picture 3 + d.
    static let seek = 3

    /// 2 clips x (crf at 4 rates, cbr at 4 rates from 300 kbit/s: below 192 x264 picks level 1b, whose level_idc the
    /// lab's stream check reads differently), B-frames on (display order differs from decode order), `seek` 3,
    /// run by the built enclab into `dir/out` with `dir/lab.sqlite`.
    static func experiment(in dir: String) throws {
        try SyntheticClip(width: 64, height: 48, frames: 30, seed: 7).write(to: "\(dir)/c.y4m")
        try SyntheticClip(width: 64, height: 48, frames: 30, seed: 8).write(to: "\(dir)/\(hostileClip)")
        let json: [String: Any] = [
            "name": "tiny", "clips": ["c.y4m", hostileClip],
            "base": ["threads": 1, "preset": "ultrafast", "bframes": 2, "seek": seek],
            "grid": ["mode": [["rc": "crf", "crf": 18], ["rc": "crf", "crf": 26], ["rc": "crf", "crf": 34], ["rc": "crf", "crf": 42],
                              ["rc": "cbr", "bitrate": 300], ["rc": "cbr", "bitrate": 500], ["rc": "cbr", "bitrate": 800], ["rc": "cbr", "bitrate": 1200]]],
        ]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/tiny.json"))
        let r = try CLI.process(CLI.binary, ["run", "tiny.json", "--db", "lab.sqlite", "--out", "out"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// The `href` and `src` attribute values of an HTML text (as written, still escaped).
    static func links(_ html: String) -> [String] {
        var found: [String] = []
        for attribute in ["href=\"", "src=\""] {
            var rest = Substring(html)
            while let start = rest.range(of: attribute) {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { break }
                found.append(String(rest[..<end]))
                rest = rest[end...]
            }
        }
        return found
    }

    /// Every page reachable from `index` by links, each once (absolute paths).
    static func pages(from index: String) throws -> [String] {
        var seen: [String] = [], queue = [index]
        while let page = queue.popLast() {
            let real = URL(fileURLWithPath: page).standardized.path
            guard !seen.contains(real) else { continue }
            seen.append(real)
            let html = try String(contentsOfFile: real, encoding: .utf8)
            for link in links(html) where link.hasSuffix(".html") {
                queue.append(Paths.parent(real) + "/" + link)
            }
        }
        return seen
    }

    /// ffmpeg's RGB of a picture: `input` (ffmpeg arguments up to the output) converted to rgb24 raw bytes.
    static func rgb(_ input: [String], in dir: String) throws -> Data {
        let out = "\(dir)/rgb-\(UUID().uuidString).raw"
        let r = try CLI.process("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y"] + input + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", out], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    @Test("report: pages exist, every link resolves to a non-empty file, user text is escaped, missing streams are marked, the worst frame is the right one")
    func report() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.experiment(in: dir)
        let db = "\(dir)/lab.sqlite"
        let ids = try cli.sqlite(db, "SELECT run_id FROM runs WHERE status = 'done' ORDER BY run_id")
        #expect(ids.count == 16)
        // The run whose stream goes missing, and the run whose worst frame is checked (on the hostile clip).
        let gone = ids[1]
        let checked = try cli.sqlite(db, "SELECT min(run_id) FROM runs WHERE clip LIKE 'a<script>%' AND settings LIKE '%\"rc\":\"cbr\"%'")[0]
        let goneStream = try cli.sqlite(db, "SELECT stream_path FROM runs WHERE run_id = \(gone)")[0]
        try FileManager.default.removeItem(atPath: "\(dir)/\(goneStream)")

        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "\(gone),\(checked)", "--worst", "1"],
                                in: dir, limit: 180)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "rep/index.html\n")
        #expect(r.stderr.contains("enclab: note: stream missing for run \(gone) (marked in the report)"), "\(r.stderr)")

        // Pages and links: the index, the experiment, and at least the two run pages asked for.
        let pages = try Self.pages(from: "\(dir)/rep/index.html")
        let root = URL(fileURLWithPath: "\(dir)/rep").standardized.path
        #expect(pages.contains("\(root)/tiny/index.html"))
        #expect(pages.contains("\(root)/tiny/run-\(gone)/index.html") && pages.contains("\(root)/tiny/run-\(checked)/index.html"), "\(pages)")
        var plotFiles = 0
        for page in pages {
            let html = try String(contentsOfFile: page, encoding: .utf8)
            for link in Self.links(html) {
                if link.hasPrefix("#") {
                    // gnuplot's SVG refers to its own point symbols by id.
                    #expect(html.contains("id=\"\(link.dropFirst())\""), "\(page): \(link)")
                    continue
                }
                #expect(!link.contains(":"), "\(page): \(link) leaves the report")
                let target = URL(fileURLWithPath: Paths.parent(page) + "/" + link).standardized.path
                #expect(target.hasPrefix(root + "/"), "\(page): \(link)")
                let size = (try? FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) ?? nil
                #expect((size ?? 0) > 0, "\(page): \(link) is missing or empty")
                if [".png", ".svg", ".gp", ".dat"].contains(where: link.hasSuffix) { plotFiles += 1 }
            }
            // The only scripts are the report's own: the table sorter, the charts' scripts in the report's assets/
            // and their data (JSON, not run); the hostile name is text.
            for script in html.components(separatedBy: "<script").dropFirst() {
                #expect(script.hasPrefix(">\ndocument.querySelectorAll('table.sortable')") || script.hasPrefix(" type=\"application/json\" class=\"enclab-chart-data\"")
                        || script.range(of: #"^ src="(\.\./)+assets/[a-z.-]+\.js"></script>"#, options: .regularExpression) != nil, "\(page): \(script.prefix(80))")
            }
            // (gnuplot's inline SVG escapes `<` and `&` of the titles it draws, and leaves quotes and `>` as they are.)
            #expect(!html.contains("<script>alert") && !html.contains("<b>&amp;'"), "\(page)")
        }
        #expect(plotFiles > 40, "\(plotFiles)")
        let experiment = try String(contentsOfFile: "\(dir)/rep/tiny/index.html", encoding: .utf8)
        #expect(experiment.contains("a&lt;script&gt;alert(&quot;x&quot;)&lt;b&gt;&amp;amp;&#39;.y4m"))
        // Curves: one plot per clip, 2 configurations x 4 points each, read back from the data file.
        for n in 1...2 {
            let data = try String(contentsOfFile: "\(dir)/rep/tiny/rq-\(n).dat", encoding: .utf8)
            #expect(data.split(separator: "\n").filter { $0.hasPrefix("# ") && !$0.hasPrefix("# bitrate") } == ["# crf", "# cbr"])
            #expect(data.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 8)
        }
        #expect(experiment.contains("BD-rate against the anchor <b>crf</b>"))

        // The missing stream: reported on its page and in the table, not fatal.
        let gonePage = try String(contentsOfFile: "\(dir)/rep/tiny/run-\(gone)/index.html", encoding: .utf8)
        #expect(gonePage.contains("is missing on this machine"))
        #expect(experiment.contains("stream missing"))

        // The worst-PSNR frame of the checked run: the lowest psnr_avg, as sqlite3 reads it.
        let worst = try cli.sqlite(db, "SELECT display_index FROM frames WHERE run_id = \(checked) AND psnr_avg IS NOT NULL ORDER BY psnr_avg, display_index LIMIT 1")[0]
        let d = try #require(Int(worst))
        let page = try String(contentsOfFile: "\(dir)/rep/tiny/run-\(checked)/index.html", encoding: .utf8)
        #expect(page.contains("Frame display_index \(d) "), "worst \(d)")
        #expect(page.contains("Checked: the two pictures' squared error"))
        // B-frames reorder: the worst frame's coded index differs from some display index (the check would catch a mix-up).
        let reordered = try cli.sqlite(db, "SELECT count(*) FROM frames WHERE run_id = \(checked) AND coded_index != display_index")[0]
        #expect(Int(reordered)! > 0)
        // ffmpeg picks picture seek + d of the source and picture d (display order) of the stream on its own; the
        // report's PNGs hold the same RGB.
        let stream = try cli.sqlite(db, "SELECT stream_path FROM runs WHERE run_id = \(checked)")[0]
        let folder = "\(dir)/rep/tiny/run-\(checked)"
        let source = try Self.rgb(["-i", "file:\(dir)/\(Self.hostileClip)", "-vf", "select=eq(n\\,\(Self.seek + d))", "-fps_mode", "passthrough"], in: dir)
        let decoded = try Self.rgb(["-f", "h264", "-i", "file:\(dir)/\(stream)", "-vf", "select=eq(n\\,\(d))", "-fps_mode", "passthrough"], in: dir)
        #expect(source.count == 64 * 48 * 3 && decoded.count == 64 * 48 * 3)
        #expect(try Self.rgb(["-i", "file:\(folder)/worst-source.png"], in: dir) == source)
        #expect(try Self.rgb(["-i", "file:\(folder)/worst-decoded.png"], in: dir) == decoded)
        // And not the neighbours' pictures (the clip moves from picture to picture).
        let next = try Self.rgb(["-i", "file:\(dir)/\(Self.hostileClip)", "-vf", "select=eq(n\\,\(Self.seek + d + 1))", "-fps_mode", "passthrough"], in: dir)
        #expect(next != source)
    }

    @Test("report refuses an unknown anchor (64), an unknown run id (66) and a missing database (66), writing nothing")
    func refusals() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = try cli.enclab(["report", "--db", "none.sqlite"], in: dir)
        #expect(missing.status == 66 && missing.stderr == "enclab: none.sqlite: no such database\n")
        try Self.experiment(in: dir)
        let anchor = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--anchor", "vbr"], in: dir)
        #expect(anchor.status == 64 && anchor.stderr.hasPrefix("enclab: --anchor 'vbr': no configuration of that name has curve points (configurations: cbr; crf)"), "\(anchor.stderr)")
        let run = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "999"], in: dir)
        #expect(run.status == 66 && run.stderr == "enclab: lab.sqlite: no run with id 999\n", "\(run.stderr)")
        let bad = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1,x"], in: dir)
        #expect(bad.status == 64)
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep"))
    }

    /// One clip (64x48, 30 frames), crf and cbr at 4 rates each (threads 1, ultrafast), plus `extra` keys at the
    /// experiment's top level and `cbrExtra` settings in each cbr grid point; run by the built enclab into `dir/out`
    /// with database `dir/db`.
    static func small(in dir: String, file: String, db: String, extra: [String: Any] = [:], cbrExtra: [String: Any] = [:]) throws {
        if !FileManager.default.fileExists(atPath: "\(dir)/c.y4m") {
            try SyntheticClip(width: 64, height: 48, frames: 30, seed: 7).write(to: "\(dir)/c.y4m")
        }
        let crf: [[String: Any]] = [18, 26, 34, 42].map { ["rc": "crf", "crf": $0] }
        let cbr: [[String: Any]] = [300, 500, 800, 1200].map { ["rc": "cbr", "bitrate": $0].merging(cbrExtra) { a, _ in a } }
        var json: [String: Any] = ["name": "small", "clips": ["c.y4m"], "base": ["threads": 1, "preset": "ultrafast", "bframes": 2],
                                   "grid": ["mode": crf + cbr]]
        json.merge(extra) { _, b in b }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/\(file)"))
        let r = try CLI.process(CLI.binary, ["run", file, "--db", db, "--out", "out-\(db)"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
    }

    @Test("report anchor from the experiment file: stored in runs.settings as $.report.anchor, used by the report, --anchor wins over it")
    func anchorFromFile() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.small(in: dir, file: "small.json", db: "lab.sqlite", extra: ["report": ["anchor": "cbr"]])
        // Every run carries the file's report object (sqlite3's JSON functions read it).
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT DISTINCT json_extract(settings, '$.report.anchor') FROM runs") == ["cbr"])
        #expect(try cli.sqlite("\(dir)/lab.sqlite", "SELECT count(*) FROM runs WHERE json_valid(settings)") == ["8"])
        // Without --anchor, the default would be crf (the first configuration, lowest run id); the file says cbr.
        let first = try cli.sqlite("\(dir)/lab.sqlite", "SELECT json_extract(settings, '$.rc') FROM runs ORDER BY run_id LIMIT 1")
        #expect(first == ["crf"])
        let r = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/small/index.html", encoding: .utf8)
        #expect(page.contains("BD-rate against the anchor <b>cbr</b>"), "\(page)")
        #expect(page.contains("anchor from the experiment file (report.anchor, stored in runs.settings with run 8)"))
        // The table compares the other configuration, crf, against it.
        #expect(page.contains("<td class=\"text\">crf</td><td>4</td>"))
        // The command line wins.
        let c = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep2", "--runs", "1", "--anchor", "crf"], in: dir)
        #expect(c.status == 0, "\(c.stderr)")
        let page2 = try String(contentsOfFile: "\(dir)/rep2/small/index.html", encoding: .utf8)
        #expect(page2.contains("BD-rate against the anchor <b>crf</b>") && !page2.contains("BD-rate against the anchor <b>cbr</b>"))
        #expect(page2.contains("anchor from --anchor (the experiment file's report.anchor 'cbr' overridden)"))
    }

    @Test("an experiment file's report.anchor that names no configuration: the report refuses it (65), naming the experiment and the value; --anchor overrides it")
    func badAnchorFromFile() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.small(in: dir, file: "small.json", db: "lab.sqlite", extra: ["report": ["anchor": "vbr"]])
        let r = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: dir)
        #expect(r.status == 65)
        #expect(r.stderr == "enclab: lab.sqlite: experiment 'small': report.anchor 'vbr' of its experiment file (runs.settings $.report.anchor of run 8) names no configuration with curve points (configurations: cbr; crf); correct the file and run it again, or give --anchor\n", "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/rep"))
        let c = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1", "--anchor", "crf"], in: dir)
        #expect(c.status == 0, "\(c.stderr)")
        // And the experiment file's own shape is checked when it is read.
        let bad: [String: Any] = ["name": "x", "clips": ["c.y4m"], "report": ["anchor": ""]]
        try JSONSerialization.data(withJSONObject: bad).write(to: URL(fileURLWithPath: "\(dir)/bad.json"))
        let b = try cli.enclab(["run", "bad.json", "--db", "bad.sqlite"], in: dir)
        #expect(b.status == 64 && b.stderr.hasPrefix("enclab: bad.json: key 'report.anchor' must be a configuration name"), "\(b.stderr)")
    }

    @Test("the report key changes no run key: the same runs with and without it have the same keys and, but for $.report, the same settings")
    func reportKeyKeepsRunKeys() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.small(in: dir, file: "plain.json", db: "a.sqlite")
        try Self.small(in: dir, file: "anchored.json", db: "b.sqlite", extra: ["report": ["anchor": "cbr"]])
        let a = "\(dir)/a.sqlite", b = "\(dir)/b.sqlite"
        let keysA = try cli.sqlite(a, "SELECT run_key FROM runs ORDER BY run_key")
        let keysB = try cli.sqlite(b, "SELECT run_key FROM runs ORDER BY run_key")
        #expect(keysA.count == 8 && Set(keysA).count == 8)
        #expect(keysA == keysB)
        // The settings differ only by the report object (compared by sqlite3 across the two databases).
        let differing = try cli.sqlite(b, """
            ATTACH '\(a)' AS a;
            SELECT count(*) FROM runs r JOIN a.runs p ON p.run_key = r.run_key
            WHERE json_remove(r.settings, '$.report') IS NOT p.settings OR json(r.settings) = json(p.settings)
            """)
        #expect(differing == ["0"])
        // Run again with the report key into the first database: every run is already done there (same keys).
        let again = try CLI.process(CLI.binary, ["run", "anchored.json", "--db", "a.sqlite", "--out", "out-a.sqlite"], in: dir)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("8 runs done (8 already done before)"), "\(again.stdout)")
        #expect(try cli.sqlite(a, "SELECT count(*) FROM runs") == ["8"])
    }

    @Test("runs encoded with --verify none are marked: runs table, run page, curves and BD-rate tables that include them")
    func unverifiedRuns() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.small(in: dir, file: "small.json", db: "lab.sqlite", cbrExtra: ["verify": "none"])
        let db = "\(dir)/lab.sqlite"
        let unverified = try cli.sqlite(db, "SELECT run_id FROM run_metrics WHERE psnr_source = 'x264' ORDER BY run_id")
        let verified = try cli.sqlite(db, "SELECT run_id FROM run_metrics WHERE psnr_source = 'lab' ORDER BY run_id")
        #expect(unverified.count == 4 && verified.count == 4)
        #expect(try cli.sqlite(db, "SELECT run_id FROM runs WHERE json_extract(settings, '$.resolved.verify') = 'none' ORDER BY run_id") == unverified)
        let r = try cli.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "\(unverified[0]),\(verified[0])"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/small/index.html", encoding: .utf8)
        // The runs table: each row's first cell starts with its run id; the unverified ones, and only they, carry the badge.
        let rows = page.components(separatedBy: "<tr>").dropFirst().filter { $0.hasPrefix("<td") }
        func row(_ id: String) -> String? {
            rows.first { $0.hasPrefix("<td class=\"text\"><span data-v=\"\(id)\">\(id) ") || $0.hasPrefix("<td class=\"text\"><span data-v=\"\(id)\"><a href=\"run-\(id)/index.html\">\(id)</a> ") }
        }
        for id in unverified { #expect(row(id)?.contains("<span class=\"unverified\">unverified: x264 PSNR</span>") == true, "run \(id)") }
        for id in verified { #expect(row(id).map { !$0.contains("unverified") } == true, "run \(id)") }
        // The curves and the BD-rate table say which configuration holds unverified runs.
        #expect(page.contains("This plot includes 4 unverified runs (--verify none: PSNR from x264's own report, not the lab's decode): configuration cbr verify=none."), "\(page)")
        #expect(page.contains("<td class=\"text\">cbr verify=none <span class=\"unverified\">unverified</span></td>"))
        // Run pages.
        let runPage = try String(contentsOfFile: "\(dir)/rep/small/run-\(unverified[0])/index.html", encoding: .utf8)
        #expect(runPage.contains("Unverified run: encoded with --verify none"))
        let verifiedPage = try String(contentsOfFile: "\(dir)/rep/small/run-\(verified[0])/index.html", encoding: .utf8)
        #expect(!verifiedPage.contains("Unverified run"))
    }
}
