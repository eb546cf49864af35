import Testing
@testable import H264

// The packet format (Sources/H264/PACKETS.md): layout by hand arithmetic, and round trips of
// x264 streams through packets.

@Suite struct PacketTests {
    @Test func layoutByHand() throws {
        let packet = Packet(isIDR: true, decodeOrder: 2, ptsMicroseconds: 40_000, dtsMicroseconds: -40_000,
                            sequenceParameterSets: [try NALUnit(bytes: [0x67, 0x42])],
                            pictureParameterSets: [try NALUnit(bytes: [0x68, 0xCE])],
                            nalUnits: [try NALUnit(bytes: [0x65, 0x88]), try NALUnit(bytes: [0x06, 0x05])])
        let expected: [UInt8] = [
            0x01,                                           // version 1
            0x01,                                           // flags: bit 0 IDR
            0, 0, 0, 0, 0, 0, 0, 0x02,                      // decode_order 2
            0, 0, 0, 0, 0, 0, 0x9C, 0x40,                   // pts_us 40,000 = 0x9C40
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x63, 0xC0, // dts_us −40,000 = 2^64 − 40,000 = 0x…FFFF63C0
            0x01, 0x00, 0x02, 0x67, 0x42,                   // 1 SPS of 2 bytes
            0x01, 0x00, 0x02, 0x68, 0xCE,                   // 1 PPS of 2 bytes
            0x00, 0x00, 0x00, 0x0C,                         // body_length 12 = 2 × (4 + 2)
            0x00, 0x00, 0x00, 0x02, 0x65, 0x88,             // IDR slice behind a 4-byte length
            0x00, 0x00, 0x00, 0x02, 0x06, 0x05,             // SEI
        ]
        let bytes = try packet.serialize()
        #expect(bytes == expected)
        #expect(bytes.count == 26 + 5 + 5 + 4 + 12)
        #expect(try Packet.deserialize(bytes) == packet)
    }

