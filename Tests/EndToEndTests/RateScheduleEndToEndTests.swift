import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// `--rate-schedule` end to end (issue 21): the built enclab encodes a 60-frame clip at 25 fps with and without a
/// schedule, one thread; the streams are compared byte for byte and packet by packet (ffprobe), the stored changes read
/// with sqlite3.
@Suite("rate schedules, end to end: what lands where, what x264 ignores")
struct RateScheduleEndToEndTests {
    static let common = ["--preset", "veryfast", "--threads", "1", "--no-plots"]

    /// Encodes `c.y4m` in `dir` with `flags` into database `name`.sqlite and folder `name`; returns the result and the
    /// stream's bytes.
    static func encode(_ dir: String, _ name: String, _ flags: [String]) throws -> (TestSupport.Result, Data?) {
        let r = try TestSupport.enclab(["encode", "c.y4m"] + common + flags + ["--db", "\(name).sqlite", "--out", name], in: dir)
        let folder = try TestSupport.sqlite("\(dir)/\(name).sqlite", "SELECT stream_path FROM runs WHERE run_id = 1").first ?? ""
        return (r, FileManager.default.contents(atPath: folder.hasPrefix("/") ? folder : "\(dir)/\(folder)"))
    }

    static func clip() throws -> String {
        let dir = TestSupport.scratchFolder("enclab-rate")
        try SyntheticClip(width: 160, height: 120, frames: 60, seed: 5).write(to: "\(dir)/c.y4m")
        return dir
    }

