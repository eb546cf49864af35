import Foundation
import Testing
@testable import EncoderLab

/// x264 options that would change or undo the keyframe rule VideoToolbox was asked for (a hostile trial of issue 17):
/// an x264 `--keyint` above MaxKeyFrameInterval (or `infinite`), and `--open-gop` or `--intra-refresh`, whose
/// keyframes after the first are not IDR pictures, are refused (64) naming both; a smaller `--keyint` is kept and the
/// check counts against MaxKeyFrameInterval as given. MaxKeyFrameInterval has one range in encode and check.
@Suite("keyframe rule: x264 options that would undo it", .serialized)
struct KeyframeOverrideTests {
    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    /// Runs stored in `db` (0 when it was never made).
    static func runCount(_ db: String) throws -> Int {
        FileManager.default.fileExists(atPath: db) ? Int(try sqlite(db, "SELECT count(*) FROM runs")[0]) ?? -1 : 0
    }

    @Test("an x264 --keyint above MaxKeyFrameInterval 50 (infinite, 60, 51) is refused, 64, naming both; nothing stored",
          arguments: ["infinite", "60", "51"])
    func keyintAboveFrameLimit(keyint: String) throws {
        let scratch = Scratch()
        try SceneCutKeyframeTests.writeClip(scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameInterval=50", "--keyint", keyint,
                                    "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("contradictory settings: the x264 option --keyint \(keyint) with MaxKeyFrameInterval 50"), "\(r.stderr)")
        #expect(try Self.runCount(scratch.file("l.sqlite")) == 0)
    }

    @Test("an x264 --keyint 40 below MaxKeyFrameInterval 50 is kept: the x264 CLI's IDRs with keyint 40, and the stored check counts against 50")
    func keyintBelowFrameLimit() throws {
        let scratch = Scratch()
        try SceneCutKeyframeTests.writeClip(scratch.file("c.y4m"))
        let cli = try Witness.run("x264", ["--quiet", "--threads", "1", "--bframes", "0", "--keyint", "40"]
                                  + SceneCutKeyframeTests.asm(scratch.file("c.y4m"), in: scratch) + ["-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        try #require(cli.status == 0, "\(cli.stderr)")
        let cliIDRs = try SceneCutKeyframeTests.idrs(scratch.file("cli.264"))
        let lab = try SceneCutKeyframeTests.encode(scratch, "lab", ["--vt", "MaxKeyFrameInterval=50", "--keyint", "40"])
        let idrs = try SceneCutKeyframeTests.idrs(lab.stream)
        #expect(idrs == cliIDRs)
        // The stretches from each IDR to the next (or to the end, frame 240), by hand from trace_headers' IDRs.
        let gaps = zip(idrs, idrs.dropFirst() + [240]).map { $1 - $0 }
        try #require(gaps.allSatisfy { $0 <= 40 } && !gaps.isEmpty, "\(idrs)")
        #expect(try Self.sqlite(lab.db, "SELECT max_frames, frame_limit, largest_gop_frames, violations FROM keyframe_analysis")
                == ["50|50|\(gaps.max()!)|0"])
    }

    @Test("--open-gop and --intra-refresh with a keyframe rule are refused, 64, naming both; the x264 CLI with either and keyint 50 writes one IDR in 240 frames",
          arguments: [["--open-gop"], ["--intra-refresh"]] as [[String]])
    func nonIDRKeyframes(flag: [String]) throws {
        let scratch = Scratch()
        try SceneCutKeyframeTests.writeClip(scratch.file("c.y4m"))
        // x264's defaults (3 B-frames: without them x264 turns open GOPs off): one IDR picture, the first, where keyint
        // 50 without the flag restarts at the cuts (0, 30, 80, 130, 160, 210).
        let cli = try Witness.run("x264", ["--quiet", "--threads", "1", "--keyint", "50"] + flag
                                  + SceneCutKeyframeTests.asm(scratch.file("c.y4m"), in: scratch) + ["-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        try #require(cli.status == 0, "\(cli.stderr)")
        #expect(try SceneCutKeyframeTests.idrs(scratch.file("cli.264")) == [0])
        for (rule, named) in [("MaxKeyFrameInterval=50", "MaxKeyFrameInterval 50"), ("MaxKeyFrameIntervalDuration=1.5", "MaxKeyFrameIntervalDuration 1.5")] {
            let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", rule, "--db", "l.sqlite", "--out", "out"] + flag, in: scratch.path)
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderr.contains("contradictory settings: the x264 option \(flag[0]) with \(named)"), "\(r.stderr)")
            #expect(try Self.runCount(scratch.file("l.sqlite")) == 0)
        }
        // Turned off again, it is no contradiction.
        let off = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--frames", "10", "--vt", "MaxKeyFrameInterval=50",
                                      "--db", "l.sqlite", "--out", "out"] + flag + ["--no-\(flag[0].dropFirst(2))"], in: scratch.path)
        #expect(off.status == 0, "\(off.stderr)")
    }

    @Test("MaxKeyFrameInterval has one range, 0 to 1073741823 (2^30 - 1, x264's largest keyint), said and enforced alike by encode and check")
    func oneRange() throws {
        let scratch = Scratch()
        let clip = SyntheticClip(width: 96, height: 64, frames: 10, seed: 3)
        try clip.write(to: scratch.file("c.y4m"))
        let x264 = try Witness.run("x264", ["--quiet", "--threads", "1", "-o", scratch.file("s.264"), scratch.file("c.y4m")])
        try #require(x264.status == 0, "\(x264.stderr)")
        let reason = "(a whole number of frames from 0 (the encoder chooses) to 1073741823, x264's largest keyint (1073741824, X264_KEYINT_MAX_INFINITE, is no limit))"
        for value in ["1073741824", "2147483647", "2147483648"] {
            let encode = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameInterval=\(value)", "--db", "l.sqlite", "--out", "out"],
                                            in: scratch.path)
            let check = try Witness.enclab(["check", "s.264", "--expect", "MaxKeyFrameInterval=\(value)"], in: scratch.path)
            for r in [encode, check] {
                #expect(r.status == 64 && r.stderr.contains("'MaxKeyFrameInterval': '\(value)' \(reason)"), "\(value): \(r.stderr)")
            }
        }
        let largest = try Witness.enclab(["check", "s.264", "--expect", "MaxKeyFrameInterval=1073741823"], in: scratch.path)
        #expect(largest.status == 0, "\(largest.stderr)")
        let encoded = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--vt", "MaxKeyFrameInterval=1073741823", "--db", "l.sqlite", "--out", "out"],
                                         in: scratch.path)
        #expect(encoded.status == 0, "\(encoded.stderr)")
    }
}
