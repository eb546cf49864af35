import Foundation
import Testing
@testable import EncoderLab

/// VideoToolbox's properties end to end (issue 10, items 1 and 3): the built `enclab` refuses bad input with 64 and
/// records nothing; what the properties became is read back from runs.settings with sqlite3 and from the stream with
/// ffmpeg's trace_headers and ffprobe, each against a control run without the property.
@Suite("VideoToolbox properties through enclab encode and run: refusals, x264 resolved, the stream", .serialized)
struct VideoToolboxEncodeTests {
    static let clip = SyntheticClip(width: 96, height: 64, frames: 30, seed: 3)

    static func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try Witness.run("sqlite3", [db, sql]).stdout.split(separator: "\n").map(String.init)
    }

    /// Encodes c.y4m in `scratch` with `flags` into its own database; returns the database and the stream's path.
    static func encode(_ scratch: Scratch, _ name: String, _ flags: [String]) throws -> (db: String, stream: String) {
        let db = scratch.file("\(name).sqlite")
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--db", db, "--out", scratch.file("out-\(name)")] + flags, in: scratch.path)
        try #require(r.status == 0, "\(flags): \(r.stderr)")
        let stream = try sqlite(db, "SELECT stream_path FROM runs")[0]
        return (db, stream)
    }

    /// `json_extract(settings, PATH)` for each path, `|`-joined, of the database's one run.
    static func settings(_ db: String, _ paths: [String]) throws -> String {
        try sqlite(db, "SELECT " + paths.map { "json_extract(settings, '\($0)')" }.joined(separator: ", ") + " FROM runs")[0]
    }

    /// Whether the stream's 30 pictures (ffprobe) hold no B picture.
    static func noBFrames(_ stream: String) throws -> Bool {
        let types = try Witness.pictureTypes(stream)
        return types.count == clip.frames && !types.contains("B")
    }

    /// The first value trace_headers prints for `element` in the NAL units of `type`.
    static func traced(_ stream: String, type: Int, _ element: String) throws -> Int? {
        try Witness.traceHeaders(stream).packets.joined().first { $0.type == type && $0.values[element] != nil }?.values[element]
    }

    @Test("bad names and values exit 64 naming the property and the value, and leave no database and no folder")
    func refusals() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let cases: [(String, String)] = [
            ("AverageBitrate=1000000", "unknown VideoToolbox property 'AverageBitrate' (did you mean 'AverageBitRate'?)"),
            ("kVTCompressionPropertyKey_MaxKeyframeIntervalDuration=2", "unknown VideoToolbox property 'kVTCompressionPropertyKey_MaxKeyframeIntervalDuration' (did you mean 'MaxKeyFrameIntervalDuration'?)"),
            ("DataRateLimits=250000,1,50000", "bad value for VideoToolbox property 'DataRateLimits': '250000,1,50000' (3 numbers: expected BYTES,SECONDS pairs)"),
            ("DataRateLimits=1,1,2,2,3,3", "bad value for VideoToolbox property 'DataRateLimits': '1,1,2,2,3,3' (3 pairs: at most two BYTES,SECONDS pairs)"),
            ("DataRateLimits=250000,-1", "bad value for VideoToolbox property 'DataRateLimits': '250000,-1' (pair 1: seconds '-1' must be a decimal above 0)"),
            ("MaxKeyFrameInterval=-1", "bad value for VideoToolbox property 'MaxKeyFrameInterval': '-1' (a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit))"),
            ("ProfileLevel=H264_Main_6_0", "bad value for VideoToolbox property 'ProfileLevel': 'H264_Main_6_0' (not one of Apple's H.264 list: H264_Baseline_1_3, H264_{Baseline,Main,High}_{3_0,3_1,3_2,4_0,4_1,4_2,5_0,5_1,5_2}, H264_{Baseline,Main,High,ConstrainedBaseline}_AutoLevel)"),
            ("ProfileLevel=kVTProfileLevel_H264_Extended_AutoLevel", "bad value for VideoToolbox property 'ProfileLevel': 'kVTProfileLevel_H264_Extended_AutoLevel' (x264 cannot signal the Extended profile (profile_idc 88): it has no Extended profile)"),
            ("ProfileLevel=H264_ConstrainedHigh_AutoLevel", "bad value for VideoToolbox property 'ProfileLevel': 'H264_ConstrainedHigh_AutoLevel' (x264 cannot signal Constrained High: it never sets constraint_set4_flag and constraint_set5_flag)"),
        ]
        for (property, message) in cases {
            let r = try Witness.enclab(["encode", "c.y4m", "--db", "lab.sqlite", "--out", "out", "--vt", property], in: scratch.path)
            #expect(r.status == 64 && r.stdout.isEmpty, "\(property): \(r.status)")
            #expect(r.stderr == "enclab: \(message) (see 'enclab encode --help')\n", "\(property)")
        }
        // A contradiction of Apple's, and one of the lab's, are refused the same way.
        let cbr = try Witness.enclab(["encode", "c.y4m", "--vt", "ConstantBitRate=400000", "--vt", "AverageBitRate=300000"], in: scratch.path)
        #expect(cbr.status == 64 && cbr.stderr.hasPrefix("enclab: contradictory settings: ConstantBitRate with AverageBitRate (Apple:"))
        let cabac = try Witness.enclab(["encode", "c.y4m", "--vt", "ProfileLevel=H264_Baseline_3_0", "--vt", "H264EntropyMode=CABAC"], in: scratch.path)
        #expect(cabac.status == 64 && cabac.stderr.hasPrefix("enclab: contradictory settings: H264EntropyMode CABAC with profile Baseline"))
        // An experiment file: three pairs in a grid, and a flat pair where pairs belong.
        for (grid, message) in [(#"{"DataRateLimits": [[[1, 1], [2, 2], [3, 3]]]}"#, "e.json: grid: bad value for VideoToolbox property 'DataRateLimits': '1,1,2,2,3,3' (3 pairs: at most two BYTES,SECONDS pairs)"),
                                (#"{"DataRateLimits": [[250000, 1]]}"#, "e.json: grid setting 'DataRateLimits': DataRateLimits must be a list of [bytes, seconds] pairs, got [250000,1]")] {
            try Data(#"{"name": "vt", "clips": ["c.y4m"], "grid": \#(grid)}"#.utf8).write(to: URL(fileURLWithPath: scratch.file("e.json")))
            let r = try Witness.enclab(["run", "e.json"], in: scratch.path)
            #expect(r.status == 64 && r.stderr == "enclab: \(message) (see 'enclab run --help')\n", "\(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["c.y4m", "e.json"])
    }

    @Test("H264EntropyMode and ProfileLevel in the stream: CAVLC is entropy_coding_mode_flag 0, Baseline profile_idc 66 with constraint_set1_flag (Constrained Baseline)")
    func entropyAndProfile() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let cavlc = try Self.encode(scratch, "cavlc", ["--vt", "H264EntropyMode=CAVLC"])
        let cabac = try Self.encode(scratch, "cabac", ["--vt", "kVTCompressionPropertyKey_H264EntropyMode=kVTH264EntropyMode_CABAC", "--preset", "ultrafast"])
        #expect(try Self.traced(cavlc.stream, type: 8, "entropy_coding_mode_flag") == 0)
        #expect(try Self.traced(cabac.stream, type: 8, "entropy_coding_mode_flag") == 1)
        // x264 resolved it, from the property (ultrafast's CAVLC overridden).
        #expect(try Self.settings(cavlc.db, ["$.resolved.cabac", "$.provenance.cabac"]) == "0|vt")
        #expect(try Self.settings(cabac.db, ["$.resolved.cabac", "$.provenance.cabac"]) == "1|vt")
        let baseline = try Self.encode(scratch, "baseline", ["--vt", "ProfileLevel=H264_Baseline_3_1"])
        #expect(try Self.traced(baseline.stream, type: 7, "profile_idc") == 66)
        #expect(try Self.traced(baseline.stream, type: 7, "constraint_set1_flag") == 1)
        #expect(try Self.traced(baseline.stream, type: 7, "level_idc") == 31)
        #expect(try Self.traced(baseline.stream, type: 8, "entropy_coding_mode_flag") == 0)
        #expect(try Self.noBFrames(baseline.stream))
        #expect(try Self.settings(baseline.db, ["$.resolved.bframes", "$.provenance.bframes", "$.resolved.cabac", "$.provenance.cabac",
                                                "$.resolved.level_idc", "$.provenance.level_idc", "$.profile"]) == "0|vt|0|vt|31|vt|baseline")
        // The lab says what the profile did without a word, and what it chose.
        #expect(try Self.settings(baseline.db, ["$.videotoolbox.adjustments[0]"]).hasPrefix("ProfileLevel H264_Baseline_3_1: Baseline has no CABAC and no B-frames"))
        let warnings = try Self.sqlite(baseline.db, "SELECT warnings FROM runs")[0]
        #expect(warnings.contains("x264: profile baseline: x264_param_apply_profile turned off the 8x8 transform (8x8dct 1 -> 0), weighted P prediction (weightp 2 -> 0)"), "\(warnings)")
        let main = try Self.encode(scratch, "main", ["--vt", "ProfileLevel=H264_Main_AutoLevel"])
        #expect(try Self.traced(main.stream, type: 7, "profile_idc") == 77)
    }

    @Test("AllowFrameReordering=false leaves no B slices (ffprobe), where the control has some; an x264 --bframes wins, said in the adjustments")
    func reordering() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let control = try Self.encode(scratch, "control", [])
        #expect(try Witness.pictureTypes(control.stream).contains("B"), "the control must have B-frames for the test to mean anything")
        let off = try Self.encode(scratch, "off", ["--vt", "AllowFrameReordering=false"])
        #expect(try Self.noBFrames(off.stream))
        #expect(try Self.settings(off.db, ["$.resolved.bframes", "$.provenance.bframes", "$.options[0][0]", "$.options[0][1]"]) == "0|vt|bframes|0")
        let overridden = try Self.encode(scratch, "overridden", ["--vt", "AllowFrameReordering=0", "--bframes", "2"])
        #expect(try Witness.pictureTypes(overridden.stream).contains("B"))
        #expect(try Self.settings(overridden.db, ["$.resolved.bframes", "$.provenance.bframes", "$.videotoolbox.adjustments"])
                == #"2|given|["AllowFrameReordering=false (bframes 0) overridden by the x264 option --bframes 2"]"#)
    }

    @Test("vt-compat: DataRateLimits removes B-frames (native keeps them), two pairs honour the first, both keyframe limits drop keyint, Baseline makes CABAC CAVLC")
    func vtCompat() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let limits = ["--vt", "DataRateLimits=250000,1,50000,0.1"]
        let native = try Self.encode(scratch, "native", limits)
        #expect(try Witness.pictureTypes(native.stream).contains("B"))
        let compat = try Self.encode(scratch, "compat", limits + ["--vt-compat"])
        #expect(try Self.noBFrames(compat.stream))
        #expect(try Self.settings(compat.db, ["$.resolved.bframes", "$.provenance.bframes", "$.videotoolbox.vt_compat", "$.videotoolbox.properties.DataRateLimits"])
                == "0|vt|1|250000,1,50000,0.1")
        let adjustments = try Self.settings(compat.db, ["$.videotoolbox.adjustments"])
        #expect(adjustments.contains("vt-compat: DataRateLimits 250000,1,50000,0.1: only the first pair (250000,1) is honoured (Apple QA1958"))
        #expect(adjustments.contains("vt-compat: DataRateLimits present: no B-frames (bframes 0)"))
        // Both keyframe limits: the frame limit is dropped, and at 25 fps x264's keyint carries the time limit alone:
        // ⌊3.5 s × 25⌋ = 87 frames (natively the frame limit 10 comes first).
        let both = ["--vt", "MaxKeyFrameInterval=10", "--vt", "MaxKeyFrameIntervalDuration=3.5"]
        let keyNative = try Self.encode(scratch, "key-native", both)
        let keyCompat = try Self.encode(scratch, "key-compat", both + ["--vt-compat"])
        #expect(try Self.settings(keyNative.db, ["$.resolved.keyint", "$.provenance.keyint", "$.videotoolbox.keyframe_rule"])
                == #"10|vt|{"duration_keyint":87,"max_duration_s":"3.5","max_frames":10,"placement":"keyint","vt_compat":false}"#)
        #expect(try Self.settings(keyCompat.db, ["$.resolved.keyint", "$.provenance.keyint", "$.videotoolbox.keyframe_rule"])
                == #"87|vt|{"duration_keyint":87,"max_duration_s":"3.5","max_frames":10,"placement":"keyint","vt_compat":true}"#)
        let cabac = try Self.encode(scratch, "baseline-cabac", ["--vt", "ProfileLevel=H264_Baseline_AutoLevel", "--vt", "H264EntropyMode=CABAC", "--vt-compat"])
        #expect(try Self.traced(cabac.stream, type: 8, "entropy_coding_mode_flag") == 0)
        #expect(try Self.settings(cabac.db, ["$.videotoolbox.adjustments[0]"]).hasPrefix("vt-compat: H264EntropyMode CABAC with profile Baseline: CAVLC, as FFmpeg's videotoolboxenc.c"))
    }

    @Test("ConstantBitRate and Apple's VBV keys as x264 resolved them: kbit/s = bit/s ÷ 1000, buffer = seconds × kbit/s, vbv-init = percent ÷ 100")
    func rates() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // 400000 bit/s: 400 kbit/s; Apple's default 2.5 s: 1000 kbit; 90 %: 0.9; the lab's cbr: nal-hrd cbr and filler.
        let cbr = try Self.encode(scratch, "cbr", ["--vt", "ConstantBitRate=400000", "--vt", "ExpectedFrameRate=25"])
        #expect(try Self.settings(cbr.db, ["$.rc", "$.resolved.rc_method", "$.resolved.bitrate_kbps", "$.resolved.vbv_maxrate_kbps",
                                           "$.resolved.vbv_bufsize_kbit", "$.resolved.vbv_init", "$.resolved.nal_hrd", "$.resolved.filler",
                                           "$.provenance.bitrate_kbps", "$.provenance.vbv_bufsize_kbit", "$.provenance.vbv_maxrate_kbps",
                                           "$.videotoolbox.properties.ExpectedFrameRate"])
                == "cbr|abr|400|400|1000|0.9|cbr|1|vt|vt|rc|25")
        // 300000 bit/s VBR capped at 600000 bit/s, 0.5 s of buffer (0.5 x 600 = 300 kbit), 40 % full at the start.
        let vbr = try Self.encode(scratch, "vbr", ["--vt", "VariableBitRate=300000", "--vt", "VBVMaxBitRate=600000",
                                                   "--vt", "VBVBufferDuration=0.5", "--vt", "VBVInitialDelayPercentage=40"])
        #expect(try Self.settings(vbr.db, ["$.rc", "$.resolved.bitrate_kbps", "$.resolved.vbv_maxrate_kbps", "$.resolved.vbv_bufsize_kbit",
                                           "$.resolved.vbv_init", "$.provenance.vbv_init", "$.provenance.vbv_maxrate_kbps"])
                == "vbr|300|600|300|0.4|vt|vt")
        // AverageBitRate alone: ABR at 250 kbit/s.
        let abr = try Self.encode(scratch, "abr", ["--vt", "AverageBitRate=250000"])
        #expect(try Self.settings(abr.db, ["$.resolved.rc_method", "$.resolved.bitrate_kbps", "$.provenance.bitrate_kbps", "$.resolved.vbv_maxrate_kbps"])
                == "abr|250|vt|0")
    }

    @Test("the run key holds the properties canonically: both spellings one key, the same x264 options as an x264 flag another; RealTime's tune is provenance vt")
    func keys() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        func key(_ name: String, _ flags: [String]) throws -> String {
            try Self.sqlite(Self.encode(scratch, name, flags).db, "SELECT run_key FROM runs")[0]
        }
        let short = try key("a", ["--vt", "MaxKeyFrameIntervalDuration=1.5", "--vt", "MaxKeyFrameInterval=12"])
        let long = try key("b", ["--vt", "kVTCompressionPropertyKey_MaxKeyFrameIntervalDuration=3/2", "--vt", "kVTCompressionPropertyKey_MaxKeyFrameInterval=12"])
        let x264 = try key("c", ["--vt", "MaxKeyFrameIntervalDuration=1.5", "--keyint", "12"])
        let compat = try key("d", ["--vt", "MaxKeyFrameIntervalDuration=1.5", "--vt", "MaxKeyFrameInterval=12", "--vt-compat"])
        #expect(short == long && short != x264 && short != compat && x264 != compat)
        #expect(short.count == 64)
        let realTime = try Self.encode(scratch, "rt", ["--vt", "RealTime=true"])
        #expect(try Self.settings(realTime.db, ["$.x264_args", "$.resolved.bframes", "$.provenance.bframes", "$.videotoolbox.tune"])
                == "--tune zerolatency --threads 1|0|vt|zerolatency")
    }

    @Test("an experiment mixes property keys with x264 options; labels and properties are stored per run")
    func experiment() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let file = #"""
        {"name": "vt", "clips": ["c.y4m"],
         "base": {"threads": 1, "kVTCompressionPropertyKey_AllowFrameReordering": false, "vt-compat": true},
         "grid": {"DataRateLimits": [[[250000, 1]], []], "H264EntropyMode": ["CAVLC"]}}
        """#
        try Data(file.utf8).write(to: URL(fileURLWithPath: scratch.file("e.json")))
        let r = try Witness.enclab(["run", "e.json", "--db", "e.sqlite", "--out", "out"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        #expect(try Self.sqlite(scratch.file("e.sqlite"), "SELECT json_extract(settings, '$.label'), json_extract(settings, '$.videotoolbox.properties'), json_extract(settings, '$.resolved.bframes'), json_extract(settings, '$.resolved.cabac') FROM runs ORDER BY run_id")
                == [#"DataRateLimits=250000,1 H264EntropyMode=CAVLC|{"AllowFrameReordering":false,"DataRateLimits":"250000,1","H264EntropyMode":"CAVLC"}|0|0"#,
                    #"DataRateLimits= H264EntropyMode=CAVLC|{"AllowFrameReordering":false,"DataRateLimits":"","H264EntropyMode":"CAVLC"}|0|0"#])
    }
}