    @Test func deserializeErrorsNameTheField() throws {
        #expect(throws: H264Error.invalid(element: "version", reason: "unsupported packet version 2, expected 1", byteOffset: 0)) {
            try Packet.deserialize([0x02, 0x00])
        }
        // Version and flags, then 8 bytes of decode_order: pts_us at byte 10 has nothing left.
        #expect(throws: H264Error.truncated(element: "pts_us", byteOffset: 10, needed: 8, available: 0)) {
            try Packet.deserialize([0x01, 0x00] + [UInt8](repeating: 0, count: 8))
        }
        #expect(throws: H264Error.invalid(element: "flags", reason: "reserved bits set: 0x2", byteOffset: 1)) {
            try Packet.deserialize([0x01, 0x02])
        }
        // A "PPS" in the SPS field: nal_unit_type 8 where 7 belongs, at byte 29.
        let wrongType: [UInt8] = [0x01, 0x00] + [UInt8](repeating: 0, count: 24) + [0x01, 0x00, 0x01, 0x68]
        #expect(throws: H264Error.invalid(element: "sps[0]", reason: "nal_unit_type 8, expected 7", byteOffset: 29)) {
            try Packet.deserialize(wrongType)
        }
    }

    @Test func microsecondRounding() throws {
        // 1 tick of 1/3 s = 333,333.33 µs → 333,333; 2 ticks = 666,666.67 → 666,667.
        #expect(try Packet.microseconds(ticks: 1, timebaseNumerator: 1, timebaseDenominator: 3) == 333_333)
        #expect(try Packet.microseconds(ticks: 2, timebaseNumerator: 1, timebaseDenominator: 3) == 666_667)
        // 1 tick of 1/2,000,000 s = 0.5 µs: ties away from zero → 1, and −0.5 → −1.
        #expect(try Packet.microseconds(ticks: 1, timebaseNumerator: 1, timebaseDenominator: 2_000_000) == 1)
        #expect(try Packet.microseconds(ticks: -1, timebaseNumerator: 1, timebaseDenominator: 2_000_000) == -1)
        // NTSC: 3 ticks of 1001/30000 s = 3003/30000 s = 100,100 µs exactly.
        #expect(try Packet.microseconds(ticks: 3, timebaseNumerator: 1001, timebaseDenominator: 30_000) == 100_100)
        // Int64.max seconds are not representable in microseconds: at most
        // Int64.max / 1,000,000 = 9,223,372,036,854 ticks of 1 s.
        #expect(throws: H264Error.valueOutOfRange(element: "ticks of 1/1 s as 64-bit microseconds", value: Int64.max, range: -9_223_372_036_854...9_223_372_036_854)) {
            try Packet.microseconds(ticks: Int64.max, timebaseNumerator: 1, timebaseDenominator: 1)
        }
        #expect(throws: H264Error.self) { try Packet.microseconds(ticks: 1, timebaseNumerator: 1, timebaseDenominator: 0) }
    }

    /// NAL units without parameter sets and without the types packets drop.
    func payloads(_ nals: [NALUnit]) -> [NALUnit] {
        nals.filter { ![.sps, .pps, .accessUnitDelimiter, .endOfSequence, .endOfStream, .fillerData].contains($0.nalUnitType) }
    }

    @Test(arguments: ["open_gop.264", "slices4.264", "tff.264", "i444_1080.264"])
    func annexBToPacketsToAnnexB(file: String) throws {
        let nals = try nalUnits(file)
        let aus = try AccessUnit.split(nals)
        // 25 fps in microseconds; B-frames make pts and dts differ, here by a fixed 2-frame delay.
        let times = aus.indices.map { (ptsMicroseconds: Int64($0) * 40_000, dtsMicroseconds: Int64($0 - 2) * 40_000) }
        for placement in [Packet.ParameterSetPlacement.everyPacket, .idrOnly] {
            let packets = try Packet.fromAccessUnits(aus, timestamps: times, placement: placement)
            #expect(packets.map(\.decodeOrder) == (0..<UInt64(aus.count)).map { $0 })
            var file = [UInt8]()
            for p in packets { file += try p.serialize() }
            let back = try Packet.deserializeAll(file)
            #expect(back == packets)
            #expect(back.map(\.dtsMicroseconds) == times.map(\.dtsMicroseconds))
            // Parameter sets on every packet, or only on IDR packets.
            #expect(back.allSatisfy { placement == .idrOnly && !$0.isIDR ? $0.sequenceParameterSets.isEmpty : $0.sequenceParameterSets.count == 1 })
            // Same slice and SEI payloads, in the same order.
            let rebuilt = try AnnexB.split(Packet.annexB(back)).map(\.nal)
            #expect(payloads(rebuilt) == payloads(nals))
            // The parameter sets are the same bytes.
            #expect(Set(rebuilt.filter { $0.nalUnitType == .sps || $0.nalUnitType == .pps }) == Set(nals.filter { $0.nalUnitType == .sps || $0.nalUnitType == .pps }))
            // And it still splits into the same access units with the same slice types.
            #expect(try AccessUnit.split(rebuilt).map(\.sliceTypes) == aus.map(\.sliceTypes))
        }
    }

    @Test func idrOnlyRoundTripIsExactForAStreamWithHeadersOnlyOnIDR() throws {
        // slices4.264 carries SPS and PPS only before its IDR picture: with idrOnly placement the
        // rebuilt stream has exactly the original NAL units.
        let nals = try nalUnits("slices4.264")
        let aus = try AccessUnit.split(nals)
        let packets = try Packet.fromAccessUnits(aus, timestamps: aus.indices.map { (Int64($0), Int64($0)) }, placement: .idrOnly)
        #expect(Packet.nalUnits(packets) == nals)
        // everyPacket with skipRepeatedParameterSets gives the same.
        let every = try Packet.fromAccessUnits(aus, timestamps: aus.indices.map { (Int64($0), Int64($0)) })
        #expect(Packet.nalUnits(every, skipRepeatedParameterSets: true) == nals)
        #expect(Packet.nalUnits(every).count == nals.count + 2 * (aus.count - 1))
    }

    @Test func audIsDropped() throws {
        let nals = try nalUnits("aud_slice_parameter_sets.264") + nalUnits("aud_slice.264")
        let aus = try AccessUnit.split(nals)
        let packets = try Packet.fromAccessUnits(aus, timestamps: [(0, 0)])
        #expect(packets[0].nalUnits.map(\.nalUnitType) == [.idrSlice])
        #expect(packets[0].isIDR)
        #expect(throws: H264Error.self) { try Packet.fromAccessUnits(aus, timestamps: []) }
    }
}
