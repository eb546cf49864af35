import Foundation
import Testing
import EncoderLab

/// The experiment page's summary table (at most 10 columns by default, the rest behind a chooser, numbers as
/// sqlite3 reads run_metrics), its warnings (each present when its trigger holds, absent otherwise), the per-rate
/// table that replaces BD-rate below 4 points, and `enclab check --db` runs with their rules and violations.
@Suite("enclab report: summary table, warnings, check runs", .serialized)
struct ReportSummaryTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// The `<table id="ID" ...>...</table>` of a page.
    static func table(_ id: String, in html: String) -> String? {
        guard let start = html.range(of: "<table id=\"\(id)\"") else { return nil }
        guard let end = html[start.upperBound...].range(of: "</table>") else { return nil }
        return String(html[start.lowerBound..<end.upperBound])
    }

    /// The cells (`<th ...>` or `<td ...>` open tags with their content) of a table's rows: per row the open tag and
    /// the content of each cell, in order.
    static func cells(_ table: String, tag: String) -> [[(open: String, content: String)]] {
        table.components(separatedBy: "<tr>").dropFirst().map { row in
            var out: [(String, String)] = []
            var rest = Substring(row)
            while let s = rest.range(of: "<\(tag)") {
                guard let close = rest[s.upperBound...].firstIndex(of: ">"),
                      let e = rest[close...].range(of: "</\(tag)>") else { break }
                out.append((String(rest[s.lowerBound...close]), String(rest[rest.index(after: close)..<e.lowerBound])))
                rest = rest[e.upperBound...]
            }
            return out
        }.filter { !$0.isEmpty }
    }

    /// Text of HTML: tags removed, the report's character references read back.
    static func text(_ html: String) -> String {
        var out = "", inTag = false
        for c in html { if c == "<" { inTag = true } else if c == ">" { inTag = false } else if !inTag { out.append(c) } }
        return out.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// One clip (64x48, 25 fps, `frames` frames) and the grid `modes` (threads 1, ultrafast), run by the built enclab.
    static func run(in dir: String, name: String, modes: [[String: Any]], frames: Int = 30, base: [String: Any] = [:]) throws {
        if !FileManager.default.fileExists(atPath: "\(dir)/c.y4m") {
            try SyntheticClip(width: 64, height: 48, frames: frames, seed: 7).write(to: "\(dir)/c.y4m")
        }
        let json: [String: Any] = ["name": name, "clips": ["c.y4m"], "base": ["threads": 1, "preset": "ultrafast"].merging(base) { _, b in b },
                                   "grid": ["mode": modes]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/\(name).json"))
        let r = try CLI.process(CLI.binary, ["run", "\(name).json", "--db", "\(name).sqlite", "--out", "out-\(name)"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// Reports `db` into `dir/rep-NAME` and returns the experiment page `experiment`.
    func report(_ dir: String, db: String, experiment: String, extra: [String] = []) throws -> String {
        let out = "rep-\(db)"
        let r = try cli.enclab(["report", "--db", db, "--out", out] + extra, in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        return try String(contentsOfFile: "\(dir)/\(out)/\(experiment)/index.html", encoding: .utf8)
    }

    @Test("the runs table shows at most 10 columns by default, the others hidden behind a chooser; its numbers are run_metrics as sqlite3 reads them")
    func summaryTable() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let modes: [[String: Any]] = [18, 26, 34, 42].map { ["rc": "crf", "crf": $0] } + [300, 500, 800, 1200].map { ["rc": "cbr", "bitrate": $0] }
        try Self.run(in: dir, name: "sum", modes: modes, base: ["bframes": 2])
        let page = try report(dir, db: "sum.sqlite", experiment: "sum")
        let table = try #require(Self.table("runs", in: page))
        let headers = try #require(Self.cells(table, tag: "th").first)
        let shown = headers.filter { !$0.open.contains(" hidden") }
        #expect(shown.count <= 10 && shown.count >= 9, "\(shown.map(\.content))")
        // The old table had 58 columns; every run_metrics column is still there, hidden, once.
        let columns = try cli.sqlite("\(dir)/sum.sqlite", "SELECT name FROM pragma_table_info('run_metrics') WHERE name NOT IN ('run_id', 'psnr_source')")
        #expect(columns.count > 40)
        let hidden = headers.filter { $0.open.contains(" hidden") }.map(\.content)
        let named = Set(shown.map(\.content) + hidden)
        #expect(headers.count == named.count, "a header twice: \(headers.map(\.content))")
        let summarised: Set<String> = ["target_kbps", "bitrate_kbps", "target_error_pct", "peak_1s_kbps", "vbv_underflows", "vbv_overflows",
                                       "psnr_global", "ssim_mean", "gop_max_frames", "gop_max_seconds"]
        for c in columns where !summarised.contains(c) { #expect(hidden.contains(c), "\(c) not in the chooser") }
        // The chooser has one checkbox per hidden column, pointing at its index.
        let boxes = page.components(separatedBy: "<input type=\"checkbox\" data-col=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        #expect(boxes == Array(shown.count..<headers.count))
        // Each row: the default cells, against sqlite3's reading of run_metrics (same rounding: printf).
        let rows = Self.cells(table, tag: "td")
        #expect(rows.count == 8)
        let expected = try cli.sqlite("\(dir)/sum.sqlite", """
            SELECT run_id, CASE WHEN target_kbps IS NULL THEN '' ELSE printf('%.1f', target_kbps) END, printf('%.1f', bitrate_kbps),
                   CASE WHEN target_error_pct IS NULL THEN '' ELSE printf('%.2f', target_error_pct) END,
                   printf('%.1f', peak_1s_kbps), printf('%.3f', psnr_global), CASE WHEN ssim_mean IS NULL THEN '' ELSE printf('%.4f', ssim_mean) END,
                   gop_max_frames || '; longest ' || printf('%.3f', gop_max_seconds) || ' s',
                   ifnull(vbv_underflows || ' / ' || vbv_overflows, '')
            FROM run_metrics ORDER BY run_id
            """)
        #expect(expected.count == 8)
        for (row, line) in zip(rows, expected) {
            let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let visible = row.filter { !$0.open.contains(" hidden") }.map { Self.text($0.content) }
            #expect(visible.count == shown.count)
            #expect(visible[0].hasPrefix(f[0] + " "), "\(visible[0])")
            #expect(visible[1] == f[1] && visible[2] == f[2] && visible[3] == f[3], "\(visible) \(f)")
            #expect(visible[4].hasPrefix(f[4]), "\(visible[4]) \(f[4])")
            #expect(visible[5] == f[8] && visible[6] == f[5] && visible[7] == f[6] && visible[8] == f[7], "\(visible) \(f)")
        }
        // peak / target of a CBR run, written out: peak_1s_kbps / target_kbps.
        let ratio = try cli.sqlite("\(dir)/sum.sqlite", "SELECT run_id, printf('%.2f', peak_1s_kbps / target_kbps) FROM run_metrics WHERE target_kbps > 0 ORDER BY run_id LIMIT 1")[0]
            .split(separator: "|").map(String.init)
        let cbrRow = try #require(rows.first { Self.text($0[0].content).hasPrefix(ratio[0] + " ") })
        #expect(Self.text(cbrRow[4].content).hasSuffix("(\(ratio[1])×)"), "\(cbrRow[4].content)")
    }

    /// crf at 4 low CRFs (high rates and PSNR) and CBR at 4 very low rates (low PSNR) on 64x48 in `dir`: the experiment
    /// page, and per rc (crf first) the lowest and highest of run_metrics' `column` as stored and with `digits` decimals.
    func rangesApart(_ dir: String, column: String, digits: Int) throws -> (page: String, ranges: [[String]]) {
        let modes: [[String: Any]] = [8, 10, 12, 14].map { ["rc": "crf", "crf": $0] } + [20, 24, 28, 32].map { ["rc": "cbr", "bitrate": $0] }
        try Self.run(in: dir, name: "apart", modes: modes)
        let page = try report(dir, db: "apart.sqlite", experiment: "apart")
        let ranges = try cli.sqlite("\(dir)/apart.sqlite", """
            SELECT json_extract(r.settings, '$.rc'), min(m.\(column)), max(m.\(column)), printf('%.\(digits)f', min(m.\(column))), printf('%.\(digits)f', max(m.\(column)))
            FROM run_metrics m JOIN runs r USING (run_id) GROUP BY 1 ORDER BY min(r.run_id)
            """).map { $0.split(separator: "|").map(String.init) }
        try #require(ranges.count == 2 && ranges[0][0] == "crf" && ranges[1][0] == "cbr", "\(ranges)")
        return (page, ranges)
    }

    @Test("warnings: 4 points a configuration whose PSNR ranges overlap by less than 75 %: the warning names both configurations with their PSNR ranges (sqlite3) and the overlap, and the per-rate differences table stands below the refused BD-rate")
    func qualityRangesApart() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (page, ranges) = try rangesApart(dir, column: "psnr_global", digits: 3)
        // The overlap by hand: max(min(hi) - max(lo), 0) / (max(hi) - min(lo)).
        let (aLo, aHi, bLo, bHi) = (Double(ranges[0][1])!, Double(ranges[0][2])!, Double(ranges[1][1])!, Double(ranges[1][2])!)
        let overlap = max(min(aHi, bHi) - max(aLo, bLo), 0) / (max(aHi, bHi) - min(aLo, bLo))
        try #require(overlap < 0.75, "the ranges overlap by \(overlap)")
        let percent = try cli.sqlite("\(dir)/apart.sqlite", "SELECT printf('%.1f', \(overlap * 100))")[0]
        #expect(page.contains("<li class=\"no-overlap\"><b>PSNR ranges too far apart for BD-rate:</b> c.y4m: cbr (PSNR \(ranges[1][3])-\(ranges[1][4]) dB) against the anchor crf (PSNR \(ranges[0][3])-\(ranges[0][4]) dB), \(percent) % overlap"), "\(page)")
        #expect(page.contains("the per-rate differences table below the BD-rate table"))
        // The BD-rate cells refused, the per-rate table below it: one row per anchor (crf) run.
        #expect(page.contains("<span class=\"refused\">"))
        let perRate = try #require(page.components(separatedBy: "Per-rate differences of <b>cbr</b> against <b>crf</b>").dropFirst().first, "no per-rate table")
        #expect(Self.cells(try #require(perRate.components(separatedBy: "</table>").first), tag: "td").count == 4)
    }

    @Test("warnings: 4 points a configuration whose bitrate ranges overlap by less than 75 % (log10, as BD-PSNR measures it): the warning names both configurations with their bitrate ranges (sqlite3) and the overlap, beside the refused BD-PSNR cells")
    func rateRangesApart() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (page, ranges) = try rangesApart(dir, column: "bitrate_kbps", digits: 1)
        // The overlap by hand on log10 of the rates: max(min(hi) - max(lo), 0) / (max(hi) - min(lo)).
        let (aLo, aHi, bLo, bHi) = (log10(Double(ranges[0][1])!), log10(Double(ranges[0][2])!), log10(Double(ranges[1][1])!), log10(Double(ranges[1][2])!))
        let overlap = max(min(aHi, bHi) - max(aLo, bLo), 0) / (max(aHi, bHi) - min(aLo, bLo))
        try #require(overlap < 0.75, "the rate ranges overlap by \(overlap)")
        let percent = try cli.sqlite("\(dir)/apart.sqlite", "SELECT printf('%.1f', \(overlap * 100))")[0]
        #expect(page.contains("<li class=\"rates-apart\"><b>Bitrate ranges too far apart for BD-PSNR:</b> c.y4m: cbr (bitrate \(ranges[1][3])-\(ranges[1][4]) kbit/s) against the anchor crf (bitrate \(ranges[0][3])-\(ranges[0][4]) kbit/s), \(percent) % overlap"), "\(page)")
        // The BD-PSNR cells it explains: refused on the log10(rate) ranges.
        #expect(page.contains("the curves&#39; log10(rate) ranges overlap by") || page.contains("the curves' log10(rate) ranges overlap by"), "\(page)")
    }

    @Test("warnings: each appears when its trigger holds, with the number, and not otherwise")
    func warnings() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Clean: crf and cbr at 4 rates each, verified, increasing PTS: no short-clip, few-points, unverified or PTS warning.
        let four: [[String: Any]] = [18, 26, 34, 42].map { ["rc": "crf", "crf": $0] } + [300, 500, 800, 1200].map { ["rc": "cbr", "bitrate": $0] }
        try Self.run(in: dir, name: "clean", modes: four)
        let clean = try report(dir, db: "clean.sqlite", experiment: "clean")
        for cls in ["short-clip", "few-points", "unverified-runs", "non-increasing-pts"] {
            #expect(!clean.contains("<li class=\"\(cls)\""), "\(cls) without its trigger")
        }
        #expect(!clean.contains("per-rate differences below"))
        // CBR overflows: the warning iff a CBR run has vbv_overflows > 0 (sqlite3's reading).
        let overflowing = try cli.sqlite("\(dir)/clean.sqlite", "SELECT count(*) FROM run_metrics m JOIN runs r USING (run_id) WHERE json_extract(r.settings, '$.rc') = 'cbr' AND m.vbv_overflows > 0")[0]
        #expect(clean.contains("<li class=\"cbr-filler\"") == (overflowing != "0"), "overflowing CBR runs: \(overflowing)")
        if overflowing != "0" {
            let filler = try cli.sqlite("\(dir)/clean.sqlite", """
                SELECT sum(filler_bytes) FROM frames WHERE run_id IN (SELECT run_id FROM run_metrics WHERE vbv_overflows > 0)
                AND run_id IN (SELECT run_id FROM runs WHERE json_extract(settings, '$.rc') = 'cbr')
                """)[0]
            #expect(clean.contains("frames.filler_bytes: \(filler) bytes"), "filler \(filler)")
        }

        // Triggered: ABR at 3 rates on a 1.2 s clip, unverified; crf at 3 rates.
        let three: [[String: Any]] = [300, 600, 1200].map { ["rc": "abr", "bitrate": $0, "verify": "none"] } + [20, 30, 40].map { ["rc": "crf", "crf": $0] }
        try Self.run(in: dir, name: "short", modes: three)
        let short = try report(dir, db: "short.sqlite", experiment: "short")
        let span = try cli.sqlite("\(dir)/short.sqlite", "SELECT printf('%.3f', min(span_seconds)) FROM run_metrics m JOIN runs r USING (run_id) WHERE json_extract(r.settings, '$.rc') = 'abr'")[0]
        #expect(Double(span)! < 30)
        #expect(short.contains("<li class=\"short-clip\"><b>Clip too short for ABR's start-up:</b> the runs' streams of c.y4m span at the shortest \(span) s (run_metrics.span_seconds, else runs.duration_s), under 30 s (3 ABR runs"), "\(span)")
        #expect(short.contains("<li class=\"few-points\"><b>Fewer than 4 points for BD-rate:</b> c.y4m: abr verify=none has 3 points, crf has 3 points"))
        #expect(short.contains("<li class=\"unverified-runs\"><b>Unverified:</b> 3 runs were encoded with --verify none"))
        #expect(!short.contains("<li class=\"non-increasing-pts\""))
        // No orange refusal cells, the per-rate table instead: its differences as arithmetic on sqlite3's numbers
        // (crf has no target: the crf curve read at each abr run's rate and PSNR, straight lines in log10(rate),
        // within crf's measured range only; never paired by rank).
        #expect(!short.contains("<span class=\"refused\">"))
        #expect(short.contains("no BD: 3 points (4 needed), per-rate differences below"))
        let points = try cli.sqlite("\(dir)/short.sqlite", """
            SELECT json_extract(r.settings, '$.rc'), m.bitrate_kbps, m.psnr_global FROM run_metrics m JOIN runs r USING (run_id) ORDER BY r.run_id
            """).map { $0.split(separator: "|").map(String.init) }
        let anchor = points.filter { $0[0] == "abr" }.map { (Double($0[1])!, Double($0[2])!) }.sorted { $0.0 < $1.0 }
        let test = points.filter { $0[0] == "crf" }.map { (Double($0[1])!, Double($0[2])!) }.sorted { $0.0 < $1.0 }
        let perRate = try #require(short.components(separatedBy: "Per-rate differences of").dropFirst().first)
        let perRows = Self.cells(try #require(perRate.components(separatedBy: "</table>").first), tag: "td")
        #expect(perRows.count == 3)
        for (row, a) in zip(perRows, anchor) {
            #expect(row[0].content.contains("data-pairing=\"interpolated\""), "\(row[0].content)")
            // The crf PSNR at the abr run's rate: between the two crf points around it, t = (log r - log r0) / (log r1 - log r0).
            if let k = test.indices.dropFirst().first(where: { test[$0 - 1].0 <= a.0 && a.0 <= test[$0].0 }) {
                let (p, q) = (test[k - 1], test[k])
                let t = (log10(a.0) - log10(p.0)) / (log10(q.0) - log10(p.0))
                #expect(Self.text(row[9].content) == String(format: "%.3f", p.1 + t * (q.1 - p.1) - a.1), "\(row)")
            } else {
                #expect(Self.text(row[9].content).isEmpty && Self.text(row[7].content).hasSuffix(" kbit/s") && Self.text(row[7].content).hasPrefix("outside the test's "), "\(row)")
            }
            // The crf rate at the abr run's PSNR: the same lines read the other way.
            if let k = test.indices.dropFirst().first(where: { min(test[$0 - 1].1, test[$0].1) <= a.1 && a.1 <= max(test[$0 - 1].1, test[$0].1) }) {
                let (p, q) = (test[k - 1], test[k])
                let r = pow(10, log10(p.0) + (a.1 - p.1) / (q.1 - p.1) * (log10(q.0) - log10(p.0)))
                #expect(Self.text(row[6].content) == String(format: "%.2f", (r - a.0) / a.0 * 100), "\(row)")
            } else {
                #expect(Self.text(row[6].content).isEmpty && Self.text(row[4].content).hasSuffix(" dB") && Self.text(row[4].content).hasPrefix("outside the test's "), "\(row)")
            }
        }

        // Repeated and non-increasing PTS (a schedule with duplicates and a step back).
        try SyntheticClip(width: 64, height: 48, frames: 30, seed: 7).write(to: "\(dir)/p.y4m")
        let e = try cli.enclab(["encode", "p.y4m", "--threads", "1", "--preset", "ultrafast", "--bitrate", "300", "--db", "pts.sqlite",
                                "--pts-schedule", "rate=30;jitter=2ms;seed=7;dup=0.1;back=3@0.5s"], in: dir)
        try #require(e.status == 0, "\(e.stderr)")
        let experiment = try cli.sqlite("\(dir)/pts.sqlite", "SELECT experiment FROM runs")[0]
        let bad = try cli.sqlite("\(dir)/pts.sqlite", "SELECT non_increasing_input_pts FROM timestamp_analysis")[0]
        #expect(Int(bad)! > 1)
        let pts = try report(dir, db: "pts.sqlite", experiment: experiment)
        #expect(pts.contains("<li class=\"non-increasing-pts\"><b>Repeated or non-increasing PTS:</b> 1 run has input PTS that repeat or go back (run 1; run 1: \(bad) of 30 frames"), "\(bad)")
    }

    @Test("CBR overflows with filler: the warning names the overflows and the filler as sqlite3 reads them (carphone, CBR 300 kbit/s, preset medium)")
    func cbrFiller() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = "\(CLI.root)/fixtures/carphone_pristine.mp4"
        try #require(FileManager.default.fileExists(atPath: clip), "bash scripts/fixtures.sh makes \(clip)")
        let json: [String: Any] = ["name": "filler", "clips": [clip], "base": ["threads": 1, "preset": "medium"],
                                   "grid": ["mode": [["rc": "cbr", "bitrate": 300], ["rc": "crf", "crf": 26]]]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/filler.json"))
        let r = try CLI.process(CLI.binary, ["run", "filler.json", "--db", "filler.sqlite", "--out", "out"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let db = "\(dir)/filler.sqlite"
        let counts = try cli.sqlite(db, """
            SELECT m.vbv_overflows, (SELECT sum(filler_bytes) FROM frames f WHERE f.run_id = m.run_id),
                   (SELECT count(*) FROM frames f WHERE f.run_id = m.run_id AND filler_bytes > 0)
            FROM run_metrics m JOIN runs r USING (run_id) WHERE json_extract(r.settings, '$.rc') = 'cbr'
            """)[0].split(separator: "|").map(String.init)
        // The stream itself carries filler NAL units (nal_unit_type 12), counted in its bytes by Python.
        let stream = try cli.sqlite(db, "SELECT stream_path FROM runs WHERE json_extract(settings, '$.rc') = 'cbr'")[0]
        let nal = try CLI.process("/usr/bin/python3", ["-c", "import re,sys; d=open(sys.argv[1],'rb').read(); print(sum(1 for m in re.finditer(b'\\x00\\x00\\x01', d) if d[m.end()] & 31 == 12))", stream], in: dir)
        #expect(Int(nal.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "\(nal.stdout) \(nal.stderr)")
        #expect(Int(counts[0])! > 0 && Int(counts[1])! > 0, "\(counts)")
        let page = try report(dir, db: "filler.sqlite", experiment: "filler")
        #expect(page.contains("<li class=\"cbr-filler\"><b>CBR overflows are filler, not lost bits:</b> 1 CBR run (run 1) count \(counts[0]) VBV overflow\(counts[0] == "1" ? "" : "s") (column VBV under / over), and every one carries filler data (frames.filler_bytes: \(counts[1]) bytes in \(counts[2]) frames)"), "\(counts)")
    }

    @Test("a check run with violations is in the report by default: its page and the experiment page list its rules and violations")
    func checkRun() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // x264's CLI: an IDR picture every 75 frames at 25 fps (3 s), 160 frames: GOPs of 75, 75 and 10 frames.
        try SyntheticClip(width: 64, height: 48, frames: 160, seed: 3).write(to: "\(dir)/c.y4m")
        let x = try CLI.process("/usr/bin/x264", ["--quiet", "--preset", "ultrafast", "--threads", "1", "--keyint", "75", "--min-keyint", "75",
                                                  "--no-scenecut", "--bframes", "0", "-o", "c.264", "c.y4m"], in: dir)
        try #require(x.status == 0, "\(x.stderr)")
        let c = try cli.enclab(["check", "c.264", "--db", "lab.sqlite", "--expect", "MaxKeyFrameIntervalDuration=2"], in: dir)
        #expect(c.status != 0 && c.status != 64, "\(c.stdout) \(c.stderr)")
        // Without --runs: the check run has a page.
        let page = try report(dir, db: "lab.sqlite", experiment: "check")
        #expect(page.contains("<span class=\"fail\">MaxKeyFrameIntervalDuration=2: 2 violations</span>"), "\(page)")
        let violations = try #require(Self.table("rule-violations", in: page))
        let rows = Self.cells(violations, tag: "td").map { $0.map { Self.text($0.content) } }
        // Frames 0-75 and 75-150 (display order), 3 s each: 1 s over the 2 s limit; the last 10 frames (0.4 s) pass.
        #expect(rows.map { Array($0[0...5]) } == [["1", "MaxKeyFrameIntervalDuration=2", "duration-limit", "0", "75", "display"],
                                                  ["1", "MaxKeyFrameIntervalDuration=2", "duration-limit", "75", "150", "display"]], "\(rows)")
        #expect(rows.allSatisfy { $0[6].hasPrefix("3.000 s, 1.000 s over 2 s") }, "\(rows)")
        let runPage = try String(contentsOfFile: "\(dir)/rep-lab.sqlite/check/run-1/index.html", encoding: .utf8)
        #expect(runPage.contains("<h2 id=\"rules\">VideoToolbox rules</h2>"))
        let runTable = try #require(Self.table("violations", in: runPage))
        #expect(Self.cells(runTable, tag: "td").count == 2)
        // The runs table counts them.
        let runs = try #require(Self.table("runs", in: page))
        #expect(Self.cells(runs, tag: "td").first?[9].content == "<span class=\"fail\">2</span>")
        // A rule that passes: a pass badge, no violations table.
        let ok = try cli.enclab(["check", "c.264", "--db", "ok.sqlite", "--expect", "MaxKeyFrameIntervalDuration=4"], in: dir)
        #expect(ok.status == 0, "\(ok.stderr)")
        let okPage = try report(dir, db: "ok.sqlite", experiment: "check")
        #expect(okPage.contains("<span class=\"pass\">MaxKeyFrameIntervalDuration=4: pass</span>"))
        #expect(Self.table("rule-violations", in: okPage) == nil)
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rep-ok.sqlite/check/run-1/index.html"))
    }

    @Test("an encode with VideoToolbox rules: a badge per rule on the experiment page and its run page, its violations (none: the lab maps the rules onto x264) counted in the runs table")
    func encodeWithRules() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 60, seed: 3).write(to: "\(dir)/c.y4m")
        let e = try cli.enclab(["encode", "c.y4m", "--threads", "1", "--preset", "ultrafast", "--bitrate", "200", "--db", "vt.sqlite",
                                "--vt", "MaxKeyFrameInterval=20", "--vt", "DataRateLimits=100000,1"], in: dir)
        try #require(e.status == 0, "\(e.stderr)")
        let experiment = try cli.sqlite("\(dir)/vt.sqlite", "SELECT experiment FROM runs")[0]
        // sqlite3: the rules as stored, no violation of either.
        #expect(try cli.sqlite("\(dir)/vt.sqlite", "SELECT max_frames, (SELECT count(*) FROM keyframe_violations) FROM keyframe_analysis") == ["20|0"])
        #expect(try cli.sqlite("\(dir)/vt.sqlite", "SELECT bytes, seconds, windows_over FROM data_rate_windows") == ["100000|1|0"])
        let page = try report(dir, db: "vt.sqlite", experiment: experiment)
        #expect(page.contains("<span class=\"pass\">MaxKeyFrameInterval=20: pass</span>"), "\(page)")
        #expect(page.contains("<span class=\"pass\">DataRateLimits pair 1 (100000 bytes in 1 s): pass</span>"))
        #expect(Self.table("rule-violations", in: page) == nil)
        let runs = try #require(Self.table("runs", in: page))
        #expect(Self.cells(runs, tag: "td").first?[9].content == "<span class=\"pass\">0</span>")
        let runPage = try String(contentsOfFile: "\(dir)/rep-vt.sqlite/\(experiment)/run-1/index.html", encoding: .utf8)
        #expect(runPage.contains("<span class=\"pass\">MaxKeyFrameInterval=20: pass</span>") && runPage.contains("No violations stored."))
    }
}
