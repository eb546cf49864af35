import Foundation

/// ``RunMetrics`` against the store: reading a run's rows for ``RunMetrics/compute(run:frames:spanTicks:runID:shownPath:)``
/// (the computation itself is Analysis's), writing `run_metrics` and `run_gops`, and the commands `enclab analyze` and
/// `enclab compare`.
extension RunMetrics {
    // MARK: - Reading

    /// Computes run `runID`'s metrics from `store`, reading only.
    /// - Throws: `.noInput` for a run that is not there; `.data` for a run that is not done, has no frames, or whose
    ///   settings are not a JSON object, for a frame whose columns hold NULL or text where a number belongs, whose
    ///   `size_bytes` is outside 0 ... 2^40 or pts or dts outside -2^60 ... 2^60 (the range check of
    ///   ``FrameRanges/check(codedIndex:sizeBytes:pts:dts:runID:database:use:)``, which the plots and the report
    ///   apply), and for frames whose sizes add up to more than ``maximumStreamBytes`` (each message names the
    ///   database, the run, the frame, the column and its value); the database's errors.
    public static func compute(store: LabStore, runID: Int64) throws -> RunMetrics {
        try compute(database: store.database, runID: runID, shownPath: store.database.path)
    }

    /// ``compute(store:runID:)`` on an open database (read-only is enough); messages name `shownPath`.
    static func compute(database db: Database, runID: Int64, shownPath: String) throws -> RunMetrics {
        guard let run = try db.metricsRun(id: runID) else {
            throw LabError.noInput("\(shownPath): no run with id \(runID)")
        }
        var m = try compute(run: run, frames: try db.metricsFrames(run: runID), spanTicks: try db.timestampSpanTicks(run: runID),
                            runID: runID, shownPath: shownPath)
        for (column, _) in LabStore.runMetricsColumns where m.columns[column] == nil { m.columns[column] = .null }
        return m
    }

    // MARK: - Storing

    /// Replaces run `runID`'s rows in `run_metrics` and `run_gops` with these. Runs no transaction of its own: the
    /// caller's (``record(store:runID:)``'s callers keep a run's analysis whole).
    /// - Throws: the database's errors.
    public func write(to store: LabStore) throws {
        try store.database.replaceRunMetrics(self)
    }

    /// Computes and writes run `runID`'s metrics inside the caller's transaction (the lab calls it in the
    /// transaction that records the run, so no run is stored half-analysed).
    /// - Throws: as ``compute(store:runID:)`` and ``write(to:)``.
    @discardableResult
    public static func record(store: LabStore, runID: Int64) throws -> RunMetrics {
        let m = try compute(store: store, runID: runID)
        try m.write(to: store)
        return m
    }

    /// `enclab analyze`: (re)computes the metrics of every done run of the database at `databasePath`, or of the runs
    /// `selectors` name (run ids, `run-ID`, run keys or their first 8 or more hex digits), one transaction per run,
    /// reporting progress on standard error. Returns the runs analysed, in order.
    /// - Parameter analysed: called with each run's id once its transaction has committed (the CLI prints a line
    ///   there, so the lines of the runs analysed before an interruption or an error are out).
    /// - Throws: `.noInput` for a missing database or a selector naming no run; `.usage` for a malformed or ambiguous
    ///   selector; `.data` for a file that is not the lab's, a selected run that is not done, or a run whose frames
    ///   ``compute(store:runID:)`` refuses (the runs before it stay analysed); the database's errors.
    @discardableResult
    public static func analyze(databasePath: String, runs selectors: [String], progress: Bool = true,
                               analysed: (Int64) -> Void = { _ in }) throws -> [Int64] {
        let (store, chosen) = try LabStore.openDoneRuns(databasePath: databasePath, selectors: selectors, notDone: "nothing to analyse")
        let bar = progress ? Progress(label: "analyze", total: chosen.count, unit: "runs") : nil
        defer { bar?.finish() }
        var done: [Int64] = []
        for run in chosen {
            if let signal = Interruption.received { throw LabError(.interrupted, "interrupted by \(signal)") }
            try store.database.transaction {
                _ = try record(store: store, runID: run.runID)
                // The step response of a rate schedule's changes, from the same frames (rate_changes stays: it is what
                // the encoder did, not derived).
                try StepResponse.record(store: store, runID: run.runID)
            }
            done.append(run.runID)
            analysed(run.runID)
            bar?.advance(detail: "run \(run.runID)")
        }
        return done
    }
}

extension RunMetrics {
    /// Columns whose difference is shown in absolute terms only: values in dB (a ratio already), percentages, frame
    /// indices and counts of events.
    static let absoluteOnly: Set<String> = [
        "target_error_pct", "peak_1s_start_frame", "psnr_y_mean_frame", "psnr_u_mean_frame", "psnr_v_mean_frame",
        "psnr_avg_mean_frame", "psnr_y_pooled", "psnr_u_pooled", "psnr_v_pooled", "psnr_global", "psnr_611", "ssim_db",
        "vbv_underflows", "vbv_overflows",
    ]

