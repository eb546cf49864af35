import Foundation
import Testing
@testable import EncoderLab

/// Values that x264 keeps in C ints are checked before they narrow: an error naming the value, never a trap.
@Suite("frame counts and picture parameters within x264's C types")
struct RangeTests {
    func usage(_ flags: [String]) -> String? {
        do { _ = try EncodeSettings.parse(arguments: flags); return nil } catch let e as LabError {
            return e.kind == .usage ? e.message : "\(e.kind): \(e.message)"
        } catch { return "\(error)" }
    }

    @Test("--frames and --seek up to 2147483647 (2^31 - 1), and their sum too")
    func frameCounts() throws {
        #expect(try EncodeSettings.parse(arguments: ["--frames", "2147483647"]).0.frames == 2_147_483_647)
        #expect(usage(["--frames", "2147483648"]) == "setting 'frames' must be at most 2147483647 frames (x264 counts frames in a C int), got '2147483648'")
        #expect(usage(["--seek", "3000000000"]) == "setting 'seek' must be at most 2147483647 frames (x264 counts frames in a C int), got '3000000000'")
        // 2147483647 - 100 = 2147483547: exactly the largest sum allowed.
        #expect(try EncodeSettings.parse(arguments: ["--seek", "100", "--frames", "2147483547"]).0.frames == 2_147_483_547)
        #expect(usage(["--seek", "101", "--frames", "2147483547"]) == "settings 'seek' (101) plus 'frames' (2147483547) must be at most 2147483647 frames (x264 counts frames in a C int)")
        // In either order.
        #expect(usage(["--frames", "2147483547", "--seek", "101"]) == "settings 'seek' (101) plus 'frames' (2147483547) must be at most 2147483647 frames (x264 counts frames in a C int)")
        #expect(usage(["--frames", "99999999999999999999"]) == "setting 'frames' needs a whole number >= 0, got '99999999999999999999'")
    }

    @Test("an encoder input beyond x264's fields is a data error naming the value; a huge frame total is 'unknown'")
    func encoderInput() throws {
        let settings = try EncodeSettings.parse(arguments: ["--threads", "1"]).0
        #expect(throws: LabError(.data, "picture width 4294967296 does not fit x264's int")) {
            try X264Session.validate(settings, input: EncoderInput(width: 1 << 32, height: 16, fpsNum: 25, fpsDen: 1))
        }
        #expect(throws: LabError(.data, "frame rate 4294967296:1 does not fit x264's uint32_t fields")) {
            try X264Session.validate(settings, input: EncoderInput(width: 16, height: 16, fpsNum: 1 << 32, fpsDen: 1))
        }
        #expect(throws: LabError(.data, "frame rate -25:1 does not fit x264's uint32_t fields")) {
            try X264Session.validate(settings, input: EncoderInput(width: 16, height: 16, fpsNum: -25, fpsDen: 1))
        }
        #expect(throws: LabError(.data, "sample aspect ratio 3000000000:1 does not fit x264's int fields")) {
            try X264Session.validate(settings, input: EncoderInput(width: 16, height: 16, fpsNum: 25, fpsDen: 1,
                                                                   sarWidth: 3_000_000_000, sarHeight: 1))
        }
        // 2^40 frames (a y4m of tiny pictures on a sparse file) opens as an input of unknown length.
        try X264Session.validate(settings, input: EncoderInput(width: 16, height: 16, fpsNum: 25, fpsDen: 1, frameTotal: 1 << 40))
    }
}
