import Foundation

extension PlaneErrors {
    /// The squared errors x264's reported PSNRs stand for (``PSNR/sse(decibels:samples:)``, exact for x264's
    /// doubles), for a 4:2:0 picture of `width` × `height` luma samples (both even); all three 0 when x264 reports
    /// no PSNR (it computes none at `--qp 0`, where the lab's decode is lossless). nil when only some planes have one.
    public static func x264(psnrY: Double?, psnrU: Double?, psnrV: Double?, width: Int, height: Int) -> PlaneErrors? {
        let luma = width * height
        switch (psnrY, psnrU, psnrV) {
        case (nil, nil, nil):
            return PlaneErrors(sseY: 0, sseU: 0, sseV: 0)
        case let (y?, u?, v?):
            return PlaneErrors(sseY: PSNR.sse(decibels: y, samples: luma), sseU: PSNR.sse(decibels: u, samples: luma / 4),
                               sseV: PSNR.sse(decibels: v, samples: luma / 4))
        default:
            return nil
        }
    }
}

/// One frame's quality as the `frames` table stores it: the lab's own squared error per plane (`sse_*`, from
/// FFmpeg's decode of the written stream against the source), the PSNRs derived from it (`psnr_*`), and whether
/// x264's own report (`x264_psnr_*`) disagrees (`x264_psnr_differs`). docs/verification.md, "How every run is verified".
public struct FrameQuality: Equatable, Sendable {
    /// The lab's squared error per plane: the decoded picture against the (cropped) source.
    public var errors: PlaneErrors
    /// ``PSNR/picture(_:width:height:)`` of `errors`: nil per plane where the error is 0.
    public var psnr: PSNR.Picture
    /// x264's reported PSNRs of the frame, in dB (nil where it reported none).
    public var x264: PSNR.Picture
    /// True when the squared errors x264's PSNRs stand for (``PlaneErrors/x264(psnrY:psnrU:psnrV:width:height:)``)
    /// differ from `errors` in any plane.
    public var x264Differs: Bool

    /// Measures one frame: `errors` from the independent decode, `x264` as x264 reported it, for a picture of
    /// `width` × `height` luma samples (both even).
    public init(errors: PlaneErrors, x264: PSNR.Picture, width: Int, height: Int) {
        self.errors = errors
        self.psnr = PSNR.picture(errors, width: width, height: height)
        self.x264 = x264
        x264Differs = PlaneErrors.x264(psnrY: x264.y, psnrU: x264.u, psnrV: x264.v, width: width, height: height) != errors
    }

    /// An unverified frame's quality (`--verify none`): no decode, so `errors` are those x264's PSNRs stand for
    /// (``PlaneErrors/x264(psnrY:psnrU:psnrV:width:height:)``, all 0 when it reported none), `psnr` is x264's report
    /// itself, and `x264Differs` is false by construction (nothing was compared).
    public init(reported x264: PSNR.Picture, width: Int, height: Int) {
        errors = PlaneErrors.x264(psnrY: x264.y, psnrU: x264.u, psnrV: x264.v, width: width, height: height)
            ?? PlaneErrors(sseY: 0, sseU: 0, sseV: 0)
        psnr = x264
        self.x264 = x264
        x264Differs = false
    }

    /// The largest |x264's PSNR − the lab's| over Y, U, V and avg where both are numbers, in dB, with the
    /// column it is in (`psnr_u`); nil when no column has both.
    public var largestDifference: (column: String, decibels: Double)? {
        let pairs: [(String, Double?, Double?)] = [("psnr_y", x264.y, psnr.y), ("psnr_u", x264.u, psnr.u),
                                                   ("psnr_v", x264.v, psnr.v), ("psnr_avg", x264.avg, psnr.avg)]
        var best: (column: String, decibels: Double)?
        for case let (column, a?, b?) in pairs where abs(a - b) > (best?.decibels ?? -1) {
            best = (column, abs(a - b))
        }
        return best
    }

