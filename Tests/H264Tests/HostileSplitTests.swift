import Testing
@testable import H264

/// Splitting data that is nothing but empty NAL units, and packets whose fields contradict their NAL units
/// (issue 17, item 6): warnings stay a few whatever the size, and `Packet.check` names what PACKETS.md promises.
@Suite("hostile splits and packets")
struct HostileSplitTests {
    @Test("40 start codes back to back: 16 warnings one by one, the other 24 folded into one with its count")
    func annexBEmptyNALUnitsFold() throws {
        let data = Array([[UInt8]](repeating: [0, 0, 1], count: 40).joined())
        var warnings: [ParseWarning] = []
        #expect(try AnnexB.split(data, warnings: &warnings).isEmpty)
        // Empty NAL unit k (from 0) sits just after its start code: at byte 3k + 3.
        #expect(warnings.count == 17)
        #expect(warnings.prefix(16).map(\.byteOffset) == (0..<16).map { 3 * $0 + 3 })
        #expect(warnings.prefix(16).allSatisfy { $0.count == 1 })
        #expect(warnings.last?.byteOffset == 3 * 16 + 3 && warnings.last?.count == 40 - 16)
        #expect(warnings.last?.what == "nal_unit at byte 51: start code followed by no NAL unit (empty NAL unit) (and 23 more like it after it)")
    }

    @Test("100 zero bytes as AVCC with 1-byte lengths: 100 lengths of 0, 17 warnings")
    func avccEmptyNALUnitsFold() throws {
        var warnings: [ParseWarning] = []
        #expect(try AVCC.split([UInt8](repeating: 0, count: 100), lengthSize: 1, warnings: &warnings).isEmpty)
        #expect(warnings.count == 17 && warnings.last?.byteOffset == 16 && warnings.last?.count == 84)
    }

    @Test("a start code inside the data still splits as before: the NAL units between start codes, trailing zeros dropped")
    func splitUnchanged() throws {
        // 00 00 00 01 | 67 42 00 | 00 00 01 | 68 CE 00 00 | 00 00 01 | 65 88: an SPS at byte 4 (the 00 after it is a
        // trailing zero), a PPS at byte 10 (two trailing zeros), an IDR slice at byte 17.
        let data: [UInt8] = [0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 0, 0, 1, 0x65, 0x88]
        let units = try AnnexB.split(data)
        #expect(units.map(\.offset) == [4, 10, 17])
        #expect(units.map(\.nal.bytes) == [[0x67, 0x42], [0x68, 0xCE], [0x65, 0x88]])
    }

    @Test("Packet.check: an IDR flag without an IDR slice, a decode_order jump, dts_us after pts_us, a body without a slice")
    func packetCheck() throws {
        let idr = try NALUnit(bytes: [0x65, 0x88])   // nal_unit_type 5
        let p = try NALUnit(bytes: [0x41, 0x9A])     // nal_unit_type 1
        let sei = try NALUnit(bytes: [0x06, 0x05])   // nal_unit_type 6
        let packets = [
            Packet(isIDR: true, decodeOrder: 0, ptsMicroseconds: 0, dtsMicroseconds: 0, sequenceParameterSets: [], pictureParameterSets: [], nalUnits: [idr]),
            Packet(isIDR: true, decodeOrder: 3, ptsMicroseconds: 40_000, dtsMicroseconds: 40_001, sequenceParameterSets: [], pictureParameterSets: [], nalUnits: [p]),
            Packet(isIDR: false, decodeOrder: 4, ptsMicroseconds: 80_000, dtsMicroseconds: 80_000, sequenceParameterSets: [], pictureParameterSets: [], nalUnits: [sei]),
        ]
        // Each packet: 26 fixed bytes, sps_count, pps_count, body_length (4), one NAL unit of 2 bytes behind 4: 38 bytes.
        var offsets: [Int] = []
        var at = 0
        for packet in packets { offsets.append(at); at += try packet.serialize().count }
        #expect(offsets == [0, 38, 76])
        let problems = Packet.check(packets, byteOffsets: offsets)
        #expect(problems.map(\.description) == [
            "packet 1 at byte 38: flags (byte 39): bit 0 says IDR, but the body holds no IDR slice (nal_unit_type 5); its nal_unit_types: 1",
            "packet 1 at byte 38: decode_order (byte 40): 3, expected 1 (0 for the first packet, +1 per packet)",
            "packet 1 at byte 38: dts_us (byte 56): 40001 is after pts_us 40000 (dts_us <= pts_us)",
            // The body of packet 2 starts after 26 + 1 + 1 + 4 bytes.
            "packet 2 at byte 76: body (byte 108): no coded slice (nal_unit_type 1-5): a packet is one access unit's coded picture; its nal_unit_types: 6",
        ])
        // The packets the lab makes keep every promise.
        let made = try Packet.fromAccessUnits([AccessUnit(index: 0, nalUnitIndices: 0..<1, nalUnits: [idr], sliceHeaders: [])],
                                              timestamps: [(0, 0)])
        #expect(Packet.check(made, byteOffsets: [0]).isEmpty)
    }
}
