import Foundation
import Testing
import H264
@testable import EncoderLab

/// The timestamps stage end to end (issue 9): every source and stage as `enclab encode` runs it, checked against
/// the x264 CLI's bytes, ffprobe, the sqlite3 CLI and arithmetic written out here.
@Suite("timestamps: sources, stages and analysis, end to end", .serialized)
struct TimestampStageTests {
    static let clip = SyntheticClip(width: 96, height: 64, frames: 30, seed: 21)

    /// A timecode v2 file of irregular steps (20, 33.367, 40, 66.733 ms) with whole microseconds, and its times
    /// in µs written out.
    static let timecodes: [Int64] = {
        let steps: [Int64] = [40000, 20000, 33367, 66733, 40000, 20000]
        var t: [Int64] = [0]
        for k in 1..<30 { t.append(t[k - 1] + steps[k % steps.count]) }
        return t
    }()
    static let timecodeFile = "# timecode format v2\n# irregular\n\n" + timecodes.map { String(format: "%d.%03d", $0 / 1000, $0 % 1000) }.joined(separator: "\n") + "\n"

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    func encode(_ scratch: Scratch, _ flags: [String], db: String = "l.sqlite") throws -> Witness.Output {
        let r = try Witness.enclab(["encode", "c.y4m", "--threads", "1", "--db", db, "--out", "out"] + flags, in: scratch.path)
        return r
    }

