import Foundation
import Testing
import EncoderLab
import EnclabTestSupport

/// What issue 19 had left on the report's pages: the gnuplot overlay of frame sizes coloured by frame type, and a
/// keyframe deadline by frames and one by seconds that fall at the same time both readable, in the picture and on the
/// interactive timeline (read back from Chromium's canvas). Expectations from sqlite3's reading of the database and
/// from arithmetic written out here.
@Suite("enclab report: sizes by type in the overlay picture, coinciding keyframe deadlines", .serialized)
struct ReportFinishTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// 64x48, 60 frames at 25 fps: runs 1 and 2 ABR and CBR 300 kbit/s with 2 B-frames; run 3 a `check --db` of a
    /// keyint-25 stream (IDR at 0, 25, 50) against MaxKeyFrameInterval=20 and MaxKeyFrameIntervalDuration=0.8, whose
    /// deadlines coincide: frame 0 + 20 at 20 / 25 = 0.8 s and 0 + 0.8 s; frame 25 + 20 at 45 / 25 = 1.8 s and
    /// 1.0 + 0.8 s. The report with a page for each.
    static func lab(in dir: String) throws {
        try ReportLab.make(in: dir, clip: SyntheticClip(width: 64, height: 48, frames: 60, seed: 5),
                           runs: [["--rc", "abr", "--bitrate", "300"], ["--rc", "cbr", "--bitrate", "300"]],
                           common: ["--threads", "1", "--preset", "fast", "--bframes", "2"],
                           expect: ["MaxKeyFrameInterval=20", "MaxKeyFrameIntervalDuration=0.8"])
    }

    @Test("the overlay's frame-size picture colours each point by its frame type: a type column equal to sqlite3's frames.type per run, drawn with variable colour, a key entry per type")
    func sizesByType() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        let data = try String(contentsOfFile: "\(dir)/rep/encode/ov1-sizes.dat", encoding: .utf8)
        // One block per run (blank-line separated), rows in coded order: x, size (kbit), type index (IDR 0, I 1, P 2,
        // Bref 3, B 4).
        let blocks = data.components(separatedBy: "\n\n\n").map { $0.split(separator: "\n").filter { !$0.hasPrefix("#") } }.filter { !$0.isEmpty }
        #expect(blocks.count == 2, "\(blocks.count) blocks")
        let names = ["IDR", "I", "P", "Bref", "B"]
        for (k, id) in ["1", "2"].enumerated() where k < blocks.count {
            let stored = try cli.sqlite("\(dir)/lab.sqlite", "SELECT type || ' ' || size_bytes FROM frames WHERE run_id = \(id) ORDER BY coded_index")
            let drawn = blocks[k].map { $0.split(separator: " ").map(String.init) }
            #expect(drawn.count == stored.count, "run \(id): \(drawn.count) rows, \(stored.count) frames in sqlite3")
            for (row, frame) in zip(drawn, stored) {
                let parts = frame.split(separator: " ").map(String.init)
                #expect(row.count == 3, "run \(id): row \(row) has no type column")
                guard row.count == 3, let t = Int(row[2]), names.indices.contains(t) else { continue }
                #expect(names[t] == parts[0], "run \(id): type \(names[t]) drawn, \(parts[0]) stored")
                #expect(abs(Double(row[1])! - Double(parts[1])! * 8 / 1000) < 1e-9, "size in kbit = bytes x 8 / 1000")
            }
        }
        let types = Set(try cli.sqlite("\(dir)/lab.sqlite", "SELECT DISTINCT type FROM frames WHERE run_id IN (1, 2)"))
        #expect(types.contains("B") || types.contains("Bref"), "the runs have B-frames: \(types)")
        let gp = try String(contentsOfFile: "\(dir)/rep/encode/ov1-sizes.gp", encoding: .utf8)
        #expect(gp.contains("lc rgb variable"), "points coloured from the data's type column")
        for (t, colour) in zip(names, ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"]) where types.contains(t) {
            #expect(gp.contains("lc rgb '\(colour)' title '\(t)'"), "a key entry for \(t) in \(colour)")
        }
        #expect(FileManager.default.fileExists(atPath: "\(dir)/rep/encode/ov1-sizes.png"))
    }

    @Test("coinciding keyframe deadlines: in keyframes.gp the frame limit's and the duration limit's stems take disjoint heights; in chromium each deadline is seen on its own (canvas pixels)")
    func coincidingDeadlines() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        let id = try cli.sqlite("\(dir)/lab.sqlite", "SELECT run_id FROM runs WHERE experiment = 'check'")[0]
        // Deadlines as the arithmetic above gives them: both kinds at 0.8 s and at 1.8 s.
        let due = try String(contentsOfFile: "\(dir)/rep/check/run-\(id)/keyframe-limits.dat", encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map(String.init) }
        for seconds in [0.8, 1.8] {
            for kind in ["0", "1"] {
                #expect(due.contains { $0[0] == kind && abs(Double($0[2])! - seconds) < 1e-9 }, "kind \(kind) at \(seconds) s: \(due)")
            }
        }
        // Each kind drawn as vectors from a low y up by a height (`using 3:($1==KIND ? LOW : 1/0):(0):(HEIGHT)`): the two
        // spans apart.
        let gp = try String(contentsOfFile: "\(dir)/rep/check/run-\(id)/keyframes.gp", encoding: .utf8)
        func span(_ kind: Int) -> (Double, Double)? {
            let marker = "using 3:($1==\(kind) ? "
            guard let line = gp.split(separator: "\n").first(where: { $0.contains("'keyframe-limits.dat'") && $0.contains(marker) }),
                  let at = line.range(of: marker) else { return nil }
            // "LOW : 1/0):(0):(HEIGHT) with vectors ..."
            let rest = line[at.upperBound...]
            guard rest.contains("with vectors"), let low = Double(rest.prefix { $0 != " " }),
                  let h = rest.range(of: ":(0):(") else { return nil }
            guard let height = Double(rest[h.upperBound...].prefix { $0 != ")" }) else { return nil }
            return (low, low + height)
        }
        let frame = span(0), duration = span(1)
        #expect(frame != nil && duration != nil, "each kind's stems as vectors: \(gp)")
        if let f = frame, let d = duration { #expect(f.1 <= d.0 || d.1 <= f.0, "frame limit \(f), duration limit \(d) overlap") }
        // In chromium: every deadline of the check page's timeline shows its colour (scripts/report-browser.py).
        try ReportBrowserTests.requireBrowser()
        let r = try CLI.process("/usr/bin/python3", [ReportBrowserTests.script, "--db", "lab.sqlite", "--report", "rep",
                                                     "--run-page", "rep/check/run-\(id)/index.html"], in: dir, limit: 600)
        #expect(r.status == 0 && r.stdout.hasSuffix("ok\n"), "\(r.stdout)\(r.stderr)")
    }

    @Test("the experiment page's runs table breaks no flag of a run's label across lines (chromium: each '--flag' of the label's text on one line), and fits 1280 px with at most 10 columns")
    func runsTableLabels() throws {
        try ReportBrowserTests.requireBrowser()
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.lab(in: dir)
        // The CBR run's label carries flags with hyphens inside ("--vbv-bufsize 300", as its console line prints them).
        let page = try String(contentsOfFile: "\(dir)/rep/encode/index.html", encoding: .utf8)
        #expect(page.contains("--vbv-bufsize 300"))
        let r = try CLI.process("/usr/bin/python3", [ReportBrowserTests.script, "--db", "lab.sqlite", "--report", "rep",
                                                     "--run-page", "rep/encode/run-1/index.html"], in: dir, limit: 600)
        #expect(r.status == 0 && r.stdout.hasSuffix("ok\n"), "\(r.stdout)\(r.stderr)")
    }
}
