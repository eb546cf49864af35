import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// `--metric` on `report` and `bd-rate` (issue 20, docs/quality-metrics.md): the rate-quality curves and BD-rate on
/// VMAF, against the `bjontegaard` PyPI package 1.3.0 fed the stored values read with sqlite3 here; the AWCY-style
/// table of BD-rate per metric; runs lacking the metric named; `compare` showing the perceptual metrics.
@Suite("perceptual quality: curves, BD-VMAF, compare", .serialized)
struct QualityCurvesTests {
    typealias Curve = [(rate: Double, psnr: Double)]

    /// Two configurations (preset fast and medium) at 4 CRFs each, scored with VMAF, on 10 frames of 176x144
    /// testsrc2 (VMAF 57-95 on both: their ranges overlap enough for BD-rate); then a fifth fast run (crf 42) in the
    /// same experiment without --metrics.
    static func lab(in dir: String) throws {
        try QualityMetricsTests.clip(dir, frames: 10, size: "176x144")
        let scored: [String: Any] = ["name": "v", "clips": ["c.y4m"], "metrics": ["vmaf"], "base": ["threads": 1],
                                     "grid": ["crf": [24, 29, 34, 39], "preset": ["fast", "medium"]]]
        let plain: [String: Any] = ["name": "v", "clips": ["c.y4m"], "base": ["threads": 1], "grid": ["crf": [42], "preset": ["fast"]]]
        for (file, json) in [("v.json", scored), ("w.json", plain)] {
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/\(file)"))
            let r = try TestSupport.enclab(["run", file, "--no-plots", "--db", "r.sqlite", "--out", "r"], in: dir)
            try #require(r.status == 0, "\(r.stderr)")
        }
    }

    /// Per preset, the curve read with sqlite3: (run_metrics.bitrate_kbps, the value) of each done run, `value` the SQL
    /// of the quality (`q.mean` of run_quality_metrics for `metric`, or `m.psnr_global`).
    static func stored(_ db: String, metric: String?) throws -> [String: Curve] {
        let join = metric.map { "JOIN run_quality_metrics q ON q.run_id = r.run_id AND q.metric = '\($0)'" } ?? ""
        let rows = try TestSupport.sqlite(db, """
            SELECT json_extract(r.settings, '$.axes.preset'), m.bitrate_kbps, \(metric == nil ? "m.psnr_global" : "q.mean")
            FROM runs r JOIN run_metrics m ON m.run_id = r.run_id \(join) WHERE r.status = 'done' ORDER BY r.run_id
            """)
        var out: [String: Curve] = [:]
        for line in rows {
            let f = line.split(separator: "|").map(String.init)
            out["crf preset=\(f[0])", default: []].append((Double(f[1])!, Double(f[2])!))
        }
        return out
    }

    /// The `bjontegaard` PyPI package 1.3.0 of the venv (scripts/setup.sh) on `cases` [anchor, test]: per case
    /// [bd_rate pchip, bd_psnr pchip, bd_rate cubic, bd_psnr cubic] (its bd_psnr is the quality delta on whatever
    /// the second numbers are).
    static func package(_ cases: [(Curve, Curve)]) throws -> [[Double]] {
        let python = QualityMetricsTests.venv + "/bin/python"
        let script = """
            import sys, json
            import bjontegaard as bd
            assert bd.__version__ == "1.3.0", bd.__version__
            out = []
            for a, t in json.load(open(sys.argv[1])):
                a, t = sorted(a), sorted(t)
                args = ([p[0] for p in a], [p[1] for p in a], [p[0] for p in t], [p[1] for p in t])
                out.append([float(f(*args, method=m, require_matching_points=False)) for m in ("pchip", "cubic") for f in (bd.bd_rate, bd.bd_psnr)])
            print(json.dumps(out))
            """
        func json(_ c: Curve) -> String { "[" + c.map { "[\($0.rate), \($0.psnr)]" }.joined(separator: ",") + "]" }
        let file = NSTemporaryDirectory() + "enclab-bd-\(UUID().uuidString).json"
        try ("[" + cases.map { "[\(json($0.0)), \(json($0.1))]" }.joined(separator: ",") + "]").write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try TestSupport.process(python, ["-c", script, file], in: "/")
        try #require(r.status == 0, "the bjontegaard package (run 'bash scripts/setup.sh'): \(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[Double]], "\(r.stdout)")
    }

    /// The `<table>` whose header row holds `header`, its body rows' cells as text.
    static func table(with header: String, in html: String) throws -> [[String]] {
        let at = try #require(html.range(of: "<th>\(header)</th>") ?? html.range(of: "<th class=\"text\">\(header)</th>"), "no table with header \(header)")
        let start = try #require(html[..<at.lowerBound].range(of: "<table", options: .backwards))
        let end = try #require(html[at.upperBound...].range(of: "</table>"))
        let table = String(html[start.lowerBound..<end.upperBound])
        return ReportSummaryTests.cells(table, tag: "td").map { $0.map { ReportSummaryTests.text($0.content) } }
    }