    /// The stream path of run `id` in `db`.
    func stream(_ scratch: Scratch, _ id: Int, db: String = "l.sqlite") throws -> String {
        let path = try Self.sqlite(scratch.file(db), "SELECT stream_path FROM runs WHERE run_id = \(id)")[0]
        return path.hasPrefix("/") ? path : scratch.file(path)
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("--tcfile-in: the stream is byte-identical to x264 --tcfile-in FILE --timebase 1/1000000; input_pts and pts are the file's times in µs",
          arguments: [["--bitrate", "300"], ["--crf", "26", "--bframes", "3"], ["--tune", "zerolatency", "--bitrate", "200", "--vbv-maxrate", "200", "--vbv-bufsize", "200"]])
    func tcfileMatchesCLI(flags: [String]) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        try Self.timecodeFile.write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        let r = try encode(scratch, flags + ["--tcfile-in", "tc.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        let cli = try Witness.x264(["--quiet", "--threads", "1"] + flags + ["--tcfile-in", scratch.file("tc.txt"), "--timebase", "1/1000000",
                                                                                   "-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(try bytes(try stream(scratch, 1)) == (try bytes(scratch.file("cli.264"))))
        let db = scratch.file("l.sqlite")
        #expect(try Self.sqlite(db, "SELECT input_pts FROM frames ORDER BY display_index") == Self.timecodes.map(String.init))
        #expect(try Self.sqlite(db, "SELECT count(*) FROM frames WHERE pts <> input_pts") == ["0"])
        #expect(try Self.sqlite(db, "SELECT timebase_num, timebase_den, json_extract(settings, '$.timestamps.source'), json_extract(settings, '$.timestamps.vfr_input') FROM runs")
                == ["1|1000000|tcfile|1"])
        // The VUI timing the CLI writes: num_units_in_tick 1, time_scale 2000000 (trace_headers on the lab's stream).
        let trace = try Witness.run("ffmpeg", ["-v", "trace", "-hide_banner", "-i", Witness.file(try stream(scratch, 1)), "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        #expect(trace.stderr.contains("num_units_in_tick") && trace.stderr.contains(" = 1\n") && trace.stderr.contains("time_scale") && trace.stderr.contains(" = 2000000"))
    }

    @Test("--seek S starts at timecode entry S; more entries than frames are ignored")
    func tcfileSeek() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        try (Self.timecodeFile + "5000\n6000\n").write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        let r = try encode(scratch, ["--crf", "30", "--seek", "4", "--frames", "10", "--tcfile-in", "tc.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT input_pts FROM frames ORDER BY display_index") == Self.timecodes[4..<14].map(String.init))
    }

    /// Float32 of 10^12 + t µs, written out: the nearest multiple of 2^16 (every float in [2^39, 2^40) is one),
    /// ties to the even multiple.
    static func float32(_ x: Int64) -> Int64 {
        let q = x >> 16, r = x & 0xFFFF
        if r > 0x8000 || (r == 0x8000 && q & 1 == 1) { return (q + 1) << 16 }
        return q << 16
    }

    @Test("an int64 offset of 10^12 µs leaves the stream byte-identical; float32 at 10^12 steps by 65,536 µs and changes it; --pts-rebase restores it byte for byte")
    func offsetAndPrecision() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let base = ["--bitrate", "300"]
        for flags in [["--pts-offset", "0"], ["--pts-offset", "1000000000000"], ["--pts-offset", "1000000000000", "--pts-precision", "float32"],
                      ["--pts-offset", "1000000000000", "--pts-rebase", "--pts-precision", "float32"]] {
            let r = try encode(scratch, base + flags)
            #expect(r.status == 0, "\(r.stderr)")
        }
        let s = try (1...4).map { try bytes(try stream(scratch, $0)) }
        #expect(s[0] == s[1])
        #expect(s[0] != s[2])
        #expect(s[0] == s[3])
        let db = scratch.file("l.sqlite")
        let nominal = (0..<30).map { Int64($0) * 40000 }
        #expect(try Self.sqlite(db, "SELECT input_pts FROM frames WHERE run_id = 2 ORDER BY display_index") == nominal.map { String($0 + 1_000_000_000_000) })
        let rounded = nominal.map { Self.float32($0 + 1_000_000_000_000) }
        #expect(try Self.sqlite(db, "SELECT input_pts FROM frames WHERE run_id = 3 ORDER BY display_index") == rounded.map(String.init))
        #expect(try Self.sqlite(db, "SELECT input_pts FROM frames WHERE run_id = 4 ORDER BY display_index") == nominal.map(String.init))
        // Non-increasing PTS handed in, by the rule written out (each not after the previous one), equal x264's own
        // warnings and the analysis.
        let repeats = (1..<30).filter { rounded[$0] <= rounded[$0 - 1] }.count
        #expect(repeats > 0)
        #expect(try Self.sqlite(db, "SELECT non_increasing_input_pts, x264_timestamp_warnings FROM timestamp_analysis WHERE run_id = 3") == ["\(repeats)|\(repeats)"])
        #expect(try Self.sqlite(db, "SELECT json_extract(warnings, '$[0]') FROM runs WHERE run_id = 3") == ["x264: non-strictly-monotonic PTS (\(repeats) times)"])
        #expect(try Self.sqlite(db, "SELECT non_increasing_input_pts FROM timestamp_analysis WHERE run_id IN (1, 2, 4)") == ["0", "0", "0"])
    }

    @Test("int32 keeps the low 32 bits as a signed value: 2^31 µs becomes -2^31 µs")
    func int32Wrap() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let offset: Int64 = (1 << 31) - 5 * 40000
        let r = try encode(scratch, ["--crf", "30", "--pts-offset", String(offset), "--pts-precision", "int32"])
        #expect(r.status == 0, "\(r.stderr)")
        let expected = (0..<30).map { k -> Int64 in
            let t = offset + Int64(k) * 40000
            return t >= (1 << 31) ? t - (1 << 32) : t
        }
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT input_pts FROM frames ORDER BY display_index") == expected.map(String.init))
    }

    @Test("the span, achieved bitrate and its error against the target follow from the stored frames (sqlite3 arithmetic)")
    func bitrateOverSpan() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        try Self.timecodeFile.write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        let r = try encode(scratch, ["--bitrate", "300", "--tcfile-in", "tc.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        let db = scratch.file("l.sqlite")
        // No entry after the last frame: its duration is the nominal 40,000 µs (25 fps).
        let span = Self.timecodes.last! - Self.timecodes.first! + 40000
        #expect(try Self.sqlite(db, "SELECT span_ticks FROM timestamp_analysis") == [String(span)])
        let check = try Self.sqlite(db, """
            SELECT abs(a.achieved_kbps - (SELECT sum(size_bytes) FROM frames) * 8.0 / 1000 / (\(span) / 1e6)) < 1e-9,
                   abs(a.bitrate_error_pct - (a.achieved_kbps - 300) / 300 * 100) < 1e-9, a.target_kbps,
                   abs(r.duration_s - \(span) / 1e6) < 1e-12
            FROM timestamp_analysis a JOIN runs r USING (run_id)
            """)
        #expect(check == ["1|1|300.0|1"])
        // The duration histogram: every step of the file, the last frame at the nominal 40,000 µs.
        var counts: [Int64: Int] = [:]
        for k in 0..<29 { counts[Self.timecodes[k + 1] - Self.timecodes[k], default: 0] += 1 }
        counts[40000, default: 0] += 1
        #expect(try Self.sqlite(db, "SELECT duration_ticks, frames FROM frame_durations ORDER BY duration_ticks")
                == counts.sorted { $0.key < $1.key }.map { "\($0.key)|\($0.value)" })
    }

