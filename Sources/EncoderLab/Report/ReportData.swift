import Foundation
import H264

/// What the report reads from the store: the runs, their metrics (table `run_metrics` when the database has it,
/// else the few numbers the curves need, computed from `frames`), and each run's configuration.
struct ReportData {
    /// The columns of `run_metrics` shown first when present, in this order; the rest follow in the table's order.
    static let leadingMetrics = ["bitrate_kbps", "target_error_pct", "psnr_global", "ssim_db"]

    /// The grid keys that set the rate, left out of a configuration's name (the rate varies along its curve): `qp`,
    /// `crf`, `bitrate`, OpenH264's `iTargetBitrate` and `iMaxBitrate`, and every key starting with `vbv-` (or
    /// `vbv_`); `rc` is the configuration's first word.
    static func isRateKey(_ key: String) -> Bool {
        ["qp", "crf", "bitrate", "rc", "iTargetBitrate", "iMaxBitrate"].contains(key) || key.hasPrefix("vbv-") || key.hasPrefix("vbv_")
    }

    /// One run as the report shows it.
    struct Run {
        var row: LabStore.RunRow
        /// The file name of `runs.clip`.
        var clipName: String
        /// The grid label (`settings.label`), or the x264 flags when it has none.
        var label: String
        /// Rate-control mode, then the grid's settings other than the rate (``configuration(_:)``).
        var configuration: String
        /// Metric name to value (NULL as nil), in ``ReportData/metricColumns`` order.
        var metrics: [String: Double?]
        /// The text values of its text metric columns (`psnr_weighting`: "frame" or "duration"), by name; NULL absent.
        var metricTexts: [String: String] = [:]
        /// Bitrate in kbit/s and PSNR in dB for the curves (`run_metrics.bitrate_kbps` and `psnr_global`, or computed
        /// from `frames`); nil when the run has none.
        var kbps: Double?
        var psnr: Double?
        /// Its perceptual quality (`run_quality_metrics.mean`, `--metrics` or `enclab measure`), by metric; empty
        /// when none was scored.
        var quality: [QualityMetric: Double] = [:]
        /// The run's value on `metric` for the curves: ``psnr`` or the metric's mean; nil when it has none.
        func value(_ metric: CurveMetric) -> Double? {
            switch metric {
            case .psnr: psnr
            case .quality(let m): quality[m]
            }
        }
        /// Encoded with `--verify none`: `run_metrics.psnr_source` is `x264`, or (without that row) the stored
        /// settings' `$.resolved.verify` is `none`. Its PSNR is x264's own report, not the lab's decode.
        var unverified = false
        /// The rate-control mode as the settings give it (`rc`, else x264's `resolved.rc_method`; an OpenH264 run's
        /// `iRCMode` in OpenH264's terms, ``StoredRunSettings/openh264RCMode``; "" without settings).
        var mode = ""
        /// The encoder that made the run (`settings.encoder.name`, x264 when none is stored).
        var encoder = EncoderName.x264.rawValue
        /// Its VideoToolbox rule results (``LabStore/ReportRules``); nil when it has none stored.
        var rules: LabStore.ReportRules?
        /// Input PTS that repeat or go back (`timestamp_analysis.non_increasing_input_pts`), 0 when none or not stored.
        var nonIncreasingInputPTS: Int64 = 0
        /// Pictures the encoder dropped (`skipped_frames` rows: OpenH264's frame skip), 0 when none or not stored.
        var skippedFrames: Int64 = 0
        /// Frames identical to their source pictures in the lab's decode (SSE 0 in every plane), 0 when none.
        var identicalFrames: Int64 = 0
        /// Every frame identical to its source (a lossless encode): PSNR, PSNR-HVS, CIEDE2000 and XPSNR have no finite
        /// value on it.
        var lossless: Bool { identicalFrames > 0 && row.frames.map { Int64($0) == identicalFrames } ?? false }
        /// The run's `rtp_runs` row (its RTP stage, schema 9), column name to value; nil without the stage.
        var rtp: [String: SQLValue]?
        /// Whether it was recorded by `enclab check --db` (experiment ``RuleCheck/experiment``, no run key).
        var isCheck: Bool { row.experiment == CheckRuns.experiment && row.runKey == nil }
        /// The rate it was asked for, kbit/s (`run_metrics.target_kbps`).
        var target: Double? { metrics["target_kbps"] ?? nil }
    }

