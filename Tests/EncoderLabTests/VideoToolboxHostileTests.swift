import Foundation
import Testing
@testable import EncoderLab

/// Cases an attacker's pass found in the VideoToolbox settings and `check` (issue 10), kept fixed.
@Suite("VideoToolbox settings and check: hostile cases", .serialized)
struct VideoToolboxHostileTests {
    static let clip = SyntheticClip(width: 64, height: 48, frames: 90, fpsNum: 15, fpsDen: 1, seed: 41)

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    @Test("a property given twice, in any spelling, is a usage error and nothing is recorded", arguments: [
        ["--vt", "AverageBitRate=150000", "--vt", "AverageBitRate=200000"],
        ["--vt", "AverageBitRate=150000", "--vt", "kVTCompressionPropertyKey_AverageBitRate=200000"],
    ])
    func twiceOnTheCommandLine(flags: [String]) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--db", "l.sqlite"] + flags, in: scratch.path)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: --vt AverageBitRate is given twice; give each VideoToolbox property once (see 'enclab encode --help')\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("l.sqlite")))
    }

    @Test("an experiment object with two spellings of one property is refused, naming both keys")
    func twiceInAnExperiment() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let json = #"{"name": "t", "clips": ["c.y4m"], "base": {"AverageBitRate": 150000, "kVTCompressionPropertyKey_AverageBitRate": 200000}, "grid": {}}"#
        try json.write(toFile: scratch.file("t.json"), atomically: true, encoding: .utf8)
        let r = try Witness.enclab(["run", "t.json"], in: scratch.path)
        #expect(r.status == 64)
        #expect(r.stderr == "enclab: t.json: base: 'AverageBitRate' and 'kVTCompressionPropertyKey_AverageBitRate' both give the VideoToolbox property AverageBitRate; give it once (see 'enclab run --help')\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("results")))
    }

    @Test("an x264 --keyint above MaxKeyFrameInterval is refused (64, nothing stored); a smaller one is kept: IDRs at 0, 10, ..., 80 (trace_headers), the frame limit stays 30")
    func keyintOverride() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let above = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--bframes", "0", "--scenecut", "0", "--vt", "MaxKeyFrameInterval=10",
                                        "--keyint", "30", "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(above.status == 64, "\(above.stderr)")
        #expect(above.stderr.contains("contradictory settings: the x264 option --keyint 30 with MaxKeyFrameInterval 10"), "\(above.stderr)")
        #expect(try KeyframeOverrideTests.runCount(scratch.file("l.sqlite")) == 0)
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--bframes", "0", "--scenecut", "0", "--vt", "MaxKeyFrameInterval=30",
                                    "--keyint", "10", "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("MaxKeyFrameInterval=30 (keyint 30) overridden by the x264 option --keyint 10"))
        let stream = try Self.sqlite(scratch.file("l.sqlite"), "SELECT stream_path FROM runs")[0]
        #expect(try KeyframeRuleEncodeTests.idrPackets(stream.hasPrefix("/") ? stream : scratch.file(stream)) == Array(stride(from: 0, to: 90, by: 10)))
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT frame_limit, expected, actual, violations FROM keyframe_analysis")
                == ["30|[0,10,20,30,40,50,60,70,80]|[0,10,20,30,40,50,60,70,80]|0"])
    }

    @Test("check refuses a named pipe at once (66) instead of waiting for a writer")
    func fifo() throws {
        let scratch = Scratch()
        #expect(mkfifo(scratch.file("p"), 0o600) == 0)
        let r = try Witness.enclab(["check", "p", "--expect", "MaxKeyFrameInterval=30"], in: scratch.path)
        #expect(r.status == 66)
        #expect(r.stderr.hasPrefix("enclab: p: not a regular file (a named pipe)"), "\(r.stderr)")
    }

    @Test("a misspelt property with Apple's prefix in another letter case gets the nearest name without the prefix")
    func suggestion() {
        #expect(throws: LabError(.usage, "unknown VideoToolbox property 'kvtcompressionpropertykey_RealTimeX' (did you mean 'RealTime'?)")) {
            _ = try VideoToolboxSettings.property(named: "kvtcompressionpropertykey_RealTimeX")
        }
    }
}
