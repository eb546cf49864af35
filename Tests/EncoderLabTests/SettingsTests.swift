import Foundation
import Testing
@testable import EncoderLab

@Suite("settings in x264's vocabulary and the lab's --rc modes")
struct SettingsTests {
    func resolve(_ flags: [String]) throws -> [String] {
        let (s, rest) = try EncodeSettings.parse(arguments: flags)
        #expect(rest.isEmpty)
        return try s.resolved().x264Arguments
    }

    func message(_ flags: [String]) -> String? {
        do { _ = try resolve(flags); return nil } catch let e as LabError { return e.message } catch { return "\(error)" }
    }

    @Test("x264 CLI spellings: long, --name=value, short, flags without argument, positional")
    func parsing() throws {
        let (s, rest) = try EncodeSettings.parse(arguments: ["in.y4m", "-I", "60", "--min-keyint=6", "--no-cabac", "-b", "2", "--psnr"])
        #expect(rest == ["in.y4m"])
        #expect(s.options == [X264Option("keyint", "60"), X264Option("min-keyint", "6"), X264Option("no-cabac", nil), X264Option("bframes", "2")])
        #expect(message(["--keyint"]) == "flag '--keyint' needs an argument")
        #expect(message(["--qpfile", "q.txt"])?.hasPrefix("setting 'qpfile' is an x264 CLI option the lab does not support") == true)
    }

    @Test("cbr = abr + vbv-maxrate = bitrate + one second of buffer + nal-hrd cbr")
    func cbr() throws {
        #expect(try resolve(["--rc", "cbr", "--bitrate", "800"]) == ["--bitrate", "800", "--vbv-maxrate", "800", "--vbv-bufsize", "800", "--nal-hrd", "cbr"])
        #expect(try resolve(["--rc", "cbr", "--bitrate", "800", "--vbv-bufsize", "400"]) == ["--bitrate", "800", "--vbv-bufsize", "400", "--vbv-maxrate", "800", "--nal-hrd", "cbr"])
        #expect(message(["--rc", "cbr"]) == "contradictory settings: rc cbr needs 'bitrate'")
        #expect(message(["--rc", "cbr", "--bitrate", "800", "--vbv-maxrate", "1000"]) == "contradictory settings: rc cbr with vbv-maxrate 1000 different from bitrate 800")
        #expect(message(["--rc", "cbr", "--bitrate", "800", "--crf", "20"]) == "contradictory settings: rc cbr with 'crf'")
        #expect(message(["--rc", "cbr", "--bitrate", "800", "--vbv-bufsize", "0"]) == "contradictory settings: rc cbr needs a vbv-bufsize above 0, got 0")
    }

    @Test("vbr caps abr at 1.5 x bitrate by default, or crf at the given vbv-maxrate")
    func vbr() throws {
        #expect(try resolve(["--rc", "vbr", "--bitrate", "1000"]) == ["--bitrate", "1000", "--vbv-maxrate", "1500", "--vbv-bufsize", "1500"])
        #expect(try resolve(["--rc", "vbr", "--crf", "23", "--vbv-maxrate", "900"]) == ["--crf", "23", "--vbv-maxrate", "900", "--vbv-bufsize", "900"])
        #expect(message(["--rc", "vbr", "--bitrate", "1000", "--vbv-maxrate", "1000"]) == "contradictory settings: rc vbr needs vbv-maxrate above bitrate 1000, got 1000")
        #expect(message(["--rc", "vbr", "--crf", "23"]) == "contradictory settings: rc vbr with crf needs 'vbv-maxrate'")
        #expect(message(["--rc", "vbr", "--bitrate", "300", "--nal-hrd", "cbr"]) == "contradictory settings: rc vbr with nal-hrd cbr (CBR HRD needs a constant bitrate)")
    }

