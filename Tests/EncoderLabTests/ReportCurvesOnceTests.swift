import Foundation
import Testing
import EnclabTestSupport
@testable import EncoderLab

/// The report computes an experiment's rate-quality curves once (its warnings, overlay styles and curves share them),
/// where it computed them three times.
@Suite("Report: an experiment's curves computed once")
struct ReportCurvesOnceTests {
    @Test("one experiment of four runs on one clip, one run page: Report.curves is called once")
    func curvesOnce() throws {
        let dir = TestSupport.scratchFolder("enclab-curves")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try TestSupport.makeDatabase(in: dir, runs: [["--crf", "20"], ["--crf", "30"], ["--bitrate", "200"], ["--bitrate", "400"]])
        let counter = Report.CallCounter()
        let summary = try Report.$curvesCounter.withValue(counter) {
            try Report.build(Report.Options(databasePath: db, outDirectory: "\(dir)/rep", runs: [1]))
        }
        #expect(summary.experiments == 1 && summary.runPages == 1)
        #expect(counter.count == 1, "Report.curves called \(counter.count) times for one experiment")
    }
}
