import Foundation
import H264
import Testing
@testable import EncoderLab

/// Plots from the store: a run's plot input derived from its stored row, the rate-distortion lines named from the
/// grid (`axes`, or the label of the previous version's rows), and `PlotFromStore.redraw`'s choice of runs, folders
/// and errors, on databases written through the store and edited with the sqlite3 CLI.
@Suite("plots from the store", .serialized)
struct PlotFromStoreTests {
    /// A `runs` row as the store reads it back.
    static func row(id: Int64 = 1, clip: String = "clips/a.y4m", settings: String, status: String = "done",
                    timebase: (Int?, Int?) = (1, 25), fps: (Int?, Int?) = (25, 1)) -> LabStore.RunRow {
        LabStore.RunRow(runID: id, experiment: "e", clip: clip, settingsJSON: settings, status: status, frames: 2, bytes: 2500,
                        durationSeconds: 0.08, timebaseNum: timebase.0, timebaseDen: timebase.1, streamPath: nil, crop: nil,
                        x264Version: "x", labVersion: "0", ffmpegVersion: nil, machineJSON: "{}", createdAt: "",
                        finishedAt: nil, width: 16, height: 16, fpsNum: fps.0, fpsDen: fps.1, inputFrames: 2,
                        truncatedBytes: nil, warningsJSON: nil, error: nil)
    }

    static let frameRows = [
        LabStore.FrameRow(codedIndex: 0, displayIndex: 0, type: "IDR", sizeBytes: 1000, pts: 0, dts: 0, qp: 20, psnrY: 40, psnrAvg: 41, ssim: nil),
        LabStore.FrameRow(codedIndex: 1, displayIndex: 1, type: "P", sizeBytes: 1500, pts: 1, dts: 1, qp: 22, psnrY: 39, psnrAvg: 40, ssim: nil),
    ]

