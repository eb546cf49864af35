import Foundation
import Testing
@testable import EncoderLab

/// x264's own scene-cut IDRs restart VideoToolbox's keyframe rule (issue 17, item 1). A clip with hard cuts made by
/// ffmpeg's lavfi sources; the lab's IDRs read back with trace_headers and compared with the x264 CLI's given the same
/// keyint (and, where the lab forces IDRs, the same forced frames by `--qpfile`); the rule's positions worked out
/// here by hand.
@Suite("keyframe rule: x264's scene cuts restart the counts (against the x264 CLI)", .serialized)
struct SceneCutKeyframeTests {
    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    /// 240 frames of 128x96 at 25 fps with hard cuts at frames 30 and 160: testsrc (0-29), smptebars (30-159),
    /// mandelbrot (160-239).
    static func writeClip(_ path: String) throws {
        let r = try Witness.run("ffmpeg", [
            "-v", "error", "-f", "lavfi", "-i", "testsrc=size=128x96:rate=25", "-f", "lavfi", "-i", "smptebars=size=128x96:rate=25",
            "-f", "lavfi", "-i", "mandelbrot=size=128x96:rate=25", "-filter_complex",
            "[0]trim=end_frame=30[a];[1]trim=end_frame=130[b];[2]trim=end_frame=80[c];[a][b][c]concat=n=3:v=1:a=0,format=yuv420p",
            "-frames:v", "240", "-y", Witness.file(path)])
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// The x264 CLI's `--asm` without AVX-512, which the lab turns off, when this CPU has it (x264 names its
    /// capabilities in its log); no flag otherwise.
    static func asm(_ clip: String, in scratch: Scratch) throws -> [String] {
        let probe = try Witness.run("x264", ["--threads", "1", "--frames", "1", "-o", scratch.file("probe.264"), clip])
        guard let line = probe.stderr.split(separator: "\n").first(where: { $0.contains("using cpu capabilities:") }),
              let names = line.components(separatedBy: "capabilities:").last?.split(separator: " ").map(String.init),
              names.contains("AVX512") else { return [] }
        return ["--asm", names.filter { $0 != "AVX512" }.joined(separator: ",")]
    }

    /// Display indices of the IDR packets of a stream without B-frames (packet k is frame k), by trace_headers.
    static func idrs(_ stream: String) throws -> [Int] { try KeyframeRuleEncodeTests.idrPackets(stream) }

    /// `enclab encode c.y4m --threads 1 --bframes 0 FLAGS` into its own database; the stream's path and the database.
    static func encode(_ scratch: Scratch, _ name: String, _ flags: [String]) throws -> (stream: String, db: String, stderr: String) {
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--bframes", "0", "--db", "\(name).sqlite", "--out", name] + flags,
                                   in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        let db = scratch.file("\(name).sqlite")
        let stream = try sqlite(db, "SELECT stream_path FROM runs")[0]
        return (stream.hasPrefix("/") ? stream : scratch.file(stream), db, r.stderr)
    }

    static func json(_ list: [Int]) -> String { "[" + list.map(String.init).joined(separator: ",") + "]" }

    /// MaxKeyFrameInterval 50: x264's keyint 50 restarts at its cuts, 0, 30, 80, 130, 160, 210 (the CLI run).
    /// With MaxKeyFrameIntervalDuration 1.5 s too: frame k must be a keyframe when (k + 1 − K) / 25 > 1.5 with K the
    /// last, i.e. k − K ≥ 37 (37.5 rounded down), a keyint of 37: 0, 30, 67, 104, 141, 160, 197, 234. The lab forces
    /// nothing; x264's keyint is the CLI's.
    @Test("25 fps with hard cuts at 30 and 160: the lab's IDRs are the x264 CLI's with the same keyint and restart at each cut",
          arguments: [
            (["--vt", "MaxKeyFrameInterval=50"], 50, [0, 30, 80, 130, 160, 210]),
            (["--vt", "MaxKeyFrameInterval=50", "--vt", "MaxKeyFrameIntervalDuration=1.5"], 37, [0, 30, 67, 104, 141, 160, 197, 234]),
            (["--vt", "MaxKeyFrameIntervalDuration=1.5"], 37, [0, 30, 67, 104, 141, 160, 197, 234]),
          ] as [([String], Int, [Int])])
    func constantRate(flags: [String], keyint: Int, expected: [Int]) throws {
        let scratch = Scratch()
        try Self.writeClip(scratch.file("c.y4m"))
        let cli = try Witness.run("x264", ["--quiet", "--threads", "1", "--bframes", "0", "--keyint", String(keyint)]
                                  + Self.asm(scratch.file("c.y4m"), in: scratch) + ["-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        try #require(cli.status == 0, "\(cli.stderr)")
        let cliIDRs = try Self.idrs(scratch.file("cli.264"))
        #expect(cliIDRs == expected)
        let lab = try Self.encode(scratch, "lab", flags)
        #expect(try Self.idrs(lab.stream) == cliIDRs)
        // Counted from every IDR, the rule expects exactly the stream's IDRs; nothing was forced, nothing broken.
        #expect(try Self.sqlite(lab.db, "SELECT expected, actual, forced, violations FROM keyframe_analysis")
                == ["\(Self.json(expected))|\(Self.json(expected))|[]|0"])
        #expect(try Self.sqlite(lab.db, "SELECT json_extract(settings, '$.resolved.keyint'), json_extract(settings, '$.resolved.scenecut') > 0, json_extract(settings, '$.videotoolbox.keyframe_rule.placement') FROM runs")
                == ["\(keyint)|1|keyint"])
    }

    /// A variable rate (a timecode file: 40 ms a frame up to frame 120, then 60 ms) cannot make the duration limit a
    /// keyint: the lab forces the IDRs the rule needs with x264's scene cuts off (scenecut 0, said). The rule by hand,
    /// in milliseconds, counted from every IDR: x264's keyint 50 places an IDR 50 frames after the last; otherwise
    /// frame k is forced when t(k + 1) − t(last) > 1500 (the last frame's next time is its own + 40 ms). The x264 CLI
    /// given the same timecodes, keyint, scenecut 0 and the lab's forced frames by --qpfile writes the same IDRs.
    @Test("variable rate: the lab forces exactly the IDRs the rule needs counted from every IDR, scenecut 0; the x264 CLI with --qpfile agrees")
    func variableRate() throws {
        let scratch = Scratch()
        try Self.writeClip(scratch.file("c.y4m"))
        let times: [Int64] = (0..<240).map { $0 < 120 ? Int64($0) * 40 : 4800 + Int64($0 - 120) * 60 }
        try ("# timecode format v2\n" + times.map { "\($0)\n" }.joined()).write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        var idrs = [0], forced: [Int] = []
        for k in 1..<240 {
            let last = idrs.last!
            let next = k + 1 < 240 ? times[k + 1] : times[k] + 40
            if k - last >= 50 { idrs.append(k) } else if next - times[last] > 1500 { idrs.append(k); forced.append(k) }
        }
        // 40 ms frames: 37 frames from 0 (t(38) − t(0) = 1520 > 1500); from 111, 60 ms frames after 120; ...
        #expect(forced.count >= 5)
        let lab = try Self.encode(scratch, "lab", ["--tcfile-in", "tc.txt", "--vt", "MaxKeyFrameInterval=50", "--vt", "MaxKeyFrameIntervalDuration=1.5"])
        #expect(try Self.idrs(lab.stream) == idrs)
        #expect(try Self.sqlite(lab.db, "SELECT expected, actual, forced, violations FROM keyframe_analysis")
                == ["\(Self.json(idrs))|\(Self.json(idrs))|\(Self.json(forced))|0"])
        #expect(try Self.sqlite(lab.db, "SELECT json_extract(settings, '$.resolved.scenecut'), json_extract(settings, '$.videotoolbox.keyframe_rule.placement') FROM runs")
                == ["0|forced"])
        let said = "MaxKeyFrameIntervalDuration=1.5 with variable-rate timestamps: x264's keyint cannot carry a duration, so the lab forces an IDR where the rule needs one and turns x264's scene-cut detection off (scenecut 0)"
        #expect(lab.stderr.contains(said), "\(lab.stderr)")
        #expect(try Self.sqlite(lab.db, "SELECT value FROM runs, json_each(json_extract(settings, '$.videotoolbox.adjustments'))").contains { $0.hasPrefix(said) })
        // The CLI: the same times (in µs, as the lab hands them), keyint, no scene cuts, the forced frames as IDRs.
        try forced.map { "\($0) I\n" }.joined().write(toFile: scratch.file("q.txt"), atomically: true, encoding: .utf8)
        let cli = try Witness.run("x264", ["--quiet", "--threads", "1", "--bframes", "0", "--keyint", "50", "--no-scenecut",
                                           "--tcfile-in", scratch.file("tc.txt"), "--timebase", "1/1000000", "--qpfile", scratch.file("q.txt")]
                                  + Self.asm(scratch.file("c.y4m"), in: scratch) + ["-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        try #require(cli.status == 0, "\(cli.stderr)")
        #expect(try Self.idrs(scratch.file("cli.264")) == idrs)
    }

    /// A PTS that goes back (a schedule stepping back 0.3 s at 2 s): the duration since the last keyframe is no longer
    /// defined, so the lab forces no IDR from there on, and the warning names the IDRs it forced before (the stream's
    /// IDRs by trace_headers are frame 0, those, and x264's keyint ones, never one after the step but keyint's).
    @Test("non-increasing PTS: no IDR forced from the first step back, and the warning names the ones forced before it")
    func nonIncreasingPTS() throws {
        let scratch = Scratch()
        try Self.writeClip(scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--bframes", "0", "--db", "l.sqlite", "--out", "out",
                                    "--pts-schedule", "rate=25;back=8@2s", "--vt", "MaxKeyFrameIntervalDuration=0.5"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        let stream = try Self.sqlite(scratch.file("l.sqlite"), "SELECT stream_path FROM runs")[0]
        let idrs = try Self.idrs(stream.hasPrefix("/") ? stream : scratch.file(stream))
        let line = try #require(r.stderr.split(separator: "\n").first { $0.contains("keyframe rule not checked:") }.map(String.init), "\(r.stderr)")
        // 0.5 s at 25 fps: a keyframe every 12 frames ((k + 1 − K) / 25 > 0.5 ⟺ k − K ≥ 12) until the step back.
        let forcedText = try #require(line.components(separatedBy: "IDRs forced at ").last?.components(separatedBy: " (display order)").first)
        let forced = forcedText.components(separatedBy: ", ").compactMap { Int($0) }
        #expect(!forced.isEmpty && forced == Array(stride(from: 12, through: forced.last!, by: 12)), "\(line)")
        #expect(line.contains("none forced from the first PTS that is not after its predecessor"), "\(line)")
        // Every IDR in the stream but frame 0 is one named as forced (x264's keyint 250 is beyond the 240 frames).
        #expect(idrs == [0] + forced, "\(idrs) against \(line)")
    }

    /// The run key: runs without the keyframe rule keep main's keys (000cdb1); runs with it have a field of their own,
    /// and the measurement version is unchanged.
    @Test("run keys: a run without the rule keeps main's key; one with the rule names its placement; measurement_version stays 1")
    func keys() throws {
        let scratch = Scratch()
        try SyntheticClip(width: 64, height: 48, frames: 3, seed: 5).write(to: scratch.file("k.y4m"))
        func key(_ name: String, _ flags: [String]) throws -> String {
            let r = try Witness.enclab(["encode", "k.y4m", "--preset", "ultrafast", "--threads", "1", "--db", "\(name).sqlite", "--out", name] + flags,
                                       in: scratch.path)
            try #require(r.status == 0, "\(r.stderr)")
            return try Self.sqlite(scratch.file("\(name).sqlite"), "SELECT run_key FROM runs")[0]
        }
        // The keys main (000cdb1) stored for `enclab encode k.y4m --preset ultrafast --threads 1`, with --vt
        // AverageBitRate=300000, and with --vt MaxKeyFrameInterval=2 (x264's options are the same keyint 2 either way:
        // only the key's own keyframe_rule field tells the two apart).
        #expect(try key("plain", []) == "32209792acbd195b94c4ef5a405a06f07a6044c812b11ab90dfae7689b453083")
        #expect(try key("vt", ["--vt", "AverageBitRate=300000"]) == "5a394a179c67443f04523863e55941bc94aa7a1ef8cee3bd3895e2dc227c838a")
        let ruled = try key("rule", ["--vt", "MaxKeyFrameInterval=2"])
        #expect(ruled != "bf042e018d478f7d0dd58ec9309a8cab25cc377a0fff1f82ae0bf8fde294c0f0")
        #expect(measurementVersion == 1)
    }
}

/// The keyframe definitions that confused (issue 17, item 7): MaxKeyFrameInterval 0, and one above x264's keyint.
@Suite("keyframe definitions: MaxKeyFrameInterval 0 and x264's keyint limit", .serialized)
struct KeyframeDefinitionTests {
    static let clip = SyntheticClip(width: 96, height: 64, frames: 30, seed: 3)

    @Test("MaxKeyFrameInterval 0 is the encoder's choice in encode as in check: no frame limit stored, x264's keyint 250 kept; help says it alike")
    func zeroIsTheEncodersChoice() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameInterval=0", "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        #expect(try SceneCutKeyframeTests.sqlite(scratch.file("l.sqlite"), "SELECT k.frame_limit IS NULL, k.max_frames, json_extract(r.settings, '$.resolved.keyint') FROM keyframe_analysis k JOIN runs r USING (run_id)")
                == ["1|0|250"])
        let said = "MaxKeyFrameInterval (frames; 0: the encoder chooses, no frame limit)"
        for command in ["encode", "check"] {
            let help = try Witness.enclab([command, "--help"], in: scratch.path)
            // The text as read, line breaks and indentation of wrapped help lines as single spaces.
            let text = help.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
            #expect(text.contains(said), "\(command): \(help.stdout)")
        }
    }

    @Test("MaxKeyFrameInterval at or above x264's X264_KEYINT_MAX_INFINITE (1 << 30) is refused, 64, naming the limit")
    func aboveX264sKeyint() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameInterval=1073741824", "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("'MaxKeyFrameInterval': '1073741824' (a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit))"), "\(r.stderr)")
    }

    @Test("an x264 --keyint above the keyint that carries MaxKeyFrameIntervalDuration at a constant rate is refused, 64; one below it is kept")
    func userKeyintAboveDuration() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // 1.5 s at 25 fps: ⌊37.5⌋ = 37 frames.
        let refused = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameIntervalDuration=1.5", "--keyint", "38",
                                          "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(refused.status == 64 && refused.stderr.contains("at most ⌊1.5 s ÷ 0.04 s⌋ = 37 frames"), "\(refused.stderr)")
        let kept = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameIntervalDuration=1.5", "--keyint", "37",
                                       "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(kept.status == 0, "\(kept.stderr)")
    }
}