    /// The metrics of one run for `enclab compare`: its `run_metrics` row when there is one, each value checked to be
    /// one ``compute(store:runID:)`` could have written (an integer column an integer in 0 ... ``maximumStreamBytes``,
    /// a real column a finite number, a text column text, or NULL); else computed afresh (nothing written).
    /// - Throws: `.data` naming `shownPath`, the run, the column and the value for a value outside those.
    static func stored(database: Database, runID: Int64, shownPath: String) throws -> [String: SQLValue] {
        guard let row = try database.storedRunMetrics(run: runID) else {
            return try compute(database: database, runID: runID, shownPath: shownPath).columns
        }
        var out: [String: SQLValue] = [:]
        for (name, type) in LabStore.runMetricsColumns {
            let value = row[name] ?? .null
            let where_ = "\(shownPath): run \(runID): run_metrics.\(name)"
            let again = "(run 'enclab analyze --db \(shownPath) --run \(runID)' to compute it again)"
            switch (value, type.hasPrefix("INTEGER") ? "INTEGER" : type.hasPrefix("REAL") ? "REAL" : "TEXT") {
            case (.null, _): break
            case (.integer(let v), "INTEGER"):
                guard (0...maximumStreamBytes).contains(v) else {
                    throw LabError.data("\(where_) holds \(v), outside 0...\(maximumStreamBytes) (2^53) \(again)")
                }
            case (.integer, "REAL"): break
            case (.real(let v), "REAL"):
                guard v.isFinite else { throw LabError.data("\(where_) holds \(v), not a finite number \(again)") }
            case (.text, "TEXT"): break
            default:
                let expected = type.hasPrefix("INTEGER") ? "an integer" : type.hasPrefix("REAL") ? "a number" : "text"
                throw LabError.data("\(where_) holds \(described(value)), expected \(expected) \(again)")
            }
            out[name] = value
        }
        return out
    }

    /// The database at `path` to read, never changed: opened read-only when it has this enclab's schema version and
    /// every table of it; otherwise copied (`VACUUM INTO`) to a temporary file in the system's temporary folder and
    /// the copy migrated, as `enclab merge` reads an older input; `scratch` is set to the copy, for the caller to remove.
    /// - Throws: `.data` for a file that is not the lab's or is newer; the database's errors.
    static func openForReading(_ path: String, scratch: inout String?) throws -> Database {
        let source = try Database.openForReading(LabStore.openingPath(path))
        guard case .lab(let version, let complete) = try LabStore.inspect(source) else {
            throw LabError.data("\(path): not an enclab database (no tables: an empty file or an empty SQLite database)")
        }
        if version == LabStore.schemaVersion && complete { return source }
        let copy = (NSTemporaryDirectory() as NSString).appendingPathComponent("enclab-compare-\(getpid())-\(UUID().uuidString.prefix(8)).sqlite")
        scratch = copy
        try source.vacuum(into: copy)
        return try LabStore(path: copy).database
    }

    /// A real as `compare` shows it: 3 decimals (`36.410`, `+0.368` with `sign`) for magnitudes from 0.001 to below
    /// 10^12 and for 0; `%.6g` beyond (`1e+308`, `-2.5e-07`), so no value prints as hundreds of digits or as a false
    /// `0.000`; `inf`, `-inf`, `nan` as C prints them.
    static func shownReal(_ v: Double, sign: Bool = false) -> String {
        let plain = v == 0 || (v.magnitude >= 0.001 && v.magnitude < 1e12)
        return String(format: (sign ? "%+" : "%") + (plain ? ".3f" : ".6g"), v)
    }

