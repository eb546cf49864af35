import Foundation
import Testing
@testable import EncoderLab

/// The VideoToolbox experiments' plots (issue 10, item 5): an experiment with keyframe limits and DataRateLimits run
/// by the built `enclab`, its plot files on disk, and every number of their data files read back against what the
/// sqlite3 CLI computes from the tables (frames, keyframe_analysis, data_rate_windows) by queries written here.
@Suite("VideoToolbox plots from the store: keyframe timeline, GOP histogram, B-frames, data-rate windows", .serialized)
struct VideoToolboxPlotTests {
    /// 40 frames of 96x64: 20 at 10 fps, then 20 at 5 fps under the schedule below (6 s).
    static let clip = SyntheticClip(width: 96, height: 64, frames: 40, fpsNum: 10, fpsDen: 1, seed: 5)

    static func sqlite(_ db: String, _ sql: String) throws -> [[String]] {
        let r = try Witness.run("sqlite3", ["-separator", " ", db, sql])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    /// A data file's blocks (separated by two blank lines), each its data lines split at spaces, comments left out.
    static func blocks(_ path: String) throws -> [[[String]]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.components(separatedBy: "\n\n\n").map { block in
            block.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map(String.init) }
        }.filter { !$0.isEmpty }
    }

    static func rows(_ path: String) throws -> [[String]] { try blocks(path).flatMap { $0 } }

