import Foundation
import Testing
@testable import EncoderLab

/// The report's number formatting (``HTML/fixed(_:digits:)``, integer rounding instead of `String(format:)`) against
/// C's printf through Foundation's `String(format: "%.Nf")`, the independent source; and the report object of an
/// experiment file as stored in a run's settings.
@Suite("report: numbers as printf writes them, the report object in stored settings")
struct ReportNumberTests {
    @Test("fixed(_:digits:) writes what %.Nf writes: ties to even on the exact binary value, signs, zeros, tiny and large values")
    func fixedIsPrintf() {
        var values: [Double] = [0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.0625, 0.125, 0.375, 1.0005, 2.675, 1e-300, -1e-300, .leastNonzeroMagnitude,
                                0.0005, 0.00049999999999999999, -0.0004, 123456.789, 9007199254740991, 9007199254740992,
                                1e17, -1e300, 4503599627370495.5, 30.28, 31.80, 32.65, 0.1, 0.2, 0.3, 999.9995, 999.9985]
        // Halves at each precision (exact ties in binary): k / 2^j.
        for k in 0..<200 { for j in 1...12 { values.append(Double(k) / Double(1 << j)); values.append(-Double(k) / Double(1 << j)) } }
        // Seeded spread over magnitudes.
        var state: UInt64 = 0x9E3779B97F4A7C15
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let mantissa = Double(state >> 11) / Double(1 << 53)
            let exponent = Int((state >> 3) % 40) - 20
            values.append((state & 1 == 0 ? 1 : -1) * mantissa * pow(10, Double(exponent)))
        }
        var mismatches: [String] = []
        for v in values {
            for d in 0...4 {
                let expected = String(format: "%.\(d)f", v)
                let got = HTML.fixed(v, digits: d)
                if got != expected && mismatches.count < 10 { mismatches.append("\(v) %.\(d)f: \(got) != \(expected)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(HTML.number(nil) == "" && HTML.number(.nan) == "n/a" && HTML.number(-.infinity) == "n/a")
    }

    @Test("the report object goes into stored settings at its sorted place, every other byte kept; nothing twice")
    func storedReport() throws {
        let settings: [String: Any] = ["axes": ["b": 1], "label": "x \"y\" {z}", "rc": "crf", "resolved": ["rc_method": "crf"], "seek": 0]
        let text = JSON.string(settings)
        let stored = Experiment.Report(anchor: "abr \"q\" é").stored(in: text)
        // The same as serialising the object with the key added (JSONSerialization sorts the keys).
        var withReport = settings
        withReport["report"] = ["anchor": "abr \"q\" é"]
        #expect(stored == JSON.string(withReport))
        #expect(Experiment.Report(anchor: "other").stored(in: stored) == stored)
        #expect(Experiment.Report(anchor: "a").stored(in: "{}") == #"{"report":{"anchor":"a"}}"#)
        #expect(Experiment.Report(anchor: "a").stored(in: #"{"z":1}"#) == #"{"report":{"anchor":"a"},"z":1}"#)
        #expect(Experiment.Report(anchor: "a").stored(in: "not json") == "not json")
    }
}
