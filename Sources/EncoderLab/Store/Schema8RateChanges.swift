import Foundation
import H264

/// The rate schedule's tables (docs/schema.md, "rate_changes and step_response"): each change of a run's rate schedule
/// with the frame it took effect on (``RateChangeRecord``), and the step response of each (``StepResponse``).
extension LabStore {
    /// The tables schema version 8 adds for rate schedules. Every statement `IF NOT EXISTS`.
    static let version8RateChangesTables = """
    CREATE TABLE IF NOT EXISTS rate_changes (
        run_id           INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        change_index     INTEGER NOT NULL,
        requested_frame  INTEGER,
        requested_time_s REAL,
        name             TEXT NOT NULL,
        value            TEXT NOT NULL,
        x264             TEXT NOT NULL,
        frame            INTEGER,
        applied_frame    INTEGER,
        status           TEXT NOT NULL CHECK (status IN ('applied', 'unchanged', 'ignored', 'refused', 'not-reached')),
        reason           TEXT,
        target_kbps      REAL,
        PRIMARY KEY (run_id, change_index)
    );
    CREATE TABLE IF NOT EXISTS step_response (
        run_id                 INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        change_index           INTEGER NOT NULL,
        start_coded            INTEGER NOT NULL,
        end_coded              INTEGER NOT NULL,
        start_s                REAL NOT NULL,
        target_kbps            REAL,
        tolerance_pct          REAL NOT NULL,
        windows                INTEGER NOT NULL,
        settle_frames          INTEGER,
        settle_s               REAL,
        peak_kbps              REAL,
        low_kbps               REAL,
        overshoot_pct          REAL,
        undershoot_pct         REAL,
        limit_windows          INTEGER,
        limit_windows_over     INTEGER,
        limit_worst_bytes_over INTEGER,
        quality_frames         INTEGER NOT NULL,
        qp_before              REAL,
        qp_after               REAL,
        psnr_y_before          REAL,
        psnr_y_after           REAL,
        PRIMARY KEY (run_id, change_index)
    );
    """

