import Foundation
import H264
import Testing
@testable import EncoderLab

/// `--rate-schedule` (issue 21): the grammar, its canonical text (the run key's), ramps and trace files worked out by
/// hand, and the messages of what is refused.
@Suite("rate schedules: grammar, ramps, trace files, errors")
struct RateScheduleTests {
    @Test("points at frames and times, x264's and Apple's names: one canonical item per change, in the order given")
    func canonical() throws {
        let s = try RateSchedule(parsing: "150:bitrate=300;4.5s:vbv-maxrate=500,vbv-bufsize=250;5s:DataRateLimits=250000,1,50000,0.1,bitrate=400;0:AverageBitRate=300000;10s:crf=23.50")
        #expect(s.spec == "150:bitrate=300;4.5s:vbv-maxrate=500;4.5s:vbv-bufsize=250;5s:DataRateLimits=250000,1,50000,0.1;5s:bitrate=400;0:AverageBitRate=300000;10s:crf=23.5")
        #expect(s.changes[1].when == .seconds(try Rational(9, 2)))
        #expect(s.changes[0].when == .frame(150))
    }

    @Test("a ramp over time: 600 to 300 kbit/s in 0.25-s steps over 1 s is 600, 525, 450, 375, 300 (linear, 75 a step)")
    func rampTimes() throws {
        let s = try RateSchedule(parsing: "ramp(0s..1s,bitrate=600..300,step=0.25s)")
        #expect(s.spec == "0s:bitrate=600;0.25s:bitrate=525;0.5s:bitrate=450;0.75s:bitrate=375;1s:bitrate=300")
    }

    @Test("a ramp over frames whose last step is shorter: crf 20 to 25 from frame 10 to 20 by 4 is 20, 22, 24 and 25 at 20")
    func rampFrames() throws {
        // Fractions 0, 4/10, 8/10 and 1 of the 5-point rise.
        let s = try RateSchedule(parsing: "ramp(10..20,crf=20..25,step=4)")
        #expect(s.spec == "10:crf=20;14:crf=22;18:crf=24;20:crf=25")
    }

    @Test("a trace file: one or more items a line, comments and blank lines skipped, the same changes as written inline")
    func traceFile() throws {
        let scratch = Scratch()
        let path = scratch.file("trace.txt")
        try "# a congested link\n0s:bitrate=600\n\n2s:bitrate=300;4s:bitrate=450\n".write(toFile: path, atomically: true, encoding: .utf8)
        let s = try RateSchedule(parsing: "file:\(path)")
        #expect(s.spec == "0s:bitrate=600;2s:bitrate=300;4s:bitrate=450")
        let e = #expect(throws: LabError.self) { try RateSchedule(parsing: "file:\(scratch.file("missing.txt"))") }
        #expect(e?.kind == .noInput)
    }

    @Test("refused with the schedule's text and what is wrong (usage, 64)", arguments: [
        ("150", "--rate-schedule '150': item '150': needs WHEN:NAME=VALUE (e.g. 150:bitrate=300 or 5s:bitrate=300)"),
        ("150:bitrate=0", "--rate-schedule '150:bitrate=0': item '150:bitrate=0': bitrate must be a whole number of kbit/s from 1 to 2000000, got '0'"),
        ("150:speed=3", "--rate-schedule '150:speed=3': item '150:speed=3': unknown name 'speed' (names: bitrate, vbv-maxrate, vbv-bufsize, crf, AverageBitRate, DataRateLimits)"),
        ("x:bitrate=300", "--rate-schedule 'x:bitrate=300': item 'x:bitrate=300': 'x' is neither a frame index (0 to 2147483647) nor a time (e.g. 4.5s)"),
        ("1.5:bitrate=300", "--rate-schedule '1.5:bitrate=300': item '1.5:bitrate=300': '1.5' is neither a frame index (0 to 2147483647) nor a time (e.g. 4.5s)"),
        ("150:bitrate=300;;", "--rate-schedule '150:bitrate=300;;': empty item (two ';' in a row, or one at either end)"),
        ("150:bitrate=300;150:bitrate=200", "--rate-schedule '150:bitrate=300;150:bitrate=200': bitrate is set twice at 150"),
        ("150:crf=52", "--rate-schedule '150:crf=52': item '150:crf=52': crf must be a decimal from 0 to 51 (at most 3 decimals), got '52'"),
        ("ramp(5s..1s,bitrate=600..300,step=1s)", "--rate-schedule 'ramp(5s..1s,bitrate=600..300,step=1s)': item 'ramp(5s..1s,bitrate=600..300,step=1s)': the ramp's end 1s is not after its start 5s"),
        ("ramp(0..10,bitrate=600..300,step=1s)", "--rate-schedule 'ramp(0..10,bitrate=600..300,step=1s)': item 'ramp(0..10,bitrate=600..300,step=1s)': the ramp's two ends and its step must all be frames or all be times"),
    ])
    func refused(_ text: String, _ message: String) {
        let e = #expect(throws: LabError.self) { try RateSchedule(parsing: text) }
        #expect(e?.kind == .usage)
        #expect(e?.message == message)
    }

