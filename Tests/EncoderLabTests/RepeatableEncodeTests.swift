import Foundation
import Testing
@testable import EncoderLab

/// Which encodes x264 0.164 can repeat (issue 17, item 2), shown with the CLI itself, and the lab's rule
/// (``Repeatability``) that records it per run from the run key's own fields.
@Suite("repeatable encodes: the x264 CLI's own repeats and the lab's rule", .serialized)
struct RepeatableEncodeTests {
    static let vbv = ["--preset", "medium", "--bitrate", "150", "--vbv-maxrate", "150", "--vbv-bufsize", "150", "--nal-hrd", "cbr"]

    /// The first `frames` pictures of the carphone fixture as y4m.
    static func carphone(_ scratch: Scratch, frames: Int) throws -> String {
        let source = scratch.file("carphone.y4m")
        let cut = try Witness.run("ffmpeg", ["-hide_banner", "-nostats", "-loglevel", "error", "-i",
                                             Witness.file(repositoryRoot + "/fixtures/carphone_pristine.mp4"),
                                             "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", Witness.file(source)])
        try #require(cut.status == 0, "\(cut.stderr)")
        return source
    }

    @Test("the x264 CLI with one thread under VBV writes the same bytes in every process; the lab's rule flags two threads (frame or sliced) under VBV")
    func cliRepeats() throws {
        let scratch = Scratch()
        let source = try Self.carphone(scratch, frames: 48)
        // Five CLI processes each: one thread must give one stream. Two threads may give several (the issue measured 3
        // streams in 4 runs of the whole clip; here, 2 in 4 runs of the 382 frames, none of 4 runs of 60 frames): their
        // count is recorded, not required, and the lab flags them instead.
        var one: Set<Data> = [], two: Set<Data> = []
        for i in 0..<5 {
            for (threads, into) in [("1", 1), ("2", 2)] {
                let out = scratch.file("t\(threads)-\(i).264")
                let r = try Witness.x264(["--quiet", "--threads", threads] + Self.vbv + ["-o", out, source])
                try #require(r.status == 0, "\(r.stderr)")
                let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
                if into == 1 { one.insert(bytes) } else { two.insert(bytes) }
            }
        }
        #expect(one.count == 1, "threads 1: \(one.count) distinct streams in 5 CLI runs (threads 2: \(two.count))")
        // The options string x264 wrote in each stream's SEI: the lab's rule reads the same fields from a run key.
        func options(_ path: String) throws -> String {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let text = String(decoding: bytes.prefix(4096).map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x0a }, as: UTF8.self)
            return text.split(separator: "\n").first { $0.contains("options: ") }.map { String($0.split(separator: ":", maxSplits: 1)[1]) } ?? ""
        }
        let sliced = scratch.file("sliced.264")
        _ = try Witness.x264(["--quiet", "--threads", "2", "--sliced-threads"] + Self.vbv + ["--frames", "2", "-o", sliced, source])
        let noVBV = scratch.file("novbv.264")
        _ = try Witness.x264(["--quiet", "--threads", "2", "--preset", "medium", "--bitrate", "150", "--frames", "2", "-o", noVBV, source])
        #expect(Repeatability.reason(x264Options: try options(scratch.file("t1-0.264")), options: []) == nil)
        #expect(Repeatability.reason(x264Options: try options(scratch.file("t2-0.264")), options: []) == "x264 with 2 threads under VBV")
        #expect(Repeatability.reason(x264Options: try options(sliced), options: []) == "x264 with 2 sliced threads under VBV")
        #expect(Repeatability.reason(x264Options: try options(noVBV), options: []) == nil)
        #expect(Repeatability.reason(x264Options: try options(scratch.file("t1-0.264")), options: [X264Option("non-deterministic", nil)])
                == "x264 --non-deterministic")
        #expect(Repeatability.reason(x264Options: try options(scratch.file("t1-0.264")),
                                     options: [X264Option("non-deterministic", nil), X264Option("non_deterministic", "0")]) == nil)
    }
}
