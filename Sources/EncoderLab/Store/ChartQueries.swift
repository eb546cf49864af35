import Foundation
import H264

/// The store's queries for the report's interactive charts (``ChartPage``): a run's frames with every per-frame value
/// a chart shows or its hover lists, and the DataRateLimits pairs the run was checked against.
extension LabStore {
    /// One frame as the charts read it (`frames`, decode order); NULL as nil.
    struct ChartFrame: Sendable, Equatable {
        var codedIndex: Int
        var displayIndex: Int
        /// `frames.type`: IDR, I, P, Bref or B.
        var type: String
        var sizeBytes: Int
        var pts: Int64
        var dts: Int64
        /// The frame's average QP (x264's report; NULL for a stream recorded by `enclab check`).
        var qp: Double?
        /// PSNR per plane and of the three planes' pooled squared error, in dB (the lab's decode; NULL without one).
        var psnrY: Double?
        var psnrU: Double?
        var psnrV: Double?
        var psnrAvg: Double?
        /// x264's SSIM of the frame (0 ... 1); NULL unless measured.
        var ssim: Double?
    }

    /// A run's frames for the charts, in decode order.
    /// - Throws: `.data` naming the run and frame for a NOT NULL column holding NULL or a value that is not a number.
    func chartFrames(run runID: Int64) throws -> [ChartFrame] {
        try database.rows("""
            SELECT coded_index, display_index, type, size_bytes, pts, dts, qp, psnr_y, psnr_u, psnr_v, psnr_avg, ssim
            FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).enumerated().map { k, row in
            let r = row.at("run \(runID), frame \(k) in coded order")
            return ChartFrame(codedIndex: Int(try r.integer("coded_index")), displayIndex: Int(try r.integer("display_index")),
                              type: try r.text("type"), sizeBytes: Int(try r.integer("size_bytes")), pts: try r.integer("pts"),
                              dts: try r.integer("dts"), qp: try r.optionalNumber("qp"), psnrY: try r.optionalNumber("psnr_y"),
                              psnrU: try r.optionalNumber("psnr_u"), psnrV: try r.optionalNumber("psnr_v"),
                              psnrAvg: try r.optionalNumber("psnr_avg"), ssim: try r.optionalNumber("ssim"))
        }
    }

    /// The DataRateLimits pairs a run was checked against (`data_rate_windows`, in pair order): bytes and exact seconds.
    /// Empty for a run without limits or a database without that table. A row whose seconds are not a rational above
    /// 0 or whose bytes are not above 0 is left out (the chart cannot draw it; `enclab check` names such rows).
    func dataRateLimits(run runID: Int64) throws -> [DataRateLimits.Pair] {
        let table = try database.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'data_rate_windows'")
        guard !table.isEmpty else { return [] }
        var pairs: [(bytes: Int64, seconds: Rational)] = []
        for values in try database.query("SELECT bytes, seconds FROM data_rate_windows WHERE run_id = ? ORDER BY pair", [.integer(runID)]) {
            guard let bytes = values[0].int, bytes > 0, let text = values[1].string, let seconds = Rational(parsing: text), seconds > .zero else { continue }
            pairs.append((bytes, seconds))
        }
        return (try? DataRateLimits(pairs: pairs))?.pairs ?? []
    }
}
