import Foundation

/// ``RateDistortion``'s points as the plots draw them (``Plots/RDPoint``), read from the store through the run
/// metrics' typed queries (``RunMetrics/stored(database:runID:shownPath:)``).
extension RateDistortion {
    /// The points of `experiment`'s done runs among `runs`, by run_id, from the run metrics (``RunMetrics``: the
    /// run's `run_metrics` row, or computed from its frames when it has none, as `enclab compare` reads them):
    /// - kbps: `run_metrics.bitrate_kbps` (all bytes over the PTS span plus the last frame's duration);
    /// - psnr: the chart's `metric`, by default `run_metrics.psnr_global` (PSNR of the squared error pooled over all
    ///   samples, from the lab's own decode); runs without it (lossless `--qp 0`, no squared errors stored) give no point;
    /// - clip: the file name of `runs.clip`; mode: the run's configuration as the report names it (``lineName(_:)``);
    /// - unverified: `run_metrics.psnr_source` is `x264` (a run encoded with `--verify none`).
    /// - Throws: `.data` naming the run when its settings are not JSON or a stored metric is damaged (the caller names
    ///   the database); the store's errors.
    public static func points(experiment: String, runs: [LabStore.RunRow], store: LabStore,
                              metric: Plots.QualityMetric = .psnrGlobal) throws -> [Plots.RDPoint] {
        var points: [Plots.RDPoint] = []
        // The lines are named within the experiment, as the report names them (``ReportData/configurations(_:)``).
        let all = runs.filter { $0.experiment == experiment }
        let names = ReportData.configurations(all.map { try? StoredRunSettings(json: $0.settingsJSON, runID: $0.runID) })
        let nameOf = Dictionary(zip(all.map(\.runID), names)) { a, _ in a }
        for run in runs.sorted(by: { $0.runID < $1.runID }) where run.experiment == experiment && run.status == "done" {
            let metrics = try RunMetrics.stored(database: store.database, runID: run.runID, shownPath: store.database.path)
            guard let kbps = metrics["bitrate_kbps"]?.double, kbps > 0, kbps.isFinite,
                  let value = metrics[metric.rawValue]?.double, value.isFinite else { continue }
            let settings = try StoredRunSettings(json: run.settingsJSON, runID: run.runID)
            points.append(Plots.RDPoint(clip: Paths.fileName(run.clip), mode: (nameOf[run.runID] ?? nil) ?? lineName(settings), kbps: kbps, psnr: value,
                                        runID: run.runID, unverified: metrics["psnr_source"]?.string == "x264"))
        }
        return points
    }
}
