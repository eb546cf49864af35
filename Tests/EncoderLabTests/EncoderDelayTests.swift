import Foundation
import Testing
@testable import EncoderLab

/// Encoder delay per frame (issue 21, item 3): `frame_delays` and `run_delay` as the lab stores them, against
/// libx264 itself (a C program of the test's own, linked with -lx264, prints `x264_encoder_maximum_delayed_frames`),
/// the x264 CLI's `--verbose` frame lines (the coded order and each frame's POC) and encoder.c's arithmetic written out.
@Suite("encoder delay per frame: frame_delays and run_delay against libx264, the x264 CLI and encoder.c's arithmetic", .serialized)
struct EncoderDelayTests {
    /// 60 frames: longer than x264's delay at preset medium with 1 thread (40) and 4 (47), so the pipeline fills.
    static let clip = SyntheticClip(width: 64, height: 48, frames: 60, seed: 21)

    /// Opens an encoder with x264's own defaults for PRESET [TUNE] and THREADS threads at 64x48, 25 fps, constant rate
    /// (`b_vfr_input` 0, as the lab's constant-rate plan), and prints the delay parameters as x264 has them before it
    /// opens, then `x264_encoder_maximum_delayed_frames`. With six more arguments BFRAMES B_ADAPT RC_LOOKAHEAD MBTREE
    /// SLICED_THREADS VFR_INPUT, those are set first (TUNE `-` for none).
    static let probe = """
        #include <stdio.h>
        #include <stdlib.h>
        #include <stdint.h>
        #include <x264.h>
        int main(int argc, char **argv) {
            x264_param_t p;
            const char *tune = argc > 3 && argv[3][0] != '-' ? argv[3] : NULL;
            if (x264_param_default_preset(&p, argv[1], tune) < 0) return 2;
            p.i_threads = atoi(argv[2]);
            p.i_width = 64; p.i_height = 48; p.i_csp = X264_CSP_I420;
            p.i_fps_num = 25; p.i_fps_den = 1; p.i_timebase_num = 1; p.i_timebase_den = 25; p.b_vfr_input = 0;
            if (argc > 9) {
                p.i_bframe = atoi(argv[4]); p.i_bframe_adaptive = atoi(argv[5]); p.rc.i_lookahead = atoi(argv[6]);
                p.rc.b_mb_tree = atoi(argv[7]); p.b_sliced_threads = atoi(argv[8]); p.b_vfr_input = atoi(argv[9]);
            }
            p.i_log_level = X264_LOG_NONE;
            printf("%d %d %d %d %d %d %d %d %d %d\\n", p.i_bframe, p.i_bframe_adaptive, p.i_bframe_pyramid, p.rc.i_lookahead,
                   p.rc.b_mb_tree, p.rc.i_vbv_buffer_size > 0, p.i_threads, p.b_sliced_threads, p.i_sync_lookahead, p.b_vfr_input);
            x264_t *h = x264_encoder_open(&p);
            if (!h) return 3;
            printf("%d\\n", x264_encoder_maximum_delayed_frames(h));
            x264_encoder_close(h);
            return 0;
        }
        """

    /// The probe built in `scratch`.
    static func buildProbe(_ scratch: Scratch) throws -> String {
        try probe.write(toFile: scratch.file("probe.c"), atomically: true, encoding: .utf8)
        let cc = try Witness.run("cc", ["-o", scratch.file("probe"), scratch.file("probe.c"), "-lx264"])
        guard cc.status == 0 else { throw LabError.software("cc probe.c: \(cc.stderr)") }
        return scratch.file("probe")
    }

