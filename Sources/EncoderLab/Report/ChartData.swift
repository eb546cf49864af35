import Foundation
import H264

/// The data of one group of interactive charts (the charts of a run page, or one clip's overlay on an experiment
/// page): the runs' per-frame columns and the charts drawn from them, written as JSON inside the page
/// (``ChartPage/dataBlock(_:)``) and drawn by dygraphs through the report's own `enclab-charts.js` (``ChartScript``).
///
/// Every chart of a group shares one x column: each frame's decode time (its arrival, the running maximum of the DTS,
/// as the lab's window rule counts it, ``DecodeTimeWindows``) in seconds from its run's first PTS. Overlaid runs share
/// that column: the script merges the runs' frames into one row per x value (a run's frames never share a row), so a
/// row holds at most one frame of each run, and the charts' zoom and hover follow one another (dygraphs' synchronizer).
///
/// Per-frame fields (JSON keys, one array per run, one value per frame in decode order, `null` for NULL):
/// `x` decode time (s, 6 decimals), `c` coded_index, `d` display_index, `t` type (index in ``RunPage/types``), `s`
/// size_bytes, `p` and `q` PTS and DTS in seconds (the stored ticks × timebase, 6 decimals, text exactly as shown),
/// `qp` (2 decimals), `y` `u` `v` `a` psnr_y/u/v/avg (3 decimals), `ss` ssim (6 decimals), `w` the bitrate of the
/// 1-second window starting at the frame (kbit/s; null for a window past the stream's end), `vb` `va` the VBV
/// buffer's fullness before and after the frame's removal (kbit), `ve` 1 for a VBV underflow at the frame, 2 for an
/// overflow, `r0` `r1` the bytes of the window of each DataRateLimits pair's length starting at the frame.
struct ChartGroup {
    /// One run's columns.
    struct Run {
        var runID: Int64
        /// What the legend and the run picker call it (user text: JSON-escaped here, HTML-escaped by the script).
        var name: String
        var colour: String
        /// Shown at first (an overlay's runs not picked by default start hidden).
        var visible = true
        /// Field name to the JSON text of its array.
        var fields: [(name: String, json: String)] = []
    }

    /// One line of a chart.
    struct Series {
        var name: String
        var colour: String
        /// Index of the run in ``ChartGroup/runs`` whose field it draws.
        var run: Int
        var field: String
        /// The field's values multiplied by this (bytes to kbit: 0.008).
        var scale: Double = 1
        /// Only the frames of this type (index in ``RunPage/types``); nil: every frame.
        var type: Int?
        /// Only the frames whose field `whereField` holds `whereValue`.
        var whereField: String?
        var whereValue: Int?
        /// Only the values above this (after `scale`).
        var above: Double?
        /// `line`, `steps`, `points`, `marks` (a bold cross at every point: events that must be seen over stems),
        /// `impulses` (a stem from 0 per frame), `typed` (a line whose points take the colour of their frame's type).
        var style: String = "line"
        /// A marker shape drawn on the line every few points (index in ``ChartGroup/markerShapes``, the shapes of
        /// ``Plots/ConfigurationStyle/pointTypes`` in order); nil: none.
        var marker: Int? = nil
        /// The line's dash pattern in pixels (on, off); nil: solid.
        var dash: [Int]? = nil
        /// Added to the values after `scale`, and where an `impulses` stem starts (an overlay keyframe timeline's
        /// lane); nil: 0.
        var base: Double? = nil
    }

    /// The marker shapes the script draws, in the order of gnuplot's point types of ``Plots/ConfigurationStyle``
    /// (4, 6, 8, 12, 10, 14, 2, 1, 3): open square, open circle, open triangle, open diamond, open inverted
    /// triangle, open pentagon, cross, plus, star.
    static let markerShapes = ["square", "circle", "triangle", "diamond", "inverted-triangle", "pentagon", "cross", "plus", "star"]

