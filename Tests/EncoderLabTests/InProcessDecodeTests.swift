import Foundation
import H264
import Testing
@testable import EncoderLab

/// The verify stage decodes in-process (libavcodec) as the stream is written; the `ffmpeg` CLI
/// (``IndependentDecode``) is the witness: every stored squared error must be the CLI's decode against the source.
@Suite("in-process decode against the ffmpeg CLI", .serialized)
struct InProcessDecodeTests {
    /// Width 106: chroma width 53, not a multiple of 8 (x264's PSNR is off there, the decode is not).
    static let clip = SyntheticClip(width: 106, height: 62, frames: 26, seed: 4)

    /// Every decoded_frames row by source, display order, and the frames' sse_* in display order.
    func stored(_ store: LabStore) throws -> (stream: [PlaneErrors], packets: [PlaneErrors], frames: [PlaneErrors]) {
        func errors(_ rows: [[SQLValue]]) -> [PlaneErrors] {
            rows.map { PlaneErrors(sseY: $0[0].int!, sseU: $0[1].int!, sseV: $0[2].int!) }
        }
        let q = "SELECT sse_y, sse_u, sse_v FROM decoded_frames WHERE source = ? ORDER BY display_index"
        return (errors(try store.database.query(q, [.text("stream")])), errors(try store.database.query(q, [.text("packets")])),
                errors(try store.database.query("SELECT sse_y, sse_u, sse_v FROM frames ORDER BY display_index")))
    }

