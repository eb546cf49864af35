import Foundation
import Testing
import H264
@testable import EncoderLab

/// VideoToolbox's properties as settings (issue 10, items 1 and 3): parsing in Apple's names and units, the errors,
/// the mapping onto x264 options with Apple's incompatibilities, the x264 option winning, and vt-compat. Expected
/// values are written out by hand from Apple's units (bit/s ÷ 1000 = kbit/s; seconds × kbit/s = kbit).
@Suite("VideoToolbox properties: parsing, mapping onto x264, conflicts and vt-compat")
struct VideoToolboxTests {
    /// Settings from command-line words, resolved (with an optional DataRateLimits mapping).
    func resolved(_ words: [String], vbv: ((String, Bool) throws -> VTDataRateVBV?)? = nil) throws -> EncodeSettings {
        let (s, rest) = try EncodeSettings.parse(arguments: words)
        #expect(rest.isEmpty)
        return try s.resolved(dataRateLimitsVBV: vbv)
    }

    func args(_ words: [String]) throws -> [String] { try resolved(words).x264Arguments }

    func message(_ words: [String]) -> String? {
        do { _ = try resolved(words); return nil } catch let e as LabError { return e.message } catch { return "\(error)" }
    }

    func vt(_ pairs: [String]) -> [String] { pairs.flatMap { ["--vt", $0] } }

