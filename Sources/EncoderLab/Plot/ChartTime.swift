import Foundation
import H264

/// Time as the lab's charts draw it: seconds from the run's first (smallest) PTS, computed exactly from ticks, so a
/// stream whose PTS start at host uptime (`--pts-offset 1000000000000` µs) has axes from 0 s, never tic labels of
/// `1e+06`; the offset is said once, in the chart's title (``title``).
public struct ChartTime: Sendable {
    /// The smallest PTS of the run, in ticks: 0 s on the charts.
    public var originTicks: Int64
    /// Seconds per tick.
    public var timebase: Rational

    /// The gnuplot line every time axis gets: plain decimals (a run would have to last 11 days to reach 10^6 s).
    public static let axisFormat = "set format x '%.7g'"

    public init(pts: [Int64], timebase: Rational) {
        self.originTicks = pts.min() ?? 0
        self.timebase = timebase
    }

    /// Seconds from the first PTS to `ticks`: (ticks − origin) × timebase, exact in 128 bits, then rounded once to a Double.
    public func seconds(_ ticks: Int64) -> Double {
        let product = (Int128(ticks) - Int128(originTicks)) * Int128(timebase.numerator)
        let den = Int128(timebase.denominator)
        let whole = product / den, rest = product % den
        return Double(whole) + Double(rest) / Double(den)
    }

    /// The chart title naming where 0 s is: "" when the first PTS is 0, else "0 s = first PTS, N ticks of T s (S s)".
    public var title: String {
        guard originTicks != 0 else { return "" }
        let s = (try? timebase.times(originTicks))
        let shown = s.map { d in let (text, exact) = ChartTime.decimal(d); return exact ? text : "about \(text)" }
            ?? "about \(Double(originTicks) * timebase.approximateValue)"
        return "0 s = the first PTS, \(originTicks) ticks of \(timebase) s (\(shown) s)"
    }

    /// `set title '...'` for ``title`` (the lab's own digits and words: no user text), or "" when the first PTS is 0.
    public var titleLine: String { title.isEmpty ? "" : "set title '\(title)'" }

    /// An exact rational as a decimal: whole, or to 6 decimals (truncated), and whether that is the exact value.
    public static func decimal(_ r: Rational) -> (text: String, exact: Bool) {
        let n = Int128(r.numerator), d = Int128(r.denominator)
        if n % d == 0 { return (String(n / d), true) }
        let scaled = n * 1_000_000
        let q = scaled / d
        let exact = scaled % d == 0
        let sign = n < 0 ? "-" : ""
        let m = q < 0 ? -q : q
        var fraction = String(m % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return ("\(sign)\(m / 1_000_000).\(fraction)", exact)
    }

    /// The PTS steps between frames in display order and the DTS steps in decode order, in ticks: exact integer
    /// differences (no seconds subtracted in floating point), with each step's exact length in ms as a fraction.
    /// `timestamps.dat`: `index pts_step_ticks dts_step_ticks pts_step_ms dts_step_ms`, row i the step from frame i − 1
    /// to frame i (ms as ``decimal(_:)`` writes them, to 6 decimals: the ticks are the exact value).
    /// - Parameters: `displayPTS` the PTS in display order; `decodeDTS` the DTS in decode order (same count).
    public func stepData(displayPTS: [Int64], decodeDTS: [Int64]) -> (data: String, steps: [Int64]) {
        var data = "# index pts_step_ticks(display order) dts_step_ticks(decode order) pts_step_ms dts_step_ms; one tick = \(timebase) s\n"
        var steps: [Int64] = []
        let ms = (try? timebase.times(1000)) ?? timebase
        func inMs(_ t: Int64) -> String {
            let v = (try? ms.times(t)).map { Self.decimal($0).text }
            return v ?? String(Double(t) * timebase.approximateValue * 1000)
        }
        for i in 1..<max(1, min(displayPTS.count, decodeDTS.count)) {
            let p = Int64(clamping: Int128(displayPTS[i]) - Int128(displayPTS[i - 1]))
            let d = Int64(clamping: Int128(decodeDTS[i]) - Int128(decodeDTS[i - 1]))
            steps += [p, d]
            data += "\(i) \(p) \(d) \(inMs(p)) \(inMs(d))\n"
        }
        return (data, steps)
    }

    /// The y axis of a step chart in ticks: when there are at most 8 distinct steps, a tic at each, labelled with its
    /// ticks and its exact length in ms (`3003 (1001/30 ms)`), the range one step beyond them; otherwise whole tics.
    public func stepAxis(_ steps: [Int64]) -> String {
        let distinct = Array(Set(steps)).sorted()
        guard let low = distinct.first, let high = distinct.last else { return "" }
        let unit = "set ylabel 'step (ticks of \(timebase) s)'"
        guard distinct.count <= 8 else { return "\(unit)\nset format y '%.0f'" }
        let pad = max(1, (high - low) / 4)
        let tics = distinct.map { t -> String in
            let ms = (try? timebase.times(1000)).flatMap { try? $0.times(t) }
            let label = ms.map { m -> String in
                let (text, exact) = Self.decimal(m)
                return m.denominator == 1 ? "\(m.numerator) ms" : "\(m.numerator)/\(m.denominator) ms \(exact ? "=" : "≈") \(text) ms"
            } ?? ""
            return "'\(t) (\(label))' \(t)"
        }
        return "\(unit)\nset yrange [\(low - pad):\(high + pad)]\nset ytics (\(tics.joined(separator: ", ")))"
    }
}
