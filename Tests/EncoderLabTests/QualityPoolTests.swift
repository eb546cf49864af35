import Foundation
import Testing
@testable import EncoderLab

/// The pooling of `run_quality_metrics` (docs/quality-metrics.md), by hand on short lists.
@Suite("perceptual quality pooling: mean, libvmaf's harmonic mean, 1 % and 5 % lows")
struct QualityPoolTests {
    @Test("four frames: mean 25, harmonic mean 4 / (1/11 + 1/21 + 1/31 + 1/41) - 1, both lows the one worst frame")
    func fourFrames() {
        let p = QualityPool([30, 10, 40, 20])
        #expect(p.mean == 25)
        // 1/11 + 1/21 + 1/31 + 1/41 = 0.0909091 + 0.0476190 + 0.0322581 + 0.0243902 = 0.1951764; 4 / that - 1 = 19.494
        #expect(abs(p.harmonicMean - 19.49428) < 1e-4)
        #expect(abs(p.harmonicMean - (4 / (1.0 / 11 + 1.0 / 21 + 1.0 / 31 + 1.0 / 41) - 1)) < 1e-12)
        #expect(p.low1 == 10 && p.low5 == 10)
    }

    @Test("100 frames 1...100: 1 % low is frame 1, 5 % low the mean of 1...5 = 3; 101 frames: ceil(1.01) = 2 frames, (1 + 2) / 2")
    func lows() {
        let hundred = QualityPool((1...100).map(Double.init).shuffled())
        #expect(hundred.low1 == 1)
        #expect(hundred.low5 == 3)
        #expect(hundred.mean == 50.5)
        let more = QualityPool((1...101).map(Double.init))
        #expect(more.low1 == 1.5)
        // ceil(5.05) = 6 frames: (1 + ... + 6) / 6 = 3.5
        #expect(more.low5 == 3.5)
    }

    @Test("one frame: every pooled value is that frame's")
    func oneFrame() {
        let p = QualityPool([87.25])
        #expect(p.mean == 87.25 && p.low1 == 87.25 && p.low5 == 87.25)
        #expect(abs(p.harmonicMean - 87.25) < 1e-12)
    }

    @Test("--metrics names: the lab's order, each once; an unknown word refused naming it")
    func names() throws {
        #expect(try QualityMetric.list("xpsnr,vmaf, ssim,vmaf").map(\.column) == ["vmaf", "float_ssim", "xpsnr"])
        #expect(throws: LabError.self) { try QualityMetric.list("vmaf,psnr") }
        #expect(throws: LabError(.usage, "c.y4m: ms-ssim needs pictures of at least 176x176 (libvmaf's five scales), the clip is 176x144; leave ms-ssim out of --metrics")) {
            try QualityMetric.check([.msSSIM], width: 176, height: 144, clip: "c.y4m")
        }
        try QualityMetric.check([.msSSIM], width: 176, height: 176, clip: "c.y4m")
    }

    /// A noisy-ish 64x64 4:2:0 picture: luma a diagonal ramp with `offset`, chroma flat.
    static func picture(_ offset: Int) -> Picture {
        let w = 64, h = 64
        var bytes = (0..<(w * h)).map { UInt8((($0 % w) * 3 + ($0 / w) * 2 + offset) & 0xff) }
        bytes += [UInt8](repeating: 128, count: w * h / 2)
        return Picture(width: w, height: h, bytes: bytes)
    }

    @Test("an input dropped before any decoded picture: its row is empty, and the warning says why (nothing decoded yet), not 'no finite value' of a lossless picture")
    func droppedBeforeAnyDecoded() throws {
        // Three inputs, input 0 dropped before anything was decoded: two pairs reach libvmaf (the held pictures
        // differ from their sources, so every value is finite), scored as the run's inputs 1 and 2.
        let folder = NSTemporaryDirectory() + "enclab-unscored-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let ffmpeg = try VMAFFFmpeg.find(flag: nil)
        let pairs = try PairedPictures(inside: folder, width: 64, height: 64, metrics: [.vmaf], ffmpeg: ffmpeg, threads: 1)
        defer { pairs.remove() }
        for k in 1...2 { try pairs.write(held: Self.picture(k * 7).bytes, source: Self.picture(k * 7 + 3)) }
        let scores = try LibVMAF.scoreInputs(pairs, inputs: 3, unscored: [0])
        #expect(scores.frames.count == 3)
        #expect(scores.frames[0].isEmpty)
        #expect(scores.frames[1][.vmaf] != nil && scores.frames[2][.vmaf] != nil)
        // The only warning is the one that gives the right reason.
        #expect(scores.missingWarning() == nil, "\(scores.missingWarning() ?? "")")
        #expect(LibVMAF.unscoredWarning([0]) == "--metrics: input pictures 0 were dropped by the encoder before any picture was decoded (nothing is shown in their place): not scored, their frame_quality_metrics rows are NULL")
        // A scored frame without a value is still said, counted among the scored frames only.
        var lossy = scores
        lossy.frames[2] = [:]
        #expect(lossy.missingWarning()?.hasPrefix("--metrics: vmaf has no finite value for 1 of 2 scored frames (display 2): ") == true, "\(lossy.missingWarning() ?? "")")
    }
}
