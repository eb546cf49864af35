import Foundation
import Testing
@testable import EncoderLab

/// The per-rate pairing of the report's per-rate tables on a hand-computed example: equal targets paired as they
/// are, other points read off the test curve (straight lines in log10(rate)) within its measured range only, never
/// by rank.
struct PerRatePairingTests {
    typealias P = PerRatePairing.Point

    /// The test curve: an ABR-like grid asked for 250, 500 and 2000 kbit/s (runs 11-13).
    let test: [P] = [P(rate: 250, quality: 35, runID: 11, target: 250), P(rate: 500, quality: 38, runID: 12, target: 500),
                     P(rate: 2000, quality: 42, runID: 13, target: 2000)]
    /// The anchor: three CQP-like points (no target) and one asked for 2000 kbit/s that reached 1900.
    let anchor: [P] = [P(rate: 500, quality: 36, runID: 1), P(rate: 1000, quality: 39, runID: 2),
                       P(rate: 1900, quality: 41.5, runID: 3, target: 2000), P(rate: 4000, quality: 44, runID: 4)]

    @Test("a hand-computed example: equal target paired as is, the others interpolated in log10(rate), empty outside the test's range")
    func handComputed() throws {
        let rows = PerRatePairing.rows(anchor: anchor, test: test)
        try #require(rows.count == 4)

        // Run 1 (500 kbit/s, 36 dB), no target: interpolated.
        // Quality at 500 kbit/s: run 12 is at exactly 500 kbit/s: 38 dB, Δ = 38 - 36 = +2 dB.
        // Rate at 36 dB: between run 11 (250, 35) and run 12 (500, 38): t = (36 - 35) / (38 - 35) = 1/3,
        // log10(rate) = log10(250) + (1/3)(log10(500) - log10(250)) = log10(250 * 2^(1/3)), rate = 314.980 kbit/s;
        // Δ = (314.980 - 500) / 500 = -37.004 %.
        #expect(rows[0].pairing == .interpolated)
        #expect(rows[0].testQuality == .init(value: 38, runs: [12]))
        #expect(abs(rows[0].qualityDelta! - 2) < 1e-12)
        #expect(rows[0].testRate?.runs == [11, 12])
        #expect(abs(rows[0].testRate!.value - 314.980_262) < 1e-5)
        #expect(abs(rows[0].rateDeltaPercent! - (-37.003_948)) < 1e-5)

        // Run 2 (1000 kbit/s, 39 dB), no target: interpolated.
        // Quality at 1000 kbit/s: between run 12 (500, 38) and run 13 (2000, 42): t = log10(1000/500) / log10(2000/500)
        // = log10(2) / (2 log10(2)) = 1/2, quality = 38 + (42 - 38)/2 = 40 dB; Δ = 40 - 39 = +1 dB.
        // Rate at 39 dB: t = (39 - 38) / (42 - 38) = 1/4, rate = 500 * 4^(1/4) = 500 * sqrt(2) = 707.107 kbit/s;
        // Δ = (707.107 - 1000) / 1000 = -29.289 %.
        #expect(rows[1].pairing == .interpolated)
        #expect(rows[1].testQuality?.runs == [12, 13])
        #expect(abs(rows[1].testQuality!.value - 40) < 1e-9)
        #expect(abs(rows[1].qualityDelta! - 1) < 1e-9)
        #expect(rows[1].testRate?.runs == [12, 13])
        #expect(abs(rows[1].testRate!.value - 707.106_781) < 1e-5)
        #expect(abs(rows[1].rateDeltaPercent! - (-29.289_322)) < 1e-5)

        // Run 3 asked for 2000 kbit/s, as run 13 was: paired at the equal target, the two runs as they are.
        // Δ rate = (2000 - 1900) / 1900 = +5.263 %, Δ quality = 42 - 41.5 = +0.5 dB.
        #expect(rows[2].pairing == .target(2000))
        #expect(rows[2].testRate == .init(value: 2000, runs: [13]) && rows[2].testQuality == .init(value: 42, runs: [13]))
        #expect(abs(rows[2].rateDeltaPercent! - 5.263_158) < 1e-5)
        #expect(abs(rows[2].qualityDelta! - 0.5) < 1e-12)

        // Run 4 (4000 kbit/s, 44 dB): above the test's rates (250-2000) and its PSNR (35-42): nothing read, notes.
        #expect(rows[3].pairing == .interpolated)
        #expect(rows[3].testQuality == nil && rows[3].testRate == nil && rows[3].rateDeltaPercent == nil && rows[3].qualityDelta == nil)
        #expect(rows[3].qualityNote == "outside the test's 250-2000 kbit/s")
        #expect(rows[3].rateNote == "outside the test's 35.00-42.00 dB")
    }

    @Test("never by rank: grids of different rates pair no lowest with lowest (the old pairing gave 100 against 150 kbit/s: +50 % rate on one line)")
    func notByRank() {
        // CRF-like anchor and ABR-like test on the same line (quality = 10 log10(rate) + 10): every difference is 0
        // where read, while rank pairing (100 with 150, 200 with 400) gave +50 % and +100 % rate.
        let a = [P(rate: 100, quality: 30, runID: 1), P(rate: 200, quality: 10 * log10(200) + 10, runID: 2)]
        let t = [P(rate: 150, quality: 10 * log10(150) + 10, runID: 11, target: 150), P(rate: 400, quality: 10 * log10(400) + 10, runID: 12, target: 400)]
        let rows = PerRatePairing.rows(anchor: a, test: t)
        #expect(rows[0].testQuality == nil && rows[0].testRate == nil)
        #expect(abs(rows[1].qualityDelta!) < 1e-9 && abs(rows[1].rateDeltaPercent!) < 1e-9)
        #expect(rows[1].testQuality?.runs == [11, 12])
    }

    @Test("a test curve that does not rise with rate around the anchor's quality gives no rate, saying so")
    func notMonotonic() {
        let t = [P(rate: 100, quality: 30, runID: 11), P(rate: 200, quality: 34, runID: 12), P(rate: 400, quality: 32, runID: 13)]
        let rows = PerRatePairing.rows(anchor: [P(rate: 300, quality: 33, runID: 1)], test: t)
        #expect(rows[0].testRate == nil)
        #expect(rows[0].rateNote == "the test's PSNR does not rise with rate here")
        #expect(rows[0].testQuality?.runs == [12, 13])
    }
}
