import Foundation
import Testing
@testable import EncoderLab

@Suite("SQLite store")
struct StoreTests {
    @Test("a run's row and frames read back as recorded, with sqlite3 as the reader")
    func roundTrip() throws {
        let scratch = Scratch()
        let clip = SyntheticClip(width: 64, height: 48, frames: 12, fpsNum: 30000, fpsDen: 1001, seed: 2, extraTags: ["A128:117"])
        try clip.write(to: scratch.file("c.y4m"))
        let (outcome, _) = try labEncode(scratch.file("c.y4m"), ["--threads", "1", "--bframes", "2"], in: scratch)
        // Read with the sqlite3 CLI, not our wrapper.
        let out = try Witness.run("sqlite3", ["-separator", "|", scratch.file("lab.sqlite"), """
            SELECT status, frames, bytes, printf('%.6f', duration_s), timebase_num, timebase_den, stream_path, crop IS NULL,
                   x264_version, lab_version, ffmpeg_version IS NULL, json_extract(machine, '$.cores') > 0,
                   created_at LIKE '____-__-__T__:__:__Z', width, height
            FROM runs;
            SELECT sum(size_bytes), count(*), min(coded_index), max(coded_index), count(DISTINCT display_index) FROM frames;
            """])
        let lines = out.stdout.split(separator: "\n").map(String.init)
        let size = try FileManager.default.attributesOfItem(atPath: outcome.streamPath)[.size] as! Int
        // 12 frames at 30000/1001 fps last 12 * 1001 / 30000 = 0.4004 s.
        #expect(lines[0] == "done|12|\(size)|0.400400|1001|30000|\(outcome.streamPath)|1|\(x264Version)|\(labVersion)|1|1|1|64|48")
        #expect(lines[1] == "\(size)|12|0|11|12")
    }

    @Test("a failed run keeps no frames and says why")
    func failedRun() throws {
        let scratch = Scratch()
        let store = try LabStore(path: scratch.file("s.sqlite"))
        let start = LabStore.RunStart(experiment: "x", clip: "c", settingsJSON: "{}", crop: nil, ffmpegVersion: nil,
                                      width: 2, height: 2, fpsNum: 1, fpsDen: 1)
        try store.recordRun(.init(start: start, createdAt: Date(), warnings: [], outcome: .failed(error: "boom")), beforeCommit: { _ in })
        let rows = try store.database.query("SELECT status, error, (SELECT count(*) FROM frames) FROM runs")
        #expect(rows == [[.text("failed"), .text("boom"), .integer(0)]])
    }

    @Test("the store commits without syncing each commit (WAL, synchronous NORMAL = 1) but a run's own commit synced (FULL = 2); the SQL of several statements runs whole")
    func syncLevels() throws {
        let scratch = Scratch()
        let store = try LabStore(path: scratch.file("s.sqlite"))
        func level() throws -> SQLValue? { try store.database.query("PRAGMA synchronous").first?.first }
        #expect(try store.database.query("PRAGMA journal_mode").first?.first == .text("wal"))
        #expect(try level() == .integer(1))
        let start = LabStore.RunStart(experiment: "x", clip: "c", settingsJSON: "{}", crop: nil, ffmpegVersion: nil,
                                      width: 2, height: 2, fpsNum: 1, fpsDen: 1)
        var during: SQLValue?
        try store.recordRun(.init(start: start, createdAt: Date(), warnings: [], outcome: .failed(error: "boom")),
                            beforeCommit: { _ in during = try level() })
        #expect(during == .integer(2))
        #expect(try level() == .integer(1))
        // Database.execute: statements, comments and blanks after the last one; a failing statement is named from it on.
        try store.database.execute("CREATE TEMP TABLE t(x); INSERT INTO t VALUES (1);\n-- a comment\n INSERT INTO t VALUES (2); \n\t")
        #expect(try store.database.query("SELECT sum(x) FROM t") == [[.integer(3)]])
        do {
            try store.database.execute("INSERT INTO t VALUES (3); INSERT INTO nowhere VALUES (4);  ")
            Issue.record("an insert into a missing table ran")
        } catch let error as LabError {
            #expect(error.sqlite?.statement == "INSERT INTO nowhere VALUES (4);")
        }
        #expect(try store.database.query("SELECT sum(x) FROM t") == [[.integer(6)]])
    }

    @Test("the sliding-window bitrate, by hand: 25 fps, 1 s windows")
    func windows() {
        // Frames of 1000 bytes at 25 fps (1 tick = 1/25 s): a full window holds 25 frames = 200 kbit/s.
        let sizes = Array(repeating: 1000, count: 30)
        let points = WindowedBitrate.compute(sizes: sizes, dts: (0..<30).map { Int64($0) }, timebaseNum: 1,
                                             timebaseDen: 25, frameTicks: 1)
        // Window k is [k, k + 25) ticks; the stream ends at 29 + 1 = 30 ticks: windows 0...5 are full.
        #expect(points[5].full == true)
        #expect(points[6].full == false)
        #expect(points[0].kbps == 200)
        #expect(points[5].kbps == 200)
        // Window 29 holds frame 29 alone: 8 kbit in 1 s.
        #expect(points[29].kbps == 8)
    }
}
