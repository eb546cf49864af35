import Foundation
import Testing
@testable import EncoderLab

/// The console answers (issue 19, item 8), through the built binary: `encode`'s line under its run line (largest GOP,
/// the 1-s peak against the target, the keyframe rule's violations), `check`'s worst window of each DataRateLimits
/// pair kept, and `export`'s `pts_time`/`dts_time`, each against ffprobe and arithmetic written out here.
@Suite("The console answers: encode's GOP, peak and violations; check's worst window; export's times", .serialized)
struct ConsoleAnswerTests {
    /// 96x64 at 25 fps, 75 frames: a frame lasts 1/25 s = 0.04 s, the clip 3 s.
    static let clip = SyntheticClip(width: 96, height: 64, frames: 75, fpsNum: 25, fpsDen: 1, seed: 5)

    /// ffprobe's packets of a file's first video stream in decode order: each field of `entries` (`size,flags`).
    func packets(_ path: String, _ entries: String) throws -> [[String]] {
        let r = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_packets", "-show_entries", "packet=\(entries)",
                                            "-of", "csv=p=0", Witness.file(path)])
        try #require(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test("encode prints the largest GOP, the 1-s peak over the target and the duration rule's violations, as ffprobe counts them")
    func encodeAnswers() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // Both keyframe limits (x264's keyint carries the smaller: 10 frames, 0.4 s), no scene cuts, no B-frames.
        let r = try Witness.enclab(["encode", "c.y4m", "--preset", "ultrafast", "--threads", "1", "--bframes", "0",
                                    "--scenecut", "0", "--bitrate", "200", "--vt", "MaxKeyFrameIntervalDuration=0.5",
                                    "--vt", "MaxKeyFrameInterval=10", "--no-plots", "--db", "e.sqlite", "--out", "out"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2 && lines[0].hasPrefix("run 1  "), "\(lines)")
        let stream = try #require(lines[0].split(separator: " ").last.map(String.init))

        // ffprobe: sizes (Annex B, start codes included, as the lab counts a frame's bytes) and K flags, decode order
        // (= display order: no B-frames).
        let p = try packets(scratch.file(stream), "size,flags")
        try #require(p.count == 75)
        let sizes = p.map { Int($0[0])! }
        let keys = p.enumerated().filter { $0.element[1].hasPrefix("K") }.map(\.offset)
        try #require(keys.first == 0)
        // GOPs: from each keyframe to the next, the last to the end (frame 75).
        let gops = zip(keys, keys.dropFirst() + [75]).map { $1 - $0 }
        let largest = gops.max()!
        // A GOP of more than 10 frames breaks MaxKeyFrameInterval; one of F frames lasts F / 25 s, over 0.5 s (more than
        // 12.5 frames) it breaks MaxKeyFrameIntervalDuration.
        let overFrames = gops.filter { $0 > 10 }.count
        let overDuration = gops.filter { Double($0) / 25 > 0.5 }.count
        func violations(_ n: Int) -> String { "\(n) violation\(n == 1 ? "" : "s")" }
        // 1-s windows of decode time: 25 frames from frame i (DTS i/25 s); full ones end by 3 s, so i = 0 ... 50.
        let peakBytes = (0...50).map { i in sizes[i..<(i + 25)].reduce(0, +) }.max()!
        let peakKbps = Double(peakBytes) * 8 / 1000   // bits in 1 s, per 1000
        let expected = String(format: "  run 1: largest GOP %d frames, longest GOP %.3f s; peak 1 s %.1f kbit/s, %.2f x the target 200 kbit/s; ",
                              largest, Double(largest) / 25, peakKbps, peakKbps / 200)
            + "MaxKeyFrameInterval=10: \(violations(overFrames)); MaxKeyFrameIntervalDuration=0.5: \(violations(overDuration))"
        #expect(lines[1] == expected)
    }

    @Test("vt-compat with both keyframe limits: the frame limit is said not applied, not '0 violations', where ffprobe finds GOPs over it and check counts them")
    func vtCompatFrameLimit() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--preset", "ultrafast", "--threads", "1", "--bframes", "0",
                                    "--scenecut", "0", "--crf", "30", "--vt", "MaxKeyFrameIntervalDuration=1",
                                    "--vt", "MaxKeyFrameInterval=10", "--vt-compat", "--no-plots", "--db", "e.sqlite", "--out", "out"],
                                   in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(lines)")
        let stream = try #require(lines[0].split(separator: " ").last.map(String.init))
        // ffprobe: the stream's GOPs (keyframe to keyframe, the last to frame 75); some are over 10 frames.
        let keys = try packets(scratch.file(stream), "flags").enumerated().filter { $0.element[0].hasPrefix("K") }.map(\.offset)
        let gops = zip(keys, keys.dropFirst() + [75]).map { $1 - $0 }
        try #require(gops.contains { $0 > 10 }, "\(gops)")
        #expect(lines[1].contains("MaxKeyFrameInterval=10: not applied (vt-compat keeps the duration limit alone; 'enclab check' counts against it)"),
                "\(lines[1])")
        #expect(!lines[1].contains("MaxKeyFrameInterval=10: 0 violations"))
        // check counts the documented rule against the same run: one violation per GOP over 10 frames.
        let c = try Witness.enclab(["check", "--db", "e.sqlite", "--run", "1", "--expect", "MaxKeyFrameInterval=10"], in: scratch.path)
        #expect(c.status == 1, "\(c.stderr)")
        #expect(c.stdout.split(separator: "\n").filter { $0.hasPrefix("MaxKeyFrameInterval=10: ") }.count == gops.filter { $0 > 10 }.count)
    }

    @Test("run prints each run's answers under its line: the largest GOP as ffprobe finds it; no target for CRF, the ratio for ABR")
    func runAnswers() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        try #"{"name": "t", "clips": ["c.y4m"], "base": {"preset": "ultrafast", "threads": 1, "bframes": 0, "scenecut": 0, "keyint": 30}, "grid": {"mode": [{"rc": "crf", "crf": 30}, {"rc": "abr", "bitrate": 150}]}}"#
            .write(toFile: scratch.file("t.json"), atomically: true, encoding: .utf8)
        let r = try Witness.enclab(["run", "t.json", "--no-plots", "--jobs", "1"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        // Two lines per run, then the summary.
        try #require(lines.count == 5 && lines[0].hasPrefix("run 1  ") && lines[2].hasPrefix("run 2  "), "\(lines)")
        for (k, target) in [(0, nil), (2, 150.0)] {
            let stream = try #require(lines[k].split(separator: " ").last.map(String.init))
            let p = try packets(scratch.file(stream), "flags")
            let keys = p.enumerated().filter { $0.element[0].hasPrefix("K") }.map(\.offset)
            // keyint 30 on 75 frames: keyframes 0, 30, 60, so GOPs of 30, 30 and 15 frames; the largest 30 frames, 1.2 s at 25 fps.
            #expect(keys == [0, 30, 60])
            #expect(lines[k + 1].hasPrefix("  run \(k / 2 + 1): largest GOP 30 frames, longest GOP 1.200 s; peak 1 s "), "\(lines[k + 1])")
            if let target {
                #expect(lines[k + 1].contains(" x the target \(Int(target)) kbit/s"), "\(lines[k + 1])")
            } else {
                #expect(lines[k + 1].hasSuffix(" kbit/s (no target bitrate)"), "\(lines[k + 1])")
            }
        }
    }

    /// The bytes DataRateLimits counts in an Annex B stream: its NAL units without start codes (CheckCommandTests
    /// finds them the same way): the file's bytes less 4 per NAL unit of a 4-byte code and 3 per one of a 3-byte code.
    func payloadBytes(_ path: String) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var payload = bytes.count, i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                payload -= (i > 0 && bytes[i - 1] == 0) ? 4 : 3
                i += 3
            } else {
                i += 1
            }
        }
        return payload
    }

    @Test("check prints the worst window of each DataRateLimits pair kept as a ratio of its bytes: a whole stream in one window is payload / limit")
    func checkWorstWindow() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let x = try Witness.x264(["--quiet", "--threads", "1", "--bframes", "0", "-o", scratch.file("s.264"), scratch.file("c.y4m")])
        try #require(x.status == 0, "\(x.stderr)")
        let payload = try payloadBytes(scratch.file("s.264"))
        // A window of 1000 s from frame 0 holds every frame: the worst holds the payload, half of twice the payload, and a
        // window from frame k holds the rest, less.
        let limit = payload * 2
        let r = try Witness.enclab(["check", "s.264", "--expect", "DataRateLimits=\(limit),1000"], in: scratch.path)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(r.status == 0 && lines.count == 2, "\(lines) \(r.stderr)")
        #expect(lines.last == "DataRateLimits=\(limit),1000: pair 1, \(limit) bytes in 1000 s: kept in all 75 windows; the worst, "
                + "frames 0-74 (decode order), holds \(payload) bytes (0.500 x the limit)")
    }

    @Test("export's pts_time and dts_time are ffprobe's pts_time and dts_time of the same FLV packets (B-frames: DTS before PTS)",
          arguments: ["csv", "jsonl"])
    func exportTimes(format: String) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // FLV from the x264 CLI: PTS and DTS in milliseconds, the DTS of B-frame streams apart from the PTS (ffmpeg's copy of
        // a raw stream into MP4 would give every packet PTS = DTS).
        let x = try Witness.x264(["--quiet", "--threads", "1", "--bframes", "2", "--keyint", "25", "-o", scratch.file("s.flv"), scratch.file("c.y4m")])
        try #require(x.status == 0, "\(x.stderr)")
        let c = try Witness.enclab(["check", "s.flv", "--expect", "MaxKeyFrameInterval=25", "--db", "c.sqlite"], in: scratch.path)
        try #require(c.status == 0, "\(c.stdout) \(c.stderr)")
        let e = try Witness.enclab(["export", "--db", "c.sqlite", "--table", "frames", "--format", format], in: scratch.path)
        try #require(e.status == 0, "\(e.stderr)")
        // ffprobe -show_packets: pts_time and dts_time (printf %.6f of ticks x timebase), decode order.
        let probe = try packets(scratch.file("s.flv"), "pts_time,dts_time")
        try #require(probe.count == 75)
        // The export's rows are in coded_index order: decode order.
        var pts: [String] = [], dts: [String] = []
        if format == "csv" {
            let rows = e.stdout.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            let header = rows[0]
            let p = try #require(header.firstIndex(of: "pts_time")), d = try #require(header.firstIndex(of: "dts_time"))
            // Beside the ticks.
            #expect(header[p - 1] == "pts" && header[d - 1] == "dts")
            pts = rows.dropFirst().map { $0[p] }
            dts = rows.dropFirst().map { $0[d] }
        } else {
            for line in e.stdout.split(separator: "\n") {
                // The times are JSON numbers written with 6 decimals: read as text to compare them character for character.
                func field(_ name: String) -> String? {
                    guard let at = line.range(of: "\"\(name)\":") else { return nil }
                    return String(line[at.upperBound...].prefix { $0 != "," && $0 != "}" })
                }
                pts.append(try #require(field("pts_time")))
                dts.append(try #require(field("dts_time")))
            }
        }
        #expect(pts == probe.map { $0[0] })
        #expect(dts == probe.map { $0[1] })
        // The B-frames make it a test of both columns: some DTS is not its PTS.
        #expect(zip(pts, dts).contains { $0 != $1 })
    }
}