    /// What the probe prints: the parameters before opening and libx264's maximum delayed frames.
    static func library(_ probe: String, preset: String, threads: Int, tune: String? = nil,
                        set q: X264DelayParameters? = nil) throws -> (X264DelayParameters, Int) {
        var arguments = [preset, String(threads), tune ?? "-"]
        if let q {
            arguments += [q.bframes, q.bAdapt, q.lookahead, q.mbtree ? 1 : 0, q.slicedThreads ? 1 : 0, q.vfrInput ? 1 : 0].map(String.init)
        }
        let r = try Tools.run(probe, arguments)
        guard r.status == 0 else { throw LabError.software("probe \(preset) \(threads): exit \(r.status)") }
        let lines = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n")
        let n = lines[0].split(separator: " ").map { Int($0)! }
        let p = X264DelayParameters(bframes: n[0], bAdapt: n[1], bPyramid: n[2], lookahead: n[3], mbtree: n[4] != 0, vbv: n[5] != 0,
                                    threads: n[6], slicedThreads: n[7] != 0, syncLookahead: n[8], vfrInput: n[9] != 0)
        return (p, Int(lines[1])!)
    }

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    /// `run_delay` of the last run: max_delay_frames, first_output_delay_frames, max_held_frames,
    /// maximum_delayed_frames, frame_delay_limit, frames_over_limit (NULL as "").
    static func runDelay(_ db: String) throws -> [String] {
        try sqlite(db, """
            SELECT max_delay_frames, first_output_delay_frames, max_held_frames, maximum_delayed_frames,
                ifnull(frame_delay_limit, ''), ifnull(frames_over_limit, '') FROM run_delay WHERE run_id = (SELECT max(run_id) FROM runs)
            """)[0].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
    }

    @Test("x264_encoder_maximum_delayed_frames is encoder.c's sum as the lab models it, preset by preset, at 1 and 4 threads")
    func modelMatchesLibrary() throws {
        let scratch = Scratch()
        let probe = try Self.buildProbe(scratch)
        for preset in ["ultrafast", "veryfast", "medium", "slower", "veryslow"] {
            for threads in [1, 4] {
                let (p, maximum) = try Self.library(probe, preset: preset, threads: threads)
                #expect(p.maximumDelayedFrames(frameThreads: threads) == maximum, "\(preset) threads \(threads): \(p)")
            }
        }
        // Written out: medium is bframes 3, b-adapt 1, rc-lookahead 40 with mb-tree: max(3, 40) = 40, + (4 - 1) frame
        // threads + sync-lookahead bframes + 1 = 4 at 4 threads: 47. veryslow: bframes 8 under b-adapt 2, max(8, 3) x 4 = 32,
        // below rc-lookahead 60: 60. zerolatency: no lookahead, no B-frames, sliced threads: 0.
        #expect(try Self.library(probe, preset: "medium", threads: 1).1 == 40)
        #expect(try Self.library(probe, preset: "medium", threads: 4).1 == 40 + 3 + 4)
        #expect(try Self.library(probe, preset: "veryslow", threads: 1).1 == 60)
        #expect(try Self.library(probe, preset: "medium", threads: 4, tune: "zerolatency").1 == 0)
    }

    @Test("MaxFrameDelayCount's cap, applied to x264's own preset defaults: libx264's maximum delayed frames plus the B-frame reordering stays within the limit")
    func capWithinLimit() throws {
        let scratch = Scratch()
        let probe = try Self.buildProbe(scratch)
        for preset in ["ultrafast", "veryfast", "medium", "veryslow"] {
            for threads in [1, 4] {
                for vfr in [false, true] {
                    for limit in [1, 2, 3, 4, 6, 10, 30] {
                        var (p, _) = try Self.library(probe, preset: preset, threads: threads)
                        p.vfrInput = vfr
                        let (q, _) = p.capped(to: limit, given: [])
                        let (_, maximum) = try Self.library(probe, preset: preset, threads: threads, set: q)
                        // x264 drops the pyramid below 2 B-frames itself (encoder.c); the model's reorderDelay says so.
                        #expect(maximum + q.reorderDelay <= limit, "\(preset) threads \(threads) vfr \(vfr) limit \(limit): \(q)")
                        #expect(q.longestHold == maximum + q.reorderDelay, "\(preset) threads \(threads) vfr \(vfr) limit \(limit)")
                    }
                }
            }
        }
        // Written out, veryslow (bframes 8, b-adapt 2, B-pyramid, rc-lookahead 60) at limit 10: trellis's max(8, 3) x 4 = 32
        // does not fit, b-adapt 1; 8 + 2 = 10 fits; rc-lookahead 10 - 2 = 8: x264's delay max(8, 8) = 8, + 2 = 10.
        let (veryslow, _) = try Self.library(probe, preset: "veryslow", threads: 1)
        let (capped, changes) = veryslow.capped(to: 10, given: [])
        #expect(changes == ["b-adapt 2 -> 1", "rc-lookahead 60 -> 8"])
        #expect(try Self.library(probe, preset: "veryslow", threads: 1, set: capped).1 == 8)
    }