    /// A vertical line at `x` (a deadline: where the next keyframe was due), dashed, in the legend by `name`.
    struct Mark {
        var x: Double
        var name: String
        var colour: String
        /// The part of the plot's height the line takes, as fractions from the bottom (0) to the top (1).
        var from: Double = 0
        var to: Double = 1
        /// The run (index in ``ChartGroup/runs``) it belongs to: drawn only while that run is shown; nil: always.
        var run: Int? = nil
    }

    /// A shaded stretch of x (a violation), in the legend by `name`.
    struct Span {
        var from: Double
        var to: Double
        var name: String
        var colour: String
        /// The part of the plot's height it shades, fractions from the bottom (0) to the top (1).
        var bottom: Double = 0
        var top: Double = 1
        /// The run it belongs to (see ``Mark/run``).
        var run: Int? = nil
    }

    /// A horizontal band of a chart given to one run (an overlay's keyframe timeline): a line under it and its name
    /// at its top left in the run's colour (faint while the run is hidden).
    struct Lane {
        var name: String
        var colour: String
        var run: Int
        /// Fractions of the plot's height from the bottom.
        var bottom: Double
        var top: Double
    }

    /// A horizontal line: a limit or a reference (a target, a buffer size).
    struct Limit {
        var name: String
        var value: Double
        var colour: String
        /// The run (index in ``runs``) the line belongs to: drawn, and counted in the y range, while it is shown;
        /// nil: always.
        var run: Int? = nil
    }

    struct Chart {
        /// The id of the chart's element in the page (the report's own word: letters, digits, `-`).
        var id: String
        var yLabel: String
        var series: [Series]
        var limits: [Limit] = []
        /// The y axis starts at 0 and reaches above every limit.
        var fromZero = true
        var height = 280
        /// Decimals of the y axis's labels; nil: dygraphs' choice.
        var digits: Int?
        /// Vertical lines and shaded stretches of x (keyframe deadlines and violations).
        var marks: [Mark] = []
        var spans: [Span] = []
        var lanes: [Lane] = []
        /// A fixed x range (seconds) and y range; nil: the data's (x padded by a few pixels, so the first frame's
        /// stem is not drawn on the y axis).
        var xRange: (Double, Double)? = nil
        var yRange: (Double, Double)? = nil
    }

    var runs: [Run] = []
    var charts: [Chart] = []
    /// The x axis's label.
    var xLabel = "decode time (s) from the run's first PTS"
    /// The group whose run picker (checkboxes) and reset button this group follows (an overlay's keyframe timeline,
    /// a group of its own over PTS, follows its clip's group); nil: its own.
    var follows: String? = nil


