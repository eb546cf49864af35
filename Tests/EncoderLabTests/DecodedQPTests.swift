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
            #expect(qp.map { String(format: "%.2f", $0.x264Rounded) } == expected[k], "display frame \(k): \(flags)")
            #expect(qp.map { $0.agrees(withPrinted: Double(expected[k] ?? "") ?? -1) } == true, "display frame \(k): \(flags)")
        }
    }

    /// Whether a mean of `total / blocks` lies exactly on a tie at the third decimal (21.345, 21.375): 200 x mean is a
    /// whole odd number.
    static func onTie(_ q: MacroblockQP) -> Bool { (q.total * 200) % q.blocks == 0 && ((q.total * 200) / q.blocks) % 2 == 1 }

    /// By hand: quickstart run 36 (bigbuckbunny 1280x720, 3600 macroblocks, --rc cbr --bitrate 1200), display frame
    /// 100: the decoded macroblock QPs sum to 76842, an exact mean of 21.345; x264 printed QP=21.34 (its float
    /// 76842f / 3600f is 21.344999313354492..., numpy.float32), where the lab's old rounding of the mean (half away
    /// from zero) gave 21.35 and warned. 171 / 8 = 21.375 is exact in binary: printf's %.2f rounds it to even, 21.38.
    @Test("x264's rounding of a mean on a tie at the third decimal (single-precision division, %.2f), and which printed values agree")
    func tieByHand() {
        let q = MacroblockQP(total: 76842, blocks: 3600)
        #expect(q.x264Rounded == 21.34)
        #expect(q.agrees(withPrinted: 21.34) && q.agrees(withPrinted: 21.35))
        #expect(!q.agrees(withPrinted: 21.33) && !q.agrees(withPrinted: 21.36))
        #expect(MacroblockQP(total: 171, blocks: 8).x264Rounded == 21.38)
        #expect(MacroblockQP(total: 169, blocks: 8).x264Rounded == 21.12)
        // One macroblock's QP more in 3600 (21.34527...) still rounds to 21.35, never 21.34 beyond the tolerance.
        #expect(MacroblockQP(total: 76843, blocks: 3600).x264Rounded == 21.35)
        #expect(!MacroblockQP(total: 76860, blocks: 3600).agrees(withPrinted: 21.34))
    }

    /// A picture of 8 x 4 = 32 macroblocks: a mean of k / 32 lies on a tie at the third decimal (x.125, x.375, x.625,
    /// x.875) for one sum in 8; x264 prints x.125 and x.625 down, where the old comparison (the mean rounded half away
    /// from zero, 0.0051 apart) disagreed with x264's printed value. Every frame must agree with x264's QP= and the
    /// run must hold such a tie.
    @Test("on pictures whose mean macroblock QP lies on a tie at the third decimal, x264's QP= agrees with the decoded mean and with the lab's rounding of it")
    func tiesAgreeWithX264() throws {
        let clip = SyntheticClip(width: 128, height: 64, frames: 40, seed: 5)
        let scratch = Scratch()
        try clip.write(to: scratch.file("c.y4m"))
        let x264 = try Witness.x264(["--verbose", "--threads", "1", "--crf", "24", "--aq-mode", "2", "--bframes", "2",
                                     "-o", scratch.file("x.264"), scratch.file("c.y4m")])
        try #require(x264.status == 0, "\(x264.stderr)")
        let expected = Self.x264QP(x264.stderr)
        try #require(expected.count == clip.frames, "x264 printed \(expected.count) frame lines")
        let decoder = try H264StreamDecoder(width: 128, height: 64, name: "x.264")
        for k in 0..<clip.frames { decoder.source(Picture(width: 128, height: 64, bytes: clip.picture(k))) }
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file("x.264"))))
        for unit in try AccessUnit.split(try AnnexB.split(stream).map(\.nal)) { try decoder.decode(AnnexB.write(unit.nalUnits)) }
        _ = try decoder.finish()
        let decoded = decoder.meanQP.compactMap { $0 }
        try #require(decoded.count == clip.frames && decoded.allSatisfy { $0.blocks == 32 })
        // A tie x264 prints below the mean (x.125, x.625: %.2f rounds an exact binary tie to even), where rounding half
        // away from zero goes up.
        let ties = decoded.filter { Self.onTie($0) && (($0.total * 200) / $0.blocks) % 4 == 1 }
        try #require(!ties.isEmpty, "no frame's mean lies on a tie printed below it: \(decoded.map(\.total))")
        for (k, q) in decoded.enumerated() {
            let printed = try #require(expected[k].flatMap(Double.init))
            #expect(q.agrees(withPrinted: printed), "display frame \(k): \(q.total) / 32, x264 \(printed)")
            #expect(String(format: "%.2f", q.x264Rounded) == expected[k], "display frame \(k): \(q.total) / 32")
        }
    }
}
