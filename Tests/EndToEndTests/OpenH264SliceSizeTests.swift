import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// OpenH264's size-limited slices (`uiSliceMode sizelimited`, SM_SIZELIMITED_SLICE, with `uiSliceSizeConstraint`):
/// what WebRTC's h264_encoder_impl.cc sets for packetization mode 0 (single NAL unit per RTP packet), so the lab can
/// run WebRTC's second slice configuration (issue 22, item 6). Witnesses: the C program of our own against libopenh264
/// (Witness/openh264_witness.c), FFmpeg's trace_headers, the NAL unit sizes counted from the start codes here.
@Suite("OpenH264 size-limited slices (WebRTC's packetization mode 0)", .serialized)
struct OpenH264SliceSizeTests {
    @Test("uiSliceMode sizelimited with uiSliceSizeConstraint 500: byte-identical to the C witness, several slices per picture, each slice NAL unit within 500 bytes")
    func sizeLimitedSlices() throws {
        let s = OpenH264Tests.Scratch()
        try s.clip(frames: 12, seed: 3)
        let (run, stream) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "600", "--bEnableFrameSkip", "false",
                                                                             "--uiSliceMode", "sizelimited", "--uiSliceSizeConstraint", "500"])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(stream)
        let witness = try OpenH264Tests.compileWitness(in: s.path)
        // bitrate 600 kbit/s = iTargetBitrate 600000 with iRCMode 1 (RC_BITRATE_MODE); sizelimited = SM_SIZELIMITED_SLICE, 3.
        // (OpenH264 2.3.1 refuses a constraint of 400 bytes or less: "should be larger than MAX_MACROBLOCK_SIZE_IN_BYTE(400)".)
        let lines = try OpenH264Tests.witness(witness, clip: s.file("c.y4m"), out: s.file("w.264"),
                                              ["iRCMode=1", "iTargetBitrate=600000", "bEnableFrameSkip=0", "uiSliceMode=3", "uiSliceSizeConstraint=500"])
        #expect(lines.count == 12 && !lines.contains { $0.type == 4 })
        let bytes = try OpenH264Tests.bytes(path)
        #expect(bytes == (try OpenH264Tests.bytes(s.file("w.264"))))

        // The NAL units, cut at 4-byte start codes (OpenH264 writes only those): slices (types 1 and 5) are more than
        // the 12 pictures, and none is over 500 bytes with its start code.
        let b = [UInt8](bytes)
        var starts: [Int] = []
        var k = 0
        while k + 4 <= b.count {
            if b[k] == 0, b[k + 1] == 0, b[k + 2] == 0, b[k + 3] == 1 { starts.append(k); k += 4 } else { k += 1 }
        }
        let nals = starts.enumerated().map { i, start in (type: Int(b[start + 4] & 0x1F), size: (i + 1 < starts.count ? starts[i + 1] : b.count) - start) }
        let slices = nals.filter { $0.type == 1 || $0.type == 5 }
        #expect(slices.count > 12, "\(slices.count) slices")
        #expect(slices.allSatisfy { $0.size <= 500 }, "largest slice \(slices.map(\.size).max() ?? 0) bytes")
        // FFmpeg reads as many slice headers (first_mb_in_slice) as there are slice NAL units, some not at macroblock 0.
        let trace = try TestSupport.tool("ffmpeg", ["-hide_banner", "-v", "verbose", "-i", "file:" + path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        let firstMB = trace.stderr.split(separator: "\n").filter { $0.contains(" first_mb_in_slice ") }
        #expect(firstMB.count == slices.count)
        #expect(firstMB.contains { !$0.hasSuffix("= 0") })
        // The settled fields (read back from OpenH264, which keeps a few bytes in reserve: 480 here) name the constraint; a run in another slice mode does not list it (its options string, and
        // so its run key, is what it was before the field existed).
        let db = s.file("lab.sqlite")
        let options = try TestSupport.sqlite(db, "SELECT json_extract(settings, '$.openh264_params') FROM runs ORDER BY run_id")
        #expect(options.first?.contains("uiSliceMode=3") == true && options.first?.contains("uiSliceSizeConstraint=") == true, "\(options)")
        let (single, _) = try OpenH264Tests.encode(s.path, clip: "c.y4m", ["--encoder", "openh264", "--bitrate", "600", "--slices", "2"])
        #expect(single.status == 0, "\(single.stderr)")
        let second = try TestSupport.sqlite(db, "SELECT json_extract(settings, '$.openh264_params') FROM runs ORDER BY run_id DESC LIMIT 1")
        #expect(second.first?.contains("uiSliceMode=1") == true && second.first?.contains("uiSliceSizeConstraint") == false, "\(second)")
    }
}
