import Foundation
import Testing
@testable import H264

// RTP per RFC 6184 and RFC 3550 on hand-made packets: expected values by hand arithmetic, each written out.

@Suite struct RTPTests {
    /// A packet with everything RFC 3550 5.1 allows: padding, an extension and two CSRCs.
    @Test func headerWithCSRCsExtensionAndPadding() throws {
        let bytes: [UInt8] = [
            0xB2,                   // V=2 (10), P=1, X=1, CC=2: 1011 0010
            0xE0,                   // M=1, PT=96 (0x60)
            0x12, 0x34,             // sequence number 0x1234
            0xDE, 0xAD, 0xBE, 0xEF, // timestamp
            0x01, 0x02, 0x03, 0x04, // SSRC
            0x0A, 0x0B, 0x0C, 0x0D, // CSRC 1
            0x11, 0x12, 0x13, 0x14, // CSRC 2
            0xBE, 0xDE, 0x00, 0x01, // extension: profile 0xBEDE, 1 word
            0x10, 0xAA, 0x00, 0x00, // the word
            0x65, 0x88, 0x80,       // payload: an IDR slice's first bytes
            0x00, 0x00, 0x03,       // padding: 3 bytes, the last one the count
        ]
        let p = try RTPPacket(parsing: bytes)
        #expect(p.marker && p.payloadType == 96 && p.sequenceNumber == 0x1234 && p.timestamp == 0xDEADBEEF && p.ssrc == 0x01020304)
        #expect(p.csrcs == [0x0A0B0C0D, 0x11121314])
        #expect(p.extensionProfile == 0xBEDE && p.extensionData == [0x10, 0xAA, 0, 0])
        #expect(p.paddingCount == 3 && p.payload == [0x65, 0x88, 0x80])
        #expect(p.serialize() == bytes)
    }

