import Foundation
import Testing
@testable import EncoderLab

/// The pairs streamed to libvmaf (``PairedPictures``, docs/quality-metrics.md "How the pictures are paired"): scored
/// as libvmaf scores the same pictures from two y4m files written by Debian's ffmpeg, an ffmpeg that stops reading
/// named with its message (the lab not ended by SIGPIPE), and sizes that cannot be stacked refused.
@Suite("paired pictures: one stacked y4m stream to libvmaf through a pipe", .serialized)
struct PairedPicturesTests {
    /// A 64x48 4:2:0 picture: luma a diagonal ramp with `offset`, chroma ramps of their own (so a mix-up of the
    /// chroma rows of the two halves changes the scores).
    static func picture(_ offset: Int, width w: Int = 64, height h: Int = 48) -> Picture {
        var bytes = (0..<(w * h)).map { UInt8((($0 % w) * 3 + ($0 / w) * 2 + offset) & 0xff) }
        bytes += (0..<(w * h / 4)).map { UInt8(96 + ($0 % (w / 2)) + offset % 7) }
        bytes += (0..<(w * h / 4)).map { UInt8(160 - ($0 / (w / 2)) * 2 + offset % 5) }
        return Picture(width: w, height: h, bytes: bytes)
    }

    static func scratch(_ name: String) -> String { NSTemporaryDirectory() + "enclab-\(name)-\(UUID().uuidString.prefix(8))" }

    @Test("five pairs through the pipe: every frame's vmaf, psnr_hvs, float_ssim and xpsnr equal libvmaf's own log on two y4m files of the same pictures (written by Debian's ffmpeg from raw planes)")
    func sameAsTwoFiles() throws {
        let ffmpeg = try VMAFFFmpeg.find(flag: nil, needsXPSNR: true)
        let dir = Self.scratch("pairs")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Decoded k: offset 5k; source k: offset 5k + 2 (the "distortion").
        let decoded = (0..<5).map { Self.picture(5 * $0) }, sources = (0..<5).map { Self.picture(5 * $0 + 2) }
        let pairs = try PairedPictures(inside: dir, width: 64, height: 48, metrics: [.vmaf, .psnrHVS, .ssim, .xpsnr],
                                       ffmpeg: ffmpeg, threads: 1)
        defer { pairs.remove() }
        for (d, s) in zip(decoded, sources) { try pairs.write(held: d.bytes, source: s) }
        let scores = try LibVMAF.score(pairs, displayedFrames: 5)
        // The same pictures as two files: raw planes, made y4m by Debian's ffmpeg (not the lab's writer).
        for (name, pictures) in [("dec", decoded), ("src", sources)] {
            try Data(pictures.flatMap(\.bytes)).write(to: URL(fileURLWithPath: "\(dir)/\(name).yuv"))
            let made = Process()
            made.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            made.arguments = ["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "64x48", "-r", "25", "-i",
                              "\(dir)/\(name).yuv", "-f", "yuv4mpegpipe", "\(dir)/\(name).y4m"]
            try made.run()
            made.waitUntilExit()
            #expect(made.terminationStatus == 0)
        }
        let hand = Process()
        hand.executableURL = URL(fileURLWithPath: ffmpeg)
        hand.currentDirectoryURL = URL(fileURLWithPath: dir)
        hand.arguments = ["-hide_banner", "-nostdin", "-v", "error", "-i", "dec.y4m", "-i", "src.y4m", "-filter_complex",
                          "[0:v]split[a][b];[1:v]split[c][d];[a][c]libvmaf=log_fmt=json:log_path=hand.json:feature=name=psnr_hvs|name=float_ssim[o1];[b][d]xpsnr=stats_file=hand-xpsnr.log[o2]",
                          "-map", "[o1]", "-f", "null", "-", "-map", "[o2]", "-f", "null", "-"]
        try hand.run()
        hand.waitUntilExit()
        #expect(hand.terminationStatus == 0)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(dir)/hand.json"))) as! [String: Any]
        let frames = (json["frames"] as! [[String: Any]]).map { $0["metrics"] as! [String: Any] }
        let xpsnr = try String(contentsOfFile: "\(dir)/hand-xpsnr.log", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("n:") }
        #expect(frames.count == 5 && xpsnr.count == 5 && scores.frames.count == 5)
        for k in 0..<min(5, frames.count, xpsnr.count, scores.frames.count) {
            for (metric, key) in [(QualityMetric.vmaf, "vmaf"), (.psnrHVS, "psnr_hvs"), (.ssim, "float_ssim")] {
                let byHand = (frames[k][key] as! NSNumber).doubleValue
                #expect(scores.frames[k][metric] == byHand, "frame \(k) \(key): streamed \(scores.frames[k][metric] ?? .nan), two files \(byHand)")
            }
            let words = xpsnr[k].split(separator: " ")
            #expect(scores.frames[k][.xpsnr] == Double(words[words.firstIndex(of: "y:")! + 1]), "frame \(k) xpsnr")
        }
        // The pictures differ frame to frame: a pairing off by one would not give these values.
        #expect(Set(scores.frames.compactMap { $0[.psnrHVS] }).count == 5)
        // No picture file was written: the pairs went through the pipe.
        let left = try FileManager.default.contentsOfDirectory(atPath: pairs.folder).sorted()
        #expect(left == ["ffmpeg.log", "vmaf.json", "xpsnr.log"], "\(left)")
    }