    @Test("each property in Apple's name and unit, with or without Apple's prefixes; booleans true/false/1/0; exact seconds")
    func parsing() throws {
        let (s, _) = try EncodeSettings.parse(arguments: vt([
            "kVTCompressionPropertyKey_AverageBitRate=1500000", "DataRateLimits= 250000 , 1.0 ,50000,.10",
            "MaxKeyFrameInterval=30", "kVTCompressionPropertyKey_MaxKeyFrameIntervalDuration=3.50",
            "AllowFrameReordering=0", "H264EntropyMode=kVTH264EntropyMode_CAVLC", "ProfileLevel=kVTProfileLevel_H264_Main_4_1",
            "RealTime=TRUE", "ExpectedFrameRate=30000/1001", "AllowOpenGOP=1",
        ]))
        let v = s.videoToolbox
        #expect(v.averageBitRate == 1_500_000 && v.maxKeyFrameInterval == 30)
        #expect(v.dataRateLimits == "250000,1,50000,0.1")
        #expect(v.maxKeyFrameIntervalDuration == (try Rational(7, 2)))
        #expect(v.allowFrameReordering == false && v.realTime == true && v.allowOpenGOP == true)
        #expect(v.entropyMode == .cavlc && v.profileLevel?.name == "H264_Main_4_1")
        #expect(v.expectedFrameRate == (try Rational(30000, 1001)))
        #expect(!v.compat)
        // The canonical record: numbers, booleans, text.
        let c = v.canonicalProperties
        #expect(JSON.string(c) == #"{"AllowFrameReordering":false,"AllowOpenGOP":true,"AverageBitRate":1500000,"DataRateLimits":"250000,1,50000,0.1","ExpectedFrameRate":"30000\/1001","H264EntropyMode":"CAVLC","MaxKeyFrameInterval":30,"MaxKeyFrameIntervalDuration":"3.5","ProfileLevel":"H264_Main_4_1","RealTime":true}"#)
        let (r, _) = try EncodeSettings.parse(arguments: vt([
            "ConstantBitRate=400000", "VBVBufferDuration=7/3", "VBVInitialDelayPercentage=37.5", "RealTime=false",
            "AllowFrameReordering=true", "MaxKeyFrameIntervalDuration=0",
        ]) + ["--vt-compat"])
        let w = r.videoToolbox
        #expect(try w.constantBitRate == 400_000 && w.vbvBufferDuration == (Rational(7, 3)))
        #expect(try w.vbvInitialDelayPercentage == (Rational(75, 2)) && w.realTime == false && w.allowFrameReordering == true)
        #expect(w.maxKeyFrameIntervalDuration == .zero && w.compat)
        #expect(JSON.string(w.canonicalProperties) == #"{"AllowFrameReordering":true,"ConstantBitRate":400000,"MaxKeyFrameIntervalDuration":"0","RealTime":false,"VBVBufferDuration":"7\/3","VBVInitialDelayPercentage":"37.5"}"#)
        // The two spellings are one property: given twice on one command line, it is refused (none silently wins).
        #expect(throws: LabError(.usage, "--vt MaxKeyFrameInterval is given twice; give each VideoToolbox property once")) {
            _ = try EncodeSettings.parse(arguments: vt(["MaxKeyFrameInterval=10", "kVTCompressionPropertyKey_MaxKeyFrameInterval=20"]))
        }
        // Experiment keys are the same names; x264's lower-case names are not taken for properties.
        #expect(VideoToolboxSettings.isPropertyKey("AverageBitRate") && VideoToolboxSettings.isPropertyKey("kVTCompressionPropertyKey_RealTime"))
        #expect(VideoToolboxSettings.isPropertyKey("averagebitrate"))
        #expect(!VideoToolboxSettings.isPropertyKey("bitrate") && !VideoToolboxSettings.isPropertyKey("no-cabac") && !VideoToolboxSettings.isPropertyKey("8x8dct"))
    }

    @Test("an unknown property is refused naming it and the nearest known name")
    func unknownNames() throws {
        #expect(message(vt(["AverageBitrate=1000000"])) == "unknown VideoToolbox property 'AverageBitrate' (did you mean 'AverageBitRate'?)")
        for (given, nearest) in [("MaxKeyframeInterval", "MaxKeyFrameInterval"), ("kVTCompressionPropertyKey_RealTme", "RealTime"),
                                 ("H264EntropyModes", "H264EntropyMode"), ("ProfileLevels", "ProfileLevel"),
                                 ("MaxKeyFrameIntervalDurations", "MaxKeyFrameIntervalDuration"), ("DataRateLimit", "DataRateLimits"),
                                 ("VBVMaxBitrate", "VBVMaxBitRate"), ("averagebitrate", "AverageBitRate")] {
            #expect(message(vt(["\(given)=1"])) == "unknown VideoToolbox property '\(given)' (did you mean '\(nearest)'?)", "\(given)")
        }
        // As an experiment key too (the name as written).
        var s = EncodeSettings()
        #expect(throws: LabError.usage("unknown VideoToolbox property 'AllowFrameReorder' (did you mean 'AllowFrameReordering'?)")) {
            try s.set("AllowFrameReorder", "false")
        }
        #expect(message(["--vt", "RealTime"]) == "--vt needs NAME=VALUE (a VideoToolbox property, e.g. AverageBitRate=1000000), got 'RealTime'")
        #expect(message(["--vt", "=true"]) == "--vt needs NAME=VALUE (a VideoToolbox property, e.g. AverageBitRate=1000000), got '=true'")
    }

    @Test("a value of the wrong shape or unit is refused naming the property and the value")
    func badValues() throws {
        func bad(_ property: String, _ value: String, _ reason: String) {
            #expect(message(vt(["\(property)=\(value)"])) == "bad value for VideoToolbox property '\(property)': '\(value)' (\(reason))", "\(property)=\(value)")
        }
        bad("DataRateLimits", "250000,1,5", "3 numbers: expected BYTES,SECONDS pairs")
        bad("DataRateLimits", "250000", "1 numbers: expected BYTES,SECONDS pairs")
        bad("DataRateLimits", "1,1,2,2,3,3", "3 pairs: at most two BYTES,SECONDS pairs")
        bad("DataRateLimits", "250000,-1", "pair 1: seconds '-1' must be a decimal above 0")
        bad("DataRateLimits", "250000,1,50000,0", "pair 2: seconds '0' must be a decimal above 0")
        bad("DataRateLimits", "2.5e5,1", "pair 1: bytes '2.5e5' must be a whole number above 0")
        bad("MaxKeyFrameInterval", "-1", "a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit)")
        bad("MaxKeyFrameInterval", "2.5", "a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit)")
        bad("MaxKeyFrameIntervalDuration", "-3.5", "seconds (0: no limit) must not be negative")
        bad("MaxKeyFrameIntervalDuration", "3.5s", "seconds (0: no limit) as a decimal (3.5) or a fraction (7/2)")
        bad("ExpectedFrameRate", "30/0", "frames per second as a decimal (3.5) or a fraction (7/2)")
        bad("AverageBitRate", "1.5e6", "a whole number of bit/s, 0 or from 1000 to 2147483647")
        bad("AverageBitRate", "500", "below 1000 bit/s: x264 takes whole kbit/s (0 lets the encoder choose)")
        bad("ConstantBitRate", "0", "below 1000 bit/s: x264 takes whole kbit/s")
        bad("VBVMaxBitRate", "2147483648", "a whole number of bit/s from 1000 to 2147483647")
        bad("VBVBufferDuration", "0", "the VBV buffer duration must be above 0 seconds")
        bad("VBVInitialDelayPercentage", "100.5", "a percentage from 0 to 100")
        bad("AllowFrameReordering", "yes", "a boolean: true, false, 1 or 0")
        bad("H264EntropyMode", "cabac", "CAVLC or CABAC")
        let list = "Apple's H.264 list: H264_Baseline_1_3, H264_{Baseline,Main,High}_{3_0,3_1,3_2,4_0,4_1,4_2,5_0,5_1,5_2}, H264_{Baseline,Main,High,ConstrainedBaseline}_AutoLevel"
        bad("ProfileLevel", "H264_Main_1_3", "not one of \(list)")
        bad("ProfileLevel", "H264_High444_AutoLevel", "not one of \(list)")
        bad("ProfileLevel", "Main", "not one of \(list)")
        bad("ProfileLevel", "HEVC_Main_AutoLevel", "the lab encodes H.264 only (\(list))")
        bad("ProfileLevel", "H264_Extended_5_0", "x264 cannot signal the Extended profile (profile_idc 88): it has no Extended profile")
        bad("ProfileLevel", "kVTProfileLevel_H264_Extended_AutoLevel", "x264 cannot signal the Extended profile (profile_idc 88): it has no Extended profile")
        bad("ProfileLevel", "H264_ConstrainedHigh_AutoLevel", "x264 cannot signal Constrained High: it never sets constraint_set4_flag and constraint_set5_flag")
        #expect(message(["--vt-compat=yes"]) == "flag '--vt-compat' takes no argument, got 'yes'")
    }

    @Test("each property's x264 options, by hand: bit/s ÷ 1000, seconds × kbit/s, percentage ÷ 100")
    func mapping() throws {
        #expect(try args(vt(["AverageBitRate=1500000"])) == ["--bitrate", "1500"])
        #expect(try args(vt(["AverageBitRate=0"])) == [])
        #expect(try args(vt(["H264EntropyMode=CAVLC"])) == ["--no-cabac"])
        #expect(try args(vt(["H264EntropyMode=CABAC"])) == ["--cabac"])
        #expect(try args(vt(["AllowFrameReordering=false"])) == ["--bframes", "0"])
        #expect(try args(vt(["AllowFrameReordering=true"])) == [])
        #expect(try args(vt(["ProfileLevel=H264_Main_4_1"])) == ["--level", "4.1", "--profile", "main"])
        #expect(try args(vt(["ProfileLevel=H264_High_AutoLevel"])) == ["--profile", "high"])
        #expect(try args(vt(["ProfileLevel=H264_Baseline_1_3"])) == ["--level", "1.3", "--no-cabac", "--bframes", "0", "--profile", "baseline"])
        #expect(try args(vt(["ProfileLevel=H264_ConstrainedBaseline_AutoLevel"])) == ["--no-cabac", "--bframes", "0", "--profile", "baseline"])
        #expect(try args(vt(["RealTime=true"])) == ["--tune", "zerolatency"])
        #expect(try args(vt(["RealTime=true"]) + ["--tune", "film"]) == ["--tune", "film,zerolatency"])
        #expect(try args(vt(["RealTime=true"]) + ["--tune", "zerolatency"]) == ["--tune", "zerolatency"])
        #expect(try args(vt(["RealTime=false"])) == [])
        #expect(try args(vt(["MaxKeyFrameInterval=30"])) == ["--keyint", "30"])
        #expect(try args(vt(["MaxKeyFrameInterval=0"])) == [])
        #expect(try args(vt(["ExpectedFrameRate=15"])) == [])
        // ConstantBitRate: the lab's rc cbr; Apple's default buffer 2.5 s x 400 kbit/s = 1000 kbit; 90 % = 0.9.
        let cbr = try resolved(vt(["ConstantBitRate=400000"]))
        #expect(cbr.rc == .cbr)
        #expect(cbr.x264Arguments == ["--bitrate", "400", "--vbv-bufsize", "1000", "--vbv-init", "0.9", "--vbv-maxrate", "400", "--nal-hrd", "cbr"])
        // VariableBitRate alone: rc vbr's maxrate 1.5 x 1000 = 1500 kbit/s, buffer 2.5 s x 1500 = 3750 kbit.
        let vbr = try resolved(vt(["VariableBitRate=1000000"]))
        #expect(vbr.rc == .vbr)
        #expect(vbr.x264Arguments == ["--bitrate", "1000", "--vbv-bufsize", "3750", "--vbv-init", "0.9", "--vbv-maxrate", "1500"])
        // All four VBV keys: 2000 kbit/s x 0.5 s = 1000 kbit; 37.5 % = 0.375.
        #expect(try args(vt(["VariableBitRate=1000000", "VBVMaxBitRate=2000000", "VBVBufferDuration=0.5", "VBVInitialDelayPercentage=37.5"]))
                == ["--bitrate", "1000", "--vbv-maxrate", "2000", "--vbv-bufsize", "1000", "--vbv-init", "0.375"])
        // VBVMaxBitRate alone caps x264's own rate control: 800 x 2.5 = 2000 kbit.
        let capped = try resolved(vt(["VBVMaxBitRate=800000"]))
        #expect(capped.rc == nil && capped.x264Arguments == ["--vbv-maxrate", "800", "--vbv-bufsize", "2000", "--vbv-init", "0.9"])
        // The buffer as a duration of an x264 --vbv-maxrate: 1 s x 700 = 700 kbit; Apple's defaults only with a VBV of its own.
        #expect(try args(vt(["VBVBufferDuration=1"]) + ["--vbv-maxrate", "700"]) == ["--vbv-bufsize", "700", "--vbv-maxrate", "700"])
        // Rounding down, said: 163840 bit/s is 163.84 kbit/s; 1/3 s x 1000 kbit/s = 333.3 kbit.
        let rounded = try resolved(vt(["AverageBitRate=163840"]))
        #expect(rounded.x264Arguments == ["--bitrate", "163"])
        #expect(rounded.adjustments == ["AverageBitRate 163840 bit/s is not a whole kbit/s: x264 gets 163 kbit/s (163000 bit/s, rounded down)"])
        let third = try resolved(vt(["VBVMaxBitRate=1000000", "VBVBufferDuration=1/3"]))
        #expect(third.x264Arguments == ["--vbv-maxrate", "1000", "--vbv-bufsize", "333", "--vbv-init", "0.9"])
        #expect(third.adjustments == ["VBVBufferDuration=1/3 s x vbv-maxrate 1000 kbit/s = 1000/3 kbit: x264 gets vbv-bufsize 333 (whole kbit, rounded down)"])
        // The properties' options come first, counted; the given ones after them; --rc's last.
        let mixed = try resolved(vt(["MaxKeyFrameInterval=30"]) + ["--rc", "cbr", "--bitrate", "500", "--threads", "1"])
        #expect(mixed.options == [X264Option("keyint", "30"), X264Option("bitrate", "500"), X264Option("threads", "1"),
                                  X264Option("vbv-maxrate", "500"), X264Option("vbv-bufsize", "500"), X264Option("nal-hrd", "cbr")])
        #expect(mixed.vtOptionCount == 1 && mixed.givenOptionCount == 2)
        // Without properties nothing changes: no count, no adjustment, no record.
        let plain = try resolved(["--crf", "20"])
        #expect(plain.vtOptionCount == 0 && plain.adjustments.isEmpty && plain.resolvedKeyframeRule == nil)
        #expect(plain.jsonObject["videotoolbox"] == nil && plain.videoToolboxKeyObject == nil)
    }

    @Test("an x264 option for the same parameter wins over the property, and the adjustments name both")
    func x264OptionWins() throws {
        let b = try resolved(vt(["AllowFrameReordering=false"]) + ["--bframes", "2"])
        #expect(b.x264Arguments == ["--bframes", "2"])
        #expect(b.adjustments == ["AllowFrameReordering=false (bframes 0) overridden by the x264 option --bframes 2"])
        let rate = try resolved(vt(["AverageBitRate=1000000"]) + ["--crf", "20"])
        #expect(rate.x264Arguments == ["--crf", "20"])
        #expect(rate.adjustments == ["AverageBitRate=1000000 (bitrate 1000) overridden by the x264 option --crf 20"])
        let cabac = try resolved(vt(["H264EntropyMode=CAVLC"]) + ["--cabac"])
        #expect(cabac.x264Arguments == ["--cabac"] && cabac.adjustments == ["H264EntropyMode=CAVLC (no-cabac) overridden by the x264 option --cabac"])
        let profile = try resolved(vt(["ProfileLevel=H264_Main_4_1"]) + ["--profile", "high", "--level", "3"])
        #expect(profile.x264Arguments == ["--level", "3", "--profile", "high"])
        #expect(profile.adjustments == ["ProfileLevel H264_Main_4_1 (profile main) overridden by the x264 option --profile high",
                                        "ProfileLevel=H264_Main_4_1 (level 4.1) overridden by the x264 option --level 3"])
        let keyint = try resolved(vt(["MaxKeyFrameInterval=30"]) + ["-I", "20"])
        #expect(keyint.x264Arguments == ["--keyint", "20"] && keyint.adjustments == ["MaxKeyFrameInterval=30 (keyint 30) overridden by the x264 option --keyint 20"])
        let realTime = try resolved(vt(["RealTime=true"]) + ["--bframes", "3", "--no-sliced-threads"])
        #expect(realTime.x264Arguments == ["--tune", "zerolatency", "--bframes", "3", "--no-sliced-threads"])
        #expect(realTime.adjustments.dropFirst() == ["RealTime=true (tune zerolatency: bframes 0) overridden by the x264 option --bframes 3",
                                                     "RealTime=true (tune zerolatency: sliced-threads 1) overridden by the x264 option --no-sliced-threads"])
        #expect(realTime.adjustments.first?.hasPrefix("RealTime=true: the lab's choice is x264's tune zerolatency") == true)
        // Two properties setting one parameter are named together.
        let both = try resolved(vt(["AllowFrameReordering=false", "ProfileLevel=H264_Baseline_3_0"]) + ["--bframes", "1"])
        #expect(both.adjustments.last == "AllowFrameReordering=false, ProfileLevel=H264_Baseline_3_0 (bframes 0) overridden by the x264 option --bframes 1")
    }

    @Test("Apple's documented incompatibilities and the lab's contradictions are refused naming both settings")
    func contradictions() throws {
        let incompatible = "contradictory settings:"
        #expect(message(vt(["ConstantBitRate=400000", "AverageBitRate=400000"])) == "\(incompatible) ConstantBitRate with AverageBitRate (Apple: ConstantBitRate is not compatible with AverageBitRate and DataRateLimits)")
        #expect(message(vt(["ConstantBitRate=400000", "DataRateLimits=100000,1"])) == "\(incompatible) ConstantBitRate with DataRateLimits (Apple: ConstantBitRate is not compatible with AverageBitRate and DataRateLimits)")
        for key in ["VariableBitRate=500000", "VBVMaxBitRate=500000", "VBVBufferDuration=2", "VBVInitialDelayPercentage=50"] {
            let name = String(key.prefix { $0 != "=" })
            #expect(message(vt([key, "AverageBitRate=400000"])) == "\(incompatible) \(name) with AverageBitRate (Apple: \(name) is incompatible with AverageBitRate and DataRateLimits)")
            #expect(message(vt([key, "DataRateLimits=100000,1"])) == "\(incompatible) \(name) with DataRateLimits (Apple: \(name) is incompatible with AverageBitRate and DataRateLimits)")
        }
        #expect(message(vt(["ConstantBitRate=400000", "VariableBitRate=500000"])) == "\(incompatible) VariableBitRate with ConstantBitRate (Apple: VariableBitRate is not compatible with ConstantBitRate)")
        #expect(message(vt(["ConstantBitRate=400000", "VBVMaxBitRate=500000"])) == "\(incompatible) VBVMaxBitRate with ConstantBitRate (Apple: VBVMaxBitRate is not compatible with ConstantBitRate)")
        #expect(message(vt(["VBVBufferDuration=2"])) == "\(incompatible) VBVBufferDuration without a VBV rate (give ConstantBitRate, VariableBitRate or VBVMaxBitRate, or the x264 option --vbv-maxrate)")
        #expect(message(vt(["VBVInitialDelayPercentage=50"])) == "\(incompatible) VBVInitialDelayPercentage without a VBV rate (give ConstantBitRate, VariableBitRate or VBVMaxBitRate, or the x264 option --vbv-maxrate)")
        #expect(message(vt(["ConstantBitRate=400000"]) + ["--rc", "vbr"]) == "\(incompatible) rc vbr with ConstantBitRate (which is the lab's rc cbr)")
        #expect(message(vt(["ConstantBitRate=400000"]) + ["--crf", "20"]) == "\(incompatible) ConstantBitRate with the x264 option --crf 20 (a constant bit rate needs a bitrate)")
        #expect(message(vt(["AverageBitRate=400000"]) + ["--rc", "crf"]) == "\(incompatible) rc crf with AverageBitRate")
        let baseline = "\(incompatible) H264EntropyMode CABAC with profile Baseline (ProfileLevel H264_Baseline_3_1) (Baseline has no CABAC; Apple: an entropy mode the profile does not support gives undefined results; --vt-compat resolves it as VideoToolbox encoders are reported to: CAVLC)"
        #expect(message(vt(["ProfileLevel=H264_Baseline_3_1", "H264EntropyMode=CABAC"])) == baseline)
        // The x264 profile counts as the profile in effect.
        #expect(message(vt(["H264EntropyMode=CABAC"]) + ["--profile", "baseline"])?.hasPrefix("\(incompatible) H264EntropyMode CABAC with profile Baseline (Baseline has no CABAC;") == true)
        // A ConstantBitRate's bitrate overridden by --bitrate keeps rc cbr on the x264 bitrate.
        let cbr = try resolved(vt(["ConstantBitRate=400000"]) + ["--bitrate", "300"])
        // Its buffer is Apple's 2.5 s of the x264 bitrate: 2.5 x 300 = 750 kbit.
        #expect(cbr.x264Arguments == ["--vbv-bufsize", "750", "--vbv-init", "0.9", "--bitrate", "300", "--vbv-maxrate", "300", "--nal-hrd", "cbr"])
        #expect(cbr.adjustments == ["ConstantBitRate=400000 (bitrate 400) overridden by the x264 option --bitrate 300"])
    }

    @Test("vt-compat: DataRateLimits means no B-frames, two pairs only the first, both keyframe limits the time limit alone, Baseline CAVLC")
    func vtCompat() throws {
        var calls: [(String, Bool)] = []
        let map: (String, Bool) throws -> VTDataRateVBV? = { text, compat in
            calls.append((text, compat))
            return VTDataRateVBV(maxrateKbps: 1900, bufsizeKbit: 100, targetKbps: 1266)
        }
        let words = vt(["DataRateLimits=250000,1,50000,0.1", "MaxKeyFrameInterval=30", "MaxKeyFrameIntervalDuration=3.5",
                        "ProfileLevel=H264_Baseline_AutoLevel", "H264EntropyMode=CABAC"])
        let compat = try resolved(words + ["--vt-compat"], vbv: map)
        #expect(calls.count == 1 && calls[0].0 == "250000,1,50000,0.1" && calls[0].1)
        #expect(compat.x264Arguments == ["--vbv-maxrate", "1900", "--vbv-bufsize", "100", "--bitrate", "1266", "--bframes", "0",
                                         "--keyint", "infinite", "--no-cabac", "--profile", "baseline"])
        #expect(compat.resolvedKeyframeRule == VTKeyframeLimits(maxFrames: 30, maxDuration: try Rational(7, 2), vtCompat: true))
        let a = compat.adjustments
        #expect(a.contains("vt-compat: DataRateLimits 250000,1,50000,0.1: only the first pair (250000,1) is honoured (Apple QA1958: limits in order of precedence, some encoders honour only the first)"))
        #expect(a.contains { $0.hasPrefix("vt-compat: DataRateLimits present: no B-frames (bframes 0), as VideoToolbox was reported to do (openradar 51207635") })
        #expect(a.contains { $0.hasPrefix("vt-compat: MaxKeyFrameInterval 30 with MaxKeyFrameIntervalDuration 3.5: the time limit alone is applied (keyint infinite)") })
        #expect(a.contains { $0.hasPrefix("vt-compat: H264EntropyMode CABAC with profile Baseline: CAVLC, as FFmpeg's videotoolboxenc.c") })
        #expect(a.contains("DataRateLimits without AverageBitRate: the lab's target bitrate 1266 kbit/s, below vbv-maxrate 1900 kbit/s (VideoToolbox picks its own target below the limits)"))
        // Native: both pairs go to the mapping, B-frames and the frame limit stay, CABAC with Baseline is refused.
        calls = []
        let native = try resolved(vt(["DataRateLimits=250000,1,50000,0.1", "MaxKeyFrameInterval=30", "MaxKeyFrameIntervalDuration=3.5",
                                      "AverageBitRate=1000000"]), vbv: map)
        #expect(calls.count == 1 && calls[0].0 == "250000,1,50000,0.1" && !calls[0].1)
        #expect(native.x264Arguments == ["--bitrate", "1000", "--vbv-maxrate", "1900", "--vbv-bufsize", "100", "--keyint", "30"])
        #expect(native.adjustments.isEmpty)
        #expect(native.resolvedKeyframeRule == VTKeyframeLimits(maxFrames: 30, maxDuration: try Rational(7, 2), vtCompat: false))
        // One limit alone under vt-compat is applied as given.
        #expect(try resolved(vt(["MaxKeyFrameInterval=30"]) + ["--vt-compat"]).x264Arguments == ["--keyint", "30"])
        #expect(try resolved(vt(["MaxKeyFrameIntervalDuration=1.5"]) + ["--vt-compat"]).resolvedKeyframeRule
                == VTKeyframeLimits(maxFrames: 0, maxDuration: try Rational(3, 2), vtCompat: true))
        // The x264 option still wins under vt-compat.
        let kept = try resolved(vt(["DataRateLimits=250000,1"]) + ["--vt-compat", "--bframes", "2", "--vbv-maxrate", "1000"], vbv: map)
        #expect(kept.x264Arguments == ["--vbv-bufsize", "100", "--bitrate", "1266", "--bframes", "2", "--vbv-maxrate", "1000"])
        #expect(kept.adjustments.contains("DataRateLimits=250000,1 (vbv-maxrate 1900) overridden by the x264 option --vbv-maxrate 1000"))
        #expect(kept.adjustments.contains("vt-compat with DataRateLimits (bframes 0) overridden by the x264 option --bframes 2"))
        // Without a mapping DataRateLimits is recorded and said not to be mapped.
        let unmapped = try resolved(vt(["DataRateLimits=250000,1"]))
        #expect(unmapped.x264Arguments == [] && unmapped.adjustments == ["DataRateLimits 250000,1: not mapped onto x264's VBV (the caller gave no frame rate to map it with)"])
        // Zero pairs: no limit, nothing to map.
        let none = try resolved(vt(["DataRateLimits="]) + ["--vt-compat"], vbv: map)
        #expect(none.x264Arguments == [] && none.adjustments.isEmpty && none.videoToolbox.dataRateLimits == "")
    }

    @Test("AllowOpenGOP is ignored for H.264 in both modes, said; ExpectedFrameRate is recorded only")
    func ignored() throws {
        for words in [vt(["AllowOpenGOP=true"]), vt(["AllowOpenGOP=false"]) + ["--vt-compat"]] {
            let s = try resolved(words)
            #expect(s.x264Arguments == [])
            #expect(s.adjustments.count == 1 && s.adjustments[0].hasSuffix("ignored: Apple documents it for HEVC; H.264 keyframes stay IDR pictures"))
        }
        let rate = try resolved(vt(["ExpectedFrameRate=29.97"]))
        #expect(rate.x264Arguments == [] && rate.adjustments.isEmpty)
        #expect((rate.videoToolboxJSON?["properties"] as? [String: Any])?["ExpectedFrameRate"] as? String == "29.97")
    }

    @Test("the record: runs.settings.videotoolbox and the run key's object, present only with properties or vt-compat")
    func record() throws {
        let s = try resolved(vt(["MaxKeyFrameIntervalDuration=1.5", "RealTime=true"]) + ["--vt-compat"])
        #expect(JSON.string(s.videoToolboxKeyObject!) == #"{"properties":{"MaxKeyFrameIntervalDuration":"1.5","RealTime":true},"vt_compat":true}"#)
        let json = s.jsonObject["videotoolbox"] as? [String: Any]
        #expect(json?["tune"] as? String == "zerolatency" && json?["vt_compat"] as? Bool == true)
        #expect(JSON.string(json?["keyframe_rule"] ?? NSNull()) == #"{"max_duration_s":"1.5","max_frames":0,"vt_compat":true}"#)
        #expect((json?["adjustments"] as? [String])?.count == 1)
        // vt-compat alone is recorded (and keyed) too; no properties and no switch, nothing.
        #expect(JSON.string(try resolved(["--vt-compat"]).videoToolboxKeyObject!) == #"{"properties":{},"vt_compat":true}"#)
        #expect(try resolved(["--keyint", "30"]).jsonObject["videotoolbox"] == nil)
        // The same property in both spellings is one canonical value.
        #expect(JSON.string(try resolved(vt(["kVTCompressionPropertyKey_MaxKeyFrameIntervalDuration=3.50"])).videoToolboxKeyObject!)
                == JSON.string(try resolved(vt(["MaxKeyFrameIntervalDuration=7/2"])).videoToolboxKeyObject!))
    }

    @Test("experiment files: property keys mixed with x264 options, DataRateLimits as pairs (a grid of lists of pairs), vt-compat true/false")
    func experiment() throws {
        let object: [String: Any] = [
            "name": "vt", "clips": ["c.y4m"],
            "base": ["kVTCompressionPropertyKey_AllowFrameReordering": false, "threads": 1, "vt-compat": true],
            "grid": ["DataRateLimits": [[[250000, 1]], [[250000, 1], [50000, 0.1]], [] as [Any]], "MaxKeyFrameIntervalDuration": [1.5]],
        ]
        let e = try Experiment(object: object, file: "e.json", baseDirectory: "")
        #expect(e.runs.map(\.label) == ["DataRateLimits=250000,1 MaxKeyFrameIntervalDuration=1.5",
                                        "DataRateLimits=250000,1,50000,0.1 MaxKeyFrameIntervalDuration=1.5",
                                        "DataRateLimits= MaxKeyFrameIntervalDuration=1.5"])
        #expect(e.runs.map { $0.settings.videoToolbox.dataRateLimits } == ["250000,1", "250000,1,50000,0.1", ""])
        #expect(e.runs.allSatisfy { $0.settings.videoToolbox.compat && $0.settings.videoToolbox.allowFrameReordering == false })
        #expect(e.runs[0].settings.options == [X264Option("threads", "1")])
        #expect(e.runs[1].axesJSON == #"{"DataRateLimits":[[250000,1],[50000,0.1]],"MaxKeyFrameIntervalDuration":1.5}"#)
        // vt-compat false turns it off.
        let off = try Experiment(object: ["name": "x", "clips": ["c.y4m"], "base": ["vt-compat": false]], file: "e.json", baseDirectory: "")
        #expect(!off.runs[0].settings.videoToolbox.compat)
        func refusal(_ base: [String: Any], grid: [String: Any] = [:]) -> String? {
            do { _ = try Experiment(object: ["name": "x", "clips": ["c.y4m"], "base": base, "grid": grid], file: "e.json", baseDirectory: ""); return nil }
            catch let e as LabError { return e.message } catch { return "\(error)" }
        }
        #expect(refusal(["DataRateLimits": [250000, 1]]) == "e.json: base setting 'DataRateLimits': DataRateLimits must be a list of [bytes, seconds] pairs, got [250000,1]")
        #expect(refusal(["DataRateLimits": [[250000, 1, 5]]]) == "e.json: base setting 'DataRateLimits': DataRateLimits must be a list of [bytes, seconds] pairs, got [[250000,1,5]]")
        #expect(refusal([:], grid: ["DataRateLimits": [[[1, 1], [2, 2], [3, 3]]]]) == "e.json: grid: bad value for VideoToolbox property 'DataRateLimits': '1,1,2,2,3,3' (3 pairs: at most two BYTES,SECONDS pairs)")
        #expect(refusal(["DataRateLimits": [[250000, -1]]]) == "e.json: base: bad value for VideoToolbox property 'DataRateLimits': '250000,-1' (pair 1: seconds '-1' must be a decimal above 0)")
        #expect(refusal(["MaxKeyFrameInterval": -1]) == "e.json: base: bad value for VideoToolbox property 'MaxKeyFrameInterval': '-1' (a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit))")
        #expect(refusal(["AverageBitrate": 1000000]) == "e.json: base: unknown VideoToolbox property 'AverageBitrate' (did you mean 'AverageBitRate'?)")
        #expect(refusal(["vt-compat": "yes"]) == "e.json: base setting 'vt-compat' is a flag without argument: give true, or leave it out")
    }

    @Test("exact numbers: decimals and fractions read exactly, written back as plain decimals where they have one")
    func numbers() throws {
        #expect(VideoToolboxSettings.exactNumber("3.50") == (try Rational(7, 2)))
        #expect(VideoToolboxSettings.exactNumber(".1") == (try Rational(1, 10)))
        #expect(VideoToolboxSettings.exactNumber("2.") == Rational(2))
        #expect(VideoToolboxSettings.exactNumber("30000/1001") == (try Rational(30000, 1001)))
        for bad in ["", ".", "-1", "+1", "1e3", "1/0", "1/-2", "0x10", "1.2.3", " 1"] {
            #expect(VideoToolboxSettings.exactNumber(bad) == nil, "\(bad)")
        }
        #expect(VideoToolboxSettings.text(try Rational(7, 2)) == "3.5")
        #expect(VideoToolboxSettings.text(try Rational(3, 8)) == "0.375")
        #expect(VideoToolboxSettings.text(try Rational(1, 3)) == "1/3")
        #expect(VideoToolboxSettings.text(Rational(25)) == "25")
        #expect(VideoToolboxSettings.text(try Rational(1, 1_000_000)) == "0.000001")
        #expect(VideoToolboxSettings.editDistance("kitten", "sitting") == 3)
        #expect(VideoToolboxSettings.editDistance("", "abc") == 3 && VideoToolboxSettings.editDistance("abc", "") == 3)
    }
}
