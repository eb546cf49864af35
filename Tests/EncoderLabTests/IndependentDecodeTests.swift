import Foundation
import Testing
@testable import EncoderLab

@Suite("independent decode with FFmpeg's decoder", .serialized)
struct IndependentDecodeTests {
    /// The squared error of each plane of two I420 pictures, summed here sample by sample (the expectation, written
    /// apart from ``IndependentDecode/squaredErrors(_:_:width:height:)``, which it checks): Y is the first
    /// width x height bytes, U and V a quarter of that each.
    static func planeErrors(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> PlaneErrors {
        let y = width * height, c = y / 4
        var sums: [Int64] = [0, 0, 0]
        for i in 0..<(y + 2 * c) {
            let plane = i < y ? 0 : (i < y + c ? 1 : 2)
            let d = Int64(a[i]) - Int64(b[i])
            sums[plane] += d * d
        }
        return PlaneErrors(sseY: sums[0], sseU: sums[1], sseV: sums[2])
    }

    static let clip = SyntheticClip(width: 96, height: 64, frames: 24, seed: 9)

    func x264Errors(_ row: [SQLValue]) -> PlaneErrors {
        PlaneErrors(sseY: IndependentDecode.sse(fromPSNR: row[0].double!, samples: 96 * 64),
                    sseU: IndependentDecode.sse(fromPSNR: row[1].double!, samples: 48 * 32),
                    sseV: IndependentDecode.sse(fromPSNR: row[2].double!, samples: 48 * 32))
    }

    @Test("without VBV, x264's squared error per plane equals that of FFmpeg's decode against the source, frame by frame",
          arguments: [["--crf", "30", "--bframes", "3"], ["--qp", "0"], ["--qp", "35", "--bframes", "2", "--no-cabac"]])
    func squaredErrorsMatch(flags: [String]) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let (outcome, store) = try labEncode(scratch.file("c.y4m"), ["--threads", "1"] + flags, in: scratch)
        let decoded = try IndependentDecode.measure(stream: outcome.streamPath, source: scratch.file("c.y4m"),
                                                    width: 96, height: 64, seek: 0, frames: nil)
        #expect(decoded.count == Self.clip.frames)
        let rows = try store.database.query("SELECT x264_psnr_y, x264_psnr_u, x264_psnr_v FROM frames ORDER BY display_index")
        let stored = try store.database.query("SELECT sse_y, sse_u, sse_v, x264_psnr_differs FROM frames ORDER BY display_index")
        for (k, (row, d)) in zip(rows, decoded).enumerated() {
            if flags == ["--qp", "0"] {
                #expect(row.allSatisfy { $0 == .null })
                #expect(d == PlaneErrors(sseY: 0, sseU: 0, sseV: 0), "display frame \(k)")
            } else {
                #expect(d == x264Errors(row), "display frame \(k)")
                #expect(d.sseY > 0)
            }
            // The frames table keeps the decode's errors, and x264 agrees with them.
            #expect(stored[k] == [.integer(d.sseY), .integer(d.sseU), .integer(d.sseV), .integer(0)], "display frame \(k)")
        }
    }

    /// x264 adds up each frame's squared error row by row while it encodes (encoder.c, fdec_filter_row); when
    /// VBV makes it re-encode rows, the sum can miss the final rows. Its `--dump-yuv` reconstruction is the
    /// picture it wrote: the independent decode must equal that, whatever x264's PSNR says.
    @Test("with VBV, the independent decode equals x264's own reconstruction (--dump-yuv) frame by frame")
    func decodeEqualsReconstruction() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let flags = ["--threads", "1", "--bitrate", "400", "--vbv-maxrate", "400", "--vbv-bufsize", "400", "--nal-hrd", "cbr", "--bframes", "2"]
        let (outcome, store) = try labEncode(scratch.file("c.y4m"), flags, in: scratch)
        let cli = try Witness.x264(["--quiet"] + flags + ["--dump-yuv", scratch.file("recon.yuv"), "-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        try #require(cli.status == 0)
        // The lab's stream is the CLI's (same flags, --threads 1): the reconstruction is of the same stream.
        let same = try Data(contentsOf: URL(fileURLWithPath: outcome.streamPath)) == Data(contentsOf: URL(fileURLWithPath: scratch.file("cli.264")))
        if !same, ProcessInfo.processInfo.environment["ENCLAB_KEEP_MISMATCH"] != nil {
            let keep = "/tmp/mismatch-\(getpid())"
            try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
            try? FileManager.default.copyItem(atPath: Paths.parent(outcome.streamPath), toPath: "\(keep)/lab")
            try? FileManager.default.copyItem(atPath: scratch.file("cli.264"), toPath: "\(keep)/cli.264")
            try? FileManager.default.copyItem(atPath: scratch.file("c.y4m"), toPath: "\(keep)/c.y4m")
            try? FileManager.default.copyItem(atPath: scratch.file("lab.sqlite"), toPath: "\(keep)/lab.sqlite")
        }
        #expect(same)
        let decoded = try IndependentDecode.measure(stream: outcome.streamPath, source: scratch.file("c.y4m"),
                                                    width: 96, height: 64, seek: 0, frames: nil)
        let recon = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file("recon.yuv"))))
        let picture = 96 * 64 * 3 / 2
        try #require(recon.count == picture * Self.clip.frames)
        let stored = try store.database.query("""
            SELECT sse_y, sse_u, sse_v, x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_differs FROM frames ORDER BY display_index
            """)
        try #require(stored.count == Self.clip.frames)
        var differing = 0
        for k in 0..<Self.clip.frames {
            let source = Self.clip.picture(k)
            let expected = Self.planeErrors(Array(recon[(k * picture)..<((k + 1) * picture)]), source, width: 96, height: 64)
            #expect(decoded[k] == expected, "display frame \(k)")
            // The frames table holds the reconstruction's error; a frame differs exactly when x264's PSNR stands for
            // another error.
            #expect(Array(stored[k][0..<3]) == [.integer(expected.sseY), .integer(expected.sseU), .integer(expected.sseV)], "display frame \(k)")
            let differs = x264Errors(Array(stored[k][3..<6])) != expected
            #expect(stored[k][6] == .integer(differs ? 1 : 0), "display frame \(k)")
            if differs { differing += 1 }
        }
        // The run's warning counts them (README: the first IDR's luma error is 5,786 by x264's PSNR, 6,436 decoded).
        let warnings = try store.runs().last?.warningsJSON ?? ""
        #expect(differing > 0)
        #expect(warnings.contains("x264's PSNR differs from the lab's (FFmpeg's decode of the stream against the source) in \(differing) of \(Self.clip.frames) frames"), "\(warnings)")
    }
}
