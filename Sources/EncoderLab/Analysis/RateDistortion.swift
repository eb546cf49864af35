import Foundation

/// An experiment's rate-distortion points, read from the store: one point per done run that measured PSNR, one
/// line per clip, rate-control mode and combination of the grid's settings other than the rate.
public enum RateDistortion {
    /// The grid keys that vary along a line (the rates) or are already its mode (`rc`): left out of a line's name.
    static let lineKeys: Set<String> = ["qp", "crf", "bitrate", "rc"]

    /// The points of `experiment`'s done runs among `runs`, by run_id:
    /// - kbps: `runs.bytes` * 8 / 1000 / `runs.duration_s` (as the lab computes it when the run ends);
    /// - psnr: the mean of the run's `frames.psnr_avg` (the lab's PSNR from its own decode, not x264's report:
    ///   README, "How every run is verified"), summed in decode order, NULLs left out; runs without any (lossless
    ///   `--qp 0`, or no independent decode stored) give no point;
    /// - clip: the file name of `runs.clip`; mode: see ``lineName(_:)``.
    /// - Throws: `.data` naming the run when a done run has no bytes or duration above 0 or its settings are
    ///   not JSON (the caller names the database); the store's errors.
    public static func points(experiment: String, runs: [LabStore.RunRow], store: LabStore) throws -> [Plots.RDPoint] {
        var points: [Plots.RDPoint] = []
        for run in runs.sorted(by: { $0.runID < $1.runID }) where run.experiment == experiment && run.status == "done" {
            guard let bytes = run.bytes, let duration = run.durationSeconds, duration > 0 else {
                throw LabError.data("run \(run.runID): done, but bytes/duration_s are \(run.bytes.map(String.init) ?? "NULL")/\(run.durationSeconds.map { String($0) } ?? "NULL")")
            }
            let psnrs = try store.frames(run: run.runID).compactMap(\.psnrAvg)
            guard !psnrs.isEmpty else { continue }
            let settings = try StoredRunSettings(json: run.settingsJSON, runID: run.runID)
            points.append(Plots.RDPoint(clip: (run.clip as NSString).lastPathComponent, mode: lineName(settings),
                                        kbps: Double(bytes) * 8 / 1000 / duration,
                                        psnr: psnrs.reduce(0, +) / Double(psnrs.count)))
        }
        return points
    }

    /// The name of the line a run's point belongs to (after its clip): its rate-control mode (`rc`, else x264's
    /// `resolved.rc_method`, else "?"), then the grid's other settings as `key=value` words:
    /// - with `axes` (settings version 2): each axis in key order; a scalar as `key=value` unless the key is
    ///   `qp`, `crf`, `bitrate` or `rc`; an object as its own `key=value` words in key order, without those keys
    ///   (an object left empty adds nothing). Words are written as the grid label writes them (a flag given
    ///   `true` as its key alone, whole numbers without a decimal point).
    /// - without `axes` (the previous version): the words of `label` that do not start with `qp=`, `crf=`,
    ///   `bitrate=` or `rc=`.
    /// Both give the same name for the same grid point of an ordinary experiment.
    static func lineName(_ settings: StoredRunSettings) -> String {
        let mode = settings.rc ?? settings.rcMethod ?? "?"
        var words: [String] = []
        if let axes = settings.axes {
            for key in axes.keys.sorted() {
                if let group = axes[key] as? [String: Any] {
                    for k in group.keys.sorted() where !lineKeys.contains(k) { words.append(word(k, group[k]!)) }
                } else if !lineKeys.contains(key) {
                    words.append(word(key, axes[key]!))
                }
            }
        } else {
            words = settings.label.split(separator: " ").map(String.init)
                .filter { word in !lineKeys.contains { word.hasPrefix("\($0)=") } }
        }
        return ([mode] + words).joined(separator: " ")
    }

    /// A grid point's word as the grid label writes it (``Experiment/labelWord(_:_:)``: a flag given `true` as its
    /// key alone); a value that is not a scalar as `key=` and compact JSON.
    static func word(_ key: String, _ value: Any) -> String {
        if value is String || value is NSNumber { return Experiment.labelWord(key, value) }
        return "\(key)=\(JSON.string(value))"
    }

    /// A grid value as the grid label writes it (``Experiment/text(_:)``: `true` as "", a whole number without a
    /// decimal point); any other JSON value (a list, null, a nested object) as compact JSON.
    static func text(_ value: Any) -> String {
        if value is String || value is NSNumber { return Experiment.text(value) ?? "" }
        return JSON.string(value)
    }
}
