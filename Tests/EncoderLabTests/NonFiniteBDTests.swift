import Foundation
import Testing
@testable import EncoderLab

/// Bjøntegaard deltas that would not be finite doubles: refused by the library (`.data`), so the report's BD table
/// shows the refusal text in the cell, never a number made of nan.
@Suite("BD deltas that are not finite are refused, in the library and in the report's table")
struct NonFiniteBDTests {
    static let huge: [Bjontegaard.Point] = [(1000, 1e300), (1800, 1e301), (3500, 1e302), (7000, 1e308)]
    static let tiny: [Bjontegaard.Point] = [(1000, 0), (1800, 1e-300), (3500, 2e-300), (7000, 3e-300)]

    @Test("BD-rate of curves at a double's limits throws .data, for either method where the arithmetic overflows")
    func library() throws {
        for curve in [Self.huge, Self.tiny] {
            #expect(throws: LabError.self) { try Bjontegaard.bdRate(anchor: curve, test: curve, method: .pchip) }
            do {
                let value = try Bjontegaard.bdRate(anchor: curve, test: curve, method: .pchip)
                Issue.record("BD-rate \(value) returned")
            } catch let error as LabError {
                #expect(error.kind == .data && error.message.contains("not a finite number"), "\(error.message)")
            }
            // Whatever either method returns is a finite number; what it cannot compute it refuses.
            for method in Bjontegaard.Method.allCases {
                for f in [{ try Bjontegaard.bdRate(anchor: curve, test: curve, method: method) },
                          { try Bjontegaard.bdPSNR(anchor: curve, test: curve, method: method) }] {
                    if let value = try? f() { #expect(value.isFinite, "\(method): \(value)") }
                }
            }
        }
    }

    @Test("the report's BD table shows the refusal in the cell (class 'refused'), no 'nan' and no 'n/a'")
    func reportTable() throws {
        let points = Self.huge.enumerated().map { (rate: $1.rate, psnr: $1.psnr, runID: Int64($0 + 1)) }
        let anchor = Report.Curve(clip: "c.y4m", configuration: "crf", points: points)
        let other = Report.Curve(clip: "c.y4m", configuration: "abr", points: points.map { ($0.rate, $0.psnr, $0.runID + 4) })
        let html = Report.bdTable([anchor, other], anchor: "crf")
        #expect(html.contains("<span class=\"refused\">Bjontegaard (pchip): "), "\(html)")
        #expect(!html.contains("nan") && !html.contains("n/a"), "\(html)")
    }
}
