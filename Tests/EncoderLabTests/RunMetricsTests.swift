import Foundation
import H264
import Testing
@testable import EncoderLab

/// The one window rule on a hand-made frame list, and the run metrics of real encodes against the sqlite3 CLI's
/// arithmetic, ffprobe and the x264 CLI.
@Suite("run metrics and the one window rule", .serialized)
struct RunMetricsTests {
    // MARK: - Windows by hand

    /// Ticks of 1 ms, W = 1 s = 1000 ticks. Frames (DTS, bytes) in decode order:
    /// 0 (0, 100) and 1 (0, 50) share a DTS; 2 (400, 200); 3 (1000, 300) exactly W after frame 0, so outside its
    /// window; 4 (1400, 10); 5 (1999, 20).
    static let dts: [Int64] = [0, 0, 400, 1000, 1400, 1999]
    static let sizes = [100, 50, 200, 300, 10, 20]
    static let ms = try! Rational(1, 1000)

    @Test("windows [DTS_i, DTS_i + 1 s) by hand: a frame on the edge is outside, frames sharing a DTS share a window")
    func handMadeWindows() throws {
        // The stream ends 100 ms after the last DTS: at 2099.
        let w = DecodeTimeWindows.windows(dtsTicks: Self.dts, sizesBytes: Self.sizes, timebase: Self.ms, window: .one,
                                          lastFrameTicks: Rational(100))
        // [0, 1000): frames 0, 1, 2 = 350 bytes (frame 3 at 1000 is outside). Frame 1 shares frame 0's window.
        // [400, 1400): frames 2, 3 = 500 (frame 4 at 1400 outside). [1000, 2000): 3, 4, 5 = 330.
        // [1400, 2400): 4, 5 = 30; [1999, 2999): 5 = 20.
        #expect(w.map(\.bytes) == [350, 350, 500, 330, 30, 20])
        #expect(w.map(\.firstIndex) == [0, 0, 2, 3, 4, 5])
        #expect(w.map(\.lastIndex) == [2, 2, 3, 5, 5, 5])
        // Full when start + 1000 <= 2099: starts 0, 400, 1000 (1400 + 1000 = 2400 runs past the end).
        #expect(w.map(\.full) == [true, true, true, true, false, false])
        // The stream ending exactly at 2000 (last frame 1 ms): [1000, 2000) still full; ending at 1999 (0 ms): not.
        let edge = DecodeTimeWindows.windows(dtsTicks: Self.dts, sizesBytes: Self.sizes, timebase: Self.ms, window: .one, lastFrameTicks: .one)
        #expect(edge.map(\.full) == [true, true, true, true, false, false])
        let short = DecodeTimeWindows.windows(dtsTicks: Self.dts, sizesBytes: Self.sizes, timebase: Self.ms, window: .one, lastFrameTicks: .zero)
        #expect(short.map(\.full) == [true, true, true, false, false, false])
        // The plots' points: bits / 1 s, at the window's start.
        let points = WindowedBitrate.compute(sizes: Self.sizes, dts: Self.dts, timebase: Self.ms, frameTicks: Rational(100))
        #expect(points.map(\.kbps) == [2.8, 2.8, 4.0, 2.64, 0.24, 0.16])
        #expect(points.map(\.dtsSeconds) == Self.dts.map { Double($0) * 0.001 })
        // The DataRateLimits check counts the same windows, once per distinct start: 5; 400 bytes a second is
        // exceeded by [400, 1400) alone.
        let pair = try DataRateLimits(pairs: [(bytes: 400, seconds: .one)]).pairs[0]
        let check = try DataRateLimits.check(pair: pair, dtsTicks: Self.dts, sizesBytes: Self.sizes, timebase: Self.ms)
        #expect(check.windowCount == 5)
        #expect(check.windowsOverLimit == 1)
        #expect(check.worst == DataRateLimits.Window(startIndex: 2, endIndex: 3, startTicks: 400, bytes: 500, ratio: try Rational(5, 4)))
        // A stream shorter than W (two frames 40 ms apart, 40 ms each: 80 ms): no window is full.
        let tiny = DecodeTimeWindows.windows(dtsTicks: [0, 40], sizesBytes: [1, 1], timebase: Self.ms, window: .one, lastFrameTicks: Rational(40))
        #expect(tiny.map(\.full) == [false, false])
        #expect(RunMetrics.nearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], percent: 95) == 19)
        #expect(RunMetrics.nearestRank([7], percent: 95) == 7)
    }

