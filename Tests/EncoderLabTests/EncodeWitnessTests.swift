import Foundation
import Testing
@testable import EncoderLab

/// An encode of a synthetic clip, checked number by number against tools that read the written stream.
@Suite("Encode checked against ffprobe, trace_headers, ffmpeg and the x264 CLI", .serialized)
struct EncodeWitnessTests {
    /// 128x96 at 25 fps (40 ms a frame: no rounding between ticks and ffprobe's milliseconds), 40 frames with a
    /// hard cut at 20 and a static stretch from 30.
    static let clip = SyntheticClip(width: 128, height: 96, frames: 40, fpsNum: 25, fpsDen: 1, seed: 7)
    static let bframeFlags = ["--threads", "1", "--bframes", "3", "--b-pyramid", "normal", "--keyint", "16"]

    func encode(_ flags: [String], scratch: Scratch, clip: SyntheticClip = clip) throws -> (String, RunOutcome, [LabStore.FrameRow], LabStore) {
        let source = scratch.file("clip.y4m")
        try clip.write(to: source)
        let (outcome, store) = try labEncode(source, flags, in: scratch)
        return (source, outcome, try store.frames(run: outcome.runID), store)
    }

    @Test("frame sizes equal ffprobe's packet sizes in decode order and sum to the file size")
    func packetSizes() throws {
        let scratch = Scratch()
        let (_, outcome, frames, _) = try encode(Self.bframeFlags, scratch: scratch)
        let witness = try Witness.packetSizes(outcome.streamPath)
        #expect(witness.count == Self.clip.frames)
        #expect(frames.map(\.sizeBytes) == witness)
        let fileSize = try FileManager.default.attributesOfItem(atPath: outcome.streamPath)[.size] as? Int
        #expect(frames.reduce(0) { $0 + $1.sizeBytes } == fileSize)
    }

