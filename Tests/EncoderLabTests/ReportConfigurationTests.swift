import Foundation
import Testing
@testable import EncoderLab

/// The report's configuration names (``ReportData/configurations(_:)``) of an experiment mixing OpenH264 and x264
/// runs: OpenH264's rate-control mode in its own terms (its `iRCMode` as the run gave it to the library,
/// `openh264_params`, codec_app_def.h's RC_MODES: 0 quality, 1 bitrate, 2 bufferbased, 3 timestamp, -1 off), and
/// the words every OpenH264 run of the experiment shares left out. The settings are those `enclab run` stores
/// (openh264-rate-accuracy's grid: `mode` an object axis), the expected names written out here.
@Suite("report configuration names of OpenH264 runs")
struct ReportConfigurationTests {
    static func openh264(_ mode: String, _ number: Int, skip: Bool, target: Int = 30000) -> String {
        """
        {"axes":{"mode":{"bEnableFrameSkip":"\(skip)","encoder":"openh264","eSpsPpsIdStrategy":"sps_listing","iRCMode":"\(mode)"}},
         "encoder":{"name":"openh264","version":"2.3.1"},"label":"bEnableFrameSkip=\(skip) eSpsPpsIdStrategy=sps_listing encoder=openh264 iRCMode=\(mode)",
         "openh264_params":"iUsageType=0 iTargetBitrate=\(target) iRCMode=\(number) bEnableFrameSkip=\(skip ? 1 : 0)",
         "resolved":{"rc_method":"\(mode == "quality" ? "quality" : "abr")"},"x264_args":"--encoder openh264"}
        """
    }

    static let x264 = """
        {"axes":{"mode":{"preset":"veryfast","profile":"baseline","rc":"abr","tune":"zerolatency"}},"rc":"abr",
         "label":"preset=veryfast profile=baseline rc=abr tune=zerolatency","resolved":{"rc_method":"abr"},"x264_args":"--preset veryfast"}
        """

    @Test("timestamp mode is 'openh264 timestamp', not 'abr'; eSpsPpsIdStrategy (the same in every OpenH264 run) and encoder=openh264 left out; x264's names unchanged")
    func names() throws {
        let json = [Self.openh264("bitrate", 1, skip: false), Self.openh264("timestamp", 3, skip: true), Self.openh264("bufferbased", 2, skip: true),
                    Self.openh264("quality", 0, skip: false), Self.x264]
        let settings = try json.enumerated().map { try StoredRunSettings(json: $0.element, runID: Int64($0.offset + 1)) }
        #expect(ReportData.configurations(settings) == [
            "openh264 bitrate bEnableFrameSkip=false", "openh264 timestamp bEnableFrameSkip=true", "openh264 bufferbased bEnableFrameSkip=true",
            "openh264 quality bEnableFrameSkip=false", "abr preset=veryfast profile=baseline tune=zerolatency",
        ])
        // A run alone keeps its words (but not the encoder and iRCMode, which its first words say).
        #expect(ReportData.configuration(settings[1]) == "openh264 timestamp bEnableFrameSkip=true eSpsPpsIdStrategy=sps_listing")
        // The mode the library was given wins over the grid's word; RC_OFF_MODE is -1.
        let off = try StoredRunSettings(json: Self.openh264("bitrate", -1, skip: false), runID: 9)
        #expect(ReportData.configuration(off).hasPrefix("openh264 off "))
    }

    @Test("runs of one OpenH264 configuration at several bitrates stay one configuration (one curve): the rate is no word")
    func oneCurve() throws {
        let settings = try [300_000, 600_000].enumerated().map {
            try StoredRunSettings(json: Self.openh264("bitrate", 1, skip: false, target: $0.element), runID: Int64($0.offset + 1))
        }
        let names = ReportData.configurations(settings)
        #expect(names[0] == names[1] && names[0] == "openh264 bitrate")
    }
}

/// The runs table's run cell (``Report/labelShown(_:configuration:common:)``): the grid label's words that the
/// configuration does not already say (openh264-rate-accuracy's run 4 was seven lines at 1280 px: its configuration and
/// then its label repeating it, `encoder=openh264 iRCMode=bitrate` included).
@Suite("report run cell: the label's words the configuration does not say")
struct RunCellLabelTests {
    @Test("run 4 of openh264-rate-accuracy: nothing left; a rate word stays; x264's rc=abr is the mode; flags shown whole")
    func shown() {
        let common: Set<Substring> = ["eSpsPpsIdStrategy=sps_listing"]
        #expect(Report.labelShown("bEnableFrameSkip=true eSpsPpsIdStrategy=sps_listing encoder=openh264 iRCMode=bitrate",
                                     configuration: "openh264 bitrate bEnableFrameSkip=true", common: common) == "")
        #expect(Report.labelShown("bEnableFrameSkip=true bitrate=150 eSpsPpsIdStrategy=sps_listing encoder=openh264 iRCMode=timestamp slices=4",
                                     configuration: "openh264 timestamp bEnableFrameSkip=true slices=4", common: common) == "bitrate=150")
        #expect(Report.labelShown("bitrate=500 preset=veryfast rc=abr", configuration: "abr preset=veryfast", common: []) == "bitrate=500")
        // rc=abr under another mode is not said by it.
        #expect(Report.labelShown("rc=abr", configuration: "openh264 bitrate", common: []) == "rc=abr")
        #expect(Report.labelShown("--encoder openh264 --bitrate 200", configuration: "openh264 bitrate", common: []) == "--encoder openh264 --bitrate 200")
        #expect(Report.labelShown("crf", configuration: "crf", common: []) == "")
    }
}
