import Foundation
import Testing
@testable import EncoderLab

/// `recordRun`: a run written in one transaction, read back with the sqlite3 CLI.
@Suite("SQLite store: a run written once")
struct RecordRunTests {
    static let start = LabStore.RunStart(experiment: "exp", clip: "clips/c.y4m", settingsJSON: #"{"preset":"fast"}"#,
                                         crop: "0,0,0,2", ffmpegVersion: nil, width: 16, height: 16, fpsNum: 25, fpsDen: 1)
    static let failedRecord = LabStore.RunRecord(start: start, createdAt: Date(timeIntervalSince1970: 1_800_000_000),
                                                 warnings: [], outcome: .failed(error: "clips/c.y4m: frame 3 is short"))

    /// A NAL unit of `count` bytes (start code included) of type `type`.
    static func nal(_ type: Int, _ count: Int) -> WrittenNAL {
        WrittenNAL(type: type, refIdc: 3, bytes: [0, 0, 0, 1, UInt8(0x60 | type)] + Array(repeating: 0xAA, count: count - 5))
    }

    /// Two frames: an IDR with SPS (10 bytes), PPS (6) and its slice (100): 116 bytes, 16 of headers; a P slice
    /// (40) with filler (12): 52 bytes, 12 of filler. The run: 168 bytes.
    static let frames = [
        EncodedFrame(codedIndex: 0, displayIndex: 0, type: .idr, keyframe: true, pts: 0, dts: -1, qp: 20.5, psnrY: 40.25,
                     psnrU: 41, psnrV: 42, psnrAvg: 40.75, ssim: 0.99, nals: [nal(7, 10), nal(8, 6), nal(5, 100)]),
        EncodedFrame(codedIndex: 1, displayIndex: 1, type: .p, keyframe: false, pts: 1, dts: 0, qp: 30, psnrY: nil,
                     psnrU: nil, psnrV: nil, psnrAvg: nil, ssim: nil, nals: [nal(1, 40), nal(12, 12)]),
    ]

