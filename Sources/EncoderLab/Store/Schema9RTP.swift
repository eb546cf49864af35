import Foundation

/// Schema version 9's RTP tables (issue 23; docs/schema.md "RTP stage"), literal and frozen: what a run's RTP stage
/// (`--rtp`, `--loss`) measured. `rtp_frames`: per coded frame (decode order) its display index, the RTP packets and
/// bytes (headers included) its access unit took, and with a loss model how many of them the channel lost.
/// `rtp_loss_frames` (with a loss model): per displayed frame the damaged decode's state (`intact`, `broken`: more than
/// 0.5 dB under the loss-free decode, `frozen`: not output, the picture before shown again), whether libavcodec flagged
/// it concealed, the squared errors and PSNR of what was shown against the source, the loss-free decode's luma PSNR, and
/// the frame's place in its loss event. `rtp_runs`: per run the packetizer's settings, packets, the most packets and
/// bytes of one frame, the RTP overhead; with a loss model the channel's spec, RFC 3550's receiver counts, and the
/// cost: broken and frozen frames, loss events, frames until recovery. Every statement `IF NOT EXISTS`.
extension LabStore {
    static let version9RTPTables = """
    CREATE TABLE IF NOT EXISTS rtp_frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        coded_index   INTEGER NOT NULL CHECK (coded_index >= 0),
        display_index INTEGER NOT NULL CHECK (display_index >= 0),
        packets       INTEGER NOT NULL CHECK (packets >= 1),
        rtp_bytes     INTEGER NOT NULL CHECK (rtp_bytes >= 12),
        lost_packets  INTEGER CHECK (lost_packets >= 0 AND lost_packets <= packets),
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE TABLE IF NOT EXISTS rtp_loss_frames (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        display_index  INTEGER NOT NULL CHECK (display_index >= 0),
        state          TEXT NOT NULL CHECK (state IN ('intact', 'broken', 'frozen')),
        concealed      INTEGER NOT NULL CHECK (concealed IN (0, 1)),
        sse_y          INTEGER NOT NULL CHECK (sse_y >= 0),
        sse_u          INTEGER NOT NULL CHECK (sse_u >= 0),
        sse_v          INTEGER NOT NULL CHECK (sse_v >= 0),
        psnr_y         REAL,
        psnr_avg       REAL,
        lossfree_psnr_y REAL,
        event_frame    INTEGER CHECK (event_frame >= 0),
        PRIMARY KEY (run_id, display_index)
    );
    CREATE TABLE IF NOT EXISTS rtp_runs (
        run_id                 INTEGER PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
        mtu                    INTEGER NOT NULL CHECK (mtu >= 28),
        packetization_mode     INTEGER NOT NULL CHECK (packetization_mode IN (0, 1)),
        packets                INTEGER NOT NULL CHECK (packets >= 0),
        max_packets_per_frame  INTEGER NOT NULL CHECK (max_packets_per_frame >= 0),
        mean_packets_per_frame REAL NOT NULL,
        largest_burst_bytes    INTEGER NOT NULL CHECK (largest_burst_bytes >= 0),
        rtp_overhead_bytes     INTEGER NOT NULL CHECK (rtp_overhead_bytes >= 0),
        payload_bytes          INTEGER NOT NULL CHECK (payload_bytes >= 0),
        loss                   TEXT,
        expected_loss_rate     REAL,
        packets_lost           INTEGER,
        packets_received       INTEGER,
        duplicates             INTEGER,
        reordered              INTEGER,
        jitter_ticks           REAL,
        nal_units_discarded    INTEGER,
        refused_access_units   INTEGER,
        frames_broken          INTEGER,
        frames_frozen          INTEGER,
        frames_concealed       INTEGER,
        loss_events            INTEGER,
        unrecovered_events     INTEGER,
        mean_recovery_frames   REAL,
        max_recovery_frames    INTEGER,
        mean_psnr_y            REAL,
        lossfree_mean_psnr_y   REAL
    );
    """

