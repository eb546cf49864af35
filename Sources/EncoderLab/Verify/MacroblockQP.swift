import Foundation

/// A decoded picture's QP as a decoder shows it: the sum of its macroblocks' QP_Y (libavcodec's AVVideoEncParams
/// `qp` + `delta_qp`) and their number; the picture's QP is their mean.
///
/// x264 prints a frame's QP (`--verbose`, "frame= ... QP=%.2f", encoder.c) from `f_qp_avg_aq`, computed in
/// ratecontrol.c as `(float)rc->qpa_aq / h->mb.i_mb_count`: the integer sum of the macroblocks' QPs divided in single
/// precision, then printed to 2 decimals. A mean whose third decimal is an exact 5 (21.345 = 76842 / 3600 macroblocks
/// of a 1280x720 picture) is then most often printed below it: the float nearest 21.345 is 21.3449993..., printed
/// 21.34, where rounding the exact mean half away from zero gives 21.35.
public struct MacroblockQP: Equatable, Sendable {
    /// The sum of the macroblocks' QPs.
    public let total: Int
    /// The number of macroblocks (blocks of AVVideoEncParams), above 0.
    public let blocks: Int

    public init(total: Int, blocks: Int) {
        self.total = total
        self.blocks = blocks
    }

    /// The mean, in double precision.
    public var mean: Double { Double(total) / Double(blocks) }

    /// The mean to 2 decimals as x264 prints it: the sum and the count converted to float, divided in single
    /// precision (exact conversions for any picture H.264 allows: a sum below 2^24), and that float printed with
    /// `%.2f` (the float's exact binary value rounded to nearest, ties to even: 76842 / 3600 prints 21.34, 171 / 8 =
    /// 21.375 prints 21.38).
    public var x264Rounded: Double {
        let f = Float(total) / Float(blocks)
        return Double(String(format: "%.2f", Double(f))) ?? Double(f)
    }

    /// How far a printed 2-decimal value may lie from the exact mean and still be its rounding by x264: half a
    /// hundredth, plus the float division's error (at most half a float ulp, 2^-19 for a QP in 32...64; 2^-18 is
    /// allowed).
    public static let printedTolerance = 0.005 + 1.0 / 262_144

    /// Whether `printed` (x264's `QP=`, 2 decimals) can be x264's rounding of this mean: |mean - printed| within
    /// ``printedTolerance``. A mean on a tie (21.345) agrees with both neighbours (21.34, 21.35).
    public func agrees(withPrinted printed: Double) -> Bool {
        abs(mean - printed) <= Self.printedTolerance
    }
}
