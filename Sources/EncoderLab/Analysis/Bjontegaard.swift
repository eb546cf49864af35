import Foundation

/// Bjøntegaard deltas between two rate-quality curves: BD-rate (the average bitrate difference at equal quality, in
/// percent) and BD-PSNR (the average quality difference at equal bitrate, in dB).
///
/// A curve is at least 4 points of (rate in kbit/s, PSNR in dB); the points are sorted by rate here, and PSNR must
/// rise strictly with rate. The two curves may have different numbers of points for either method.
///
/// - BD-rate: each curve is taken as log10(rate) = f(PSNR); with [lo, hi] the overlap of the two PSNR ranges,
///   Δ = (∫_lo^hi f_test − ∫_lo^hi f_anchor) / (hi − lo) and BD-rate = (10^Δ − 1) × 100 %.
/// - BD-PSNR: each curve is taken as PSNR = g(log10(rate)); with [lo, hi] the overlap of the two log10-rate ranges,
///   BD-PSNR = (∫_lo^hi g_test − ∫_lo^hi g_anchor) / (hi − lo) dB.
///
/// Positive BD-rate means the test curve needs more bits for the same quality; positive BD-PSNR means it gives more
/// quality at the same rate.
///
/// Two ways to draw f and g (``Method``):
/// - ``Method/cubic``: G. Bjøntegaard, "Calculation of average PSNR differences between RD-curves", ITU-T SG16 Q.6
///   VCEG-M33 (2001): one least-squares polynomial of degree 3 through all the points (numpy's `polyfit(x, y, 3)`),
///   integrated analytically. Here the fit is solved by Householder QR on x centred and scaled to [−1, 1], which
///   gives the same polynomial without the ill-conditioning of raw PSNR powers.
/// - ``Method/pchip``: the piecewise cubic Hermite interpolant through the points, with the monotone slopes of
///   F. N. Fritsch and R. E. Carlson, "Monotone piecewise cubic interpolation", SIAM J. Numer. Anal. 17(2), 1980,
///   as scipy's `PchipInterpolator` computes them (`scipy/interpolate/_cubic.py`): with h_k = x_{k+1} − x_k and
///   m_k = (y_{k+1} − y_k) / h_k, an interior slope is 0 where m_{k−1} and m_k differ in sign or either is 0, else
///   the weighted harmonic mean (w1 + w2) / d_k = w1 / m_{k−1} + w2 / m_k with w1 = 2h_k + h_{k−1},
///   w2 = h_k + 2h_{k−1}; an end slope is the three-point estimate d_0 = ((2h_0 + h_1) m_0 − h_0 m_1) / (h_0 + h_1),
///   set to 0 when its sign differs from m_0's and to 3 m_0 when m_0 and m_1 differ in sign and |d_0| > 3|m_0|
///   (the same at the other end, mirrored). Each cubic piece is integrated exactly over its part of [lo, hi]. This is
///   the interpolation of the `bjontegaard` PyPI package's default "pchip" method (and of JVET's CTC sheets).
///
/// Refusals (``LabError/Kind/data``, one line naming the curve and the values): fewer than 4 points, a rate that is
/// not positive and finite or a PSNR that is not finite, two points at the same rate, PSNR not rising strictly with
/// rate, ranges or integrals or a result that are not finite doubles (values near a double's limits, such as PSNR
/// of 1e300 dB or points 1e-300 dB apart: never a nan or inf result), and an overlap of the integration ranges (the PSNR ranges for BD-rate, the log10-rate ranges for BD-PSNR)
/// shorter than 75 % of their joint range (from the lower of the two minima to the higher of the two maxima), the
/// `bjontegaard` package's measure of overlap, computed with the same operations so that the lab refuses exactly where
/// the package warns. Neither method needs the two curves to have the same number of points, so different lengths are
/// accepted.
///
/// Against the `bjontegaard` PyPI package 1.3.0 (`bd_rate` and `bd_psnr` with `method='pchip'` or `'cubic'`; its
/// source, `interpolation.py` and `bjontegaard_delta.py`): 'pchip' is `scipy.interpolate.PchipInterpolator` and its
/// exact `integrate`, 'cubic' is `numpy.polyfit(x, y, 3)` integrated with `polyint`/`polyval`, both over the overlap
/// of the two ranges, as here; on curves the lab accepts the results agree to 1e-6 (BjontegaardPackageTests). Where
/// they differ: the package only warns about an overlap below 75 % (and returns NaN with a warning for none), the lab
/// refuses; the package does not sort (it reverses a curve whose last x is below its first, and scipy then raises for
/// points out of order), the lab sorts by rate; the package takes non-monotonic curves where the interpolator does
/// (the cubic fit always, PCHIP for BD-PSNR), the lab refuses them; the package by default
/// (`require_matching_points=True`) refuses curves of different lengths for every method, the lab takes them; the
/// package also offers 'akima', the lab does not.
public enum Bjontegaard {
    /// How each curve is drawn between (and through) its points.
    public enum Method: String, Sendable, Equatable, CaseIterable {
        /// Piecewise cubic Hermite with Fritsch–Carlson monotone slopes (scipy's `PchipInterpolator`).
        case pchip
        /// One least-squares cubic polynomial (VCEG-M33).
        case cubic
    }

