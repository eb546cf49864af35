import Foundation
import H264
import Testing
@testable import EncoderLab

/// The QP the verify stage's decode reads (``H264StreamDecoder/meanQP``: libavcodec's AVVideoEncParams, the mean over
/// a picture's macroblocks of `qp + delta_qp`), against x264's own per-frame QP as its CLI prints it with `--verbose`
/// ("frame=   1 QP=33.56 ... Poc:8": `f_qp_avg_aq`, 2 decimals), on streams the x264 CLI wrote: the witness for
/// storing the decoded mean as the QP of OpenH264's runs (docs/openh264.md, "QP").
@Suite("the decoded mean macroblock QP against x264's own per-frame QP", .serialized)
struct DecodedQPTests {
    static let clip = SyntheticClip(width: 160, height: 96, frames: 20, seed: 11)

    /// x264's per-frame debug lines: the QP text by display index (POC / 2: x264 counts a frame's POC in steps of 2).
    static func x264QP(_ stderr: String) -> [Int: String] {
        var out: [Int: String] = [:]
        for line in stderr.split(separator: "\n") where line.contains(" frame=") {
            let fields = line.split(separator: " ")
            guard let qp = fields.first(where: { $0.hasPrefix("QP=") }).map({ String($0.dropFirst(3)) }),
                  let k = fields.firstIndex(where: { $0.hasPrefix("Poc:") }) else { continue }
            let inline = fields[k].dropFirst(4)
            guard let poc = Int(inline.isEmpty && k + 1 < fields.count ? fields[k + 1] : inline) else { continue }
            out[poc / 2] = qp
        }
        return out
    }

    @Test("libavcodec's mean macroblock QP, to 2 decimals, is x264's QP= for every frame: adaptive quantization, B-frames, CAVLC, constant QP, VBV",
          arguments: [["--crf", "23"], ["--crf", "20", "--aq-mode", "2", "--bframes", "3", "--b-pyramid", "normal"],
                      ["--bitrate", "200", "--no-cabac", "--aq-mode", "0"], ["--qp", "30"],
                      ["--bitrate", "150", "--vbv-maxrate", "150", "--vbv-bufsize", "150", "--slices", "3"]])
    func matchesX264(flags: [String]) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let x264 = try Witness.x264(["--verbose", "--threads", "1"] + flags + ["-o", scratch.file("x.264"), scratch.file("c.y4m")])
        try #require(x264.status == 0, "\(x264.stderr)")
        let expected = Self.x264QP(x264.stderr)
        try #require(expected.count == Self.clip.frames, "x264 printed \(expected.count) frame lines")
        // Every source picture held first (the window may hold the whole clip), then the stream's access units.
        let decoder = try H264StreamDecoder(width: 160, height: 96, name: "x.264")
        for k in 0..<Self.clip.frames { decoder.source(Picture(width: 160, height: 96, bytes: Self.clip.picture(k))) }
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file("x.264"))))
        for unit in try AccessUnit.split(try AnnexB.split(stream).map(\.nal)) { try decoder.decode(AnnexB.write(unit.nalUnits)) }
        _ = try decoder.finish()
        #expect(decoder.meanQP.count == Self.clip.frames)
        for (k, qp) in decoder.meanQP.enumerated() {
            #expect(qp.map { String(format: "%.2f", $0) } == expected[k], "display frame \(k): \(flags)")
        }
    }
}
