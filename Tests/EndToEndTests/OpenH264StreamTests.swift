import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// OpenH264 runs (issue 22's leftovers): the QP a decoder shows, slices, CABAC at Main profile, the intra period and
/// all-intra, the settings refused, run labels, and dropped pictures where a user looks (console, metrics export,
/// report). Witnesses: `ffmpeg -bsf:v trace_headers`, ffprobe, the C witness of OpenH264Tests, sqlite3.
@Suite("OpenH264 streams: decoded QP, slices, CABAC, intra period, all-intra, skipped pictures in the console, export and report", .serialized)
struct OpenH264StreamTests {
    typealias Scratch = OpenH264Tests.Scratch

    /// `trace_headers`' lines of a stream: (element, value) in order.
    static func trace(_ path: String) throws -> [(name: String, value: Int)] {
        let r = try TestSupport.tool("ffmpeg", ["-hide_banner", "-v", "verbose", "-i", "file:" + path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        return r.stderr.split(separator: "\n").compactMap { line in
            guard line.contains("[trace_headers") else { return nil }
            // "[trace_headers @ 0x...] BIT_OFFSET NAME BITS = VALUE"
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let bracket = f.firstIndex(where: { $0.hasSuffix("]") }), bracket + 2 < f.count,
                  f.count >= 4, f[f.count - 2] == "=", let v = Int(f[f.count - 1]) else { return nil }
            return (String(f[bracket + 2]), v)
        }
    }

    /// Each picture's slices' first_mb_in_slice, from trace_headers (a picture starts at first_mb_in_slice 0).
    static func slices(_ trace: [(name: String, value: Int)]) -> [[Int]] {
        var pictures: [[Int]] = []
        for (name, value) in trace where name == "first_mb_in_slice" {
            if value == 0 || pictures.isEmpty { pictures.append([value]) } else { pictures[pictures.count - 1].append(value) }
        }
        return pictures
    }

    static func values(_ trace: [(name: String, value: Int)], _ name: String) -> [Int] { trace.filter { $0.name == name }.map(\.value) }

    @Test("QP: with iRCMode off and no adaptive quantization every macroblock has the slice QP, so frames.qp is trace_headers' pic_init_qp_minus26 + 26 + slice_qp_delta; in bitrate mode a QP per frame; NULL with --verify none")
    func decodedQP() throws {
        let s = Scratch()
        try s.clip(frames: 12, seed: 3)
        let (run, stream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--iRCMode", "off", "--iDLayerQp", "31",
                                                                              "--bEnableAdaptiveQuant", "false", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let t = try Self.trace(try #require(stream))
        let picInit = try #require(Self.values(t, "pic_init_qp_minus26").first)
        let deltas = Self.values(t, "slice_qp_delta")
        #expect(deltas.count == 12)
        let db = s.file("lab.sqlite")
        let stored = try TestSupport.sqlite(db, "SELECT qp FROM frames ORDER BY coded_index")
        #expect(stored == deltas.map { String(format: "%.1f", Double(picInit + 26 + $0)) })
        // Bitrate mode with OpenH264's adaptive quantization: a QP for every frame, within 0-51.
        let (abr, _) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "150", "--bEnableFrameSkip", "false"], db: "b.sqlite")
        #expect(abr.status == 0, "\(abr.stderr)")
        #expect(try TestSupport.sqlite(s.file("b.sqlite"), "SELECT count(qp), min(qp) >= 0 AND max(qp) <= 51 FROM frames") == ["12|1"])
        // No decode, no QP: NULL, not 0.
        let (none, _) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "150", "--bEnableFrameSkip", "false", "--verify", "none"], db: "n.sqlite")
        #expect(none.status == 0, "\(none.stderr)")
        #expect(try TestSupport.sqlite(s.file("n.sqlite"), "SELECT count(*), count(qp) FROM frames") == ["12|0"])
    }

