import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// `--encoder openh264` end to end (issue 22): the built enclab against witnesses that are not the lab: a C program of
/// our own written from libopenh264's header (Witness/openh264_witness.c, compiled here with `cc -lopenh264`),
/// GStreamer's `openh264enc`, `ffmpeg -bsf:v trace_headers`, ffprobe, FFmpeg's psnr filter and sqlite3. Short
/// synthetic clips (160x96, a few dozen frames) keep it quick.
@Suite("OpenH264 as the second encoder: byte-identical to a C witness, stream properties, skipped frames", .serialized)
struct OpenH264Tests {
    /// A scratch folder with a clip, removed when released.
    final class Scratch {
        let path = TestSupport.scratchFolder("enclab-openh264")
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func file(_ name: String) -> String { "\(path)/\(name)" }
        /// A 160x96 ``SyntheticClip`` of `frames` frames from `seed`, written here as c.y4m.
        func clip(frames: Int, seed: UInt64) throws {
            try TestSupport.makeClip(in: path, named: "c.y4m", SyntheticClip(width: 160, height: 96, frames: frames, seed: seed))
        }
    }

    static let witnessSource = TestSupport.repositoryRoot + "/Tests/EndToEndTests/Witness/openh264_witness.c"

    /// The C witness compiled into `dir`: its path.
    static func compileWitness(in dir: String) throws -> String {
        let binary = "\(dir)/openh264_witness"
        let cc = try TestSupport.tool("cc", ["-O1", "-o", binary, witnessSource, "-lopenh264"])
        guard cc.status == 0 else { throw LabError(.software, "cc openh264_witness.c failed: \(cc.stderr)") }
        return binary
    }

    /// The witness on `clip` with SEncParamExt fields `fields` (numbers): the stream it wrote and its per-picture lines
    /// (index, EVideoFrameType, bytes).
    static func witness(_ binary: String, clip: String, out: String, _ fields: [String]) throws -> [(index: Int, type: Int, bytes: Int)] {
        let r = try TestSupport.process(binary, [clip, out] + fields, in: "/")
        guard r.status == 0 else { throw LabError(.software, "openh264_witness failed: \(r.stderr)") }
        return r.lines.map { line in
            let n = line.split(separator: " ").compactMap { Int($0) }
            return (n[0], n[1], n[2])
        }
    }

    /// `enclab encode` with `flags` into `db` in `dir`; the run's stream path (from the database, read by sqlite3).
    static func encode(_ dir: String, clip: String, _ flags: [String], db: String = "lab.sqlite") throws -> (result: TestSupport.Result, stream: String?) {
        let r = try TestSupport.enclab(["encode", clip, "--no-plots", "--db", db, "--out", "out"] + flags, in: dir)
        let stream = try TestSupport.sqlite("\(dir)/\(db)", "SELECT stream_path FROM runs WHERE status = 'done' ORDER BY run_id DESC LIMIT 1").first
        return (r, stream.map { $0.hasPrefix("/") ? $0 : "\(dir)/\($0)" })
    }