    /// One curve's point: rate in kbit/s, PSNR in dB (or the value of the metric the curves are on, ``Quality``).
    public typealias Point = (rate: Double, psnr: Double)

    /// The quality the curves' second coordinate is, as the refusals name it: PSNR in dB unless said otherwise
    /// (`--metric vmaf`: "VMAF" without a unit). Only the messages depend on it; the arithmetic is the same.
    public struct Quality: Sendable, Equatable {
        /// The metric's name in messages ("PSNR", "VMAF").
        public var name: String
        /// Its unit with the leading space (" dB"), or "".
        public var unit: String
        public init(name: String, unit: String) { self.name = name; self.unit = unit }
        public static let psnr = Quality(name: "PSNR", unit: " dB")
    }

    /// The smallest overlap accepted, as a fraction of the two ranges' joint range (the `bjontegaard` package's
    /// `min_overlap` default).
    public static let minimumOverlap = 0.75

    /// The overlap of the ranges [a.lo, a.hi] and [b.lo, b.hi] as a fraction of their joint range (from the lower
    /// minimum to the higher maximum), as `bjontegaard_delta.py` computes it: max(overlap, 0) / joint. BD-rate is
    /// refused when that of the two curves' quality ranges is below ``minimumOverlap``.
    public static func overlapFraction(_ a: (lo: Double, hi: Double), _ b: (lo: Double, hi: Double)) -> Double {
        max(min(a.hi, b.hi) - max(a.lo, b.lo), 0) / (max(a.hi, b.hi) - min(a.lo, b.lo))
    }

    /// BD-rate of `test` against `anchor`, in percent: (10^Δ − 1) × 100 with Δ the mean difference of log10(rate)
    /// over the overlap of the PSNR ranges. −10 means the test needs 10 % fewer bits for the same PSNR.
    /// - Throws: ``LabError/Kind/data`` for a curve the method cannot use (see ``Bjontegaard``).
    public static func bdRate(anchor: [Point], test: [Point], method: Method, quality: Quality = .psnr) throws -> Double {
        let a = try curve(anchor, name: "anchor", quality: quality), t = try curve(test, name: "test", quality: quality)
        let delta = try meanDifference(anchor: (a.psnr, a.logRate), test: (t.psnr, t.logRate), method: method,
                                       axis: "\(quality.name) ranges", unit: quality.unit)
        let rate = (pow(10, delta) - 1) * 100
        guard rate.isFinite else {
            throw LabError.data("Bjontegaard (\(method.rawValue)): BD-rate is 10^\(fmt(delta)) - 1, beyond what a double holds; "
                                + "the curves are too far apart to compare")
        }
        return rate
    }

    /// BD-PSNR of `test` against `anchor`, in dB: the mean difference of PSNR over the overlap of the log10(rate)
    /// ranges. +0.5 means the test gives 0.5 dB more at the same rate.
    /// - Throws: ``LabError/Kind/data`` for a curve the method cannot use (see ``Bjontegaard``).
    public static func bdPSNR(anchor: [Point], test: [Point], method: Method, quality: Quality = .psnr) throws -> Double {
        let a = try curve(anchor, name: "anchor", quality: quality), t = try curve(test, name: "test", quality: quality)
        return try meanDifference(anchor: (a.logRate, a.psnr), test: (t.logRate, t.psnr), method: method,
                                  axis: "log10(rate) ranges", unit: "")
    }

    // MARK: - Checks

    private static func fmt(_ x: Double) -> String { String(format: "%.6g", x) }

