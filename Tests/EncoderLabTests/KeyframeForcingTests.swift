import Testing
import H264
@testable import EncoderLab

/// The timestamps stage's keyframe-forcing step (issue 18, item 2: moved out of the pipeline's loop), frame by frame:
/// the IDRs it forces for a duration limit, the encoder's keyint counted as it goes, and where it stops.
@Suite("the keyframe-forcing step")
struct KeyframeForcingTests {
    static let microsecond = try! Rational(1, 1_000_000)

    /// Runs the step over pictures with these PTS (display order) and returns the forced display indices and why it
    /// stopped.
    static func run(_ rule: KeyframeRule?, pts: [Int64]) throws -> (forced: [Int], types: [ForcedFrameType], stopped: String?) {
        var step = KeyframeForcing(rule: rule, nominalFrameTicks: 40_000)
        var types: [ForcedFrameType] = []
        let picture = Picture(width: 16, height: 16, bytes: [UInt8](repeating: 128, count: 384))
        for (k, p) in pts.enumerated() {
            var timed = TimedPicture(picture: picture, pts: p, index: k, forcedType: .auto)
            try step.force(&timed, nextPTS: k + 1 < pts.count ? pts[k + 1] : nil)
            types.append(timed.forcedType)
        }
        return (step.forced, types, step.stopped)
    }

    /// 12 frames at 25 fps in µs: 0, 40000, ..., 440000.
    static let steady = (0..<12).map { Int64($0) * 40_000 }

    @Test("a 0.2 s limit at 25 fps, IDRs forced: frame k is forced when PTS(k+1) − PTS(last keyframe) > 200000 µs: 5, then 10")
    func durationLimit() throws {
        // From keyframe 0: PTS(6) − PTS(0) = 240000 > 200000, so frame 5; from 5: PTS(11) − PTS(5) = 240000, so frame 10.
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: try Rational(1, 5), timebase: Self.microsecond,
                                    placement: .forced(x264Keyint: nil))
        let r = try Self.run(rule, pts: Self.steady)
        #expect(r.forced == [5, 10])
        #expect(r.types == (0..<12).map { [5, 10].contains($0) ? ForcedFrameType.idr : .auto })
        #expect(r.stopped == nil)
    }

    @Test("the encoder's keyint 4 places IDRs at 4 and 8 itself, before the 0.2 s limit needs one: nothing forced")
    func encoderKeyintCounted() throws {
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: try Rational(1, 5), timebase: Self.microsecond,
                                    placement: .forced(x264Keyint: 4))
        #expect(try Self.run(rule, pts: Self.steady).forced == [])
        // A pause after frame 2 (PTS 80000 to 300000): frames 2 and 3 are forced (PTS(3) − PTS(0) = 300000 and
        // PTS(4) − PTS(2) = 260000 exceed 200000). Without a keyint frame 8 is forced too (PTS(9) − PTS(3) = 240000);
        // with keyint 4 the encoder's own IDR at 7 (4 frames after 3) restarts the count, and nothing more is needed.
        let paused: [Int64] = [0, 40_000, 80_000] + (0..<9).map { 300_000 + Int64($0) * 40_000 }
        let none = try KeyframeRule(maxFrames: 0, maxDuration: try Rational(1, 5), timebase: Self.microsecond,
                                    placement: .forced(x264Keyint: nil))
        #expect(try Self.run(none, pts: paused).forced == [2, 3, 8])
        #expect(try Self.run(rule, pts: paused).forced == [2, 3])
    }

    @Test("a PTS that is not after its predecessor stops the forcing for good, and the step says where")
    func stops() throws {
        let rule = try KeyframeRule(maxFrames: 0, maxDuration: try Rational(1, 5), timebase: Self.microsecond,
                                    placement: .forced(x264Keyint: nil))
        var pts = Self.steady
        pts[2] = 40_000
        let r = try Self.run(rule, pts: pts)
        #expect(r.forced == [])
        #expect(r.stopped == "PTS of frame 2 (40000) is not after frame 1's (40000)")
    }

    @Test("a rule x264's keyint keeps, or none, forces nothing")
    func keyintPlacement() throws {
        let rule = try KeyframeRule(maxFrames: 3, maxDuration: .zero, timebase: Self.microsecond, placement: .keyint(x264Keyint: 3))
        #expect(try Self.run(rule, pts: Self.steady).forced == [])
        #expect(try Self.run(nil, pts: Self.steady).forced == [])
    }
}
