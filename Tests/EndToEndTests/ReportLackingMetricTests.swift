import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// The report's note on runs left out of a metric's curves says why, and advises no command that cannot help: a
/// lossless run has no finite PSNR-HVS (libvmaf writes null for identical pictures), and `enclab measure` refuses
/// MS-SSIM on pictures under 176 px. Expectations from sqlite3 and from `enclab measure` itself.
@Suite("report: why a run has no value on the metric", .serialized)
struct ReportLackingMetricTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    @Test("a lossless run (--qp 0) scored with --metrics psnr-hvs: the note says every picture is identical to its source, with the frame count sqlite3 gives, not 'not scored'")
    func lossless() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try QualityMetricsTests.clip(dir, frames: 6, size: "64x48")
        for rate in [["--qp", "0"], ["--crf", "30"]] {
            let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--no-plots", "--metrics", "psnr-hvs", "--db", "lab.sqlite", "--out", "out"] + rate, in: dir)
            try #require(e.status == 0, "\(e.stderr)")
        }
        // Run 1: every frame identical to its source (SSE 0 in every plane), every PSNR-HVS NULL, no pooled row.
        let stored = try TestSupport.sqlite("\(dir)/lab.sqlite", """
            SELECT (SELECT count(*) FROM frames WHERE run_id = 1), (SELECT count(*) FROM frames WHERE run_id = 1 AND sse_y = 0 AND sse_u = 0 AND sse_v = 0),
                   (SELECT count(psnr_hvs) FROM frame_quality_metrics WHERE run_id = 1), (SELECT count(*) FROM run_quality_metrics WHERE run_id = 1 AND metric = 'psnr_hvs')
            """)
        #expect(stored == ["6|6|0|0"], "\(stored)")
        let r = try TestSupport.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--metric", "psnr-hvs"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/encode/index.html", encoding: .utf8)
        let note = try #require(page.components(separatedBy: "<p class=\"note lacking\">").dropFirst().first?.components(separatedBy: "</p>").first, "no note on run 1")
        #expect(note.contains("run 1: every picture is identical to its source (lossless: all 6 frames with SSE 0 in the lab's decode), so PSNR-HVS has no finite value"), "\(note)")
        #expect(!note.contains("not scored") && !note.contains("enclab measure"), "\(note)")
    }

    @Test("report --metric ms-ssim on 176x144 runs: the note says the size is too small for MS-SSIM and advises no enclab measure, which refuses that size")
    func tooSmallForMSSSIM() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try QualityMetricsTests.clip(dir, frames: 4, size: "176x144")
        for crf in ["24", "34"] {
            let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--no-plots", "--crf", crf, "--db", "lab.sqlite", "--out", "out"], in: dir)
            try #require(e.status == 0, "\(e.stderr)")
        }
        #expect(try TestSupport.sqlite("\(dir)/lab.sqlite", "SELECT DISTINCT width || 'x' || height FROM runs") == ["176x144"])
        // The command the page used to advise refuses these runs.
        let measure = try TestSupport.enclab(["measure", "--db", "lab.sqlite", "--run", "1", "--metrics", "ms-ssim"], in: dir)
        #expect(measure.status != 0 && measure.stderr.contains("ms-ssim needs pictures of at least 176x176"), "\(measure.stderr)")
        let r = try TestSupport.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--metric", "ms-ssim"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: "\(dir)/rep/encode/index.html", encoding: .utf8)
        #expect(page.contains("Left out of these curves: runs 1, 2: 176x144 pictures, too small for MS-SSIM"), "\(page)")
        #expect(!page.contains("--metrics ms-ssim"), "the page advises a command that refuses these runs")
    }
}
