import Foundation
import Testing
@testable import EncoderLab

/// The lab's own quality numbers against witnesses that do not use the lab's code: the frames table's squared errors
/// against summed squared differences written out here (an ffmpeg rawvideo decode of the stream and of the source),
/// its PSNRs against FFmpeg's psnr filter, x264's PSNRs against the x264 CLI's own per-frame lines, and x264's SSIM
/// against an implementation of its definition (docs/verification.md, "How every run is verified") in Python with numpy.
@Suite("the lab's PSNR and x264's SSIM checked against independent arithmetic", .serialized)
struct LabQualityTests {
    /// `ffmpeg -f lavfi -i testsrc2=size=WxH:rate=25 -frames:v N -pix_fmt yuv420p NAME`.
    static func testsrc2(_ scratch: Scratch, _ name: String, size: String, frames: Int) throws -> String {
        let path = scratch.file(name)
        let r = try Witness.run("ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25",
                                           "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", Witness.file(path)])
        try #require(r.status == 0, "\(r.stderr)")
        return path
    }

    /// A file's pictures as raw 4:2:0 bytes (ffmpeg's decode: `-f rawvideo -pix_fmt yuv420p`), one array a picture.
    static func rawPictures(_ path: String, width: Int, height: Int, scratch: Scratch) throws -> [[UInt8]] {
        let raw = scratch.file("raw-\(UUID().uuidString).yuv")
        let r = try Witness.run("ffmpeg", ["-v", "error", "-nostdin", "-i", Witness.file(path), "-fps_mode", "passthrough",
                                           "-f", "rawvideo", "-pix_fmt", "yuv420p", Witness.file(raw)])
        try #require(r.status == 0, "\(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = width * height * 3 / 2
        try #require(bytes.count % size == 0)
        return (0..<(bytes.count / size)).map { Array(bytes[($0 * size)..<(($0 + 1) * size)]) }
    }

    /// Summed squared differences of the Y, U and V planes of two 4:2:0 pictures, written out here.
    static func sse(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> [Int64] {
        let planes = [0..<(width * height), (width * height)..<(width * height * 5 / 4), (width * height * 5 / 4)..<(width * height * 3 / 2)]
        return planes.map { range in range.reduce(Int64(0)) { sum, i in let d = Int64(a[i]) - Int64(b[i]); return sum + d * d } }
    }

    /// x264's per-frame PSNR lines (`x264 --verbose`: "frame=   0 ... Poc:0 ... PSNR Y:46.37 U:43.00 V:43.17"), by
    /// display index (POC / 2 for frame pictures).
    static func x264CLIPSNR(_ stderr: String) -> [Int: [Double]] {
        var byDisplay: [Int: [Double]] = [:]
        for line in stderr.split(separator: "\n") where line.contains("frame=") && line.contains("PSNR Y:") {
            let words = line.split(separator: " ")
            guard let poc = words.first(where: { $0.hasPrefix("Poc:") }).flatMap({ Int($0.dropFirst(4)) }) else { continue }
            let values = ["Y:", "U:", "V:"].compactMap { key in
                words.first(where: { $0.hasPrefix(key) }).flatMap { Double($0.dropFirst(2)) }
            }
            byDisplay[poc / 2] = values
        }
        return byDisplay
    }

    @Test("426x240 (chroma width 213): psnr_* equal FFmpeg's psnr filter, x264_psnr_* the x264 CLI's, sse_* the summed squared differences of a decode")
    func chromaWidthNotMultipleOfEight() throws {
        let scratch = Scratch()
        let clip = try Self.testsrc2(scratch, "c.y4m", size: "426x240", frames: 4)
        let flags = ["--threads", "1", "--preset", "veryfast", "--qp", "30"]
        let (outcome, store) = try labEncode(clip, flags, in: scratch)
        let db = scratch.file("lab.sqlite")
        let rows = try store.database.rows("""
            SELECT display_index, sse_y, sse_u, sse_v, psnr_y, psnr_u, psnr_v, psnr_avg, x264_psnr_y, x264_psnr_u, x264_psnr_v,
                   x264_psnr_avg, x264_psnr_differs FROM frames WHERE run_id = ? ORDER BY display_index
            """, [.integer(outcome.runID)])
        try #require(rows.count == 4)

        // sse_*: the stream and the source decoded to raw 4:2:0 by ffmpeg, the squares summed here; exact.
        let decoded = try Self.rawPictures(outcome.streamPath, width: 426, height: 240, scratch: scratch)
        let source = try Self.rawPictures(clip, width: 426, height: 240, scratch: scratch)
        try #require(decoded.count == 4 && source.count == 4)
        for (k, row) in rows.enumerated() {
            let expected = Self.sse(decoded[k], source[k], width: 426, height: 240)
            #expect([try row.integer("sse_y"), try row.integer("sse_u"), try row.integer("sse_v")] == expected, "display frame \(k)")
        }

        // psnr_*: FFmpeg's psnr filter on the decoded stream (two decimals) to 0.006 dB.
        let ffmpeg = try Witness.filterStats("psnr", stream: outcome.streamPath, source: clip)
        try #require(ffmpeg.count == 4)
        for (k, row) in rows.enumerated() {
            for (column, key) in [("psnr_y", "psnr_y"), ("psnr_u", "psnr_u"), ("psnr_v", "psnr_v"), ("psnr_avg", "psnr_avg")] {
                #expect(abs(try #require(row[column].double) - (ffmpeg[k][key] ?? -1)) < 0.006, "display frame \(k) \(column)")
            }
        }
        // The numbers for display frame 0: FFmpeg 43.09, 43.29, 45.03; x264 43.00, 43.17, 44.98.
        #expect(String(format: "%.2f %.2f %.2f", rows[0]["psnr_u"].double!, rows[0]["psnr_v"].double!, rows[0]["psnr_avg"].double!) == "43.09 43.29 45.03")
        #expect(String(format: "%.2f %.2f %.2f", rows[0]["x264_psnr_u"].double!, rows[0]["x264_psnr_v"].double!, rows[0]["x264_psnr_avg"].double!) == "43.00 43.17 44.98")

        // x264_psnr_*: what the x264 CLI prints for the same flags (its stream is the lab's, byte for byte). --dump-yuv
        // makes the CLI deblock every reconstructed frame, as the lab's b_full_recon does (encoder.c,
        // fdec_filter_row), so that its non-reference B-frames are measured on the pictures a decoder shows too.
        let cli = try Witness.x264(flags + ["--psnr", "--verbose", "--dump-yuv", scratch.file("recon.yuv"), "-o", scratch.file("cli.264"), clip])
        try #require(cli.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.file("cli.264"))) == Data(contentsOf: URL(fileURLWithPath: outcome.streamPath)))
        let printed = Self.x264CLIPSNR(cli.stderr)
        try #require(printed.count == 4)
        var differing = 0
        for (k, row) in rows.enumerated() {
            let x264 = try ["x264_psnr_y", "x264_psnr_u", "x264_psnr_v"].map { try #require(row[$0].double) }
            for (stored, shown) in zip(x264, printed[k] ?? []) { #expect(abs(stored - shown) < 0.006, "display frame \(k)") }
            // A frame differs when x264's printed PSNR is off FFmpeg's in any plane (more than both roundings).
            let off = zip(printed[k] ?? [], [ffmpeg[k]["psnr_y"], ffmpeg[k]["psnr_u"], ffmpeg[k]["psnr_v"]]).contains { abs($0 - ($1 ?? -1)) > 0.011 }
            #expect(row["x264_psnr_differs"].int == (off ? 1 : 0), "display frame \(k)")
            if off { differing += 1 }
        }
        #expect(differing == 4)

        // The run's warning: the count, and the largest difference as sqlite3 computes it from the stored columns.
        let largest = try StoreOpenTests.sqlite(db, """
            SELECT printf('%.3f', max(max(abs(x264_psnr_y - psnr_y), abs(x264_psnr_u - psnr_u), abs(x264_psnr_v - psnr_v),
                                          abs(x264_psnr_avg - psnr_avg)))) FROM frames
            """)[0]
        let warnings = try StoreOpenTests.sqlite(db, "SELECT value FROM runs, json_each(runs.warnings)")
        let warning = try #require(warnings.first { $0.hasPrefix("stream.264: x264's PSNR differs") })
        #expect(warning.contains(" in 4 of 4 frames (display 0, 1, 2, 3), by up to \(largest) dB ("), "\(warning)")
        #expect(warnings.filter { $0.contains("x264's PSNR") }.count == 1)
        // The line the command printed: the mean of the lab's psnr_avg.
        let mean = try StoreOpenTests.sqlite(db, "SELECT avg(psnr_avg) FROM frames")[0]
        #expect(abs(try #require(outcome.meanPSNR) - Double(mean)!) < 1e-9)
    }

    /// A python3 that imports numpy: the one on PATH, else Debian's (`python3-numpy`, which scripts/setup.sh installs).
    static func pythonWithNumpy() throws -> String {
        for candidate in [Tools.find("python3"), "/usr/bin/python3"].compactMap({ $0 }) {
            if let r = try? Tools.run(candidate, ["-c", "import numpy"]), r.status == 0 { return candidate }
        }
        throw LabError.software("no python3 with numpy (bash scripts/setup.sh installs python3-numpy)")
    }

    /// x264's SSIM (docs/schema.md, `frames.ssim`) written from its definition, in Python with numpy:
    /// luma only; 4x4 blocks whose corners lie on a grid 4 samples apart starting 2 samples in from the top and left,
    /// as many as fit in the picture; every 8x8 window of 2x2 neighbouring blocks (windows overlap by 4); per window,
    /// from the sums s1, s2 (the samples of each picture), ss (the squares of both) and s12 (the products) over its 64
    /// samples, ssim = (2 s1 s2 + C1)(2 cov + C2) / ((s1^2 + s2^2 + C1)(var + C2)) with var = 64 ss - s1^2 - s2^2,
    /// cov = 64 s12 - s1 s2, C1 = round(.01^2 255^2 64) = 416, C2 = round(.03^2 255^2 64 63) = 235963; the frame's SSIM
    /// is the mean over its windows. Prints one value per picture of two raw 4:2:0 files.
    static let ssimScript = """
    import sys
    import numpy as np
    a_path, b_path, w, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    size = w * h * 3 // 2
    a, b = np.fromfile(a_path, dtype=np.uint8), np.fromfile(b_path, dtype=np.uint8)
    assert a.size == b.size and a.size % size == 0
    C1 = int(.01 * .01 * 255 * 255 * 64 + .5)
    C2 = int(.03 * .03 * 255 * 255 * 64 * 63 + .5)
    assert (C1, C2) == (416, 235963)
    bw, bh = (w - 2) // 4, (h - 2) // 4
    def blocks(p):
        return p[2:2 + 4 * bh, 2:2 + 4 * bw].reshape(bh, 4, bw, 4).sum(axis=(1, 3))
    def windows(s):
        return s[:-1, :-1] + s[1:, :-1] + s[:-1, 1:] + s[1:, 1:]
    for k in range(a.size // size):
        x = a[k * size:k * size + w * h].reshape(h, w).astype(np.int64)
        y = b[k * size:k * size + w * h].reshape(h, w).astype(np.int64)
        s1, s2 = windows(blocks(x)), windows(blocks(y))
        ss, s12 = windows(blocks(x * x) + blocks(y * y)), windows(blocks(x * y))
        var = 64 * ss - s1 * s1 - s2 * s2
        cov = 64 * s12 - s1 * s2
        num = (2.0 * s1 * s2 + C1) * (2.0 * cov + C2)
        den = (1.0 * s1 * s1 + 1.0 * s2 * s2 + C1) * (1.0 * var + C2)
        print(repr(float((num / den).mean())))
    """

    @Test("frames.ssim is x264's SSIM as defined (README): numpy on the source and the decoded stream (x264's reconstruction) to 1e-6",
          arguments: [("426x240", ["--preset", "veryfast", "--qp", "30"]), ("98x66", ["--crf", "28", "--bframes", "3"])])
    func ssimAsDefined(size: String, flags: [String]) throws {
        let scratch = Scratch()
        let clip = try Self.testsrc2(scratch, "c.y4m", size: size, frames: 6)
        let dims = size.split(separator: "x").map { Int($0)! }
        let (outcome, store) = try labEncode(clip, ["--threads", "1"] + flags, in: scratch)
        let stored = try store.database.query("SELECT ssim FROM frames WHERE run_id = ? ORDER BY display_index", [.integer(outcome.runID)])
            .map { $0[0].double }
        try #require(stored.count == 6)
        // Both pictures as raw 4:2:0: the source, and the stream as FFmpeg decodes it (x264's reconstruction with
        // b_full_recon: the lab checks the two against each other's squared error).
        for (name, path) in [("source.yuv", clip), ("decoded.yuv", outcome.streamPath)] {
            let r = try Witness.run("ffmpeg", ["-v", "error", "-nostdin", "-i", Witness.file(path), "-fps_mode", "passthrough",
                                               "-f", "rawvideo", "-pix_fmt", "yuv420p", Witness.file(scratch.file(name))])
            try #require(r.status == 0, "\(r.stderr)")
        }
        let python = try Self.pythonWithNumpy()
        let r = try Tools.run(python, ["-c", Self.ssimScript, scratch.file("decoded.yuv"), scratch.file("source.yuv"), "\(dims[0])", "\(dims[1])"])
        let out = String(decoding: r.stdout, as: UTF8.self)
        try #require(r.status == 0, "\(String(decoding: r.stderr, as: UTF8.self))")
        let numpy = out.split(separator: "\n").compactMap { Double($0) }
        try #require(numpy.count == 6)
        for (k, (s, n)) in zip(stored, numpy).enumerated() {
            #expect(abs(try #require(s) - n) < 1e-6, "display frame \(k): stored \(s ?? .nan), numpy \(n)")
        }
        // FFmpeg's ssim filter (another window: 8x8 from the corner, with its own constants) is only a loose witness.
        let ffmpeg = try Witness.filterStats("ssim", stream: outcome.streamPath, source: clip)
        try #require(ffmpeg.count == 6)
        for (k, (s, f)) in zip(stored, ffmpeg).enumerated() { #expect(abs(try #require(s) - (f["Y"] ?? -1)) < 0.02, "display frame \(k)") }
    }

    @Test("the numpy definition is not the grid from the corner: the same windows without the 2-sample offset give another SSIM")
    func offsetMatters() throws {
        // The same definition with the grid at 0 instead of 2 disagrees with the stored value by far more than 1e-6,
        // so the witness above can tell the grid apart.
        let scratch = Scratch()
        let clip = try Self.testsrc2(scratch, "c.y4m", size: "426x240", frames: 1)
        let (outcome, store) = try labEncode(clip, ["--threads", "1", "--preset", "veryfast", "--qp", "30"], in: scratch)
        let stored = try #require(try store.database.query("SELECT ssim FROM frames WHERE run_id = ?", [.integer(outcome.runID)])[0][0].double)
        for (name, path) in [("source.yuv", clip), ("decoded.yuv", outcome.streamPath)] {
            let r = try Witness.run("ffmpeg", ["-v", "error", "-nostdin", "-i", Witness.file(path), "-f", "rawvideo", "-pix_fmt", "yuv420p", Witness.file(scratch.file(name))])
            try #require(r.status == 0)
        }
        let cornerGrid = Self.ssimScript.replacingOccurrences(of: "p[2:2 + 4 * bh, 2:2 + 4 * bw]", with: "p[0:4 * bh, 0:4 * bw]")
        #expect(cornerGrid != Self.ssimScript)
        let r = try Tools.run(try Self.pythonWithNumpy(), ["-c", cornerGrid, scratch.file("decoded.yuv"), scratch.file("source.yuv"), "426", "240"])
        let corner = try #require(Double(String(decoding: r.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(abs(corner - stored) > 1e-5, "corner grid \(corner), stored \(stored)")
    }
}