    /// Writes a run's `rtp_frames`, `rtp_loss_frames` and `rtp_runs` rows, as given.
    func insertRTP(_ runID: Int64, _ m: RTPRunMeasurements) throws {
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        func real(_ v: Double?) -> SQLValue { v.map { .real($0) } ?? .null }
        let frames = try database.prepare("""
            INSERT INTO rtp_frames (run_id, coded_index, display_index, packets, rtp_bytes, lost_packets) VALUES (?, ?, ?, ?, ?, ?)
            """)
        for f in m.frames {
            try frames.run([.integer(runID), int(f.codedIndex), int(f.displayIndex), int(f.packets), int(f.rtpBytes), int(f.lostPackets)])
        }
        let loss = try database.prepare("""
            INSERT INTO rtp_loss_frames (run_id, display_index, state, concealed, sse_y, sse_u, sse_v, psnr_y, psnr_avg,
                lossfree_psnr_y, event_frame) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for f in m.lossFrames {
            try loss.run([.integer(runID), int(f.displayIndex), .text(f.state.rawValue), int(f.concealed ? 1 : 0),
                          .integer(f.errors.sseY), .integer(f.errors.sseU), .integer(f.errors.sseV), real(f.psnr.y), real(f.psnr.avg),
                          real(f.lossFreePSNRY), int(f.eventFrame)])
        }
        let s = m.summary, st = m.statistics, lossy = m.settings.channel != nil
        // Means over every displayed frame, affected or not (docs/rtp.md); a PSNR of nil (no error at all, or no
        // loss-free picture in a slot the encoder skipped) is left out.
        func mean(_ values: [Double?]) -> Double? {
            let v = values.compactMap { $0 }
            return v.isEmpty ? nil : v.reduce(0, +) / Double(v.count)
        }
        try database.prepare("""
            INSERT INTO rtp_runs (run_id, mtu, packetization_mode, packets, max_packets_per_frame, mean_packets_per_frame,
                largest_burst_bytes, rtp_overhead_bytes, payload_bytes, loss, expected_loss_rate, packets_lost, packets_received,
                duplicates, reordered, jitter_ticks, nal_units_discarded, refused_access_units, frames_broken, frames_frozen,
                frames_concealed, loss_events, unrecovered_events, mean_recovery_frames, max_recovery_frames, mean_psnr_y,
                lossfree_mean_psnr_y) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).run([
                .integer(runID), int(m.settings.mtu), int(m.settings.mode.packetizationMode), int(m.packets),
                int(m.frames.map(\.packets).max() ?? 0), .real(m.frames.isEmpty ? 0 : Double(m.packets) / Double(m.frames.count)),
                int(m.largestBurstBytes), int(m.rtpOverheadBytes), int(m.payloadBytes),
                m.settings.lossSpec.map { .text($0) } ?? .null, real(m.settings.channel?.loss.expectedLossRate),
                lossy ? int(m.packetsLost) : .null, int(st?.received), int(st?.duplicates), int(st?.reordered), real(st?.jitterTicks),
                int(st?.discardedNALUnits), lossy ? int(m.refusedAccessUnits) : .null, int(s?.broken), int(s?.frozen),
                lossy ? int(m.lossFrames.filter(\.concealed).count) : .null, int(s?.events.count), int(s?.unrecovered),
                real(s?.meanRecoveryFrames), int(s?.maxRecoveryFrames),
                lossy ? real(mean(m.lossFrames.map(\.psnr.y))) : .null, lossy ? real(mean(m.lossFrames.map(\.lossFreePSNRY))) : .null,
            ])
    }
}

extension LabStore {
    /// One coded frame of a run's RTP stage, with its displayed frame under loss when the run had a loss model.
    public struct StoredRTPFrame: Sendable, Equatable {
        public var codedIndex: Int
        public var displayIndex: Int
        public var packets: Int
        /// The bytes of the frame's RTP packets, headers included (`rtp_frames.rtp_bytes`): the burst the frame sends.
        public var rtpBytes: Int
        public var lostPackets: Int?
        /// `rtp_loss_frames` of the same display index: state, luma PSNR under loss and loss-free (nil: no error).
        public var state: String?
        public var psnrY: Double?
        public var lossFreePSNRY: Double?
    }

    /// Run `runID`'s `rtp_frames` joined with its `rtp_loss_frames` by display index, in decode order (none for a run
    /// without the RTP stage, or a database older than schema 9).
    public func rtpFrames(run runID: Int64) throws -> [StoredRTPFrame] {
        guard try !database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rtp_frames'").isEmpty else { return [] }
        return try database.rows("""
            SELECT f.coded_index, f.display_index, f.packets, f.rtp_bytes, f.lost_packets, l.state, l.psnr_y, l.lossfree_psnr_y
            FROM rtp_frames AS f LEFT JOIN rtp_loss_frames AS l ON l.run_id = f.run_id AND l.display_index = f.display_index
            WHERE f.run_id = ? ORDER BY f.coded_index
            """, [.integer(runID)]).map {
            StoredRTPFrame(codedIndex: Int(try $0.integer("coded_index")), displayIndex: Int(try $0.integer("display_index")),
                           packets: Int(try $0.integer("packets")), rtpBytes: Int(try $0.integer("rtp_bytes")), lostPackets: $0["lost_packets"].int.map { Int($0) },
                           state: $0["state"].string, psnrY: $0["psnr_y"].double, lossFreePSNRY: $0["lossfree_psnr_y"].double)
        }
    }

    /// Every run's `rtp_runs` row, column name to value, by run id (empty for a database older than schema 9).
    func reportRTPRuns() throws -> [Int64: [String: SQLValue]] {
        guard try !database.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rtp_runs'").isEmpty else { return [:] }
        var out: [Int64: [String: SQLValue]] = [:]
        for row in try database.rows("SELECT * FROM rtp_runs") {
            var values: [String: SQLValue] = [:]
            for (name, _) in row.indexes { values[name] = row[name] }
            guard let id = row["run_id"].int else { continue }
            out[id] = values
        }
        return out
    }
}
