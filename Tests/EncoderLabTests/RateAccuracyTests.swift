import Foundation
import Testing
@testable import EncoderLab

/// Issue 11, item 3: the rate-accuracy experiments parse to the grid docs/rate-accuracy.md reports, and
/// scripts/loop-clips.sh repeats a clip picture for picture (ffprobe and ffmpeg's framemd5 as witnesses).
@Suite("rate accuracy: experiment files and looped clips")
struct RateAccuracyTests {
    static let clipNames = ["carphone_pristine.mp4", "carphone_pristine-30s.mp4", "carphone_pristine-120s.mp4",
                            "bigbuckbunny.mp4", "bigbuckbunny-30s.mp4", "bigbuckbunny-120s.mp4"]

    @Test("rate-accuracy.json: 6 clips (the real ones and their 30 s and 120 s loops) x ABR, CBR, VBR at 300 kbit/s")
    func rateAccuracyGrid() throws {
        let e = try Experiment(path: "\(repositoryRoot)/experiments/rate-accuracy.json")
        #expect(e.name == "rate-accuracy")
        #expect(e.runs.count == 6 * 3)
        #expect(e.clips.map { ($0 as NSString).lastPathComponent } == Self.clipNames)
        #expect(e.clips.filter { $0.hasSuffix("s.mp4") }.allSatisfy { $0.hasPrefix("\(repositoryRoot)/fixtures/loops/") })
        var args: [String: [String]] = [:]
        for run in e.runs {
            let x = try run.settings.resolved().x264Arguments
            let rc = try #require(run.settings.rc?.rawValue)
            if let old = args[rc] { #expect(old == x, "one setting per mode, the same on every clip") }
            args[rc] = x
        }
        #expect(args["abr"] == ["--preset", "medium", "--threads", "2", "--bitrate", "300"])
        #expect(args["cbr"] == ["--preset", "medium", "--threads", "2", "--bitrate", "300",
                                "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "cbr"])
        #expect(args["vbr"] == ["--preset", "medium", "--threads", "2", "--bitrate", "300",
                                "--vbv-maxrate", "450", "--vbv-bufsize", "450"])
        for name in Self.clipNames {
            #expect(e.runs.filter { ($0.clip as NSString).lastPathComponent == name }.count == 3)
        }
    }

    @Test("rate-accuracy-mechanism.json: 2 real clips x the nine parameter settings the findings name")
    func mechanismGrid() throws {
        let e = try Experiment(path: "\(repositoryRoot)/experiments/rate-accuracy-mechanism.json")
        #expect(e.runs.count == 2 * 9)
        #expect(Set(e.clips.map { ($0 as NSString).lastPathComponent }) == ["carphone_pristine.mp4", "bigbuckbunny.mp4"])
        let base = ["--preset", "medium", "--threads", "1", "--bitrate", "300"]
        let expected: [[String]] = [
            base + ["--ratetol", "0.25"],
            base + ["--ratetol", "1"],
            base + ["--ratetol", "4"],
            base + ["--no-mbtree", "--qcomp", "0.6"],
            base + ["--no-mbtree", "--qcomp", "1"],
            base + ["--ratetol", "0.25", "--vbv-maxrate", "450", "--vbv-bufsize", "450"],
            base + ["--vbv-init", "0.5", "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "cbr"],
            base + ["--vbv-init", "0.9", "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "cbr"],
            base + ["--vbv-init", "1", "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "cbr"],
        ]
        for clip in e.clips {
            let got = try e.runs.filter { $0.clip == clip }.map { try $0.settings.resolved().x264Arguments }
            #expect(got.sorted { $0.joined(separator: " ") < $1.joined(separator: " ") }
                    == expected.sorted { $0.joined(separator: " ") < $1.joined(separator: " ") })
        }
    }

    /// Each decoded picture's MD5 (ffmpeg's framemd5 muxer), in output order.
    static func pictureHashes(_ path: String) throws -> [String] {
        let out = try Witness.run("ffmpeg", ["-nostdin", "-v", "error", "-i", Witness.file(path), "-map", "0:v:0",
                                             "-f", "framemd5", "-"])
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
            $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    static func loopScript(_ arguments: [String]) throws -> Witness.Output {
        try Witness.run("bash", ["\(repositoryRoot)/scripts/loop-clips.sh"] + arguments)
    }

    @Test("loop-clips.sh: whole copies of a clip with B-frames, every picture the source's, made once")
    func loopClips() throws {
        let scratch = Scratch()
        // 20 frames at 30000/1001 with B-frames: negative DTS and an edit list in the MP4, as carphone_pristine.mp4.
        let source = scratch.file("short clip.mp4")
        let made = try Witness.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi",
                                              "-i", "testsrc2=size=64x48:rate=30000/1001", "-frames:v", "20",
                                              "-c:v", "libx264", "-bf", "2", "-g", "10", "-pix_fmt", "yuv420p",
                                              Witness.file(source)])
        try #require(made.status == 0, "\(made.stderr)")
        let probe = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0",
                                                "-show_entries", "stream=has_b_frames", "-of", "csv=p=0", Witness.file(source)])
        #expect(Int(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 1)
        let sourceHashes = try Self.pictureHashes(source)
        try #require(sourceHashes.count == 20)

        // 2 s of 20-frame copies of 20 x 1001 / 30000 = 0.6673 s each: 2 / 0.6673 = 2.997, so 3 copies, 60 frames.
        let out = scratch.file("loops")
        let first = try Self.loopScript(["--out", out, "--lengths", "2", source])
        #expect(first.status == 0, "\(first.stderr)")
        let loop = "\(out)/short clip-2s.mp4"
        #expect(try Witness.frameCount(loop) == 60)
        let hashes = try Self.pictureHashes(loop)
        #expect(hashes.count == 60)
        for copy in 0..<3 where hashes.count == 60 {
            #expect(Array(hashes[(copy * 20)..<(copy * 20 + 20)]) == sourceHashes, "copy \(copy)")
        }
        // The timestamps run on across the copies: 60 distinct PTS, one frame apart.
        let times = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts",
                                                "-of", "csv=p=0", Witness.file(loop)])
        let pts = times.stdout.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.sorted()
        #expect(pts.count == 60)
        #expect(Set(zip(pts, pts.dropFirst()).map { $1 - $0 }).count == 1)
        // No audio or other streams.
        let streams = try Witness.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0",
                                                  Witness.file(loop)])
        #expect(streams.stdout.split(separator: "\n").map(String.init) == ["video"])

        // Run again: the file is kept as it is (same inode, same modification time).
        let before = try FileManager.default.attributesOfItem(atPath: loop)
        let again = try Self.loopScript(["--out", out, "--lengths", "2", source])
        #expect(again.status == 0)
        #expect(again.stdout.contains("kept"))
        let after = try FileManager.default.attributesOfItem(atPath: loop)
        #expect(before[.systemFileNumber] as? Int == after[.systemFileNumber] as? Int)
        #expect(before[.modificationDate] as? Date == after[.modificationDate] as? Date)
        // A damaged output is made again; no temporary file is left.
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: loop))
        let repaired = try Self.loopScript(["--out", out, "--lengths", "2", source])
        #expect(repaired.status == 0, "\(repaired.stderr)")
        #expect(try Self.pictureHashes(loop).count == 60)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["short clip-2s.mp4"])
    }

    @Test("loop-clips.sh refuses a missing clip (66) and a length that is not whole seconds (64)")
    func loopClipsRefuses() throws {
        let scratch = Scratch()
        let missing = try Self.loopScript(["--out", scratch.path, scratch.file("none.mp4")])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("none.mp4"))
        let bad = try Self.loopScript(["--out", scratch.path, "--lengths", "1.5", scratch.file("none.mp4")])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("'1.5'"))
    }
}
