import Foundation
import H264

/// The store's queries for the report's interactive charts (``ChartPage``): a run's frames with every per-frame value
/// a chart shows or its hover lists, and the DataRateLimits pairs the run was checked against.
extension LabStore {
    /// One frame as the charts read it (`frames`, decode order); NULL as nil.
    struct ChartFrame: Sendable, Equatable {
        init(codedIndex: Int, displayIndex: Int, type: String, sizeBytes: Int, pts: Int64, dts: Int64, qp: Double?, psnrY: Double?,
             psnrU: Double?, psnrV: Double?, psnrAvg: Double?, ssim: Double?) {
            self.codedIndex = codedIndex; self.displayIndex = displayIndex; self.type = type; self.sizeBytes = sizeBytes
            self.pts = pts; self.dts = dts; self.qp = qp; self.psnrY = psnrY; self.psnrU = psnrU; self.psnrV = psnrV
            self.psnrAvg = psnrAvg; self.ssim = ssim
        }

        /// The chart's fields of a report frame row.
        init(_ f: ReportFrame) {
            self.init(codedIndex: f.codedIndex, displayIndex: f.displayIndex, type: f.type, sizeBytes: f.sizeBytes, pts: f.pts, dts: f.dts,
                      qp: f.qp, psnrY: f.psnrY, psnrU: f.psnrU, psnrV: f.psnrV, psnrAvg: f.psnrAvg, ssim: f.ssim)
        }

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

    /// A run's perceptual quality per frame for the charts (`frame_quality_metrics`, `--metrics`), by display index
    /// and metric; NULL and values that are not finite left out; empty without the table or rows.
    func chartQuality(run runID: Int64) throws -> [Int: [QualityMetric: Double]] {
        guard try reportHasTable("frame_quality_metrics") else { return [:] }
        let metrics = QualityMetric.allCases
        var out: [Int: [QualityMetric: Double]] = [:]
        for row in try database.query("SELECT display_index, \(metrics.map(\.column).joined(separator: ", ")) FROM frame_quality_metrics WHERE run_id = ?",
                                      [.integer(runID)]) {
            guard let index = row[0].int else { continue }
            var values: [QualityMetric: Double] = [:]
            for (k, m) in metrics.enumerated() { if let v = row[k + 1].double, v.isFinite { values[m] = v } }
            if !values.isEmpty { out[Int(index)] = values }
        }
        return out
    }

    /// A run's frames for the charts, in decode order: the rows of ``reportFrames(run:)`` (one query for both).
    /// - Throws: `.data` naming the run and frame for a NOT NULL column holding NULL or a value that is not a number.
    func chartFrames(run runID: Int64) throws -> [ChartFrame] {
        try reportFrames(run: runID).map(ChartFrame.init)
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
