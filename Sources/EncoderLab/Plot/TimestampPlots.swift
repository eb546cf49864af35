import Foundation
import H264

/// The timestamps experiments' plots (docs/timestamps.md), drawn from the store beside an experiment's `rd.*`:
/// - when the grid has a `pts-offset` axis: `timestamps-bitrate.*` (bitrate error in % against the offset; only
///   when the runs have a bitrate target) and
///   `timestamps-pts.*` (input frames whose PTS was not after the previous one, x264's "non-strictly-monotonic
///   PTS", against the offset), one line per clip and the grid's other settings;
/// - when the runs were timed by a schedule, a timecode file or the file's own times: `per-second-bitrate.*` (the
///   kbit of the frames whose PTS falls in each second from the run's first PTS) and `per-second-psnr.*` (their
///   mean PSNR avg), one line per run, with `per-second.dat`.
/// Each line's key title reaches gnuplot as ARG2, one per line (user text is never gnuplot syntax).
extension Plots {
    /// One run as the timestamps plots read it.
    struct TimestampRun {
        var clip: String
        /// The grid point without the `pts-offset` axis, as `key=value` words in key order.
        var variant: String
        var label: String
        var offset: Int64?
        var source: String
        var errorPercent: Double?
        var nonIncreasing: Int
        var runID: Int64
        var timebase: Rational
    }

    /// Draws the plots that apply to `experiment`'s done runs (none when no run has a `timestamp_analysis` row).
    /// - Throws: `.cantCreate`, `.ioError`, `.software` as every plot; the database's errors.
    static func writeTimestampPlots(experiment: String, runs: [LabStore.RunRow], store: LabStore, dir: String) throws {
        var found: [TimestampRun] = []
        for run in runs where run.experiment == experiment && run.status == "done" {
            guard let row = try store.database.timestampSummary(run: run.runID),
                  let tbNum = run.timebaseNum, let tbDen = run.timebaseDen, let timebase = try? Rational(Int64(tbNum), Int64(tbDen)) else { continue }
            let settings = (try? JSONSerialization.jsonObject(with: Data(run.settingsJSON.utf8))) as? [String: Any] ?? [:]
            let axes = settings["axes"] as? [String: Any] ?? [:]
            // The offset: a grid axis of its own, or a key of an axis whose values are objects.
            var offset: Int64?
            var offsetAxis: String?
            for (key, value) in axes {
                let found: Any? = key == "pts-offset" ? value : (value as? [String: Any])?["pts-offset"]
                guard let found else { continue }
                if let n = found as? NSNumber { offset = n.int64Value } else if let t = found as? String { offset = Int64(t) }
                offsetAxis = key
            }
            let variant = axes.keys.filter { $0 != offsetAxis }.sorted().map { k in "\(k)=\(Self.axisText(axes[k]!))" }.joined(separator: " ")
            // Stored values are checked before they reach a plot (a damaged database is 65, not a gnuplot failure).
            let at = "run \(run.runID): timestamp_analysis"
            guard case .text(let source) = row.source, TimestampSource(rawValue: source) != nil else {
                throw LabError.data("\(at).source is not one of constant-rate, file, tcfile, schedule")
            }
            guard case .integer(let nonIncreasing) = row.nonIncreasingInputPTS, nonIncreasing >= 0, nonIncreasing <= Int64(Int32.max) else {
                throw LabError.data("\(at).non_increasing_input_pts is not a count from 0 to \(Int32.max)")
            }
            var error: Double?
            switch row.bitrateErrorPct {
            case .real(let e): error = e
            case .integer(let e): error = Double(e)
            case .null: error = nil
            default: throw LabError.data("\(at).bitrate_error_pct is not a number")
            }
            if let e = error, !e.isFinite || abs(e) > 1e9 { throw LabError.data("\(at).bitrate_error_pct \(e) is not a finite percentage") }
            found.append(TimestampRun(clip: Paths.fileName(run.clip), variant: variant, label: settings["label"] as? String ?? "",
                                      offset: offset, source: source, errorPercent: error,
                                      nonIncreasing: Int(nonIncreasing), runID: run.runID, timebase: timebase))
        }
        let withOffset = found.filter { $0.offset != nil }
        if !withOffset.isEmpty { try writeOffsetPlots(withOffset, experiment: experiment, dir: dir) }
        let timed = found.filter { $0.source != "constant-rate" }
        if !timed.isEmpty { try writePerSecondPlots(timed, store: store, experiment: experiment, dir: dir) }
    }

