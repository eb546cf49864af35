import Foundation
import Testing
@testable import EncoderLab

/// The lab's bytes must not depend on what the process's heap held before x264 allocated its buffers.
///
/// libx264's AVX-512 `mbtree_propagate_list` (common/x86/mc-a2.asm) scatters 8 macroblocks a step, also those past
/// the row's end; on the last row it reads lowres_mvs, lowres_costs and its propagate buffer past their ends, into
/// alignment padding x264 never writes. A fresh heap has zeros there (harmless: such lanes are masked out), but a
/// heap that held an earlier encoder's data does not, so encodes after other encodes in one process gave other
/// bytes. glibc's `MALLOC_PERTURB_=1` fills every new allocation with 0xfe, which makes that padding hold motion
/// vectors of -258 (pointing 9 macroblocks left, inside the picture): the same garbage every time, so the test is
/// deterministic. It can fail only on a CPU with AVX-512 (x264 uses it only there); 176x144 is 11 macroblocks wide,
/// not a multiple of 8, so the last row has lanes past its end. At 256x144 (16 macroblocks, no lane past a row's end)
/// x264's AVX-512 bytes equal its AVX2 bytes under any heap: the lab's must be the CLI's there too.
@Suite struct RepeatabilityTests {
    @Test("an encode over a heap full of garbage (MALLOC_PERTURB_=1) writes the x264 CLI's bytes of a fresh process",
          arguments: [("carphone_pristine.mp4", ""), ("bigbuckbunny.mp4", "scale=256:144")])
    func garbageHeap(clip: String, filter: String) throws {
        let scratch = Scratch()
        let source = scratch.file("clip.y4m")
        let cut = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "error", "-i",
                                             Witness.file(repositoryRoot + "/fixtures/" + clip)]
                                  + (filter.isEmpty ? [] : ["-vf", filter])
                                  + ["-frames:v", "60", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", Witness.file(source)])
        try #require(cut.status == 0, "\(cut.stderr)")
        let flags = ["--preset", "veryfast", "--threads", "1", "--bitrate", "400"]
        // The independent reference: x264's CLI in a process of its own, its heap untouched.
        let reference = scratch.file("cli.264")
        let cli = try Witness.x264(["--quiet"] + flags + ["-o", reference, source])
        try #require(cli.status == 0, "\(cli.stderr)")
        // The lab as a user runs it, the variable in this child's environment only.
        let lab = try Witness.enclab(["encode", source, "--rc", "abr", "--db", scratch.file("lab.sqlite"), "--out", scratch.file("out")] + flags,
                                     in: scratch.path, environment: ["MALLOC_PERTURB_": "1"])
        try #require(lab.status == 0, "\(lab.stderr)")
        let store = try Runner(databasePath: scratch.file("lab.sqlite"), outDirectory: scratch.file("out"))
        let row = try #require(try store.store.runs().last)
        let ours = try Data(contentsOf: URL(fileURLWithPath: try store.outcome(of: row, alreadyDone: false).streamPath))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: reference))
        // Compared as one Bool: Swift Testing would otherwise diff the two streams element by element.
        let firstDifference = zip(ours, theirs).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        let same = ours == theirs
        #expect(same, "lab \(ours.count) bytes, CLI \(theirs.count); first differing byte at \(firstDifference.map(String.init) ?? "the end of the shorter stream")")
    }

    @Test("a --tcfile-in ABR encode of carphone: the lab's bytes are the x264 CLI's with AVX-512 off")
    func tcfileABR() throws {
        let scratch = Scratch()
        let source = scratch.file("carphone.y4m")
        let cut = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "error", "-i",
                                             Witness.file(repositoryRoot + "/fixtures/carphone_pristine.mp4"),
                                             "-frames:v", "60", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", Witness.file(source)])
        try #require(cut.status == 0, "\(cut.stderr)")
        // Irregular steps of 20, 40 and 66.733 ms, in milliseconds with three decimals.
        var t: Int64 = 0, lines = ["# timecode format v2"]
        for k in 0..<60 { lines.append(String(format: "%lld.%03lld", t / 1000, t % 1000)); t += [20000, 40000, 66733][k % 3] }
        try (lines.joined(separator: "\n") + "\n").write(toFile: scratch.file("tc.txt"), atomically: true, encoding: .utf8)
        let flags = ["--preset", "medium", "--threads", "1", "--bitrate", "300"]
        let cli = try Witness.x264(["--quiet"] + flags + ["--tcfile-in", scratch.file("tc.txt"), "--timebase", "1/1000000", "-o", scratch.file("cli.264"), source])
        try #require(cli.status == 0, "\(cli.stderr)")
        let lab = try Witness.enclab(["encode", source, "--rc", "abr", "--tcfile-in", scratch.file("tc.txt"), "--db", scratch.file("l.sqlite"),
                                      "--out", scratch.file("out")] + flags, in: scratch.path)
        try #require(lab.status == 0, "\(lab.stderr)")
        let store = try Runner(databasePath: scratch.file("l.sqlite"), outDirectory: scratch.file("out"))
        let row = try #require(try store.store.runs().last)
        let ours = try Data(contentsOf: URL(fileURLWithPath: try store.outcome(of: row, alreadyDone: false).streamPath))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: scratch.file("cli.264")))
        let same = ours == theirs
        #expect(same, "lab \(ours.count) bytes, CLI \(theirs.count)")
    }
}
