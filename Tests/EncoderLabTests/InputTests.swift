import Foundation
import Testing
@testable import EncoderLab

@Suite("y4m input")
struct InputTests {
    func header(_ line: String) throws -> Y4MHeader { try Y4MHeader(line: Array((line + "\n").utf8), file: "t.y4m") }

    func error(_ line: String) -> String? {
        do { _ = try header(line); return nil } catch let e as LabError { return e.message } catch { return "\(error)" }
    }

    @Test("header variants: no C tag (4:2:0), each 4:2:0 C tag, F 30000:1001, A, I, X tokens")
    func variants() throws {
        let plain = try header("YUV4MPEG2 W176 H144 F25:1")
        #expect(plain.chroma == nil && plain.interlacing == "p" && plain.sarWidth == 0)
        // 176*144 luma + 2 * 88*72 chroma.
        #expect(plain.pictureBytes == 25344 + 2 * 6336)
        for c in ["420jpeg", "420mpeg2", "420paldv", "420"] {
            #expect(try header("YUV4MPEG2 W8 H8 F25:1 C\(c)").chroma == c)
        }
        let ntsc = try header("YUV4MPEG2 W176 H144 F30000:1001 Ip A128:117 C420mpeg2 XYSCSS=420MPEG2")
        #expect(ntsc.fpsNum == 30000 && ntsc.fpsDen == 1001 && ntsc.sarWidth == 128 && ntsc.sarHeight == 117)
        #expect(ntsc.comments == ["YSCSS=420MPEG2"] && !ntsc.fullRange)
        #expect(try header("YUV4MPEG2 W8 H8 F25:1 It").interlacing == "t")
        #expect(try header("YUV4MPEG2 W8 H8 F25:1 Ib").interlacing == "b")
        #expect(try header("YUV4MPEG2 W8 H8 XCOLORRANGE=FULL").fullRange)
        // x264's default rate when F is absent.
        #expect(try header("YUV4MPEG2 W8 H8").fpsNum == 25)
    }

    @Test("bad headers are refused naming the file and the tag")
    func refused() {
        #expect(error("YUV4MPEG W8 H8") == "t.y4m: not a YUV4MPEG2 file (header starts with \"YUV4MPEG W8 \")")
        #expect(error("YUV4MPEG2 H8 F25:1") == "t.y4m: y4m header has no width (W tag)")
        #expect(error("YUV4MPEG2 W-3 H8") == "t.y4m: y4m header W must be a width of 1 to 16384, got '-3'")
        #expect(error("YUV4MPEG2 W8 H8 F25") == "t.y4m: y4m header tag F must be num:den, got '25'")
        #expect(error("YUV4MPEG2 W8 H8 C444")?.contains("C444 is not supported") == true)
        #expect(error("YUV4MPEG2 W8 H8 C420p10")?.contains("C420p10 is not supported") == true)
        #expect(error("YUV4MPEG2 W8 H8 Im")?.contains("Im (mixed interlacing per frame) is not supported") == true)
    }

    @Test("header numbers beyond x264's C ints or the lab's 16384 cap are refused naming the tag and value")
    func outOfRange() throws {
        // Int32.max = 2^31 - 1 = 2147483647: the largest value x264's int fields hold.
        #expect(error("YUV4MPEG2 W8 H8 A3000000000:1") == "t.y4m: y4m header sample aspect ratio A3000000000:1 must be num:den with each from 0 to 2147483647")
        #expect(error("YUV4MPEG2 W8 H8 A1:99999999999") == "t.y4m: y4m header sample aspect ratio A1:99999999999 must be num:den with each from 0 to 2147483647")
        #expect(try header("YUV4MPEG2 W8 H8 A2147483647:2147483647").sarWidth == 2_147_483_647)
        #expect(error("YUV4MPEG2 W8 H8 F2147483648:1") == "t.y4m: y4m header frame rate F2147483648:1 must be num:den with each from 1 to 2147483647")
        // Beyond Int64 the number does not parse at all.
        #expect(error("YUV4MPEG2 W8 H8 F1:99999999999999999999") == "t.y4m: y4m header tag F must be num:den, got '1:99999999999999999999'")
        #expect(error("YUV4MPEG2 W16385 H8") == "t.y4m: y4m header W must be a width of 1 to 16384, got '16385'")
        #expect(error("YUV4MPEG2 W8 H99999999999999999999") == "t.y4m: y4m header H must be a height of 1 to 16384, got '99999999999999999999'")
        // 16384 x 16384 is 1024 x 1024 = 1,048,576 macroblocks, above 139,264.
        #expect(error("YUV4MPEG2 W16384 H16384") == "t.y4m: y4m picture 16384x16384 is 1048576 macroblocks, above H.264's largest frame size (139264, Table A-1)")
    }

