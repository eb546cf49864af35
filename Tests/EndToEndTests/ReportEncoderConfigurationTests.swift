import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// The report's configuration of a run names its encoder when it is not x264, also where no grid axis does (`enclab
/// encode` runs; `encoder` in an experiment's `base`): before, x264's and OpenH264's `--bitrate` runs of one database
/// were one configuration, `abr`, and so one rate-quality curve of both encoders (issue 22). An OpenH264 run's
/// configuration names its rate-control mode in OpenH264's terms (`openh264 bitrate`), not x264's `abr`.
@Suite("enclab report: x264's and OpenH264's runs are different configurations", .serialized)
struct ReportEncoderConfigurationTests {
    @Test("encode runs of both encoders at the same bitrates: configurations 'abr' and 'openh264 bitrate' (iRCMode=1 in sqlite3's openh264_params), as many of each as sqlite3 counts")
    func encoderInConfiguration() throws {
        let dir = TestSupport.scratchFolder("enclab-report-encoder")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try TestSupport.makeClip(in: dir, named: "c.y4m", SyntheticClip(width: 96, height: 64, frames: 10, seed: 4))
        for rate in ["200", "800"] {
            for encoder in [[], ["--encoder", "openh264"]] {
                let r = try TestSupport.enclab(["encode", "c.y4m", "--no-plots", "--db", "lab.sqlite", "--out", "out", "--bitrate", rate, "--threads", "1"] + encoder, in: dir)
                #expect(r.status == 0, "\(r.stderr)")
            }
        }
        let r = try TestSupport.enclab(["report", "--db", "lab.sqlite", "--out", "report"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let db = "\(dir)/lab.sqlite"
        let openh264 = try TestSupport.sqlite(db, "SELECT count(*) FROM runs WHERE json_extract(settings, '$.encoder.name') = 'openh264'")
        let x264 = try TestSupport.sqlite(db, "SELECT count(*) FROM runs WHERE json_extract(settings, '$.encoder') IS NULL")
        #expect(openh264 == ["2"] && x264 == ["2"])
        // The mode OpenH264 was given: RC_BITRATE_MODE (1 in codec_app_def.h's RC_MODES), named "bitrate".
        let modes = try TestSupport.sqlite(db, "SELECT count(*) FROM runs WHERE ' ' || json_extract(settings, '$.openh264_params') || ' ' LIKE '% iRCMode=1 %'")
        #expect(modes == ["2"])
        // The runs table's configuration column (hidden by default) of each run.
        let page = try String(contentsOfFile: "\(dir)/report/encode/index.html", encoding: .utf8)
        func cells(_ configuration: String) -> Int { page.components(separatedBy: "<td class=\"text\" hidden>\(configuration)</td>").count - 1 }
        #expect(cells("openh264 bitrate") == 2)
        #expect(cells("abr") == 2)
    }
}