    /// The group as JSON, ready to be placed in a `<script type="application/json">` element: `<`, `>`, `&`,
    /// U+2028 and U+2029 are written as `\u` escapes inside strings, and no other place holds text, so the element
    /// cannot be closed early and nothing in it is read as markup or code (the script reads it with `JSON.parse`).
    func json() -> String {
        var out = "{\"xLabel\":\(Self.string(xLabel)),\(follows.map { "\"follows\":\(Self.string($0))," } ?? "")\"types\":[\(RunPage.types.map(Self.string).joined(separator: ","))],"
        out += "\"typeColours\":[\(RunPage.colours.map(Self.string).joined(separator: ","))],\"runs\":["
        out += runs.map { run in
            "{\"id\":\(run.runID),\"name\":\(Self.string(run.name)),\"colour\":\(Self.string(run.colour)),\"visible\":\(run.visible),\"f\":{"
                + run.fields.map { "\(Self.string($0.name)):\($0.json)" }.joined(separator: ",") + "}}"
        }.joined(separator: ",\n")
        out += "],\"charts\":["
        out += charts.map { chart in
            var c = "{\"id\":\(Self.string(chart.id)),\"yLabel\":\(Self.string(chart.yLabel)),\"fromZero\":\(chart.fromZero),\"height\":\(chart.height),"
            if let d = chart.digits { c += "\"digits\":\(d),\"" } else { c += "\"" }
            c += "series\":["
            c += chart.series.map { s in
                var t = "{\"name\":\(Self.string(s.name)),\"colour\":\(Self.string(s.colour)),\"run\":\(s.run),\"field\":\(Self.string(s.field)),\"style\":\(Self.string(s.style))"
                if s.scale != 1 { t += ",\"scale\":\(Self.number(s.scale))" }
                if let k = s.type { t += ",\"type\":\(k)" }
                if let f = s.whereField, let v = s.whereValue { t += ",\"where\":\(Self.string(f)),\"is\":\(v)" }
                if let a = s.above { t += ",\"above\":\(Self.number(a))" }
                if let m = s.marker { t += ",\"marker\":\(Self.string(Self.markerShapes[m % Self.markerShapes.count]))" }
                if let d = s.dash { t += ",\"dash\":\(Self.integers(d))" }
                if let b = s.base { t += ",\"base\":\(Self.number(b))" }
                return t + "}"
            }.joined(separator: ",")
            c += "],\"limits\":["
            c += chart.limits.map { "{\"name\":\(Self.string($0.name)),\"value\":\(Self.number($0.value)),\"colour\":\(Self.string($0.colour))\($0.run.map { ",\"run\":\($0)" } ?? "")}" }.joined(separator: ",")
            c += "],\"marks\":["
            c += chart.marks.map { m in
                "{\"x\":\(Self.number(m.x)),\"name\":\(Self.string(m.name)),\"colour\":\(Self.string(m.colour))"
                    + (m.from == 0 && m.to == 1 ? "" : ",\"from\":\(Self.number(m.from)),\"to\":\(Self.number(m.to))")
                    + (m.run.map { ",\"run\":\($0)" } ?? "") + "}"
            }.joined(separator: ",")
            c += "],\"spans\":["
            c += chart.spans.map { v in
                "{\"from\":\(Self.number(v.from)),\"to\":\(Self.number(v.to)),\"name\":\(Self.string(v.name)),\"colour\":\(Self.string(v.colour))"
                    + (v.bottom == 0 && v.top == 1 ? "" : ",\"bottom\":\(Self.number(v.bottom)),\"top\":\(Self.number(v.top))")
                    + (v.run.map { ",\"run\":\($0)" } ?? "") + "}"
            }.joined(separator: ",")
            c += "]"
            if !chart.lanes.isEmpty {
                c += ",\"lanes\":[" + chart.lanes.map { l in
                    "{\"name\":\(Self.string(l.name)),\"colour\":\(Self.string(l.colour)),\"run\":\(l.run),\"bottom\":\(Self.number(l.bottom)),\"top\":\(Self.number(l.top))}"
                }.joined(separator: ",") + "]"
            }
            if let r = chart.xRange { c += ",\"xRange\":[\(Self.number(r.0)),\(Self.number(r.1))]" }
            if let r = chart.yRange { c += ",\"yRange\":[\(Self.number(r.0)),\(Self.number(r.1))]" }
            return c + "}"
        }.joined(separator: ",\n")
        return out + "]}"
    }

    /// `text` as a JSON string literal that is also safe inside a `<script>` element: the export's JSON string
    /// (``Export/jsonString(_:)``: quotes, backslashes, control characters, U+2028 and U+2029 escaped), with `<`, `>`
    /// and `&` as `\u` escapes (inside a JSON string they can only stand for themselves).
    static func string(_ text: String) -> String {
        Export.jsonString(text).replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: ">", with: "\\u003e").replacingOccurrences(of: "&", with: "\\u0026")
    }

    /// A finite number as JSON (its shortest exact text); `null` for NaN or an infinity.
    static func number(_ value: Double) -> String { value.isFinite ? "\(value)" : "null" }

    /// An array of whole numbers.
    static func integers<S: Sequence>(_ values: S) -> String where S.Element: BinaryInteger {
        "[" + values.map { "\($0)" }.joined(separator: ",") + "]"
    }

    /// An array of numbers with `digits` decimals (C's `%.Nf`, the exact binary value rounded), `null` for nil or a
    /// value that is not finite; trailing zeros are dropped (the script shows `digits` decimals again).
    static func fixed(_ values: [Double?], digits: Int) -> String {
        "[" + values.map { v in
            guard let v, v.isFinite else { return "null" }
            return trimmed(String(format: "%.\(digits)f", v))
        }.joined(separator: ",") + "]"
    }

    /// An array of exact seconds, `ticks × num / den` for each tick count, rounded to 6 decimals (half to even), as
    /// JSON numbers; the stored ticks are whole, so nothing is lost before the rounding.
    static func seconds(_ ticks: [Int64], timebase: Rational) -> String {
        "[" + ticks.map { exactSeconds($0, timebase: timebase) }.joined(separator: ",") + "]"
    }

    /// `ticks × timebase` seconds with 6 decimals, exactly rounded (half to even), trailing zeros dropped.
    static func exactSeconds(_ ticks: Int64, timebase: Rational) -> String {
        // n / d with n = ticks · num · 10^6 (below 2^63 · 2^63 · 2^20 < 2^127 when num < 2^43; wider values fall back).
        let num = Int128(timebase.numerator), den = Int128(timebase.denominator)
        let (scaled, overflow) = Int128(ticks).multipliedReportingOverflow(by: num)
        let (n, overflow2) = scaled.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow && !overflow2 else { return trimmed(String(format: "%.6f", Double(ticks) * timebase.approximateValue)) }
        var (q, r) = n.quotientAndRemainder(dividingBy: den)
        // Round half to even, the remainder's sign that of n.
        let twice = r.magnitude * 2
        if twice > den.magnitude || (twice == den.magnitude && q % 2 != 0) { q += n < 0 ? -1 : 1 }
        r = 0
        let negative = q < 0
        var digits = String(q.magnitude)
        if digits.count < 7 { digits = String(repeating: "0", count: 7 - digits.count) + digits }
        digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -6))
        return trimmed((negative ? "-" : "") + digits)
    }

    /// A decimal text without trailing zeros after its point (and without the point when nothing follows it);
    /// `-0` as `0`.
    static func trimmed(_ text: String) -> String {
        guard text.contains(".") else { return text }
        var t = Substring(text)
        while t.last == "0" { t = t.dropLast() }
        if t.last == "." { t = t.dropLast() }
        return t == "-0" ? "0" : String(t)
    }
}