    @Test("slices: --slices 3 (uiSliceMode fixedslcnum, uiSliceNum 3) gives 3 slices in every picture by trace_headers' first_mb_in_slice, the C witness's bytes")
    func slices() throws {
        let s = Scratch()
        try s.clip(frames: 10, seed: 6)
        let (run, stream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--slices", "3", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        let pictures = Self.slices(try Self.trace(path))
        #expect(pictures.count == 10)
        #expect(pictures.allSatisfy { $0.count == 3 && $0 == $0.sorted() }, "\(pictures)")
        let witness = try OpenH264Tests.compileWitness(in: s.path)
        _ = try OpenH264Tests.witness(witness, clip: s.file("c.y4m"), out: s.file("w.264"),
                                      ["iRCMode=1", "iTargetBitrate=300000", "uiSliceMode=1", "uiSliceNum=3", "bEnableFrameSkip=0"])
        #expect(try OpenH264Tests.bytes(path) == OpenH264Tests.bytes(s.file("w.264")))
    }

    @Test("CABAC: --cabac gives entropy_coding_mode_flag 1 (OpenH264 then writes High, profile_idc 100); with uiProfileIdc main, Main profile (77), the C witness's bytes")
    func cabac() throws {
        let s = Scratch()
        try s.clip(frames: 8, seed: 8)
        let (high, highStream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--cabac", "--bEnableFrameSkip", "false"])
        #expect(high.status == 0, "\(high.stderr)")
        let h = try Self.trace(try #require(highStream))
        #expect(Set(Self.values(h, "entropy_coding_mode_flag")) == [1])
        #expect(Set(Self.values(h, "profile_idc")) == [100])
        let (main, mainStream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--cabac", "--uiProfileIdc", "main",
                                                                                   "--bEnableFrameSkip", "false"], db: "m.sqlite")
        #expect(main.status == 0, "\(main.stderr)")
        let path = try #require(mainStream)
        let m = try Self.trace(path)
        #expect(Set(Self.values(m, "entropy_coding_mode_flag")) == [1])
        #expect(Set(Self.values(m, "profile_idc")) == [77])
        let witness = try OpenH264Tests.compileWitness(in: s.path)
        _ = try OpenH264Tests.witness(witness, clip: s.file("c.y4m"), out: s.file("w.264"),
                                      ["iRCMode=1", "iTargetBitrate=300000", "iEntropyCodingModeFlag=1", "uiProfileIdc=77", "bEnableFrameSkip=0"])
        #expect(try OpenH264Tests.bytes(path) == OpenH264Tests.bytes(s.file("w.264")))
        // The run's parse-back agrees: its stored profile and entropy checks passed.
        #expect(try TestSupport.sqlite(s.file("m.sqlite"), "SELECT count(*) FROM bitstream_checks WHERE passed = 0") == ["0"])
    }

    @Test("intra period: --keyint 7 over 30 pictures puts IDR pictures at 0, 7, 14, 21, 28 by ffprobe, as frames.type says")
    func intraPeriod() throws {
        let s = Scratch()
        try s.clip(frames: 30, seed: 12)
        let (run, stream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--keyint", "7", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let probe = try TestSupport.tool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame", "-of", "csv=p=0",
                                                    "file:" + (try #require(stream))])
        let keys = probe.lines.enumerated().filter { $0.element.hasPrefix("1") }.map(\.offset)
        #expect(keys == [0, 7, 14, 21, 28])
        #expect(try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT group_concat(display_index) FROM (SELECT display_index FROM frames WHERE type = 'IDR' ORDER BY display_index)") == ["0,7,14,21,28"])
    }

    @Test("all-intra: --keyint 1 over 40 pictures works (it failed with 'H264Error error 2': OpenH264's new SPS id per IDR reaches 32 ids, more than a packet carried); every picture an IDR by ffprobe")
    func allIntra() throws {
        let s = Scratch()
        try s.clip(frames: 40, seed: 13)
        let (run, stream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "600", "--keyint", "1", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        // OpenH264's default eSpsPpsIdStrategy (increasing) gives each IDR the next seq_parameter_set_id: 0-31, then 0 again.
        let ids = Self.values(try Self.trace(path), "seq_parameter_set_id")
        #expect(Set(ids).count == 32, "\(ids)")
        let probe = try TestSupport.tool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame", "-of", "csv=p=0", "file:" + path])
        #expect(probe.lines.count == 40 && probe.lines.allSatisfy { $0.hasPrefix("1") })
        // The stream rebuilt from the packets decodes to the same pictures (both decodes stored, every check passed).
        let db = s.file("lab.sqlite")
        #expect(try TestSupport.sqlite(db, "SELECT source, count(*) FROM decoded_frames GROUP BY source ORDER BY source") == ["packets|40", "stream|40"])
        #expect(try TestSupport.sqlite(db, "SELECT count(*) FROM bitstream_checks WHERE passed = 0") == ["0"])
    }

    @Test("refused: iMinQp above iMaxQp (64, naming both); run labels name the VideoToolbox properties an OpenH264 run was given")
    func refusedAndLabels() throws {
        let s = Scratch()
        try s.clip(frames: 4, seed: 2)
        let bad = try TestSupport.enclab(["encode", "c.y4m", "--encoder", "openh264", "--bitrate", "300", "--iMinQp", "40", "--iMaxQp", "30",
                                          "--no-plots", "--db", "q.sqlite", "--out", "q"], in: s.path)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("OpenH264's iMinQp 40 is above its iMaxQp 30"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.file("q.sqlite")))
        let (vt, _) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--vt", "AverageBitRate=250000", "--vt", "MaxKeyFrameInterval=2",
                                                                        "--bEnableFrameSkip", "false"])
        #expect(vt.status == 0, "\(vt.stderr)")
        let label = "--encoder openh264 --bEnableFrameSkip false --vt AverageBitRate=250000 --vt MaxKeyFrameInterval=2"
        #expect(try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT json_extract(settings, '$.x264_args') FROM runs") == [label])
        #expect(vt.stdout.contains("  \(label)  "), "\(vt.stdout)")
    }

    @Test("OpenH264's own warnings (ENCODER_OPTION_TRACE_CALLBACK) reach stderr and the run's warnings without its pointer; bUseLoadBalancing with threads and fixed slices makes the run not repeatable (codec_app_def.h: 'the result of each run may be different')")
    func warningsAndRepeatability() throws {
        let s = Scratch()
        try s.clip(frames: 6, seed: 5)
        let (run, _) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--bEnableFrameSkip", "false"])
        #expect(run.status == 0, "\(run.stderr)")
        // OpenH264's own text (welsEncoderExt.cpp's parameter check), prefixed by the lab, its "this = 0x..." cut off.
        let text = "openh264: Warning:bEnableFrameSkip = 0,bitrate can't be controlled for RC_QUALITY_MODE,RC_BITRATE_MODE and RC_TIMESTAMP_MODE without enabling skip frame."
        #expect(run.stderr.contains("warning: " + text), "\(run.stderr)")
        #expect(!run.stderr.contains("this = 0x"))
        #expect(try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT count(*) FROM runs, json_each(runs.warnings) WHERE json_each.value = '\(text.replacingOccurrences(of: "'", with: "''"))'") == ["1"])
        #expect(try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT repeatable FROM runs") == ["1"])
        let (balanced, _) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "300", "--bEnableFrameSkip", "false",
                                                                              "--threads", "2", "--slices", "2", "--bUseLoadBalancing", "true"], db: "b.sqlite")
        #expect(balanced.status == 0, "\(balanced.stderr)")
        #expect(try TestSupport.sqlite(s.file("b.sqlite"), "SELECT repeatable FROM runs") == ["0"])
    }

