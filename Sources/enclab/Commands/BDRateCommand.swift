import EncoderLab
import Foundation

/// `enclab bd-rate --anchor RATE:PSNR,... --test RATE:PSNR,... [--method pchip|cubic] [--metric NAME]`: Bjøntegaard
/// deltas between two rate-quality curves given on the command line (``Bjontegaard``), no database needed.
struct BDRateCommand: Command {
    let name = "bd-rate"
    let summary = "BD-rate and BD-PSNR between two rate-quality curves given on the command line"
    let operands = ""
    static let curve = "RATE:PSNR,..."
    let flags = [
        Flag("--anchor", value: curve, about: "the reference curve: at least 4 points, each a rate (kbit/s, or any unit the test uses too) "
             + "and a PSNR in dB, in any order (they are sorted by rate)", required: true),
        Flag("--test", value: curve, about: "the curve compared with the anchor, as --anchor; it may have another number of points", required: true),
        Flag("--method", value: "pchip|cubic", about: "how each curve is drawn through its points: pchip, the piecewise cubic Hermite "
             + "interpolant with Fritsch-Carlson slopes (scipy's PchipInterpolator), or cubic, VCEG-M33's least-squares cubic",
             default: "pchip"),
        Flag("--metric", value: "METRIC", about: "the quality the curves' second numbers are: psnr (dB), or one of --metrics' names (vmaf, vmaf-neg, vmaf-4k, psnr-hvs, ms-ssim, ssim, ciede2000, xpsnr); "
             + "it names the quality delta (BD-VMAF) and the refusals; the arithmetic is the same",
             default: "psnr"),
    ]
    let about = """
        Prints the Bjøntegaard deltas of the test curve against the anchor, as two lines naming the method:
        'BD-rate (pchip): -10.278211 %' (the mean difference in bitrate at equal PSNR, over the overlap of the two
        PSNR ranges; negative: the test needs fewer bits) and 'BD-PSNR (pchip): 0.368389 dB' (the mean difference
        in PSNR at equal bitrate, over the overlap of the two log10-rate ranges; positive: the test is better).
        Each curve is taken on log10(rate). A curve is refused when PSNR does not rise strictly with rate, and a
        pair whose ranges overlap by less than 75 % of their joint range (the bjontegaard package 1.3.0 only warns
        there). On the curves it accepts it agrees with that package to 1e-6.
        With --metric vmaf (or another of --metrics' names) the curves are RATE:VMAF and the second line is
        'BD-VMAF (pchip): ...' (the mean VMAF difference at equal bitrate; no unit); BD-rate is then the bitrate
        difference at equal VMAF. 'enclab report --metric vmaf' computes the same from a database's runs
        (docs/quality-metrics.md).
        """
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "both deltas printed"),
        (64, "usage: a flag missing, a point that is not RATE:PSNR with decimal numbers, an unknown method or metric"),
        (65, "bad data: fewer than 4 points, a rate not above 0, two points at one rate, PSNR not rising with rate, too little overlap, "
         + "values too large or too close together for a finite result (never printed as nan or inf), a VMAF outside 0-100, "
         + "an SSIM or MS-SSIM outside -1 to 1"),
    ]
    let example = """
        enclab bd-rate --anchor 1000:34.1,1800:36.4,3500:38.9,7000:41.0 --test 900:34.4,1500:36.2,2600:38.1,4800:40.2,8000:41.6
        enclab bd-rate --method cubic --anchor 8200:41.2,3900:39.0,1900:36.6,950:34.1 --test 9400:41.0,4500:38.9,2200:36.5,1100:34.0
        enclab bd-rate --metric vmaf --anchor 150:61.2,300:74.5,600:85.1,1200:92.3 --test 140:63.0,280:76.1,560:86.0,1100:92.9
        """

    /// A curve as written on the command line: points separated by commas, each RATE:PSNR with decimal numbers
    /// (digits, one '.', an exponent; spaces around a number are allowed).
    /// - Throws: `.usage` naming the flag, the point's number and text.
    static func points(_ text: String, flag: String) throws -> [Bjontegaard.Point] {
        func decimal(_ s: Substring) -> Double? {
            let t = s.trimmingCharacters(in: .whitespaces)
            guard !t.isEmpty, t.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || ".eE+-".unicodeScalars.contains($0) }) else { return nil }
            return Double(t)
        }
        return try text.split(separator: ",", omittingEmptySubsequences: false).enumerated().map { k, item in
            let parts = item.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let rate = decimal(parts[0]), let psnr = decimal(parts[1]) else {
                throw LabError(.usage, "\(flag): point \(k + 1) '\(item)' is not RATE:PSNR with decimal numbers (e.g. 1800:36.4)")
            }
            return (rate, psnr)
        }
    }

    /// Refuses a curve point whose quality lies outside the metric's scale (``CurveMetric/scoreRange``: VMAF 0...100,
    /// SSIM and MS-SSIM -1...1).
    /// - Throws: `.data` naming the flag, the point's number, its value and the scale.
    static func checkScale(_ points: [Bjontegaard.Point], flag: String, metric: CurveMetric) throws {
        guard let range = metric.scoreRange, let scale = metric.scoreRangeText else { return }
        for (k, p) in points.enumerated() where !range.contains(p.psnr) {
            throw LabError(.data, "\(flag): point \(k + 1) has \(metric.title) \(p.psnr), outside its scale \(scale)")
        }
    }

    /// The two output lines.
    /// - Throws: `.data` for curves ``Bjontegaard`` refuses.
    static func lines(anchor: [Bjontegaard.Point], test: [Bjontegaard.Point], method: Bjontegaard.Method, metric: CurveMetric = .psnr) throws -> [String] {
        let rate = try Bjontegaard.bdRate(anchor: anchor, test: test, method: method, quality: metric.bjontegaard)
        let quality = try Bjontegaard.bdPSNR(anchor: anchor, test: test, method: method, quality: metric.bjontegaard)
        return [String(format: "BD-rate (%@): %.6f %%", method.rawValue, rate),
                String(format: "%@ (%@): %.6f", metric.deltaName, method.rawValue, quality) + metric.unit]
    }

    /// `bd-rate`'s options: the two curves and the interpolation.
    struct Options {
        var anchor: [Bjontegaard.Point]
        var test: [Bjontegaard.Point]
        var method: Bjontegaard.Method
        var metric: CurveMetric
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        try parsed.noOperands(name)
        guard let anchorText = parsed.value("--anchor") else { throw LabError(.usage, "bd-rate needs --anchor RATE:PSNR,...") }
        guard let testText = parsed.value("--test") else { throw LabError(.usage, "bd-rate needs --test RATE:PSNR,...") }
        let methodText = parsed.value("--method") ?? "pchip"
        guard let method = Bjontegaard.Method(rawValue: methodText) else {
            throw LabError(.usage, "--method must be pchip or cubic, got '\(methodText)'")
        }
        let metric = try parsed.value("--metric").map { try CurveMetric($0) } ?? .psnr
        return Options(anchor: try Self.points(anchorText, flag: "--anchor"), test: try Self.points(testText, flag: "--test"), method: method, metric: metric)
    }

    func run(_ o: Options) throws -> Int32 {
        try Self.checkScale(o.anchor, flag: "--anchor", metric: o.metric)
        try Self.checkScale(o.test, flag: "--test", metric: o.metric)
        for line in try Self.lines(anchor: o.anchor, test: o.test, method: o.method, metric: o.metric) { print(line) }
        return 0
    }
}