/// Builds the per-frame columns of one run (``ChartGroup/Run/fields``) from its stored frames and settings.
enum ChartColumns {
    /// The values the run page and the overlays compute once per run.
    struct Derived {
        /// Decode time from the first PTS, seconds, per frame.
        var x: [Double]
        /// Bitrate of the 1-second window starting at each frame, nil past the stream's end.
        var windowKbps: [Double?]
        /// VBV fullness before and after removal (kbit) and events (1 underflow, 2 overflow, 0 none); nil without VBV.
        var vbv: (before: [Double], after: [Double], events: [Int], bufferKbit: Double)?
        /// Bytes in the window of each DataRateLimits pair's length starting at each frame.
        var dataRate: [(pair: DataRateLimits.Pair, bytes: [Int64])]
    }

    /// The derived values of a run: x, windowed bitrate (``WindowedBitrate``, 1 s), the VBV replay (`vbv`, from
    /// ``RunPage/vbvReplay``), the DataRateLimits windows (``DecodeTimeWindows``, every window counted).
    static func derive(_ frames: [LabStore.ChartFrame], timebase: Rational, frameTicks: Rational, vbv: VBVReplay.Result?,
                       limits: [DataRateLimits.Pair]) -> Derived {
        let firstPTS = frames.map(\.pts).min() ?? 0
        let arrival = DecodeTimeWindows.arrivals(frames.map(\.dts))
        let tb = timebase.approximateValue
        let x = arrival.map { ((Double($0 - Int128(firstPTS)) * tb) * 1e6).rounded() / 1e6 }
        let windows = WindowedBitrate.compute(sizes: frames.map(\.sizeBytes), dts: frames.map(\.dts), timebase: timebase, frameTicks: frameTicks)
        var replay: (before: [Double], after: [Double], events: [Int], bufferKbit: Double)?
        if let vbv {
            var events = [Int](repeating: 0, count: frames.count)
            for e in vbv.events {
                switch e {
                case .underflow(let k, _): if events.indices.contains(k) { events[k] = 1 }
                case .overflow(let k, _): if events.indices.contains(k) { events[k] = 2 }
                }
            }
            replay = (vbv.frames.map { $0.fullnessBefore / 1000 }, vbv.frames.map { $0.fullnessAfter / 1000 }, events,
                      Double(vbv.resolved.bufferSizeBits) / 1000)
        }
        let dataRate = limits.map { pair in
            let w = DecodeTimeWindows.windows(dtsTicks: frames.map(\.dts), sizesBytes: frames.map(\.sizeBytes), timebase: timebase,
                                              window: pair.seconds, lastFrameTicks: .zero)
            return (pair, w.map { Int64(clamping: $0.bytes) })
        }
        return Derived(x: x, windowKbps: windows.map { $0.full ? $0.kbps : nil }, vbv: replay, dataRate: dataRate)
    }

