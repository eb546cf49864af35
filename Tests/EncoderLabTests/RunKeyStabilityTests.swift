import Foundation
import Testing
@testable import EncoderLab

/// The run key's hashed bytes do not move when code moves between stages (issue 18, item 2): each spec below is made
/// by the lab's check (``Runner/check(_:experiment:)``, ``Pipeline/spec(_:clip:)``) and its key compared with the key the
/// same spec had at main 5ec344a, before the timestamps stage took over the plan and the keyframe rule and
/// `TimestampPlan.forcedTypes` went away. What depends on the x264 build (its options string and version) is set to
/// fixed text, so the keys hold on any build; the clip's digest is fixed too.
@Suite("run keys: the same bytes hashed before and after the stages own their values")
struct RunKeyStabilityTests {
    /// (flags, the key at main 5ec344a).
    static let cases: [([String], String)] = [
        (["--crf", "30", "--threads", "1"], "8da2435a93892cc644891332538f67d58bab5104333d355dbaa98733ce202d4a"),
        (["--qp", "20", "--threads", "1", "--seek", "2", "--frames", "5", "--verify", "none"], "b21eb872de61496230ecb66645f1bbcd75d102335f8b870e7d231b609b4854fc"),
        // VideoToolbox's keyframe rule kept by x264's keyint (the constant rate).
        (["--crf", "30", "--threads", "1", "--vt", "MaxKeyFrameInterval=5", "--vt", "MaxKeyFrameIntervalDuration=0.3"], "b012f057411e5cd3420e8632ba82d0734a574135a8dedcf867ef6e823ed66409"),
        // The rule kept by IDRs the lab forces (variable-rate timestamps).
        (["--crf", "30", "--threads", "1", "--pts-schedule", "rate=25;back=3@0.2s", "--vt", "MaxKeyFrameIntervalDuration=0.2"], "65f42ac695bbe0a56832f509936f2b6543673d031394cd2b2bbee8e433a223b7"),
        // DataRateLimits (x264's VBV) and vt-compat.
        (["--threads", "1", "--vt", "DataRateLimits=250000,1,50000,0.1", "--vt-compat"], "c9109b212a4e129f4fc79cade40ef58928a1bf5940526ae8be52a98842b51a9e"),
        // Every microsecond stage.
        (["--crf", "30", "--threads", "1", "--pts-offset", "1000", "--pts-rebase", "--pts-precision", "timescale:90000", "--pts-clamp"], "e7910c9b29135e41003b8eff65f6fb20ae7a3887849c82487683b00a265d9a17"),
    ]

    /// What each case's hashed text holds, so that each case is the kind of spec it says (by index).
    static let holds: [Int: [String]] = [
        0: [#""forced_types":[]"#], 2: [#""keyframe_rule":{"placement":"keyint"}"#],
        3: [#""keyframe_rule":{"placement":"forced"}"#, #""schedule":"#], 4: [#""videotoolbox":"#],
        5: [#""clamp":true"#, #""offset_us":1000"#, #""rebase":true"#],
    ]

    @Test("a run key computed by today's stages equals the key of main 5ec344a, for every kind of spec")
    func keysUnchanged() throws {
        let scratch = Scratch()
        try SyntheticClip(width: 96, height: 64, frames: 12, seed: 11).write(to: scratch.file("c.y4m"))
        for (n, (flags, expected)) in Self.cases.enumerated() {
            let settings = try EncodeSettings.parse(arguments: flags).0
            let checked = try Runner.check([Experiment.Run(clip: scratch.file("c.y4m"), settings: settings, label: "")], experiment: "e")[0]
            var spec = Pipeline.spec(checked, clip: ClipIdentity(path: "c.y4m", sha256: String(repeating: "ab", count: 32)))
            spec.resolved.optionsString = "fixed"
            spec.x264Build = "fixed"
            #expect(spec.key == expected, "\(flags): \(spec.keyMaterial)")
            for text in Self.holds[n] ?? [] { #expect(spec.keyMaterial.contains(text), "\(flags): \(spec.keyMaterial)") }
        }
    }
}