    // MARK: - A real encode

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    static func number(_ text: String) -> Double { Double(text) ?? .nan }

    @Test("an ABR encode with B-frames: span, bitrate, error, per-type sizes, GOPs and the 1 s peak as sqlite3 and ffprobe count them")
    func realEncode() throws {
        let scratch = Scratch()
        let source = scratch.file("clip.y4m")
        try SyntheticClip(width: 128, height: 96, frames: 60, fpsNum: 25, fpsDen: 1, seed: 11).write(to: source)
        let (outcome, store) = try labEncode(source, ["--threads", "1", "--bitrate", "300", "--bframes", "2", "--keyint", "20"], in: scratch)
        let db = store.database.path, id = outcome.runID
        let m = try #require(try Self.sqlite(db, "SELECT * FROM run_metrics WHERE run_id = \(id)").first, "written when the run was recorded")
        _ = m
        func metric(_ name: String) throws -> Double { Self.number(try Self.sqlite(db, "SELECT \(name) FROM run_metrics WHERE run_id = \(id)")[0]) }
        let bytes = Int(try Self.sqlite(db, "SELECT sum(size_bytes) FROM frames WHERE run_id = \(id)")[0])!
        let fileBytes = try FileManager.default.attributesOfItem(atPath: outcome.streamPath)[.size] as! Int
        #expect(try metric("stream_bytes") == Double(bytes))
        #expect(bytes == fileBytes)
        #expect(try Witness.packetSizes(outcome.streamPath).reduce(0, +) == bytes)
        // Span: (max pts - min pts) ticks + one frame (1/25 s), in seconds; 60 frames at 25 fps: 2.4 s.
        let span = Self.number(try Self.sqlite(db, """
            SELECT (max(f.pts) - min(f.pts)) * 1.0 * r.timebase_num / r.timebase_den + 1.0 * r.fps_den / r.fps_num
            FROM frames f JOIN runs r USING (run_id) WHERE run_id = \(id)
            """)[0])
        #expect(abs(span - 2.4) < 1e-12)
        #expect(abs(try metric("span_seconds") - span) < 1e-12)
        let kbps = Double(bytes) * 8 / span / 1000
        #expect(abs(try metric("bitrate_kbps") - kbps) < 1e-9)
        #expect(try metric("target_kbps") == 300)
        #expect(abs(try metric("target_error_pct") - (kbps - 300) / 300 * 100) < 1e-9)
        // Per type, as sqlite3 groups them; p95 by nearest rank: the ceil(0.95 n)-th smallest.
        for (prefix, types) in [("i", "'IDR','I'"), ("p", "'P'"), ("b", "'B','Bref'")] {
            let row = try Self.sqlite(db, """
                WITH t AS (SELECT size_bytes s FROM frames WHERE run_id = \(id) AND type IN (\(types)))
                SELECT count(*), avg(s), max(s),
                       (SELECT s FROM t ORDER BY s LIMIT 1 OFFSET (SELECT (95 * count(*) + 99) / 100 - 1 FROM t)),
                       (SELECT avg(qp) FROM frames WHERE run_id = \(id) AND type IN (\(types)))
                FROM t
                """)[0].split(separator: "|").map { Self.number(String($0)) }
            #expect(row[0] > 0, "\(prefix) frames present")
            #expect(try metric("\(prefix)_frames") == row[0])
            #expect(abs(try metric("\(prefix)_mean_bytes") - row[1]) < 1e-9)
            #expect(try metric("\(prefix)_max_bytes") == row[2])
            #expect(try metric("\(prefix)_p95_bytes") == row[3])
            #expect(abs(try metric("qp_mean_\(prefix)") - row[4]) < 1e-9)
        }
        #expect(abs(try metric("i_to_p_ratio") - (try metric("i_mean_bytes")) / (try metric("p_mean_bytes"))) < 1e-12)
        // ffprobe's picture types: I, P and B counts.
        let types = try Witness.pictureTypes(outcome.streamPath)
        #expect(try metric("i_frames") == Double(types.filter { $0 == "I" }.count))
        #expect(try metric("p_frames") == Double(types.filter { $0 == "P" }.count))
        #expect(try metric("b_frames") == Double(types.filter { $0 == "B" }.count))
        // GOPs: one per keyframe; together they hold every frame and byte; 3 GOPs of 20 at keyint 20 (no scenecut
        // inside, the clip's cut is at 30 and lands on... whatever x264 decides: count what is stored).
        let keyframes = Int(try Self.sqlite(db, "SELECT count(*) FROM frames WHERE run_id = \(id) AND keyframe = 1")[0])!
        #expect(try metric("keyframes") == Double(keyframes))
        #expect(try Self.sqlite(db, "SELECT count(*), sum(frames), sum(bytes), min(frames), max(frames) FROM run_gops WHERE run_id = \(id)")
                == ["\(keyframes)|60|\(bytes)|\(Int(try metric("gop_min_frames")))|\(Int(try metric("gop_max_frames")))"])
        // Each GOP's frames: from its keyframe to the next, counted by sqlite3 in decode order.
        let gopFrames = try Self.sqlite(db, """
            SELECT (SELECT count(*) FROM frames g WHERE g.run_id = k.run_id AND g.coded_index >= k.coded_index
                    AND g.coded_index < coalesce((SELECT min(n.coded_index) FROM frames n WHERE n.run_id = k.run_id
                                                  AND n.keyframe = 1 AND n.coded_index > k.coded_index), 1e18))
            FROM frames k WHERE k.run_id = \(id) AND k.keyframe = 1 ORDER BY k.coded_index
            """)
        #expect(try Self.sqlite(db, "SELECT frames FROM run_gops WHERE run_id = \(id) ORDER BY gop_index") == gopFrames)
        #expect(try metric("gop_max_seconds") == (try metric("gop_max_frames")) / 25)
        // Peak 1 s: the largest sum over full windows [dts_i, dts_i + 1 s), by sqlite3:
        // in when (dts_j - dts_i) * tb_num < tb_den; full when (last dts - dts_i) * tb + 1/fps >= 1.
        let peak = Self.number(try Self.sqlite(db, """
            WITH r AS (SELECT * FROM runs WHERE run_id = \(id)), f AS (SELECT * FROM frames WHERE run_id = \(id))
            SELECT max(w) * 8 / 1000.0 FROM (
                SELECT (SELECT sum(j.size_bytes) FROM f j WHERE j.dts >= i.dts AND (j.dts - i.dts) * r.timebase_num < r.timebase_den) AS w
                FROM f i, r WHERE ((SELECT max(dts) FROM f) - i.dts) * r.timebase_num * r.fps_num + r.timebase_den * r.fps_den
                                  >= r.timebase_den * r.fps_num)
            """)[0])
        #expect(try metric("peak_1s_kbps") == peak)
        #expect(abs(try metric("peak_to_average") - peak / kbps) < 1e-12)
        // PSNR from the lab's own squared errors: the pooled luma by sqlite3.
        let pooledY = Self.number(try Self.sqlite(db, "SELECT 10 * log10(255.0 * 255 * 128 * 96 * count(*) / sum(sse_y)) FROM frames WHERE run_id = \(id)")[0])
        #expect(abs(try metric("psnr_y_pooled") - pooledY) < 1e-9)
        #expect(try Self.sqlite(db, "SELECT psnr_source, vbv_underflows IS NULL FROM run_metrics WHERE run_id = \(id)") == ["lab|1"])
    }

    @Test("the pooled PSNR of a CRF run without VBV equals x264's own 'PSNR Mean ... Global:' to its 3 decimals")
    func globalAgainstX264() throws {
        let scratch = Scratch()
        let source = scratch.file("clip.y4m")
        // 160x96: a width that is a multiple of 16.
        try SyntheticClip(width: 160, height: 96, frames: 30, fpsNum: 25, fpsDen: 1, seed: 5).write(to: source)
        let flags = ["--threads", "1", "--crf", "26", "--bframes", "2"]
        let (outcome, store) = try labEncode(source, flags, in: scratch)
        let cli = try Witness.x264(flags + ["--psnr", "-o", scratch.file("cli.264"), source])
        try #require(cli.status == 0, "\(cli.stderr)")
        // x264 [info]: PSNR Mean Y:41.964 U:45.296 V:45.187 Avg:42.890 Global:42.677 kb/s:...
        let line = try #require(cli.stderr.split(separator: "\n").first { $0.hasPrefix("x264 [info]: PSNR Mean") })
        func field(_ name: String) -> String? {
            line.components(separatedBy: " ").first { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) }
        }
        let m = try RunMetrics.compute(store: store, runID: outcome.runID)
        #expect(String(format: "%.3f", try #require(m["psnr_global"])) == field("Global"), "\(line)")
        #expect(String(format: "%.3f", try #require(m["psnr_y_mean_frame"])) == field("Y"), "\(line)")
        // x264's per-frame chroma PSNRs (so its "Avg") differ from the lab's own decode in the 2nd-3rd decimal on this
        // clip (U 43.238 against 43.243): not compared here.
    }

    @Test("analyze is idempotent, a v5 database migrates to v6 and analyze fills it; compare prints both runs and their differences")
    func analyzeMigrateCompare() throws {
        let scratch = Scratch()
        let source = scratch.file("clip.y4m")
        try SyntheticClip(width: 96, height: 64, frames: 30, fpsNum: 25, fpsDen: 1, seed: 2).write(to: source)
        _ = try labEncode(source, ["--threads", "1", "--qp", "30"], in: scratch)
        let (outcome, store) = try labEncode(source, ["--threads", "1", "--qp", "24"], in: scratch)
        let db = store.database.path
        let dump = "SELECT * FROM run_metrics ORDER BY run_id; SELECT * FROM run_gops ORDER BY run_id, gop_index"
        let before = try Self.sqlite(db, dump)
        #expect(before.count > 2)
        #expect(try RunMetrics.analyze(databasePath: db, runs: [], progress: false) == [1, 2])
        #expect(try Self.sqlite(db, dump) == before)
        // Back to version 5 as that version left it: no metrics tables.
        _ = try Self.sqlite(db, "DROP TABLE run_metrics; DROP TABLE run_gops; PRAGMA user_version = 5;")
        _ = try LabStore(path: db)
        #expect(try Self.sqlite(db, "PRAGMA user_version; SELECT count(*) FROM run_metrics") == ["9", "0"])
        #expect(try RunMetrics.analyze(databasePath: db, runs: ["2"], progress: false) == [2])
        #expect(try Self.sqlite(db, "SELECT run_id FROM run_metrics") == ["2"])
        _ = try RunMetrics.analyze(databasePath: db, runs: [], progress: false)
        #expect(try Self.sqlite(db, dump) == before)
        // compare: run 1 (qp 30) against run 2 (qp 24).
        let text = try RunMetrics.compare(databasePath: db, runA: "1", runB: "run-\(outcome.runID)")
        let lines = text.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(lines[0] == ["metric", "run", "1", "run", "2", "difference", "%"])
        let bytes = try Self.sqlite(db, "SELECT stream_bytes FROM run_metrics ORDER BY run_id").map { Int($0)! }
        let row = try #require(lines.first { $0.first == "stream_bytes" })
        let diff = bytes[1] - bytes[0]
        #expect(row == ["stream_bytes", String(bytes[0]), String(bytes[1]), (diff > 0 ? "+" : "") + String(diff),
                        String(format: "%+.2f", Double(diff) / Double(bytes[0]) * 100)])
        let target = try #require(lines.first { $0.first == "target_kbps" })
        #expect(target == ["target_kbps", "-", "-", "-", "-"])
        let qp = try #require(lines.first { $0.first == "qp_mean_p" })
        #expect(qp.count == 5 && qp[3].hasPrefix("-"))
        #expect(throws: LabError(.noInput, "\(db): no run with id '9'")) { try RunMetrics.compare(databasePath: db, runA: "1", runB: "9") }
    }
}