    /// Each frame's quality, in the order of `frames`: its errors are those of the `stream` decode (``DecodedFrame``)
    /// of the frame's display index; nil for a frame without one (no independent decode given).
    /// - Parameter width, height: the encoded picture size in luma samples (both even).
    /// With `unverified` (a run with `--verify none`, which has no decode), every frame gets
    /// ``init(reported:width:height:)``: x264's PSNRs as its own. With `encoderReportsPSNR` false (OpenH264, which
    /// reports none) nothing is compared: `x264Differs` is false; unverified too, no frame has a quality (nil).
    public static func measure(frames: [EncodedFrame], decoded: [DecodedFrame], width: Int,
                               height: Int, unverified: Bool = false, encoderReportsPSNR: Bool = true) -> [FrameQuality?] {
        // Unverified and no report of the encoder's own (OpenH264 with --verify none): nothing measured at all.
        if unverified && !encoderReportsPSNR { return frames.map { _ in nil } }
        if unverified {
            return frames.map {
                FrameQuality(reported: PSNR.Picture(y: $0.psnrY, u: $0.psnrU, v: $0.psnrV, avg: $0.psnrAvg), width: width, height: height)
            }
        }
        var errors: [Int: PlaneErrors] = [:]
        for d in decoded where d.source == "stream" { errors[d.displayIndex] = d.errors }
        return frames.map { f in
            errors[f.displayIndex].map {
                var q = FrameQuality(errors: $0, x264: PSNR.Picture(y: f.psnrY, u: f.psnrU, v: f.psnrV, avg: f.psnrAvg),
                                     width: width, height: height)
                if !encoderReportsPSNR { q.x264Differs = false }
                return q
            }
        }
    }

    /// The run's warning when x264's PSNR differs from the lab's for any frame, else nil: how many frames differ,
    /// which (by display index, the first 8), and the largest difference in dB with its column and frame, e.g.
    /// "stream.264: x264's PSNR differs from the lab's (FFmpeg's decode of the stream against the source) in 4 of 4
    /// frames (display 0, 1, 2, 3), by up to 0.116 dB (psnr_v of display frame 0: x264 43.173, lab 43.289);
    /// frames.psnr_* hold the lab's values, x264's are in frames.x264_psnr_* (x264_psnr_differs = 1)".
    /// - Parameter measured: pairs of a frame's display index and its quality, in decode order.
    public static func warning(_ measured: [(displayIndex: Int, quality: FrameQuality)]) -> String? {
        let differing = measured.filter(\.quality.x264Differs)
        guard !differing.isEmpty else { return nil }
        let shown = differing.map(\.displayIndex).sorted()
        let list = shown.prefix(8).map(String.init).joined(separator: ", ") + (shown.count > 8 ? ", ..." : "")
        var largest: (frame: Int, column: String, decibels: Double, x264: Double, lab: Double)?
        for (index, q) in differing {
            guard let d = q.largestDifference, d.decibels > (largest?.decibels ?? -1) else { continue }
            let pick: (PSNR.Picture) -> Double? = {
                switch d.column { case "psnr_y": $0.y; case "psnr_u": $0.u; case "psnr_v": $0.v; default: $0.avg }
            }
            largest = (index, d.column, d.decibels, pick(q.x264) ?? .nan, pick(q.psnr) ?? .nan)
        }
        let by = largest.map {
            String(format: ", by up to %.3f dB (%@ of display frame %d: x264 %.3f, lab %.3f)", $0.decibels, $0.column, $0.frame, $0.x264, $0.lab)
        } ?? ""
        return "stream.264: x264's PSNR differs from the lab's (FFmpeg's decode of the stream against the source) in "
            + "\(differing.count) of \(measured.count) frames (display \(list))\(by); frames.psnr_* hold the lab's values, "
            + "x264's are in frames.x264_psnr_* (x264_psnr_differs = 1)"
    }
}
