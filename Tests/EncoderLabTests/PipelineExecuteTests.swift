import Foundation
import Testing
@testable import EncoderLab
import EnclabTestSupport

/// `Pipeline.execute` called in this process, no binary and no store: what it returns is checked against the stream
/// it wrote, read by ffprobe, and against the settings' own arithmetic.
@Suite("Pipeline.execute in process")
struct PipelineExecuteTests {
    @Test("the frames Pipeline.execute returns are the stream it wrote: count, sizes and picture types as ffprobe reads them, IDRs where keyint puts them")
    func executeInProcess() throws {
        let dir = TestSupport.scratchFolder("enclab-execute")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 12 frames, an IDR every 6 (keyint 6, no scene cuts), B-frames between the P pictures.
        let clip = try TestSupport.makeClip(in: dir, SyntheticClip(width: 64, height: 48, frames: 12, seed: 7))
        let settings = try EncodeSettings.parse(arguments: ["--preset", "ultrafast", "--threads", "1", "--bframes", "2", "--crf", "26",
                                                            "--keyint", "6", "--min-keyint", "6", "--scenecut", "0"]).0
        let checked = try Runner.check([Experiment.Run(clip: clip, settings: settings, label: "")], experiment: "t")
        let spec = Pipeline.spec(checked[0], clip: ClipIdentity(path: clip, sha256: String(repeating: "0", count: 64)))
        let folder = "\(dir)/run"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        var warnings: [String] = []
        let result = try Pipeline.execute(spec, in: folder) { warnings.append($0) }

        let stream = "\(folder)/stream.264"
        let fileBytes = try Data(contentsOf: URL(fileURLWithPath: stream)).count
        #expect(result.measured.frames.count == 12)
        // Every byte of the file is in a returned frame (sizeBytes: start codes, headers and filler included), in decode order.
        let sizes = result.measured.frames.sorted { $0.codedIndex < $1.codedIndex }.map(\.sizeBytes)
        #expect(sizes.reduce(0, +) == fileBytes)
        // ffprobe's h264 parser splits the file into the same access units.
        #expect(try Witness.packetSizes(stream) == sizes)
        // Picture types in display order: IDR and I are ffprobe's I, Bref and B its B.
        let types = result.measured.frames.sorted { $0.displayIndex < $1.displayIndex }.map { f -> String in
            switch f.type { case .idr, .i: return "I"; case .p: return "P"; case .bref, .b: return "B" }
        }
        #expect(try Witness.pictureTypes(stream) == types)
        // keyint 6 with min-keyint 6 and no scene cuts: IDR pictures at display 0 and 6, no other I.
        #expect(result.measured.frames.filter { $0.type == .idr }.map(\.displayIndex).sorted() == [0, 6])
        #expect(!types.dropFirst().enumerated().contains { $0.offset + 1 != 6 && $0.element == "I" })
        // Each decode the verify stage made (by source) measured every picture once, display 0 to 11.
        let sources = Set(result.measured.decoded.map(\.record.source))
        #expect(!sources.isEmpty)
        for source in sources {
            #expect(result.measured.decoded.filter { $0.record.source == source }.map(\.record.displayIndex).sorted() == Array(0..<12), "\(source)")
        }
    }
}
