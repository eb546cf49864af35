import Foundation
import Testing
import H264
@testable import EncoderLab

/// The run page's keyframe timeline (``KeyframeTimeline``) on a run whose encoder skipped pictures (OpenH264's frame
/// skip): a frame's `display_index` is its input index, so the keyframe limits' deadlines and the stored violations,
/// which the keyframe rule counts in input pictures, are drawn at the PTS of those input pictures, not at the places
/// of the coded frames. Eight input pictures at 25 fps, PTS = input index (timebase 1/25 s: 0.04 s each); pictures 2
/// and 3 skipped; IDRs at inputs 0 and 6.
@Suite("keyframe timeline with pictures skipped by the encoder")
struct KeyframeTimelineSkipTests {
    static func frame(_ coded: Int, input: Int, _ type: String) -> ReportData.Frame {
        ReportData.Frame(codedIndex: coded, displayIndex: input, type: type, keyframe: type == "IDR", sizeBytes: 100,
                         pts: Int64(input), dts: Int64(input), sse: nil, psnrAvg: nil, psnrY: nil)
    }

    @Test("MaxKeyFrameInterval=3 after the IDR at input 0: due at input 3 (0.12 s, a skipped picture), not the 4th coded frame (input 5, 0.20 s); a violation from input 0 to 6 ends at 0.24 s")
    func deadlinesInInputPictures() throws {
        let frames = [Self.frame(0, input: 0, "IDR"), Self.frame(1, input: 1, "P"), Self.frame(2, input: 4, "P"), Self.frame(3, input: 5, "P"),
                      Self.frame(4, input: 6, "IDR"), Self.frame(5, input: 7, "P")]
        var rules = LabStore.ReportRules()
        rules.keyframes = .init(maxFrames: 3, maxDuration: "0", vtCompat: false, frameLimit: 3, durationLimit: nil, largestGOPFrames: 6,
                                largestGOPSeconds: 0.24, violations: 1)
        rules.keyframeViolations = [.init(kind: "MaxKeyFrameInterval", startFrame: 0, endFrame: 6, frames: 6, durationSeconds: 0.24, duration: "0.24")]
        let time = ChartTime(pts: frames.map(\.pts), timebase: try Rational(1, 25))
        let timeline = KeyframeTimeline(frames: frames, rules: rules, time: time, frameSeconds: 0.04, skipped: [(2, 2), (3, 3)])
        // Every input picture's PTS in seconds: 0, 0.04, ..., 0.28.
        #expect(timeline.seconds.map { ($0 * 100).rounded() } == [0, 4, 8, 12, 16, 20, 24, 28])
        #expect(abs(timeline.endSeconds - 0.32) < 1e-9)
        // The IDR at input 6: due at input 9, past the end of the 8 pictures: no deadline.
        #expect(timeline.deadlines.count == 1)
        #expect(timeline.deadlines.first?.after == 0)
        #expect(abs((timeline.deadlines.first?.seconds ?? -1) - 0.12) < 1e-9)
        #expect(timeline.violations.count == 1)
        #expect(abs((timeline.violations.first?.from ?? -1) - 0) < 1e-9 && abs((timeline.violations.first?.to ?? -1) - 0.24) < 1e-9)
        #expect(timeline.skippedSeconds.map { ($0 * 100).rounded() } == [8, 12])
    }
}