    /// Writes a run's `rate_changes` rows.
    func insertRateChanges(_ runID: Int64, _ changes: [RateChangeRecord]) throws {
        let insert = try database.prepare("""
            INSERT INTO rate_changes (run_id, change_index, requested_frame, requested_time_s, name, value, x264, frame,
                applied_frame, status, reason, target_kbps)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        for c in changes {
            try insert.run([.integer(runID), .integer(Int64(c.changeIndex)), int(c.requestedFrame), c.requestedTimeSeconds.map(SQLValue.real) ?? .null,
                            .text(c.name), .text(c.value), .text(c.x264), int(c.frame), int(c.appliedFrame), .text(c.status),
                            c.reason.map(SQLValue.text) ?? .null, c.targetKbps.map(SQLValue.real) ?? .null])
        }
    }
}

extension StepResponse {
    /// Computes the step response of run `runID`'s changes from the stored frames and `rate_changes` (nothing when the
    /// run has none) and writes `step_response`, replacing the run's rows, inside the caller's transaction. The
    /// tolerance is the run's `settle_tolerance_pct` setting (``defaultTolerancePercent`` without one); the last
    /// frame lasts one nominal frame duration.
    /// - Throws: `.data` for a run without its timebase or frame rate; the database's errors.
    @discardableResult
    public static func record(store: LabStore, runID: Int64) throws -> [Result] {
        let db = store.database
        let changes = try db.rows("""
            SELECT change_index, name, value, frame, target_kbps FROM rate_changes WHERE run_id = ? AND frame IS NOT NULL ORDER BY change_index
            """, [.integer(runID)])
        guard !changes.isEmpty else { return [] }
        guard let run = try db.rows("SELECT timebase_num, timebase_den, fps_num, fps_den, settings FROM runs WHERE run_id = ?", [.integer(runID)]).first,
              let tn = run["timebase_num"].int, let td = run["timebase_den"].int, let fn = run["fps_num"].int, let fd = run["fps_den"].int,
              tn > 0, td > 0, fn > 0, fd > 0 else {
            throw LabError.data("\(db.path): run \(runID) has rate changes but no timebase or frame rate")
        }
        let timebase = try Rational(tn, td)
        let lastTicks = try (try Rational(fd, fn)) / timebase
        var tolerance = defaultTolerancePercent
        if let text = run["settings"].string, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
           let t = (object["settle_tolerance_pct"] as? NSNumber)?.doubleValue, t > 0 {
            tolerance = t
        }
        let frames = try db.rows("""
            SELECT display_index, dts, size_bytes, qp, psnr_y FROM frames WHERE run_id = ? ORDER BY coded_index
            """, [.integer(runID)]).map {
            Frame(displayIndex: Int(try $0.integer("display_index")), dts: try $0.integer("dts"), sizeBytes: Int(try $0.integer("size_bytes")),
                  qp: $0["qp"].double, psnrY: $0["psnr_y"].double)
        }
        let input = try changes.map { row -> Change in
            let name = try row.text("name")
            let limits = name == RateSchedule.Name.dataRateLimits.rawValue ? try DataRateLimits(parsing: try row.text("value")) : nil
            return Change(changeIndex: Int(try row.integer("change_index")), frame: Int(try row.integer("frame")),
                          targetKbps: row["target_kbps"].double, limits: limits)
        }
        let results = compute(frames: frames, timebase: timebase, lastFrameTicks: lastTicks, changes: input, tolerancePercent: tolerance)
        try db.prepare("DELETE FROM step_response WHERE run_id = ?").run([.integer(runID)])
        let insert = try db.prepare("""
            INSERT INTO step_response (run_id, change_index, start_coded, end_coded, start_s, target_kbps, tolerance_pct, windows,
                settle_frames, settle_s, peak_kbps, low_kbps, overshoot_pct, undershoot_pct, limit_windows, limit_windows_over,
                limit_worst_bytes_over, quality_frames, qp_before, qp_after, psnr_y_before, psnr_y_after)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        func real(_ v: Double?) -> SQLValue { v.map(SQLValue.real) ?? .null }
        for r in results {
            try insert.run([.integer(runID), int(r.changeIndex), int(r.startCoded), int(r.endCoded), .real(r.startSeconds), real(r.targetKbps),
                            .real(r.tolerancePercent), int(r.windows), int(r.settleFrames), real(r.settleSeconds), real(r.peakKbps),
                            real(r.lowKbps), real(r.overshootPercent), real(r.undershootPercent), int(r.limitWindows),
                            int(r.limitWindowsOver), r.limitWorstBytesOver.map(SQLValue.integer) ?? .null, int(r.qualityFrames),
                            real(r.qpBefore), real(r.qpAfter), real(r.psnrBefore), real(r.psnrAfter)])
        }
        return results
    }
}

extension LabStore {
    /// One stored `rate_changes` row with its `step_response` (NULL when none), as the plots and the report read it.
    public struct StoredRateChange: Sendable, Equatable {
        public var changeIndex: Int
        public var name: String
        public var value: String
        /// The display index of the picture that carried it; nil when not reached.
        public var frame: Int?
        public var status: String
        public var targetKbps: Double?
        /// The frame or the time (seconds) the schedule named.
        public var requestedFrame: Int? = nil
        public var requestedSeconds: Double? = nil
        /// What x264 was handed (`x264` column), and why the status (`reason`).
        public var x264: String = ""
        public var reason: String? = nil
        /// `step_response`: settling (frames, seconds), overshoot and undershoot (%).
        public var settleFrames: Int? = nil
        public var settleSeconds: Double? = nil
        public var overshootPercent: Double? = nil
        public var undershootPercent: Double? = nil
    }

    /// Run `runID`'s `rate_changes` rows by change index, each with its `step_response` row (none for a run without a
    /// schedule, or a database older than schema 8).
    public func rateChanges(run runID: Int64) throws -> [StoredRateChange] {
        guard try !database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rate_changes'").isEmpty else { return [] }
        return try database.rows("""
            SELECT c.change_index, c.name, c.value, c.frame, c.status, c.target_kbps, c.requested_frame, c.requested_time_s, c.x264,
                   c.reason, s.settle_frames, s.settle_s, s.overshoot_pct, s.undershoot_pct
            FROM rate_changes c LEFT JOIN step_response s USING (run_id, change_index) WHERE c.run_id = ? ORDER BY c.change_index
            """, [.integer(runID)]).map {
            StoredRateChange(changeIndex: Int(try $0.integer("change_index")), name: try $0.text("name"), value: try $0.text("value"),
                             frame: $0["frame"].int.map { Int($0) }, status: try $0.text("status"), targetKbps: $0["target_kbps"].double,
                             requestedFrame: $0["requested_frame"].int.map { Int($0) }, requestedSeconds: $0["requested_time_s"].double,
                             x264: $0["x264"].string ?? "", reason: $0["reason"].string,
                             settleFrames: $0["settle_frames"].int.map { Int($0) }, settleSeconds: $0["settle_s"].double,
                             overshootPercent: $0["overshoot_pct"].double, undershootPercent: $0["undershoot_pct"].double)
        }
    }
}