    /// The curve sorted by rate, as log10(rate) and PSNR, after the checks.
    private static func curve(_ points: [Point], name: String, quality: Quality) throws -> (logRate: [Double], psnr: [Double]) {
        guard points.count >= 4 else {
            throw LabError.data("Bjontegaard: the \(name) curve has \(points.count) point\(points.count == 1 ? "" : "s"); "
                                + "at least 4 (rate, \(quality.name)) points are needed")
        }
        for p in points {
            guard p.rate.isFinite, p.rate > 0 else {
                throw LabError.data("Bjontegaard: the \(name) curve has rate \(fmt(p.rate)) kbit/s; rates must be positive and finite")
            }
            guard p.psnr.isFinite else {
                throw LabError.data("Bjontegaard: the \(name) curve has \(quality.name) \(fmt(p.psnr))\(quality.unit) at \(fmt(p.rate)) kbit/s; \(quality.name) must be finite")
            }
        }
        let sorted = points.sorted { $0.rate < $1.rate }
        for k in 1..<sorted.count {
            let p = sorted[k - 1], q = sorted[k]
            guard q.rate > p.rate else {
                throw LabError.data("Bjontegaard: the \(name) curve has two points at \(fmt(q.rate)) kbit/s")
            }
            guard q.psnr > p.psnr else {
                throw LabError.data("Bjontegaard: the \(name) curve is not monotonic: \(quality.name) \(fmt(q.psnr))\(quality.unit) at "
                                    + "\(fmt(q.rate)) kbit/s is not above \(fmt(p.psnr))\(quality.unit) at \(fmt(p.rate)) kbit/s")
            }
        }
        return (sorted.map { log10($0.rate) }, sorted.map(\.psnr))
    }

    /// (∫ test − ∫ anchor) / (hi − lo) over the overlap [lo, hi] of the two x ranges; x increasing in both.
    private static func meanDifference(anchor: ([Double], [Double]), test: ([Double], [Double]), method: Method,
                                       axis: String, unit: String) throws -> Double {
        let (ax, ay) = anchor, (tx, ty) = test
        let lo = max(ax.first!, tx.first!), hi = min(ax.last!, tx.last!)
        // As bjontegaard_delta.py computes it: max(overlap, 0) / (joint range).
        let joint = max(ax.last!, tx.last!) - min(ax.first!, tx.first!)
        guard joint.isFinite else {
            throw LabError.data("Bjontegaard: the curves' \(axis) span from \(fmt(min(ax.first!, tx.first!)))\(unit) to "
                                + "\(fmt(max(ax.last!, tx.last!)))\(unit), more than a double holds")
        }
        let overlap = max(hi - lo, 0)
        guard overlapFraction((ax.first!, ax.last!), (tx.first!, tx.last!)) >= minimumOverlap else {
            throw LabError.data("Bjontegaard: the curves' \(axis) overlap by \(fmt(overlap))\(unit), "
                                + "\(fmt(overlap / joint * 100)) % of their joint range (\(fmt(joint))\(unit)); "
                                + "at least 75 % is needed")
        }
        let integral: ([Double], [Double]) -> Double
        switch method {
        case .pchip: integral = { x, y in pchipIntegral(x: x, y: y, from: lo, to: hi) }
        case .cubic: integral = { x, y in cubicIntegral(x: x, y: y, from: lo, to: hi) }
        }
        // Values near a double's limits (PSNR of 1e300 dB, points 1e-300 dB apart) overflow in the powers and
        // slopes of the pieces: a result that is not a finite number is refused, never printed as nan.
        let (testArea, anchorArea) = (integral(tx, ty), integral(ax, ay))
        let mean = (testArea - anchorArea) / (hi - lo)
        for (curve, value) in [("test curve's integral", testArea), ("anchor curve's integral", anchorArea), ("mean difference", mean)]
        where !value.isFinite {
            throw LabError.data("Bjontegaard (\(method.rawValue)): the \(curve) over the overlap of the \(axis) "
                                + "(\(fmt(lo)) to \(fmt(hi))\(unit)) is not a finite number (\(value.isNaN ? "NaN" : "infinite")): the points' values are "
                                + "too large or too close together to compute with doubles")
        }
        return mean
    }

    // MARK: - PCHIP

