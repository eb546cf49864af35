import Foundation
import Testing
@testable import H264

@Suite("forbidden_zero_bit")
struct ForbiddenZeroBitTests {
    @Test("a NAL unit with forbidden_zero_bit 1 is split, typed by its low 5 bits, and carries the bit into JSON")
    func splitAndEncode() throws {
        // 00 00 00 01 | 0x67 = 0 11 00111 (SPS, bit 0) | 00 00 01 | 0xE5 = 1 11 00101 (IDR slice, bit 1) 0x88.
        let units = try AnnexB.split([0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0xE5, 0x88])
        #expect(units.map(\.offset) == [4, 9])
        #expect(units.map(\.nal.forbiddenZeroBit) == [0, 1])
        #expect(units.map(\.nal.nalUnitType) == [.sps, .idrSlice])
        #expect(units.map(\.nal.nalRefIdc) == [3, 3])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(units), as: UTF8.self)
        #expect(json == #"[{"forbidden_zero_bit":0,"nal_ref_idc":3,"nal_unit_type":7,"offset":4,"size":2},{"forbidden_zero_bit":1,"nal_ref_idc":3,"nal_unit_type":5,"offset":9,"size":2}]"#)
    }
}