    @Test func headerErrors() {
        // 11 bytes: one short of the fixed header.
        #expect(throws: H264Error.truncated(element: "RTP fixed header", byteOffset: 0, needed: 12, available: 11)) {
            try RTPPacket(parsing: [UInt8](repeating: 0x80, count: 11))
        }
        // V=1 (0x40): a DNS answer or any other UDP payload.
        #expect(throws: H264Error.invalid(element: "RTP version (V)", reason: "1, not 2: not an RTP packet", byteOffset: 0)) {
            try RTPPacket(parsing: [0x40] + [UInt8](repeating: 0, count: 15))
        }
        // P=1 with a padding count of 0.
        #expect(throws: (any Error).self) { try RTPPacket(parsing: [0xA0, 0x60] + [UInt8](repeating: 0, count: 12)) }
        // CC=3 but only one CSRC present.
        #expect(throws: (any Error).self) { try RTPPacket(parsing: [0x83, 0x60] + [UInt8](repeating: 0, count: 14)) }
    }

    /// 100-byte NAL unit at MTU 50: each FU-A carries 50 - 12 - 2 = 36 bytes of the 99 after the NAL header: 36, 36, 27.
    @Test func fuAFragmentsAtTheMTU() throws {
        let nal = try NALUnit(bytes: [0x65] + (1...99).map { UInt8($0) })
        var o = RTPPacketizer.Options()
        o.mtu = 50
        let out = try RTPPacketizer.packetize([.init(nalUnits: [nal], ptsMicroseconds: 0)], options: o).map(\.packet)
        #expect(out.map { $0.serialize().count } == [50, 50, 12 + 2 + 27])
        // FU indicator: F and NRI of 0x65 (0x60) with type 28 = 0x7C; FU header: S/E bits and type 5.
        #expect(out.map { $0.payload[0] } == [0x7C, 0x7C, 0x7C])
        #expect(out.map { $0.payload[1] } == [0x85, 0x05, 0x45])
        #expect(out.map(\.marker) == [false, false, true])
        #expect(out[0].payload[2...] == ArraySlice((1...36).map { UInt8($0) }))
        #expect(out[2].payload[2...] == ArraySlice((73...99).map { UInt8($0) }))
        // Single NAL unit mode cannot send it: 100 > 50 - 12.
        o.mode = .singleNALUnit
        #expect(throws: (any Error).self) { try RTPPacketizer.packetize([.init(nalUnits: [nal], ptsMicroseconds: 0)], options: o) }
    }

    /// SPS (5 bytes, NRI 3), SEI (4, NRI 0), slice (30, NRI 2) at MTU 50: 12 + 1 + (2 + 5) + (2 + 4) = 26 fits, adding the
    /// slice makes 26 + 32 = 58 > 50, so the STAP-A goes with SPS and SEI (header 24 | NRI 3 << 5 = 0x78) and the slice,
    /// alone in its collection, goes as a single NAL unit packet with the marker.
    @Test func stapAAggregationAsRtph264pay() throws {
        let sps = try NALUnit(bytes: [0x67, 1, 2, 3, 4])
        let sei = try NALUnit(bytes: [0x06, 5, 6, 7])
        let slice = try NALUnit(bytes: [0x41] + [UInt8](repeating: 9, count: 29))
        var o = RTPPacketizer.Options()
        o.mtu = 50
        o.firstSequenceNumber = 65_535
        o.timestampOffset = 4_294_967_000
        let out = try RTPPacketizer.packetize([.init(nalUnits: [sps, sei, slice], ptsMicroseconds: 40_000)], options: o).map(\.packet)
        #expect(out.count == 2)
        #expect(out[0].payload == [0x78, 0, 5] + sps.bytes + [0, 4] + sei.bytes)
        #expect(out[1].payload == slice.bytes)
        #expect(out.map(\.marker) == [false, true])
        #expect(out.map(\.sequenceNumber) == [65_535, 0])   // 16-bit wrap
        // 40,000 us x 90 kHz = 3,600 ticks; 4,294,967,000 + 3,600 - 2^32 = 3,304.
        #expect(out.map(\.timestamp) == [3_304, 3_304])
    }

    @Test func sdpParameters() throws {
        // An x264 SPS: profile_idc 100 (0x64), constraint flags 0x00, level_idc 11 (0x0b).
        let sps = try NALUnit(bytes: [0x67, 0x64, 0x00, 0x0B, 0xAC, 0xB2, 0x05, 0x89])
        let pps = try NALUnit(bytes: [0x68, 0xEB, 0xC3, 0xCB, 0x22, 0xC0])
        #expect(try RTPSessionDescription.profileLevelId(sps: sps) == "64000b")
        // Foundation's base64 as the witness.
        let expected = Data(sps.bytes).base64EncodedString() + "," + Data(pps.bytes).base64EncodedString()
        #expect(RTPSessionDescription.spropParameterSets([sps, pps]) == expected)
        for n in 1...7 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 * 37 + 200) }
            #expect(RTPSessionDescription.base64(bytes) == Data(bytes).base64EncodedString())
        }
        let text = try RTPSessionDescription.text(parameterSets: [sps, pps, sps], mode: .nonInterleaved, payloadType: 96, port: 5004, address: "10.0.0.2")
        #expect(text.contains("a=fmtp:96 packetization-mode=1;profile-level-id=64000b;sprop-parameter-sets=\(expected)\r\n"))
        // The lab's own sprop reader gives the NAL units back.
        var warnings: [ParseWarning] = []
        #expect(try SpropParameterSets.decode(expected, warnings: &warnings) == [sps, pps])
    }

    static func packet(_ seq: UInt16, _ ts: UInt32, _ payload: [UInt8], marker: Bool = false) -> RTPPacket {
        RTPPacket(marker: marker, payloadType: 96, sequenceNumber: seq, timestamp: ts, ssrc: 7, payload: payload)
    }

    /// Access unit 0: SPS (seq 10), an IDR slice in three FU-A fragments (11, 12, 13); access unit 1: a slice (14).
    static func fuAStream() -> [RTPPacket] {
        [packet(10, 0, [0x67, 1, 2, 3]),
         packet(11, 0, [0x7C, 0x85, 0xA1, 0xA2, 0xA3, 0xA4]),   // S, type 5
         packet(12, 0, [0x7C, 0x05, 0xB1, 0xB2, 0xB3, 0xB4]),   // middle
         packet(13, 0, [0x7C, 0x45, 0xC1, 0xC2], marker: true), // E
         packet(14, 3600, [0x41, 0x9A, 0x01], marker: true)]
    }

    @Test func fuAReassembledWithItsHeaderMasked() throws {
        let r = RTPDepacketizer.depacketize(Self.fuAStream().enumerated().map { .init(packet: $1, arrivalSeconds: Double($0) * 0.01) })
        // The NAL header: the FU indicator's F and NRI (0x7C & 0xE0 = 0x60) with the FU header's type (0x85 & 0x1F = 5): 0x65.
        #expect(r.accessUnits.map { $0.nalUnits.map(\.bytes) } == [
            [[0x67, 1, 2, 3], [0x65, 0xA1, 0xA2, 0xA3, 0xA4, 0xB1, 0xB2, 0xB3, 0xB4, 0xC1, 0xC2]],
            [[0x41, 0x9A, 0x01]]])
        #expect(r.statistics.lost == 0 && r.statistics.discardedNALUnits == 0)
        #expect(r.accessUnits.allSatisfy { $0.incomplete.isEmpty })
        // PTS: 3,600 ticks = 40,000 us.
        #expect(r.accessUnits.map(\.ptsMicroseconds) == [0, 40_000])
    }

    /// The middle fragment (seq 12) lost: the IDR slice is discarded whole (RFC 6184 5.8), the SPS before it and the
    /// slice after it kept, and access unit 0 reported incomplete.
    @Test func lostMiddleFragmentDropsExactlyThatNALUnit() {
        let packets = Self.fuAStream().filter { $0.sequenceNumber != 12 }
        let r = RTPDepacketizer.depacketize(packets.enumerated().map { .init(packet: $1, arrivalSeconds: Double($0) * 0.01) })
        #expect(r.accessUnits.map { $0.nalUnits.map(\.bytes) } == [[[0x67, 1, 2, 3]], [[0x41, 0x9A, 0x01]]])
        #expect(r.statistics.lost == 1 && r.statistics.expected == 5 && r.statistics.discardedNALUnits == 1)
        #expect(!r.accessUnits[0].incomplete.isEmpty && r.accessUnits[1].incomplete.isEmpty)
        // The start fragment lost instead: the rest of that NAL unit is discarded too, nothing else.
        let noStart = Self.fuAStream().filter { $0.sequenceNumber != 11 }
        let r2 = RTPDepacketizer.depacketize(noStart.map { .init(packet: $0, arrivalSeconds: 0) })
        #expect(r2.accessUnits.map { $0.nalUnits.map(\.bytes) } == [[[0x67, 1, 2, 3]], [[0x41, 0x9A, 0x01]]])
        // One NAL unit discarded (its middle and end fragments together), not one per fragment.
        #expect(r2.statistics.discardedNALUnits == 1 && r2.statistics.lost == 1)
        #expect(r2.warnings == ["FU-A NAL unit (nal_unit_type 5) starting at sequence number 12 discarded whole: its start fragment was lost (RFC 6184 5.8)"])
    }

    /// Sequence numbers 65534, 65535, 0, 1 arriving as 65534, 0, 65535, 1, 0 (a duplicate): extended 65534, 65536,
    /// 65535, 65537 → one reordered, one duplicate, none lost; timestamps 2^32 - 3600, 0, 3600, 7200 → PTS 0, 40, 80,
    /// 120 ms across the 32-bit wrap.
    @Test func sequenceAndTimestampWraps() {
        let sent = [Self.packet(65_534, 4_294_963_696, [0x65, 1], marker: true), Self.packet(65_535, 0, [0x41, 2], marker: true),
                    Self.packet(0, 3600, [0x41, 3], marker: true), Self.packet(1, 7200, [0x41, 4], marker: true)]
        let arrival = [sent[0], sent[2], sent[1], sent[3], sent[2]]
        let r = RTPDepacketizer.depacketize(arrival.map { .init(packet: $0, arrivalSeconds: 0) })
        #expect(r.statistics.received == 5 && r.statistics.duplicates == 1 && r.statistics.reordered == 1)
        #expect(r.statistics.expected == 4 && r.statistics.lost == 0)
        #expect(r.accessUnits.map { $0.nalUnits[0].bytes[1] } == [1, 2, 3, 4])
        #expect(r.accessUnits.map(\.ptsMicroseconds) == [0, 40_000, 80_000, 120_000])
        #expect(RTPDepacketizer.extendedSequenceNumbers([65_534, 0, 65_535, 1]) == [65_534, 65_536, 65_535, 65_537])
    }

    /// RFC 3550 6.4.1 on four packets. Timestamps 0, 3600, 7200, 10800 (90 kHz); arrivals 0, 0.040, 0.090, 0.120 s,
    /// i.e. 0, 3600, 8100, 10800 ticks. Transit = arrival - timestamp: 0, 0, 900, 0. |D|: 0, 900, 900.
    /// J1 = 0 + (0 - 0) / 16 = 0; J2 = 0 + (900 - 0) / 16 = 56.25; J3 = 56.25 + (900 - 56.25) / 16 = 108.984375 ticks.
    @Test func jitterByHand() {
        let j = RTPDepacketizer.interarrivalJitter([(0, 0), (0.040, 3600), (0.090, 7200), (0.120, 10_800)])
        #expect(abs(j - 108.984375) < 1e-9)
        // The same through the depacketizer, whose statistics report it in ticks and milliseconds (/ 90).
        let packets = (0..<4).map { Self.packet(UInt16(100 + $0), UInt32($0 * 3600), [0x41, UInt8($0)], marker: true) }
        let r = RTPDepacketizer.depacketize(zip(packets, [0, 0.040, 0.090, 0.120]).map { .init(packet: $0, arrivalSeconds: $1) })
        #expect(abs(r.statistics.jitterTicks - 108.984375) < 1e-9)
        #expect(abs(r.statistics.jitterMilliseconds - 1.2109375) < 1e-9)
    }

    /// A slice whose first_mb_in_slice is 3 (ue(v) 3 = 00100, RBSP byte 0b0010_0000) starts an access unit: its first
    /// slice is missing.
    @Test func accessUnitWithoutItsFirstSliceIsIncomplete() {
        let r = RTPDepacketizer.depacketize([.init(packet: Self.packet(1, 0, [0x41, 0x20], marker: true), arrivalSeconds: 0),
                                             .init(packet: Self.packet(2, 3600, [0x41, 0x80], marker: true), arrivalSeconds: 0)])
        #expect(r.accessUnits[0].incomplete == ["its first slice starts at macroblock 3 (first_mb_in_slice), not 0"])
        #expect(r.accessUnits[1].incomplete.isEmpty)
    }
}