    /// `compare`'s lines for the perceptual metrics (`run_quality_metrics`, `--metrics` and `enclab measure`): per
    /// metric either run has, four lines, `vmaf mean`, `vmaf harmonic_mean`, `vmaf low_1pct`, `vmaf low_5pct` (the
    /// column names of that table, metric by its `metric` value), A, B, B − A and, for scores that are not in dB
    /// (all but psnr_hvs and xpsnr), (B − A) / |A| in %; a run without the metric shows `-`. None when neither run has any.
    static func qualityLines(database: Database, a: Int64, b: Int64) throws -> [[String]] {
        guard try !database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'run_quality_metrics'").isEmpty else { return [] }
        let rows = try database.query("SELECT run_id, metric, mean, harmonic_mean, low_1pct, low_5pct FROM run_quality_metrics WHERE run_id IN (?, ?)",
                                      [.integer(a), .integer(b)])
        var values: [Int64: [String: [Double?]]] = [:]
        for row in rows {
            guard let id = row[0].int, case .text(let metric) = row[1] else { continue }
            values[id, default: [:]][metric] = (2...5).map { row[$0].double }
        }
        let order = QualityMetric.allCases.map(\.column)
        let metrics = Set((values[a] ?? [:]).keys).union((values[b] ?? [:]).keys).sorted { (order.firstIndex(of: $0) ?? .max, $0) < (order.firstIndex(of: $1) ?? .max, $1) }
        var lines: [[String]] = []
        for metric in metrics {
            for (k, pooling) in ["mean", "harmonic_mean", "low_1pct", "low_5pct"].enumerated() {
                let x = values[a]?[metric]?[k] ?? nil, y = values[b]?[metric]?[k] ?? nil
                var diff = "-", pct = "-"
                if let x, let y {
                    diff = shownReal(y - x, sign: true)
                    if x != 0, !["psnr_hvs", "xpsnr"].contains(metric) {
                        let p = (y - x) / abs(x) * 100
                        pct = p.isFinite && p.magnitude < 1e12 ? String(format: "%+.2f", p) : String(format: "%+.6g", p)
                    }
                }
                lines.append(["\(metric) \(pooling)", x.map { shownReal($0) } ?? "-", y.map { shownReal($0) } ?? "-", diff, pct])
            }
        }
        return lines
    }

    /// `enclab compare`: the metrics of two runs side by side, one line per `run_metrics` column: its name, run A's
    /// value, run B's, B − A, and (B − A) / |A| in % where that means something (not for values in dB, percentages,
    /// frame indices or event counts, nor when A is 0). NULL shows as `-`; reals as ``shownReal(_:sign:)``.
    ///
    /// Reads only: a database of this version is opened read-only; an older one (or one lacking a table of this
    /// version) is migrated in a temporary copy, removed afterwards, so the file is never changed.
    /// - Parameters: `runA`, `runB`: a run id (`12`, `run-12`), a run key or its first 8 or more hex digits.
    /// - Throws: `.noInput` for a missing database or a run that is not in it; `.usage` for a malformed or ambiguous
    ///   run ("run '…'"); `.data` for a file that is not the lab's, a run that is not done (or has no frames), a
    ///   stored `run_metrics` value no analysis writes (see ``stored(database:runID:shownPath:)``), or frames
    ///   ``compute(store:runID:)`` refuses; each names the database, the run and the column.
    public static func compare(databasePath: String, runA: String, runB: String) throws -> String {
        try LabStore.requireDatabaseFile(databasePath)
        try LabStore.requireLabDatabase(path: databasePath)
        var scratch: String?
        defer {
            if let scratch { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(scratch + suffix) } }
        }
        let database = try openForReading(databasePath, scratch: &scratch)
        let rows = try LabStore(database: database).runs()
        let keys = try database.runKeys()
        let a = try LabStore.select([runA], rows: rows, keys: keys, databasePath: databasePath, label: "run")[0]
        let b = try LabStore.select([runB], rows: rows, keys: keys, databasePath: databasePath, label: "run")[0]
        for run in [a, b] where run.status != "done" {
            throw LabError.data("\(databasePath): run \(run.runID) is \(run.status), it has no metrics")
        }
        let left = try stored(database: database, runID: a.runID, shownPath: databasePath)
        let right = try stored(database: database, runID: b.runID, shownPath: databasePath)
        func shown(_ v: SQLValue?) -> String {
            switch v {
            case .integer(let i)?: return String(i)
            case .real(let d)?: return shownReal(d)
            case .text(let t)?: return Shown.text(t)
            default: return "-"
            }
        }
        var lines: [[String]] = [["metric", "run \(a.runID)", "run \(b.runID)", "difference", "%"]]
        for (name, _) in LabStore.runMetricsColumns {
            let x = left[name] ?? .null, y = right[name] ?? .null
            var diff = "-", pct = "-"
            if case .integer(let i) = x, case .integer(let j) = y {
                // Both in 0...2^53 (checked), so the difference fits; computed in 128 bits all the same.
                let d = Int128(j) - Int128(i)
                diff = (d > 0 ? "+" : "") + String(d)
            } else if let i = x.double, let j = y.double {
                diff = shownReal(j - i, sign: true)
            } else if case .text(let s) = x, case .text(let t) = y {
                diff = s == t ? "same" : "differs"
            }
            if let i = x.double, let j = y.double, i != 0, !absoluteOnly.contains(name) {
                let p = (j - i) / abs(i) * 100
                pct = p.isFinite && p.magnitude < 1e12 ? String(format: "%+.2f", p) : String(format: "%+.6g", p)
            }
            lines.append([name, shown(x), shown(y), diff, pct])
        }
        lines += try qualityLines(database: database, a: a.runID, b: b.runID)
        let widths = (0..<5).map { col in lines.map { $0[col].count }.max() ?? 0 }
        return lines.map { row in
            row.enumerated().map { col, text in
                col == 0 ? text.padding(toLength: widths[0], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[col] - text.count) + text
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