    /// The modes RateChangeRules tells apart (docs/rate-control-in-motion.md, "What x264 does with a change"), as the
    /// x264 flags that open each.
    static let modes: [String: [String]] = [
        "CBR without HRD": ["--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300"],
        "ABR with VBV": ["--bitrate", "300", "--vbv-maxrate", "600", "--vbv-bufsize", "600"],
        "ABR without VBV": ["--bitrate", "300"],
        "NAL HRD (--rc cbr)": ["--rc", "cbr", "--bitrate", "300"],
        "CRF with VBV": ["--crf", "23", "--vbv-maxrate", "300", "--vbv-bufsize", "300"],
        "CRF with VBV and NAL HRD": ["--crf", "23", "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "vbr"],
        "CRF without VBV": ["--crf", "23"],
        "CQP": ["--qp", "23"],
    ]

    @Test("a schedule that changes nothing (the targets in force) gives the bytes of the run without it, in every mode the rules tell apart; stored 'unchanged' at frame 20, no warning, and x264 logs no refusal",
          arguments: [
            ("CBR without HRD", "20:bitrate=300", ["bitrate|300"]),
            ("ABR with VBV", "20:bitrate=300,vbv-maxrate=600,vbv-bufsize=600", ["bitrate|300", "vbv-maxrate|600", "vbv-bufsize|600"]),
            ("ABR without VBV", "20:bitrate=300", ["bitrate|300"]),
            ("NAL HRD (--rc cbr)", "20:bitrate=300", ["bitrate|300"]),
            ("CRF with VBV", "20:crf=23,vbv-maxrate=300,vbv-bufsize=300", ["crf|23", "vbv-maxrate|300", "vbv-bufsize|300"]),
            ("CRF with VBV and NAL HRD", "20:crf=23,vbv-maxrate=300", ["crf|23", "vbv-maxrate|300"]),
            ("CRF without VBV", "20:crf=23", ["crf|23"]),
          ])
    func sameTarget(_ mode: String, _ schedule: String, _ rows: [String]) throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let flags = try #require(Self.modes[mode])
        let (a, plain) = try Self.encode(dir, "a", flags)
        let (b, scheduled) = try Self.encode(dir, "b", flags + ["--rate-schedule", schedule])
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        #expect(plain != nil && plain == scheduled, "\(mode)")
        #expect(!b.stderr.contains("rate schedule:") && !b.stderr.contains(RateChangeRules.hrdRefusal), "\(b.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/b.sqlite", "SELECT name, value, frame, applied_frame, status FROM rate_changes ORDER BY change_index")
                == rows.map { "\($0)|20|20|unchanged" })
    }

    @Test("changes x264 ignores or refuses give the bytes of the run without them, a warning on stderr and in the run, and a row without an applied frame, in every mode the rules tell apart; x264's own refusal line where it prints one, none elsewhere",
          arguments: [
            // ABR with VBV (maxrate above the bitrate): the bitrate is read once, at open; crf is read only under CRF.
            ("ABR with VBV", "20:bitrate=100", "ignored", "ABR with vbv-maxrate above the bitrate"),
            ("ABR with VBV", "20:crf=30", "ignored", "the rate-control method is abr: x264 copies crf but reads it only under CRF"),
            // ABR without VBV: nothing is copied.
            ("ABR without VBV", "20:bitrate=100", "ignored", "VBV was off when x264 opened"),
            // The lab's --rc cbr sets nal-hrd cbr: x264 refuses and logs it.
            ("NAL HRD (--rc cbr)", "20:bitrate=100", "refused", "NAL HRD is on (nal-hrd cbr)"),
            ("NAL HRD (--rc cbr)", "20:vbv-bufsize=600", "refused", "NAL HRD is on (nal-hrd cbr)"),
            // x264's CBR without HRD: vbv-maxrate above the bitrate alone is set back to the bitrate.
            ("CBR without HRD", "20:vbv-maxrate=500", "ignored", "x264's CBR (vbv-maxrate at the bitrate when it opened)"),
            ("CBR without HRD", "20:crf=30", "ignored", "the rate-control method is abr: x264 copies crf"),
            // CRF with VBV: no bitrate target; under NAL HRD the VBV is refused too.
            ("CRF with VBV", "20:bitrate=100", "ignored", "the rate-control method is crf: it has no bitrate target"),
            ("CRF with VBV and NAL HRD", "20:vbv-maxrate=150", "refused", "NAL HRD is on (nal-hrd vbr)"),
            // CRF without VBV: VBV cannot be turned on; CQP reads no crf.
            ("CRF without VBV", "20:vbv-maxrate=100", "ignored", "VBV was off when x264 opened"),
            ("CQP", "20:crf=30", "ignored", "the rate-control method is cqp: x264 copies crf"),
          ])
    func ignored(_ mode: String, _ schedule: String, _ status: String, _ reason: String) throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let flags = try #require(Self.modes[mode])
        let (a, plain) = try Self.encode(dir, "a", flags)
        let (b, scheduled) = try Self.encode(dir, "b", flags + ["--rate-schedule", schedule])
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        #expect(plain != nil && plain == scheduled, "\(mode) \(schedule)")
        let set = String(schedule.dropFirst(3))
        let warning = "rate schedule: \(schedule) (x264 \(set)) at frame 20 \(status) by x264: \(reason)"
        #expect(b.stderr.contains(warning), "\(b.stderr)")
        // x264's own log line, through the session's log callback, exactly where x264 refuses; never elsewhere.
        #expect(b.stderr.contains("x264: \(RateChangeRules.hrdRefusal)") == (status == "refused"), "\(b.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/b.sqlite", "SELECT warnings FROM runs").joined().contains(warning))
        let row = try TestSupport.sqlite("\(dir)/b.sqlite", "SELECT frame, quote(applied_frame), status, instr(reason, '\(reason.replacingOccurrences(of: "'", with: "''"))') = 1 FROM rate_changes")
        #expect(row == ["20|NULL|\(status)|1"])
    }

    @Test("enclab analyze computes step_response again, like the other analyses: rows deleted or damaged in the database (sqlite3) come back as the encode wrote them")
    func analyzeRecomputes() throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (r, _) = try Self.encode(dir, "a", ["--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300",
                                                "--rate-schedule", "10:bitrate=200;30:bitrate=150"])
        #expect(r.status == 0, "\(r.stderr)")
        let db = "\(dir)/a.sqlite", all = "SELECT * FROM step_response ORDER BY change_index"
        let written = try TestSupport.sqlite(db, all)
        #expect(written.count == 2)
        _ = try TestSupport.sqlite(db, "UPDATE step_response SET settle_frames = 999, overshoot_pct = -1 WHERE change_index = 0; DELETE FROM step_response WHERE change_index = 1")
        #expect(try TestSupport.sqlite(db, all).count == 1)
        let a = try TestSupport.enclab(["analyze", "--db", "a.sqlite"], in: dir)
        #expect(a.status == 0 && a.stdout == "analysed run 1\n", "\(a.stdout)\(a.stderr)")
        #expect(try TestSupport.sqlite(db, all) == written)
    }

    @Test("the console line after a run gives the bitrate target in force where the 1-s peak starts: a schedule from frame 0 replaces the opened one (the ratio recomputed from sqlite3)")
    func consoleTargetInForce() throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cbr = ["--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300"]
        let (r, _) = try Self.encode(dir, "a", cbr + ["--rate-schedule", "0:bitrate=150"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/a.sqlite", "SELECT frame, status, target_kbps FROM rate_changes") == ["0|applied|150.0"])
        let peak = Double(try TestSupport.sqlite("\(dir)/a.sqlite", "SELECT peak_1s_kbps FROM run_metrics WHERE run_id = 1").first ?? "") ?? -1
        #expect(peak > 0)
        let expected = String(format: "peak 1 s %.1f kbit/s, %.2f x the target 150 kbit/s in force there (rate schedule)", peak, peak / 150)
        #expect(r.stdout.contains(expected), "\(r.stdout)")
        #expect(!r.stdout.contains("the target 300"), "\(r.stdout)")
        // Without a schedule the line is as before: the opened target, no note.
        let (plain, _) = try Self.encode(dir, "b", cbr)
        #expect(plain.stdout.contains("x the target 300 kbit/s") && !plain.stdout.contains("rate schedule"), "\(plain.stdout)")
    }

    @Test("under CBR without NAL HRD a change lands on the frame it names: every packet coded before frame 20 is the run's without the schedule (ffprobe), later ones are not; 0.8s names the same frame at 25 fps")
    func landsOnFrame() throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cbr = ["--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300"]
        let (a, _) = try Self.encode(dir, "a", cbr)
        let (b, framed) = try Self.encode(dir, "b", cbr + ["--rate-schedule", "20:bitrate=100"])
        let (c, timed) = try Self.encode(dir, "c", cbr + ["--rate-schedule", "0.8s:bitrate=100"])
        #expect(a.status == 0 && b.status == 0 && c.status == 0, "\(a.stderr) \(b.stderr) \(c.stderr)")
        #expect(framed != nil && framed == timed)
        func sizes(_ name: String) throws -> [Int] {
            let path = try TestSupport.sqlite("\(dir)/\(name).sqlite", "SELECT stream_path FROM runs WHERE run_id = 1")[0]
            let r = try TestSupport.tool("ffprobe", ["-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", "file:\(path.hasPrefix("/") ? path : "\(dir)/\(path)")"])
            return r.stdout.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        let before = try sizes("a"), after = try sizes("b")
        #expect(before.count == 60 && after.count == 60)
        // The coded position of input frame 20 (veryfast codes B-frames after their references).
        let coded = Int(try TestSupport.sqlite("\(dir)/b.sqlite", "SELECT coded_index FROM frames WHERE display_index = 20")[0]) ?? -1
        #expect(coded > 0)
        #expect(Array(before[..<coded]) == Array(after[..<coded]))
        #expect(Array(before[coded...]) != Array(after[coded...]))
        // A third of the bitrate from there on: the rest of the stream is smaller.
        #expect(after[coded...].reduce(0, +) < before[coded...].reduce(0, +))
        #expect(try TestSupport.sqlite("\(dir)/c.sqlite", "SELECT quote(requested_frame), requested_time_s, frame, applied_frame, status, target_kbps FROM rate_changes")
                == ["NULL|0.8|20|20|applied|100.0"])
        // The step response is stored for it, from the frame it landed on.
        #expect(try TestSupport.sqlite("\(dir)/b.sqlite", "SELECT change_index, start_coded, target_kbps, tolerance_pct FROM step_response")
                == ["0|\(coded)|100.0|10.0"])
    }

    @Test("two changes written at different points that land on one picture and set one x264 target are refused (64), naming both and the frame; no run is stored done",
          arguments: [("20:bitrate=100;0.8s:bitrate=150", "20:bitrate=100 and 0.8s:bitrate=150 both land on input frame 20: x264's bitrate would be set twice"),
                      ("0.79s:AverageBitRate=150000;20:bitrate=150", "0.79s:AverageBitRate=150000 and 20:bitrate=150 both land on input frame 20: x264's bitrate would be set twice"),
                      ("0.8s:vbv-bufsize=200;20:DataRateLimits=30000,1", "0.8s:vbv-bufsize=200 and 20:DataRateLimits=30000,1 both land on input frame 20: x264's vbv-bufsize would be set twice")])
    func twoPointsOnePicture(_ schedule: String, _ message: String) throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // At 25 fps input frame 20 is the first picture at or after 0.79 s and 0.8 s (20 / 25 = 0.8 s).
        let cbr = ["--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300"]
        let (r, _) = try Self.encode(dir, "a", cbr + ["--rate-schedule", schedule])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("--rate-schedule '\(schedule)': \(message)"), "\(r.stderr)")
        // Refused before anything is stored: no runs table (encode's sqlite3 query above makes an empty file) and no
        // output folder; were a runs table made, no run in it done.
        if try TestSupport.sqlite("\(dir)/a.sqlite", "SELECT count(*) FROM sqlite_master WHERE name = 'runs'") == ["1"] {
            #expect(try TestSupport.sqlite("\(dir)/a.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'") == ["0"])
        }
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/a"))
        // Either point alone is a run.
        let (one, _) = try Self.encode(dir, "b", cbr + ["--rate-schedule", String(schedule.split(separator: ";")[1])])
        #expect(one.status == 0, "\(one.stderr)")
    }

    @Test("the staircase chart's data equals the stored changes (sqlite3): each reached change at its frame's DTS with its target and status; the staircase steps at the applied ones")
    func staircase() throws {
        let dir = try Self.clip()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // x264's CBR without HRD: bitrate changes apply; a vbv-maxrate above the bitrate alone is set back (ignored).
        let r = try TestSupport.enclab(["encode", "c.y4m", "--preset", "veryfast", "--threads", "1", "--bitrate", "300", "--vbv-maxrate", "300",
                                        "--vbv-bufsize", "300", "--rate-schedule", "10:bitrate=200;20:vbv-maxrate=500;30:bitrate=150",
                                        "--plots", "render", "--db", "s.sqlite", "--out", "s"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let db = "\(dir)/s.sqlite"
        let folder = Paths.parent(try TestSupport.sqlite(db, "SELECT stream_path FROM runs WHERE run_id = 1")[0])
        let base = folder.hasPrefix("/") ? folder : "\(dir)/\(folder)"
        #expect(FileManager.default.fileExists(atPath: "\(base)/rate.png") && FileManager.default.fileExists(atPath: "\(base)/rate.svg"))
        func rows(_ file: String) throws -> [[Double]] {
            try String(contentsOfFile: "\(base)/\(file)", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
                .map { $0.split(separator: " ").map { Double($0) ?? .nan } }
        }
        // Seconds of each change's frame's DTS from the first DTS, as sqlite3 computes them.
        let stored = try TestSupport.sqlite(db, """
            SELECT c.change_index, (f.dts - (SELECT min(dts) FROM frames WHERE run_id = 1)) * 1.0 * r.timebase_num / r.timebase_den,
                   c.target_kbps, c.status FROM rate_changes c JOIN runs r USING (run_id)
            JOIN frames f ON f.run_id = c.run_id AND f.display_index = c.frame ORDER BY c.change_index
            """).map { $0.split(separator: "|").map(String.init) }
        #expect(stored.map { $0[3] } == ["applied", "ignored", "applied"])
        let marks = try rows("rate-changes.dat")
        #expect(marks.count == stored.count)
        let statuses = ["applied", "unchanged", "ignored", "refused"]
        for (m, s) in zip(marks, stored) {
            #expect(Int(m[0]) == Int(s[0]))
            #expect(abs(m[1] - (Double(s[1]) ?? -1)) < 1e-9)
            #expect(m[2] == Double(s[2]))
            #expect(statuses[Int(m[3])] == s[3])
        }
        // The staircase: the opened 300 kbit/s at 0, each applied change's target at its time, the last again at the end.
        let steps = try rows("rate-steps.dat")
        let applied = stored.filter { $0[3] == "applied" }
        #expect(steps.count == applied.count + 2)
        #expect(steps.first == [0, 300])
        for (step, s) in zip(steps.dropFirst(), applied) {
            #expect(abs(step[0] - (Double(s[1]) ?? -1)) < 1e-9 && step[1] == Double(s[2]))
        }
        #expect(steps.last?[1] == 150)
    }
}