    var runs: [Run]
    /// Whether the database has `run_metrics` (schema v6, written by `enclab analyze`).
    var hasMetricsTable: Bool
    /// The metric columns shown, in order: ``leadingMetrics`` present first, then the others; without `run_metrics`
    /// the computed `bitrate_kbps`, `psnr_global`, `psnr_y_pooled`. `psnr_source` (text) is left out: the runs
    /// table shows it as its own column (``Run/unverified``).
    var metricColumns: [String]
    /// Per experiment, the anchor its experiment file gave (`report.anchor`, docs/runs.md, "Experiment files") as stored in the
    /// settings of its most recent run (the highest run id; none when that run's settings have no `report.anchor`),
    /// with that run's id.
    var fileAnchors: [String: (runID: Int64, anchor: String)] = [:]
    /// Some run read has an RTP stage (`rtp_runs`): the runs table offers its columns.
    var hasRTP = false

    /// Reads every run of `store` (``experiments`` nil) or of the named experiments.
    /// - Throws: `.data` for a stored row the report cannot read (settings that are not JSON, a damaged frame, a
    ///   `run_metrics` value of the runs read that is text or out of range, ``checkMetric(_:column:runID:database:)``),
    ///   the store's errors.
    init(store: LabStore, experiments: Set<String>?) throws {
        let rows = try store.runs().filter { experiments?.contains($0.experiment) ?? true }
        hasMetricsTable = try store.reportHasTable("run_metrics")
        var byRun: [Int64: [String: Double?]] = [:]
        var textsByRun: [Int64: [String: String]] = [:]
        var x264PSNR: Set<Int64> = []
        if hasMetricsTable {
            let (columns, hasSource) = try store.reportMetricsColumns()
            metricColumns = Self.leadingMetrics.filter(columns.contains) + columns.filter { !Self.leadingMetrics.contains($0) }
            let selected = Set(rows.map(\.runID))
            let numeric = Dictionary(LabStore.runMetricsColumns.map { ($0.name, $0.type.hasPrefix("REAL") || $0.type.hasPrefix("INTEGER")) }) { a, _ in a }
            for values in try store.reportMetricsRows(columns: columns, hasSource: hasSource) {
                guard let id = values.runID else { continue }
                var metrics: [String: Double?] = [:]
                metrics.reserveCapacity(columns.count)
                for (k, c) in columns.enumerated() {
                    if selected.contains(id), numeric[c] == true { try Self.checkMetric(values.values[k], column: c, runID: id, database: store.database.path) }
                    metrics[c] = values.values[k].double
                    if numeric[c] != true, let text = values.values[k].string { textsByRun[id, default: [:]][c] = text }
                }
                byRun[id] = metrics
                if values.psnrSource == "x264" { x264PSNR.insert(id) }
            }
        } else {
            metricColumns = ["bitrate_kbps", "psnr_global", "psnr_y_pooled"]
        }
        let brief = try store.reportSettingsBriefs()
        let rules = try store.reportRules()
        let nonIncreasing = try store.reportNonIncreasingInputPTS()
        let skipped = try store.reportSkippedCounts()
        let identical = try store.reportIdenticalFrameCounts()
        let qualityMeans = try store.reportQualityMeans()
        let rtpRuns = try store.reportRTPRuns()
        hasRTP = rows.contains { rtpRuns[$0.runID] != nil }
        var runs: [Run] = []
        runs.reserveCapacity(rows.count)
        let allSettings = rows.map { try? StoredRunSettings(json: brief[$0.runID] ?? "", runID: $0.runID) }
        // Configurations are named within their experiment (``configurations(_:)``).
        var configurationOf: [Int64: String] = [:]
        for indexes in Dictionary(grouping: rows.indices, by: { rows[$0].experiment }).values {
            for (k, name) in zip(indexes, Self.configurations(indexes.map { allSettings[$0] })) { configurationOf[rows[k].runID] = name }
        }
        for (row, settings) in zip(rows, allSettings) {
            try Interruption.check()
            let label = settings.map { $0.label.isEmpty ? $0.x264Arguments : $0.label } ?? ""
            // A run of `enclab check --db` has no encoder settings: its configuration is `check` and the limits it was
            // checked against (its label), not x264's "unknown" rate control.
            let isCheck = row.experiment == CheckRuns.experiment && row.runKey == nil
            var run = Run(row: row, clipName: Paths.fileName(row.clip), label: label,
                          configuration: isCheck ? (label.isEmpty ? "check" : "check \(label)") : configurationOf[row.runID] ?? "?", metrics: [:])
            run.unverified = x264PSNR.contains(row.runID) || (settings?.resolved?["verify"] as? String) == "none"
            run.mode = settings.map { $0.openh264RCMode ?? $0.rc ?? $0.rcMethod ?? "" } ?? ""
            run.encoder = settings?.encoder ?? EncoderName.x264.rawValue
            run.rules = rules[row.runID]
            run.nonIncreasingInputPTS = nonIncreasing[row.runID] ?? 0
            run.skippedFrames = skipped[row.runID] ?? 0
            run.identicalFrames = identical[row.runID] ?? 0
            if row.status == "done" { run.quality = qualityMeans[row.runID] ?? [:] }
            run.rtp = rtpRuns[row.runID]
            if row.status == "done" {
                if let m = byRun[row.runID] {
                    run.metrics = m
                    run.metricTexts = textsByRun[row.runID] ?? [:]
                    run.kbps = m["bitrate_kbps"] ?? nil
                    run.psnr = m["psnr_global"] ?? nil
                } else if !hasMetricsTable {
                    let computed = try Self.computed(row, store: store)
                    run.metrics = computed
                    run.kbps = computed["bitrate_kbps"] ?? nil
                    run.psnr = computed["psnr_global"] ?? nil
                }
            }
            runs.append(run)
        }
        self.runs = runs
        var latest: [String: LabStore.RunRow] = [:]
        for row in rows where row.runID > latest[row.experiment]?.runID ?? .min { latest[row.experiment] = row }
        for (name, row) in latest {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(row.settingsJSON.utf8))) as? [String: Any],
                  let anchor = Experiment.Report(settingsObject: object)?.anchor else { continue }
            fileAnchors[name] = (row.runID, anchor)
        }
    }

    /// Checks a stored `run_metrics` value of a numeric column (``LabStore/runMetricsColumns``) before the report
    /// draws or tabulates it: NULL or a finite number; `span_seconds` and `bitrate_kbps` above 0 (the span of a
    /// stream, its rate on the curves' log axis); no other column but `target_error_pct` below 0 (counts, sizes,
    /// seconds, PSNR in dB, QP).
    /// - Throws: `.data` naming the database, the run and the column, and the value found.
    static func checkMetric(_ value: SQLValue, column: String, runID: Int64, database: String) throws {
        let found: String
        switch value {
        case .null: return
        case .text(let t): found = "holds the text '\(Plots.shown(t, limit: 40))', not a number"
        case .blob(let b): found = "holds a BLOB of \(b.count) bytes, not a number"
        case .integer, .real:
            let v = value.double!
            // The value's text only for a message (formatted for each of 8,336 runs x 40 columns it cost more than the check).
            var shown: String { value.int.map(String.init) ?? "\(v)" }
            if !v.isFinite { found = "holds \(shown), not a finite number" }
            else if (column == "span_seconds" || column == "bitrate_kbps") && v <= 0 { found = "holds \(shown), must be above 0" }
            else if column != "target_error_pct" && v < 0 { found = "holds \(shown), must be 0 or more" }
            else { return }
        }
        throw LabError.data("\(database): run \(runID): run_metrics.\(column) \(found) (a damaged row)")
    }

    /// A run's configuration: its rate-control mode (`rc`, else x264's `resolved.rc_method`, else "?"; for an OpenH264
    /// run `openh264` and its `iRCMode` in OpenH264's terms, ``StoredRunSettings/openh264RCMode``: "openh264 bitrate",
    /// "openh264 timestamp"), then the grid's settings other than the rate as `key=value` words in key order, the rate keys (``isRateKey(_:)``)
    /// left out (and an OpenH264 run's `encoder` and `iRCMode`, in its first words); an object axis adds its own words;
    /// `encoder=NAME` first for another encoder than x264 and OpenH264 that no axis names. Without `axes` (settings of the
    /// previous version) the words of the label. The name of one run alone; ``configurations(_:)`` names an experiment's.
    static func configuration(_ settings: StoredRunSettings) -> String {
        let parts = configurationParts(settings)
        return ([parts.mode] + parts.words).joined(separator: " ")
    }

    /// The configurations of one experiment's runs (``configuration(_:)``, nil for a run without settings), where an
    /// OpenH264 run's name leaves out the words every OpenH264 run of the experiment has (`eSpsPpsIdStrategy=sps_listing`
    /// set for all of them): its runs differ by the rest, so the curves are the same and the names short. x264 runs
    /// keep every word (their names are those of earlier reports and of `--anchor`).
    static func configurations(_ list: [StoredRunSettings?]) -> [String?] {
        let parts = list.map { $0.map(configurationParts) }
        let isOpenH264 = list.map { $0?.encoder == EncoderName.openh264.rawValue }
        var common: Set<String>?
        for (p, open) in zip(parts, isOpenH264) where open {
            guard let words = p?.words else { continue }
            common = common.map { $0.intersection(words) } ?? Set(words)
        }
        return zip(parts, isOpenH264).map { p, open in
            p.map { ([$0.mode] + (open ? $0.words.filter { !(common?.contains($0) ?? false) } : $0.words)).joined(separator: " ") }
        }
    }

    /// ``configuration(_:)``'s first word(s) and its `key=value` words.
    static func configurationParts(_ settings: StoredRunSettings) -> (mode: String, words: [String]) {
        var words: [String] = []
        if let axes = settings.axes {
            for key in axes.keys.sorted() {
                if let group = axes[key] as? [String: Any] {
                    for k in group.keys.sorted() where !isRateKey(k) { words.append(RateDistortion.word(k, group[k]!)) }
                } else if !isRateKey(key) {
                    words.append(RateDistortion.word(key, axes[key]!))
                }
            }
        } else {
            words = settings.label.split(separator: " ").map(String.init).filter { word in
                let key = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
                return !isRateKey(key)
            }
        }
        if settings.encoder == EncoderName.openh264.rawValue {
            // OpenH264's own mode names: x264's `abr` (its resolved method) would name bitrate, timestamp and
            // bufferbased alike. The mode the library was given, else the grid's iRCMode (a run failed before).
            let given = words.first { $0.hasPrefix("iRCMode=") }.map { String($0.dropFirst("iRCMode=".count)) }
            words.removeAll { $0 == "encoder=\(EncoderName.openh264.rawValue)" || $0.hasPrefix("iRCMode=") }
            return ("\(EncoderName.openh264.rawValue) \(settings.openh264RCMode ?? given ?? "?")", words)
        }
        // The encoder when not x264, also where no grid axis names it (`enclab encode` runs, `encoder` in `base`), so
        // two encoders' runs never make one curve.
        if let e = settings.encoder, e != EncoderName.x264.rawValue, !words.contains("encoder=\(e)") { words.insert("encoder=\(e)", at: 0) }
        return (settings.rc ?? settings.rcMethod ?? "?", words)
    }

    /// One frame as the report reads it (`frames`, decode order).
    typealias Frame = LabStore.ReportFrame

    /// A run's frames in decode order.
    /// - Throws: `.data` naming the file and column for a NOT NULL column holding NULL.
    static func frames(run runID: Int64, store: LabStore) throws -> [Frame] {
        try store.reportFrames(run: runID)
    }

    /// One frame's duration in ticks of the run's timebase, (1/fps) / timebase, or nil when the run lacks either.
    static func frameTicks(_ row: LabStore.RunRow) -> Rational? {
        guard let fn = row.fpsNum, let fd = row.fpsDen, let tn = row.timebaseNum, let td = row.timebaseDen, fn > 0, fd > 0, tn > 0, td > 0,
              let fps = try? Rational(Int64(fn), Int64(fd)), let tb = try? Rational(Int64(tn), Int64(td)) else { return nil }
        return try? fps.reciprocal / tb
    }

    /// The numbers the curves need when the database has no `run_metrics`, from `frames`:
    /// - `bitrate_kbps`: all frame bytes × 8 / 1000 over the span, last PTS − first PTS + one frame's duration (the
    ///   span `enclab analyze` uses; here the largest minus the smallest PTS, plus 1/fps);
    /// - `psnr_global`: PSNR of the squared error pooled over all samples of the three planes (x264's "Global",
    ///   ``QualityPooling``, every frame weighted 1), and `psnr_y_pooled` the same for luma; nil unless every frame
    ///   has `sse_*` (a run without an independent decode).
    static func computed(_ row: LabStore.RunRow, store: LabStore) throws -> [String: Double?] {
        let frames = try frames(run: row.runID, store: store)
        var out: [String: Double?] = ["bitrate_kbps": nil, "psnr_global": nil, "psnr_y_pooled": nil]
        guard !frames.isEmpty else { return out }
        if let ticks = frameTicks(row), let tn = row.timebaseNum, let td = row.timebaseDen {
            let span = Double(frames.map(\.pts).max()! - frames.map(\.pts).min()!) + ticks.approximateValue
            let seconds = span * Double(tn) / Double(td)
            let bytes = frames.reduce(0.0) { $0 + Double($1.sizeBytes) }
            if seconds > 0 { out["bitrate_kbps"] = bytes * 8 / 1000 / seconds }
        }
        if let w = row.width, let h = row.height, frames.allSatisfy({ $0.sse != nil }),
           let pooled = try? QualityPooling.pool(frames.map { QualityPooling.Frame(errors: $0.sse!) }, width: w, height: h) {
            out["psnr_global"] = pooled.pooled.all
            out["psnr_y_pooled"] = pooled.pooled.y
        }
        return out
    }
}