    @Test("RunPlotInput from a stored row: title, rate, timebase, target and maxrate as the lab derives them")
    func runPlotInput() throws {
        // --rc vbr: x264's method is abr with the bitrate as target; the maxrate differs, so it is drawn too.
        let vbr = try RunPlotInput(run: Self.row(settings: #"{"rc":"vbr","label":"bitrate=500 rc=vbr","x264_args":"--bitrate 500","resolved":{"rc_method":"abr","bitrate_kbps":500,"vbv_maxrate_kbps":750}}"#), frames: Self.frameRows)
        #expect(vbr.title == "a.y4m bitrate=500 rc=vbr" && vbr.targetKbps == 500 && vbr.maxrateKbps == 750)
        #expect(vbr.fps == (try Rational(25, 1)) && vbr.timebaseNum == 1 && vbr.timebaseDen == 25 && vbr.frames.count == 2)
        // --rc cbr: maxrate = target, drawn once.
        let cbr = try RunPlotInput(run: Self.row(settings: #"{"rc":"cbr","label":"bitrate=500 rc=cbr","resolved":{"rc_method":"abr","bitrate_kbps":500,"vbv_maxrate_kbps":500}}"#), frames: Self.frameRows)
        #expect(cbr.targetKbps == 500 && cbr.maxrateKbps == nil)
        // CRF capped by a VBV: no target (the mean is drawn), the maxrate is.
        let capped = try RunPlotInput(run: Self.row(settings: #"{"rc":"vbr","label":"crf=20","resolved":{"rc_method":"crf","bitrate_kbps":0,"vbv_maxrate_kbps":900}}"#), frames: Self.frameRows)
        #expect(capped.targetKbps == nil && capped.maxrateKbps == 900)
        // enclab encode: no label, so the x264 flags; 50/2 fps is 25 fps.
        let encode = try RunPlotInput(run: Self.row(clip: "/x/y/it's b.y4m", settings: #"{"rc":null,"label":"","x264_args":"--crf 23","resolved":{"rc_method":"crf","vbv_maxrate_kbps":0}}"#, fps: (50, 2)), frames: Self.frameRows)
        #expect(encode.title == "it's b.y4m --crf 23" && encode.targetKbps == nil && encode.maxrateKbps == nil)
        #expect(encode.fps.numerator == 25 && encode.fps.denominator == 1)
    }

    @Test("RunPlotInput refuses rows it cannot draw, naming the run", arguments: [
        (row(settings: #"{"resolved":{"rc_method":"crf"}}"#, status: "failed"), "run 1: status failed, it has no frames to plot"),
        (row(settings: #"{"resolved":{"rc_method":"crf"}}"#, timebase: (nil, 25)), "run 1: timebase_num/timebase_den are NULL/25, expected two numbers above 0"),
        (row(settings: #"{"resolved":{"rc_method":"crf"}}"#, fps: (25, 0)), "run 1: fps_num/fps_den are 25/0, expected two numbers above 0"),
        (row(settings: "not json"), "run 1: settings are not a JSON object"),
        (row(settings: #"{"label":"crf=20"}"#), "run 1: settings hold no resolved.rc_method"),
        (row(settings: #"{"resolved":{"rc_method":"abr"}}"#), "run 1: settings hold rc_method abr but no resolved.bitrate_kbps"),
    ])
    func runPlotInputErrors(row: LabStore.RunRow, message: String) {
        #expect(throws: LabError(.data, message)) { try RunPlotInput(run: row, frames: Self.frameRows) }
    }

    @Test("the old entry point and RunPlotInput write the same frames.dat, 50/2 fps as 25/1")
    func sameDataBothWays() throws {
        let scratch = Scratch()
        try Plots.writeRunPlots(frames: Self.frameRows, timebaseNum: 1, timebaseDen: 50, fpsNum: 50, fpsDen: 2,
                                targetKbps: nil, title: "t", dir: scratch.file("old"))
        try Plots.writeRunPlots(RunPlotInput(title: "t", fps: try Rational(25, 1), timebaseNum: 1, timebaseDen: 50,
                                             targetKbps: nil, maxrateKbps: nil, frames: Self.frameRows), dir: scratch.file("new"))
        let old = try Data(contentsOf: URL(fileURLWithPath: scratch.file("old/frames.dat")))
        #expect(old == (try Data(contentsOf: URL(fileURLWithPath: scratch.file("new/frames.dat")))))
        // 1000 bytes = 8 kbit, 1500 = 12 kbit; two frames last 2/25 s, shorter than the 1 s window: NaN.
        #expect(String(decoding: old, as: UTF8.self) == "# coded_index display_index size_kbit type_index window_kbps psnr_y psnr_avg\n0 0 8.0 0 NaN 40.0 41.0\n1 1 12.0 2 NaN 39.0 40.0\n")
        #expect(try String(contentsOfFile: scratch.file("old/frames.gp"), encoding: .utf8) == String(contentsOfFile: scratch.file("new/frames.gp"), encoding: .utf8))
    }

    static func settings(_ json: String) throws -> StoredRunSettings { try StoredRunSettings(json: json, runID: 1) }

    @Test("line names: from axes without the rate keys (also inside objects), from the label without axes")
    func lineNames() throws {
        // The previous version: the label's words without qp=, crf=, bitrate=, rc=; rc, else x264's method.
        #expect(RateDistortion.lineName(try Self.settings(#"{"rc":"cbr","label":"bframes=0 bitrate=500 rc=cbr","resolved":{"rc_method":"abr"}}"#)) == "cbr bframes=0")
        #expect(RateDistortion.lineName(try Self.settings(#"{"rc":null,"label":"crf=20","resolved":{"rc_method":"crf"}}"#)) == "crf")
        #expect(RateDistortion.lineName(try Self.settings(#"{"label":"qpmin=10 qp=20"}"#)) == "? qpmin=10")
        // Axes: scalars but the rate keys, objects' own keys but the rate keys; an object left empty adds nothing.
        let axes = #"{"rc":"vbr","axes":{"bitrate":500,"mode":{"rc":"vbr","vbv-maxrate":900,"bitrate":500},"preset":"fast","rate":{"crf":20}},"resolved":{"rc_method":"abr"}}"#
        // vbv- keys set the rate too (the report's configurations): left out.
        #expect(RateDistortion.lineName(try Self.settings(axes)) == "vbr preset=fast")
        // A value with a space and "qp=" is one value: the label would lose its second word.
        #expect(RateDistortion.lineName(try Self.settings(#"{"axes":{"zones":"0,10,q=20 qp=3"},"label":"zones=0,10,q=20 qp=3","resolved":{"rc_method":"crf"}}"#)) == "crf zones=0,10,q=20 qp=3")
        #expect(RateDistortion.lineName(try Self.settings(#"{"label":"zones=0,10,q=20 qp=3","resolved":{"rc_method":"crf"}}"#)) == "crf zones=0,10,q=20")
        // true as the label writes it (nothing after =), 2.5 and 2.0 as numbers, {} (enclab encode) as the mode alone.
        #expect(RateDistortion.lineName(try Self.settings(#"{"axes":{"no-cabac":true,"aq-strength":2.5,"ipratio":2.0},"resolved":{"rc_method":"crf"}}"#)) == "crf aq-strength=2.5 ipratio=2 no-cabac")
        #expect(RateDistortion.lineName(try Self.settings(#"{"axes":{},"label":"","resolved":{"rc_method":"cqp"}}"#)) == "cqp")
    }

    @Test("line names from axes equal those from the labels the experiment file gives the same grid points")
    func axesAgreeWithLabels() throws {
        let grid = try JSONSerialization.jsonObject(with: Data(#"""
            {"bframes": [0, 2], "mode": [{"rc": "cbr", "bitrate": 500, "vbv-bufsize": 250}, {"rc": "crf", "crf": 23}],
             "no-cabac": [true], "preset": ["fast"]}
            """#.utf8)) as! [String: Any]
        let experiment = try Experiment(object: ["name": "g", "clips": ["a.y4m"], "grid": grid], file: "g.json", baseDirectory: "")
        #expect(experiment.runs.count == 4)
        // The runs in the experiment's order: keys sorted, the last key varying fastest.
        var axesList: [[String: Any]] = []
        for b in grid["bframes"] as! [Any] {
            for m in grid["mode"] as! [Any] {
                axesList.append(["bframes": b, "mode": m, "no-cabac": (grid["no-cabac"] as! [Any])[0], "preset": "fast"])
            }
        }
        for (run, axes) in zip(experiment.runs, axesList) {
            let rc = run.settings.rc!.rawValue
            let fromLabel = try Self.settings(JSON.string(["rc": rc, "label": run.label]))
            let fromAxes = try Self.settings(JSON.string(["rc": rc, "label": run.label, "axes": axes]))
            #expect(RateDistortion.lineName(fromLabel) == RateDistortion.lineName(fromAxes), "\(run.label)")
        }
        #expect(RateDistortion.lineName(try Self.settings(JSON.string(["rc": "cbr", "axes": axesList[0]]))) == "cbr bframes=0 no-cabac preset=fast")
    }

    /// A NAL unit of `count` bytes with a start code.
    static func nal(_ count: Int) -> WrittenNAL { WrittenNAL(type: 1, refIdc: 2, bytes: [0, 0, 0, 1] + Array(repeating: 0x41, count: count - 4)) }

    /// A database written through the store: experiment `e` runs 1 (a.y4m crf=20: 1000 + 1500 bytes in 0.5 s,
    /// PSNR 40 and 20 dB), 2 (a.y4m crf=30: 500 + 500 bytes in 0.25 s, PSNR 30 and 10), 3 (settings with axes:
    /// clips/b.y4m, bframes 0, crf 25: 250 + 250 bytes in 1 s, PSNR 30 and 40), 4 (no error: lossless), 5 (failed);
    /// experiment `other` run 6 (like run 1).
    ///
    /// The PSNRs are the lab's, from the squared errors of a `stream` decode: 40x40 pictures, 1600 luma and 400
    /// samples per chroma plane; PSNR p dB in every plane is sse_y = 255^2 * 1600 / 10^(p/10) = 104,040,000 /
    /// 10^(p/10) (10,404 for 40 dB) and sse_u = sse_v = sse_y / 4, so psnr_avg is p too. x264's own PSNRs are
    /// given 1 dB above them: the plots must not show x264's.
    static func makeDatabase(_ scratch: Scratch) throws -> String {
        let path = scratch.file("lab.sqlite")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        func record(_ experiment: String, clip: String, settings: String, sizes: [Int], psnr: [Int?], seconds: Double) throws {
            let frames = sizes.enumerated().map { i, size in
                let x264 = psnr[i].map { Double($0 + 1) }
                return EncodedFrame(codedIndex: i, displayIndex: i, type: i == 0 ? .idr : .p, keyframe: i == 0, pts: Int64(i), dts: Int64(i),
                                    qp: 25, psnrY: x264, psnrU: x264, psnrV: x264, psnrAvg: x264, ssim: nil, nals: [nal(size)])
            }
            let decoded = psnr.enumerated().map { i, p in
                let sseY = p.map { Int64(104_040_000 / Int(pow(10, Double($0) / 10).rounded())) } ?? 0
                return LabStore.DecodedFrameRecord(source: "stream", displayIndex: i,
                                                   errors: PlaneErrors(sseY: sseY, sseU: sseY / 4, sseV: sseY / 4), matchesX264: false)
            }
            let start = LabStore.RunStart(experiment: experiment, clip: clip, settingsJSON: settings, crop: nil, ffmpegVersion: nil,
                                          width: 40, height: 40, fpsNum: 25, fpsDen: 1)
            let perFrame = RunMeasurements.perFrame(frames: frames, decoded: decoded, width: 40, height: 40, unverified: false)
            var run = LabStore.RunRecord(start: start, createdAt: Date(), warnings: [], outcome: .done(.init(
                frames: frames, quality: perFrame.quality, decoded: perFrame.decoded, timebaseNum: 1, timebaseDen: 25,
                durationSeconds: seconds, inputFrames: frames.count, truncatedBytes: nil, settingsJSON: settings, verification: nil)))
            run.streamPath = { "OUT/run-\($0)/stream.264" }
            try store.recordRun(run) { _ in }
        }
        let crf = #""rc":"crf","resolved":{"rc_method":"crf","vbv_maxrate_kbps":0}"#
        try record("e", clip: "a.y4m", settings: #"{"label":"crf=20",\#(crf)}"#, sizes: [1000, 1500], psnr: [40, 20], seconds: 0.5)
        try record("e", clip: "a.y4m", settings: #"{"label":"crf=30",\#(crf)}"#, sizes: [500, 500], psnr: [30, 10], seconds: 0.25)
        try record("e", clip: "clips/b.y4m", settings: #"{"label":"bframes=0 crf=25","axes":{"bframes":0,"crf":25},\#(crf)}"#, sizes: [250, 250], psnr: [30, 40], seconds: 1)
        try record("e", clip: "a.y4m", settings: #"{"label":"qp=0","rc":"cqp","resolved":{"rc_method":"cqp"}}"#, sizes: [4000, 4000], psnr: [nil, nil], seconds: 0.08)
        let failed = LabStore.RunStart(experiment: "e", clip: "a.y4m", settingsJSON: "{}", crop: nil, ffmpegVersion: nil,
                                       width: 16, height: 16, fpsNum: 25, fpsDen: 1)
        try store.recordRun(.init(start: failed, createdAt: Date(), warnings: [], outcome: .failed(error: "a.y4m: frame 3 is short"))) { _ in }
        try record("other", clip: "a.y4m", settings: #"{"label":"crf=20",\#(crf)}"#, sizes: [1000, 1500], psnr: [40, 20], seconds: 0.5)
        return path
    }

    /// PSNR of the squared error pooled over a run's frames of 40x40 (2400 samples each), frames given in dB as
    /// `makeDatabase` stores them: sse of p dB = 104,040,000 / 10^(p/10) luma, a quarter of it per chroma plane.
    static func pooledPSNR(_ psnr: [Int]) -> Double {
        let sse = psnr.map { p -> Double in let y = Double(104_040_000 / Int(pow(10, Double(p) / 10).rounded())); return y + 2 * (y / 4).rounded(.down) }
        return 10 * log10(255.0 * 255 * 2400 * Double(psnr.count) / sse.reduce(0, +))
    }

    /// The rows of a rate-quality data file: per block comment, its `kbps value run_id` rows.
    static func blocks(_ text: String) -> [(String, [(Double, Double, Int64)])] {
        var out: [(String, [(Double, Double, Int64)])] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# bitrate_kbps") { continue }
            if line.hasPrefix("# ") { out.append((String(line.dropFirst(2)), [])); continue }
            let f = line.split(separator: " ")
            out[out.count - 1].1.append((Double(f[0])!, Double(f[1])!, Int64(f[2])!))
        }
        return out
    }

    @Test("the rd plot from the store: one point per done run with psnr_global, run_metrics' bitrate and the pooled PSNR written out")
    func experimentPlotFromStore() throws {
        let scratch = Scratch()
        let store = try LabStore(path: try Self.makeDatabase(scratch))
        try Plots.writeExperimentPlot(experiment: "e", runs: try store.runs(), store: store, dir: scratch.file("rd"))
        // Bitrate over the PTS span plus one frame (2 frames of 1/25 s: 0.08 s): run 1 2500 bytes * 8 / 1000 / 0.08 =
        // 250 kbit/s, run 2 1000 bytes: 100, run 3 500 bytes: 50. PSNR pooled over the squared errors (not the mean of
        // per-frame PSNR, 30 and 20 dB; nor x264's, 1 dB higher). Run 4 has no PSNR, 5 failed, 6 is another experiment's.
        let text = try String(contentsOfFile: scratch.file("rd/rd.dat"), encoding: .utf8)
        #expect(text.hasPrefix("# bitrate_kbps psnr_global run_id, one block per curve\n"))
        let found = Self.blocks(text)
        let expected: [(String, [(Double, Double, Int64)])] = [
            ("a.y4m crf", [(100, Self.pooledPSNR([30, 10]), 2), (250, Self.pooledPSNR([40, 20]), 1)]),
            ("b.y4m crf bframes=0", [(50, Self.pooledPSNR([30, 40]), 3)]),
        ]
        #expect(found.map(\.0) == expected.map(\.0))
        for (f, e) in zip(found, expected) {
            #expect(f.1.count == e.1.count)
            for (p, q) in zip(f.1, e.1) { #expect(abs(p.0 - q.0) < 1e-9 && abs(p.1 - q.1) < 1e-9 && p.2 == q.2, "\(p) \(q)") }
        }
        #expect(PlotTests.isPNG(scratch.file("rd/rd.png")))
        let texts = try PlotTests.svgTexts(scratch.file("rd/rd.svg"))
        #expect(texts.contains("e: bitrate against psnr_global") && texts.contains("a.y4m crf") && texts.contains("b.y4m crf bframes=0"))
        #expect(texts.contains { $0.hasPrefix("PSNR, pooled squared error") })
    }

    @Test("redraw: every done run in run-ID, the rd plots of two experiments in their own folders")
    func redrawAll() throws {
        let scratch = Scratch()
        let db = try Self.makeDatabase(scratch)
        let before = try StoreOpenTests.sqlite(db, "SELECT count(*), sum(status = 'done') FROM runs")
        let out = scratch.file("plots")
        let lines = try PlotFromStore.redraw(databasePath: db, outDirectory: out, runs: [])
        #expect(lines == [1, 2, 3, 4, 6].map { "run \($0): frames and psnr plots in \(out)/run-\($0)" }
                + ["experiment e: rd plot in \(out)/e", "experiment other: rd plot in \(out)/other"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["e", "other", "run-1", "run-2", "run-3", "run-4", "run-6"])
        for name in ["run-1/frames", "run-4/psnr", "e/rd", "other/rd"] { #expect(PlotTests.isPNG("\(out)/\(name).png"), "\(name)") }
        // Run 1's frames.dat: 1000 and 1500 bytes are 8 and 12 kbit.
        #expect(try String(contentsOfFile: "\(out)/run-1/frames.dat", encoding: .utf8).hasSuffix("0 0 8.0 0 NaN 40.0 40.0\n1 1 12.0 2 NaN 20.0 20.0\n"))
        let other = Self.blocks(try String(contentsOfFile: "\(out)/other/rd.dat", encoding: .utf8))
        #expect(other.count == 1 && other[0].0 == "crf" && other[0].1.count == 1)
        #expect(abs(other[0].1[0].0 - 250) < 1e-9 && abs(other[0].1[0].1 - Self.pooledPSNR([40, 20])) < 1e-9 && other[0].1[0].2 == 6)
        // Only read: the rows are as they were.
        #expect(try StoreOpenTests.sqlite(db, "SELECT count(*), sum(status = 'done') FROM runs") == before)
        // The default folder: the database's path without its extension.
        let defaulted = try PlotFromStore.redraw(databasePath: db, outDirectory: nil, runs: ["run-6"])
        #expect(defaulted == ["run 6: frames and psnr plots in \(scratch.file("lab"))/run-6", "experiment other: rd plot in \(scratch.file("lab"))/other"])
    }

    @Test("the default plot folder is the database path without its extension")
    func defaultOut() {
        #expect(PlotFromStore.defaultOutDirectory(databasePath: "results/quickstart.sqlite") == "results/quickstart")
        #expect(PlotFromStore.defaultOutDirectory(databasePath: "/a.b/lab.db") == "/a.b/lab")
        #expect(PlotFromStore.defaultOutDirectory(databasePath: "a.b/lab") == "a.b/lab-plots")
        #expect(PlotFromStore.defaultOutDirectory(databasePath: ".lab") == ".lab-plots")
        #expect(PlotFromStore.defaultOutDirectory(databasePath: "lab.") == "lab.-plots")
    }

    /// `makeDatabase` with run keys set by the sqlite3 CLI (the column added when the schema lacks it): runs 1 and
    /// 2 share the prefix c0ffee01, run 3's key starts 12345678, run 5 (failed) has run_id 12345678.
    static func keyedDatabase(_ scratch: Scratch) throws -> String {
        let db = try makeDatabase(scratch)
        if try StoreOpenTests.sqlite(db, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'run_key'") == ["0"] {
            _ = try StoreOpenTests.sqlite(db, "ALTER TABLE runs ADD COLUMN run_key TEXT")
        }
        _ = try StoreOpenTests.sqlite(db, """
            UPDATE runs SET run_key = 'c0ffee01\(String(repeating: "1", count: 56))' WHERE run_id = 1;
            UPDATE runs SET run_key = 'c0ffee01\(String(repeating: "2", count: 56))' WHERE run_id = 2;
            UPDATE runs SET run_key = '12345678\(String(repeating: "3", count: 56))' WHERE run_id = 3;
            UPDATE runs SET run_id = 12345678 WHERE run_id = 5;
            """)
        return db
    }

    @Test("redraw by key prefix, by id, run-ID; key folders are the key's first 16 hex digits; a failed run gets a line")
    func redrawSelected() throws {
        let scratch = Scratch()
        let db = try Self.keyedDatabase(scratch)
        let out = scratch.file("plots")
        let lines = try PlotFromStore.redraw(databasePath: db, outDirectory: out, runs: ["C0FFEE011", "4", "run-12345678", "12345678" + "3", "4"])
        #expect(lines == ["run 1: frames and psnr plots in \(out)/c0ffee0111111111", "run 4: frames and psnr plots in \(out)/run-4",
                          "run 12345678: failed, not drawn (a.y4m: frame 3 is short)",
                          "run 3: frames and psnr plots in \(out)/1234567833333333", "experiment e: rd plot in \(out)/e"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["1234567833333333", "c0ffee0111111111", "e", "run-4"])
    }

    @Test("redraw refuses selectors that name no run or several, before anything is made", arguments: [
        (["c0ffee01"], LabError(.usage, "--run 'c0ffee01': ambiguous, the keys of runs 1, 2 start with it; give more digits")),
        (["12345678"], LabError(.usage, "--run '12345678': ambiguous, it is run 12345678's id and the start of run 3's key; give run-12345678 or more key digits")),
        (["c0ffee0"], LabError(.usage, "--run 'c0ffee0': expected a run id (12 or run-12) or a run key or its first 8 or more hex digits")),
        (["run-x"], LabError(.usage, "--run 'run-x': expected a run id (12 or run-12) or a run key or its first 8 or more hex digits")),
        ([String(repeating: "a", count: 65)], LabError(.usage, "--run '\(String(repeating: "a", count: 65))': a run key has 64 hex digits, this has 65")),
        (["99"], LabError(.noInput, "DB: no run with id '99'")),
        (["deadbeef"], LabError(.noInput, "DB: no run whose key starts with 'deadbeef'")),
    ])
    func redrawSelectorErrors(selectors: [String], error: LabError) throws {
        let scratch = Scratch()
        let db = try Self.keyedDatabase(scratch)
        let expected = LabError(error.kind, error.message.replacingOccurrences(of: "DB", with: db))
        #expect(throws: expected) { try PlotFromStore.redraw(databasePath: db, outDirectory: scratch.file("plots"), runs: selectors) }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("plots")))
    }

    @Test("redraw: a missing database is 66 and is not created; a stored key that is no folder name is 65")
    func redrawErrors() throws {
        let scratch = Scratch()
        #expect(throws: LabError(.noInput, "\(scratch.file("none.sqlite")): no such database")) {
            try PlotFromStore.redraw(databasePath: scratch.file("none.sqlite"), outDirectory: nil, runs: [])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        #expect(throws: LabError(.noInput, "\(scratch.path): is a folder, not a database")) {
            try PlotFromStore.redraw(databasePath: scratch.path, outDirectory: nil, runs: [])
        }
        let db = try Self.keyedDatabase(scratch)
        _ = try StoreOpenTests.sqlite(db, "PRAGMA ignore_check_constraints = ON; UPDATE runs SET run_key = '../../x' WHERE run_id = 4")
        #expect(throws: LabError(.data, "\(db): run 4: run_key '../../x' is not 64 lowercase hex digits")) {
            try PlotFromStore.redraw(databasePath: db, outDirectory: scratch.file("plots"), runs: ["4"])
        }
        #expect(!FileManager.default.fileExists(atPath: "\(scratch.path)/x"))
    }
}
