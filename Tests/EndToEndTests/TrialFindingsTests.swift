import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// What a tester found in the merged work of 2026-12-02 (OpenH264, --metrics, rate schedules, plots off the run's
/// path, the report), each fixed and checked here with the built enclab; witnesses: sqlite3, the files on disk, exit
/// statuses, and the size at which the libvmaf of imageio-ffmpeg 0.8.1 was seen to crash (16x16: SIGSEGV).
@Suite("trial findings: a 1-frame run in the report, scripts without gnuplot, tiny clips for libvmaf, dropped pictures scored as held, schedules twice")
struct TrialFindingsTests {
    @Test("a database with a 1-frame run: the report is written (exit 0) and the run's page says there is no PTS/DTS step (gnuplot failed on it before)")
    func oneFrameReport() throws {
        let dir = TestSupport.scratchFolder("enclab-one")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 3, seed: 1).write(to: "\(dir)/c.y4m")
        let e = try TestSupport.enclab(["encode", "c.y4m", "--frames", "1", "--preset", "ultrafast", "--db", "one.sqlite", "--out", "o"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/one.sqlite", "SELECT frames FROM runs") == ["1"])
        let r = try TestSupport.enclab(["report", "--db", "one.sqlite", "--out", "rep"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let pages = FileManager.default.enumerator(atPath: "\(dir)/rep")?.compactMap { $0 as? String }.filter { $0.hasSuffix("index.html") } ?? []
        let text = try pages.map { try String(contentsOfFile: "\(dir)/rep/\($0)", encoding: .utf8) }.joined()
        #expect(text.contains("1 frame: no PTS or DTS step to draw."))
    }

    @Test("encode writes its charts' scripts and data with no gnuplot on PATH (exit 0, frames.gp, no picture); --plots render without it is 70 and makes nothing")
    func scriptsWithoutGnuplot() throws {
        let dir = TestSupport.scratchFolder("enclab-nognu")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 5, seed: 2).write(to: "\(dir)/c.y4m")
        // A PATH with ffmpeg and ffprobe alone.
        try FileManager.default.createDirectory(atPath: "\(dir)/bin", withIntermediateDirectories: true)
        for tool in ["ffmpeg", "ffprobe"] {
            let found = try TestSupport.tool("which", [tool]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/bin/\(tool)", withDestinationPath: found)
        }
        let env = ["PATH": "\(dir)/bin"]
        let a = try TestSupport.enclab(["encode", "c.y4m", "--crf", "30", "--preset", "ultrafast", "--db", "a.sqlite", "--out", "a"], in: dir, environment: env)
        #expect(a.status == 0, "\(a.stderr)")
        let stream = try TestSupport.sqlite("\(dir)/a.sqlite", "SELECT stream_path FROM runs WHERE status = 'done'")
        #expect(stream.count == 1)
        let folder = "\(dir)/" + Paths.parent(stream.first ?? "")
        #expect(FileManager.default.fileExists(atPath: "\(folder)/frames.gp") && FileManager.default.fileExists(atPath: "\(folder)/frames.dat"))
        #expect(!FileManager.default.fileExists(atPath: "\(folder)/frames.png"))
        let b = try TestSupport.enclab(["encode", "c.y4m", "--crf", "30", "--plots", "render", "--db", "b.sqlite", "--out", "b"], in: dir, environment: env)
        #expect(b.status == 70 && b.stderr.contains("gnuplot not found"), "\(b.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/b.sqlite") && !FileManager.default.fileExists(atPath: "\(dir)/b"))
    }

    @Test("--metrics on a 16x16 clip is refused up front (64, nothing made): libvmaf dies by SIGSEGV there; xpsnr alone is not refused for its size")
    func tinyClipRefused() throws {
        let dir = TestSupport.scratchFolder("enclab-tiny")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 16, height: 16, frames: 3, seed: 3).write(to: "\(dir)/c.y4m")
        for metrics in ["vmaf", "psnr-hvs", "ssim", "ciede2000,xpsnr"] {
            let r = try TestSupport.enclab(["encode", "c.y4m", "--bitrate", "50", "--metrics", metrics, "--db", "t.sqlite", "--out", "t"], in: dir)
            #expect(r.status == 64 && r.stderr.contains("at least 18x18") && r.stderr.contains("16x16"), "\(metrics): \(r.stderr)")
            if metrics == "vmaf" { #expect(r.stderr.contains("vmaf needs pictures of at least 18x18"), "\(r.stderr)") }
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/t.sqlite"))
        }
        #expect(throws: Never.self) { try QualityMetric.check([.xpsnr], width: 16, height: 16, clip: "c.y4m") }
    }

    @Test("OpenH264 dropping pictures with --metrics: one row per input picture, a dropped one scored as the previous decoded picture against its source (libvmaf's log by hand on that sequence, 1e-4); measure gives the same values")
    func droppedPicturesScoredAsHeld() throws {
        let dir = TestSupport.scratchFolder("enclab-skip")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Noise at a low bitrate: OpenH264's rate control drops pictures (frame skip is on by default).
        _ = try TestSupport.tool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30,noise=alls=60:allf=t",
                                            "-frames:v", "30", "-pix_fmt", "yuv420p", "\(dir)/c.y4m"])
        // 20 kbit/s: OpenH264 2.3.1 codes input 0 alone; 400 kbit/s: inputs 0, 11 and 26, so a dropped picture holds
        // the last coded input before it, not always the first.
        for kbps in [20, 400] {
            let metrics = "vmaf,vmaf-neg,psnr-hvs,ms-ssim,ssim,ciede2000,xpsnr"
            let r = try TestSupport.enclab(["encode", "c.y4m", "--encoder", "openh264", "--bitrate", String(kbps), "--metrics", metrics,
                                            "--db", "s\(kbps).sqlite", "--out", "s\(kbps)"], in: dir)
            #expect(r.status == 0, "\(kbps): \(r.stderr)")
            let db = "\(dir)/s\(kbps).sqlite"
            let dropped = Set(try TestSupport.sqlite(db, "SELECT input_index FROM skipped_frames").compactMap { Int($0) })
            #expect(!dropped.isEmpty && !dropped.contains(0), "\(dropped)")
            // One row per input picture: coded ones join frames.display_index, dropped ones skipped_frames.input_index.
            #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM frame_quality_metrics") == ["30"])
            #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM frame_quality_metrics q JOIN frames f ON f.run_id = q.run_id AND f.display_index = q.display_index") == [String(30 - dropped.count)])
            #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM frame_quality_metrics q JOIN skipped_frames s ON s.run_id = q.run_id AND s.input_index = q.display_index") == [String(dropped.count)])
            // The sequence a receiver shows, made here: Debian's ffmpeg decodes the stream; each dropped input repeats the
            // picture shown before it. libvmaf by hand on it against the clip.
            let stream = try TestSupport.sqlite(db, "SELECT stream_path FROM runs").first ?? ""
            try QualityMetricsTests.decode("\(dir)/\(stream)", to: "\(dir)/decoded\(kbps).y4m")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/decoded\(kbps).y4m")))
            let pictureBytes = 320 * 240 * 3 / 2
            var pictures: [ArraySlice<UInt8>] = []
            var at = (bytes.firstIndex(of: 0x0A) ?? bytes.count) + 1
            while at < bytes.count {
                let line = bytes[at...].firstIndex(of: 0x0A)! + 1
                pictures.append(bytes[line..<(line + pictureBytes)])
                at = line + pictureBytes
            }
            #expect(pictures.count == 30 - dropped.count && (kbps == 20 || pictures.count > 1), "\(kbps): \(pictures.count) decoded")
            var shown = Array("YUV4MPEG2 W320 H240 F25:1 Ip A1:1 C420jpeg\n".utf8)
            var next = 0, last: ArraySlice<UInt8> = []
            for k in 0..<30 {
                if !dropped.contains(k), next < pictures.count { last = pictures[next]; next += 1 }
                shown += Array("FRAME\n".utf8) + last
            }
            try Data(shown).write(to: URL(fileURLWithPath: "\(dir)/shown\(kbps).y4m"))
            let hand = try QualityMetricsTests.byHand(dist: "file:\(dir)/shown\(kbps).y4m", ref: "file:\(dir)/c.y4m", in: dir)
            let encoded = try QualityMetricsTests.stored(db)
            QualityMetricsTests.expectEqual(encoded, hand.frames, "\(kbps) kbit/s: encode --metrics with dropped pictures")
            // measure on the stored run: the same values.
            let m = try TestSupport.enclab(["measure", "--db", "s\(kbps).sqlite", "--metrics", metrics], in: dir)
            #expect(m.status == 0, "\(m.stderr)")
            QualityMetricsTests.expectEqual(try QualityMetricsTests.stored(db), encoded, "\(kbps) kbit/s: measure against encode --metrics")
        }
    }

    @Test("--rate-schedule given twice is 64 (the second replaced the first); MaxFrameDelayCount with OpenH264 is 64 (its delay is not measured)")
    func refusedCombinations() throws {
        let dir = TestSupport.scratchFolder("enclab-twice")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 5, seed: 4).write(to: "\(dir)/c.y4m")
        let a = try TestSupport.enclab(["encode", "c.y4m", "--bitrate", "300", "--rate-schedule", "0.5s:bitrate=150", "--rate-schedule", "1s:bitrate=100",
                                        "--db", "x.sqlite", "--out", "x"], in: dir)
        #expect(a.status == 64 && a.stderr.contains("--rate-schedule is given twice"), "\(a.stderr)")
        let b = try TestSupport.enclab(["encode", "c.y4m", "--encoder", "openh264", "--bitrate", "300", "--vt", "MaxFrameDelayCount=2",
                                        "--db", "x.sqlite", "--out", "x"], in: dir)
        #expect(b.status == 64 && b.stderr.contains("MaxFrameDelayCount"), "\(b.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.sqlite"))
    }
}
