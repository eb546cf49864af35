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
}
