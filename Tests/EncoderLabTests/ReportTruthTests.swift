import Foundation
import Testing
@testable import EncoderLab

/// What the report says of a run against what its database holds (a new user's findings on
/// gop-interval-vs-duration and huge-pts, made by the release binary). Expected values written out from sqlite3.
@Suite("report: badges, warnings and facts as stored")
struct ReportTruthTests {
    /// gop-interval-vs-duration run 2 as sqlite3 shows it: `keyframe_analysis` max_frames 30, max_duration 7/2,
    /// vt_compat 1, frame_limit NULL, duration_limit 7/2, actual [0,52,104], largest GOP 52 frames, 0 violations;
    /// runs.frames 120 (run_gops: 52, 52, 16 frames: two GOPs over 30).
    static let vtCompatKeyframes = LabStore.ReportRules.Keyframes(
        maxFrames: 30, maxDuration: "7/2", vtCompat: true, frameLimit: nil, durationLimit: "7/2", largestGOPFrames: 52,
        largestGOPSeconds: 3.466667, violations: 0, keyframes: [0, 52, 104], streamFrames: 120)

    static func row(_ id: Int64, warnings: String? = nil, frames: Int = 120, duration: Double = 8.0) -> LabStore.RunRow {
        LabStore.RunRow(runID: id, runKey: nil, experiment: "gop-interval-vs-duration", clip: "carphone_pristine.mp4", clipSHA256: nil,
                        settingsJSON: "{}", status: "done", frames: frames, bytes: 71241, durationSeconds: duration, timebaseNum: 1,
                        timebaseDen: 1_000_000, streamPath: nil, crop: nil, x264Version: nil, labVersion: "test", ffmpegVersion: nil,
                        machineJSON: "{}", createdAt: "2026-12-02T00:00:00Z", finishedAt: nil, width: 176, height: 144, fpsNum: 30000,
                        fpsDen: 1001, inputFrames: 120, truncatedBytes: nil, warningsJSON: warnings, error: nil)
    }

    static func run(_ id: Int64, rules: LabStore.ReportRules? = nil, warnings: String? = nil) -> ReportData.Run {
        var r = ReportData.Run(row: row(id, warnings: warnings), clipName: "carphone_pristine.mp4", label: "vt-compat", configuration: "crf", metrics: [:])
        r.rules = rules
        return r
    }

    @Test("a vt-compat run's MaxKeyFrameInterval=30, not applied, is no green pass: 'not applied', 2 GOPs over it (experiment and run page)")
    func notAppliedIsNoPass() {
        let rules = LabStore.ReportRules(keyframes: Self.vtCompatKeyframes)
        let badges = RuleSection.badges(rules)
        let frame = badges.first { $0.rule == "MaxKeyFrameInterval=30" }
        #expect(frame != nil)
        #expect(!(frame?.html.contains("pass") ?? true))
        #expect(frame?.html.contains("not applied (vt-compat") ?? false)
        #expect(frame?.html.contains("2 GOPs over it") ?? false)
        // The duration limit was applied: its badge stays a count of violations (none stored).
        #expect(badges.first { $0.rule == "MaxKeyFrameIntervalDuration=3.5" }?.html.contains("pass") ?? false)
        let experiment = RuleSection.experiment([Self.run(2, rules: rules)])
        #expect(!experiment.contains("MaxKeyFrameInterval=30: pass"))
        #expect(experiment.contains("MaxKeyFrameInterval=30: not applied"))
        let page = RuleSection.runPage(Self.run(2, rules: rules))
        #expect(!page.contains("MaxKeyFrameInterval=30: pass"))
        #expect(page.contains("was not applied"))
        // The runs table's count: not the green 0.
        #expect(RuleSection.notAppliedOver(rules)?.over == 2)
        // An applied limit still passes (run 1: frame_limit 30, actual [0,30,60,90]).
        var applied = Self.vtCompatKeyframes
        applied.vtCompat = false; applied.frameLimit = 30; applied.keyframes = [0, 30, 60, 90]
        #expect(RuleSection.badges(.init(keyframes: applied)).first?.html.contains("MaxKeyFrameInterval=30: pass") ?? false)
    }

    @Test("keyframe_analysis.actual as stored reads as display indices")
    func indices() {
        #expect(LabStore.reportIndices("[0,52,104]") == [0, 52, 104])
        #expect(LabStore.reportIndices("[]") == [])
        #expect(LabStore.reportIndices(nil) == [])
        #expect(LabStore.reportIndices("[0,x]") == [])
    }

    @Test("the run page lists runs.warnings, escaped (huge-pts run 3's x264 line, check's edit-list note, a hostile one)")
    func storedWarnings() {
        // As sqlite3 shows them: huge-pts.sqlite run 3, tour.sqlite run 7.
        let json = #"["x264: non-strictly-monotonic PTS (58 times)","\/tmp\/dev.mp4: 2 of its 120 video packets are before the start of its edit list (ffprobe's discard flag): decoded, not shown, and not counted","<script>x</script>"]"#
        let section = RunPage.storedWarningsSection(json)
        #expect(section.contains("<li>x264: non-strictly-monotonic PTS (58 times)</li>"))
        #expect(section.contains("/tmp/dev.mp4: 2 of its 120 video packets are before the start of its edit list"))
        #expect(section.contains("<li>&lt;script&gt;x&lt;/script&gt;</li>") && !section.contains("<script>"))
        #expect(RunPage.storedWarningsSection(nil).isEmpty && RunPage.storedWarningsSection("[]").isEmpty)
        #expect(RunPage.storedWarnings(json).count == 3)
    }

    @Test("the metrics grid shows psnr_weighting's text ('duration' as sqlite3 has it), not a blank")
    func textMetric() {
        var run = Self.run(1)
        run.metrics = ["psnr_weighting": nil, "psnr_global": 38.5]
        run.metricTexts = ["psnr_weighting": "duration"]
        let grid = RunPage.metricsGrid(run, columns: ["psnr_global", "psnr_weighting"])
        #expect(grid.contains("<td class=\"name\">psnr_weighting</td><td class=\"value\">duration</td>"), "\(grid)")
    }

    @Test("gop run 2 (pts-schedule rate=15): the frame rate is the clip's, and the run's timestamps are 120 frames over 8 s, 15 fps")
    func frameRate() {
        var row = Self.row(2)
        row.settingsJSON = #"{"timestamps":{"clock":"schedule","frame_rate":"30000\/1001","schedule":"rate=15","source":"schedule"}}"#
        // 120 frames / 8.000 s = 15 fps.
        #expect(RunPage.frameRateFact(row) == "30000/1001 (the clip's); the run's timestamps: 120 frames over 8.000 s, 15.000 fps on average (pts-schedule rate=15)")
        // A run at the clip's rate: 120 frames over 4.004 s = 29.97 fps = 30000/1001.
        #expect(RunPage.frameRateFact(Self.row(1, duration: 4.004)) == "30000/1001 (the clip's)")
    }

    @Test("'Clip too short' names the run's stream span, not a clip lasting 8.000 s")
    func shortClipWording() {
        var run = Self.run(4)
        run.mode = "abr"
        run.metrics = ["span_seconds": 8.0]
        let items = Warnings.items([run], filler: [:])
        let short = items.first { $0.contains("short-clip") } ?? ""
        #expect(!short.contains("lasts 8.000 s"), "\(short)")
        #expect(short.contains("the run's stream of carphone_pristine.mp4 spans 8.000 s"), "\(short)")
    }
}