    /// Writes a y4m by hand: header, then frames whose bytes are `value(frame, offset)`.
    func writeY4M(_ path: String, header: String, frames: Int, frameBytes: Int, frameLine: String = "FRAME",
                  tail: [UInt8] = []) throws {
        var data = Data((header + "\n").utf8)
        for f in 0..<frames {
            data.append(contentsOf: Array((frameLine + "\n").utf8))
            data.append(contentsOf: (0..<frameBytes).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ f) })
        }
        data.append(contentsOf: tail)
        try data.write(to: URL(fileURLWithPath: path))
    }

    @Test("FRAME lines with parameters are read; odd sizes are cropped to even, chroma ceil(w/2) x ceil(h/2)")
    func frameParametersAndCrop() throws {
        let scratch = Scratch()
        // 5x3: luma 15 bytes, chroma ceil(5/2) x ceil(3/2) = 3x2 = 6 bytes each: 27 bytes a frame.
        try writeY4M(scratch.file("odd.y4m"), header: "YUV4MPEG2 W5 H3 F25:1", frames: 2, frameBytes: 27,
                     frameLine: "FRAME Ixyz XFOO=1")
        let clip = try Clip(path: scratch.file("odd.y4m"))
        #expect(clip.info.width == 4 && clip.info.height == 2)
        #expect(clip.info.cropDescription == "right=1,bottom=1 (from 5x3)")
        let first = try #require(try clip.next())
        let src = (0..<27).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        // Rows 0-1 of luma, first 4 columns; then chroma row 0, first 2 columns, of each plane.
        let expected = Array(src[0..<4]) + Array(src[5..<9]) + Array(src[15..<17]) + Array(src[21..<23])
        #expect(first.bytes == expected)
        #expect(try clip.next() != nil)
        #expect(try clip.next() == nil)
        #expect(clip.truncatedBytes == nil)
    }

    @Test("a truncated last frame ends the clip with its byte count, not an error")
    func truncated() throws {
        let scratch = Scratch()
        try writeY4M(scratch.file("cut.y4m"), header: "YUV4MPEG2 W4 H2 F25:1", frames: 3, frameBytes: 12,
                     tail: Array("FRAME\n".utf8) + [1, 2, 3, 4, 5])
        let clip = try Clip(path: scratch.file("cut.y4m"))
        var n = 0
        while try clip.next() != nil { n += 1 }
        #expect(n == 3)
        // "FRAME\n" and 5 of the 12 picture bytes.
        #expect(clip.truncatedBytes == 11)
    }

    @Test("a synthetic clip's texture is SplitMix64's top bytes: frame 0 of seed 0 begins 113, 56, 6, 129")
    func syntheticTextureFromSplitMix64() {
        // Frame 0 (scene 0, no pan) of seed 0: luma (x, 0) = (x * 255 / width + texture[x]) / 2, texture[i] the top byte
        // of SplitMix64's i-th output from state 0 (Vigna's splitmix64.c: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
        // 0x06c45d188009454f, 0xf88bb8a8724c81ec): (0 + 0xe2) / 2, (3 + 0x6e) / 2, (7 + 0x06) / 2, (11 + 0xf8) / 2.
        let picture = SyntheticClip(width: 64, height: 48, frames: 8, seed: 0).picture(0)
        #expect(Array(picture.prefix(4)) == [113, 56, 6, 129])
    }

    @Test("an odd-sized clip encodes at the cropped size, PSNR measured against the cropped source")
    func oddClipEncode() throws {
        let scratch = Scratch()
        let clip = SyntheticClip(width: 67, height: 49, frames: 6, seed: 4)
        try clip.write(to: scratch.file("odd.y4m"))
        let (outcome, store) = try labEncode(scratch.file("odd.y4m"), ["--threads", "1", "--crf", "30"], in: scratch)
        let probe = try Witness.run("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", outcome.streamPath])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "66,48")
        let crop = try store.database.query("SELECT crop FROM runs")[0][0].string
        #expect(crop == "right=1,bottom=1 (from 67x49)")
        // The cropped source, cut by ffmpeg (an independent crop), against the stream: same PSNR as x264's.
        let cropped = try Witness.run("ffmpeg", ["-v", "error", "-y", "-i", scratch.file("odd.y4m"), "-vf", "crop=66:48:0:0", "-f", "yuv4mpegpipe", scratch.file("crop.y4m")])
        try #require(cropped.status == 0, "\(cropped.stderr)")
        let psnr = try Witness.filterStats("psnr", stream: outcome.streamPath, source: scratch.file("crop.y4m"))
        let frames = try store.frames(run: outcome.runID).sorted { $0.displayIndex < $1.displayIndex }
        for (f, w) in zip(frames, psnr) { #expect(abs((f.psnrY ?? 0) - (w["psnr_y"] ?? -1)) < 0.006) }
    }

    @Test("the real clips decode through ffmpeg to 120 and 132 frames", arguments: [
        ("carphone_pristine.mp4", 120, 176, 144), ("bigbuckbunny.mp4", 132, 1280, 720),
    ])
    func realClips(name: String, frames: Int, width: Int, height: Int) throws {
        let clip = try Clip(path: "\(repositoryRoot)/fixtures/\(name)")
        #expect(clip.info.width == width && clip.info.height == height)
        #expect(clip.info.ffmpegVersion?.hasPrefix("ffmpeg version") == true)
        var n = 0
        while try clip.next() != nil { n += 1 }
        #expect(n == frames)
    }
}

