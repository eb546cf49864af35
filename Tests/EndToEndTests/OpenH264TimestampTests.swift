import EnclabTestSupport
import EncoderLab
import Foundation
import Testing

/// Every timestamp source and fault stage reaches OpenH264's `uiTimeStamp` (issue 22, item 4): per stage, the
/// timestamps libopenh264 reports back for each picture (`SFrameBSInfo.uiTimeStamp`: the one its rate control used;
/// written by the test hook `ENCLAB_TEST_OPENH264_TIMESTAMPS`, ``OpenH264Session``) against the stage's output PTS
/// in milliseconds worked out here (docs/timestamps.md: source → offset → rebase → precision → clamp; any flag hands
/// microseconds; OpenH264 gets them in ms, truncated toward zero as C's division) through OpenH264's own rule
/// (``openH264RC(_:)``), and the stage's output against what the run stored as handed in (`frames.input_pts`,
/// `skipped_frames.pts`, µs).
@Suite("timestamps reach OpenH264's uiTimeStamp: each source and fault stage", .serialized)
struct OpenH264TimestampTests {
    typealias Scratch = OpenH264Tests.Scratch
    static let frames = 12

    /// Encodes the 25-fps clip of `frames` pictures with `flags` and the hook on: the uiTimeStamp of each input picture
    /// as libopenh264 reported it, and the stored PTS handed in, by input index (µs when a timestamp flag is given).
    static func stamps(_ flags: [String], tcfile: String? = nil) throws -> (reported: [Int64], stored: [Int64], timebase: String) {
        let s = Scratch()
        try TestSupport.makeClip(in: s.path, named: "c.y4m", SyntheticClip(width: 64, height: 48, frames: frames, fpsNum: 25, fpsDen: 1, seed: 1))
        if let tcfile { try tcfile.write(toFile: s.file("tc.txt"), atomically: true, encoding: .utf8) }
        let log = s.file("uiTimeStamp.txt")
        let r = try TestSupport.enclab(["encode", "c.y4m", "--encoder", "openh264", "--bitrate", "100", "--no-plots", "--db", "lab.sqlite", "--out", "out"] + flags,
                                       in: s.path, environment: ["ENCLAB_TEST_OPENH264_TIMESTAMPS": log])
        guard r.status == 0 else { throw LabError(.software, "enclab encode \(flags) exited \(r.status): \(r.stderr)") }
        var reported = [Int64](repeating: Int64.min, count: frames)
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let f = line.split(separator: " ").compactMap { Int64($0) }
            if f.count == 2, f[0] >= 0, f[0] < Int64(frames) { reported[Int(f[0])] = f[1] }
        }
        let rows = try TestSupport.sqlite(s.file("lab.sqlite"), """
            SELECT display_index, input_pts FROM frames UNION ALL SELECT input_index, pts FROM skipped_frames ORDER BY 1
            """)
        let stored = rows.compactMap { $0.split(separator: "|").last.flatMap { Int64($0) } }
        let timebase = try TestSupport.sqlite(s.file("lab.sqlite"), "SELECT timebase_num || '/' || timebase_den FROM runs").first ?? ""
        return (reported, stored, timebase)
    }

    /// Milliseconds of a µs count, truncated toward zero (C's `/`, Swift's `/` alike).
    static func ms(_ us: Int64) -> Int64 { us / 1000 }

    /// The timestamps OpenH264's rate control uses for the ms it is given (libopenh264's GetTimestampForRc,
    /// ratectl.cpp, read from its source: a time not after the last one used, or a 0 after the first picture, becomes
    /// the last one + (int)(1000 / fFrameRate), 40 ms at 25 fps; the last one starts at -1).
    static func openH264RC(_ given: [Int64], frameRate: Double = 25) -> [Int64] {
        var last: Int64 = -1
        return given.map { t in
            let used = last >= t || (t == 0 && last != -1) ? last + Int64(Int32(1000.0 / frameRate)) : t
            last = used
            return used
        }
    }

    @Test("the clip's constant rate (no flag): 25 fps in ticks of 1/25 s, picture i at 40 i ms")
    func constantRate() throws {
        let t = try Self.stamps([])
        #expect(t.timebase == "1/25")
        #expect(t.stored == (0..<Int64(Self.frames)).map { $0 })
        #expect(t.reported == (0..<Int64(Self.frames)).map { $0 * 40 })
    }

    @Test("a timecode file (--tcfile-in) with times of 4 decimals: each rounded to the µs, then truncated to the ms")
    func timecodeFile() throws {
        // Time i: i × 33.3667 ms written exactly ("%d.%04d"); in µs i × 333667 / 10, half away from zero.
        let tenthsOfUs = (0..<Int64(Self.frames)).map { $0 * 333_667 }
        let text = "# timecode format v2\n" + tenthsOfUs.map { String(format: "%lld.%04lld", $0 / 10_000, $0 % 10_000) }.joined(separator: "\n") + "\n"
        let t = try Self.stamps(["--tcfile-in", "tc.txt"], tcfile: text)
        let us = tenthsOfUs.map { ($0 + 5) / 10 }
        #expect(t.stored == us)
        #expect(t.reported == us.map(Self.ms))
        #expect(t.reported[3] == 100 && t.reported[11] == 367)  // 100.1001 ms, 367.0337 ms
    }

    @Test("a generated schedule (--pts-schedule rate=20): picture i at 50 i ms")
    func schedule() throws {
        let t = try Self.stamps(["--pts-schedule", "rate=20"])
        #expect(t.stored == (0..<Int64(Self.frames)).map { $0 * 50_000 })
        #expect(t.reported == (0..<Int64(Self.frames)).map { $0 * 50 })
    }

    @Test("--pts-offset 10^12 µs (a host clock): 10^9 + 40 i ms; with --pts-rebase, 40 i ms again")
    func offsetAndRebase() throws {
        let offset = try Self.stamps(["--pts-offset", "1000000000000"])
        #expect(offset.stored == (0..<Int64(Self.frames)).map { 1_000_000_000_000 + $0 * 40_000 })
        #expect(offset.reported == (0..<Int64(Self.frames)).map { 1_000_000_000 + $0 * 40 })
        let rebased = try Self.stamps(["--pts-offset", "1000000000000", "--pts-rebase"])
        #expect(rebased.reported == (0..<Int64(Self.frames)).map { $0 * 40 })
    }

    @Test("--pts-precision float32 at 10^12 µs: each µs count through a 32-bit float (steps of 65,536 µs), then ms")
    func float32() throws {
        let t = try Self.stamps(["--pts-offset", "1000000000000", "--pts-precision", "float32"])
        // 10^12 + 40,000 i as the nearest float (24-bit significand: at 2^39..2^40 the step is 2^(39-23) = 65,536 µs).
        let us = (0..<Int64(Self.frames)).map { i -> Int64 in
            let exact = 1_000_000_000_000 + i * 40_000
            let step: Int64 = 65_536
            let low = exact / step * step, high = low + step
            // Round to nearest, ties to the even multiple.
            if exact - low != high - exact { return exact - low < high - exact ? low : high }
            return (low / step) % 2 == 0 ? low : high
        }
        #expect(t.stored == us)
        // A step wider than a frame: some pictures are handed the same ms, and OpenH264 moves each repeat to the
        // last + 40 ms.
        #expect(Set(us.map(Self.ms)).count < Self.frames)
        #expect(t.reported == Self.openH264RC(us.map(Self.ms)))
        #expect(t.reported != us.map(Self.ms))
    }

    @Test("--pts-precision int32: the low 32 bits, signed (past 2^31 - 1 µs the times turn negative); with --pts-clamp, each one after the largest so far + 40,000 µs")
    func int32AndClamp() throws {
        let base: Int64 = 2_147_400_000
        let wrapped = (0..<Int64(Self.frames)).map { i -> Int64 in
            let us = base + i * 40_000
            return us > Int64(Int32.max) ? us - (1 << 32) : us
        }
        #expect(wrapped[2] == 2_147_480_000 && wrapped[3] == -2_147_447_296)
        let t = try Self.stamps(["--pts-offset", String(base), "--pts-precision", "int32"])
        #expect(t.stored == wrapped)
        // -2,147,447,296 µs is -2,147,447 ms (toward zero); OpenH264 takes no time before the last one: from picture 3
        // on it uses the last + 40 ms, which here is the unwrapped time.
        #expect(wrapped.map(Self.ms)[3] == -2_147_447)
        #expect(t.reported == Self.openH264RC(wrapped.map(Self.ms)))
        #expect(t.reported == (0..<Int64(Self.frames)).map { 2_147_400 + $0 * 40 })
        // The clamp: a PTS not after the largest so far becomes that largest + one frame (40,000 µs at 25 fps), which
        // here gives back the unwrapped times.
        let clamped = try Self.stamps(["--pts-offset", String(base), "--pts-precision", "int32", "--pts-clamp"])
        let us = (0..<Int64(Self.frames)).map { base + $0 * 40_000 }
        #expect(clamped.stored == us)
        #expect(clamped.reported == us.map(Self.ms))
        #expect(Self.openH264RC(us.map(Self.ms)) == us.map(Self.ms))
    }
}