    @Test("--pts-schedule: input_pts are the generator's; duplicates and a step back make x264 repeat or lower DTS, counted in the analysis; --pts-clock capture gives increasing times")
    func schedule() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let spec = "rate=30;jitter=2ms;seed=7;dup=0.1;back=3@0.5s"
        let generated = try PTSSchedule(parsing: spec, nominalRate: Rational(25)).generateWithCaptureClock(frames: 30)
        for flags in [["--pts-schedule", spec], ["--pts-schedule", spec, "--pts-clock", "capture"]] {
            let r = try encode(scratch, ["--bitrate", "300"] + flags)
            #expect(r.status == 0, "\(r.stderr)")
        }
        let db = scratch.file("l.sqlite")
        #expect(try Self.sqlite(db, "SELECT input_pts FROM frames WHERE run_id = 1 ORDER BY display_index") == generated.pts.map(String.init))
        #expect(try Self.sqlite(db, "SELECT input_pts FROM frames WHERE run_id = 2 ORDER BY display_index") == generated.capture.map(String.init))
        // x264's rule: each PTS not after the previous one, the first compared with -1 (jitter can put it below 0).
        func nonIncreasing(_ t: [Int64]) -> Int { (0..<t.count).filter { t[$0] <= ($0 == 0 ? -1 : t[$0 - 1]) }.count }
        let bad = nonIncreasing(generated.pts), capture = nonIncreasing(generated.capture)
        #expect(bad > 1 && capture <= 1)
        // x264's own warnings of that kind (x264_warnings: [text, count] pairs, by first appearance).
        let counted = try Self.sqlite(db, """
            SELECT non_increasing_input_pts, (SELECT json_extract(value, '$[1]') FROM json_each(x264_warnings)
                                              WHERE json_extract(value, '$[0]') = 'non-strictly-monotonic PTS')
            FROM timestamp_analysis ORDER BY run_id
            """)
        #expect(counted == ["\(bad)|\(bad)", "\(capture)|\(capture)"])
        // DTS counts, from the stored frames in decode order (LAG over coded_index).
        let dts = try Self.sqlite(db, """
            SELECT sum(d = p), sum(d < p) FROM (SELECT dts AS d, LAG(dts) OVER (ORDER BY coded_index) AS p FROM frames WHERE run_id = 1) WHERE p IS NOT NULL
            """)
        #expect(try Self.sqlite(db, "SELECT duplicate_dts || '|' || decreasing_dts FROM timestamp_analysis WHERE run_id = 1") == dts)
        // The canonical text writes 0.5s as 500ms.
        let canonical = "rate=30;jitter=2ms;seed=7;dup=0.1;back=3@500ms"
        #expect(try Self.sqlite(db, "SELECT json_extract(settings, '$.timestamps.schedule_canonical'), json_extract(settings, '$.timestamps.clock') FROM runs ORDER BY run_id")
                == ["\(canonical)|schedule", "\(canonical)|capture"])
    }

    @Test("--pts-clamp: a PTS not after the largest so far becomes that largest + one nominal frame (40,000 µs at 25 fps), written out")
    func clamp() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let spec = "rate=25;seed=3;dup=0.2;back=2@0.4s"
        let r = try encode(scratch, ["--crf", "28", "--pts-schedule", spec, "--pts-clamp"])
        #expect(r.status == 0, "\(r.stderr)")
        var expected: [Int64] = []
        for t in try PTSSchedule(parsing: spec, nominalRate: Rational(25)).generate(frames: 30) {
            if let largest = expected.max(), t <= largest { expected.append(largest + 40000) } else { expected.append(t) }
        }
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT input_pts FROM frames ORDER BY display_index") == expected.map(String.init))
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT non_increasing_input_pts FROM timestamp_analysis") == ["0"])
    }

    @Test("the README's clamp case: 0, 40, 80, 60, 100, 140 ms at 25 fps become 0, 40, 80, 120, 160, 200 ms; without --pts-clamp they stay as given")
    func clampReadmeCase() throws {
        let given: [Int64] = [0, 40000, 80000, 60000, 100000, 140000]
        for (clamp, expected) in [(true, [0, 40000, 80000, 120000, 160000, 200000] as [Int64]), (false, given)] {
            var stamper = PTSStamper(stages: PTSStages(times: .list(given, lastDuration: nil), offset: nil, rebase: false,
                                                       precision: nil, clamp: clamp, tcfileSHA256: nil), frameRate: Rational(25))
            #expect(try (0..<6).map { try stamper.stamp($0) } == expected)
        }
    }

    @Test("--pts-source file uses ffprobe's frame times; without it a clip that is not at a constant rate gets a warning naming its real span and largest gap")
    func sourceFile() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        try Self.timecodeFile.write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        // A variable-rate Matroska file made by the x264 CLI from the timecodes.
        let mkv = try Witness.x264(["--quiet", "--threads", "1", "--crf", "18", "--tcfile-in", scratch.file("tc.txt"), "-o", scratch.file("v.mkv"), scratch.file("c.y4m")])
        #expect(mkv.status == 0, "\(mkv.stderr)")
        let probe = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time", "-of", "csv=p=0", Witness.file(scratch.file("v.mkv"))])
        let times = probe.stdout.split(separator: "\n").map { Int64((Double($0.trimmingCharacters(in: .punctuationCharacters))! * 1e6).rounded()) }
        #expect(times.count == 30)
        let plain = try Witness.enclab(["encode", "v.mkv", "--threads", "1", "--crf", "30", "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(plain.status == 0)
        #expect(plain.stderr.contains("v.mkv: its timestamps are not at a constant rate: the file spans"), "\(plain.stderr)")
        #expect(plain.stderr.contains("largest gap 0.067 s"), "\(plain.stderr)")
        let fromFile = try Witness.enclab(["encode", "v.mkv", "--threads", "1", "--crf", "30", "--pts-source", "file", "--db", "l.sqlite", "--out", "out"], in: scratch.path)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(!fromFile.stderr.contains("not at a constant rate"))
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT input_pts FROM frames WHERE run_id = 2 ORDER BY display_index") == times.map(String.init))
        // x264's Matroska muxer rounds the times it writes (to ticks of 1/20000 s, per frame duration): within 1 ms.
        #expect(zip(times, Self.timecodes).allSatisfy { abs($0 - $1) <= 1000 }, "\(times)")
    }

    @Test("--mkv: stream.mkv's frame times (ffprobe, time base 1/1000000) are the recorded PTS; times that go back leave it out with a warning, the run done")
    func matroska() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        try Self.timecodeFile.write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        let r = try encode(scratch, ["--bitrate", "300", "--bframes", "2", "--tcfile-in", "tc.txt", "--pts-offset", "1000000000000", "--mkv"])
        #expect(r.status == 0, "\(r.stderr)")
        let mkv = (try stream(scratch, 1) as NSString).deletingLastPathComponent + "/stream.mkv"
        let base = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base",
                                               "-of", "default=noprint_wrappers=1:nokey=1", Witness.file(mkv)])
        #expect(base.stdout == "1/1000000\n")
        let probe = try Witness.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp",
                                                "-of", "default=noprint_wrappers=1:nokey=1", Witness.file(mkv)])
        let lines = probe.stdout.split(separator: "\n").map(String.init)
        #expect(lines == (try Self.sqlite(scratch.file("l.sqlite"), "SELECT pts FROM frames ORDER BY display_index")))
        #expect(lines == Self.timecodes.map { String($0 + 1_000_000_000_000) })
        let back = try encode(scratch, ["--crf", "30", "--pts-schedule", "rate=25;back=3@0.4s", "--mkv"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stderr.contains("warning: stream.mkv not written: stream.264: frame 10 (display order)"), "\(back.stderr)")
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT status FROM runs WHERE run_id = 2") == ["done"])
    }

    @Test("bad timestamps input: one line naming the file and line or the flag and part, sysexits status, nothing recorded",
          arguments: [
            (["--tcfile-in", "short.txt"], "# timecode format v2\n0\n40\n", 65, "enclab: short.txt: line 4: entry 3 is missing: the file has 2 times, and --seek 0 with 30 frames needs 30\n"),
            (["--tcfile-in", "word.txt"], "# timecode format v2\n0\n4O\n", 65, "enclab: word.txt: line 3: '4O' is not a time in milliseconds (digits with an optional fraction, e.g. 33.367)\n"),
            (["--tcfile-in", "back.txt"], "# timecode format v2\n0\n40\n40\n" + (4...40).map { "\($0 * 40)" }.joined(separator: "\n"), 65, "enclab: back.txt: line 4: 40 ms is not after 40 ms on line 3 (times must increase)\n"),
            (["--tcfile-in", "none.txt"], nil, 66, "enclab: none.txt: no such timecode file\n"),
            // 576460752303424 ms is 576460752303424000 µs, past 2^59 µs = 576460752303423488 µs: named with the file and
            // its line, and bad data (65) as every other bad line of the file.
            (["--tcfile-in", "far.txt"], "# timecode format v2\n0\n40\n" + (0..<28).map { "\(576460752303424 + $0 * 40)" }.joined(separator: "\n"), 65,
             "enclab: far.txt: line 4: frame 2's PTS 576460752303424000 µs (the timecode file's time) is beyond ±2^59 µs, the range the lab's analysis and plots keep times in (x264's DTS, and spans, must stay within 64 bits)\n"),
            (["--pts-schedule", "rate=30;drop=2"], nil, 64, "enclab: --pts-schedule: part 'drop=2': probability '2' is outside 0 to 1 (see 'enclab encode --help')\n"),
            (["--pts-precision", "float16"], nil, 64, "enclab: --pts-precision: 'float16' is not one of int64, float32, int32, timescale:N (see 'enclab encode --help')\n"),
            (["--pts-source", "file"], nil, 64, "enclab: --pts-source file: c.y4m is y4m, which holds no timestamps (give --tcfile-in or --pts-schedule) (see 'enclab encode --help')\n"),
            (["--tcfile-in", "x.txt", "--pts-schedule", "rate=30"], nil, 64, "enclab: contradictory settings: --tcfile-in and --pts-schedule are both timestamp sources; give one (see 'enclab encode --help')\n"),
            (["--pts-source", "constant-rate", "--tcfile-in", "x.txt"], nil, 64, "enclab: contradictory settings: --pts-source constant-rate and --tcfile-in are both timestamp sources; give one (see 'enclab encode --help')\n"),
            (["--pts-offset", "576460752303423489"], nil, 64, "enclab: timestamps: frame 0's PTS 576460752303423489 µs (the constant-rate time with --pts-offset 576460752303423489) is beyond ±2^59 µs, the range the lab's analysis and plots keep times in (x264's DTS, and spans, must stay within 64 bits) (see 'enclab encode --help')\n"),
          ] as [([String], String?, Int32, String)])
    func badInput(flags: [String], file: String?, status: Int32, message: String) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        if let file, let name = flags.last { try file.write(toFile: scratch.file(name), atomically: true, encoding: .utf8) }
        let r = try encode(scratch, flags)
        #expect(r.status == status)
        #expect(r.stderr == message)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("l.sqlite")))
    }

    @Test("a timecode file over 64 MiB is refused (65) before it is read")
    func hugeTimecodeFile() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // A sparse file: its size is what counts, nothing is written.
        #expect(FileManager.default.createFile(atPath: scratch.file("big.txt"), contents: Data("# timecode format v2\n".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: scratch.file("big.txt")))
        try handle.truncate(atOffset: UInt64(TimecodeV2.maximumBytes) + 1)
        try handle.close()
        let r = try encode(scratch, ["--tcfile-in", "big.txt"])
        #expect(r.status == 65)
        #expect(r.stderr == "enclab: big.txt: a timecode file of \(TimecodeV2.maximumBytes + 1) bytes, over the 64 MiB the lab reads (some 5 million frames)\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("l.sqlite")))
    }

    @Test("hostile grids: negative offsets are plotted; a JSON integer beyond 2^53 is kept exact; a timecode file is found beside the experiment file; a schedule whose PTS all repeat is done with no span")
    func hostileGrids() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("exp"), withIntermediateDirectories: true)
        try Self.clip.write(to: scratch.file("exp/c.y4m"))
        try Self.timecodeFile.write(toFile: scratch.file("exp/tc.txt"), atomically: true, encoding: .utf8)
        let json = #"{"name": "h", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30, "frames": 6}, "grid": {"case": [{"pts-offset": -1000000}, {"pts-offset": 9007199254740993}, {"tcfile-in": "tc.txt"}, {"pts-schedule": "dup=1"}]}}"#
        try json.write(toFile: scratch.file("exp/h.json"), atomically: true, encoding: .utf8)
        // Run from the scratch folder, not the experiment's: tc.txt is named relative to the experiment file.
        let r = try Witness.enclab(["run", "exp/h.json", "--db", "h.sqlite", "--out", "h"], in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        let db = scratch.file("h.sqlite")
        #expect(try Self.sqlite(db, "SELECT (SELECT min(input_pts) FROM frames f WHERE f.run_id = runs.run_id) FROM runs ORDER BY run_id")
                == ["-1000000", "9007199254740993", "0", "0"])
        #expect(try Self.sqlite(db, "SELECT json_extract(settings, '$.timestamps.tcfile_in') FROM runs WHERE run_id = 3").first?.hasSuffix("exp/tc.txt") == true)
        // Every PTS equal and the last step 0: no span, no bitrate over it; the run is done all the same.
        #expect(try Self.sqlite(db, "SELECT status, coalesce(span_ticks, 'NULL'), coalesce(achieved_kbps, 'NULL') FROM runs JOIN timestamp_analysis USING (run_id) WHERE run_id = 4")
                == ["done|NULL|NULL"])
        #expect(FileManager.default.fileExists(atPath: scratch.file("h/timestamps-pts.png")))
        let plotted = try String(contentsOfFile: scratch.file("h/timestamps.dat"), encoding: .utf8)
        #expect(plotted.contains(" -1000000 ") && plotted.contains(" 9007199254740993 "), "\(plotted)")
    }

    @Test("an experiment's grid takes the timestamp settings: offsets crossed with precisions, one run each, keys differ")
    func experimentGrid() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let json = #"{"name": "ts", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30, "frames": 8}, "grid": {"pts-offset": [0, 1000000000000], "pts-precision": ["int64", "float32"], "pts-rebase": [false, true]}}"#
        try json.write(toFile: scratch.file("ts.json"), atomically: true, encoding: .utf8)
        let r = try Witness.enclab(["run", "ts.json"], in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        let db = scratch.file("results/ts.sqlite")
        #expect(try Self.sqlite(db, "SELECT count(*), count(DISTINCT run_key) FROM runs WHERE status = 'done'") == ["8|8"])
        #expect(try Self.sqlite(db, """
            SELECT json_extract(settings, '$.axes."pts-offset"'), json_extract(settings, '$.axes."pts-precision"'),
                   json_extract(settings, '$.axes."pts-rebase"'), (SELECT min(input_pts) FROM frames f WHERE f.run_id = runs.run_id)
            FROM runs ORDER BY run_id
            """).count == 8)
        // Rebased float32 at 10^12 starts at 0; not rebased, at float32(10^12) = 10^12 exactly (a multiple of 2^16... or its neighbour).
        let starts = try Self.sqlite(db, """
            SELECT (SELECT min(input_pts) FROM frames f WHERE f.run_id = runs.run_id) FROM runs
            WHERE json_extract(settings, '$.axes."pts-offset"') = 1000000000000 AND json_extract(settings, '$.axes."pts-precision"') = 'float32'
            ORDER BY json_extract(settings, '$.axes."pts-rebase"')
            """)
        #expect(starts == [String(Self.float32(1_000_000_000_000)), "0"])
    }
}