@Suite("y4m input: pooled picture buffers")
struct PictureBufferPoolTests {
    @Test("pictures held stay intact while the reader goes on; a released picture's buffer is refilled, no new one")
    func pool() throws {
        let scratch = Scratch()
        // 4x2: 12 bytes a frame, each frame's bytes (k*7 + f) mod 256, as InputTests.writeY4M writes them.
        try InputTests().writeY4M(scratch.file("p.y4m"), header: "YUV4MPEG2 W4 H2 F25:1", frames: 6, frameBytes: 12)
        func expected(_ f: Int) -> [UInt8] { (0..<12).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ f) } }
        let clip = try Clip(path: scratch.file("p.y4m"))
        var held = try (0..<3).map { _ in try #require(try clip.next()) }
        #expect(held.map(\.bytes) == (0..<3).map(expected))
        #expect(Set(held.map { ObjectIdentifier($0.storage) }).count == 3)
        // The first picture released: the pool keeps its buffer (alive through the weak reference) and the next
        // picture is read into it, while the two still held keep their bytes.
        weak let firstBuffer = held[0].storage
        held.removeFirst()
        let fourth = try #require(try clip.next())
        #expect(firstBuffer != nil && fourth.storage === firstBuffer)
        #expect(fourth.bytes == expected(3))
        #expect(held.map(\.bytes) == (1..<3).map(expected))
        // A picture released at once: the rest of the clip goes through one buffer.
        held = []
        weak let reused = fourth.storage
        _ = consume fourth
        for f in 4..<6 {
            let p = try #require(try clip.next())
            #expect(p.bytes == expected(f))
            #expect(p.storage === reused)
        }
        #expect(try clip.next() == nil)
    }
}
