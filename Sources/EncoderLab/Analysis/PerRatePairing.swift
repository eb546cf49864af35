import Foundation

/// The report's per-rate differences (where BD-rate has too few points or is refused): each anchor point compared
/// with the test curve at a comparable rate, never by rank.
///
/// - At an equal target: when the anchor point has a rate asked for (`run_metrics.target_kbps`) and a test point has
///   the same one, the two points are compared as they are (bitrate Δ % and quality Δ of the two runs).
/// - Otherwise (grids of different rates, CRF or QP values against bitrates): the test curve, its points sorted by
///   rate and joined by straight lines in log10(rate), is read at the anchor's achieved rate (the quality Δ at equal
///   rate) and, the same lines taken the other way, at the anchor's quality (the rate Δ at equal quality). Only
///   within the test's measured range, as BD-rate integrates only over the range both curves cover: an anchor rate
///   outside the test's lowest to highest rate, or an anchor quality outside the test's lowest to highest quality,
///   gives no value (with a note saying so), never an extrapolation.
public enum PerRatePairing {
    /// One point of a curve: achieved rate (kbit/s), quality on the curves' metric, its run, and the rate asked for.
    public struct Point: Sendable, Equatable {
        public var rate: Double
        public var quality: Double
        public var runID: Int64
        public var target: Double?
        public init(rate: Double, quality: Double, runID: Int64, target: Double? = nil) {
            self.rate = rate; self.quality = quality; self.runID = runID; self.target = target
        }
    }

    /// A value read off the test curve and the test runs it comes from (one at a point, two between them).
    public struct Reading: Sendable, Equatable {
        public var value: Double
        public var runs: [Int64]
    }

    /// How an anchor point was paired.
    public enum Pairing: Sendable, Equatable {
        /// With the test run asked for the same rate (kbit/s).
        case target(Double)
        /// With the test curve read at the anchor's rate and at its quality.
        case interpolated
    }

    /// One row: an anchor point, how it was paired, the test's rate and quality it is compared with (nil, with a
    /// note, where the anchor is outside the test's range).
    public struct Comparison: Sendable, Equatable {
        public var anchor: Point
        public var pairing: Pairing
        /// The test's rate: the paired run's (target), or the test curve's at the anchor's quality (interpolated).
        public var testRate: Reading?
        /// The test's quality: the paired run's (target), or the test curve's at the anchor's rate (interpolated).
        public var testQuality: Reading?
        /// Why `testRate` / `testQuality` is nil.
        public var rateNote: String?
        public var qualityNote: String?
        /// (test rate − anchor rate) / anchor rate × 100.
        public var rateDeltaPercent: Double? { testRate.map { ($0.value - anchor.rate) / anchor.rate * 100 } }
        /// test quality − anchor quality.
        public var qualityDelta: Double? { testQuality.map { $0.value - anchor.quality } }
    }

    /// One row per anchor point, in the anchor's order of rate.
    public static func rows(anchor: [Point], test: [Point], qualityName: String = "PSNR", unit: String = " dB") -> [Comparison] {
        let sorted = test.filter { $0.rate > 0 && $0.rate.isFinite && $0.quality.isFinite }.sorted { $0.rate < $1.rate }
        return anchor.sorted { $0.rate < $1.rate }.map { a in
            if let target = a.target, let t = sorted.first(where: { $0.target == target }) {
                return Comparison(anchor: a, pairing: .target(target), testRate: Reading(value: t.rate, runs: [t.runID]),
                           testQuality: Reading(value: t.quality, runs: [t.runID]))
            }
            var row = Comparison(anchor: a, pairing: .interpolated, testRate: rate(atQuality: a.quality, on: sorted),
                          testQuality: quality(atRate: a.rate, on: sorted))
            if row.testQuality == nil {
                row.qualityNote = sorted.isEmpty ? "no test points"
                    : "outside the test's \(number(sorted.first!.rate, 0))-\(number(sorted.last!.rate, 0)) kbit/s"
            }
            if row.testRate == nil {
                let qs = sorted.map(\.quality)
                if let lo = qs.min(), let hi = qs.max(), a.quality >= lo, a.quality <= hi {
                    row.rateNote = "the test's \(qualityName) does not rise with rate here"
                } else {
                    row.rateNote = qs.isEmpty ? "no test points"
                        : "outside the test's \(number(qs.min()!, 2))-\(number(qs.max()!, 2))\(unit)"
                }
            }
            return row
        }
    }

    /// The test's quality at `rate`: linear in log10(rate) between the two points around it (the point itself at
    /// its own rate); nil outside the points' rates. `points` sorted by rate.
    public static func quality(atRate rate: Double, on points: [Point]) -> Reading? {
        guard let first = points.first, let last = points.last, rate > 0, rate >= first.rate, rate <= last.rate else { return nil }
        if let p = points.first(where: { $0.rate == rate }) { return Reading(value: p.quality, runs: [p.runID]) }
        for k in 1..<points.count where points[k - 1].rate < rate && rate < points[k].rate {
            let p = points[k - 1], q = points[k]
            let t = (log10(rate) - log10(p.rate)) / (log10(q.rate) - log10(p.rate))
            return Reading(value: p.quality + t * (q.quality - p.quality), runs: [p.runID, q.runID])
        }
        return nil
    }

    /// The test's rate at `quality`: the same lines (linear in log10(rate)) read the other way; nil outside the
    /// points' qualities, or where the curve crosses that quality at more than one rate (it does not rise with rate
    /// there). `points` sorted by rate.
    public static func rate(atQuality quality: Double, on points: [Point]) -> Reading? {
        var found: [Reading] = []
        for p in points where p.quality == quality { found.append(Reading(value: p.rate, runs: [p.runID])) }
        if points.count > 1 {
            for k in 1..<points.count {
                let p = points[k - 1], q = points[k]
                guard min(p.quality, q.quality) < quality, quality < max(p.quality, q.quality) else { continue }
                let t = (quality - p.quality) / (q.quality - p.quality)
                found.append(Reading(value: pow(10, log10(p.rate) + t * (log10(q.rate) - log10(p.rate))), runs: [p.runID, q.runID]))
            }
        }
        return found.count == 1 ? found[0] : nil
    }

    private static func number(_ x: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", x) }
}