    /// The Fritsch–Carlson slopes at each point, as scipy's `PchipInterpolator._find_derivatives` computes them
    /// (x strictly increasing, at least 3 points).
    static func pchipSlopes(x: [Double], y: [Double]) -> [Double] {
        let n = x.count
        let h = (0..<n - 1).map { x[$0 + 1] - x[$0] }
        let m = (0..<n - 1).map { (y[$0 + 1] - y[$0]) / h[$0] }
        var d = [Double](repeating: 0, count: n)
        for k in 1..<n - 1 {
            let m0 = m[k - 1], m1 = m[k]
            if m0 == 0 || m1 == 0 || (m0 > 0) != (m1 > 0) { continue }
            let w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1]
            d[k] = (w1 + w2) / (w1 / m0 + w2 / m1)
        }
        /// scipy's `_edge_case(h0, h1, m0, m1)`.
        func edge(_ h0: Double, _ h1: Double, _ m0: Double, _ m1: Double) -> Double {
            let d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
            if d.sign != m0.sign || d == 0 || m0 == 0 { return 0 }
            if m0.sign != m1.sign || m1 == 0, abs(d) > 3 * abs(m0) { return 3 * m0 }
            return d
        }
        d[0] = edge(h[0], h[1], m[0], m[1])
        d[n - 1] = edge(h[n - 2], h[n - 3], m[n - 2], m[n - 3])
        return d
    }

    /// ∫_lo^hi of the PCHIP interpolant through (x, y), each Hermite piece written as a cubic in t = x − x_k,
    /// y_k + d_k t + c2 t² + c3 t³ with c2 = (3m_k − 2d_k − d_{k+1}) / h_k and c3 = (d_k + d_{k+1} − 2m_k) / h_k²,
    /// and integrated exactly over its part of [lo, hi] (which lies within [x_0, x_{n−1}]).
    static func pchipIntegral(x: [Double], y: [Double], from lo: Double, to hi: Double) -> Double {
        let d = pchipSlopes(x: x, y: y)
        var total = 0.0
        for k in 0..<x.count - 1 {
            let a = max(lo, x[k]), b = min(hi, x[k + 1])
            guard b > a else { continue }
            let h = x[k + 1] - x[k], m = (y[k + 1] - y[k]) / h
            let c2 = (3 * m - 2 * d[k] - d[k + 1]) / h, c3 = (d[k] + d[k + 1] - 2 * m) / (h * h)
            func antiderivative(_ t: Double) -> Double {
                t * (y[k] + t * (d[k] / 2 + t * (c2 / 3 + t * c3 / 4)))
            }
            total += antiderivative(b - x[k]) - antiderivative(a - x[k])
        }
        return total
    }

    // MARK: - Cubic (VCEG-M33)

    /// ∫_lo^hi of the least-squares cubic through (x, y). The fit is in s = (x − c) / r with c the centre and r the
    /// half-width of x's range, so ∫ p dx = r ∫ q ds.
    static func cubicIntegral(x: [Double], y: [Double], from lo: Double, to hi: Double) -> Double {
        let c = (x.first! + x.last!) / 2, r = (x.last! - x.first!) / 2
        let q = leastSquares(rows: x.map { xi in let s = (xi - c) / r; return [1, s, s * s, s * s * s] }, y: y)
        func antiderivative(_ s: Double) -> Double { s * (q[0] + s * (q[1] / 2 + s * (q[2] / 3 + s * q[3] / 4))) }
        return r * (antiderivative((hi - c) / r) - antiderivative((lo - c) / r))
    }

    /// The least-squares solution of A q ≈ y (A with more rows than columns, full column rank) by Householder QR.
    static func leastSquares(rows: [[Double]], y: [Double]) -> [Double] {
        var a = rows, b = y
        let n = a.count, p = a[0].count
        for j in 0..<p {
            var norm = 0.0
            for i in j..<n { norm += a[i][j] * a[i][j] }
            norm = norm.squareRoot()
            let alpha = a[j][j] > 0 ? -norm : norm
            var v = [Double](repeating: 0, count: n)
            for i in j..<n { v[i] = a[i][j] }
            v[j] -= alpha
            let vv = (j..<n).reduce(0.0) { $0 + v[$1] * v[$1] }
            guard vv > 0 else { continue }
            for col in j..<p {
                let dot = (j..<n).reduce(0.0) { $0 + v[$1] * a[$1][col] }
                for i in j..<n { a[i][col] -= 2 * dot / vv * v[i] }
            }
            let dot = (j..<n).reduce(0.0) { $0 + v[$1] * b[$1] }
            for i in j..<n { b[i] -= 2 * dot / vv * v[i] }
        }
        var q = [Double](repeating: 0, count: p)
        for j in stride(from: p - 1, through: 0, by: -1) {
            var s = b[j]
            for col in j + 1..<p { s -= a[j][col] * q[col] }
            q[j] = s / a[j][j]
        }
        return q
    }
}