    @Test("the flag and the experiment key set the same schedule; the run key holds it only when set")
    func settingAndKey() throws {
        let (flagged, _) = try EncodeSettings.parse(arguments: ["--crf", "30", "--rate-schedule", "5:crf=35"])
        var keyed = EncodeSettings()
        try keyed.set("crf", "30")
        try keyed.set("rate-schedule", "5:crf=35")
        #expect(flagged.rateSchedule == keyed.rateSchedule)
        #expect(flagged.rateSchedule?.spec == "5:crf=35")
        let e = #expect(throws: LabError.self) { try EncodeSettings.parse(arguments: ["--rate-schedule", "5:crf"]) }
        #expect(e?.message.hasPrefix("--rate-schedule '5:crf'") == true)

        let scratch = Scratch()
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 2).write(to: scratch.file("c.y4m"))
        func key(_ flags: [String]) throws -> String {
            let settings = try EncodeSettings.parse(arguments: flags).0
            let checked = try Runner.check([Experiment.Run(clip: scratch.file("c.y4m"), settings: settings, label: "")], experiment: "e")[0]
            return Pipeline.spec(checked, clip: ClipIdentity(path: "c.y4m", sha256: String(repeating: "ab", count: 32))).keyMaterial
        }
        let plain = try key(["--crf", "30", "--threads", "1"])
        let scheduled = try key(["--crf", "30", "--threads", "1", "--rate-schedule", "5:crf=35"])
        #expect(!plain.contains("rate_schedule"))
        #expect(scheduled.contains(#""rate_schedule":"5:crf=35""#))
        #expect(scheduled.replacingOccurrences(of: #","rate_schedule":"5:crf=35""#, with: "") == plain)
    }
}

/// The step response (``StepResponse``) of a hand-made frame list at 10 frames per second (timebase 1/10, one tick
/// per frame, the last frame 1 tick long): a 1-s window is 10 frames, and window k is full when 39 − k ≥ 10 − 1,
/// i.e. k ≤ 30.
@Suite("step response: settling, overshoot, undershoot, DataRateLimits and quality on a hand-made frame list")
struct StepResponseTests {
    /// Frames 0-9: 2000 bytes (160 kbit/s), QP 30; frames 10-14: 1500 bytes, 15-39: 1000 bytes (80 kbit/s), frame 35:
    /// 500 bytes; QP 32 from frame 10 on; PSNR 40 before, 38 after.
    static let frames: [StepResponse.Frame] = (0..<40).map { k in
        let size = k < 10 ? 2000 : k < 15 ? 1500 : k == 35 ? 500 : 1000
        return StepResponse.Frame(displayIndex: k, dts: Int64(k), sizeBytes: size, qp: k < 10 ? 30 : 32, psnrY: k < 10 ? 40 : 38)
    }