    static func doneRecord(streamPath: @escaping @Sendable (Int64) -> String = { "OUT/run-\($0)/stream.264" }) -> LabStore.RunRecord {
        let verification = StreamVerification(
            accessUnits: [], checks: [BitstreamCheck(name: "access_unit_count", expected: "2", actual: "2", passed: true)],
            parameterSets: [StoredParameterSet(kind: "sps", id: 0, profileIdc: 100, levelIdc: 10, width: 16, height: 16,
                                               entropyCodingModeFlag: nil, maxNumReorderFrames: 0, fieldsJSON: "{}")])
        // 16x16: 256 luma samples, 64 per chroma plane. sse 256 over 256 samples is an MSE of 1:
        // 10 log10(255^2 / 1) = 48.130803608679; sse_u 64 over 64 the same; sse_v 0 is stored as NULL.
        let decoded = [LabStore.DecodedFrameRecord(source: "stream", displayIndex: 0,
                                                   errors: PlaneErrors(sseY: 256, sseU: 64, sseV: 0), matchesX264: true)]
        let perFrame = RunMeasurements.perFrame(frames: frames, decoded: decoded, width: 16, height: 16, unverified: false)
        var record = LabStore.RunRecord(
            start: start, createdAt: Date(timeIntervalSince1970: 1_800_000_000), warnings: ["x264: a warning"],
            outcome: .done(.init(frames: frames, quality: perFrame.quality, decoded: perFrame.decoded, timebaseNum: 1,
                                 timebaseDen: 25, durationSeconds: 0.08, inputFrames: 2, truncatedBytes: 7,
                                 settingsJSON: #"{"preset":"fast","resolved":{}}"#, verification: verification)))
        record.streamPath = streamPath
        return record
    }

    /// A well-formed key or digest: the hex digit `digit` 64 times.
    static func key(_ digit: Character) -> String { String(repeating: digit, count: 64) }

    @Test("a done run: its row, frames, checks, parameter sets and decoded frames land together, with the final stream path")
    func doneRun() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        var seen: Int64?
        var rowsSeenInside = ""
        var record = Self.doneRecord()
        record.runKey = Self.key("1")
        record.clipSHA256 = Self.key("c")
        let id = try store.recordRun(record, beforeCommit: { id in
            seen = id
            // Not yet committed: another process sees no run.
            rowsSeenInside = (try? StoreOpenTests.sqlite(path, "SELECT count(*) FROM runs").joined()) ?? "error"
        })
        #expect(id == 1 && seen == 1)
        #expect(rowsSeenInside == "0")
        let lines = try StoreOpenTests.sqlite(path, """
            SELECT run_id, experiment, clip, settings, status, frames, bytes, duration_s, timebase_num, timebase_den,
                   stream_path, crop, ffmpeg_version IS NULL, created_at, finished_at LIKE '____-__-__T__:__:__Z',
                   width, height, fps_num, fps_den, input_frames, truncated_bytes, warnings, error IS NULL,
                   x264_version = '\(x264Version)', lab_version = '\(labVersion)', run_key, clip_sha256
            FROM runs;
            SELECT coded_index, display_index, type, keyframe, size_bytes, header_bytes, filler_bytes, pts, dts, qp,
                   x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg, ssim IS NULL FROM frames ORDER BY coded_index;
            SELECT coded_index, sse_y, sse_u, sse_v, printf('%.9f', psnr_y), printf('%.9f', psnr_u), psnr_v IS NULL,
                   printf('%.9f', psnr_avg), x264_psnr_differs FROM frames WHERE sse_y IS NOT NULL;
            SELECT coded_index, sse_y IS NULL AND sse_u IS NULL AND sse_v IS NULL AND psnr_y IS NULL AND psnr_u IS NULL
                   AND psnr_v IS NULL AND psnr_avg IS NULL AND x264_psnr_differs IS NULL FROM frames WHERE sse_y IS NULL;
            SELECT kind, occurrence, id, nal_unit_index IS NULL, new_content, profile_idc, entropy_coding_mode_flag IS NULL FROM parameter_sets;
            SELECT name, expected, actual, passed FROM bitstream_checks;
            SELECT source, display_index, sse_y, printf('%.9f', psnr_y), printf('%.9f', psnr_u), psnr_v IS NULL, matches_x264 FROM decoded_frames;
            """)
        // 2026-01-15T08:00:00Z is 1 800 000 000 s after the epoch.
        #expect(lines == [
            #"1|exp|clips/c.y4m|{"preset":"fast","resolved":{}}|done|2|168|0.08|1|25|OUT/run-1/stream.264|0,0,0,2|1|2027-01-15T08:00:00Z|1|16|16|25|1|2|7|["x264: a warning"]|1|1|1|"# + Self.key("1") + "|" + Self.key("c"),
            // x264's PSNRs as it reported them; the lab's from the decode of display frame 0 (there is none of
            // frame 1): sse 256 + 64 + 0 = 320 over 256 + 2 * 64 = 384 samples is 10 log10(255^2 * 384 / 320) =
            // 10 log10(78030) = 48.922616069 dB; x264's 40.25 dB stands for another error, so the frame differs.
            "0|0|IDR|1|116|16|0|0|-1|20.5|40.25|41.0|42.0|40.75|0",
            "1|1|P|0|52|0|12|1|0|30.0|||||1",
            "0|256|64|0|48.130803609|48.130803609|1|48.922616069|1",
            "1|1",
            "sps|0|0|1|1|100|1",
            "access_unit_count|2|2|1",
            "stream|0|256|48.130803609|48.130803609|1|1",
        ])
        // And read back by name through the store.
        let runs = try store.runs()
        #expect(runs.count == 1 && runs[0].streamPath == "OUT/run-1/stream.264" && runs[0].error == nil)
        #expect(runs[0].truncatedBytes == 7 && runs[0].ffmpegVersion == nil && runs[0].createdAt == "2027-01-15T08:00:00Z")
        #expect(runs[0].runKey == Self.key("1") && runs[0].clipSHA256 == Self.key("c") && runs[0].x264Version == x264Version)
        let frames = try store.frames(run: 1)
        #expect(frames.map(\.sizeBytes) == [116, 52] && frames[1].psnrY == nil && frames[0].dts == -1)
        #expect(frames[0].psnrY == 10 * log10(255.0 * 255 * 256 / 256) && frames[0].psnrAvg == 10 * log10(255.0 * 255 * 384 / 320))
    }

    @Test("a failed run keeps its row only, with the error, the settings as given and its warnings")
    func failedRun() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        var record = Self.failedRecord
        record.warnings = ["w1", "w2"]
        #expect(try store.recordRun(record, beforeCommit: { _ in }) == 1)
        #expect(try StoreOpenTests.sqlite(path, """
            SELECT status, error, settings, frames IS NULL, bytes IS NULL, stream_path IS NULL, warnings FROM runs;
            SELECT (SELECT count(*) FROM frames) + (SELECT count(*) FROM parameter_sets) +
                   (SELECT count(*) FROM bitstream_checks) + (SELECT count(*) FROM decoded_frames);
            """) == [#"failed|clips/c.y4m: frame 3 is short|{"preset":"fast"}|1|1|1|["w1","w2"]"#, "0"])
        #expect(try store.runs().map(\.status) == ["failed"])
    }

    struct RenameFailed: Error, Equatable {}

    @Test("when beforeCommit throws, nothing of the run is kept and the run id is free again")
    func rollsBack() throws {
        let scratch = Scratch()
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        var offered: Int64?
        #expect(throws: RenameFailed()) {
            try store.recordRun(Self.doneRecord(), beforeCommit: { id in offered = id; throw RenameFailed() })
        }
        #expect(offered == 1)
        #expect(try StoreOpenTests.sqlite(path, """
            SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM frames) + (SELECT count(*) FROM parameter_sets) +
                   (SELECT count(*) FROM bitstream_checks) + (SELECT count(*) FROM decoded_frames) +
                   (SELECT count(*) FROM sqlite_sequence)
            """) == ["0"])
        // The next run takes the same id, and the store is still usable.
        #expect(try store.recordRun(Self.doneRecord(), beforeCommit: { _ in }) == 1)
        #expect(try StoreOpenTests.sqlite(path, "SELECT run_id, stream_path FROM runs") == ["1|OUT/run-1/stream.264"])
    }
}
