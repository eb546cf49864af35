import Foundation
import Testing
@testable import EncoderLab

/// Run keys (one done run per key, replaced only when asked), the clip hash cache, and the columns that only an
/// x264 run fills. The sqlite3 CLI reads the results and writes the rows the lab would not.
@Suite("SQLite store: run keys, clip hashes, NULL columns")
struct StoreKeyTests {
    @discardableResult
    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }
    static let key = RecordRunTests.key

    static func done(key: String?) -> LabStore.RunRecord {
        var record = RecordRunTests.doneRecord()
        record.runKey = key
        return record
    }

    static func failed(key: String?) -> LabStore.RunRecord {
        var record = RecordRunTests.failedRecord
        record.runKey = key
        return record
    }

    /// Every row of every table, as sqlite3 prints them.
    static let everything = """
        SELECT * FROM runs ORDER BY run_id; SELECT * FROM frames ORDER BY run_id, coded_index;
        SELECT * FROM parameter_sets ORDER BY run_id; SELECT * FROM bitstream_checks ORDER BY run_id, name;
        SELECT * FROM decoded_frames ORDER BY run_id; SELECT * FROM sqlite_sequence;
        """

    /// A `runs` row written by sqlite3 itself, so the index is tested without the store's own check.
    static func insertRun(key: String, status: String) -> String {
        """
        INSERT INTO runs (run_key, experiment, clip, settings, status, lab_version, machine, created_at)
        VALUES ('\(key)', 'e', 'c', '{}', '\(status)', '0', '{}', 't');
        """
    }

    @Test("a key is held by one done run: a second done record with it is refused (64) and changes nothing; failed runs and NULL keys repeat")
    func oneDoneRunPerKey() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        let (k1, k2) = (Self.key("1"), Self.key("2"))
        #expect(try store.recordRun(Self.done(key: k1), beforeCommit: { _ in }) == 1)
        let before = try Self.sqlite(path, Self.everything)
        var called = false
        #expect(throws: LabError(.usage, "\(path): run 1 of 2027-01-15T08:00:00Z has run key \(k1) already (the same clip and settings); --force replaces it")) {
            try store.recordRun(Self.done(key: k1), beforeCommit: { _ in called = true })
        }
        #expect(!called)
        #expect(try Self.sqlite(path, Self.everything) == before)
        // Failed runs with the key, another key, and runs without a key.
        #expect(try store.recordRun(Self.failed(key: k1), beforeCommit: { _ in }) == 2)
        #expect(try store.recordRun(Self.failed(key: k1), beforeCommit: { _ in }) == 3)
        #expect(try store.recordRun(Self.done(key: k2), beforeCommit: { _ in }) == 4)
        #expect(try store.recordRun(Self.done(key: nil), beforeCommit: { _ in }) == 5)
        #expect(try store.recordRun(Self.done(key: nil), beforeCommit: { _ in }) == 6)
        #expect(try Self.sqlite(path, "SELECT run_id, status, coalesce(run_key, 'NULL') = '\(k1)' FROM runs") ==
                ["1|done|1", "2|failed|1", "3|failed|1", "4|done|0", "5|done|0", "6|done|0"])
        #expect(try store.doneRun(key: k1)?.runID == 1 && store.doneRun(key: k2)?.runID == 4)
        #expect(try store.doneRun(key: Self.key("3")) == nil)
        // The index itself, written to by sqlite3: a second done row with k1 is refused, a failed one is not.
        let refused = try Witness.run("sqlite3", [path, Self.insertRun(key: k1, status: "done")])
        #expect(refused.status != 0 && refused.stderr.contains("UNIQUE constraint failed: runs.run_key"))
        #expect(try Witness.run("sqlite3", [path, Self.insertRun(key: k1, status: "failed")]).status == 0)
        #expect(try Self.sqlite(path, "SELECT count(*) FROM runs WHERE run_key = '\(k1)'; SELECT count(*) FROM runs") == ["4", "7"])
    }

    /// The tables that hold a run's rows, and the orphans among them (rows of a run that is not in `runs`).
    static let childTables = ["frames", "parameter_sets", "bitstream_checks", "decoded_frames"]
    static let orphans = childTables.map { "SELECT '\($0)', count(*) FROM \($0) WHERE run_id NOT IN (SELECT run_id FROM runs);" }
        .joined(separator: " ")

    @Test("replacing deletes the done run with the key and all its rows in the same transaction; no orphan is left")
    func replacing() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        let (k1, k2) = (Self.key("1"), Self.key("2"))
        try store.recordRun(Self.done(key: k1), beforeCommit: { _ in })
        try store.recordRun(Self.done(key: k2), beforeCommit: { _ in })
        try store.recordRun(Self.failed(key: k1), beforeCommit: { _ in })
        let perRun = "SELECT run_id, " + Self.childTables.map { "(SELECT count(*) FROM \($0) c WHERE c.run_id = r.run_id)" }
            .joined(separator: " || ',' || ") + " FROM runs r WHERE status = 'done' ORDER BY run_id"
        // Each done run holds 2 frames, 1 parameter set, 1 check, 1 decoded frame (RecordRunTests.doneRecord).
        #expect(try Self.sqlite(path, perRun) == ["1|2,1,1,1", "2|2,1,1,1"])
        var seenInside: [String] = []
        let id = try store.recordRun(Self.done(key: k1), replacing: true, beforeCommit: { _ in
            // Not yet committed: another process still sees run 1.
            seenInside = (try? Self.sqlite(path, "SELECT group_concat(run_id) FROM runs")) ?? ["error"]
        })
        #expect(id == 4)
        #expect(seenInside == ["1,2,3"])
        #expect(try Self.sqlite(path, "SELECT run_id, status, run_key = '\(k1)', stream_path FROM runs ORDER BY run_id") ==
                ["2|done|0|OUT/run-2/stream.264", "3|failed|1|", "4|done|1|OUT/run-4/stream.264"])
        #expect(try Self.sqlite(path, perRun) == ["2|2,1,1,1", "4|2,1,1,1"])
        #expect(try Self.sqlite(path, Self.orphans) == ["frames|0", "parameter_sets|0", "bitstream_checks|0", "decoded_frames|0"])
        #expect(try Self.sqlite(path, "PRAGMA foreign_key_check; SELECT seq FROM sqlite_sequence WHERE name = 'runs'") == ["4"])
        #expect(try store.doneRun(key: k1)?.runID == 4)
        // Replacing a key no run holds just records the run.
        #expect(try store.recordRun(Self.done(key: Self.key("5")), replacing: true, beforeCommit: { _ in }) == 5)
    }

    struct Refused: Error, Equatable {}

    @Test("a replacement whose beforeCommit throws is rolled back: the replaced run is still there, whole")
    func replacingRolledBack() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        try store.recordRun(Self.done(key: Self.key("1")), beforeCommit: { _ in })
        let before = try Self.sqlite(path, Self.everything)
        #expect(throws: Refused()) {
            try store.recordRun(Self.done(key: Self.key("1")), replacing: true, beforeCommit: { _ in throw Refused() })
        }
        #expect(try Self.sqlite(path, Self.everything) == before)
    }

    @Test("a failed record never replaces: with replacing it is stored beside the done run with its key")
    func failedDoesNotReplace() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        try store.recordRun(Self.done(key: Self.key("1")), beforeCommit: { _ in })
        #expect(try store.recordRun(Self.failed(key: Self.key("1")), replacing: true, beforeCommit: { _ in }) == 2)
        #expect(try Self.sqlite(path, "SELECT run_id, status FROM runs; SELECT count(*) FROM frames") == ["1|done", "2|failed", "2"])
    }

    @Test("a key or clip digest that is not 64 lowercase hex digits is refused by the table's CHECK (70, SQLITE_CONSTRAINT_CHECK)",
          arguments: [String(repeating: "A", count: 64), String(repeating: "1", count: 63), String(repeating: "g", count: 64)])
    func badKey(_ bad: String) throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        var withBadDigest = Self.done(key: Self.key("1"))
        withBadDigest.clipSHA256 = bad
        for record in [Self.done(key: bad), Self.failed(key: bad), withBadDigest] {
            do {
                try store.recordRun(record, beforeCommit: { _ in })
                Issue.record("\(bad) was stored")
            } catch let error as LabError {
                #expect(error.kind == .software && error.message.hasPrefix("\(path): CHECK constraint failed: "))
                #expect(store.database.lastResultCode == 275)  // SQLITE_CONSTRAINT_CHECK = 19 | 1 << 8
            }
        }
        #expect(try Self.sqlite(path, "SELECT count(*) FROM runs") == ["0"])
    }

    @Test("x264_version and frames.qp may be NULL (a stream x264 did not make) and read back as nil")
    func nullColumns() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        var record = Self.done(key: nil)
        record.x264Version = nil
        try store.recordRun(record, beforeCommit: { _ in })
        // A frame without a QP, written by sqlite3.
        try Self.sqlite(path, "INSERT INTO frames (run_id, coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes, pts, dts) VALUES (1, 2, 2, 'P', 0, 9, 0, 0, 2, 1)")
        #expect(try Self.sqlite(path, "SELECT x264_version IS NULL FROM runs; SELECT coded_index, qp IS NULL FROM frames ORDER BY coded_index") ==
                ["1", "0|0", "1|0", "2|1"])
        #expect(try store.runs().map(\.x264Version) == [nil])
        let frames = try store.frames(run: 1)
        #expect(frames.map(\.qp) == [20.5, 30, nil])
        #expect(frames[2].psnrY == nil && frames[2].sizeBytes == 9)
    }

    @Test("the clip hash cache: a digest stored under (device, inode, size, mtime_ns) is found again, by another connection too")
    func clipHashes() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        let (d1, d2) = (Self.key("d"), Self.key("e"))
        // Device and inode use all 64 bits: stored as their bit patterns (UInt64.max is -1, 2^63 + 5 is -2^63 + 5).
        let (device, inode): (UInt64, UInt64) = (.max, 1 << 63 + 5)
        let (size, mtime): (Int64, Int64) = (123_456_789, 1_700_000_000_123_456_789)
        #expect(try store.cachedClipHash(device: device, inode: inode, size: size, mtimeNs: mtime) == nil)
        try store.storeClipHash(device: device, inode: inode, size: size, mtimeNs: mtime, sha256: d1)
        #expect(try Self.sqlite(path, "SELECT * FROM clip_hashes") == ["-1|-9223372036854775803|123456789|1700000000123456789|\(d1)"])
        #expect(try store.cachedClipHash(device: device, inode: inode, size: size, mtimeNs: mtime) == d1)
        let other = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        #expect(try other.cachedClipHash(device: device, inode: inode, size: size, mtimeNs: mtime) == d1)
        // Another state of the file (one nanosecond later, one byte longer) or another file is not found.
        #expect(try store.cachedClipHash(device: device, inode: inode, size: size, mtimeNs: mtime + 1) == nil)
        #expect(try store.cachedClipHash(device: device, inode: inode, size: size + 1, mtimeNs: mtime) == nil)
        #expect(try store.cachedClipHash(device: device, inode: inode - 1, size: size, mtimeNs: mtime) == nil)
        // Storing again replaces; a malformed digest is refused.
        try other.storeClipHash(device: device, inode: inode, size: size, mtimeNs: mtime, sha256: d2)
        #expect(try store.cachedClipHash(device: device, inode: inode, size: size, mtimeNs: mtime) == d2)
        #expect(throws: LabError.self) { try store.storeClipHash(device: 1, inode: 1, size: 1, mtimeNs: 1, sha256: "abc") }
        #expect(try Self.sqlite(path, "SELECT count(*) FROM clip_hashes") == ["1"])
    }
}