    @Test("a default run (preset medium) at 1 and 4 threads: the first output and the largest delay are x264's maximum delayed frames; each frame comes out at call D + its coded index, in the x264 CLI's order",
          arguments: [1, 4])
    func defaultRun(threads: Int) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let probe = try Self.buildProbe(scratch)
        let d = try Self.library(probe, preset: "medium", threads: threads).1
        #expect(d == (threads == 1 ? 40 : 47))
        _ = try labEncode(scratch.file("c.y4m"), ["--preset", "medium", "--threads", String(threads)], in: scratch)
        let db = scratch.file("lab.sqlite")
        // max_delay_frames, first output, max held (B-pyramid: 2 more), x264's maximum; no limit.
        #expect(try Self.runDelay(db) == [String(d), String(d), String(d + 2), String(d), "", ""])
        let rows = try Self.sqlite(db, "SELECT coded_index, input_index, output_call, delayed_frames FROM frame_delays ORDER BY coded_index")
        #expect(rows.count == 60)
        // x264 returns one frame a call once it holds D: coded frame k at call D + k, the frames held after it
        // D until the last input (call 59), then one fewer each flush call.
        #expect(rows.enumerated().allSatisfy { k, row in
            let f = row.split(separator: "|").map { Int($0)! }
            return f[2] == d + k && f[3] == (d + k <= 59 ? d : 59 - k)
        }, "\(rows.prefix(4))")
        // The input index of each coded frame is the display order x264's CLI reports: its frame lines (coded
        // order) carry the picture order count, 2 per frame from the last IDR (POC 0; the clip's content has a scene
        // cut at 30), and an IDR is displayed at its coded position (every frame before it in one order is in the other).
        let cli = try Witness.x264(["--preset", "medium", "--threads", String(threads), "--verbose", "--no-progress",
                                           "-o", scratch.file("cli.264"), scratch.file("c.y4m")])
        #expect(cli.status == 0, "\(cli.stderr)")
        let pocs = cli.stderr.split(separator: "\n").filter { $0.contains("frame=") }.compactMap { line -> Int? in
            guard let r = line.range(of: "Poc:") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }
        #expect(pocs.count == 60)
        var idr = 0
        let display = pocs.enumerated().map { k, poc in
            if poc == 0 { idr = k }
            return idr + poc / 2
        }
        #expect(rows.map { Int($0.split(separator: "|")[1])! } == display)
    }

    @Test("tune zerolatency and RealTime=true: every frame comes out of the call that handed it in, 0 frames held")
    func zeroLatency() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        for flags in [["--tune", "zerolatency"], ["--vt", "RealTime=true"]] {
            _ = try labEncode(scratch.file("c.y4m"), ["--threads", "4", "--frames", "20"] + flags, in: scratch)
            let db = scratch.file("lab.sqlite")
            #expect(try Self.runDelay(db) == ["0", "0", "0", "0", "", ""], "\(flags)")
            #expect(try Self.sqlite(db, """
                SELECT count(*), sum(output_call = input_index AND input_index = coded_index AND delayed_frames = 0) FROM frame_delays
                WHERE run_id = (SELECT max(run_id) FROM runs)
                """) == ["20|20"], "\(flags)")
        }
    }

    @Test("MaxFrameDelayCount=4 at preset medium, 1 and 4 threads: bframes 3 -> 2, rc-lookahead 40 -> 2, sliced threads; no frame held over 4 calls",
          arguments: [1, 4])
    func maxFrameDelayCount(threads: Int) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", scratch.file("c.y4m"), "--db", scratch.file("lab.sqlite"), "--out", scratch.file("out"),
                                    "--preset", "medium", "--threads", String(threads), "--vt", "MaxFrameDelayCount=4"], in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        // The mapping written out (docs/videotoolbox.md): budget 4 (no b_vfr_input). B-pyramid reordering 2, so bframes
        // 3 + 2 = 5 > 4 becomes 2 (2 + 2 = 4); rc-lookahead 40 + 2 > 4 becomes 4 - 2 = 2; at 4 threads, frame threads
        // (3 + sync-lookahead 4 more) become sliced threads. x264's delay max(bframes 2, rc-lookahead 2) = 2, + 2 = 4.
        let changes = threads == 1 ? "bframes 3 -> 2, rc-lookahead 40 -> 2" : "sliced-threads, bframes 3 -> 2, rc-lookahead 40 -> 2"
        #expect(r.stderr.contains("MaxFrameDelayCount=4: x264 gets \(changes) (x264_encoder_maximum_delayed_frames 2 + B-frame reordering 2 = 4 calls at most)"), "\(r.stderr)")
        let db = scratch.file("lab.sqlite")
        let delay = try Self.runDelay(db)
        #expect(delay[3] == "2")  // x264's own maximum, read from the library
        #expect(delay[4] == "4" && delay[5] == "0")
        // Witnessed by the stored rows: every frame out within 4 calls of its own.
        #expect(try Self.sqlite(db, "SELECT max(output_call - input_index), count(*) FROM frame_delays") == ["\(delay[2])|60"])
        #expect(Int(delay[2])! <= 4)
        #expect(try Self.sqlite(db, "SELECT json_extract(settings, '$.resolved.bframes'), json_extract(settings, '$.x264_options') LIKE '%rc_lookahead=2 %' FROM runs") == ["2|1"])
    }

    @Test("a MaxFrameDelayCount the given x264 options break: each frame held longer is counted and warned about")
    func violationsCounted() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // --rc-lookahead 20 and --bframes 0 given: x264 holds 20 frames (max(0, 20)), every frame after the 20th... all of
        // them 20 calls, over the limit 4: 60 frames.
        let r = try Witness.enclab(["encode", scratch.file("c.y4m"), "--db", scratch.file("lab.sqlite"), "--out", scratch.file("out"),
                                    "--preset", "medium", "--threads", "1", "--bframes", "0", "--rc-lookahead", "20",
                                    "--vt", "MaxFrameDelayCount=4"], in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("MaxFrameDelayCount=4 (x264_encoder_maximum_delayed_frames 20 + B-frame reordering 0 = 20 calls at most, more than 4: the x264 options given keep it)"), "\(r.stderr)")
        #expect(r.stderr.contains("MaxFrameDelayCount=4: 60 of 60 frames held longer (the longest: input frame 0 came out at encode call 20, 20 calls after its own)"), "\(r.stderr)")
        let db = scratch.file("lab.sqlite")
        #expect(try Self.runDelay(db) == ["20", "20", "20", "20", "4", "60"])
        #expect(try Self.sqlite(db, "SELECT count(*) FROM frame_delays WHERE output_call - input_index > 4") == ["60"])
        #expect(try Self.sqlite(db, "SELECT warnings LIKE '%MaxFrameDelayCount=4: 60 of 60 frames held longer%' FROM runs") == ["1"])
    }

    @Test("MaxFrameDelayCount takes a whole number of frames from 0, recorded among the properties only when given")
    func parsing() throws {
        var vt = VideoToolboxSettings()
        #expect(vt.canonicalProperties["MaxFrameDelayCount"] == nil)
        try vt.set("kVTCompressionPropertyKey_MaxFrameDelayCount", "0")
        #expect(vt.maxFrameDelayCount == 0 && vt.canonicalProperties["MaxFrameDelayCount"] as? Int == 0)
        for bad in ["-1", "", "2.5", "x", "2147483648"] {
            #expect(throws: LabError(.usage, "bad value for VideoToolbox property 'MaxFrameDelayCount': '\(bad)' (a whole number of frames from 0 to 2147483647; Apple's default, kVTUnlimitedFrameDelayCount (-1), is the property not given)")) {
                try vt.set("MaxFrameDelayCount", bad)
            }
        }
    }

    @Test("the metrics export has each run's max_delay_frames, then its skipped_frames count, then the RTP stage's columns")
    func exportColumn() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        _ = try labEncode(scratch.file("c.y4m"), ["--threads", "1", "--frames", "20", "--tune", "zerolatency"], in: scratch)
        _ = try labEncode(scratch.file("c.y4m"), ["--threads", "1", "--frames", "50"], in: scratch)
        let out = try Witness.enclab(["export", "--db", scratch.file("lab.sqlite"), "--table", "metrics", "--format", "csv"], in: scratch.path)
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        // max_delay_frames, skipped_frames, then the RTP stage's 13 columns (schema 9), empty for these runs.
        let header = lines[0].split(separator: ",").map(String.init)
        let column = try #require(header.firstIndex(of: "max_delay_frames"))
        #expect(column == header.count - 15 && header[column + 1] == "skipped_frames" && header[column + 2] == "rtp_packets")
        #expect(lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[column] } == ["0", "40"])
        #expect(lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[column + 1] } == ["0", "0"])
    }
}
