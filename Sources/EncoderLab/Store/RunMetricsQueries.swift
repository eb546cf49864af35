import Foundation

/// The statements of ``RunMetrics`` (`enclab analyze`, `enclab compare`, and the metrics recorded with each run): what
/// it reads of a run and writes to `run_metrics` and `run_gops`. Values that a damaged database may hold in the wrong
/// kind are handed over as stored (``SQLValue``), so the analysis names the run, frame and column it refuses.
extension Database {
    /// Run `runID`'s `runs` row, or nil when there is none.
    func metricsRun(id runID: Int64) throws -> RunMetrics.StoredRun? {
        try rows("SELECT * FROM runs WHERE run_id = ?", [.integer(runID)]).first.map {
            RunMetrics.StoredRun(status: $0["status"], settings: $0["settings"], timebaseNum: $0["timebase_num"],
                                 timebaseDen: $0["timebase_den"], fpsNum: $0["fps_num"], fpsDen: $0["fps_den"], width: $0["width"],
                                 height: $0["height"])
        }
    }

    /// Run `runID`'s frames in coded order.
    func metricsFrames(run runID: Int64) throws -> [RunMetrics.StoredFrame] {
        try rows("""
            SELECT coded_index, type, keyframe, size_bytes, pts, dts, qp, sse_y, sse_u, sse_v, ssim
            FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).map {
            RunMetrics.StoredFrame(codedIndex: $0["coded_index"], type: $0["type"], keyframe: $0["keyframe"],
                                   sizeBytes: $0["size_bytes"], pts: $0["pts"], dts: $0["dts"], qp: $0["qp"], sseY: $0["sse_y"],
                                   sseU: $0["sse_u"], sseV: $0["sse_v"], ssim: $0["ssim"])
        }
    }

    /// `timestamp_analysis.span_ticks` of run `runID`; nil without a row, or when it is NULL or not an integer.
    func timestampSpanTicks(run runID: Int64) throws -> Int64? {
        try rows("SELECT span_ticks FROM timestamp_analysis WHERE run_id = ?", [.integer(runID)]).first?["span_ticks"].int
    }

    /// Whether the file has a table named `name`.
    func hasTable(_ name: String) throws -> Bool {
        try !rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]).isEmpty
    }

    /// Run `runID`'s `run_metrics` row, each column of ``LabStore/runMetricsColumns`` by name as stored; nil without
    /// the table (a file older than version 6) or without a row.
    func storedRunMetrics(run runID: Int64) throws -> [String: SQLValue]? {
        guard try hasTable("run_metrics"),
              let row = try rows("SELECT * FROM run_metrics WHERE run_id = ?", [.integer(runID)]).first else { return nil }
        var out: [String: SQLValue] = [:]
        for (name, _) in LabStore.runMetricsColumns { out[name] = row[name] }
        return out
    }

    /// Replaces run `metrics.runID`'s rows in `run_metrics` and `run_gops` with these (a column `metrics` lacks is
    /// NULL). Runs no transaction of its own.
    func replaceRunMetrics(_ metrics: RunMetrics) throws {
        let runID = metrics.runID
        try prepare("DELETE FROM run_gops WHERE run_id = ?").run([.integer(runID)])
        try prepare("DELETE FROM run_metrics WHERE run_id = ?").run([.integer(runID)])
        let names = LabStore.runMetricsColumns.map(\.name)
        try prepare("""
            INSERT INTO run_metrics (run_id, \(names.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: names.count)))
            """).run([.integer(runID)] + names.map { metrics.columns[$0] ?? .null })
        let insert = try prepare("""
            INSERT INTO run_gops (run_id, gop_index, first_frame, keyframe, frames, seconds, bytes, kbps) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for g in metrics.gops {
            try insert.run([.integer(runID), .integer(Int64(g.index)), .integer(Int64(g.firstFrame)), .integer(g.keyframe ? 1 : 0),
                            .integer(Int64(g.frames)), g.seconds.map(SQLValue.real) ?? .null, .integer(g.bytes),
                            g.kbps.map(SQLValue.real) ?? .null])
        }
    }

    /// Copies the whole database into a new file at `path` (`VACUUM INTO`), which must not exist.
    func vacuum(into path: String) throws {
        try prepare("VACUUM INTO ?").run([.text(path)])
    }

    /// `runs.run_key` by run id for the rows that have one; none when `runs` has no such column (a file of schema
    /// version 1 or older, read without migrating).
    func runKeys() throws -> [Int64: String] {
        let column = try query("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'run_key'")
        guard !column.isEmpty else { return [:] }
        var keys: [Int64: String] = [:]
        for row in try rows("SELECT run_id, run_key FROM runs WHERE run_key IS NOT NULL") {
            keys[try row.integer("run_id")] = try row.text("run_key")
        }
        return keys
    }
}
