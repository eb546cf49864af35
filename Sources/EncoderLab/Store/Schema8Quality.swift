import Foundation

/// The perceptual quality part of schema version 8 (docs/schema.md, "Perceptual quality"): what `--metrics` and
/// `enclab measure` store (docs/quality-metrics.md). Written by the run's one transaction
/// (``LabStore/recordRun(_:replacing:beforeCommit:)``) or by `measure`'s, one per run.
extension LabStore {
    /// `frame_quality_metrics`: one row per displayed frame of a run scored with `--metrics`, one column per metric
    /// (NULL where it was not asked for); `run_quality_metrics`: one row per run and metric, pooled.
    static let version8QualityTables = """
    CREATE TABLE IF NOT EXISTS frame_quality_metrics (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        display_index INTEGER NOT NULL CHECK (display_index >= 0),
        vmaf          REAL,
        vmaf_neg      REAL,
        vmaf_4k       REAL,
        psnr_hvs      REAL,
        float_ssim    REAL,
        ms_ssim       REAL,
        ciede2000     REAL,
        xpsnr         REAL,
        PRIMARY KEY (run_id, display_index)
    );
    CREATE TABLE IF NOT EXISTS run_quality_metrics (
        run_id          INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        metric          TEXT NOT NULL CHECK (metric IN ('vmaf', 'vmaf_neg', 'vmaf_4k', 'psnr_hvs', 'float_ssim', 'ms_ssim', 'ciede2000', 'xpsnr')),
        frames          INTEGER NOT NULL CHECK (frames > 0),
        mean            REAL NOT NULL,
        harmonic_mean   REAL NOT NULL,
        low_1pct        REAL NOT NULL,
        low_5pct        REAL NOT NULL,
        model           TEXT,
        libvmaf_version TEXT,
        PRIMARY KEY (run_id, metric)
    );
    """

    /// Writes (or, for metrics scored again, overwrites) a run's perceptual quality inside the caller's transaction:
    /// each frame's row gets the requested metrics' columns (others left as they were, NULL for a new row), and one
    /// pooled row per requested metric replaces the stored one.
    func insertQualityScores(_ runID: Int64, _ scores: QualityScores) throws {
        guard !scores.metrics.isEmpty else { return }
        let columns = scores.metrics.map(\.column)
        let insert = try database.prepare("""
            INSERT INTO frame_quality_metrics (run_id, display_index, \(columns.joined(separator: ", ")))
            VALUES (?, ?\(String(repeating: ", ?", count: columns.count)))
            ON CONFLICT (run_id, display_index) DO UPDATE SET \(columns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """)
        for (k, values) in scores.frames.enumerated() {
            try insert.run([.integer(runID), .integer(Int64(k))] + scores.metrics.map { values[$0].map(SQLValue.real) ?? .null })
        }
        let pooled = try database.prepare("""
            INSERT OR REPLACE INTO run_quality_metrics (run_id, metric, frames, mean, harmonic_mean, low_1pct, low_5pct, model, libvmaf_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for m in scores.metrics {
            guard let p = scores.pool(m) else { continue }
            let count = scores.frames.filter { $0[m] != nil }.count
            try pooled.run([.integer(runID), .text(m.column), .integer(Int64(count)), .real(p.mean), .real(p.harmonicMean),
                            .real(p.low1), .real(p.low5), m.model.map(SQLValue.text) ?? .null,
                            m == .xpsnr ? .null : scores.libvmafVersion.map(SQLValue.text) ?? .null])
        }
    }
}

extension LabStore {
    /// Records a stored run's perceptual quality (`enclab measure`) in one transaction of its own.
    /// A check run (``CheckRuns``: experiment `check`, no run key) has no source clip: refused with `.data`, nothing
    /// written.
    public func recordQuality(runID: Int64, _ scores: QualityScores) throws {
        try database.transaction {
            let check = try database.rows("SELECT run_id FROM runs WHERE run_id = ? AND experiment = ? AND run_key IS NULL",
                                          [.integer(runID), .text(CheckRuns.experiment)])
            guard check.isEmpty else {
                throw LabError.data("run \(runID) is a check run (enclab check --db): it has no source clip, so no quality is stored for it")
            }
            try insertQualityScores(runID, scores)
        }
    }

    /// A run's pooled perceptual quality (`run_quality_metrics`) by metric column, for the console.
    public func pooledQuality(runID: Int64) throws -> [(metric: String, mean: Double, harmonicMean: Double, low1: Double, low5: Double)] {
        try database.rows("""
            SELECT metric, mean, harmonic_mean, low_1pct, low_5pct FROM run_quality_metrics WHERE run_id = ? ORDER BY metric
            """, [.integer(runID)]).map {
            (try $0.text("metric"), try $0.real("mean"), try $0.real("harmonic_mean"), try $0.real("low_1pct"), try $0.real("low_5pct"))
        }
    }
}