    @Test("two changes: at frame 10 to 80 kbit/s (settles after 3 frames, +25 % over), at 25 to 76 (settled at once)")
    func twoChanges() throws {
        let changes = [StepResponse.Change(changeIndex: 0, frame: 10, targetKbps: 80),
                       StepResponse.Change(changeIndex: 1, frame: 25, targetKbps: 76, limits: try DataRateLimits(parsing: "4500,0.5"))]
        let r = StepResponse.compute(frames: Self.frames, timebase: try Rational(1, 10), lastFrameTicks: .one, changes: changes,
                                     tolerancePercent: 10, qualityFrames: 5)
        #expect(r.count == 2)
        // Change 0, segment 10 ..< 25: the windows wholly in it start at 10 ... 15 (window 15 holds frames 15-24;
        // window 16 would hold frame 25, the next change's). Window 10 holds frames 10-19: 5 x 1500 + 5 x 1000 =
        // 12500 bytes = 100 kbit/s; window 11: 12000 = 96; 12: 11500 = 92; 13: 11000 = 88, |88 - 80| = 8 = 10 % of 80,
        // inside; 14: 84; 15: 80. The last window outside is 12: settled at window 13, 3 frames, 0.3 s after.
        #expect(r[0].startCoded == 10 && r[0].endCoded == 25 && r[0].windows == 6)
        #expect(r[0].settleFrames == 3)
        #expect(abs((r[0].settleSeconds ?? -1) - 0.3) < 1e-9)
        #expect(r[0].peakKbps == 100 && r[0].overshootPercent == 25)
        #expect(r[0].lowKbps == 80 && r[0].undershootPercent == 0)
        // QP and PSNR: frames 5-9 before (30, 40), 10-14 after (32, 38).
        #expect(r[0].qpBefore == 30 && r[0].qpAfter == 32 && r[0].psnrBefore == 40 && r[0].psnrAfter == 38)
        #expect(r[0].limitWindows == nil)
        // Change 1, segment 25 ..< 40, full windows 25 ... 30: window 25 holds frames 25-34 = 10000 bytes = 80 kbit/s;
        // 26 ... 30 hold frame 35 (500 bytes): 9500 = 76. All within 7.6 of 76: settled at once. Peak 80: (80/76 - 1)
        // x 100 = 5.263 % over; low 76: 0 %.
        #expect(r[1].windows == 6 && r[1].settleFrames == 0 && r[1].settleSeconds == 0)
        #expect(abs((r[1].overshootPercent ?? 0) - 400.0 / 76.0) < 1e-9)
        #expect(r[1].undershootPercent == 0)
        // DataRateLimits 4500 bytes in 0.5 s (5 frames): windows start at 25 ... 39 (15); 25 ... 30 hold 5 frames of
        // 1000 bytes, 5000 > 4500 (6 over, 500 bytes over); 31 ... 35 hold frame 35 (4500, not over); later ones fewer.
        #expect(r[1].limitWindows == 15 && r[1].limitWindowsOver == 6 && r[1].limitWorstBytesOver == 500)
    }

    @Test("a tighter band: at 4 % the windows at 76 (5 % under 80) are outside until the end, so the change never settles")
    func notSettled() throws {
        let r = StepResponse.compute(frames: Self.frames, timebase: try Rational(1, 10), lastFrameTicks: .one,
                                     changes: [StepResponse.Change(changeIndex: 0, frame: 10, targetKbps: 80)], tolerancePercent: 4)
        #expect(r.count == 1)
        #expect(r[0].windows == 21)
        #expect(r[0].settleFrames == nil && r[0].settleSeconds == nil)
        // Lowest window 76: (76/80 - 1) x 100 = -5 %.
        #expect(abs((r[0].undershootPercent ?? 0) + 5) < 1e-9)
    }
}

/// Issue 21, item 4: the experiment files behind docs/rate-control-in-motion.md's findings expand to the runs it
/// reports, and the saw-tooth trace reads as the doc describes it (written out by hand here).
@Suite("rate control in motion: the findings' experiment files")
struct RateMotionExperimentTests {
    @Test("rate-motion-steps.json: 11 modes x 2 presets, one thread, 360 frames; rate-motion-delay.json: 35 runs of 150 frames")
    func grids() throws {
        let steps = try Experiment(path: "\(repositoryRoot)/experiments/rate-motion-steps.json")
        #expect(steps.runs.count == 22)
        #expect(Set(steps.runs.map { $0.settings.preset ?? "" }) == ["veryfast", "medium"])
        #expect(steps.runs.allSatisfy { $0.settings.rateSchedule != nil })
        let delay = try Experiment(path: "\(repositoryRoot)/experiments/rate-motion-delay.json")
        #expect(delay.runs.count == 35)
        #expect(delay.runs.allSatisfy { $0.settings.rateSchedule == nil })
    }

    @Test("sawtooth-link.trace.txt: +50 kbit/s a second from 400, halved at 3 s and 8 s, bitrate and vbv-maxrate together")
    func sawtooth() throws {
        let s = try RateSchedule(parsing: "file:\(repositoryRoot)/experiments/sawtooth-link.trace.txt")
        let targets = [450, 500, 250, 300, 350, 400, 450, 225, 275, 325, 375]
        let expected = targets.enumerated().map { i, t in "\(i + 1)s:bitrate=\(t);\(i + 1)s:vbv-maxrate=\(t)" }.joined(separator: ";")
        #expect(s.spec == expected)
    }
}
