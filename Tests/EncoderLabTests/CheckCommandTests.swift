import Foundation
import Testing
@testable import EncoderLab
import H264

/// `enclab check` run as a user runs it (the built binary) on streams the x264 CLI wrote and ffmpeg put in MP4, its
/// lines checked against trace_headers (IDR pictures, slice types, entropy_coding_mode_flag), ffprobe (packets),
/// sqlite3 (the stored run) and arithmetic written out here.
@Suite("enclab check against trace_headers, ffprobe, sqlite3 and hand arithmetic", .serialized)
struct CheckCommandTests {
    /// 64x48 at 15 fps, 60 frames: a frame lasts 1/15 s, 30 frames 2 s, the clip 4 s.
    static let clip = SyntheticClip(width: 64, height: 48, frames: 60, fpsNum: 15, fpsDen: 1, seed: 11)
    /// IDRs at 0 and 30 only: keyint 30, no scene-cut IDR.
    static let keyint30 = ["--keyint", "30", "--scenecut", "0", "--threads", "1"]

    /// The x264 CLI (a stream the lab did not make) on the clip, written as `name` in the scratch folder.
    func x264(_ flags: [String], _ name: String, in scratch: Scratch) throws {
        if !FileManager.default.fileExists(atPath: scratch.file("clip.y4m")) { try Self.clip.write(to: scratch.file("clip.y4m")) }
        let r = try Witness.x264(["--quiet"] + flags + ["-o", scratch.file(name), scratch.file("clip.y4m")])
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// `ffmpeg -i s.264 -c copy -use_editlist 0 s.mp4`, as the issue makes the MP4, without an edit list: for a raw
    /// stream with B-frames ffmpeg writes one that starts two frames in (ffprobe flags those packets discarded and
    /// shows 58 of 60 frames), and check counts the frames shown (FieldEndingTests.editList); here every packet is one.
    func mp4(_ stream: String, _ name: String, in scratch: Scratch) throws {
        let r = try Witness.run("ffmpeg", ["-v", "error", "-y", "-i", Witness.file(scratch.file(stream)), "-c", "copy", "-use_editlist", "0",
                                           Witness.file(scratch.file(name))])
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// From trace_headers: the packets (decode order) holding an IDR slice, those holding a B slice, the count of P
    /// pictures, and each PPS's entropy_coding_mode_flag with its NAL unit's index in the stream.
    func traced(_ path: String) throws -> (packets: Int, idr: [Int], b: [Int], p: Int, pps: [(nal: Int, flag: Int)]) {
        let t = try Witness.traceHeaders(path).packets
        var idr: [Int] = [], b: [Int] = [], p = 0, pps: [(Int, Int)] = []
        var nal = 0
        for (k, packet) in t.enumerated() {
            if packet.contains(where: { $0.type == 5 }) { idr.append(k) }
            let slices = packet.filter { $0.type == 1 || $0.type == 5 }.compactMap { $0.values["slice_type"] }
            if slices.contains(where: { $0 % 5 == 1 }) { b.append(k) }
            if packet.contains(where: { $0.type == 1 }) && slices.allSatisfy({ $0 % 5 == 0 }) { p += 1 }
            for n in packet {
                if n.type == 8, let flag = n.values["entropy_coding_mode_flag"] { pps.append((nal, flag)) }
                nal += 1
            }
        }
        return (t.count, idr, b, p, pps)
    }

    func check(_ arguments: [String], in scratch: Scratch) throws -> (status: Int32, lines: [String], stderr: String) {
        let r = try Witness.enclab(["check"] + arguments, in: scratch.path)
        return (r.status, r.stdout.split(separator: "\n").map(String.init), r.stderr)
    }

    @Test("raw Annex B (x264 CLI, --keyint 30, VUI 15 fps): limits kept exit 0; broken exit 1, one line per gap and PPS")
    func rawKeyframesAndEntropy() throws {
        let scratch = Scratch()
        try x264(Self.keyint30 + ["--bframes", "0"], "s.264", in: scratch)
        let t = try traced(scratch.file("s.264"))
        try #require(t.packets == 60 && t.idr == [0, 30] && t.b.isEmpty, "\(t)")
        // x264's default is CABAC: its PPS (sent again before the second IDR, the same bytes) says
        // entropy_coding_mode_flag 1. check names the first; a repeat of the PPS in force is not a new violation.
        try #require(!t.pps.isEmpty && t.pps.allSatisfy { $0.flag == 1 }, "\(t.pps)")
        let counts = "60 frames (IDR 2, I 0, P \(t.p), Bref 0, B 0) over 4 s, times from the SPS (fixed frame rate 15 fps); largest GOP 30 frames, longest GOP 2 s"
        let kept = try check(["s.264", "--expect", "MaxKeyFrameInterval=30", "--expect", "MaxKeyFrameIntervalDuration=2",
                              "--expect", "AllowFrameReordering=false", "--expect", "H264EntropyMode=CABAC"], in: scratch)
        #expect(kept.status == 0, "\(kept.stderr)")
        // A gap of exactly 30 frames and exactly 2 s passes.
        #expect(kept.lines == ["check s.264: \(counts): no violations (MaxKeyFrameInterval=30 ok, MaxKeyFrameIntervalDuration=2 ok, AllowFrameReordering=false ok, H264EntropyMode=CABAC ok)"])
        let broken = try check(["s.264", "--expect", "MaxKeyFrameInterval=20", "--expect", "kVTCompressionPropertyKey_MaxKeyFrameIntervalDuration=1.5",
                                "--expect", "H264EntropyMode=kVTH264EntropyMode_CAVLC"], in: scratch)
        #expect(broken.status == 1, "\(broken.stderr)")
        // Keyframes 0 and 30 at 0 s and 30/15 = 2 s; the end is 60/15 = 4 s.
        #expect(broken.lines == [
            "MaxKeyFrameInterval=20: 30 frames from keyframe 0 (0 s) to keyframe 30 (2 s), more than 20 (display order, 2 s)",
            "MaxKeyFrameInterval=20: 30 frames from keyframe 30 (2 s) to the end (4 s), more than 20 (display order, 2 s)",
            "MaxKeyFrameIntervalDuration=1.5: 2 s from keyframe 0 (0 s) to keyframe 30 (2 s), more than 1.5 s (display order, 30 frames)",
            "MaxKeyFrameIntervalDuration=1.5: 2 s from keyframe 30 (2 s) to the end (4 s), more than 1.5 s (display order, 30 frames)",
            "H264EntropyMode=CAVLC: PPS id 0 (NAL unit \(t.pps[0].nal)): entropy_coding_mode_flag 1 (CABAC), expected 0 (CAVLC)",
            "check s.264: \(counts): 5 violations (MaxKeyFrameInterval=20 2, MaxKeyFrameIntervalDuration=1.5 2, H264EntropyMode=CAVLC 1)",
        ], "\(broken.stderr)")
    }

