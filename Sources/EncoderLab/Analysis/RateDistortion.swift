import Foundation

/// An experiment's rate-distortion points: one point per done run that measured PSNR, one line per clip, rate-control
/// mode and combination of the grid's settings other than the rate. Here the naming of the lines; the points, read from
/// the store as the plot's values, are Plot's (Plot/RateDistortionPoints.swift).
public enum RateDistortion {
    /// The name of the line a run's point belongs to (after its clip): its configuration as the report names it
    /// (``ReportData/configuration(_:)``: the rate-control mode, then the grid's settings other than those that set the
    /// rate, `qp`, `crf`, `bitrate`, `rc` and every `vbv-` key), so that a configuration is one curve, with one colour
    /// and marker, in the run folder's `rd.*` and in the report's `rq-N.*`.
    static func lineName(_ settings: StoredRunSettings) -> String {
        ReportData.configuration(settings)
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
