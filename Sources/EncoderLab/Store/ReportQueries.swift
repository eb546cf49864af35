import Foundation
import H264

/// The report's reads of the store (`enclab report`, Report/*): every SQL statement the report runs, as typed
/// queries. The report itself holds no SQL text.
extension LabStore {
    /// The experiment names of `runs`, sorted.
    func reportExperimentNames() throws -> [String] {
        try database.query("SELECT DISTINCT experiment FROM runs").compactMap { $0.first?.string }.sorted()
    }

    /// Whether the database has a table of that name.
    func reportHasTable(_ name: String) throws -> Bool {
        try !database.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]).isEmpty
    }

    /// Each run's pooled perceptual quality as the curves use it (`run_quality_metrics.mean`, `--metrics`), by run id
    /// and metric; empty when the database has no such table. A NULL mean is left out.
    /// - Throws: `.data` naming the database, the run, the metric and the value for a mean that is text, a BLOB or a
    ///   real that is not finite (no `measure` writes one: a damaged row, which the report would otherwise call "not
    ///   scored").
    func reportQualityMeans() throws -> [Int64: [QualityMetric: Double]] {
        guard try reportHasTable("run_quality_metrics") else { return [:] }
        let byColumn = Dictionary(uniqueKeysWithValues: QualityMetric.allCases.map { ($0.column, $0) })
        var out: [Int64: [QualityMetric: Double]] = [:]
        for row in try database.rows("SELECT run_id, metric, mean FROM run_quality_metrics") {
            guard let id = row["run_id"].int, case .text(let name) = row["metric"], let metric = byColumn[name] else { continue }
            guard let mean = try row.at("run \(id), run_quality_metrics.mean of \(name)").optionalNumber("mean") else { continue }
            out[id, default: [:]][metric] = mean
        }
        return out
    }

    /// The rows of `run_metrics` as the report reads them: per row its run id, its `psnr_source` (nil when the column
    /// is absent or NULL) and the values of `columns` in that order.
    struct ReportMetricsRow {
        var runID: Int64?
        var psnrSource: String?
        var values: [SQLValue]
    }

    /// The column names of `run_metrics` in table order (run_id and psnr_source left out), and whether it has
    /// `psnr_source`.
    func reportMetricsColumns() throws -> (columns: [String], hasSource: Bool) {
        let all = try database.rows("SELECT name FROM pragma_table_info('run_metrics') ORDER BY cid").map { try $0.text("name") }
        return (all.filter { $0 != "run_id" && $0 != "psnr_source" }, all.contains("psnr_source"))
    }

    /// Every `run_metrics` row, `columns` read by position (one query; not by name per value).
    func reportMetricsRows(columns: [String], hasSource: Bool) throws -> [ReportMetricsRow] {
        let listed = (["run_id", hasSource ? "psnr_source" : "NULL"] + columns.map { "\"\($0.replacingOccurrences(of: "\"", with: "\"\""))\"" })
            .joined(separator: ", ")
        return try database.query("SELECT \(listed) FROM run_metrics").map {
            ReportMetricsRow(runID: $0[0].int, psnrSource: $0[1].string, values: Array($0[2...]))
        }
    }

    /// Per run id, the few settings the report's tables and curves read, extracted by SQLite (its JSON parser is C,
    /// Foundation's costs a millisecond a run): a small JSON object (`rc`, `label`, `x264_args`, `axes`, `encoder`, `check`,
    /// `resolved.rc_method`, `resolved.verify`) that ``StoredRunSettings`` reads as it reads the whole; no entry for
    /// settings that are not a JSON object, as StoredRunSettings refuses them.
    func reportSettingsBriefs() throws -> [Int64: String] {
        var brief: [Int64: String] = [:]
        for values in try database.query("""
            SELECT run_id, CASE WHEN json_valid(settings) AND json_type(settings) = 'object' THEN json_object(
                'rc', json_extract(settings, '$.rc'), 'label', json_extract(settings, '$.label'),
                'x264_args', json_extract(settings, '$.x264_args'), 'axes', json_extract(settings, '$.axes'),
                'encoder', json_extract(settings, '$.encoder'), 'openh264_params', json_extract(settings, '$.openh264_params'),
                'resolved', CASE WHEN json_type(settings, '$.resolved') = 'object' THEN json_object(
                    'rc_method', json_extract(settings, '$.resolved.rc_method'), 'verify', json_extract(settings, '$.resolved.verify')) END)
            END FROM runs
            """) {
            if let id = values[0].int, let text = values[1].string { brief[id] = text }
        }
        return brief
    }

    /// One frame as the report reads it (`frames`, decode order).
    struct ReportFrame {
        var codedIndex: Int
        var displayIndex: Int
        var type: String
        var keyframe: Bool
        var sizeBytes: Int
        var pts: Int64
        var dts: Int64
        var sse: PlaneErrors?
        var psnrAvg: Double?
        var psnrY: Double?
        /// The frame's average QP (x264's report; NULL for a stream recorded by `enclab check`).
        var qp: Double? = nil
        var psnrU: Double? = nil
        var psnrV: Double? = nil
        /// x264's SSIM of the frame (0 ... 1); NULL unless measured.
        var ssim: Double? = nil
    }

    /// A run's frames in decode order: the one frame-row query of the report, its run pages and its charts
    /// (``chartFrames(run:)`` reads the same rows).
    /// - Throws: `.data` naming the file and column for a NOT NULL column holding NULL.
    func reportFrames(run runID: Int64) throws -> [ReportFrame] {
        try database.rows("""
            SELECT coded_index, display_index, type, keyframe, size_bytes, pts, dts, sse_y, sse_u, sse_v, psnr_y, psnr_avg,
                   qp, psnr_u, psnr_v, ssim
            FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).enumerated().map { k, row in
            let r = row.at("run \(runID), frame \(k) in coded order")
            let sse: PlaneErrors? = {
                guard let y = r["sse_y"].int, let u = r["sse_u"].int, let v = r["sse_v"].int else { return nil }
                return PlaneErrors(sseY: y, sseU: u, sseV: v)
            }()
            return ReportFrame(codedIndex: Int(try r.integer("coded_index")), displayIndex: Int(try r.integer("display_index")),
                               type: try r.text("type"), keyframe: try r.integer("keyframe") != 0, sizeBytes: Int(try r.integer("size_bytes")),
                               pts: try r.integer("pts"), dts: try r.integer("dts"), sse: sse, psnrAvg: try r.optionalNumber("psnr_avg"),
                               psnrY: try r.optionalNumber("psnr_y"), qp: try r.optionalNumber("qp"), psnrU: try r.optionalNumber("psnr_u"),
                               psnrV: try r.optionalNumber("psnr_v"), ssim: try r.optionalNumber("ssim"))
        }
    }

    /// The display index of a run's worst-PSNR frame: the lowest `psnr_avg`, the lowest display index among equals;
    /// nil when no frame has a PSNR (or the index does not fit an Int).
    func reportWorstPSNRFrame(run runID: Int64) throws -> Int? {
        let worst = try database.query("""
            SELECT display_index FROM frames WHERE run_id = ? AND psnr_avg IS NOT NULL ORDER BY psnr_avg, display_index LIMIT 1
            """, [.integer(runID)])
        return worst.first?.first?.int.flatMap { Int(exactly: $0) }
    }

    /// A run's filler data: bytes of filler NAL units over its frames (`frames.filler_bytes`) and the frames that
    /// carry any.
    struct ReportFiller: Equatable {
        var bytes: Int64
        var frames: Int64
    }

    /// The filler of each run in `runIDs` (runs with no frames have none).
    func reportFiller(runs runIDs: [Int64]) throws -> [Int64: ReportFiller] {
        var out: [Int64: ReportFiller] = [:]
        for id in runIDs {
            for values in try database.query("SELECT coalesce(sum(filler_bytes), 0), count(*) FILTER (WHERE filler_bytes > 0) FROM frames WHERE run_id = ?",
                                             [.integer(id)]) {
                out[id] = ReportFiller(bytes: values[0].int ?? 0, frames: values[1].int ?? 0)
            }
        }
        return out
    }

    /// Per run id, `timestamp_analysis.non_increasing_input_pts` (input PTS that repeat or go back, in input order);
    /// empty when the database has no such table.
    func reportNonIncreasingInputPTS() throws -> [Int64: Int64] {
        try reportCountPerRun(table: "timestamp_analysis", "SELECT run_id, non_increasing_input_pts FROM timestamp_analysis WHERE non_increasing_input_pts > 0")
    }

    /// Per run id, its count of pictures the encoder dropped (`skipped_frames`, OpenH264's frame skip); runs without
    /// any are absent; empty when the database has no such table.
    func reportSkippedCounts() throws -> [Int64: Int64] {
        try reportCountPerRun(table: "skipped_frames", "SELECT run_id, count(*) FROM skipped_frames GROUP BY run_id")
    }

    /// Per run id, its frames identical to their source pictures in the lab's decode (`frames.sse_y`, `sse_u` and
    /// `sse_v` all 0: a lossless encode); runs without any are absent.
    func reportIdenticalFrameCounts() throws -> [Int64: Int64] {
        try reportCountPerRun(table: "frames", "SELECT run_id, count(*) FROM frames WHERE sse_y = 0 AND sse_u = 0 AND sse_v = 0 GROUP BY run_id")
    }

    /// The rows (run id, count) of `sql`, a query of `table`, by run id; empty when the database has no such table.
    private func reportCountPerRun(table: String, _ sql: String) throws -> [Int64: Int64] {
        guard try reportHasTable(table) else { return [:] }
        var out: [Int64: Int64] = [:]
        for values in try database.query(sql) {
            if let id = values[0].int, let n = values[1].int { out[id] = n }
        }
        return out
    }

    /// A run's skipped pictures' input index and PTS (`skipped_frames.input_index`, `pts` in ticks of the run's timebase), in input order; empty for a
    /// run without any or a database without that table.
    func reportSkipped(run runID: Int64) throws -> [(inputIndex: Int, pts: Int64)] {
        guard try reportHasTable("skipped_frames") else { return [] }
        return try database.query("SELECT input_index, pts FROM skipped_frames WHERE run_id = ? ORDER BY input_index", [.integer(runID)]).compactMap { row in
            guard let index = row[0].int, let i = Int(exactly: index), let pts = row[1].int else { return nil }
            return (i, pts)
        }
    }

    /// A run's VideoToolbox rule results as stored (`keyframe_analysis`, `keyframe_violations`, `data_rate_windows`),
    /// and for a run of `enclab check --db` the rules it was checked against (`settings.check.expect`).
    struct ReportRules {
        /// `keyframe_analysis`: MaxKeyFrameInterval (0: none) and MaxKeyFrameIntervalDuration (exact text, "0": none)
        /// as given, the limits applied (nil: none), and the largest GOP.
        struct Keyframes {
            var maxFrames: Int64
            var maxDuration: String
            var vtCompat: Bool
            var frameLimit: Int64?
            var durationLimit: String?
            var largestGOPFrames: Int64
            var largestGOPSeconds: Double
            var violations: Int64
            /// `keyframe_analysis.actual`: the stream's IDR pictures as display indices (empty when unreadable).
            var keyframes: [Int64] = []
            /// `runs.frames`: the stream's frame count (the end of its last GOP); nil when not stored.
            var streamFrames: Int64? = nil
        }
        /// One `keyframe_violations` row: frames are display indices (the end may be the frame count: the end of
        /// the stream).
        struct KeyframeViolation {
            var kind: String
            var startFrame: Int64
            var endFrame: Int64
            var frames: Int64
            var durationSeconds: Double
            var duration: String
        }
        /// One `data_rate_windows` row: a DataRateLimits pair, its windows and the worst (coded indices).
        struct Window {
            var pair: Int64
            var bytes: Int64
            var seconds: String
            var honoured: Bool
            var windows: Int64
            var windowsOver: Int64
            var worstStartFrame: Int64?
            var worstEndFrame: Int64?
            var worstBytes: Int64?
            var worstRatio: Double?
        }
        var keyframes: Keyframes?
        var keyframeViolations: [KeyframeViolation] = []
        var windows: [Window] = []
        /// `NAME` to `VALUE` of `settings.check.expect` (a check run); empty for an encode.
        var expected: [String: String] = [:]
    }

    /// A stored JSON array of display indices (`keyframe_analysis.actual`, "[0,52,104]") as numbers; empty for NULL
    /// or a text that is not such an array.
    static func reportIndices(_ text: String?) -> [Int64] {
        guard let text, text.hasPrefix("["), text.hasSuffix("]") else { return [] }
        let items = text.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let numbers = items.compactMap { Int64($0) }
        return numbers.count == items.count ? numbers : []
    }

    /// The rule results of every run that has any.
    /// - Throws: `.data` naming the database, the table and the run for a NOT NULL column holding NULL.
    func reportRules() throws -> [Int64: ReportRules] {
        var out: [Int64: ReportRules] = [:]
        let path = database.path
        if try reportHasTable("keyframe_analysis") {
            for row in try database.rows("""
                SELECT k.run_id AS run_id, k.max_frames AS max_frames, k.max_duration AS max_duration, k.vt_compat AS vt_compat,
                       k.frame_limit AS frame_limit, k.duration_limit AS duration_limit, k.largest_gop_frames AS largest_gop_frames,
                       k.largest_gop_s AS largest_gop_s, k.violations AS violations, k.actual AS actual, r.frames AS stream_frames
                FROM keyframe_analysis k LEFT JOIN runs r ON r.run_id = k.run_id ORDER BY k.run_id
                """) {
                let id = try row.integer("run_id")
                let r = row.at("\(path): keyframe_analysis of run \(id)")
                out[id, default: ReportRules()].keyframes = .init(
                    maxFrames: try r.integer("max_frames"), maxDuration: try r.text("max_duration"), vtCompat: try r.integer("vt_compat") != 0,
                    frameLimit: r["frame_limit"].int, durationLimit: r["duration_limit"].string, largestGOPFrames: try r.integer("largest_gop_frames"),
                    largestGOPSeconds: try r.optionalNumber("largest_gop_s") ?? 0, violations: try r.integer("violations"),
                    keyframes: Self.reportIndices(r["actual"].string), streamFrames: r["stream_frames"].int)
            }
        }
        if try reportHasTable("keyframe_violations") {
            for row in try database.rows("""
                SELECT run_id, kind, start_frame, end_frame, frames, duration_s, duration FROM keyframe_violations ORDER BY run_id, ordinal
                """) {
                let id = try row.integer("run_id")
                let r = row.at("\(path): keyframe_violations of run \(id)")
                out[id, default: ReportRules()].keyframeViolations.append(.init(
                    kind: try r.text("kind"), startFrame: try r.integer("start_frame"), endFrame: try r.integer("end_frame"),
                    frames: try r.integer("frames"), durationSeconds: try r.optionalNumber("duration_s") ?? 0, duration: try r.text("duration")))
            }
        }
        if try reportHasTable("data_rate_windows") {
            for row in try database.rows("""
                SELECT run_id, pair, bytes, seconds, honoured, windows, windows_over, worst_start_frame, worst_end_frame, worst_bytes, worst_ratio
                FROM data_rate_windows ORDER BY run_id, pair
                """) {
                let id = try row.integer("run_id")
                let r = row.at("\(path): data_rate_windows of run \(id)")
                out[id, default: ReportRules()].windows.append(.init(
                    pair: try r.integer("pair"), bytes: try r.integer("bytes"), seconds: try r.text("seconds"), honoured: try r.integer("honoured") != 0,
                    windows: try r.integer("windows"), windowsOver: try r.integer("windows_over"), worstStartFrame: r["worst_start_frame"].int,
                    worstEndFrame: r["worst_end_frame"].int, worstBytes: r["worst_bytes"].int, worstRatio: try r.optionalNumber("worst_ratio")))
            }
        }
        // The rules a check run was checked against, as stored with it (RuleCheck.record).
        for values in try database.query("""
            SELECT r.run_id, e.key, e.value
            FROM runs r, json_each(CASE WHEN json_valid(r.settings) AND json_type(r.settings, '$.check.expect') = 'object'
                                        THEN r.settings ELSE '{}' END, '$.check.expect') e
            WHERE r.experiment = ?
            """, [.text(CheckRuns.experiment)]) {
            guard let id = values[0].int, let name = values[1].string else { continue }
            let value = values[2].string ?? values[2].int.map(String.init) ?? values[2].double.map { "\($0)" } ?? ""
            out[id, default: ReportRules()].expected[name] = value
        }
        return out
    }
}