    /// The JSON columns of a run (see ``ChartGroup``); fields whose every value is NULL are left out.
    /// The perceptual metrics of which some frame has a value, in the lab's order.
    static func qualityMetrics(_ quality: [Int: [QualityMetric: Double]]) -> [QualityMetric] {
        let present = Set(quality.values.flatMap(\.keys))
        return QualityMetric.allCases.filter(present.contains)
    }

    /// The chart field of a perceptual metric: `m_` and its column (`m_vmaf`), the name the hover legend reads.
    static func qualityField(_ m: QualityMetric) -> String { "m_" + m.column }

    static func fields(_ frames: [LabStore.ChartFrame], derived: Derived, timebase: Rational,
                       quality: [Int: [QualityMetric: Double]] = [:]) -> [(name: String, json: String)] {
        var out: [(name: String, json: String)] = []
        out.append(("x", ChartGroup.fixed(derived.x.map { $0 }, digits: 6)))
        out.append(("c", ChartGroup.integers(frames.map(\.codedIndex))))
        out.append(("d", ChartGroup.integers(frames.map(\.displayIndex))))
        out.append(("t", ChartGroup.integers(frames.map { RunPage.types.firstIndex(of: $0.type) ?? 0 })))
        out.append(("s", ChartGroup.integers(frames.map(\.sizeBytes))))
        out.append(("p", ChartGroup.seconds(frames.map(\.pts), timebase: timebase)))
        out.append(("q", ChartGroup.seconds(frames.map(\.dts), timebase: timebase)))
        for (name, values, digits) in [("qp", frames.map(\.qp), 2), ("y", frames.map(\.psnrY), 3), ("u", frames.map(\.psnrU), 3),
                                       ("v", frames.map(\.psnrV), 3), ("a", frames.map(\.psnrAvg), 3), ("ss", frames.map(\.ssim), 6)]
        where values.contains(where: { $0 != nil }) {
            out.append((name, ChartGroup.fixed(values, digits: digits)))
        }
        // Perceptual metrics (frame_quality_metrics), joined to each frame by its display index, 6 decimals.
        for m in qualityMetrics(quality) {
            out.append((qualityField(m), ChartGroup.fixed(frames.map { quality[$0.displayIndex]?[m] }, digits: 6)))
        }
        out.append(("w", ChartGroup.fixed(derived.windowKbps, digits: 3)))
        if let v = derived.vbv {
            out.append(("vb", ChartGroup.fixed(v.before, digits: 3)))
            out.append(("va", ChartGroup.fixed(v.after, digits: 3)))
            if v.events.contains(where: { $0 != 0 }) { out.append(("ve", ChartGroup.integers(v.events))) }
        }
        for (i, d) in derived.dataRate.enumerated() { out.append(("r\(i)", ChartGroup.integers(d.bytes))) }
        return out
    }
}