    @Test("skipped pictures where a user looks: the console line, the metrics export's skipped_frames, the report's warning, run facts and keyframe timeline data, each equal to sqlite3's count of skipped_frames rows")
    func skippedEverywhere() throws {
        let s = Scratch()
        let (run, _) = try OpenH264Tests.skippingRun(s)
        #expect(run.status == 0, "\(run.stderr)")
        let db = s.file("lab.sqlite")
        let count = try #require(Int(try TestSupport.sqlite(db, "SELECT count(*) FROM skipped_frames").first ?? ""))
        try #require(count > 0)
        #expect(run.stdout.contains("; \(count) of 40 pictures skipped by the encoder (skipped_frames)"), "\(run.stdout)")
        // The metrics export (enclab analyze has written run_metrics): the column after max_delay_frames.
        let export = try TestSupport.enclab(["export", "--db", "lab.sqlite", "--table", "metrics", "--format", "csv"], in: s.path)
        #expect(export.status == 0, "\(export.stderr)")
        let rows = export.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let header = rows.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) ?? []
        let column = try #require(header.firstIndex(of: "skipped_frames"))
        #expect(column > 0 && header[column - 1] == "max_delay_frames")
        #expect(rows.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[column] } == [Substring(String(count))])
        // The report: the experiment page's warning, the run page's facts, the keyframe timeline's marks and gnuplot data.
        let report = try TestSupport.enclab(["report", "--db", "lab.sqlite", "--out", "rep", "--runs", "1"], in: s.path)
        #expect(report.status == 0, "\(report.stderr)")
        let experiment = try #require(try FileManager.default.contentsOfDirectory(atPath: s.file("rep")).first {
            FileManager.default.fileExists(atPath: s.file("rep/\($0)/run-1/index.html"))
        })
        let page = try String(contentsOfFile: s.file("rep/\(experiment)/index.html"), encoding: .utf8)
        #expect(page.contains("<li class=\"skipped-frames\"><b>Pictures skipped by the encoder:</b> 1 run dropped input pictures (run 1; run 1: \(count) of 40, skipped_frames)"))
        let runPage = try String(contentsOfFile: s.file("rep/\(experiment)/run-1/index.html"), encoding: .utf8)
        #expect(runPage.contains("\(count) of 40 input pictures (skipped_frames"))
        #expect(runPage.components(separatedBy: "\"name\":\"skipped by the encoder\"").count - 1 == count)
        // The worst-PSNR frame's decoded picture is its place among the coded pictures (the stream has no others):
        // its squared error against the source is the stored one.
        #expect(runPage.contains("squared error (Y ") && runPage.contains("is the stored one."), "worst-PSNR frame not checked")
        // gnuplot's data: one line per skipped picture, its PTS in seconds from the first (25 fps: input index / 25).
        let dat = try String(contentsOfFile: s.file("rep/\(experiment)/run-1/skipped.dat"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { Double($0) }
        let indexes = try TestSupport.sqlite(db, "SELECT input_index FROM skipped_frames ORDER BY input_index").compactMap { Double($0) }
        #expect(dat.count == count)
        for (a, k) in zip(dat, indexes) { #expect(abs(a - k / 25) < 1e-9) }
    }
}