    /// OpenH264 2.3.1 reads uiSliceSizeConstraint only with uiSliceMode sizelimited (encoder_ext.cpp ParamValidationExt
    /// zeroes it in single mode; svc_enc_slice_segment.cpp InitSliceSegment puts its own default in its place in the
    /// other modes): given with another mode it would be ignored without a word, so it is refused, 64.
    @Test("OpenH264's uiSliceSizeConstraint without uiSliceMode sizelimited is refused naming both")
    func openH264SliceSizeConstraint() throws {
        func message(_ flags: [String]) -> String? {
            do { _ = try EncodeSettings.parse(arguments: ["--encoder", "openh264", "--bitrate", "300"] + flags).0.resolved(); return nil }
            catch let e as LabError { return e.kind == .usage ? e.message : "not usage: \(e.message)" } catch { return "\(error)" }
        }
        let tail = "OpenH264 2.3.1 reads the constraint only with uiSliceMode sizelimited and ignores it otherwise, without a word; give uiSliceMode sizelimited, or no uiSliceSizeConstraint"
        #expect(message(["--uiSliceSizeConstraint", "500"]) == "OpenH264's uiSliceSizeConstraint 500 with uiSliceMode single: " + tail)
        #expect(message(["--uiSliceMode", "fixedslcnum", "--uiSliceNum", "2", "--uiSliceSizeConstraint", "1200"])
                == "OpenH264's uiSliceSizeConstraint 1200 with uiSliceMode fixedslcnum: " + tail)
        #expect(message(["--slices", "3", "--uiSliceSizeConstraint", "1200"])
                == "OpenH264's uiSliceSizeConstraint 1200 with uiSliceMode fixedslcnum (from slices): " + tail)
        #expect(message(["--uiSliceMode", "sizelimited", "--uiSliceSizeConstraint", "1200"]) == nil)
    }

    @Test("cqp needs qp, abr needs bitrate, crf defaults to x264's 23")
    func others() throws {
        #expect(message(["--rc", "cqp"]) == "contradictory settings: rc cqp needs 'qp'")
        #expect(message(["--rc", "abr", "--qp", "20"]) == "contradictory settings: rc abr with 'qp'")
        #expect(try resolve(["--rc", "crf"]) == ["--crf", "23"])
        #expect(message(["--rc", "fast"]) == "setting 'rc' must be one of cqp, crf, abr, cbr, vbr, got 'fast'")
    }

    @Test("x264_param_parse's -1 and -2 name the setting; x264's own refusals are passed on")
    func x264Errors() throws {
        let input = EncoderInput(width: 64, height: 48, fpsNum: 25, fpsDen: 1)
        func check(_ flags: [String]) -> String? {
            do { try X264Session.validate(try EncodeSettings.parse(arguments: flags).0.resolved(), input: input); return nil }
            catch let e as LabError { return e.message } catch { return "\(error)" }
        }
        #expect(check(["--keyint", "60"]) == nil)
        #expect(check(["--frobnicate", "3"]) == "unknown setting 'frobnicate'")
        #expect(check(["--keyint", "abc"]) == "bad value for setting 'keyint': 'abc'")
        #expect(check(["--preset", "warp"]) == "unknown preset 'warp' (x264 presets: ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo)")
        #expect(check(["--profile", "baseline", "--bframes", "3"]) == nil)
        // x264 prints these reasons to stderr itself; the lab carries them in its one-line error instead.
        #expect(check(["--profile", "fancy"]) == "setting 'profile': x264 cannot apply profile 'fancy' to these settings (invalid profile: fancy; x264 profiles: baseline, main, high, high10, high422, high444)")
        #expect(check(["--profile", "baseline", "--qp", "0"]) == "setting 'profile': x264 cannot apply profile 'baseline' to these settings (baseline profile doesn't support lossless)")
        #expect(check(["--tune", "film,animation"]) == nil)
    }

    @Test("x264's warnings about the settings reach the run; the lab's own PSNR/SSIM switches add none")
    func warnings() throws {
        let input = EncoderInput(width: 64, height: 48, fpsNum: 25, fpsDen: 1)
        func warnings(_ flags: [String]) throws -> [String] {
            try X264Session(settings: try EncodeSettings.parse(arguments: flags).0.resolved(), input: input).takeWarnings()
        }
        #expect(try warnings(["--crf", "23"]) == [])
        #expect(try warnings(["--tune", "film,animation"]) == ["only 1 psy tuning can be used: ignoring tune animation"])
        #expect(try warnings(["--bitrate", "300", "--vbv-maxrate", "100", "--vbv-bufsize", "100"]) == ["max bitrate less than average bitrate, assuming CBR"])
        #expect(try warnings(["--vbv-maxrate", "500"]) == ["VBV maxrate specified, but no bufsize, ignored"])
    }

    @Test("the rate-control method x264 infers: cbr opens as abr with VBV and NAL HRD cbr (filler)")
    func resolvedParameters() throws {
        let input = EncoderInput(width: 64, height: 48, fpsNum: 25, fpsDen: 1)
        let session = try X264Session(settings: try EncodeSettings.parse(arguments: ["--rc", "cbr", "--bitrate", "500"]).0.resolved(), input: input)
        #expect(session.resolved.rcMethod == "abr")
        #expect(session.resolved.vbvMaxrateKbps == 500 && session.resolved.vbvBufsizeKbit == 500)
        #expect(session.resolved.nalHrd == 2 && session.resolved.filler)
        // Timebase as x264's CLI sets it for y4m: fps_den/fps_num.
        #expect(session.resolved.timebaseNum == 1 && session.resolved.timebaseDen == 25)
    }
}
