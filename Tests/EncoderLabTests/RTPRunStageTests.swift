import Foundation
import Testing
@testable import EncoderLab

/// A run's RTP stage (issue 23, items 1 and 3): packets per frame against tshark reading `enclab rtp pack`'s capture of
/// the same stream at the same MTU (that packetizer witnessed byte for byte against GStreamer's rtph264pay), the
/// damaged decode against Debian's ffmpeg decoding the `damaged.264` written beside the run (its psnr filter), and
/// the seeded channel repeated run to run.
@Suite("RTP stage of a run: rtp_frames, rtp_loss_frames, rtp_runs against tshark and ffmpeg's psnr filter", .serialized)
struct RTPRunStageTests {
    /// 24 frames of 176x144: several packets a frame at MTU 300, so a lost packet costs slices, not whole frames.
    static let clip = SyntheticClip(width: 176, height: 144, frames: 24, seed: 23)
    static let flags = ["--preset", "veryfast", "--threads", "1", "--qp", "24", "--keyint", "12", "--bframes", "0"]

    static func sqlite(_ db: String, _ sql: String) throws -> [String] { try StoreOpenTests.sqlite(db, sql) }

    @Test("packets per frame and bytes as tshark counts them in rtp pack's capture of the run's stream; overhead = packet bytes - NAL unit bytes")
    func packetsPerFrame() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        _ = try labEncode(scratch.file("c.y4m"), Self.flags + ["--rtp", "mtu=300"], in: scratch)
        let db = scratch.file("lab.sqlite")
        let rows = try Self.sqlite(db, "SELECT packets, rtp_bytes, ifnull(lost_packets, 'null') FROM rtp_frames WHERE run_id = 1 ORDER BY coded_index")
        #expect(rows.count == 24)
        #expect(rows.allSatisfy { $0.hasSuffix("|null") })
        let pack = try Witness.enclab(["rtp", "pack", "--db", db, "--run", "1", scratch.file("w.pcap"), "--mtu", "300"], in: scratch.path)
        try #require(pack.status == 0, "\(pack.stderr)")
        let t = try Witness.run("tshark", ["-r", scratch.file("w.pcap"), "-d", "udp.port==5004,rtp", "-T", "fields", "-e", "rtp.timestamp", "-e", "udp.length"])
        try #require(t.status == 0, "\(t.stderr)")
        // Packets and RTP bytes (UDP length - 8) per timestamp, in sending (decode) order.
        var order: [String] = [], count: [String: (Int, Int)] = [:]
        for line in t.stdout.split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            if count[f[0]] == nil { order.append(f[0]) }
            let (n, b) = count[f[0]] ?? (0, 0)
            count[f[0]] = (n + 1, b + Int(f[1])! - 8)
        }
        #expect(order.map { "\(count[$0]!.0)|\(count[$0]!.1)|null" } == rows)
        #expect(rows.contains { $0.hasPrefix("1|") == false })  // some frame took several packets
        // rtp_runs: the sums and the largest, and overhead + NAL unit bytes = every packet's bytes.
        let run = try Self.sqlite(db, """
            SELECT r.packets = (SELECT sum(packets) FROM rtp_frames WHERE run_id = 1),
                   r.max_packets_per_frame = (SELECT max(packets) FROM rtp_frames WHERE run_id = 1),
                   r.largest_burst_bytes = (SELECT max(rtp_bytes) FROM rtp_frames WHERE run_id = 1),
                   r.rtp_overhead_bytes + r.payload_bytes = (SELECT sum(rtp_bytes) FROM rtp_frames WHERE run_id = 1),
                   r.mtu, r.packetization_mode, r.loss IS NULL, (SELECT count(*) FROM rtp_loss_frames)
            FROM rtp_runs AS r WHERE run_id = 1
            """)
        #expect(run == ["1|1|1|1|300|1|1|0"])
        let stream = scratch.file("out") + "/" + (try Self.sqlite(db, "SELECT run_key FROM runs")[0].prefix(16)) + "/stream.264"
        // The stream less its start codes (00 00 01, or 00 00 00 01: emulation prevention keeps 00 00 01 out of NAL units).
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stream)))
        var startCodeBytes = 0
        for i in 2..<bytes.count where bytes[i] == 1 && bytes[i - 1] == 0 && bytes[i - 2] == 0 {
            startCodeBytes += i >= 3 && bytes[i - 3] == 0 ? 4 : 3
        }
        #expect(try Self.sqlite(db, "SELECT payload_bytes FROM rtp_runs") == [String(bytes.count - startCodeBytes)])
        // The run's folder holds the chart's data and script (drawn by enclab plot): packets per frame, no loss columns.
        let folder = (stream as NSString).deletingLastPathComponent
        let dat = try String(contentsOfFile: folder + "/rtp.dat", encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(dat.map { $0.split(separator: " ").prefix(4).joined(separator: "|") } == rows.enumerated().map { k, r in
            "\(k)|\(k)|\(r.split(separator: "|")[0])|NaN" })
        #expect(try String(contentsOfFile: folder + "/rtp.gp", encoding: .utf8).contains("'rtp.dat' using 1:3 with boxes"))
    }

    /// The per-frame luma PSNR ffmpeg's psnr filter gives `stream` (decoded by Debian's ffmpeg, one thread) against `source`.
    static func ffmpegPSNR(_ stream: String, _ source: String, scratch: Scratch) throws -> [Double] {
        let stats = scratch.file("psnr-\(UUID().uuidString).log")
        let r = try Witness.run("ffmpeg", ["-nostdin", "-v", "error", "-threads", "1", "-f", "h264", "-i", Witness.file(stream),
                                           "-i", Witness.file(source), "-lavfi", "[0:v][1:v]psnr=stats_file=\(stats)", "-f", "null", "-"])
        guard r.status == 0 else { throw LabError.software("ffmpeg psnr: \(r.stderr)") }
        return try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n").map { line in
            let field = line.split(separator: " ").first { $0.hasPrefix("psnr_y:") }!
            return field.dropFirst("psnr_y:".count) == "inf" ? .infinity : Double(field.dropFirst("psnr_y:".count))!
        }
    }

    @Test("Bernoulli 5 % on slices of one packet each: the run is done; damaged.264 as ffmpeg decodes it has the stored PSNR of every frame; the loss-free column is frames.psnr_y; states and events as the rows add up")
    func damagedDecode() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        // Slices of at most 250 bytes, each in a packet of its own at MTU 300: a lost packet loses one slice, which
        // libavcodec conceals. ffmpeg's h264 parser (the witness reads a raw .264) joins an access unit whose first
        // slice is lost to the one before, so the one-to-one comparison takes the first seed whose losses leave every
        // frame shown (no frame frozen) and some broken.
        var found: (db: String, seed: Int)?
        for seed in 1...40 {
            let db = scratch.file("lab-\(seed).sqlite")
            let r = try Witness.enclab(["encode", scratch.file("c.y4m"), "--db", db, "--out", scratch.file("out-\(seed)")] + Self.flags
                                       + ["--slice-max-size", "250", "--rtp", "mtu=300", "--loss", "bernoulli:p=0.05,seed=\(seed)"], in: scratch.path)
            try #require(r.status == 0, "\(r.stderr)")
            if try Self.sqlite(db, "SELECT frames_frozen = 0 AND frames_broken > 0 FROM rtp_runs") == ["1"] { found = (db, seed); break }
        }
        let (db, seed) = try #require(found)
        #expect(try Self.sqlite(db, "SELECT status FROM runs") == ["done"])
        let lost = Int(try Self.sqlite(db, "SELECT sum(lost_packets) FROM rtp_frames")[0])!
        #expect(lost > 0)
        #expect(try Self.sqlite(db, "SELECT packets_lost = \(lost), loss, expected_loss_rate FROM rtp_runs") == ["1|bernoulli:p=0.05,seed=\(seed)|0.05"])
        // The loss-free column is the run's own decode.
        #expect(try Self.sqlite(db, """
            SELECT count(*) FROM rtp_loss_frames AS l JOIN frames AS f ON f.run_id = l.run_id AND f.display_index = l.display_index
            WHERE l.lossfree_psnr_y IS f.psnr_y
            """) == ["24"])
        let rows = try Self.sqlite(db, "SELECT state, ifnull(psnr_y, 'inf'), ifnull(lossfree_psnr_y, 'inf'), ifnull(event_frame, '') FROM rtp_loss_frames ORDER BY display_index")
            .map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count == 24)
        #expect(rows.contains { $0[0] == "broken" })
        // rtp_runs.mean_psnr_y and lossfree_mean_psnr_y (docs/rtp.md): the plain average over every displayed frame
        // (rtp_loss_frames rows, intact ones too), a frame without any error (PSNR NULL) left out, summed by sqlite.
        #expect(try Self.sqlite(db, """
            SELECT abs(mean_psnr_y - (SELECT sum(psnr_y) / count(psnr_y) FROM rtp_loss_frames)) < 1e-9,
                   abs(lossfree_mean_psnr_y - (SELECT sum(lossfree_psnr_y) / count(lossfree_psnr_y) FROM rtp_loss_frames)) < 1e-9,
                   (SELECT count(psnr_y) FROM rtp_loss_frames) = 24, frames_broken + frames_frozen < 24
            FROM rtp_runs
            """) == ["1|1|1|1"])
        // Each state from its numbers (0.5 dB), each event's frames counted from its first.
        for r in rows where r[0] != "frozen" {
            let loss = Double(r[1]) ?? .infinity, clean = Double(r[2]) ?? .infinity
            #expect((r[0] == "broken") == (loss < clean - 0.5), "\(r)")
        }
        for (k, r) in rows.enumerated() {
            let affected = r[0] != "intact"
            #expect(affected == !r[3].isEmpty, "\(k): \(r)")
            if affected { #expect(Int(r[3])! == (k > 0 && rows[k - 1][0] != "intact" ? Int(rows[k - 1][3])! + 1 : 0), "\(k)") }
        }
        let counts = try Self.sqlite(db, """
            SELECT frames_broken = (SELECT count(*) FROM rtp_loss_frames WHERE state = 'broken'),
                   frames_frozen = (SELECT count(*) FROM rtp_loss_frames WHERE state = 'frozen'),
                   loss_events = (SELECT count(*) FROM rtp_loss_frames WHERE event_frame = 0),
                   max_recovery_frames IS (SELECT max(event_frame) + 1 FROM rtp_loss_frames), frames_frozen
            FROM rtp_runs
            """)
        #expect(counts.first?.hasPrefix("1|1|1|") == true, "\(counts)")
        // The witness: Debian's ffmpeg decodes damaged.264 (the same libavcodec, its concealment) and its psnr filter
        // measures each output picture against the source frame in order: with no frame frozen they pair one to one.
        let folder = scratch.file("out-\(seed)") + "/" + (try Self.sqlite(db, "SELECT run_key FROM runs")[0].prefix(16))
        let damaged = folder + "/damaged.264"
        #expect(FileManager.default.fileExists(atPath: damaged))
        let witness = try Self.ffmpegPSNR(damaged, scratch.file("c.y4m"), scratch: scratch)
        #expect(witness.count == 24)
        for (k, (w, r)) in zip(witness, rows).enumerated() {
            let ours = Double(r[1]) ?? .infinity
            // ffmpeg's stats file prints 2 decimals.
            #expect(w == ours || abs(w - ours) <= 0.005 + 1e-9, "frame \(k): ffmpeg \(w), lab \(ours)")
        }
    }

    @Test("the same seed loses the same packets in another database; another seed other packets; a whole-frame loss is frozen, not a failed run")
    func seededAcrossRuns() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        func lostPackets(_ db: String, _ loss: String) throws -> [String] {
            let r = try Witness.enclab(["encode", scratch.file("c.y4m"), "--db", scratch.file(db), "--out", scratch.file("out-" + db)]
                                       + Self.flags + ["--rtp", "mtu=300", "--loss", loss], in: scratch.path)
            #expect(r.status == 0, "\(r.stderr)")
            return try Self.sqlite(scratch.file(db), "SELECT lost_packets FROM rtp_frames ORDER BY coded_index")
        }
        let a = try lostPackets("a.sqlite", "gilbert:p=0.05,r=0.5,seed=9")
        let b = try lostPackets("b.sqlite", "gilbert:p=0.05,r=0.5,seed=9")
        let c = try lostPackets("c.sqlite", "gilbert:p=0.05,r=0.5,seed=10")
        #expect(a == b)
        #expect(a != c)
        // 30 % of packets lost: whole frames go; the run is still done and says which frames were not shown.
        _ = try lostPackets("d.sqlite", "bernoulli:p=0.3,seed=1")
        #expect(try Self.sqlite(scratch.file("d.sqlite"), "SELECT status, frames_frozen + frames_broken > 0, frames_frozen = (SELECT count(*) FROM rtp_loss_frames WHERE state = 'frozen') FROM runs JOIN rtp_runs USING (run_id)") == ["done|1|1"])
    }

    @Test("pictures OpenH264's frame skip dropped are held on both sides, not lost: --loss none gives no frozen frame and no event")
    func encoderSkippedFrames() throws {
        let scratch = Scratch()
        // Noise at 20 kbps: OpenH264 (bEnableFrameSkip) drops most pictures (skipped_frames).
        let gen = try Witness.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25,noise=alls=40:allf=t",
                                             "-frames:v", "40", "-pix_fmt", "yuv420p", "-y", scratch.file("n.y4m")])
        try #require(gen.status == 0, "\(gen.stderr)")
        _ = try labEncode(scratch.file("n.y4m"), ["--encoder", "openh264", "--bitrate", "20", "--bEnableFrameSkip", "true",
                                                   "--loss", "none:seed=1"], in: scratch)
        let db = scratch.file("lab.sqlite")
        let skipped = Int(try Self.sqlite(db, "SELECT count(*) FROM skipped_frames")[0])!
        try #require(skipped > 0, "the clip should make OpenH264 skip pictures")
        #expect(try Self.sqlite(db, "SELECT packets_lost, frames_frozen, frames_broken, loss_events, unrecovered_events FROM rtp_runs") == ["0|0|0|0|0"])
        #expect(try Self.sqlite(db, "SELECT count(*) FROM rtp_loss_frames WHERE state = 'intact' AND event_frame IS NULL") == ["40"])
    }

    @Test("--rtp and --loss show in the run's label (encode's console line, settings.x264_args the report shows): runs with other loss differ")
    func labelsNameLoss() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", scratch.file("c.y4m"), "--db", scratch.file("l.sqlite"), "--out", scratch.file("out"), "--frames", "4"]
                                   + Self.flags + ["--rtp", "mtu=300", "--loss", "bernoulli:p=0.1,seed=4"], in: scratch.path)
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("--rtp mtu=300,mode=non-interleaved --loss bernoulli:p=0.1,seed=4"), "\(r.stdout)")
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT json_extract(settings, '$.x264_args') LIKE '%--rtp mtu=300,mode=non-interleaved --loss bernoulli:p=0.1,seed=4%' FROM runs") == ["1"])
    }

    /// The message named the run's temporary stream path (gone once the run failed) and "at byte 2" for a NAL unit's
    /// index. The mtu it offers is checked by encoding again: the largest NAL unit fits it exactly, one byte less fails.
    @Test("mode=single with a NAL unit over the MTU: 65 naming the clip, the setting, the NAL unit and what to do, no temporary path")
    func singleModeTooLarge() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        func encode(_ rtp: String, db: String) throws -> Witness.Output {
            try Witness.enclab(["encode", "c.y4m", "--db", scratch.file(db), "--out", scratch.file("out"), "--frames", "2", "--no-plots"]
                               + Self.flags + ["--rtp", rtp], in: scratch.path)
        }
        let r = try encode("mtu=100,mode=single", db: "s.sqlite")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("enclab: c.y4m: --rtp mtu=100,mode=single: NAL unit "), "\(r.stderr)")
        #expect(r.stderr.contains(" bytes, larger than the 88 bytes a single NAL unit packet holds at mtu 100 (after the 12-byte RTP header); "
                                  + "single NAL unit mode (packetization-mode 0) cannot fragment: use mode=non-interleaved (FU-A), or an mtu of at least "), "\(r.stderr)")
        #expect(!r.stderr.contains(".tmp-") && !r.stderr.contains("stream.264"), "\(r.stderr)")
        let mtu = try #require(r.stderr.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }, "\(r.stderr)")
        #expect(try encode("mtu=\(mtu - 1),mode=single", db: "a.sqlite").status == 65)
        let fits = try encode("mtu=\(mtu),mode=single", db: "b.sqlite")
        #expect(fits.status == 0, "\(fits.stderr)")
        // The largest NAL unit, counted by hand from the stream's start codes (x264 writes 3- and 4-byte ones): mtu - 12.
        let stream = try #require(try Self.sqlite(scratch.file("b.sqlite"), "SELECT stream_path FROM runs").first)
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stream.hasPrefix("/") ? stream : scratch.file(stream))))
        var starts: [(code: Int, payload: Int)] = []
        var k = 0
        while k + 3 <= b.count {
            if b[k] == 0, b[k + 1] == 0, b[k + 2] == 1 { starts.append((k > 0 && b[k - 1] == 0 ? k - 1 : k, k + 3)); k += 3 } else { k += 1 }
        }
        let sizes = starts.enumerated().map { i, s in (i + 1 < starts.count ? starts[i + 1].code : b.count) - s.payload }
        #expect(sizes.max() == mtu - 12, "\(sizes)")
    }

    /// The message ended "or no mtu: the largest, 65507, is too small" (garbled) for a NAL unit no mtu can hold.
    @Test("mode=single with a NAL unit larger than the largest mtu: 65 saying no mtu fits it and FU-A is needed")
    func singleModeNoMTUFits() throws {
        let scratch = Scratch()
        // Lossless (qp 0) noise: the IDR picture's slice is far over 65495 bytes.
        try SyntheticClip(width: 640, height: 480, frames: 1, seed: 5).write(to: scratch.file("c.y4m"))
        let r = try Witness.enclab(["encode", "c.y4m", "--db", scratch.file("n.sqlite"), "--out", scratch.file("out"), "--no-plots",
                                    "--preset", "veryfast", "--threads", "1", "--qp", "0", "--rtp", "mode=single"], in: scratch.path)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("single NAL unit mode (packetization-mode 0) cannot fragment: no mtu fits it (it needs "), "\(r.stderr)")
        #expect(r.stderr.hasSuffix(", the largest is 65507): use mode=non-interleaved (FU-A)\n"), "\(r.stderr)")
    }
}