    @Test("B-frames at an odd-ish size: the stored errors equal the ffmpeg CLI's decode of stream.264 and of from-packets.264",
          arguments: [["--crf", "28", "--bframes", "3", "--b-pyramid", "normal"], ["--qp", "0", "--bframes", "2"],
                      ["--bitrate", "300", "--bframes", "2", "--threads", "2", "--no-cabac"],
                      // x264 on threads of its own: the verify work runs on its own thread (VerifyStage).
                      ["--crf", "26", "--bframes", "3", "--b-pyramid", "normal", "--threads", "3"]])
    func matchesCLI(flags: [String]) throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let (outcome, store) = try labEncode(scratch.file("c.y4m"), ["--threads", "1"] + flags, in: scratch)
        let witness = try IndependentDecode.measure(streams: [outcome.streamPath, Paths.parent(outcome.streamPath) + "/from-packets.264"],
                                                    source: scratch.file("c.y4m"), width: 106, height: 62, seek: 0, frames: nil)
        #expect(witness[0].count == Self.clip.frames)
        let rows = try stored(store)
        #expect(rows.stream == witness[0])
        #expect(rows.packets == witness[1])
        #expect(rows.frames == witness[0])
        // B-frames were there: some frame's display index differs from its decode position (x264 makes none at
        // --qp 0, lossless, where every error is 0).
        let reordered = try store.database.query("SELECT count(*) FROM frames WHERE coded_index <> display_index")
        if flags.contains("0") {
            #expect(rows.stream.allSatisfy { $0 == PlaneErrors(sseY: 0, sseU: 0, sseV: 0) })
        } else {
            #expect(reordered[0][0].int! > 0)
        }
    }

    @Test("--seek and --frames on a clip ffmpeg decodes: the stored errors equal the CLI's decode against the same frames")
    func seekAndFrames() throws {
        let scratch = Scratch()
        let clip = "\(repositoryRoot)/fixtures/carphone_pristine.mp4"
        try #require(FileManager.default.fileExists(atPath: clip), "run scripts/fixtures.sh")
        let (outcome, store) = try labEncode(clip, ["--threads", "1", "--preset", "veryfast", "--crf", "30", "--bframes", "3",
                                                    "--seek", "7", "--frames", "23"], in: scratch)
        let witness = try IndependentDecode.measure(stream: outcome.streamPath, source: clip, width: 176, height: 144, seek: 7, frames: 23)
        #expect(witness.count == 23)
        let rows = try stored(store)
        #expect(rows.stream == witness)
        #expect(rows.packets == witness)
        #expect(rows.frames == witness)
    }

    @Test("packets.bin and from-packets.264, written one access unit at a time, are the whole-stream functions' bytes")
    func packetFiles() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let (outcome, store) = try labEncode(scratch.file("c.y4m"), ["--threads", "1", "--crf", "30", "--bframes", "2", "--keyint", "10"], in: scratch)
        let folder = Paths.parent(outcome.streamPath)
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: outcome.streamPath)))
        let units = try AccessUnit.split(try AnnexB.split(stream).map(\.nal))
        let rows = try store.database.query("SELECT f.pts, f.dts, r.timebase_num, r.timebase_den FROM frames f JOIN runs r USING (run_id) ORDER BY coded_index")
        let times = try rows.map { r in
            (ptsMicroseconds: try Packet.microseconds(ticks: r[0].int!, timebaseNumerator: r[2].int!, timebaseDenominator: r[3].int!),
             dtsMicroseconds: try Packet.microseconds(ticks: r[1].int!, timebaseNumerator: r[2].int!, timebaseDenominator: r[3].int!))
        }
        let packets = try Packet.fromAccessUnits(units, timestamps: times)
        #expect(packets.count == Self.clip.frames)
        let bytes = try packets.flatMap { try $0.serialize() }
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/packets.bin"))) == bytes)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/from-packets.264"))) == Packet.annexB(packets))
    }

    @Test("--verify none: no decode, x264's PSNR stored as the run's, marked unverified, under a run key of its own")
    func verifyNone() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let flags = ["--threads", "1", "--crf", "28", "--bframes", "2"]
        _ = try labEncode(scratch.file("c.y4m"), flags, in: scratch)
        let (_, store) = try labEncode(scratch.file("c.y4m"), flags + ["--verify", "none"], in: scratch)
        let runs = try store.database.query("""
            SELECT run_id, run_key, json_extract(settings, '$.resolved.verify') FROM runs WHERE status = 'done' ORDER BY run_id
            """)
        try #require(runs.count == 2)
        #expect(runs[0][2] == .null)
        #expect(runs[1][2] == .text("none"))
        #expect(runs[0][1] != runs[1][1])
        let unverified = runs[1][0]
        #expect(try store.database.query("SELECT count(*) FROM decoded_frames WHERE run_id = ?", [unverified])[0][0] == .integer(0))
        let frames = try store.database.query("""
            SELECT psnr_y, psnr_u, psnr_v, psnr_avg, x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg FROM frames
            WHERE run_id = ? ORDER BY display_index
            """, [unverified])
        #expect(frames.count == Self.clip.frames)
        for f in frames {
            #expect(f[0].double != nil)
            #expect(Array(f[0..<4]) == Array(f[4..<8]))
        }
        // The run metrics say where their PSNR comes from: the lab's decode, or x264's report (unverified).
        let sources = try store.database.query("SELECT psnr_source FROM run_metrics ORDER BY run_id")
        #expect(sources == [[.text("lab")], [.text("x264")]])
        // The stream bytes do not depend on the verify mode.
        let paths = try store.database.query("SELECT stream_path FROM runs WHERE status = 'done' ORDER BY run_id").compactMap { row -> String? in
            if case .text(let path) = row[0] { return path } else { return nil }
        }
        try #require(paths.count == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: paths[0])) == Data(contentsOf: URL(fileURLWithPath: paths[1])))
    }

    @Test("run: a grid over verify gives one verified and one unverified run; --verify none overrides the experiment's")
    func runVerify() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let json = #"{"name": "v", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30, "frames": 6}, "grid": {"verify": ["full", "none"]}}"#
        try json.write(toFile: scratch.file("v.json"), atomically: true, encoding: .utf8)
        let grid = try Witness.enclab(["run", "v.json", "--db", "g.sqlite", "--out", "g"], in: scratch.path)
        try #require(grid.status == 0, "\(grid.stderr)")
        let marks = try Witness.run("sqlite3", [scratch.file("g.sqlite"), """
            SELECT coalesce(json_extract(settings, '$.resolved.verify'), 'full'), (SELECT count(*) FROM decoded_frames d WHERE d.run_id = r.run_id)
            FROM runs r ORDER BY 1
            """])
        #expect(marks.stdout == "full|12\nnone|0\n")
        let base = #"{"name": "w", "clips": ["c.y4m"], "base": {"threads": 1, "crf": 30, "frames": 6, "verify": "full"}, "grid": {"bframes": [0, 2]}}"#
        try base.write(toFile: scratch.file("w.json"), atomically: true, encoding: .utf8)
        let all = try Witness.enclab(["run", "w.json", "--verify", "none", "--db", "n.sqlite", "--out", "n"], in: scratch.path)
        try #require(all.status == 0, "\(all.stderr)")
        let none = try Witness.run("sqlite3", [scratch.file("n.sqlite"), "SELECT count(*), json_extract(settings, '$.resolved.verify') FROM runs GROUP BY 2"])
        #expect(none.stdout == "2|none\n")
        let bad = try Witness.enclab(["encode", "c.y4m", "--verify", "half"], in: scratch.path)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("setting 'verify' must be full or none, got 'half'"))
    }

    @Test("the decoder holds a source picture only until its decode: the window is the reorder delay, not the clip")
    func window() throws {
        let scratch = Scratch()
        let clip = SyntheticClip(width: 106, height: 62, frames: 60, seed: 8)
        try clip.write(to: scratch.file("c.y4m"))
        let (outcome, store) = try labEncode(scratch.file("c.y4m"), ["--threads", "1", "--crf", "30", "--bframes", "3", "--keyint", "25"], in: scratch)
        let display = try store.database.query("SELECT display_index FROM frames ORDER BY coded_index").map { Int($0[0].int!) }
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: outcome.streamPath)))
        let units = try AccessUnit.split(try AnnexB.split(stream).map(\.nal))
        try #require(units.count == clip.frames && display.count == clip.frames)
        let decoder = try H264StreamDecoder(width: 106, height: 62, name: "c.264")
        var handed = 0
        for (unit, shown) in zip(units, display) {
            // As the pipeline does: every picture up to the one this access unit codes has been handed to x264.
            while handed <= shown {
                decoder.source(Picture(width: 106, height: 62, bytes: clip.picture(handed)))
                handed += 1
            }
            try decoder.decode(AnnexB.write(unit.nalUnits))
        }
        let errors = try decoder.finish()
        let witness = try IndependentDecode.measure(stream: outcome.streamPath, source: scratch.file("c.y4m"), width: 106, height: 62,
                                                    seek: 0, frames: nil)
        #expect(errors == witness)
        // 3 B-frames ahead of their P, plus the decoder's reorder delay: a handful of pictures out of 60.
        #expect(decoder.largestWindow >= 2 && decoder.largestWindow <= 8, "\(decoder.largestWindow)")
    }

    @Test("the verify setting: full or none, part of the run key only when none")
    func verifySetting() throws {
        var s = EncodeSettings()
        #expect(s.verify == .full)
        try s.set("verify", "none")
        #expect(s.verify == .none)
        try s.set("verify", "FULL")
        #expect(s.verify == .full)
        #expect(throws: LabError.self) { try s.set("verify", "some") }
    }
}
