import Foundation
import Testing
import H264
@testable import EncoderLab

/// The VBV replay against x264's own HRD SEI (issue 11, item 2) on real nal-hrd runs of the carphone clip, with the
/// SEI values read by the lab checked first against `ffmpeg -bsf:v trace_headers`; and x264's arithmetic by hand.
@Suite("HRD SEI against trace_headers and the VBV replay", .serialized)
struct HRDCheckTests {
    /// The first 60 frames of carphone (176x144, 30000/1001 fps) as y4m.
    func carphone(_ scratch: Scratch) throws -> String {
        let source = scratch.file("carphone.y4m")
        let cut = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "error", "-i",
                                             Witness.file(repositoryRoot + "/fixtures/carphone_pristine.mp4"),
                                             "-frames:v", "60", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", Witness.file(source)])
        try #require(cut.status == 0, "\(cut.stderr)")
        return source
    }

    /// trace_headers' values of the four HRD timing elements, one dictionary per packet (decode order).
    func tracedTiming(_ stream: String) throws -> [[String: Int]] {
        let out = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-i", Witness.file(stream), "-c", "copy",
                                             "-bsf:v", "trace_headers", "-f", "null", "-"])
        var packets: [[String: Int]] = []
        let names = ["initial_cpb_removal_delay[0]", "initial_cpb_removal_delay_offset[0]", "cpb_removal_delay", "dpb_output_delay"]
        for raw in out.stderr.split(separator: "\n") {
            guard let bracket = raw.range(of: "] ") else { continue }
            let line = raw[bracket.upperBound...]
            if line.hasPrefix("Packet:") { packets.append([:]); continue }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard !packets.isEmpty, fields.count >= 4, fields[fields.count - 2] == "=", let value = Int(fields[fields.count - 1]),
                  names.contains(String(fields[1])) else { continue }
            packets[packets.count - 1][String(fields[1])] = value
        }
        return packets
    }

    /// Encodes through the lab and returns the stream, its frames as stored, and the run's timebase.
    func run(_ flags: [String], _ scratch: Scratch) throws -> (String, [HRDCheck.Frame], Rational) {
        let (outcome, store) = try labEncode(try carphone(scratch), ["--threads", "1"] + flags, in: scratch)
        let rows = try store.frames(run: outcome.runID)
        let tb = try store.database.query("SELECT timebase_num, timebase_den FROM runs")[0]
        return (outcome.streamPath, rows.map { HRDCheck.Frame(sizeBytes: $0.sizeBytes, dts: $0.dts, pts: $0.pts) },
                try Rational(tb[0].int!, tb[1].int!))
    }

    func checkAgainstTraceHeaders(_ stream: String) throws -> ParsedStream {
        let parsed = try Bitstream.open(StreamInput(path: stream))
        let traced = try tracedTiming(stream)
        try #require(traced.count == parsed.accessUnits.count)
        var bufferingPeriods = 0
        for (k, t) in parsed.hrdTimings.enumerated() {
            let bp = t.bufferingPeriod?.nalHrd?.first
            #expect(bp?.initialCpbRemovalDelay == traced[k]["initial_cpb_removal_delay[0]"], "access unit \(k)")
            #expect(bp?.initialCpbRemovalDelayOffset == traced[k]["initial_cpb_removal_delay_offset[0]"], "access unit \(k)")
            #expect(t.picTiming?.cpbRemovalDelay == traced[k]["cpb_removal_delay"], "access unit \(k)")
            #expect(t.picTiming?.dpbOutputDelay == traced[k]["dpb_output_delay"], "access unit \(k)")
            #expect(t.picTiming != nil)
            if bp != nil { bufferingPeriods += 1 }
        }
        // keyint 24 over 60 frames: keyframes at 0, 24 and 48 at most (scenecuts may add some).
        #expect(bufferingPeriods >= 3)
        return parsed
    }

    static let cbrFlags = ["--keyint", "24", "--bitrate", "300", "--vbv-maxrate", "300", "--vbv-bufsize", "300", "--nal-hrd", "cbr"]
    static let vbrFlags = ["--keyint", "24", "--bitrate", "300", "--vbv-maxrate", "400", "--vbv-bufsize", "500", "--nal-hrd", "vbr"]

    @Test("nal-hrd cbr: SEI as trace_headers reads it, and the replay derives every value within one 90 kHz tick")
    func cbr() throws {
        let scratch = Scratch()
        let (stream, frames, timebase) = try run(Self.cbrFlags, scratch)
        let parsed = try checkAgainstTraceHeaders(stream)
        let p = VBVReplay.Parameters(maxrateKbps: 300, bufsizeKbit: 300, mode: .cbr, frameRate: try Rational(30_000, 1001))
        let report = try HRDCheck.compare(parsed, frames: frames, timebase: timebase, parameters: p)
        // 300 kbit/s in x264's value/scale notation: 300,000 >> 6 = 4687, 4687 << 6 = 299,968; 300 kbit = 9375 << 5.
        #expect(report.bitRate == 299_968 && report.cpbSize == 300_000 && report.cbr)
        #expect(report.bufferingPeriods.count >= 3)
        // 4 values per buffering period access unit, 2 per other.
        #expect(report.comparisons.count == 2 * frames.count + 2 * report.bufferingPeriods.count)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.map(\.description))")
        // enclab inspect shows them, as text and as JSON with the specification's names.
        let text = try Witness.enclab(["inspect", stream], in: scratch.path)
        try #require(text.status == 0, "\(text.stderr)")
        let line = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("  0: ") })
        #expect(line.contains("buffering period (seq_parameter_set_id 0 nal initial_cpb_removal_delay[0] 81008 initial_cpb_removal_delay_offset[0] 9001)"))
        #expect(line.contains("pic timing (cpb_removal_delay 0 dpb_output_delay \(parsed.hrdTimings[0].picTiming?.dpbOutputDelay ?? -1))"))
        let json = try Witness.enclab(["inspect", stream, "--json"], in: scratch.path)
        let units = try #require(Witness.json(json.stdout)["access_units"] as? [[String: Any]])
        let bp = try #require(units[0]["buffering_period"] as? [String: Any])
        let nal = try #require((bp["nal_hrd"] as? [[String: Any]])?.first)
        #expect(nal["initial_cpb_removal_delay"] as? Int == 81_008 && nal["initial_cpb_removal_delay_offset"] as? Int == 9001)
        #expect(bp["seq_parameter_set_id"] as? Int == 0)
        #expect((units[1]["pic_timing"] as? [String: Any])?["cpb_removal_delay"] as? Int == 2)
        // The first buffering period SEI NAL unit (06, payloadType 0, payloadSize 5, 5 bytes, 80) cut to 2 bytes of
        // payload: lenient, a warning naming the element and byte and the
        // message unread; strict, an error.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stream)))
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: [0, 0, 1, 6, 0, 5]) })
        try #require(bytes[at + 11] == 0x80 && bytes[(at + 12)...].starts(with: [0, 0]))
        bytes.replaceSubrange((at + 3)..<(at + 12), with: [6, 0, 2, bytes[at + 6], bytes[at + 7], 0x80])
        let cut = scratch.file("cut.264")
        try Data(bytes).write(to: URL(fileURLWithPath: cut))
        let lenient = try Bitstream.open(StreamInput(path: cut))
        #expect(lenient.hrdTimings[0].bufferingPeriod == nil && lenient.hrdTimings[0].picTiming?.cpbRemovalDelay == 0)
        let warning = try #require(lenient.warnings.first { $0.element == "buffering_period" })
        #expect(warning.message.contains("buffering_period: nal initial_cpb_removal_delay[0] truncated at byte 2: needs 3 bytes, 2 available; accepted: SEI is not needed to decode"))
        // --strict names the NAL unit (its index: start codes before it, by a plain scan) and its byte in the file.
        let index = (0..<at).filter { bytes[$0...].starts(with: [0, 0, 1]) }.count
        var strictInput = StreamInput(path: cut)
        strictInput.strict = true
        #expect(throws: LabError(.data, "\(cut): NAL unit \(index) at byte \(at + 3) (SEI): buffering_period: nal initial_cpb_removal_delay[0] truncated at byte 2: needs 3 bytes, 2 available")) {
            try Bitstream.open(strictInput)
        }
        // The same through the stream path.
        let byPath = try HRDCheck.compare(streamPath: stream, frames: frames, timebase: timebase, parameters: p)
        #expect(byPath.comparisons == report.comparisons)
        // The first one by hand: 0.9 × 300,000 = 270,000 bits before the first removal; × 90,000 / 299,968 =
        // 81,008.64 -> x264 writes 81,008; the offset is 90,000 × 300,000 / 299,968 = 90,009.6 minus that.
        let first = report.comparisons.filter { $0.codedIndex == 0 }
        #expect(first[0].element == "initial_cpb_removal_delay" && first[0].sei == 81_008)
        #expect(first[0].derived == (try Rational(270_000 * 90_000, 299_968)))
        #expect(first[1].sei == 9001)
        // A wrong vbv-init moves every initial delay off: the check can fail.
        let wrong = try HRDCheck.compare(parsed, frames: frames, timebase: timebase,
                                         parameters: .init(maxrateKbps: 300, bufsizeKbit: 300, vbvInit: try Rational(1, 2)))
        #expect(wrong.disagreements.contains { $0.codedIndex == 0 && $0.element == "initial_cpb_removal_delay" })
        // So do timestamps one frame late from frame 30 on (cpb_removal_delay) and a PTS moved by one tick (dpb).
        var shifted = frames
        for k in 30..<shifted.count { shifted[k].dts += 1 }
        shifted[5].pts += 1
        let moved = try HRDCheck.compare(parsed, frames: shifted, timebase: timebase, parameters: p)
        #expect(moved.disagreements.contains { $0.codedIndex == 30 && $0.element == "cpb_removal_delay" })
        #expect(moved.disagreements.contains { $0.codedIndex == 5 && $0.element == "dpb_output_delay" })
    }

    @Test("nal-hrd vbr: the replay derives every SEI value within one 90 kHz tick")
    func vbr() throws {
        let scratch = Scratch()
        let (stream, frames, timebase) = try run(Self.vbrFlags, scratch)
        let parsed = try checkAgainstTraceHeaders(stream)
        let report = try HRDCheck.compare(parsed, frames: frames, timebase: timebase,
                                          parameters: .init(maxrateKbps: 400, bufsizeKbit: 500, frameRate: try Rational(30_000, 1001)))
        // 400,000 = 3125 << 7 and 500,000 = 15625 << 5 exactly.
        #expect(report.bitRate == 400_000 && report.cpbSize == 500_000 && !report.cbr)
        #expect(report.disagreements.isEmpty, "\(report.disagreements.map(\.description))")
        #expect(report.summary.hasSuffix("values agree within one 90 kHz tick"))
        // The first buffering period sits on the criterion's edge: exactly, 0.9 × 500,000 = 450,000 bits is
        // 450,000 × 90,000 / 400,000 = 101,250 ticks, but x264 holds vbv-init as the float 0.89999998, so its
        // fullness is a hair under 450,000 and the delay it rounds down is 101,249 (the offset 112,500 − 101,249).
        let first = report.comparisons.filter { $0.codedIndex == 0 }
        #expect(first[0].sei == 101_249 && first[0].derived == Rational(101_250) && first[0].difference90kHz == .one)
        #expect(first[1].sei == 11_251 && first[1].derived == Rational(11_250))
        // Initial delay plus offset is 90,000 × 500,000 / 400,000 = 112,500 at every buffering period.
        for k in report.bufferingPeriods {
            let bp = try #require(parsed.hrdTimings[parsed.accessUnits.indices.filter { parsed.accessUnits[$0].hasPrimaryPicture }[k]].bufferingPeriod?.nalHrd?.first)
            #expect(bp.initialCpbRemovalDelay + bp.initialCpbRemovalDelayOffset == 112_500)
        }
    }

    @Test("a stream without NAL HRD and a frame count that does not match are refused with the file named")
    func refusals() throws {
        let scratch = Scratch()
        let (stream, frames, timebase) = try run(["--keyint", "24", "--bitrate", "300"], scratch)
        let p = VBVReplay.Parameters(maxrateKbps: 300, bufsizeKbit: 300)
        #expect(throws: LabError(.data, "\(stream): the SPS has no NAL HRD parameters (nal_hrd_parameters_present_flag 0; x264 writes them with --nal-hrd vbr|cbr)")) {
            try HRDCheck.compare(streamPath: stream, frames: frames, timebase: timebase, parameters: p)
        }
        let other = Scratch()
        let (hrdStream, hrdFrames, _) = try run(Self.cbrFlags, other)
        #expect(throws: LabError(.data, "\(hrdStream): 60 access units with a picture but 59 frames given")) {
            try HRDCheck.compare(streamPath: hrdStream, frames: Array(hrdFrames.dropLast()), timebase: timebase, parameters: p)
        }
    }

    @Test("the replay with a stream's HRD rate and size, by hand, with an underflow")
    func resolvedReplayByHand() throws {
        // HRD rate 299,968 bit/s, CPB 300,000 bits, initial fraction 1/2 -> 150,000 bits. 25 fps on a 90 kHz clock:
        // one frame's arrival is 299,968 × 3600 / 90,000 = 11,998.72 bits.
        //   frame 0: before 150,000, 100,000 bits -> after 50,000
        //   frame 1: before 61,998.72, 70,000 bits -> underflow of 8,001.28, after 0
        //   frame 2: before 11,998.72, 0 bits -> after 11,998.72
        let resolved = try VBVReplay.Resolved(rateBitsPerSecond: 299_968, bufferSizeBits: 300_000, initialFraction: try Rational(1, 2))
        let result = try VBVReplay.replay(bits: [100_000, 70_000, 0], dts: [0, 3600, 7200], timebase: try Rational(1, 90_000),
                                          resolved: resolved, mode: .cbr)
        #expect(result.frames.map(\.fullnessBeforeBits) == [Rational(150_000), try Rational(6_199_872, 100), try Rational(1_199_872, 100)])
        #expect(result.events == [.underflow(codedIndex: 1, deficitBits: try Rational(800_128, 100))])
        #expect(throws: LabError(.usage, "VBV initial fraction 3/2: must be in [0, 1]")) {
            try VBVReplay.Resolved(rateBitsPerSecond: 1, bufferSizeBits: 1, initialFraction: try Rational(3, 2))
        }
    }
}
