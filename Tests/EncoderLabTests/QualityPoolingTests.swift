import Foundation
import Testing
@testable import EncoderLab

/// PSNR and SSIM pooled in named ways, against numbers written out by hand (and the issue's 1080p example).
@Suite("quality pooling: mean of frame PSNR, pooled squared error, 6:1:1, SSIM")
struct QualityPoolingTests {
    static func close(_ a: Double?, _ b: Double, _ tolerance: Double = 1e-9) -> Bool {
        guard let a else { return false }
        return abs(a - b) <= tolerance
    }

    /// 10·log10(255²) = 48.1308036086791 dB: the PSNR of MSE 1.
    static let mse1 = 48.1308036086791

    @Test("the issue's example: MSE 60.92, 7.54, 6.34 at 1080p gives 30.28 luma, 31.80 pooled, 32.65 as 6:1:1")
    func issueExample() throws {
        // SSE = MSE · samples: 60.92 · 1920·1080 = 126 323 712; 7.54 · 960·540 = 3 908 736; 6.34 · 960·540 = 3 286 656.
        let frame = QualityPooling.Frame(sseY: 126_323_712, sseU: 3_908_736, sseV: 3_286_656)
        let r = try QualityPooling.pool([frame], width: 1920, height: 1080)
        #expect(Self.close(r.pooled.y, 30.28, 0.01))
        #expect(Self.close(r.pooled.all, 31.80, 0.01))
        #expect(Self.close(r.pooled.weighted611, 32.65, 0.01))
        // The same to 1e-9 from the formulas written out: U 10·log10(65025/7.54), V 10·log10(65025/6.34); pooled MSE
        // (4·60.92 + 7.54 + 6.34)/6 = 42.92666...
        #expect(Self.close(r.pooled.u, 39.35709014998136))
        #expect(Self.close(r.pooled.v, 40.10991102986178))
        #expect(Self.close(r.pooled.all, 10 * log10(65025 / ((4 * 60.92 + 7.54 + 6.34) / 6)), 1e-9))
        #expect(Self.close(r.pooled.weighted611, (6 * 30.28320466203905 + 39.35709014998136 + 40.10991102986178) / 8))
        // One frame: the mean of per-frame PSNR is the frame's PSNR.
        #expect(r.meanOfFrames == r.pooled)
        #expect(r.totals == QualityPooling.Totals(sseY: 126_323_712, sseU: 3_908_736, sseV: 3_286_656,
                                                  lumaSamples: 2_073_600, chromaSamples: 518_400, weight: 1))
    }

    @Test("two frames: the mean of per-frame PSNR (38.13 dB) is not the PSNR of the pooled error (31.10 dB)")
    func meanAgainstPooled() throws {
        // 4x4 luma (16 samples), 2x2 chroma (4 samples). Frame A: MSE 1 in every plane; frame B: MSE 100 in every plane.
        let a = QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4)
        let b = QualityPooling.Frame(sseY: 1600, sseU: 400, sseV: 400)
        let r = try QualityPooling.pool([a, b], width: 4, height: 4)
        // Per frame: A 48.1308 dB, B 48.1308 − 20 = 28.1308 dB; mean 38.1308 dB, in every plane and for all three.
        for value in [r.meanOfFrames.y, r.meanOfFrames.u, r.meanOfFrames.v, r.meanOfFrames.all] {
            #expect(Self.close(value, Self.mse1 - 10))
        }
        // Pooled: MSE (1 + 100)/2 = 50.5 → 10·log10(65025/50.5) = 31.09788982749249 dB.
        for value in [r.pooled.y, r.pooled.u, r.pooled.v, r.pooled.all] {
            #expect(Self.close(value, 31.09788982749249))
        }
        #expect(Self.close(r.pooled.weighted611, 31.09788982749249))
        #expect(r.zeroErrorFrames == QualityPooling.Counts(y: 0, u: 0, v: 0, all: 0))
        // Order does not matter.
        #expect(try QualityPooling.pool([b, a], width: 4, height: 4).pooled == r.pooled)
    }

    @Test("planes pooled 4:1:1 by samples: Global differs from the 6:1:1 mean of plane PSNRs")
    func planeWeights() throws {
        // 4x4: luma MSE 4 (sse 64), chroma MSE 1 (sse 4 each). All planes: 72 over 24 samples, MSE 3.
        let r = try QualityPooling.pool([QualityPooling.Frame(sseY: 64, sseU: 4, sseV: 4)], width: 4, height: 4)
        #expect(Self.close(r.pooled.y, Self.mse1 - 10 * log10(4)))
        #expect(Self.close(r.pooled.all, Self.mse1 - 10 * log10(3)))
        #expect(Self.close(r.pooled.weighted611, (6 * (Self.mse1 - 10 * log10(4)) + 2 * Self.mse1) / 8))
    }

    @Test("zero-error frames: left out of the mean and counted; a plane with no error at all has no pooled PSNR")
    func zeroError() throws {
        // 4x4. Frame A: no error at all. Frame B: Y MSE 1 (16), U none, V MSE 1 (4).
        let a = QualityPooling.Frame(sseY: 0, sseU: 0, sseV: 0)
        let b = QualityPooling.Frame(sseY: 16, sseU: 0, sseV: 4)
        let r = try QualityPooling.pool([a, b], width: 4, height: 4)
        #expect(r.zeroErrorFrames == QualityPooling.Counts(y: 1, u: 2, v: 1, all: 1))
        #expect(Self.close(r.meanOfFrames.y, Self.mse1))
        #expect(r.meanOfFrames.u == nil)
        #expect(Self.close(r.meanOfFrames.v, Self.mse1))
        // Frame B's avg: 20 over 24 samples → 10·log10(65025·24/20) = 48.92261606915535 dB.
        #expect(Self.close(r.meanOfFrames.all, 48.92261606915535))
        // Pooled: Y 16 over 32 samples → 48.1308 + 3.0103 = 51.141103565318915 dB; all: 20 over 48 → 51.932916025795166.
        #expect(Self.close(r.pooled.y, 51.141103565318915))
        #expect(r.pooled.u == nil)
        #expect(Self.close(r.pooled.v, 51.141103565318915))
        #expect(Self.close(r.pooled.all, 51.932916025795166))
        #expect(r.pooled.weighted611 == nil)
        // Only zero-error frames: no mean, no pooled PSNR, every frame counted.
        let none = try QualityPooling.pool([a, a, a], width: 4, height: 4)
        #expect(none.zeroErrorFrames == QualityPooling.Counts(y: 3, u: 3, v: 3, all: 3))
        #expect(none.meanOfFrames == QualityPooling.Planes(y: nil, u: nil, v: nil, all: nil))
        #expect(none.pooled == QualityPooling.Planes(y: nil, u: nil, v: nil, all: nil))
        // No frames at all.
        let empty = try QualityPooling.pool([], width: 4, height: 4)
        #expect(empty.frames == 0 && empty.pooled.all == nil && empty.meanOfFrames.all == nil && empty.ssimMean == nil)
    }

    @Test("VFR: duration weighting as x264's Global; a frame lasting 3 ticks counts as 3 frames of 1 tick")
    func durationWeighting() throws {
        // 90 kHz ticks: A lasts 3000 (1/30 s) with MSE 1, B lasts 9000 (1/10 s) with MSE 100, every plane.
        let a = QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, duration: 3000)
        let b = QualityPooling.Frame(sseY: 1600, sseU: 400, sseV: 400, duration: 9000)
        let r = try QualityPooling.pool([a, b], width: 4, height: 4, weighting: .duration)
        // Mean: (3000·48.1308 + 9000·28.1308)/12000 = 48.1308 − 15 = 33.1308 dB.
        #expect(Self.close(r.meanOfFrames.y, Self.mse1 - 15))
        #expect(Self.close(r.meanOfFrames.all, Self.mse1 - 15))
        // Pooled MSE (3000·1 + 9000·100)/12000 = 75.25 → 10·log10(65025/75.25) = 29.365738566020294 dB; x264's
        // calc_psnr(Σ dur·(ssd0+ssd1+ssd2), duration·i_yuv_size) = (3000·24 + 9000·2400) / (12000·24), the same MSE.
        #expect(Self.close(r.pooled.y, 29.365738566020294))
        #expect(Self.close(r.pooled.all, 29.365738566020294))
        #expect(r.totals.weight == 12000 && r.totals.lumaSamples == 12000 * 16 && r.totals.sseY == 3000 * 16 + 9000 * 1600)
        // Unweighted, the same frames give 38.13 and 31.10 dB (the two-frame test).
        let unweighted = try QualityPooling.pool([a, b], width: 4, height: 4)
        #expect(Self.close(unweighted.pooled.y, 31.09788982749249))
        // Weighting by duration equals repeating B three times with equal durations.
        let repeated = try QualityPooling.pool([a, b, b, b], width: 4, height: 4)
        #expect(Self.close(repeated.pooled.all, r.pooled.all!, 1e-12))
        #expect(Self.close(repeated.meanOfFrames.y, r.meanOfFrames.y!, 1e-12))
    }

    @Test("SSIM: weighted mean and −10·log10(1 − SSIM)")
    func ssim() throws {
        let frames = [QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, ssim: 0.99, duration: 1),
                      QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, ssim: 0.96, duration: 2),
                      QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, ssim: nil, duration: 5)]
        let r = try QualityPooling.pool(frames, width: 4, height: 4)
        // (0.99 + 0.96)/2 = 0.975 → −10·log10(0.025) = 16.02059991327962 dB.
        #expect(r.ssimFrames == 2)
        #expect(Self.close(r.ssimMean, 0.975, 1e-12))
        #expect(Self.close(r.ssimDecibels, 16.02059991327962, 1e-9))
        // By duration: (1·0.99 + 2·0.96)/3 = 0.97 → −10·log10(0.03) = 15.228787452803376 dB.
        let d = try QualityPooling.pool(frames, width: 4, height: 4, weighting: .duration)
        #expect(Self.close(d.ssimMean, 0.97, 1e-12))
        #expect(Self.close(d.ssimDecibels, 15.228787452803376, 1e-9))
        #expect(QualityPooling.ssimDecibels(1) == nil)
        #expect(Self.close(QualityPooling.ssimDecibels(0.98), 16.989700043360187))
    }

    @Test("sums past Int64 stay exact, and the pooled formula is the lab's PSNR formula")
    func exactSums() throws {
        // 1080p frames of the largest possible error (255² per sample) lasting 2^40 ticks: Σ dur·sse_y exceeds Int64.
        let luma: Int64 = 1920 * 1080, chroma: Int64 = 960 * 540, worst: Int64 = 65025
        let frame = QualityPooling.Frame(sseY: worst * luma, sseU: worst * chroma, sseV: worst * chroma, duration: 1 << 40)
        let r = try QualityPooling.pool([frame, frame, frame], width: 1920, height: 1080, weighting: .duration)
        let expected = UInt128(3) * UInt128(1 << 40) * UInt128(worst * luma)
        #expect(r.totals.sseY == expected && expected > UInt128(Int64.max))
        // MSE 255²: 0 dB in every plane.
        #expect(Self.close(r.pooled.y, 0) && Self.close(r.pooled.all, 0))
        // Where the sums fit, pooled decibels are PSNR.decibels exactly.
        for (sse, samples) in [(1, 16), (126_323_712, 2_073_600), (7, 518_400)] {
            #expect(QualityPooling.decibels(sse: UInt128(sse), samples: UInt128(samples))
                    == PSNR.decibels(sse: Int64(sse), samples: samples))
        }
        #expect(QualityPooling.decibels(sse: 0, samples: 16) == nil)
    }

    @Test("bad input is refused with .data naming the value")
    func refusals() {
        let ok = QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4)
        func message(_ frames: [QualityPooling.Frame], _ w: Int = 4, _ h: Int = 4,
                     _ weighting: QualityPooling.Weighting = .frame) -> String? {
            do { _ = try QualityPooling.pool(frames, width: w, height: h, weighting: weighting); return nil }
            catch let e as LabError { return e.kind == .data ? e.message : "wrong kind \(e.kind)" }
            catch { return "not a LabError" }
        }
        #expect(message([ok], 5, 4)?.contains("5x4") == true)
        #expect(message([ok], 0, 4)?.contains("0x4") == true)
        #expect(message([ok, QualityPooling.Frame(sseY: -1, sseU: 0, sseV: 0)])?.contains("frame 1: sse_y -1") == true)
        // 255² · 4 = 260100 is the largest chroma error of a 2x2 plane.
        #expect(message([QualityPooling.Frame(sseY: 0, sseU: 260_100, sseV: 0)]) == nil)
        #expect(message([QualityPooling.Frame(sseY: 0, sseU: 260_101, sseV: 0)])?.contains("sse_u 260101") == true)
        #expect(message([ok, ok], 4, 4, .duration)?.contains("frame 0 has duration none") == true)
        #expect(message([QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, duration: 0)], 4, 4, .duration)?.contains("duration 0") == true)
        #expect(message([QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, ssim: 1.5)])?.contains("SSIM 1.5") == true)
        #expect(message([QualityPooling.Frame(sseY: 16, sseU: 4, sseV: 4, ssim: .nan)])?.contains("SSIM nan") == true)
    }
}