    /// 40 noisy pictures (testsrc2 160x96 at 25 fps with noise) as n.y4m in `s`, encoded at 40 kbit/s with
    /// bEnableFrameSkip: OpenH264 skips many of them. The run and its stream, as ``encode(_:clip:_:db:)``.
    static func skippingRun(_ s: Scratch) throws -> (result: TestSupport.Result, stream: String?) {
        try TestSupport.lavfiClip(in: s.path, named: "n.y4m", "testsrc2=size=160x96:rate=25,noise=alls=40:allf=t", frames: 40)
        return try encode(s.path, clip: "n.y4m", ["--encoder", "openh264", "--bitrate", "40", "--bEnableFrameSkip", "true"])
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("the lab's stream is byte-identical to the C witness's with the same fields and timestamps; trace_headers: Constrained Baseline, CAVLC, IDR every uiIntraPeriod")
    func identicalToWitness() throws {
        let s = Scratch()
        try s.clip(frames: 24, seed: 5)
        let (run, stream) = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--rc", "abr", "--bitrate", "200", "--keyint", "10",
                                                                     "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        let witness = try Self.compileWitness(in: s.path)
        // rc abr = iRCMode 1 (RC_BITRATE_MODE), bitrate 200 kbit/s = iTargetBitrate 200000 bit/s, keyint = uiIntraPeriod.
        // Frame skip off: a skipped picture does not advance OpenH264's intra period.
        let lines = try Self.witness(witness, clip: s.file("c.y4m"), out: s.file("w.264"),
                                     ["iRCMode=1", "iTargetBitrate=200000", "uiIntraPeriod=10", "bEnableFrameSkip=0"])
        #expect(lines.count == 24 && !lines.contains { $0.type == 4 })
        #expect(try Self.bytes(path) == Self.bytes(s.file("w.264")))

        // The stream as FFmpeg's trace_headers reads it: profile_idc 66 with constraint_set1_flag (Constrained
        // Baseline), entropy_coding_mode_flag 0 (CAVLC).
        let trace = try TestSupport.tool("ffmpeg", ["-hide_banner", "-v", "verbose", "-i", "file:" + path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        func values(_ element: String) -> Set<String> {
            Set(trace.stderr.split(separator: "\n").filter { $0.contains(" \(element) ") }.compactMap { $0.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespaces) } })
        }
        #expect(values("profile_idc") == ["66"])
        #expect(values("constraint_set1_flag") == ["1"])
        #expect(values("entropy_coding_mode_flag") == ["0"])
        // uiIntraPeriod 10 over 24 frames: IDR pictures (ffprobe's key frames) at 0, 10 and 20; stored as IDR alike.
        let probe = try TestSupport.tool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame,pict_type",
                                                    "-of", "csv=p=0", "file:" + path])
        let keys = probe.lines.enumerated().filter { $0.element.hasPrefix("1") }.map(\.offset)
        #expect(keys == [0, 10, 20])
        let db = s.file("lab.sqlite")
        #expect(try TestSupport.sqlite(db, "SELECT group_concat(display_index) FROM (SELECT display_index FROM frames WHERE type = 'IDR' ORDER BY display_index)") == ["0,10,20"])
        // The run records the encoder and its version (WelsGetCodecVersion; Debian's libopenh264 2.3.1).
        #expect(try TestSupport.sqlite(db, "SELECT json_extract(settings, '$.encoder.name'), json_extract(settings, '$.encoder.version') FROM runs") == ["openh264|2.3.1"])
    }

    @Test("frame sizes against ffprobe's packets, the lab's PSNR against FFmpeg's psnr filter, the decoded QP (NULL without the decode)")
    func sizesAndPSNR() throws {
        let s = Scratch()
        try s.clip(frames: 12, seed: 9)
        let (run, stream) = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        let db = s.file("lab.sqlite")
        let probe = try TestSupport.tool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=size", "-of", "csv=p=0", "file:" + path])
        let stored = try TestSupport.sqlite(db, "SELECT size_bytes FROM frames ORDER BY coded_index")
        #expect(stored.count == 12)
        #expect(probe.lines == stored)
        #expect(try TestSupport.sqlite(db, "SELECT sum(size_bytes) FROM frames") == [String(try Self.bytes(path).count)])
        let stats = s.file("psnr.log")
        let psnr = try TestSupport.tool("ffmpeg", ["-hide_banner", "-v", "error", "-i", "file:" + path, "-i", "file:" + s.file("c.y4m"),
                                                  "-lavfi", "[0:v][1:v]psnr=stats_file=\(stats)", "-f", "null", "-"])
        #expect(psnr.status == 0, "\(psnr.stderr)")
        let ffmpeg = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n").map { line -> Double in
            let token = line.split(separator: " ").first { $0.hasPrefix("psnr_y:") }
            return token.flatMap { Double($0.dropFirst(7)) } ?? -1
        }
        let lab = try TestSupport.sqlite(db, "SELECT psnr_y FROM frames ORDER BY display_index").map { Double($0) ?? -2 }
        #expect(lab.count == ffmpeg.count)
        for (k, (a, b)) in zip(lab, ffmpeg).enumerated() { #expect(abs(a - b) < 0.006, "display frame \(k): lab \(a), ffmpeg \(b)") }
        // OpenH264 reports no PSNR: x264_psnr_* stay NULL, nothing differs; its QP is the decoded one
        // (OpenH264StreamTests.decodedQP has the witness): none NULL.
        #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM frames WHERE x264_psnr_y IS NOT NULL OR x264_psnr_differs = 1") == ["0"])
        #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM frames WHERE qp IS NULL") == ["0"])
        // --verify none: no decode and no PSNR of OpenH264's own, so no quality at all (not an error of 0).
        let unverified = try TestSupport.enclab(["encode", "c.y4m", "--encoder", "openh264", "--bitrate", "300", "--bEnableFrameSkip", "false", "--verify", "none",
                                                 "--no-plots", "--db", "u.sqlite", "--out", "u"], in: s.path)
        #expect(unverified.status == 0, "\(unverified.stderr)")
        #expect(try TestSupport.sqlite(s.file("u.sqlite"), "SELECT count(*), count(sse_y), count(psnr_y), count(qp) FROM frames") == ["12|0|0|0"])
    }

    @Test("frame skip: the skipped pictures are the C witness's videoFrameTypeSkip ones, stored, and the stream holds the rest")
    func skippedFrames() throws {
        let s = Scratch()
        // 40 noisy frames at 40 kbit/s: OpenH264 skips many of them (bEnableFrameSkip is its default).
        let (run, stream) = try Self.skippingRun(s)
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        let witness = try Self.compileWitness(in: s.path)
        let lines = try Self.witness(witness, clip: s.file("n.y4m"), out: s.file("w.264"), ["iRCMode=1", "iTargetBitrate=40000", "bEnableFrameSkip=1"])
        let skippedByLibrary = lines.filter { $0.type == 4 }.map(\.index)  // videoFrameTypeSkip (codec_def.h)
        #expect(!skippedByLibrary.isEmpty)
        let db = s.file("lab.sqlite")
        let stored = try TestSupport.sqlite(db, "SELECT input_index FROM skipped_frames ORDER BY input_index").compactMap { Int($0) }
        #expect(stored == skippedByLibrary)
        #expect(try Self.bytes(path) == Self.bytes(s.file("w.264")))
        // The stream's pictures (ffprobe counts them) are the inputs less the skipped ones; the run says so.
        let count = try TestSupport.tool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                    "-of", "csv=p=0", "file:" + path])
        #expect(count.lines == [String(40 - stored.count)])
        #expect(try TestSupport.sqlite(db, "SELECT frames, input_frames, json_extract(settings, '$.skipped_frames') FROM runs") == ["\(40 - stored.count)|40|\(stored.count)"])
        // Each skipped picture's PTS is its input PTS (constant rate: PTS = index), and no frame row has its index.
        #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM skipped_frames WHERE pts != input_index") == ["0"])
        #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM frames JOIN skipped_frames USING (run_id) WHERE display_index = input_index") == ["0"])

        // As a receiver sees a skipped picture: the previous decoded picture against its source. FFmpeg decodes the
        // stream and the clip to raw 4:2:0; the squared luma error and its PSNR are summed here.
        func raw(_ file: String) throws -> [[UInt8]] {
            let out = s.file(UUID().uuidString + ".yuv")
            let r = try TestSupport.tool("ffmpeg", ["-hide_banner", "-v", "error", "-i", "file:" + file, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", "file:" + out])
            guard r.status == 0 else { throw LabError(.software, r.stderr) }
            let bytes = [UInt8](try Self.bytes(out))
            let size = 160 * 96 * 3 / 2
            return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
        }
        let decoded = try raw(path), sources = try raw(s.file("n.y4m"))
        let coded = (0..<40).filter { !stored.contains($0) }
        let rows = try TestSupport.sqlite(db, "SELECT input_index, held_sse_y, held_psnr_y FROM skipped_frames ORDER BY input_index")
        #expect(rows.count == stored.count)
        for row in rows {
            let f = row.split(separator: "|").map(String.init)
            let k = try #require(Int(f[0]))
            guard let previous = coded.last(where: { $0 < k }), let position = coded.firstIndex(of: previous) else {
                #expect(f[1] == "", "picture \(k) has no decoded picture before it"); continue
            }
            var sse: Int64 = 0
            for i in 0..<(160 * 96) { let e = Int64(decoded[position][i]) - Int64(sources[k][i]); sse += e * e }
            #expect(f[1] == String(sse), "skipped picture \(k) against decoded picture of input \(previous)")
            let psnr = 10 * log10(255.0 * 255.0 * Double(160 * 96) / Double(sse))
            #expect(abs((Double(f[2]) ?? 0) - psnr) < 1e-9, "skipped picture \(k)")
        }
    }

    @Test("GStreamer's openh264enc writes the lab's bytes in rate-control off (its frame-rate updates change nothing there)")
    func identicalToGStreamer() throws {
        let s = Scratch()
        try s.clip(frames: 24, seed: 7)
        // openh264enc's fixed choices (gstopenh264enc.cpp set_format): eSpsPpsIdStrategy CONSTANT_ID, iLtrMarkPeriod 30,
        // uiProfileIdc baseline; its property defaults: complexity medium, frame skip off; multi-thread 1 here.
        let gst = try TestSupport.tool("gst-launch-1.0", ["-q", "filesrc", "location=" + s.file("c.y4m"), "!", "y4mdec", "!",
                                                         "openh264enc", "rate-control=off", "gop-size=12", "multi-thread=1", "complexity=medium",
                                                         "enable-frame-skip=false", "!", "filesink", "location=" + s.file("g.264")])
        try #require(gst.status == 0, "\(gst.stderr)")
        let (run, stream) = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--iRCMode", "off", "--keyint", "12",
                                                                     "--openh264", "eSpsPpsIdStrategy=constant", "--openh264", "iLtrMarkPeriod=30",
                                                                     "--iComplexityMode", "medium", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.bytes(try #require(stream)) == Self.bytes(s.file("g.264")))
    }

    @Test("GStreamer's openh264enc in bitrate mode: the lab's bytes up to its first frame-rate update, other bytes later")
    func gstreamerBitrateMode() throws {
        let s = Scratch()
        // FFmpeg's testsrc2 (30 frames at 25 fps): a clip whose rate control the frame-rate update moves.
        try TestSupport.lavfiClip(in: s.path, named: "c.y4m", "testsrc2=size=160x96:rate=25", frames: 30)
        let gst = try TestSupport.tool("gst-launch-1.0", ["-q", "filesrc", "location=" + s.file("c.y4m"), "!", "y4mdec", "!",
                                                         "openh264enc", "rate-control=bitrate", "bitrate=200000", "gop-size=90", "multi-thread=1",
                                                         "complexity=low", "enable-frame-skip=false", "!", "filesink", "location=" + s.file("g.264")])
        try #require(gst.status == 0, "\(gst.stderr)")
        let (run, stream) = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--rc", "abr", "--bitrate", "200", "--keyint", "90",
                                                                     "--openh264", "eSpsPpsIdStrategy=constant", "--openh264", "iLtrMarkPeriod=30",
                                                                     "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        func sizes(_ file: String) throws -> [Int] {
            try TestSupport.tool("ffprobe", ["-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", "file:" + file]).lines.compactMap { Int($0) }
        }
        let lab = try sizes(path), gstreamer = try sizes(s.file("g.264"))
        try #require(lab.count == 30 && gstreamer.count == 30)
        // openh264enc calls SetOption(ENCODER_OPTION_FRAME_RATE) at its 10th frame (index 9) with a rate smoothed from
        // 1/(1 + 25) s per frame, about 25.1, not the clip's 25: up to that frame the streams are the same bytes; on this
        // clip they part at frame 15 (measured), and over the whole clip they are not the same.
        let prefix = lab.prefix(10).reduce(0, +)
        #expect(Array(lab.prefix(10)) == Array(gstreamer.prefix(10)))
        #expect(try Self.bytes(path).prefix(prefix) == Self.bytes(s.file("g.264")).prefix(prefix))
        #expect(try Self.bytes(path) != Self.bytes(s.file("g.264")))
    }

    @Test("one pipeline, both encoders: x264 and OpenH264 runs of one clip in one database, each verified and recorded")
    func bothEncoders() throws {
        let s = Scratch()
        try s.clip(frames: 10, seed: 2)
        let x264 = try Self.encode(s.path, clip: "c.y4m", ["--preset", "ultrafast", "--threads", "1", "--bitrate", "300"])
        #expect(x264.result.status == 0, "\(x264.result.stderr)")
        let openh264 = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--bEnableFrameSkip", "false"])
        #expect(openh264.result.status == 0, "\(openh264.result.stderr)")
        let db = s.file("lab.sqlite")
        #expect(try TestSupport.sqlite(db, "SELECT status, frames, json_extract(settings, '$.encoder.name') FROM runs ORDER BY run_id") == ["done|10|", "done|10|openh264"])
        // Both verified: every bitstream check passed and both decodes (stream, packets) measured every picture.
        #expect(try TestSupport.sqlite(db, "SELECT run_id, count(*) FROM bitstream_checks WHERE passed = 0 GROUP BY run_id") == [])
        #expect(try TestSupport.sqlite(db, "SELECT run_id, count(*) FROM decoded_frames GROUP BY run_id ORDER BY run_id") == ["1|20", "2|20"])
        #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM skipped_frames") == ["0"])
        // The run's flags, which the console, the plots and the report label it with, name the encoder.
        #expect(try TestSupport.sqlite(db, "SELECT json_extract(settings, '$.x264_args') FROM runs ORDER BY run_id")
                == ["--preset ultrafast --threads 1 --bitrate 300", "--encoder openh264 --bEnableFrameSkip false --bitrate 300"])
    }

    @Test("timestamps reach OpenH264: a timecode file in timestamp mode gives the C witness's bytes with the same milliseconds, and other bytes than the constant rate")
    func timestampsReachIt() throws {
        let s = Scratch()
        try TestSupport.lavfiClip(in: s.path, named: "c.y4m", "testsrc2=size=160x96:rate=25", frames: 30)
        // 15 frames at 40 ms, then 15 at 67 ms (a rate drop to about 15 fps), whole milliseconds.
        let times = (0..<30).map { $0 < 15 ? $0 * 40 : 600 + ($0 - 15) * 67 }
        try ("# timecode format v2\n" + times.map(String.init).joined(separator: "\n") + "\n").write(toFile: s.file("tc.txt"), atomically: true, encoding: .utf8)
        let (run, stream) = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--iRCMode", "timestamp", "--bitrate", "150", "--tcfile-in", "tc.txt"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        let witness = try Self.compileWitness(in: s.path)
        _ = try Self.witness(witness, clip: s.file("c.y4m"), out: s.file("w.264"), ["iRCMode=3", "iTargetBitrate=150000", "ts=" + s.file("tc.txt")])
        _ = try Self.witness(witness, clip: s.file("c.y4m"), out: s.file("cfr.264"), ["iRCMode=3", "iTargetBitrate=150000"])
        #expect(try Self.bytes(path) == Self.bytes(s.file("w.264")))
        #expect(try Self.bytes(s.file("cfr.264")) != Self.bytes(s.file("w.264")))
    }

    @Test("the experiment key 'encoder': one grid runs both encoders; x264's run key has no encoder in it")
    func experimentKey() throws {
        let s = Scratch()
        try s.clip(frames: 6, seed: 4)
        let experiment = #"{"name": "two-encoders", "clips": ["c.y4m"], "base": {"bitrate": 300, "threads": 1}, "grid": {"encoder": ["x264", "openh264"]}}"#
        try experiment.write(toFile: s.file("e.json"), atomically: true, encoding: .utf8)
        let r = try TestSupport.enclab(["run", "e.json", "--jobs", "1", "--no-plots", "--db", "e.sqlite", "--out", "e"], in: s.path)
        #expect(r.status == 0, "\(r.stderr)")
        let db = s.file("e.sqlite")
        #expect(try TestSupport.sqlite(db, "SELECT status, coalesce(json_extract(settings, '$.encoder.name'), 'x264') FROM runs ORDER BY 2") == ["done|openh264", "done|x264"])
        // The same settings encoded with x264 by `encode` (no encoder key) have the x264 run's key: the key has no encoder in it.
        let single = try TestSupport.enclab(["encode", "c.y4m", "--bitrate", "300", "--threads", "1", "--no-plots", "--db", "x.sqlite", "--out", "x"], in: s.path)
        #expect(single.status == 0, "\(single.stderr)")
        let x264Key = try TestSupport.sqlite(db, "SELECT run_key FROM runs WHERE json_extract(settings, '$.encoder') IS NULL")
        #expect(x264Key == (try TestSupport.sqlite(s.file("x.sqlite"), "SELECT run_key FROM runs")))
    }

    @Test("usage errors: x264-only settings with openh264, OpenH264 fields without it, unknown fields, a mode without a target, unmapped VideoToolbox properties")
    func usageErrors() throws {
        let s = Scratch()
        try s.clip(frames: 4, seed: 2)
        let cases: [([String], String)] = [
            (["--encoder", "openh264", "--bitrate", "300", "--preset", "fast", "--bframes", "2"], "x264-only settings with encoder openh264: preset, bframes"),
            (["--iRCMode", "timestamp", "--bitrate", "300"], "OpenH264 settings without encoder openh264: iRCMode"),
            (["--encoder", "openh264", "--openh264", "iFoo=1"], "unknown OpenH264 setting 'iFoo'"),
            (["--encoder", "openh264", "--iRCMode", "sideways"], "bad value for OpenH264 setting 'iRCMode': 'sideways'"),
            (["--encoder", "openh264"], "encoder openh264 needs a target bitrate for iRCMode quality"),
            (["--encoder", "openh264", "--rc", "cbr", "--bitrate", "300"], "rc cbr with encoder openh264: OpenH264 has no such mode"),
            (["--encoder", "openh264", "--vt", "AverageBitRate=300000", "--vt", "DataRateLimits=40000,1"], "VideoToolbox properties with no OpenH264 field: DataRateLimits"),
            (["--encoder", "vp8"], "setting 'encoder' must be x264 or openh264, got 'vp8'"),
        ]
        for (flags, message) in cases {
            let r = try TestSupport.enclab(["encode", "c.y4m", "--no-plots", "--db", "lab.sqlite", "--out", "out"] + flags, in: s.path)
            #expect(r.status == 64, "\(flags): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(flags): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.file("lab.sqlite")))
        // VideoToolbox's AverageBitRate and MaxKeyFrameInterval become iTargetBitrate and uiIntraPeriod.
        let vt = try Self.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--vt", "AverageBitRate=250000", "--vt", "MaxKeyFrameInterval=2",
                                                               "--bEnableFrameSkip", "false"])
        #expect(vt.result.status == 0, "\(vt.result.stderr)")
        #expect(try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT group_concat(display_index) FROM (SELECT display_index FROM frames WHERE type = 'IDR' ORDER BY display_index)") == ["0,2"])
        #expect(try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT json_extract(settings, '$.resolved.bitrate_kbps') FROM runs") == ["250"])
    }
}