    @Test("header and filler bytes per frame: ffprobe's packet boundaries, NAL units found by a start-code scan written here")
    func headerAndFillerBytes() throws {
        let scratch = Scratch()
        // CBR far above what the clip needs: x264 pads with filler NAL units (type 12); --aud adds AUDs (type 9).
        let (_, outcome, _, store) = try encode(["--threads", "1", "--bframes", "2", "--rc", "cbr", "--bitrate", "3000", "--aud"], scratch: scratch)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: outcome.streamPath)))
        let sizes = try Witness.packetSizes(outcome.streamPath)
        let rows = try store.database.query("SELECT header_bytes, filler_bytes FROM frames ORDER BY coded_index")
        try #require(rows.count == sizes.count)
        var packetStart = 0
        var fillerSeen = 0
        for (k, size) in sizes.enumerated() {
            let packet = Array(bytes[packetStart..<(packetStart + size)])
            packetStart += size
            // Each NAL unit runs from its start code (a 4-byte code's leading zero included) to the next one's.
            var starts: [Int] = []
            var i = 0
            while i + 2 < packet.count {
                if packet[i] == 0 && packet[i + 1] == 0 && packet[i + 2] == 1 {
                    starts.append(i > 0 && packet[i - 1] == 0 ? i - 1 : i)
                    i += 3
                } else { i += 1 }
            }
            var header = 0, filler = 0
            for (n, start) in starts.enumerated() {
                let end = n + 1 < starts.count ? starts[n + 1] : packet.count
                let codeLength = packet[start + 2] == 1 ? 3 : 4
                let type = Int(packet[start + codeLength] & 0x1F)
                if [6, 7, 8, 9].contains(type) { header += end - start }
                if type == 12 { filler += end - start }
            }
            #expect(rows[k][0].int == Int64(header), "coded frame \(k) header bytes")
            #expect(rows[k][1].int == Int64(filler), "coded frame \(k) filler bytes")
            fillerSeen += filler
        }
        #expect(fillerSeen > 0)
    }

    @Test("picture types equal ffprobe's in display order, with B-frames present")
    func pictureTypes() throws {
        let scratch = Scratch()
        let (_, outcome, frames, _) = try encode(Self.bframeFlags, scratch: scratch)
        let witness = try Witness.pictureTypes(outcome.streamPath)
        let ours = frames.sorted { $0.pts < $1.pts }.map { f -> String in
            switch f.type { case "IDR", "I": return "I"; case "P": return "P"; default: return "B" }
        }
        #expect(ours.contains("B"))
        #expect(ours == witness)
    }

    @Test("IDR against I and reference against non-reference B agree with trace_headers (nal_unit_type, nal_ref_idc)")
    func nalTypes() throws {
        let scratch = Scratch()
        // --open-gop and a short keyint give non-IDR I pictures too; b-pyramid gives reference B-frames.
        let (_, outcome, frames, _) = try encode(Self.bframeFlags + ["--open-gop"], scratch: scratch)
        let (packets, _) = try Witness.traceHeaders(outcome.streamPath)
        #expect(packets.count == frames.count)
        var seen = Set<String>()
        for (frame, packet) in zip(frames, packets) {
            let slices = packet.filter { $0.type == 1 || $0.type == 5 }
            try #require(!slices.isEmpty)
            let idr = slices.allSatisfy { $0.type == 5 }
            let reference = slices.allSatisfy { $0.refIdc > 0 }
            // slice_type % 5: 0 P, 1 B, 2 I (H.264 Table 7-6).
            let sliceType = (slices[0].values["slice_type"] ?? -1) % 5
            let expected: String
            switch (idr, sliceType, reference) {
            case (true, 2, _): expected = "IDR"
            case (false, 2, _): expected = "I"
            case (false, 0, _): expected = "P"
            case (false, 1, true): expected = "Bref"
            case (false, 1, false): expected = "B"
            default: expected = "?"
            }
            #expect(frame.type == expected, "coded frame \(frame.codedIndex)")
            seen.insert(expected)
        }
        #expect(seen.isSuperset(of: ["IDR", "I", "P", "Bref", "B"]))
    }

    @Test("PTS-DTS and DTS steps agree with the x264 CLI's FLV of the same input, read by ffprobe in ms")
    func timestamps() throws {
        let scratch = Scratch()
        let (source, _, frames, store) = try encode(Self.bframeFlags, scratch: scratch)
        let flv = scratch.file("cli.flv")
        let cli = try Witness.x264(["--quiet"] + Self.bframeFlags + ["-o", flv, source])
        try #require(cli.status == 0, "\(cli.stderr)")
        let out = try Witness.run("ffprobe", ["-v", "error", "-show_packets", "-show_entries", "packet=pts,dts", "-of", "json", flv])
        let packets = Witness.json(out.stdout)["packets"] as? [[String: Any]] ?? []
        let pts = packets.compactMap { $0["pts"] as? Int }, dts = packets.compactMap { $0["dts"] as? Int }
        try #require(pts.count == frames.count && dts.count == frames.count)
        let run = try store.database.query("SELECT timebase_num, timebase_den FROM runs")[0]
        let msPerTick = Double(run[0].int!) * 1000 / Double(run[1].int!)
        #expect(msPerTick == 40)
        #expect(frames.first!.dts < 0, "x264's first DTS is negative with B-frames")
        for k in frames.indices {
            #expect(Double(frames[k].pts - frames[k].dts) * msPerTick == Double(pts[k] - dts[k]), "frame \(k)")
            if k > 0 {
                #expect(Double(frames[k].dts - frames[k - 1].dts) * msPerTick == Double(dts[k] - dts[k - 1]))
            }
        }
    }

    @Test("the stream is byte-identical to the x264 CLI's for the same y4m and flags", arguments: [
        ["--threads", "1"],
        ["--threads", "1", "--preset", "veryfast", "--tune", "zerolatency", "--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "cbr"],
        ["--threads", "1", "--bframes", "2", "--no-cabac", "--keyint", "12", "--min-keyint", "4", "--crf", "30", "--profile", "main"],
        ["--threads", "1", "--qp", "0"],
        ["--threads", "1", "--bframes", "3", "--b-pyramid", "strict", "--open-gop", "--scenecut", "60"],
        // The CLI lowers ref to fit the level when --ref is not given: 128x96 is 48 macroblocks, level 1.0's
        // DPB holds 396, so ref 16 becomes 8 (48 * 8 = 384 <= 396).
        ["--threads", "1", "--level", "1.0", "--preset", "veryslow"],
    ])
    func byteIdentity(flags: [String]) throws {
        let scratch = Scratch()
        let clip = SyntheticClip(width: 128, height: 96, frames: 30, fpsNum: 30000, fpsDen: 1001, seed: 3, extraTags: ["A128:117"])
        let (source, outcome, _, _) = try encode(flags, scratch: scratch, clip: clip)
        let reference = scratch.file("cli.264")
        let cli = try Witness.x264(["--quiet"] + flags + ["-o", reference, source])
        try #require(cli.status == 0, "\(cli.stderr)")
        let ours = try Data(contentsOf: URL(fileURLWithPath: outcome.streamPath))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: reference))
        #expect(ours.count == theirs.count)
        let firstDifference = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(ours == theirs, "first differing byte at \(firstDifference.map(String.init) ?? "the end of the shorter stream")")
    }

    @Test("frames.qp is the QP of the x264 CLI's per-frame debug line (-v) of the same y4m and flags, frame by frame in coding order")
    func qpFromCLILog() throws {
        let scratch = Scratch()
        // CRF with adaptive quantisation: QPs with two decimals, I, P and B frames.
        let flags = Self.bframeFlags + ["--crf", "24"]
        let (source, _, frames, _) = try encode(flags, scratch: scratch)
        let cli = try Witness.x264(["-v"] + flags + ["-o", scratch.file("cli.264"), source])
        try #require(cli.status == 0, "\(cli.stderr)")
        // "x264 [debug]: frame=   0 QP=27.93 NAL=3 Slice:I ...": the token after "QP=", read here by splitting on blanks.
        let logged = cli.stderr.split(separator: "\n").filter { $0.contains("frame=") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("QP=") }.flatMap { Double($0.dropFirst(3)) }
        }
        #expect(logged.count == Self.clip.frames)
        #expect(Set(logged).count > 3, "QPs that differ between frames: \(logged)")
        #expect(frames.sorted { $0.codedIndex < $1.codedIndex }.map(\.qp) == logged)
    }

    @Test("x264's log lines: a per-frame debug line kept without its blanks, other debug lines dropped, warnings kept; the QP read from the line")
    func logLines() {
        let log = X264Log()
        // x264.h: X264_LOG_WARNING 1, X264_LOG_INFO 2, X264_LOG_DEBUG 3.
        func feed(_ level: Int32, _ line: String) { line.withCString { log.receive(level: level, cString: $0) } }
        feed(3, "frame=   0 QP=27.93 NAL=3 Slice:I Poc:0   I:48   P:0    SKIP:0    size=1514 bytes\n")
        feed(3, " \t frame=  12 QP=-1.50 NAL=0 Slice:b \r\n")
        feed(3, "slice type decision\n")
        feed(3, "frame=  13 QP=30.00\u{00A0}\n")
        feed(2, "frame=  14 QP=31.00\n")
        feed(1, "VBV maxrate unspecified, assuming CBR\n")
        feed(1, "--psnr used with psy on: results will be invalid!\n")
        #expect(log.takeFrameLines() == ["frame=   0 QP=27.93 NAL=3 Slice:I Poc:0   I:48   P:0    SKIP:0    size=1514 bytes",
                                         "frame=  12 QP=-1.50 NAL=0 Slice:b", "frame=  13 QP=30.00"])
        #expect(log.takeProblems() == ["VBV maxrate unspecified, assuming CBR"])
        #expect(X264Session.qp(fromFrameLine: "frame=   0 QP=27.93 NAL=3 Slice:I") == 27.93)
        #expect(X264Session.qp(fromFrameLine: "frame=  12 QP=-1.50 NAL=0") == -1.5)
        #expect(X264Session.qp(fromFrameLine: "frame=  13 QP=30.00\u{00A0}") == 30)
        #expect(X264Session.qp(fromFrameLine: "frame=  13 NAL=0") == nil)
    }

    @Test("interlaced y4m (It, Ib) turns on interlaced coding as the x264 CLI does: byte-identical streams", arguments: ["t", "b"])
    func interlaced(field: String) throws {
        let scratch = Scratch()
        var clip = SyntheticClip(width: 128, height: 96, frames: 10, seed: 5)
        clip.interlacing = Character(field)
        let (source, outcome, _, _) = try encode(["--threads", "1"], scratch: scratch, clip: clip)
        let reference = scratch.file("cli.264")
        let cli = try Witness.x264(["--quiet", "--threads", "1", "-o", reference, source])
        try #require(cli.status == 0, "\(cli.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outcome.streamPath)) == (try Data(contentsOf: URL(fileURLWithPath: reference))))
        // The SPS says so: frame_mbs_only_flag 0 (trace_headers on the same bytes).
        let trace = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-i", outcome.streamPath, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        #expect(trace.stderr.contains("frame_mbs_only_flag                                         0 = 0"))
    }

    @Test("CQP: each frame's QP is the slice QP that trace_headers reads (26 + pic_init_qp_minus26 + slice_qp_delta) and x264's ipratio/pbratio arithmetic")
    func cqpQP() throws {
        let scratch = Scratch()
        // --aq-mode 0: no per-macroblock QP offsets, so the frame's average QP is its slice QP.
        let flags = ["--threads", "1", "--bframes", "2", "--b-pyramid", "none", "--qp", "30", "--ipratio", "1.4", "--pbratio", "1.3", "--aq-mode", "0"]
        let (_, outcome, frames, _) = try encode(flags, scratch: scratch)
        let (packets, picInit) = try Witness.traceHeaders(outcome.streamPath)
        let initQP = 26 + (try #require(picInit))
        for (frame, packet) in zip(frames, packets) {
            let slice = try #require(packet.first { $0.type == 1 || $0.type == 5 })
            let sliceQP = initQP + (slice.values["slice_qp_delta"] ?? 0)
            #expect(frame.qp == Double(sliceQP), "coded frame \(frame.codedIndex) \(frame.type)")
            // x264 (ratecontrol.c): I = qp - 6*log2(ipratio) = 30 - 2.91 -> 27; P = 30; B = 30 + 6*log2(1.3) = 32.27 -> 32.
            let expected: Double = ["IDR", "I"].contains(frame.type) ? 27 : frame.type == "P" ? 30 : 32
            #expect(frame.qp == expected, "coded frame \(frame.codedIndex) \(frame.type)")
        }
    }

    @Test("PSNR agrees with ffmpeg's psnr filter on the decoded stream, x264's too at this size; SSIM loosely with the ssim filter")
    func quality() throws {
        let scratch = Scratch()
        let (source, outcome, frames, store) = try encode(Self.bframeFlags + ["--crf", "28"], scratch: scratch)
        let byDisplay = frames.sorted { $0.displayIndex < $1.displayIndex }
        let ssim = try Witness.filterStats("ssim", stream: outcome.streamPath, source: source)
        let psnr = try Witness.filterStats("psnr", stream: outcome.streamPath, source: source)
        try #require(ssim.count == frames.count && psnr.count == frames.count)
        let rows = try store.database.query("""
            SELECT psnr_u, psnr_v, x264_psnr_y, x264_psnr_u, x264_psnr_v, x264_psnr_avg, x264_psnr_differs FROM frames ORDER BY display_index
            """)
        for (k, f) in byDisplay.enumerated() {
            // FFmpeg's ssim filter uses other windows than x264 (LabQualityTests checks x264's definition to 1e-6).
            #expect(abs(try #require(f.ssim) - (ssim[k]["Y"] ?? -1)) < 0.01, "display frame \(k)")
            // ffmpeg prints PSNR with two decimals.
            #expect(abs(try #require(f.psnrY) - (psnr[k]["psnr_y"] ?? -1)) < 0.006, "display frame \(k)")
            #expect(abs(try #require(rows[k][0].double) - (psnr[k]["psnr_u"] ?? -1)) < 0.006)
            #expect(abs(try #require(rows[k][1].double) - (psnr[k]["psnr_v"] ?? -1)) < 0.006)
            #expect(abs(try #require(f.psnrAvg) - (psnr[k]["psnr_avg"] ?? -1)) < 0.006, "display frame \(k)")
            // 128x96 without VBV: x264 measured the same decoded pictures (b_full_recon), its chroma width 64 a
            // multiple of 8, so its report agrees (the squared errors it stands for are the lab's).
            for (i, key) in ["psnr_y", "psnr_u", "psnr_v", "psnr_avg"].enumerated() {
                #expect(abs(try #require(rows[k][2 + i].double) - (psnr[k][key] ?? -1)) < 0.006, "display frame \(k) x264 \(key)")
            }
            #expect(rows[k][6] == .integer(0), "display frame \(k)")
        }
    }

    @Test("at --qp 0 the decode is lossless: sse_* 0 and PSNR NULL; x264 computes no PSNR or SSIM, stored as NULL, and agrees")
    func losslessHasNoPSNR() throws {
        let scratch = Scratch()
        let (source, outcome, _, store) = try encode(["--threads", "1", "--qp", "0"], scratch: scratch)
        let nulls = try store.database.query("""
            SELECT count(*) FROM frames WHERE psnr_y IS NULL AND psnr_u IS NULL AND psnr_v IS NULL AND psnr_avg IS NULL AND ssim IS NULL
                AND sse_y = 0 AND sse_u = 0 AND sse_v = 0 AND x264_psnr_y IS NULL AND x264_psnr_u IS NULL AND x264_psnr_v IS NULL
                AND x264_psnr_avg IS NULL AND x264_psnr_differs = 0
            """)[0][0].int
        #expect(nulls == Int64(Self.clip.frames))
        let psnr = try Witness.filterStats("psnr", stream: outcome.streamPath, source: source)
        #expect(psnr.allSatisfy { $0["mse_avg"] == 0 })
    }
}