    /// An axis value as the label shows it: JSON for objects, the scalar otherwise.
    static func axisText(_ value: Any) -> String {
        if value is [String: Any] || value is [Any] { return JSON.string(value) }
        if let n = value as? NSNumber, String(cString: n.objCType) == "c" { return n.boolValue ? "true" : "false" }
        return "\(value)"
    }

    /// The key-title prologue: ARG2 split at newlines into `keyTitle[1...count]`.
    static func keyTitlePrologue(count: Int) -> String {
        """
        titles = ARG2
        array keyTitle[\(max(1, count))]
        do for [i = 1:\(max(1, count))] {
            n = strstrt(titles, "\\n")
            keyTitle[i] = n > 0 ? titles[1:n - 1] : titles
            titles = n > 0 ? titles[n + 1:] : ""
        }
        """
    }

    static func writeOffsetPlots(_ runs: [TimestampRun], experiment: String, dir: String) throws {
        try OutputFiles.makeDirectory(dir)
        let offsets = Array(Set(runs.compactMap(\.offset))).sorted()
        let groups = Dictionary(grouping: runs) { "\($0.clip) \($0.variant)" }
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, groups.count)))
        var data = "# offset_index offset_us bitrate_error_pct non_increasing_input_pts\n"
        var bitrateSeries: [String] = [], ptsSeries: [String] = [], titles: [String] = []
        for (i, key) in groups.keys.sorted().enumerated() {
            data += "# \(shown(key, limit: .max))\n"
            for r in groups[key]!.sorted(by: { $0.offset! < $1.offset! }) {
                data += "\(offsets.firstIndex(of: r.offset!)!) \(r.offset!) \(r.errorPercent.map { String($0) } ?? "NaN") \(r.nonIncreasing)\n"
            }
            data += "\n\n"
            let style = "with linespoints lw 1.5 pt \(5 + 2 * (i % 4)) dt \(1 + (i / 4) % 5) lc \(1 + i % 8) title keyTitle[\(i + 1)]"
            bitrateSeries.append("'timestamps.dat' index \(i) using 1:3 \(style)")
            ptsSeries.append("'timestamps.dat' index \(i) using 1:4 \(style)")
            titles.append(shown(key, limit: keyLimit))
        }
        try write(data, to: "\(dir)/timestamps.dat")
        let tics = offsets.enumerated().map { "'\(Self.offsetLabel($0.element))' \($0.offset)" }.joined(separator: ", ")
        let common = """
        \(keyTitlePrologue(count: titles.count))
        set title ARG1
        set xlabel 'PTS offset (µs)'
        set xtics (\(tics))
        set xrange [-0.5:\(Double(offsets.count) - 0.5)]
        set key below
        set grid
        """
        let arguments = [shown("\(experiment): bitrate error against the PTS offset"), titles.joined(separator: "\n")]
        // Without a bitrate target (CQP, CRF) there is no error to draw.
        if runs.contains(where: { $0.errorPercent != nil }) {
            try both(dir: dir, name: "timestamps-bitrate", body: common + "\nset ylabel 'bitrate error against the target (%)'\nplot "
                 + bitrateSeries.joined(separator: ", \\\n     "), arguments: arguments, size: (1100, 600))
        }
        let ptsArguments = [shown("\(experiment): non-increasing PTS handed to x264 against the PTS offset"), titles.joined(separator: "\n")]
        try both(dir: dir, name: "timestamps-pts", body: common + "\nset ylabel 'frames whose PTS is not after the previous one'\nset yrange [0:*]\nplot "
                 + ptsSeries.joined(separator: ", \\\n     "), arguments: ptsArguments, size: (1100, 600))
    }

    /// An offset as the x axis shows it: `10^k` for a positive power of ten, the number itself otherwise (0,
    /// negative offsets, others).
    static func offsetLabel(_ n: Int64) -> String {
        guard n >= 10 else { return String(n) }
        var v = n, k = 0
        while v % 10 == 0 { v /= 10; k += 1 }
        return v == 1 ? "10^\(k)" : String(n)
    }

    static func writePerSecondPlots(_ runs: [TimestampRun], store: LabStore, experiment: String, dir: String) throws {
        try OutputFiles.makeDirectory(dir)
        let keyLimit = max(1, min(textLimit, 24_000 / max(1, runs.count)))
        var data = "# second kbps mean_psnr_avg\n"
        var rateSeries: [String] = [], psnrSeries: [String] = [], titles: [String] = []
        for (i, run) in runs.enumerated() {
            let frames = try store.frames(run: run.runID)
            guard let first = frames.map(\.pts).min() else { continue }
            var bytes: [Int64: Int] = [:], psnr: [Int64: (sum: Double, count: Int)] = [:]
            for f in frames {
                // The second from the run's first PTS, exactly: floor((pts - first) * timebase).
                let ticks = Int128(f.pts) - Int128(first)
                let (product, overflow) = ticks.multipliedReportingOverflow(by: Int128(run.timebase.numerator))
                guard !overflow, let second = Int64(exactly: product / Int128(run.timebase.denominator)), second < 1_000_000_000 else {
                    throw LabError.data("run \(run.runID): frame coded_index \(f.codedIndex): pts \(f.pts) lies too far from the first pts \(first) to plot per second")
                }
                bytes[second, default: 0] += f.sizeBytes
                if let p = f.psnrAvg { psnr[second, default: (0, 0)].sum += p; psnr[second, default: (0, 0)].count += 1 }
            }
            data += "# \(shown("\(run.clip) \(run.label)", limit: .max))\n"
            let seconds = bytes.keys.sorted()
            for s in seconds {
                let p = psnr[s].map { String($0.sum / Double($0.count)) } ?? "NaN"
                data += "\(s) \(Double(bytes[s]!) * 8 / 1000) \(p)\n"
            }
            // The last second's step ends at the next second (no PSNR point there).
            if let last = seconds.last { data += "\(last + 1) \(Double(bytes[last]!) * 8 / 1000) NaN\n" }
            data += "\n\n"
            let style = "with steps lw 1.5 dt \(1 + (i / 8) % 5) lc \(1 + i % 8) title keyTitle[\(i + 1)]"
            rateSeries.append("'per-second.dat' index \(i) using 1:2 \(style)")
            psnrSeries.append("'per-second.dat' index \(i) using 1:3 with linespoints lw 1.5 pt 7 ps 0.6 dt \(1 + (i / 8) % 5) lc \(1 + i % 8) title keyTitle[\(i + 1)]")
            titles.append(shown("\(run.clip) \(run.label)", limit: keyLimit))
        }
        try write(data, to: "\(dir)/per-second.dat")
        let common = """
        \(keyTitlePrologue(count: titles.count))
        set title ARG1
        set xlabel 'second from the first PTS'
        set key below
        set grid
        """
        try both(dir: dir, name: "per-second-bitrate", body: common + "\nset ylabel 'kbit in that second'\nset yrange [0:*]\nplot " + rateSeries.joined(separator: ", \\\n     "),
                 arguments: [shown("\(experiment): bitrate per second of PTS"), titles.joined(separator: "\n")], size: (1100, 600))
        try both(dir: dir, name: "per-second-psnr", body: common + "\nset ylabel 'mean PSNR avg (dB)'\nplot " + psnrSeries.joined(separator: ", \\\n     "),
                 arguments: [shown("\(experiment): PSNR per second of PTS"), titles.joined(separator: "\n")], size: (1100, 600))
    }
}