    /// Whether two tables hold the same numbers: the same shape, and each cell equal as a number within 1e-6
    /// (seconds are written to the microsecond on both sides; counts and indices are then equal exactly).
    static func same(_ a: [[String]], _ b: [[String]]) -> Bool {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) {
            guard x.count == y.count else { return false }
            for (u, v) in zip(x, y) {
                guard let p = Double(u), let q = Double(v), abs(p - q) <= 1e-6 * max(1, abs(q)) else { return false }
            }
        }
        return true
    }

    /// Seconds of a PTS from the run's smallest PTS, in SQL (`f` a frames row, `r` its runs row).
    static let seconds = "printf('%.6f', (f.pts - (SELECT min(pts) FROM frames m WHERE m.run_id = f.run_id)) * 1.0 * r.timebase_num / r.timebase_den)"

    @Test("an experiment with keyframe limits and DataRateLimits: the four plots exist, and their data equal sqlite3's reading of the tables")
    func plotsAgainstTables() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let json = #"""
        {"name": "vtp", "clips": ["c.y4m"],
         "base": {"threads": 1, "crf": 30, "pts-schedule": "rate=10;switch=5@2s",
                  "MaxKeyFrameInterval": 12, "MaxKeyFrameIntervalDuration": 1.5, "DataRateLimits": [[4000, 1], [1500, 0.25]]},
         "grid": {"vt-compat": [false, true]}}
        """#
        try json.write(toFile: scratch.file("e.json"), atomically: true, encoding: .utf8)
        let r = try Witness.enclab(["run", "e.json", "--db", "e.sqlite", "--out", "out"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        let db = scratch.file("e.sqlite"), out = scratch.file("out")
        for name in ["keyframes", "gop-histogram", "bframes", "data-rate"] {
            for ext in ["png", "svg", "gp"] {
                #expect(FileManager.default.fileExists(atPath: "\(out)/\(name).\(ext)"), "\(name).\(ext)")
            }
        }
        // The rule by hand. vt-compat, the time limit alone: frame 16 (1.6 s) would lie more than 1.5 s after frame 0,
        // so 15 (1.5 s); then frame 26 (3.2 s) more than 1.5 s after 1.5 s, so 25 (3.0 s); then 33 (4.6 s), so 32
        // (4.4 s); the end, 5.8 + 0.1 s, is not more than 1.5 s after 4.4 s. Native: 0, then 12 (the frame limit).
        let expected = try Self.sqlite(db, "SELECT expected FROM keyframe_analysis ORDER BY run_id").map { $0.joined() }
        #expect(expected.count == 2 && expected[0].hasPrefix("[0,12,") && expected[1] == "[0,15,25,32]", "\(expected)")

        // keyframes.dat: expected (0), actual (1), forced (2) from keyframe_analysis's lists; 3: I pictures that are no
        // IDR. The witness reads the actual keyframes from frames.type, not from the stored list.
        let runsWithRule = "(SELECT run_id, row_number() OVER (ORDER BY run_id) - 1 AS row FROM keyframe_analysis)"
        var witness: [[String]] = []
        for kind in 0...3 {
            let source: String
            switch kind {
            case 0: source = "JOIN keyframe_analysis k USING (run_id) JOIN json_each(k.expected) j ON f.display_index = j.value"
            case 1: source = "WHERE f.type = 'IDR'"
            case 2: source = "JOIN keyframe_analysis k USING (run_id) JOIN json_each(k.forced) j ON f.display_index = j.value"
            default: source = "WHERE f.type = 'I'"
            }
            witness += try Self.sqlite(db, """
                SELECT q.row, \(kind), f.display_index, \(Self.seconds), q.row * 10 + \(kind) AS o
                FROM frames f JOIN runs r USING (run_id) JOIN \(runsWithRule) q USING (run_id) \(source)
                """).map { Array($0.prefix(4)) + [$0[4]] }
        }
        // The file is in run order, then kind, then display index.
        witness.sort { (Int($0[4])!, Int($0[2])!) < (Int($1[4])!, Int($1[2])!) }
        let marks = try Self.rows("\(out)/keyframes.dat")
        #expect(Self.same(marks, witness.map { Array($0.prefix(4)) }), "\(marks) against \(witness)")
        #expect(marks.contains { $0[1] == "1" } && marks.contains { $0[1] == "2" })
        let violations = try Self.rows("\(out)/keyframe-violations.dat")
        #expect(violations.count == Int(try Self.sqlite(db, "SELECT count(*) FROM keyframe_violations")[0][0])!)

        // gops.dat: from each IDR (frames.type) to the next, the last to the frame count, its end one nominal frame
        // (fps_den / fps_num s) after the largest PTS; closed when it ends at an IDR.
        let gops = try Self.sqlite(db, """
            WITH idr AS (SELECT f.run_id, f.display_index AS d, f.pts,
                                lead(f.display_index) OVER (PARTITION BY f.run_id ORDER BY f.display_index) AS nd,
                                lead(f.pts) OVER (PARTITION BY f.run_id ORDER BY f.display_index) AS npts
                         FROM frames f WHERE f.type = 'IDR')
            SELECT q.row, i.d, coalesce(i.nd, r.frames), coalesce(i.nd, r.frames) - i.d,
                   printf('%.6f', CASE WHEN i.nd IS NULL
                       THEN ((SELECT max(pts) FROM frames m WHERE m.run_id = i.run_id) - i.pts) * 1.0 * r.timebase_num / r.timebase_den + r.fps_den * 1.0 / r.fps_num
                       ELSE (i.npts - i.pts) * 1.0 * r.timebase_num / r.timebase_den END),
                   i.nd IS NOT NULL
            FROM idr i JOIN runs r USING (run_id) JOIN \(runsWithRule) q USING (run_id) ORDER BY q.row, i.d
            """)
        let gopRows = try Self.rows("\(out)/gops.dat")
        #expect(Self.same(gopRows, gops), "\(gopRows) against \(gops)")
        // gop-bins.dat: each bin's count is the number of closed GOPs of its row whose seconds lie in it; all counted.
        let bins = try Self.rows("\(out)/gop-bins.dat")
        for bin in bins {
            let inside = gopRows.filter { $0[0] == bin[0] && $0[5] == "1" && Double($0[4])! >= Double(bin[1])! - 1e-9 && Double($0[4])! < Double(bin[2])! - 1e-9 }
            #expect(inside.count == Int(bin[3])!, "\(bin)")
        }
        #expect(bins.reduce(0) { $0 + Int($1[3])! } == gopRows.filter { $0[5] == "1" }.count)

        // bframes.dat: one line per done run, its frames, B, Bref and max(coded_index - display_index).
        let bframes = try Self.sqlite(db, """
            SELECT row_number() OVER (ORDER BY run_id) - 1, count(*), sum(type = 'B'), sum(type = 'Bref'), max(coded_index - display_index)
            FROM frames JOIN runs USING (run_id) WHERE status = 'done' GROUP BY run_id ORDER BY run_id
            """)
        #expect(try Self.rows("\(out)/bframes.dat") == bframes)
        // vt-compat with DataRateLimits has no B-frames; native keeps x264's.
        #expect(bframes.count == 2 && bframes[1][2] == "0" && bframes[1][3] == "0" && Int(bframes[0][2])! + Int(bframes[0][3])! > 0, "\(bframes)")

        // data-rate-worst.dat: the stored check's rows as they are, the worst window's start in seconds of DTS.
        let worst = try Self.sqlite(db, """
            SELECT row_number() OVER (ORDER BY w.run_id, w.pair) - 1, w.run_id, w.pair, w.bytes, w.seconds, w.honoured, w.windows,
                   w.windows_over, w.worst_start_frame, w.worst_end_frame, w.worst_bytes, w.worst_ratio,
                   printf('%.6f', (f.dts - (SELECT dts FROM frames z WHERE z.run_id = w.run_id AND z.coded_index = 0)) * 1.0 * r.timebase_num / r.timebase_den)
            FROM data_rate_windows w JOIN runs r USING (run_id) JOIN frames f ON f.run_id = w.run_id AND f.coded_index = w.worst_start_frame
            ORDER BY w.run_id, w.pair
            """)
        let worstRows = try Self.rows("\(out)/data-rate-worst.dat")
        #expect(worst.count == 4 && worstRows.map { $0[4] } == worst.map { $0[4] }, "\(worstRows)")
        #expect(Self.same(worstRows.map { $0.enumerated().filter { $0.offset != 4 }.map(\.element) },
                          worst.map { $0.enumerated().filter { $0.offset != 4 }.map(\.element) }), "\(worstRows) against \(worst)")
        // vt-compat honours only the first pair.
        #expect(worst.map { $0[5] } == ["1", "1", "1", "0"])

        // data-rate.dat: per run and pair, one window per distinct DTS: the frames.size_bytes of the frames whose DTS d
        // lies in [DTS, DTS + W), i.e. (d - DTS) * timebase < W, written in whole numbers: (d - DTS) * tb_num * W_den <
        // W_num * tb_den with W = 1 s (1/1) and 0.25 s (1/4).
        let series = try Self.blocks("\(out)/data-rate.dat")
        #expect(series.count == 4)
        for (i, (run, w)) in [(1, (1, 1, 4000)), (1, (1, 4, 1500)), (2, (1, 1, 4000)), (2, (1, 4, 1500))].enumerated() where series.count == 4 {
            let windows = try Self.sqlite(db, """
                SELECT printf('%.6f', (f.dts - (SELECT dts FROM frames z WHERE z.run_id = f.run_id AND z.coded_index = 0)) * 1.0 * r.timebase_num / r.timebase_den),
                       (SELECT sum(g.size_bytes) FROM frames g WHERE g.run_id = f.run_id AND g.dts >= f.dts
                          AND (g.dts - f.dts) * r.timebase_num * \(w.1) < \(w.0) * r.timebase_den) AS bytes,
                       (SELECT sum(g.size_bytes) FROM frames g WHERE g.run_id = f.run_id AND g.dts >= f.dts
                          AND (g.dts - f.dts) * r.timebase_num * \(w.1) < \(w.0) * r.timebase_den) * 1.0 / \(w.2)
                FROM frames f JOIN runs r USING (run_id) WHERE f.run_id = \(run) GROUP BY f.dts ORDER BY f.dts
                """)
            #expect(Self.same(series[i], windows), "series \(i): \(series[i]) against \(windows)")
        }
        // The DTS the witness assumes non-decreasing are (x264's): a DTS going back would need the running maximum.
        #expect(try Self.sqlite(db, "SELECT count(*) FROM frames a JOIN frames b ON a.run_id = b.run_id AND b.coded_index = a.coded_index + 1 WHERE b.dts < a.dts") == [["0"]])
    }

    @Test("no VideoToolbox data, no VideoToolbox plots; a damaged keyframe list or window row is 65 naming the run and the column")
    func onlyWithDataAndDamage() throws {
        let scratch = Scratch()
        try SyntheticClip(width: 64, height: 48, frames: 12, seed: 2).write(to: scratch.file("c.y4m"))
        let plain = #"{"name": "plain", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30}, "grid": {"bframes": [0, 2]}}"#
        try plain.write(toFile: scratch.file("p.json"), atomically: true, encoding: .utf8)
        let p = try Witness.enclab(["run", "p.json", "--db", "p.sqlite", "--out", "p"], in: scratch.path)
        try #require(p.status == 0, "\(p.stderr)")
        #expect(FileManager.default.fileExists(atPath: scratch.file("p/rd.png")))
        for name in ["keyframes", "gop-histogram", "bframes", "data-rate"] {
            #expect(!FileManager.default.fileExists(atPath: scratch.file("p/\(name).png")), "\(name)")
        }
        // AllowFrameReordering alone: B-frames per setting, but no keyframe or window rows to draw.
        let vt = #"{"name": "vt", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30}, "grid": {"AllowFrameReordering": [true, false]}}"#
        try vt.write(toFile: scratch.file("v.json"), atomically: true, encoding: .utf8)
        let v = try Witness.enclab(["run", "v.json", "--db", "v.sqlite", "--out", "v"], in: scratch.path)
        try #require(v.status == 0, "\(v.stderr)")
        #expect(FileManager.default.fileExists(atPath: scratch.file("v/bframes.png")))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("v/keyframes.png")))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("v/data-rate.png")))

        let limits = #"{"name": "k", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30, "MaxKeyFrameInterval": 5, "DataRateLimits": [[3000, 1]]}, "grid": {"vt-compat": [false]}}"#
        try limits.write(toFile: scratch.file("k.json"), atomically: true, encoding: .utf8)
        let k = try Witness.enclab(["run", "k.json", "--db", "k.sqlite", "--out", "k"], in: scratch.path)
        try #require(k.status == 0, "\(k.stderr)")
        for (sql, message) in [
            ("UPDATE keyframe_analysis SET actual = '[0,\"x\"]'", "run 1: keyframe_analysis.actual holds '\"x\"', not a display index"),
            ("UPDATE keyframe_analysis SET forced = '[5,99]'", "run 1: keyframe_analysis.forced holds 99, outside the run's frames 0..<12"),
            ("UPDATE data_rate_windows SET seconds = '-1'", "run 1: data_rate_windows pair 0: seconds is not N or N/D seconds above 0"),
            ("UPDATE data_rate_windows SET worst_start_frame = 40", "run 1: data_rate_windows pair 0: the worst window is not NULL throughout, nor coded indices 0 <= first <= last < 12, bytes >= 0 and a finite ratio >= 0"),
        ] {
            try FileManager.default.copyItem(atPath: scratch.file("k.sqlite"), toPath: scratch.file("d.sqlite"))
            defer { try? FileManager.default.removeItem(atPath: scratch.file("d.sqlite")) }
            _ = try Self.sqlite(scratch.file("d.sqlite"), sql)
            let d = try Witness.enclab(["plot", "--db", "d.sqlite", "--out", "d"], in: scratch.path)
            #expect(d.status == 65, "\(sql): \(d.stderr)")
            #expect(d.stderr.contains(message), "\(sql): \(d.stderr)")
        }
    }
}
