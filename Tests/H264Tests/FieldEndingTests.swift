import Foundation
import Testing
@testable import H264

/// Issue 17, item 5, in the module: how parameter sets, SEI and AVCC lengths end and pack, and data partitions
/// outside the Extended profile (``ParsePolicy``). Bit and byte positions are written out by hand here; the same
/// kinds are checked against FFmpeg end to end in EncoderLabTests/FieldEndingTests.
@Suite("field-stream endings and packing in the H264 module")
struct H264FieldEndingTests {
    /// The SPS and PPS of aud_slice_parameter_sets.264 (hex in AVCDecoderConfigurationRecordTests), without their
    /// NAL unit header byte. The SPS RBSP ends in 0x60 (0110 0000: the stop bit is bit 2 of its last byte) and the
    /// PPS RBSP e b e0 e4 b2 2c ends in 0x2c (0010 1100: the stop bit is bit 5 of its last byte).
    let spsRBSP = hex("64000aacd9447b011000000300100000030328f1225960")
    let ppsRBSP = hex("ebe0e4b22c")

    @Test("rbsp_trailing_bits of an SPS: data after them and a missing stop bit are warned about (lenient) or refused (strict)")
    func spsTrailingBits() throws {
        let rbsp = EmulationPrevention.remove(spsRBSP)
        var warnings: [ParseWarning] = []
        let clean = try SequenceParameterSet(rbsp: rbsp, policy: .strict, warnings: &warnings)
        #expect(warnings.isEmpty)
        // The last byte 0x60 is byte n-1; its stop bit is bit 8(n-1)+2 (0x60 = 0110 0000: the last 1 is its third bit).
        let n = rbsp.count, stop = 8 * (n - 1) + 2
        // Data after: one byte 0x01 appended; its last bit, 8n+7, is the last bit equal to 1.
        let after = try SequenceParameterSet(rbsp: rbsp + [0x01], policy: .lenient, warnings: &warnings)
        #expect(after == clean)
        #expect(warnings.map(\.element) == ["rbsp_trailing_bits"] && warnings.first?.bitOffset == stop)
        #expect(warnings.first?.problem == "data after the end of seq_parameter_set_rbsp: its rbsp_stop_one_bit is due here, and bits equal to 1 follow up to bit \(8 * n + 7) (1 byte after the byte where the stop bit is due)")
        #expect(throws: H264Error.invalid(element: "rbsp_trailing_bits", reason: "\(warnings[0].problem!) (at bit \(stop))", byteOffset: n - 1)) {
            try SequenceParameterSet(rbsp: rbsp + [0x01], policy: .strict, warnings: &warnings)
        }
        // No stop bit: 0x60 becomes 0x40; every element still reads.
        warnings = []
        var cut = rbsp
        cut[n - 1] = 0x40
        #expect(try SequenceParameterSet(rbsp: cut, policy: .lenient, warnings: &warnings) == clean)
        #expect(warnings.first?.problem == "no rbsp_stop_one_bit after seq_parameter_set_rbsp: no bit equal to 1 follows its last syntax element" && warnings.first?.bitOffset == stop)
        #expect(throws: H264Error.self) { try SequenceParameterSet(rbsp: cut, policy: .strict, warnings: &warnings) }
        // Zero bytes after the trailing bits are not data.
        warnings = []
        _ = try SequenceParameterSet(rbsp: rbsp + [0, 0], policy: .strict, warnings: &warnings)
        #expect(warnings.isEmpty)
    }

    @Test("rbsp_trailing_bits of a PPS, through ParameterSets with its policy")
    func ppsTrailingBits() throws {
        let sps = try SequenceParameterSet(rbsp: EmulationPrevention.remove(spsRBSP))
        // 0x2c (0010 1100) without its stop bit (bit 5, 0x04) is 0x28: the PPS's last element ends there.
        var cut = ppsRBSP
        cut[cut.count - 1] = 0x28
        var warnings: [ParseWarning] = []
        let clean = try PictureParameterSet(rbsp: ppsRBSP, sequenceParameterSets: [0: sps], policy: .strict, warnings: &warnings)
        #expect(warnings.isEmpty)
        #expect(try PictureParameterSet(rbsp: cut, sequenceParameterSets: [0: sps], policy: .lenient, warnings: &warnings) == clean)
        #expect(warnings.map(\.problem) == ["no rbsp_stop_one_bit after pic_parameter_set_rbsp: no bit equal to 1 follows its last syntax element"])
        #expect(warnings.first?.bitOffset == 8 * (ppsRBSP.count - 1) + 5)
        var strict = ParameterSets(policy: .strict)
        try strict.add(NALUnit(bytes: [0x67] + spsRBSP))
        #expect(throws: H264Error.self) { try strict.add(NALUnit(bytes: [0x68] + cut)) }
        var lenient = ParameterSets()
        try lenient.add(NALUnit(bytes: [0x67] + spsRBSP))
        #expect(try lenient.add(NALUnit(bytes: [0x68] + cut)))
    }

    @Test("an SEI whose last payload ends the NAL unit: messages kept with a warning, or refused")
    func seiTrailingBits() throws {
        // payloadType 5, payloadSize 17: a 16-byte uuid and one byte '!' (0x21), then no 0x80.
        let rbsp: [UInt8] = [5, 17] + Array(1...16) + [0x21]
        var warnings: [ParseWarning] = []
        let messages = try SEIMessage.parse(rbsp: rbsp, policy: .lenient, warnings: &warnings)
        #expect(messages.map(\.payloadSize) == [17] && messages.first?.userDataUnregistered?.userDataPayloadBytes == [0x21])
        #expect(warnings.map(\.byteOffset) == [19] && warnings.first?.problem == "no rbsp_trailing_bits after the last sei_message (payloadType 5, payloadSize 17): the NAL unit ends with its payload")
        #expect(throws: H264Error.self) { try SEIMessage.parse(rbsp: rbsp, policy: .strict, warnings: &warnings) }
        // With the 0x80 byte: nothing to say.
        warnings = []
        _ = try SEIMessage.parse(rbsp: rbsp + [0x80], policy: .strict, warnings: &warnings)
        #expect(warnings.isEmpty)
    }

    @Test("AVCC: NAL units packed as Annex B behind one length are split at the start codes (lenient) or refused (strict)")
    func packedBehindOneLength() throws {
        // Length 14: 67 AA BB, 00 00 00 01, 68 CC, 00 00 01, 65 DD; then length 2: 41 FF. Offsets: the NAL units
        // at 4, 11 (after 00 00 00 01 at 7-10), 16 (after 00 00 01 at 13-15) and 22; the first 0x000001 begins at 8.
        let fixed: [UInt8] = [0, 0, 0, 14, 0x67, 0xAA, 0xBB, 0, 0, 0, 1, 0x68, 0xCC, 0, 0, 1, 0x65, 0xDD,
                              0, 0, 0, 2, 0x41, 0xFF]
        var warnings: [ParseWarning] = []
        let units = try AVCC.split(fixed, policy: .lenient, warnings: &warnings)
        #expect(units.map(\.offset) == [4, 11, 16, 22])
        #expect(units.map(\.nal.bytes) == [[0x67, 0xAA, 0xBB], [0x68, 0xCC], [0x65, 0xDD], [0x41, 0xFF]])
        #expect(warnings.count == 1 && warnings[0].element == "NALUnit" && warnings[0].byteOffset == 8)
        #expect(warnings[0].reason == "split at its start codes into 3 NAL units, as FFmpeg does")
        #expect(throws: H264Error.self) { try AVCC.split(fixed, policy: .strict, warnings: &warnings) }
        // A length before an Annex B NAL unit (00 00 00 01 65 ...): one NAL unit, the start code dropped.
        warnings = []
        let wrapped = try AVCC.split([0, 0, 0, 6, 0, 0, 0, 1, 0x65, 0x88], policy: .lenient, warnings: &warnings)
        #expect(wrapped.map(\.nal.bytes) == [[0x65, 0x88]] && wrapped.map(\.offset) == [8] && warnings.count == 1)
    }

    @Test("data partitions (types 2-4) outside the Extended profile: warned (lenient) or refused (strict); none in Extended")
    func dataPartitions() throws {
        let sps = try SequenceParameterSet(rbsp: EmulationPrevention.remove(spsRBSP))
        #expect(sps.profileIdc == 100)
        let unit = AccessUnit(index: 0, nalUnitIndices: 7..<10, nalUnits: [
            try NALUnit(bytes: [0x09, 0xF0]), try NALUnit(bytes: [0x23, 0x80]), try NALUnit(bytes: [0x04, 0x80]),
        ], sliceHeaders: [])
        var warnings: [ParseWarning] = []
        try DataPartitioning.check(unit, sps: sps, policy: .lenient, warnings: &warnings)
        #expect(warnings.map(\.value) == [3, 4] && warnings.map(\.nalUnitIndex) == [8, 9])
        #expect(throws: H264Error.self) { try DataPartitioning.check(unit, sps: sps, policy: .strict, warnings: &warnings) }
        var extended = sps
        extended.profileIdc = 88
        warnings = []
        try DataPartitioning.check(unit, sps: extended, policy: .strict, warnings: &warnings)
        try DataPartitioning.check(unit, sps: nil, policy: .strict, warnings: &warnings)
        #expect(warnings.isEmpty)
    }
}