    @Test("an ffmpeg that stops reading: the write fails with 70 naming it, how it ended and its stderr; the lab (this process) is not ended by SIGPIPE")
    func scorerGone() throws {
        let dir = Self.scratch("pairs-gone")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Stands in for ffmpeg: reads nothing, says why on stderr, exits 1.
        let fake = "\(dir)/fake-ffmpeg"
        try "#!/bin/sh\necho 'Error: no libvmaf here' >&2\nexit 1\n".write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        // The stream's header (written at the start) or one of 2000 pairs (18 MB, more than the pipe holds) meets the
        // reader gone.
        var failure: LabError?
        do {
            let pairs = try PairedPictures(inside: dir, width: 64, height: 48, metrics: [.vmaf], ffmpeg: fake, threads: 1)
            defer { pairs.remove() }
            for k in 0..<2000 { try pairs.write(held: Self.picture(k).bytes, source: Self.picture(k + 1)) }
        } catch let e as LabError {
            failure = e
        }
        let e = try #require(failure)
        #expect(e.kind == .software)
        #expect(e.message == "\(fake) (libvmaf) stopped reading its input (exit status 1): Error: no libvmaf here", "\(e.message)")
    }

    /// A stand-in for ffmpeg in `dir`: reads the stream, writes a libvmaf JSON log of two frames and a symlink
    /// `link` to `outside` in its working directory, exits 0.
    static func twoFrameScorer(_ dir: String, outside: String) throws -> String {
        let fake = "\(dir)/fake-ffmpeg"
        try """
            #!/bin/sh
            cat > /dev/null
            printf '{"version":"fake","frames":[{"frameNum":0,"metrics":{"vmaf":40}},{"frameNum":1,"metrics":{"vmaf":41}}]}' > vmaf.json
            ln -s '\(outside)' link

            """.write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        return fake
    }

