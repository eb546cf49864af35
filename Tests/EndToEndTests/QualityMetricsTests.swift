import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// `--metrics` and `enclab measure` (issue 20, docs/quality-metrics.md) against libvmaf's own JSON log of the
/// imageio-ffmpeg binary, run by hand here on the stream decoded by Debian's ffmpeg and the source pictures cut by
/// Debian's ffmpeg, and against ffmpeg-quality-metrics (the anchor people use) on the same files. Short clips
/// (12-25 frames of 320x240).
@Suite("perceptual quality: --metrics and measure against libvmaf's own log", .serialized)
struct QualityMetricsTests {
    /// The venv of scripts/setup.sh.
    static let venv = ProcessInfo.processInfo.environment["ENCLAB_VENV"] ?? "/opt/enclab-venv"

    /// The ffmpeg with libvmaf, as imageio_ffmpeg itself names it (not the lab's finder).
    static func vmafFFmpeg() throws -> String {
        let r = try TestSupport.process("\(venv)/bin/python", ["-c", "import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())"], in: "/")
        let path = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard r.status == 0, !path.isEmpty else { throw LabError(.software, "imageio_ffmpeg is not in \(venv): \(r.stderr)") }
        return path
    }

    /// A test pattern (ffmpeg's testsrc2: every frame different) of `frames` frames at 25 fps as y4m.
    static func clip(_ dir: String, frames: Int, size: String = "320x240", name: String = "c.y4m") throws {
        let r = try TestSupport.tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25",
                                                "-frames:v", String(frames), "-pix_fmt", "yuv420p", "\(dir)/\(name)"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// Debian's ffmpeg decodes `stream` into a y4m (display order), optionally cuts the source from frame `from`.
    static func decode(_ stream: String, to out: String) throws {
        let r = try TestSupport.tool("ffmpeg", ["-v", "error", "-y", "-i", stream, "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", out])
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// libvmaf's JSON log (and the xpsnr stats) of `dist` against `ref`, run by hand with every metric: per frame,
    /// the lab's column names to values.
    static func byHand(dist: String, ref: String, in dir: String) throws -> (frames: [[String: Double]], pooled: [String: [String: Double]]) {
        let graph = "[0:v]split[a][b];[1:v]split[c][d];[a][c]libvmaf=log_fmt=json:log_path=hand.json:feature=name=psnr_hvs|name=float_ssim|name=float_ms_ssim|name=ciede"
            + ":model=version=vmaf_v0.6.1\\\\:name=vmaf|version=vmaf_v0.6.1neg\\\\:name=vmaf_neg[o1];[b][d]xpsnr=stats_file=hand-xpsnr.log[o2]"
        let r = try TestSupport.process(try vmafFFmpeg(), ["-hide_banner", "-nostdin", "-v", "error", "-r", "25", "-i", dist, "-r", "25", "-i", ref,
                                                           "-filter_complex", graph, "-map", "[o1]", "-f", "null", "-", "-map", "[o2]", "-f", "null", "-"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(dir)/hand.json"))) as! [String: Any]
        let names = ["vmaf": "vmaf", "vmaf_neg": "vmaf_neg", "psnr_hvs": "psnr_hvs", "float_ssim": "float_ssim",
                     "float_ms_ssim": "ms_ssim", "ciede2000": "ciede2000"]
        var frames: [[String: Double]] = (json["frames"] as! [[String: Any]]).map { f in
            var row: [String: Double] = [:]
            for (key, column) in names { row[column] = ((f["metrics"] as! [String: Any])[key] as! NSNumber).doubleValue }
            return row
        }
        let xpsnr = try String(contentsOfFile: "\(dir)/hand-xpsnr.log", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("n:") }
        #expect(xpsnr.count == frames.count)
        for (k, line) in xpsnr.enumerated() where k < frames.count {
            let words = line.split(separator: " ")
            frames[k]["xpsnr"] = Double(words[words.firstIndex(of: "y:")! + 1])!
        }
        let pooled = (json["pooled_metrics"] as! [String: Any]).mapValues { ($0 as! [String: Any]).mapValues { ($0 as! NSNumber).doubleValue } }
        return (frames, pooled)
    }

    static let columns = ["vmaf", "vmaf_neg", "psnr_hvs", "float_ssim", "ms_ssim", "ciede2000", "xpsnr"]

    /// The stored rows of run `id`, by display index.
    static func stored(_ db: String, run id: Int = 1) throws -> [[String: Double]] {
        try TestSupport.sqlite(db, "SELECT \(columns.joined(separator: ", ")) FROM frame_quality_metrics WHERE run_id = \(id) ORDER BY display_index").map { line in
            Dictionary(uniqueKeysWithValues: zip(columns, line.split(separator: "|", omittingEmptySubsequences: false).map { Double($0) ?? .nan }))
        }
    }

    static func expectEqual(_ stored: [[String: Double]], _ hand: [[String: Double]], tolerance: Double = 1e-4, _ what: String) {
        #expect(stored.count == hand.count, "\(what): \(stored.count) stored frames, \(hand.count) by hand")
        for (k, (s, h)) in zip(stored, hand).enumerated() {
            for c in columns where h[c] != nil {
                #expect(abs(s[c]! - h[c]!) <= tolerance, "\(what): frame \(k) \(c): stored \(s[c]!), by hand \(h[c]!)")
            }
        }
    }

    @Test("encode --metrics: every frame's values equal libvmaf's log by hand (1e-4) and ffmpeg-quality-metrics; pooled as by hand")
    func perFrameAgainstLibvmaf() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 12)
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "35", "--bframes", "2", "--no-plots",
                                        "--metrics", "vmaf,vmaf-neg,psnr-hvs,ms-ssim,ssim,ciede2000,xpsnr", "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let folder = try CommandLineTests.runFolder("\(dir)/e.sqlite")
        // The scoring's pictures are gone from the run's folder.
        let left = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/\(folder)")
        #expect(!left.contains { $0.hasPrefix(".quality") }, "\(left)")
        try Self.decode("\(dir)/\(folder)/stream.264", to: "\(dir)/dec.y4m")
        let hand = try Self.byHand(dist: "dec.y4m", ref: "c.y4m", in: dir)
        #expect(hand.frames.count == 12)
        let stored = try Self.stored("\(dir)/e.sqlite")
        Self.expectEqual(stored, hand.frames, "encode")
        // vmaf_4k was not asked for: NULL.
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT count(*) FROM frame_quality_metrics WHERE vmaf_4k IS NULL") == ["12"])
        // Pooled: libvmaf's own mean and harmonic mean (from full precision: 1e-4), lows by hand from the stored frames.
        let pooled = try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT mean, harmonic_mean, low_1pct, low_5pct, model, libvmaf_version FROM run_quality_metrics WHERE metric = 'vmaf'")
        #expect(pooled.count == 1)
        let p = pooled.first?.split(separator: "|").map(String.init) ?? []
        #expect(p.count == 6)
        if p.count == 6 {
            #expect(abs(Double(p[0])! - hand.pooled["vmaf"]!["mean"]!) < 1e-4)
            #expect(abs(Double(p[1])! - hand.pooled["vmaf"]!["harmonic_mean"]!) < 1e-4)
            let lowest = stored.map { $0["vmaf"]! }.min()!
            #expect(Double(p[2])! == lowest && Double(p[3])! == lowest, "12 frames: the worst 1 % and 5 % are the one lowest frame")
            #expect(p[4] == "vmaf_v0.6.1")
            #expect(!p[5].isEmpty)
        }
        // The frames export carries the columns.
        let x = try TestSupport.enclab(["export", "--db", "e.sqlite", "--table", "frames", "--format", "csv"], in: dir)
        #expect(x.status == 0, "\(x.stderr)")
        let header = x.stdout.split(separator: "\r\n").first.map { $0.split(separator: ",").map(String.init) } ?? []
        for c in Self.columns + ["ssim"] { #expect(header.contains(c), "export header lacks \(c)") }
        // ffmpeg-quality-metrics, pointed at that ffmpeg, on the same decoded pictures and source: VMAF frame by frame.
        let fqm = try TestSupport.process("\(Self.venv)/bin/ffmpeg-quality-metrics",
                                          ["dec.y4m", "c.y4m", "-m", "vmaf", "--ffmpeg-path", try Self.vmafFFmpeg(), "--no-summary", "-t", "1"], in: dir)
        #expect(fqm.status == 0, "\(fqm.stderr)")
        let anchor = ((try JSONSerialization.jsonObject(with: Data(fqm.stdout.utf8)) as? [String: Any])?["vmaf"] as? [[String: Any]]) ?? []
        #expect(anchor.count == 12)
        for (k, f) in anchor.enumerated() where k < stored.count {
            #expect((f["n"] as? Int) == k + 1)
            #expect(abs(stored[k]["vmaf"]! - ((f["vmaf"] as? NSNumber)?.doubleValue ?? .nan)) <= 1e-4, "frame \(k)")
        }
    }

    @Test("report refuses a damaged pooled value (run_quality_metrics.mean text or not finite: no measure writes one) with 65 naming the run and metric, not 'not scored'; no report folder",
          arguments: [("'abc'", "the text 'abc'"), ("9e999", "the real inf")])
    func reportRefusesDamagedMean(_ value: String, _ found: String) throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 5, size: "64x48")
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--no-plots", "--metrics", "ssim", "--db", "q.sqlite", "--out", "q"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/q.sqlite", "SELECT run_id, metric FROM run_quality_metrics") == ["1|float_ssim"])
        _ = try TestSupport.sqlite("\(dir)/q.sqlite", "UPDATE run_quality_metrics SET mean = \(value)")
        let r = try TestSupport.enclab(["report", "--db", "q.sqlite", "--out", "r", "--metric", "ssim"], in: dir)
        #expect(r.status == 65, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("q.sqlite: run 1, run_quality_metrics.mean of float_ssim: column mean holds \(found), expected a finite number or NULL"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/r"))
    }

    @Test("--seek 10 scores the source pictures from 10 on; the same run key as without --metrics")
    func seekPairsFromTen() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 25)
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "30", "--seek", "10", "--frames", "8", "--no-plots",
                                        "--metrics", "vmaf,psnr-hvs,xpsnr", "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        // The source from frame 10, cut by Debian's ffmpeg.
        let cut = try TestSupport.tool("ffmpeg", ["-v", "error", "-y", "-i", "\(dir)/c.y4m", "-vf", "select=gte(n\\,10),setpts=N/(25*TB)",
                                                  "-frames:v", "8", "-pix_fmt", "yuv420p", "\(dir)/from10.y4m"])
        #expect(cut.status == 0, "\(cut.stderr)")
        let folder = try CommandLineTests.runFolder("\(dir)/e.sqlite")
        try Self.decode("\(dir)/\(folder)/stream.264", to: "\(dir)/dec.y4m")
        let hand = try Self.byHand(dist: "dec.y4m", ref: "from10.y4m", in: dir)
        let stored = try Self.stored("\(dir)/e.sqlite")
        #expect(stored.count == 8)
        for (k, (s, h)) in zip(stored, hand.frames).enumerated() {
            for c in ["vmaf", "psnr_hvs", "xpsnr"] { #expect(abs(s[c]! - h[c]!) <= 1e-4, "frame \(k) \(c): stored \(s[c]!), by hand \(h[c]!)") }
        }
        // The same run without --metrics has the same key: metrics are no part of it.
        let plain = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "30", "--seek", "10", "--frames", "8", "--no-plots",
                                            "--db", "p.sqlite", "--out", "p"], in: dir)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_key FROM runs") == TestSupport.sqlite("\(dir)/p.sqlite", "SELECT run_key FROM runs"))
    }

    @Test("a decode shifted by one picture (the test hook drops the first) fails with 65 naming both counts; nothing scored is stored")
    func shiftedDecodeFails() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 12)
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "35", "--no-plots", "--metrics", "vmaf",
                                        "--db", "e.sqlite", "--out", "e"], in: dir, environment: ["ENCLAB_TEST_DROP_FIRST_DECODED": "1"])
        #expect(e.status == 65, "\(e.stderr)")
        #expect(e.stderr.contains("libvmaf scored 11 frames, the run displayed 12"), "\(e.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT count(*) FROM runs WHERE status = 'done'; SELECT count(*) FROM frame_quality_metrics; SELECT count(*) FROM run_quality_metrics") == ["0", "0", "0"])
    }

    @Test("ms-ssim on 176x144 is refused up front (64) naming the size; nothing is made")
    func msSSIMTooSmall() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 8, size: "176x144")
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--metrics", "vmaf,ms-ssim", "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 64, "\(e.stderr)")
        #expect(e.stderr.contains("176x144"), "\(e.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/e.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/e"))
    }

    @Test("no ffmpeg with libvmaf: 70 naming the package and how to install it; --vmaf-ffmpeg wins over the environment")
    func missingFFmpeg() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 4, size: "64x48")
        let none = try TestSupport.enclab(["encode", "c.y4m", "--metrics", "vmaf", "--db", "e.sqlite", "--out", "e"], in: dir,
                                          environment: ["ENCLAB_VENV": "\(dir)/no-venv", "ENCLAB_VMAF_FFMPEG": ""])
        #expect(none.status == 70, "\(none.stderr)")
        #expect(none.stderr.contains("imageio-ffmpeg==0.8.1") && none.stderr.contains("scripts/setup.sh"), "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/e.sqlite"))
        // Debian's ffmpeg has no libvmaf: named by the flag, it is refused as such.
        let debian = try TestSupport.enclab(["encode", "c.y4m", "--metrics", "vmaf", "--vmaf-ffmpeg", "/usr/bin/ffmpeg", "--db", "e.sqlite", "--out", "e"],
                                            in: dir, environment: ["ENCLAB_VMAF_FFMPEG": try Self.vmafFFmpeg()])
        #expect(debian.status == 70, "\(debian.stderr)")
        #expect(debian.stderr.contains("/usr/bin/ffmpeg (from --vmaf-ffmpeg) has no libvmaf filter"), "\(debian.stderr)")
    }

    /// Whether process `pid` runs: its /proc/PID/stat is there and its state (after the command's ')') is not Z or X.
    static func runs(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }

    /// Whether a thread of process `pid` sleeps writing to a full pipe (its kernel wait channel).
    static func blockedOnPipe(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { ((try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/wchan", encoding: .utf8)) ?? "").contains("pipe_write") }
    }

    @Test("--vmaf-ffmpeg a wrapper that does not exec ffmpeg, its child holding the pipe: SIGTERM gives 130 within seconds; the wrapper exiting gives 70; the child is ended either way")
    func wrapperChildHoldsPipe() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 25, size: "640x480")
        let real = try Self.vmafFFmpeg()
        for exits in [false, true] {
            // '-filters' (the lab's libvmaf check) reaches the real ffmpeg; the scoring run starts a child that keeps
            // the pipe (its standard input, named explicitly: a background job's is /dev/null otherwise) and reads nothing.
            try """
                #!/bin/bash
                for a in "$@"; do [ "$a" = -filters ] && exec '\(real)' "$@"; done
                sleep 100000 <&0 &
                echo $! > '\(dir)/sleep.pid'
                \(exits ? "exit 0" : "wait")

                """.write(toFile: "\(dir)/wrapper", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(dir)/wrapper")
            try? FileManager.default.removeItem(atPath: "\(dir)/sleep.pid")
            let lab = Process()
            lab.executableURL = URL(fileURLWithPath: TestSupport.binary)
            lab.arguments = ["encode", "c.y4m", "--threads", "1", "--no-plots", "--metrics", "vmaf", "--vmaf-ffmpeg", "\(dir)/wrapper",
                             "--db", "e.sqlite", "--out", "e\(exits)"]
            lab.currentDirectoryURL = URL(fileURLWithPath: dir)
            lab.standardInput = FileHandle.nullDevice
            lab.standardOutput = FileHandle.nullDevice
            let err = Pipe()
            lab.standardError = err
            try lab.run()
            let pid = lab.processIdentifier
            let killed = TestSupport.KilledFlag()
            let watchdog = DispatchWorkItem { if lab.isRunning { killed.set(); kill(pid, SIGKILL) } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
            nonisolated(unsafe) var stderr = Data()
            let drained = DispatchGroup()
            drained.enter()
            DispatchQueue.global().async { stderr = err.fileHandleForReading.readDataToEndOfFile(); drained.leave() }
            var sent = Date()
            if !exits {
                // Once the wrapper's child holds the pipe and the lab has had time to fill it (1 MiB, under 2 frames of
                // 640x480 pairs; before, 1.4 s after the start a thread slept in pipe_write for ever, the signal unseen).
                var waited = 0
                while lab.isRunning && !FileManager.default.fileExists(atPath: "\(dir)/sleep.pid") && waited < 1200 { usleep(100_000); waited += 1 }
                #expect(FileManager.default.fileExists(atPath: "\(dir)/sleep.pid"), "the wrapper never started its child")
                waited = 0
                while lab.isRunning && !Self.blockedOnPipe(pid) && waited < 50 { usleep(100_000); waited += 1 }
                sent = Date()
                kill(pid, SIGTERM)
            }
            lab.waitUntilExit()
            let elapsed = Date().timeIntervalSince(sent)
            drained.wait()
            watchdog.cancel()
            let message = String(decoding: stderr, as: UTF8.self)
            // The wrapper's child is ended with it (the lab signals the wrapper's process group): before, it ran on.
            if let held = try? String(contentsOfFile: "\(dir)/sleep.pid", encoding: .utf8), let child = Int32(held.trimmingCharacters(in: .whitespacesAndNewlines)) {
                var waited = 0
                while Self.runs(child) && waited < 150 { usleep(20_000); waited += 1 }
                #expect(!Self.runs(child), "\(exits ? "exiting" : "SIGTERM"): the wrapper's child \(child) still runs after the lab ended")
                kill(child, SIGKILL)
            }
            #expect(!killed.get(), "\(exits ? "exiting" : "SIGTERM"): the lab hung (killed by the watchdog)")
            if exits {
                #expect(lab.terminationStatus == 70, "\(message)")
                #expect(message.contains("\(dir)/wrapper (libvmaf) stopped reading its input (exit status 0)"), "\(message)")
            } else {
                #expect(lab.terminationStatus == 130 && elapsed < 5, "\(elapsed) s: \(message)")
                #expect(message.hasSuffix("enclab: interrupted by SIGTERM\n"), "\(message)")
            }
        }
    }

    @Test("a bad --vmaf-ffmpeg: a folder, a text file that is no program, an ffmpeg that writes no log: 70, saying which and why")
    func badVMAFFFmpeg() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 4, size: "64x48")
        try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: true)
        // An executable text file with no #! line: exec(2) refuses it (ENOEXEC).
        try "this is not ffmpeg\n".write(toFile: "\(dir)/text", atomically: true, encoding: .utf8)
        // Lists a libvmaf filter, then reads the pairs, says something and exits 0 with no log.
        try """
            #!/bin/sh
            for a in "$@"; do [ "$a" = -filters ] && { echo ' .. libvmaf          VV->V      fake'; exit 0; }; done
            cat > /dev/null
            echo 'fake: nothing scored' >&2
            exit 0

            """.write(toFile: "\(dir)/fake", atomically: true, encoding: .utf8)
        for name in ["text", "fake"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(dir)/\(name)")
        }
        let expected = ["folder": "\(dir)/folder (from --vmaf-ffmpeg) is a folder, not a program; --metrics needs an ffmpeg with libvmaf",
                        "text": "\(dir)/text (from --vmaf-ffmpeg) could not be run as a program; --metrics needs an ffmpeg with libvmaf",
                        "fake": "\(dir)/fake (libvmaf) ended (exit status 0) without writing libvmaf's JSON log of frames; the end of its stderr: fake: nothing scored; --metrics needs an ffmpeg with libvmaf"]
        for (name, message) in expected.sorted(by: { $0.key < $1.key }) {
            let r = try TestSupport.enclab(["encode", "c.y4m", "--no-plots", "--metrics", "vmaf", "--vmaf-ffmpeg", "\(dir)/\(name)",
                                            "--db", "\(name).sqlite", "--out", "\(name)-out"], in: dir, limit: 120)
            #expect(r.status == 70, "\(name): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(name): \(r.stderr)")
            #expect(!r.stderr.contains("NSCocoaErrorDomain") && !r.stderr.contains(".quality/"), "\(name): \(r.stderr)")
        }
    }

    @Test("measure adds the metrics to a stored --verify none run from its stream and clip: equal to libvmaf's log by hand; the run stays as it was")
    func measureStoredRun() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 10)
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "33", "--bframes", "3", "--verify", "none", "--no-plots",
                                        "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let before = try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_key, settings FROM runs; SELECT count(*) FROM frame_quality_metrics")
        #expect(before.last == "0")
        let m = try TestSupport.enclab(["measure", "--db", "e.sqlite", "--metrics", "vmaf,ssim,ciede2000,ms-ssim,vmaf-neg,psnr-hvs,xpsnr"], in: dir)
        #expect(m.status == 0, "\(m.stderr)")
        #expect(m.stdout.hasPrefix("measured run 1: 10 frames"), "\(m.stdout)")
        let folder = try CommandLineTests.runFolder("\(dir)/e.sqlite")
        try Self.decode("\(dir)/\(folder)/stream.264", to: "\(dir)/dec.y4m")
        let hand = try Self.byHand(dist: "dec.y4m", ref: "c.y4m", in: dir)
        Self.expectEqual(try Self.stored("\(dir)/e.sqlite"), hand.frames, "measure")
        let after = try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_key, settings FROM runs; SELECT count(*) FROM frame_quality_metrics")
        #expect(Array(after.dropLast()) == Array(before.dropLast()))
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT count(*) FROM run_quality_metrics WHERE run_id = 1") == ["7"])
    }
    @Test("measure and check runs: by default they are skipped, said on stderr; --run of one (an MP4 or a raw .264) is refused with 65 naming it; no check run gets frame_quality_metrics rows")
    func measureSkipsCheckRuns() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 5)
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "33", "--no-plots", "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let folder = try CommandLineTests.runFolder("\(dir)/e.sqlite")
        // The encode's stream checked twice into the same database: as an MP4 (run 2) and as the raw .264 (run 3).
        let mux = try TestSupport.tool("ffmpeg", ["-v", "error", "-y", "-i", "\(dir)/\(folder)/stream.264", "-c", "copy", "\(dir)/dev.mp4"])
        #expect(mux.status == 0, "\(mux.stderr)")
        try FileManager.default.copyItem(atPath: "\(dir)/\(folder)/stream.264", toPath: "\(dir)/dev.264")
        for stream in ["dev.mp4", "dev.264"] {
            let c = try TestSupport.enclab(["check", "--expect", "MaxKeyFrameInterval=250", "--db", "e.sqlite", stream], in: dir)
            #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
        }
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_id, experiment, run_key IS NULL FROM runs ORDER BY run_id") == ["1|encode|0", "2|check|1", "3|check|1"])
        // --run of a check run: 65 naming the run and why, nothing stored.
        for id in ["2", "3"] {
            let m = try TestSupport.enclab(["measure", "--db", "e.sqlite", "--metrics", "ssim", "--run", id], in: dir)
            #expect(m.status == 65, "\(m.stdout)\(m.stderr)")
            #expect(m.stderr.contains("run \(id) is a check run") && m.stderr.contains("no source clip to score against"), "\(m.stderr)")
        }
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT count(*) FROM frame_quality_metrics") == ["0"])
        // The default: the encode measured, the two check runs skipped and said so.
        let all = try TestSupport.enclab(["measure", "--db", "e.sqlite", "--metrics", "ssim"], in: dir)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stderr.contains("measure: skipped 2 check runs (2, 3): stored by enclab check --db, they have no source clip to score against"), "\(all.stderr)")
        #expect(all.stdout.hasPrefix("measured run 1: 5 frames") && !all.stdout.contains("measured run 2") && !all.stdout.contains("measured run 3"), "\(all.stdout)")
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_id, count(*) FROM frame_quality_metrics GROUP BY run_id") == ["1|5"])
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT DISTINCT run_id FROM run_quality_metrics") == ["1"])
        // The store itself refuses quality rows for a check run (whoever asks), writing nothing.
        let store = try LabStore(path: "\(dir)/e.sqlite")
        let scores = QualityScores(metrics: [.ssim], frames: Array(repeating: [.ssim: 0.9], count: 5), libvmafVersion: nil)
        #expect(throws: LabError.self) { try store.recordQuality(runID: 3, scores) }
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT run_id, count(*) FROM frame_quality_metrics GROUP BY run_id") == ["1|5"])
    }

    @Test("measure refuses a stream file whose size is not the run's runs.bytes (run 1's stream copied over run 2's): 65 naming the file and both sizes, nothing stored")
    func measureRefusesAnotherStream() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 6, size: "64x48")
        for crf in ["20", "45"] {
            let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", crf, "--verify", "none", "--no-plots",
                                            "--db", "e.sqlite", "--out", "e"], in: dir)
            #expect(e.status == 0, "\(e.stderr)")
        }
        let one = try CommandLineTests.runFolder("\(dir)/e.sqlite", 1), two = try CommandLineTests.runFolder("\(dir)/e.sqlite", 2)
        try FileManager.default.removeItem(atPath: "\(dir)/\(two)/stream.264")
        try FileManager.default.copyItem(atPath: "\(dir)/\(one)/stream.264", toPath: "\(dir)/\(two)/stream.264")
        // Both sizes from elsewhere: the file's from stat(1), run 2's from sqlite3.
        let fileSize = try TestSupport.process("/usr/bin/stat", ["-c", "%s", "\(dir)/\(two)/stream.264"], in: "/").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let stored = try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT bytes FROM runs WHERE run_id = 2")
        #expect(stored.count == 1 && stored != [fileSize])
        let m = try TestSupport.enclab(["measure", "--db", "e.sqlite", "--run", "2", "--metrics", "vmaf"], in: dir)
        #expect(m.status == 65, "\(m.stderr)")
        #expect(m.stderr.contains("\(two)/stream.264: \(fileSize) bytes, the stream of e.sqlite: run 2 had \(stored.first ?? "?") (runs.bytes)"), "\(m.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", "SELECT count(*) FROM frame_quality_metrics; SELECT count(*) FROM run_quality_metrics") == ["0", "0"])
    }

    @Test("run with the experiment's 'metrics': every run scored, only what was asked stored; a VFR encode (timecode file) pairs by index")
    func experimentKeyAndVFR() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 8)
        let json: [String: Any] = ["name": "q", "clips": ["c.y4m"], "metrics": ["psnr-hvs", "vmaf"], "base": ["threads": 1], "grid": ["crf": [28, 40]]]
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: "\(dir)/q.json"))
        let r = try TestSupport.enclab(["run", "q.json", "--no-plots", "--db", "r.sqlite", "--out", "r"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/r.sqlite", """
            SELECT run_id, count(*), count(vmaf), count(psnr_hvs), count(xpsnr) FROM frame_quality_metrics GROUP BY run_id ORDER BY run_id;
            SELECT group_concat(metric) FROM (SELECT metric FROM run_quality_metrics ORDER BY run_id, metric)
            """) == ["1|8|8|8|0", "2|8|8|8|0", "psnr_hvs,vmaf,psnr_hvs,vmaf"])
        // The worse encode scores lower: the runs' means differ the right way.
        let means = try TestSupport.sqlite("\(dir)/r.sqlite", "SELECT mean FROM run_quality_metrics WHERE metric = 'vmaf' ORDER BY run_id").compactMap(Double.init)
        #expect(means.count == 2 && means[0] > means[1], "\(means)")
        // Irregular times: 0, 40, 100, 120, 200, ... ms; the pairs are by display index all the same.
        try "# timecode format v2\n0\n40\n100\n120\n200\n240\n330\n360\n".write(toFile: "\(dir)/tc.txt", atomically: true, encoding: .utf8)
        let v = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--crf", "30", "--tcfile-in", "tc.txt", "--no-plots",
                                        "--metrics", "vmaf,psnr-hvs", "--db", "v.sqlite", "--out", "v"], in: dir)
        #expect(v.status == 0, "\(v.stderr)")
        let folder = try CommandLineTests.runFolder("\(dir)/v.sqlite")
        try Self.decode("\(dir)/\(folder)/stream.264", to: "\(dir)/dec.y4m")
        let hand = try Self.byHand(dist: "dec.y4m", ref: "c.y4m", in: dir)
        let stored = try Self.stored("\(dir)/v.sqlite")
        #expect(stored.count == 8 && hand.frames.count == 8)
        for (k, (a, b)) in zip(stored, hand.frames).enumerated() {
            for c in ["vmaf", "psnr_hvs"] { #expect(abs(a[c]! - b[c]!) <= 1e-4, "frame \(k) \(c): stored \(a[c]!), by hand \(b[c]!)") }
        }
    }
    @Test("a lossless encode (--qp 0): psnr_hvs, ciede2000 and xpsnr have no finite value (libvmaf's null, xpsnr's inf), stored NULL with a warning naming them; ssim is 1")
    func losslessSaysWhatIsMissing() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.clip(dir, frames: 4, size: "176x176")
        let e = try TestSupport.enclab(["encode", "c.y4m", "--threads", "1", "--qp", "0", "--no-plots", "--metrics", "psnr-hvs,ciede2000,xpsnr,ssim",
                                        "--db", "e.sqlite", "--out", "e"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        #expect(e.stderr.contains("--metrics: psnr_hvs has no finite value for 4 of 4 frames (display 0, 1, 2, 3); ciede2000 has no finite value for 4 of 4 frames (display 0, 1, 2, 3); xpsnr has no finite value for 4 of 4 frames"), "\(e.stderr)")
        #expect(try TestSupport.sqlite("\(dir)/e.sqlite", """
            SELECT count(*), count(psnr_hvs), count(ciede2000), count(xpsnr), min(float_ssim) FROM frame_quality_metrics;
            SELECT group_concat(metric) FROM run_quality_metrics
            """) == ["4|0|0|0|1.0", "float_ssim"])
    }

    /// The children of process `pid` (ppid in /proc/PID/stat, read after the command name's closing parenthesis) and
    /// the path each one runs (/proc/PID/exe).
    static func children(of pid: Int32) -> [(pid: Int32, exe: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> (Int32, String)? in
            guard let child = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == pid else { return nil }
            return (child, (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(name)/exe")) ?? "")
        }
    }

    @Test("--metrics scores during the encode: libvmaf's ffmpeg runs reading a pipe and no picture file is in the run's folder; SIGINT then ends it: exit 130, no ffmpeg left, the run failed with nothing scored")
    func streamsDuringTheEncode() throws {
        let dir = TestSupport.scratchFolder("enclab-vmaf")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 640, height: 360, frames: 300, seed: 5).write(to: "\(dir)/big.y4m")
        let ffmpeg = try Self.vmafFFmpeg()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.binary)
        p.arguments = ["encode", "big.y4m", "--preset", "veryslow", "--threads", "2", "--no-plots", "--metrics", "vmaf",
                       "--db", "i.sqlite", "--out", "i"]
        p.environment = ProcessInfo.processInfo.environment.merging(["ENCLAB_VMAF_FFMPEG": ffmpeg]) { $1 }
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        // Wait until the run is encoding (its temporary folder holds stream bytes) with its scorer running.
        var folder: String?
        var scorer: Int32?
        for _ in 0..<600 where folder == nil || scorer == nil {
            Thread.sleep(forTimeInterval: 0.05)
            folder = ((try? FileManager.default.contentsOfDirectory(atPath: "\(dir)/i")) ?? []).first { name in
                name.hasPrefix(".tmp-") && ((try? FileManager.default.attributesOfItem(atPath: "\(dir)/i/\(name)/stream.264")[.size] as? Int) ?? 0) > 0
            }.map { "\(dir)/i/\($0)" }
            scorer = Self.children(of: p.processIdentifier).first { $0.exe == ffmpeg }?.pid
        }
        let running = try #require(folder)
        let child = try #require(scorer, "no child running \(ffmpeg) while the run encodes")
        // Its standard input is a pipe, and the pictures are in no file.
        #expect(((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/fd/0")) ?? "").hasPrefix("pipe:"))
        // ffmpeg's own folder, .quality-XXXXXX: its working directory.
        let own = try #require(try FileManager.default.contentsOfDirectory(atPath: running).first { $0.hasPrefix(".quality-") })
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/cwd") == "\(running)/\(own)")
        let quality = (try? FileManager.default.contentsOfDirectory(atPath: "\(running)/\(own)")) ?? []
        #expect(!quality.contains { $0.hasSuffix(".y4m") }, "\(quality)")
        p.interrupt()
        p.waitUntilExit()
        #expect(p.terminationStatus == 130)
        // The ffmpeg ended with the lab (reaped by it, or by init once orphaned).
        var gone = false
        for _ in 0..<100 where !gone {
            gone = kill(child, 0) != 0 && errno == ESRCH
            if !gone { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(gone, "ffmpeg \(child) still there after the lab ended")
        #expect(try TestSupport.sqlite("\(dir)/i.sqlite", "SELECT status, error, (SELECT count(*) FROM frames), (SELECT count(*) FROM frame_quality_metrics) FROM runs")
                == ["failed|interrupted by SIGINT|0|0"])
        #expect(!FileManager.default.fileExists(atPath: running))
    }
}