    @Test("report --metric vmaf: curves and BD-rate on the stored VMAF = the bjontegaard package on sqlite3's values; BD-rate per metric beside; the run without VMAF named")
    func bdVMAF() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf-curves")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        let r = try TestSupport.enclab(["report", "--db", "r.sqlite", "--out", "rep", "--metric", "vmaf", "--runs", "1"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/v/index.html", encoding: .utf8)
        let vmaf = try Self.stored("\(dir)/r.sqlite", metric: "vmaf"), psnr = try Self.stored("\(dir)/r.sqlite", metric: nil)
        #expect(vmaf.count == 2 && vmaf.values.allSatisfy { $0.count == 4 }, "\(vmaf)")
        #expect(psnr["crf preset=fast"]?.count == 5, "the crf 42 run has a PSNR point")
        // The anchor is the first configuration (run 1's).
        let first = try TestSupport.sqlite("\(dir)/r.sqlite", "SELECT json_extract(settings, '$.axes.preset') FROM runs WHERE run_id = 1")
        let anchor = "crf preset=\(first.first ?? "")", test = anchor == "crf preset=fast" ? "crf preset=medium" : "crf preset=fast"
        #expect(page.contains("BD-rate against the anchor <b>\(anchor)</b>"), "\(page)")
        let package = try Self.package([(vmaf[anchor]!, vmaf[test]!), (psnr[anchor]!, psnr[test]!)])
        func number(_ v: Double) -> Double { v }
        // The main table on VMAF: BD-rate and BD-VMAF by PCHIP and cubic, shown to 2 decimals.
        let main = try Self.table(with: "BD-VMAF (PCHIP)", in: page)
        #expect(main.count == 1, "\(main)")
        if let row = main.first, row.count == 6 {
            #expect(row[0] == test && row[1] == "4")
            for (k, value) in row[2...5].enumerated() {
                #expect(abs((Double(value) ?? .nan) - number(package[0][k])) <= 0.005 + 1e-9, "column \(k + 2): report \(value), package \(package[0][k])")
            }
        }
        // The curves' files name the metric and its pooling.
        let dat = try String(contentsOfFile: "\(dir)/rep/v/rq-1.dat", encoding: .utf8)
        #expect(dat.hasPrefix("# bitrate_kbps vmaf run_id"), "\(dat)")
        let gp = try String(contentsOfFile: "\(dir)/rep/v/rq-1.gp", encoding: .utf8)
        #expect(gp.contains("set ylabel 'VMAF v0.6.1, mean of frames'"), "\(gp)")
        // The 5th fast run has no VMAF: said, and not on the VMAF curves (4 points a configuration in the data).
        #expect(page.contains("Left out of these curves: run 9, no vmaf stored"), "\(page)")
        #expect(!dat.split(separator: "\n").contains { $0.hasSuffix(" 9") })
        // AWCY-style: BD-rate (PCHIP) on each metric the runs have, psnr on psnr_global with 5 anchor or test points.
        let perMetric = try Self.table(with: "BD-rate % vmaf", in: page)
        #expect(perMetric.count == 1 && perMetric.first?.count == 3, "\(perMetric)")
        if let row = perMetric.first, row.count == 3 {
            #expect(row[0] == test)
            #expect(abs((Double(row[1]) ?? .nan) - number(package[1][0])) <= 0.005 + 1e-9, "psnr: report \(row[1]), package \(package[1][0])")
            #expect(abs((Double(row[2]) ?? .nan) - number(package[0][0])) <= 0.005 + 1e-9, "vmaf: report \(row[2]), package \(package[0][0])")
        }
        #expect(page.contains("Left out of the vmaf column: run 9"), "\(page)")

        // bd-rate --metric vmaf on the same stored values: the package's numbers to the 6 decimals printed.
        func text(_ c: Curve) -> String { c.map { "\($0.rate):\($0.psnr)" }.joined(separator: ",") }
        let b = try TestSupport.enclab(["bd-rate", "--metric", "vmaf", "--anchor", text(vmaf[anchor]!), "--test", text(vmaf[test]!)], in: dir)
        #expect(b.status == 0, "\(b.stderr)")
        let lines = b.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("BD-rate (pchip): ") && lines.last?.hasPrefix("BD-VMAF (pchip): ") == true, "\(b.stdout)")
        if lines.count == 2 {
            let rate = Double(lines[0].dropFirst("BD-rate (pchip): ".count).dropLast(2)) ?? .nan
            let delta = Double(lines[1].dropFirst("BD-VMAF (pchip): ".count)) ?? .nan
            #expect(abs(rate - number(package[0][0])) <= 5e-7 && abs(delta - number(package[0][1])) <= 5e-7, "\(b.stdout) against \(package[0])")
        }
        // A VMAF curve that falls: refused naming VMAF, not PSNR.
        let bad = try TestSupport.enclab(["bd-rate", "--metric", "vmaf", "--anchor", "100:60,200:70,400:65,800:90", "--test", "100:61,200:71,400:81,800:91"], in: dir)
        #expect(bad.status == 65 && bad.stderr.contains("the anchor curve is not monotonic: VMAF 65 at 400 kbit/s is not above 70 at 200 kbit/s"), "\(bad.stderr)")
        let unknown = try TestSupport.enclab(["report", "--db", "r.sqlite", "--out", "rep2", "--metric", "vmfa"], in: dir)
        #expect(unknown.status == 64 && unknown.stderr.contains("--metric: 'vmfa' is not a metric (one of psnr, vmaf, vmaf-neg, vmaf-4k, psnr-hvs, ms-ssim, ssim, ciede2000, xpsnr)"), "\(unknown.stderr)")
    }

    @Test("report --metric vmaf --worst 1 --best 1: the run pages are the lowest and highest VMAF mean as sqlite3 reads run_quality_metrics, not the lowest psnr_global (a run without VMAF), and the page says by which metric")
    func pagesByMetric() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf-pages")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        let byVMAF = try TestSupport.sqlite("\(dir)/r.sqlite", "SELECT run_id FROM run_quality_metrics WHERE metric = 'vmaf' ORDER BY mean, run_id")
        let byPSNR = try TestSupport.sqlite("\(dir)/r.sqlite", "SELECT run_id FROM run_metrics ORDER BY psnr_global, run_id")
        // The lowest PSNR is the run without VMAF (crf 42): ranked by PSNR it would get the worst page.
        try #require(byPSNR.first == "9" && !byVMAF.contains("9"), "\(byPSNR) \(byVMAF)")
        let r = try TestSupport.enclab(["report", "--db", "r.sqlite", "--out", "rep", "--metric", "vmaf", "--worst", "1", "--best", "1"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/rep/v").filter { $0.hasPrefix("run-") }.sorted()
        #expect(Set(pages) == Set(["run-\(byVMAF.first!)", "run-\(byVMAF.last!)"]), "\(pages) against VMAF order \(byVMAF)")
        let page = try String(contentsOfFile: "\(dir)/rep/v/index.html", encoding: .utf8)
        #expect(page.contains("Run pages: the 1 worst and the 1 best runs of this experiment by vmaf, the mean of its frames"), "\(page)")
        // Without --metric: by psnr_global, and said so.
        let p = try TestSupport.enclab(["report", "--db", "r.sqlite", "--out", "rep-psnr", "--worst", "1", "--best", "0"], in: dir)
        try #require(p.status == 0, "\(p.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rep-psnr/v/run-9/index.html"))
        #expect(try String(contentsOfFile: "\(dir)/rep-psnr/v/index.html", encoding: .utf8).contains("Run pages: the 1 worst runs of this experiment by psnr_global (PSNR pooled)"))
    }

    @Test("compare shows each perceptual metric either run has (mean, harmonic mean, lows) as sqlite3 reads run_quality_metrics; '-' for a run without it")
    func compareShowsMetrics() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf-compare")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try QualityMetricsTests.clip(dir, frames: 6, size: "176x144")
        for (crf, metrics) in [("28", ["--metrics", "vmaf,psnr-hvs"]), ("40", ["--metrics", "vmaf"]), ("34", [])] {
            let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", crf, "--no-plots", "--db", "e.sqlite", "--out", "e"] + metrics, in: dir)
            try #require(e.status == 0, "\(e.stderr)")
        }
        let c = try TestSupport.enclab(["compare", "--db", "e.sqlite", "1", "2"], in: dir)
        #expect(c.status == 0, "\(c.stderr)")
        let lines = c.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        func line(_ name: String) -> [String]? { lines.first { $0.count >= 2 && "\($0[0]) \($0[1])" == name }.map { Array($0.dropFirst(2)) } }
        let stored = try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_id, metric, mean, harmonic_mean, low_1pct, low_5pct FROM run_quality_metrics ORDER BY run_id, metric")
        var values: [String: [Double]] = [:]
        for s in stored { let f = s.split(separator: "|").map(String.init); values["\(f[0]) \(f[1])"] = f[2...].compactMap(Double.init) }
        for (k, pooling) in ["mean", "harmonic_mean", "low_1pct", "low_5pct"].enumerated() {
            let a = values["1 vmaf"]![k], b = values["2 vmaf"]![k]
            let l = line("vmaf \(pooling)")
            #expect(l == [String(format: "%.3f", a), String(format: "%.3f", b), String(format: "%+.3f", b - a), String(format: "%+.2f", (b - a) / abs(a) * 100)],
                    "vmaf \(pooling): \(l ?? []) against sqlite3 \(a) \(b)")
            // psnr_hvs is in dB (no %), and run 2 has none.
            #expect(line("psnr_hvs \(pooling)") == [String(format: "%.3f", values["1 psnr_hvs"]![k]), "-", "-", "-"], "\(c.stdout)")
        }
        // A run without perceptual metrics against another without: no such lines, as before.
        let plain = try TestSupport.enclab(["compare", "--db", "e.sqlite", "3", "3"], in: dir)
        #expect(plain.status == 0 && !plain.stdout.contains("vmaf"), "\(plain.stdout)")
    }
}