    @Test("each pairing has a folder of its own: two at once in one run folder both score; a user's .quality/ folder and its file stay; a .quality symlink is not followed; a symlink the scorer made is removed, its target kept")
    func foldersOfTheirOwn() throws {
        let root = Self.scratch("pairs-own")
        let run = "\(root)/run", linked = "\(root)/linked", target = "\(root)/target"
        for d in [run, linked, target] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        defer { try? FileManager.default.removeItem(atPath: root) }
        try "mine".write(toFile: "\(root)/keep.txt", atomically: true, encoding: .utf8)
        let fake = try Self.twoFrameScorer(root, outside: "\(root)/keep.txt")
        // A user's own .quality folder in one run folder, a .quality symlink to another folder in the other.
        try FileManager.default.createDirectory(atPath: "\(run)/.quality", withIntermediateDirectories: true)
        try "user's".write(toFile: "\(run)/.quality/notes.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: "\(linked)/.quality", withDestinationPath: target)
        // Two pairings in one run folder at once (two measures of one run), and one beside the symlink.
        let first = try PairedPictures(inside: run, width: 64, height: 48, metrics: [.vmaf], ffmpeg: fake, threads: 1)
        let second = try PairedPictures(inside: run, width: 64, height: 48, metrics: [.vmaf], ffmpeg: fake, threads: 1)
        let third = try PairedPictures(inside: linked, width: 64, height: 48, metrics: [.vmaf], ffmpeg: fake, threads: 1)
        #expect(first.folder != second.folder)
        for pairs in [first, second, third] {
            for k in 0..<2 { try pairs.write(held: Self.picture(k).bytes, source: Self.picture(k + 1)) }
        }
        let a = try LibVMAF.score(first, displayedFrames: 2)
        first.remove()
        let b = try LibVMAF.score(second, displayedFrames: 2)
        second.remove()
        let c = try LibVMAF.score(third, displayedFrames: 2)
        third.remove()
        for scores in [a, b, c] { #expect(scores.frames.map { $0[.vmaf] } == [40, 41]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: run) == [".quality"])
        #expect(try String(contentsOfFile: "\(run)/.quality/notes.txt", encoding: .utf8) == "user's")
        #expect(try FileManager.default.contentsOfDirectory(atPath: linked) == [".quality"])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "\(linked)/.quality") == target)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == [])
        #expect(try String(contentsOfFile: "\(root)/keep.txt", encoding: .utf8) == "mine")
    }

    /// libvmaf's JSON log of two frames, frame 1's value `second` for `key`, frame 0's `first`; frame numbers `numbers`.
    static func vmafLog(_ key: String, _ first: String, _ second: String = "50", numbers: (Int, Int) = (0, 1)) -> String {
        "printf '%s' '{\"version\":\"fake\",\"frames\":[{\"frameNum\":\(numbers.0),\"metrics\":{\"\(key)\":\(first)}},{\"frameNum\":\(numbers.1),\"metrics\":{\"\(key)\":\(second)}}]}' > vmaf.json"
    }

    /// Runs a stand-in scorer doing `body` in its folder after reading the stream, for two pairs, and returns what
    /// scoring them threw (nil when it scored).
    static func scoreWithStandIn(_ body: String, metrics: [QualityMetric], name: String) throws -> LabError? {
        let dir = Self.scratch(name)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fake = "\(dir)/fake-ffmpeg"
        try "#!/bin/sh\ncat > /dev/null\n\(body)\nexit 0\n".write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let pairs = try PairedPictures(inside: dir, width: 64, height: 48, metrics: metrics, ffmpeg: fake, threads: 1)
        defer { pairs.remove() }
        for k in 0..<2 { try pairs.write(held: Self.picture(k).bytes, source: Self.picture(k + 1)) }
        do { _ = try LibVMAF.score(pairs, displayedFrames: 2) } catch let e as LabError { return e }
        return nil
    }

    @Test("a logged value that is not a number, outside its metric's range, or a frame number repeated or missing: 65 naming the frame, the metric and the value, nothing scored",
          arguments: [
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "-5"), "libvmaf's log: frame 0 has vmaf -5.0, outside 0-100 (libvmaf clips its models' scores to score_clip 0-100)"),
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "50", "150"), "libvmaf's log: frame 1 has vmaf 150.0, outside 0-100"),
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "1e308"), "libvmaf's log: frame 0 has vmaf 1e+308, outside 0-100"),
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "true"), "libvmaf's log: frame 0 has vmaf true, not a number"),
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "\"abc\""), "libvmaf's log: frame 0 has vmaf \"abc\", not a number"),
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "50", numbers: (0, 0)), "libvmaf's log: frame 0 is logged twice (2 frames logged)"),
            ("vmaf", PairedPicturesTests.vmafLog("vmaf", "50", numbers: (0, 2)), "libvmaf's log: frame 1 is missing (2 frames logged, numbered from 0)"),
            ("ssim", PairedPicturesTests.vmafLog("float_ssim", "1.5"), "libvmaf's log: frame 0 has float_ssim 1.5, outside -1 to 1"),
            ("ms-ssim", PairedPicturesTests.vmafLog("float_ms_ssim", "0.9", "-1.5"), "libvmaf's log: frame 1 has ms_ssim -1.5, outside -1 to 1"),
            ("ciede2000", PairedPicturesTests.vmafLog("ciede2000", "-0.5"), "libvmaf's log: frame 0 has ciede2000 -0.5, outside 0 and above"),
            ("xpsnr", "printf 'n:    1  XPSNR y: 36.5  XPSNR u: 38.5  XPSNR v: 38.1\\nn:    2  XPSNR y: nan  XPSNR u: 1  XPSNR v: 1\\n' > xpsnr.log",
             "the xpsnr filter's stats: frame 2 has xpsnr \"nan\", not a number of dB"),
            ("xpsnr", "printf 'n:    1  XPSNR y: 36.5  XPSNR u: 38.5  XPSNR v: 38.1\\nn:    1  XPSNR y: 37  XPSNR u: 1  XPSNR v: 1\\n' > xpsnr.log",
             "the xpsnr filter's stats: frame 1 is logged twice"),
          ])
    func valuesRefused(metric: String, body: String, message: String) throws {
        let e = try #require(try Self.scoreWithStandIn(body, metrics: try QualityMetric.list(metric), name: "pairs-values"))
        #expect(e.kind == .data, "\(e.message)")
        #expect(e.message.hasPrefix(message), "\(e.message)")
    }

    @Test("a log written but not readable (not JSON, NaN, a symlink, a FIFO, over 256 MiB) is said to be unreadable, not missing (70); the huge one not read whole",
          arguments: [
            ("printf '{garbage[[' > vmaf.json", "it is not JSON the lab can read (10 bytes)"),
            ("printf '{\"frames\":[{\"frameNum\":0,\"metrics\":{\"vmaf\":NaN}}]}' > vmaf.json", "it is not JSON the lab can read"),
            ("ln -s /etc/passwd vmaf.json", "it is a symbolic link, not followed"),
            ("mkfifo vmaf.json", "it is not a regular file"),
            ("truncate -s 300M vmaf.json", "it is over 256 MiB, the most the lab reads of a scorer's log"),
          ])
    func unreadableLog(body: String, reason: String) throws {
        let e = try #require(try Self.scoreWithStandIn(body, metrics: [.vmaf], name: "pairs-unreadable"))
        #expect(e.kind == .software, "\(e.message)")
        #expect(e.message.contains("and wrote libvmaf's JSON log (vmaf.json), but \(reason)"), "\(e.message)")
        #expect(!e.message.contains("without writing"), "\(e.message)")
    }

    @Test("an odd size is refused (65) before any folder or ffmpeg: the chroma rows of a stacked pair would not line up", arguments: [(64, 47), (63, 48)])
    func oddSize(size: (Int, Int)) throws {
        let dir = Self.scratch("pairs-odd")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: LabError(.data, "\(dir): pictures of \(size.0)x\(size.1) cannot be paired for libvmaf: both sides must be even (4:2:0, each pair stacked in one frame)")) {
            _ = try PairedPictures(inside: dir, width: size.0, height: size.1, metrics: [.vmaf], ffmpeg: "/nonexistent/ffmpeg", threads: 1)
        }
        #expect(!FileManager.default.fileExists(atPath: dir))
    }
}
