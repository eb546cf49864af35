import Foundation
import Testing
@testable import EncoderLab

/// Clips decoded by ffmpeg: `file:` URLs, ffmpeg's messages on failure, its warnings about damaged input, and
/// files that are not regular files.
@Suite("ffmpeg input: file: URLs, failure messages, damage warnings, non-regular files")
struct FFmpegInputTests {
    /// Writes a synthetic clip as an mp4 (libx264 through ffmpeg) and returns its path.
    func mp4(_ scratch: Scratch, frames: Int, name: String, flags: [String] = []) throws -> String {
        let y4m = scratch.file("src-\(frames).y4m")
        try SyntheticClip(width: 64, height: 48, frames: frames, seed: 11).write(to: y4m)
        let out = scratch.file(name)
        let r = try Witness.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", Witness.file(y4m), "-c:v", "libx264",
                                           "-g", "5", "-pix_fmt", "yuv420p"] + flags + [Witness.file(out)])
        #expect(r.status == 0, "\(r.stderr)")
        return out
    }

    func drain(_ clip: Clip) throws -> Int {
        var n = 0
        while try clip.next() != nil { n += 1 }
        return n
    }

    @Test("paths become file: URLs of the absolute path")
    func urls() {
        #expect(FFmpegInput.url("/tmp/a b/12:30.mp4") == "file:/tmp/a b/12:30.mp4")
        // getcwd(3), not FileManager, as the witness of the current directory.
        let cwd = String(cString: getcwd(nil, 0))
        #expect(FFmpegInput.url("concat:a.mp4|b.mp4") == "file:\(cwd)/concat:a.mp4|b.mp4")
        #expect(FFmpegInput.url("res:1/run-1/stream.264") == "file:\(cwd)/res:1/run-1/stream.264")
    }

    @Test("a faststart mp4 cut at 60 % of its bytes is decoded with warnings naming it; an intact one has none")
    func damaged() throws {
        let scratch = Scratch()
        let whole = try mp4(scratch, frames: 40, name: "whole.mp4", flags: ["-movflags", "+faststart"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cutPath = scratch.file("cut.mp4")
        try bytes.prefix(bytes.count * 60 / 100).write(to: URL(fileURLWithPath: cutPath))

        let intact = try Clip(path: whole)
        #expect(try drain(intact) == 40)
        #expect(intact.warnings == [])

        let cut = try Clip(path: cutPath)
        #expect(cut.warnings == [], "warnings are read when ffmpeg exits")
        let decoded = try drain(cut)
        // ffprobe decodes no more of the cut file than the lab did: the frames after the cut are gone.
        let probed = try Witness.frameCount(cutPath)
        #expect(decoded < 40 && decoded == probed)
        #expect(!cut.warnings.isEmpty)
        #expect(cut.warnings.allSatisfy { $0.hasPrefix("\(cutPath): ffmpeg: ") }, "\(cut.warnings)")
        #expect(cut.warnings.count <= FFmpegInput.maximumWarnings + 1)
        // The path is each entry's prefix, not repeated inside it.
        #expect(!cut.warnings.contains { $0.dropFirst(cutPath.count).contains(cutPath) }, "\(cut.warnings)")
        // Addresses of ffmpeg's contexts and its level tags are not part of the lines.
        #expect(!cut.warnings.contains { $0.contains(" @ 0x") || $0.contains("[warning]") || $0.contains("[error]") })
    }

    @Test("a file ffmpeg cannot open: the message carries the line naming the problem, not only the last")
    func openFailure() throws {
        let scratch = Scratch()
        let whole = try mp4(scratch, frames: 10, name: "whole.mp4")
        // Without faststart the index (moov) is at the end: the first half has none.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let half = scratch.file("half.mp4")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: half))
        #expect(throws: LabError(.data, "\(half): ffmpeg could not decode it: moov atom not found; \(half): Invalid data found when processing input")) {
            try Clip(path: half)
        }
    }

    @Test("ffmpeg's failure lines: contexts and levels dropped, boilerplate dropped, repeats kept once, length capped")
    func problemLines() {
        // As ffmpeg 6 prints a decode that fails part-way with -v error (no level tags).
        let failing = """
            [h264 @ 0x5600a1] Invalid NAL unit size (682 > 20).
            [h264 @ 0x5600a1] Error splitting the input into NAL units.
            Error while decoding stream #0:0: Invalid data found when processing input
            [h264 @ 0x5600a1] Invalid NAL unit size (682 > 20).
            Error marking filters as finished
            Conversion failed!

            """
        #expect(FFmpegInput.problem(failing) == "Invalid NAL unit size (682 > 20).; Error splitting the input into NAL units.")
        // With level tags, warnings give way to errors.
        let tagged = """
            [matroska,webm @ 0x560a] [warning] Format matroska,webm detected only with low score of 1, misdetection possible!
            [matroska,webm @ 0x560a] [error] EBML header parsing failed
            [error] file:/tmp/x/odd.mkv: Invalid data found when processing input

            """
        #expect(FFmpegInput.problem(tagged, path: "/tmp/x/odd.mkv")
                == "EBML header parsing failed; /tmp/x/odd.mkv: Invalid data found when processing input")
        // Nothing but boilerplate: the last line rather than nothing.
        #expect(FFmpegInput.problem("Error while decoding stream #0:0: Invalid argument\nConversion failed!\n") == "Conversion failed!")
        #expect(FFmpegInput.problem("") == nil)
        let long = (0..<50).map { "[h264 @ 0x1] problem number \($0) in this stream" }.joined(separator: "\n")
        let capped = FFmpegInput.problem(long)!
        #expect(capped.count == 400 && capped.hasSuffix("...") && capped.hasPrefix("problem number 0 in this stream; problem number 1"))
    }

    @Test("warnings: noise dropped, repeats once, past the maximum one line counts the rest")
    func warningLines() {
        var text = """
            [warning] Guessed Channel Layout for Input Stream #0.1 : mono
            [swscaler @ 0x5580] [swscaler @ 0x5581] [warning] deprecated pixel format used, make sure you did set range correctly

            """
        #expect(FFmpegInput.warnings(text, path: "c.avi") == [])
        text += (0..<12).map { "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d2] [error] stream 0, offset 0x\($0): partial file\n" }.joined()
        text += "[warning] file:/abs/c.avi: corrupt input packet in stream 0\n[warning] file:/abs/c.avi: corrupt input packet in stream 0\n"
        let w = FFmpegInput.warnings(text, path: "/abs/c.avi")
        #expect(w.count == FFmpegInput.maximumWarnings + 1)
        #expect(w.first == "/abs/c.avi: ffmpeg: stream 0, offset 0x0: partial file")
        #expect(FFmpegInput.warnings("[warning] file:/abs/c.avi: corrupt input packet in stream 0\n", path: "/abs/c.avi")
                == ["/abs/c.avi: ffmpeg: corrupt input packet in stream 0"])
        // 12 partial-file lines and 1 corrupt-packet line (twice) are 13 distinct lines.
        #expect(w.last == "/abs/c.avi: ffmpeg: \(13 - FFmpegInput.maximumWarnings) more distinct warnings")
    }

    @Test("files that are not regular files are refused before they are opened")
    func notRegular() throws {
        #expect(throws: LabError(.noInput, "/dev/zero: not a regular file (a character device); enclab reads a clip twice, give it a file")) {
            try Clip(path: "/dev/zero")
        }
        let scratch = Scratch()
        #expect(throws: LabError(.noInput, "\(scratch.path): is a directory, not a clip")) { try Clip(path: scratch.path) }
        #expect(throws: LabError(.noInput, "\(scratch.file("none.y4m")): no such file")) { try Clip(path: scratch.file("none.y4m")) }
        #expect(throws: LabError(.noInput, "\(scratch.file("none.y4m/x")): no such file")) { try Clip(path: scratch.file("none.y4m/x")) }
    }
}
