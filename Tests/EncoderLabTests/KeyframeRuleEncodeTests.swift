import Foundation
import Testing
@testable import EncoderLab

/// VideoToolbox's keyframe limits on real encodes (issue 10, item 2): the IDR pictures the lab forces are where the
/// rule expects them, witnessed by `ffmpeg -bsf:v trace_headers` (nal_unit_type 5) on the written stream.
@Suite("keyframe limits on x264: forced IDRs where the rule expects them", .serialized)
struct KeyframeRuleEncodeTests {
    /// 90 frames at 15 fps (6 s), encoded with --scenecut 0: every IDR is the rule's (the synthetic pictures change
    /// enough from frame to frame for x264 to see cuts).
    static let clip = SyntheticClip(width: 96, height: 64, frames: 90, fpsNum: 15, fpsDen: 1, seed: 31)

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    /// The display indices of the IDR packets of a stream without B-frames (packet k is frame k).
    static func idrPackets(_ stream: String) throws -> [Int] {
        let packets = try Witness.traceHeaders(stream).packets
        return packets.indices.filter { k in packets[k].contains { $0.type == 5 } }
    }

    @Test("15 fps, MaxKeyFrameInterval 30, MaxKeyFrameIntervalDuration 1.5 s: IDRs at 0, 22, 44, 66, 88 (gaps 1.467 s); with 3.5 s the frame limit comes first: 0, 30, 60; vt-compat keeps the time limit alone: 0, 52",
          arguments: [
            (["--vt", "MaxKeyFrameIntervalDuration=1.5"], [0, 22, 44, 66, 88], "22|22/15"),
            (["--vt", "MaxKeyFrameIntervalDuration=3.5"], [0, 30, 60], "30|2"),
            (["--vt", "MaxKeyFrameIntervalDuration=3.5", "--vt-compat"], [0, 52], "52|52/15"),
          ] as [([String], [Int], String)])
    func forcedIDRs(flags: [String], expected: [Int], largest: String) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--bframes", "0", "--crf", "30", "--scenecut", "0", "--vt", "MaxKeyFrameInterval=30",
                                    "--db", "l.sqlite", "--out", "out"] + flags, in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        let db = scratch.file("l.sqlite")
        let stream = try Self.sqlite(db, "SELECT stream_path FROM runs")[0]
        #expect(try Self.idrPackets(stream.hasPrefix("/") ? stream : scratch.file(stream)) == expected)
        let json = "[" + expected.map(String.init).joined(separator: ",") + "]"
        #expect(try Self.sqlite(db, "SELECT expected, actual, violations, largest_gop_frames || '|' || largest_gop_exact FROM keyframe_analysis")
                == ["\(json)|\(json)|0|\(largest)"])
    }

    @Test("a stream that keeps only its first IDR breaks the duration limit: the stretch to the end is the violation (6 s > 1.5 s)")
    func endStretch() throws {
        // The rule's checker on the stored PTS, as `check` would see a stream from elsewhere with one IDR.
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: try .init(3, 2), timebase: try .init(1, 15))
        let check = try rule.violations(keyframes: [0], pts: (0..<90).map(Int64.init), endPTS: 90)
        #expect(check.violations.map(\.kind).contains(.durationLimit))
        #expect(check.largestGOPSeconds == (try .init(6, 1)))
    }
}