    @Test("the same stream in an MP4 made by ffmpeg: times from the container, the same keyframes and frame counts")
    func mp4Keyframes() throws {
        let scratch = Scratch()
        try x264(Self.keyint30 + ["--bframes", "0"], "s.264", in: scratch)
        try mp4("s.264", "s.mp4", in: scratch)
        let t = try traced(scratch.file("s.mp4"))
        try #require(t.packets == 60 && t.idr == [0, 30], "\(t)")
        let kept = try check(["s.mp4", "--expect", "MaxKeyFrameInterval=30", "--expect", "MaxKeyFrameIntervalDuration=2.5"], in: scratch)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.lines.count == 1 && kept.lines[0].hasPrefix("check s.mp4: 60 frames (IDR 2, I 0, P \(t.p), Bref 0, B 0) over ")
                && kept.lines[0].contains("times from the container (mov,mp4,") && kept.lines[0].hasSuffix(": no violations (MaxKeyFrameInterval=30 ok, MaxKeyFrameIntervalDuration=2.5 ok)"),
                "\(kept.lines)")
        let broken = try check(["s.mp4", "--expect", "MaxKeyFrameInterval=20"], in: scratch)
        #expect(broken.status == 1, "\(broken.stderr)")
        try #require(broken.lines.count == 3, "\(broken.lines)")
        #expect(broken.lines[0].hasPrefix("MaxKeyFrameInterval=20: 30 frames from keyframe 0 (") && broken.lines[0].contains(") to keyframe 30 ("))
        #expect(broken.lines[1].hasPrefix("MaxKeyFrameInterval=20: 30 frames from keyframe 30 (") && broken.lines[1].contains(") to the end ("))
        #expect(broken.lines[2].hasSuffix(": 2 violations (MaxKeyFrameInterval=20 2)"))
    }

    @Test("AllowFrameReordering=false: one line per frame with a B slice (trace_headers), raw and MP4; true checks nothing")
    func reordering() throws {
        let scratch = Scratch()
        try x264(Self.keyint30 + ["--bframes", "2", "--b-adapt", "0", "--b-pyramid", "none"], "b.264", in: scratch)
        try mp4("b.264", "b.mp4", in: scratch)
        for name in ["b.264", "b.mp4"] {
            let t = try traced(scratch.file(name))
            try #require(!t.b.isEmpty && t.packets == 60, "\(name): \(t)")
            let r = try check([name, "--expect", "AllowFrameReordering=false"], in: scratch)
            #expect(r.status == 1, "\(name): \(r.stderr)")
            let flagged = r.lines.dropLast().map { line -> Int in
                #expect(line.hasPrefix("AllowFrameReordering=false: frame ") && line.contains(" has B slices"), "\(line)")
                return Int(line.dropFirst("AllowFrameReordering=false: frame ".count).prefix { $0.isNumber }) ?? -1
            }
            // Without a B-pyramid every B frame is output before the P frame decoded just before it; nothing else moves.
            #expect(flagged == t.b, "\(name)")
            #expect(r.lines.last?.hasSuffix(": \(t.b.count) violations (AllowFrameReordering=false \(t.b.count))") == true, "\(r.lines.last ?? "")")
            let allowed = try check([name, "--expect", "AllowFrameReordering=true"], in: scratch)
            #expect(allowed.status == 0 && allowed.lines.count == 1, "\(allowed.lines)")
        }
    }

    /// The bytes DataRateLimits counts, found here: an Annex B file's bytes less its start codes (a 4-byte code's
    /// leading zero included), and an MP4's packet bytes (ffprobe) less a 4-byte length per NAL unit (trace_headers).
    @Test("DataRateLimits counts NAL units without start codes or lengths: raw and MP4 alike; a window of exactly the limit passes")
    func dataRateLimits() throws {
        let scratch = Scratch()
        try x264(Self.keyint30 + ["--bframes", "0"], "s.264", in: scratch)
        try mp4("s.264", "s.mp4", in: scratch)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file("s.264"))))
        var startCodes = 0
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1 {
                startCodes += i > 0 && bytes[i - 1] == 0 ? 4 : 3
                i += 3
            } else { i += 1 }
        }
        let rawPayload = bytes.count - startCodes
        let packets = try Witness.run("ffprobe", ["-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", Witness.file(scratch.file("s.mp4"))])
        let mp4Bytes = packets.stdout.split(separator: "\n").compactMap { Int($0) }.reduce(0, +)
        let nalCount = try Witness.traceHeaders(scratch.file("s.mp4")).packets.reduce(0) { $0 + $1.count }
        let mp4Payload = mp4Bytes - 4 * nalCount
        try #require(rawPayload == mp4Payload && rawPayload > 1000, "raw \(rawPayload), mp4 \(mp4Payload)")
        // One window of 1000 s holds every frame: exactly the total passes, one byte less is one window over.
        for name in ["s.264", "s.mp4"] {
            let kept = try check([name, "--expect", "DataRateLimits=\(rawPayload),1000"], in: scratch)
            // After the summary, the pair kept with its worst window: the whole stream, exactly the limit.
            #expect(kept.status == 0 && kept.lines.count == 2, "\(name): \(kept.lines) \(kept.stderr)")
            #expect(kept.lines.last == "DataRateLimits=\(rawPayload),1000: pair 1, \(rawPayload) bytes in 1000 s: kept in all 60 windows; "
                    + "the worst, frames 0-59 (decode order), holds \(rawPayload) bytes (1.000 x the limit)", "\(kept.lines)")
            let limit = rawPayload - 1
            let broken = try check([name, "--expect", "DataRateLimits=\(limit),1000"], in: scratch)
            #expect(broken.status == 1, "\(name): \(broken.stderr)")
            try #require(broken.lines.count == 2, "\(broken.lines)")
            #expect(broken.lines[0].hasPrefix("DataRateLimits=\(limit),1000: pair 1, \(limit) bytes in 1000 s: 1 of 60 windows hold more; the worst, frames 0-59 (decode order) from "), "\(broken.lines[0])")
            #expect(broken.lines[0].hasSuffix(" s, holds \(rawPayload) bytes (1.000 x the limit)"), "\(broken.lines[0])")
        }
    }

    /// 60 frames at 15 fps, each of at least one byte, and a limit of 1 byte in any 1 s: every one of the 60
    /// windows (one per frame: the DTS are distinct, ffprobe's 60 packets) holds more, so 60 violations, printed as
    /// one line naming the count and the worst (issue 17, item 7: one per pair was counted).
    @Test("DataRateLimits counts each window over the limit as one violation, printed once per pair with the worst")
    func dataRateWindowsCounted() throws {
        let scratch = Scratch()
        try x264(Self.keyint30 + ["--bframes", "0"], "s.264", in: scratch)
        let packets = try Witness.packetSizes(scratch.file("s.264"))
        try #require(packets.count == 60 && packets.allSatisfy { $0 > 1 })
        let broken = try check(["s.264", "--expect", "DataRateLimits=1,1"], in: scratch)
        #expect(broken.status == 1, "\(broken.stderr)")
        try #require(broken.lines.count == 2, "\(broken.lines)")
        #expect(broken.lines[0].hasPrefix("DataRateLimits=1,1: pair 1, 1 bytes in 1 s: 60 of 60 windows hold more; the worst"), "\(broken.lines[0])")
        #expect(broken.lines[1].hasSuffix(": 60 violations (DataRateLimits=1,1 60)"), "\(broken.lines[1])")
    }

    /// A freeze is reported once: 15 fps, keyframes at 0 and 10, frames 0-9 at k/15 s, then 2 s of freeze before
    /// frame 10 (PTS 9/15 + 2 s), frames 10-19 after it. With T = 1.5 s the stretch 0 → 10 lasts 9/15 + 2 = 2.6 s,
    /// longer than T only by the 2 s gap (2.6 − 2 = 0.6 s): it is the stall 9 → 10 alone. The stretch 10 → end
    /// (10/15 s) passes.
    @Test("one freeze is one violation: a stretch longer than T only because of a stall is that stall alone")
    func freezeReportedOnce() throws {
        let tb = try Rational(1, 15)
        let pts: [Int64] = Array(0..<10) + (0..<10).map { 39 + $0 }  // 9 + 30 ticks (2 s) = 39
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: try Rational(3, 2), timebase: tb)
        let check = try rule.violations(keyframes: [0, 10], pts: pts, endPTS: 49)
        #expect(check.violations == [KeyframeRule.Violation(kind: .stall, startFrame: 9, endFrame: 10, durationSeconds: Rational(2))])
        // The same freeze inside a stretch that is longer than T without it too (keyframe 0 only: 49/15 − 2 s =
        // 19/15 s ≤ 1.5 s still; with frames 10-29 after the freeze, 59/15 − 2 = 29/15 s > 1.5 s): both, once each.
        let longer: [Int64] = Array(0..<10) + (0..<20).map { 39 + $0 }
        let both = try rule.violations(keyframes: [0], pts: longer, endPTS: 59)
        #expect(both.violations.map(\.kind) == [.durationLimit, .stall])
        #expect(try rule.violations(keyframes: [0], pts: pts, endPTS: 49).violations.map(\.kind) == [.stall])
    }

    @Test("--tcfile-in times a variable-rate stream (1.7 s stall); without it the stream is refused, 65")
    func timecodes() throws {
        let scratch = Scratch()
        // Frame k at k x 66.667 ms up to frame 20, then 1700 ms to frame 21, then 66.667 ms steps: times in µs.
        var us: [Int] = [0]
        for k in 1..<60 { us.append(us[k - 1] + (k == 21 ? 1_700_000 : 66_667)) }
        let text = "# timecode format v2\n" + us.map { String(format: "%d.%03d", $0 / 1000, $0 % 1000) }.joined(separator: "\n") + "\n"
        try text.write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        try x264(Self.keyint30 + ["--bframes", "0", "--tcfile-in", scratch.file("tc.txt")], "v.264", in: scratch)
        try #require(try traced(scratch.file("v.264")).idr == [0, 30])
        // x264 writes a VFR stream's SPS with fixed_frame_rate_flag 0: its tick is not a frame duration.
        let refused = try check(["v.264", "--expect", "MaxKeyFrameIntervalDuration=3"], in: scratch)
        #expect(refused.status == 65 && refused.lines.isEmpty)
        #expect(refused.stderr.hasPrefix("enclab: v.264: no times: a raw Annex B stream has no container times, no --tcfile-in was given, and its SPS has fixed_frame_rate_flag 0"), "\(refused.stderr)")
        // Keyframe 30 is at frame 21's 20 x 66.667 + 1700 = 3033.34 ms plus 9 x 66.667 = 3633.343 ms > 3 s; the last
        // stretch is 30 frames of 66.667 ms = 2000.01 ms (the end: the last time plus the gap before it).
        let broken = try check(["v.264", "--tcfile-in", "tc.txt", "--expect", "MaxKeyFrameIntervalDuration=3"], in: scratch)
        #expect(broken.status == 1, "\(broken.stderr)")
        #expect(broken.lines.first == "MaxKeyFrameIntervalDuration=3: 3.633343 s from keyframe 0 (0 s) to keyframe 30 (3.633343 s), more than 3 s (display order, 30 frames)")
        #expect(broken.lines.count == 2 && broken.lines[1].hasSuffix("times from the timecode file tc.txt; largest GOP 30 frames, longest GOP 3.633343 s: 1 violation (MaxKeyFrameIntervalDuration=3 1)"), "\(broken.lines)")
        let kept = try check(["v.264", "--tcfile-in", "tc.txt", "--expect", "MaxKeyFrameIntervalDuration=4"], in: scratch)
        #expect(kept.status == 0 && kept.lines.count == 1, "\(kept.lines)")
        // At 1.5 s: both stretches (3.633343 s, 2.00001 s) and the 1.7 s stall between frames 20 and 21.
        let stall = try check(["v.264", "--tcfile-in", "tc.txt", "--expect", "MaxKeyFrameIntervalDuration=1.5"], in: scratch)
        #expect(stall.status == 1 && stall.lines.count == 4, "\(stall.lines)")
        #expect(stall.lines.contains("MaxKeyFrameIntervalDuration=1.5: stall: 1.7 s between frame 20 (1.33334 s) and frame 21 (3.03334 s), more than 1.5 s (display order); no keyframe could have prevented it"), "\(stall.lines)")
        #expect(stall.lines.contains("MaxKeyFrameIntervalDuration=1.5: 2.00001 s from keyframe 30 (3.633343 s) to the end (5.633353 s), more than 1.5 s (display order, 30 frames)"), "\(stall.lines)")
    }

    @Test("--db stores the stream like a run: its frames' sizes, PTS and DTS equal ffprobe's packets, types trace_headers'; --run checks it again")
    func storedStream() throws {
        let scratch = Scratch()
        try x264(Self.keyint30 + ["--bframes", "2"], "b.264", in: scratch)
        try mp4("b.264", "b.mp4", in: scratch)
        let r = try check(["b.mp4", "--db", "lab.sqlite", "--expect", "MaxKeyFrameInterval=20"], in: scratch)
        #expect(r.status == 1 && r.lines.last == "stored as run 1 (experiment check) in lab.sqlite", "\(r.lines) \(r.stderr)")
        let db = scratch.file("lab.sqlite")
        func sqlite(_ sql: String) throws -> [String] {
            try Witness.run("sqlite3", [db, sql]).stdout.split(separator: "\n").map(String.init)
        }
        let probe = try Witness.run("ffprobe", ["-v", "error", "-show_entries", "packet=size,pts,dts", "-of", "csv=p=0", Witness.file(scratch.file("b.mp4"))])
        // ffprobe's csv keeps its own field order (pts, dts, size).
        let packets = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        let stored = try sqlite("SELECT pts, dts, size_bytes FROM frames WHERE run_id = 1 ORDER BY coded_index").map { $0.split(separator: "|").map(String.init) }
        #expect(stored == packets && stored.count == 60)
        let t = try Witness.traceHeaders(scratch.file("b.mp4")).packets
        let types = t.map { packet -> String in
            let slices = packet.filter { $0.type == 1 || $0.type == 5 }
            if slices.contains(where: { $0.type == 5 }) { return "IDR|1" }
            switch (slices.first?.values["slice_type"] ?? -1) % 5 {
            case 1: return slices.contains { $0.refIdc > 0 } ? "Bref|0" : "B|0"
            case 0: return "P|0"
            default: return "I|0"
            }
        }
        #expect(try sqlite("SELECT type, keyframe FROM frames WHERE run_id = 1 ORDER BY coded_index") == types)
        #expect(try sqlite("SELECT count(*) FROM frames WHERE run_id = 1 AND (qp IS NOT NULL OR psnr_avg IS NOT NULL OR ssim IS NOT NULL)") == ["0"])
        let bytes = packets.compactMap { Int($0.last ?? "") }.reduce(0, +)
        #expect(try sqlite("SELECT experiment, clip, status, frames, bytes, x264_version IS NULL, stream_path FROM runs") == ["check|b.mp4|done|60|\(bytes)|1|b.mp4"])
        let idr = types.indices.filter { types[$0] == "IDR|1" }
        #expect(try sqlite("SELECT max_frames, frame_limit, actual, violations FROM keyframe_analysis") == ["20|20|\(JSON.string(idr))|2"])
        // Every PPS in the packets, and the avcC record's one (out of band: no NAL unit index).
        let inPackets = t.reduce(0) { $0 + $1.filter { $0.type == 8 }.count }
        #expect(try sqlite("SELECT count(*), count(nal_unit_index) FROM parameter_sets WHERE run_id = 1 AND kind = 'pps'") == ["\(inPackets + 1)|\(inPackets)"])
        // The stored run, checked from its frames, gives the stream's own violation lines.
        let again = try check(["--db", "lab.sqlite", "--run", "1", "--expect", "MaxKeyFrameInterval=20"], in: scratch)
        #expect(again.status == 1 && Array(again.lines.prefix(2)) == Array(r.lines.prefix(2)), "\(again.lines) \(r.lines)")
        // The raw stream stored: sizes as ffprobe's h264 parser splits the file.
        let raw = try check(["b.264", "--db", "raw.sqlite", "--expect", "MaxKeyFrameInterval=30"], in: scratch)
        #expect(raw.status == 0, "\(raw.stderr)")
        let rawSizes = try Witness.run("sqlite3", [scratch.file("raw.sqlite"), "SELECT size_bytes FROM frames ORDER BY coded_index"]).stdout
            .split(separator: "\n").compactMap { Int($0) }
        #expect(rawSizes == (try Witness.packetSizes(scratch.file("b.264"))))
    }

    @Test("MaxKeyFrameInterval 0 is the encoder's choice: no frame limit, for check and encode alike")
    func zeroFrames() throws {
        // 300 frames at 1 tick each, one keyframe: a stretch of 300 frames, 300 ticks (1/30 s each: 10 s).
        let pts = (0..<300).map { Int64($0) }
        let tb = try Rational(1, 30)
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: .zero, timebase: tb)
        #expect(rule.frameLimit == nil)
        #expect(try rule.violations(keyframes: [0], pts: pts, endPTS: 300).violations.isEmpty)
        // A frame limit given is kept.
        #expect(try KeyframeRule(maxFrames: 30, maxDuration: .zero, timebase: tb).frameLimit == 30)
    }

    @Test("bad --expect names and values are 64 (nearest name suggested), a missing stream 66; nothing is stored")
    func refusals() throws {
        let scratch = Scratch()
        try x264(Self.keyint30, "s.264", in: scratch)
        let cases: [([String], Int32, String)] = [
            (["s.264", "--expect", "MaxKeyFrameIntervall=30"], 64,
             "enclab: unknown VideoToolbox property 'MaxKeyFrameIntervall' (did you mean 'MaxKeyFrameInterval'?) (see 'enclab check --help')\n"),
            (["s.264", "--expect", "AllowFrameReorder=false"], 64,
             "enclab: unknown VideoToolbox property 'AllowFrameReorder' (did you mean 'AllowFrameReordering'?) (see 'enclab check --help')\n"),
            (["s.264", "--expect", "AverageBitRate=1000000"], 64,
             "enclab: --expect AverageBitRate: not a rule a stream can be checked against (check takes MaxKeyFrameInterval, MaxKeyFrameIntervalDuration, DataRateLimits, AllowFrameReordering, H264EntropyMode) (see 'enclab check --help')\n"),
            (["s.264", "--expect", "MaxKeyFrameInterval=-1"], 64,
             "enclab: bad value for VideoToolbox property 'MaxKeyFrameInterval': '-1' (a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit)) (see 'enclab check --help')\n"),
            (["s.264", "--expect", "DataRateLimits=250000,1,5"], 64,
             "enclab: bad value for VideoToolbox property 'DataRateLimits': '250000,1,5' (3 numbers: expected BYTES,SECONDS pairs) (see 'enclab check --help')\n"),
            (["s.264", "--expect", "H264EntropyMode=Huffman"], 64,
             "enclab: bad value for VideoToolbox property 'H264EntropyMode': 'Huffman' (CAVLC or CABAC) (see 'enclab check --help')\n"),
            (["s.264", "--expect", "MaxKeyFrameInterval"], 64,
             "enclab: --expect needs NAME=VALUE (a VideoToolbox property, e.g. MaxKeyFrameInterval=30), got 'MaxKeyFrameInterval' (see 'enclab check --help')\n"),
            (["s.264", "--expect", "MaxKeyFrameInterval=30", "--expect", "MaxKeyFrameInterval=60"], 64,
             "enclab: --expect MaxKeyFrameInterval given twice ('30' and '60') (see 'enclab check --help')\n"),
            (["s.264"], 64,
             "enclab: check needs at least one --expect NAME=VALUE (MaxKeyFrameInterval, MaxKeyFrameIntervalDuration, DataRateLimits, AllowFrameReordering, H264EntropyMode) (see 'enclab check --help')\n"),
            (["missing.264", "--expect", "MaxKeyFrameInterval=30"], 66, "enclab: missing.264: no such file\n"),
            (["s.264", "--tcfile-in", "missing.txt", "--expect", "MaxKeyFrameInterval=30"], 66, "enclab: missing.txt: no such timecode file\n"),
            (["--db", "missing.sqlite", "--run", "1", "--expect", "MaxKeyFrameInterval=30"], 66, "enclab: missing.sqlite: no such database\n"),
        ]
        for (arguments, status, stderr) in cases {
            let r = try Witness.enclab(["check"] + arguments + (arguments.contains("--db") ? [] : ["--db", "lab.sqlite"]), in: scratch.path)
            #expect(r.status == status && r.stderr == stderr && r.stdout.isEmpty, "\(arguments): \(r.status) \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["clip.y4m", "s.264"])
    }
}
