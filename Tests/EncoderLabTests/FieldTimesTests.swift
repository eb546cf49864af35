import H264
import Testing
@testable import EncoderLab

/// Derived packet times of field-coded streams (Convert.derivedTimes): a field lasts one tick, half a frame
/// (H.264 Table E-6), and display order follows the fields' picture order counts. The NAL units are built bit by bit
/// (an SPS with frame_mbs_only_flag 0 and pic_order_cnt_type 0, a PPS, slice headers up to pic_order_cnt_lsb); the
/// expected times are worked out below from the order counts. The end-to-end tests compare a decodable stream's
/// times with FFmpeg's.
@Suite("derived times of field pictures")
struct FieldTimesTests {
    struct Bits {
        var bytes: [UInt8] = []
        var count = 0
        mutating func u(_ n: Int, _ v: Int) {
            for i in stride(from: n - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if (v >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
                count += 1
            }
        }
        mutating func ue(_ v: Int) { let x = v + 1, n = Int.bitWidth - x.leadingZeroBitCount; u(n - 1, 0); u(n, x) }
        mutating func trailing() { u(1, 1); while count % 8 != 0 { u(1, 0) } }
    }

    /// A picture: a frame (`bottom` nil) or a field, with its slice type (0 P, 1 B, 2 I), nal_ref_idc, frame_num
    /// and pic_order_cnt_lsb; an IDR when `idr`.
    struct Picture { var bottom: Bool?; var type: Int; var ref: Int; var frameNum: Int; var poc: Int; var idr = false }

    func units(_ pictures: [Picture]) throws -> [AccessUnit] {
        var sps = Bits()
        sps.u(8, 77); sps.u(8, 0); sps.u(8, 30); sps.ue(0)   // Main, level 3, seq_parameter_set_id 0
        sps.ue(0); sps.ue(0); sps.ue(0)                        // 4-bit frame_num, pic_order_cnt_type 0, 4-bit lsb
        sps.ue(2); sps.u(1, 0); sps.ue(3); sps.ue(2)           // max_num_ref_frames, gaps, 4x3 map units
        sps.u(1, 0); sps.u(1, 0); sps.u(1, 1); sps.u(1, 0); sps.u(1, 0)  // frame_mbs_only 0, no MBAFF, direct 8x8, no crop, no VUI
        sps.trailing()
        var pps = Bits()
        pps.ue(0); pps.ue(0); pps.u(2, 0); pps.ue(0); pps.ue(0); pps.ue(0); pps.u(3, 0)
        pps.ue(0); pps.ue(0); pps.ue(0); pps.u(3, 0b100)       // qp/qs/chroma offsets 0 (se 0), deblocking control 1
        pps.trailing()
        var nals = [NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: sps.bytes), NALUnit(nalRefIdc: 3, nalUnitType: .pps, rbsp: pps.bytes)]
        for p in pictures {
            var w = Bits()
            w.ue(0); w.ue(p.type + 5); w.ue(0); w.u(4, p.frameNum)
            w.u(1, p.bottom == nil ? 0 : 1)
            if let b = p.bottom { w.u(1, b ? 1 : 0) }
            if p.idr { w.ue(0) }
            w.u(4, p.poc)
            w.trailing()
            nals.append(NALUnit(nalRefIdc: p.ref, nalUnitType: p.idr ? .idrSlice : .slice, rbsp: w.bytes))
        }
        return try AccessUnit.split(nals)
    }

    @Test("B field pairs between reference field pairs: display order by field order count, 20 ms a field at 25 fps")
    func reorderedFields() throws {
        // Decode order: I top (POC 0, IDR) + P bottom (1), P top (6) + P bottom (7), then two pairs of
        // non-reference B fields (2, 3) and (4, 5), frame_num 2 (the previous reference frame's + 1).
        let u = try units([Picture(bottom: false, type: 2, ref: 3, frameNum: 0, poc: 0, idr: true), Picture(bottom: true, type: 0, ref: 2, frameNum: 0, poc: 1),
                           Picture(bottom: false, type: 0, ref: 2, frameNum: 1, poc: 6), Picture(bottom: true, type: 0, ref: 2, frameNum: 1, poc: 7),
                           Picture(bottom: false, type: 1, ref: 0, frameNum: 2, poc: 2), Picture(bottom: true, type: 1, ref: 0, frameNum: 2, poc: 3),
                           Picture(bottom: false, type: 1, ref: 0, frameNum: 2, poc: 4), Picture(bottom: true, type: 1, ref: 0, frameNum: 2, poc: 5)])
        #expect(u.count == 8)
        #expect(CodedFrame.frames(u).map(\.structure) == [.complementaryReferenceFieldPair, .complementaryReferenceFieldPair,
                                                           .complementaryNonReferenceFieldPair, .complementaryNonReferenceFieldPair])
        let times = try Convert.derivedTimes(u, fps: (25, 1), path: "t")
        // Display ranks are the order counts 0, 1, 6, 7, 2, 3, 4, 5 (ticks of 20 ms); decode ticks are 0...7; the
        // largest DTS - PTS is 4 - 2 = 2 ticks (the first B field), so DTS = (k - 2) ticks.
        #expect(times.map(\.ptsMicroseconds) == [0, 20_000, 120_000, 140_000, 40_000, 60_000, 80_000, 100_000])
        #expect(times.map(\.dtsMicroseconds) == [-40_000, -20_000, 0, 20_000, 40_000, 60_000, 80_000, 100_000])
    }

    @Test("frames and fields in one stream: a frame lasts two ticks, a field one")
    func framesAndFields() throws {
        // An IDR frame (POC 0), a P field pair (2, 3), a P frame (4), a P field pair (6, 7): 40 ms, 20, 20, 40, 20, 20.
        let u = try units([Picture(bottom: nil, type: 2, ref: 3, frameNum: 0, poc: 0, idr: true),
                           Picture(bottom: false, type: 0, ref: 2, frameNum: 1, poc: 2), Picture(bottom: true, type: 0, ref: 2, frameNum: 1, poc: 3),
                           Picture(bottom: nil, type: 0, ref: 2, frameNum: 2, poc: 4),
                           Picture(bottom: false, type: 0, ref: 2, frameNum: 3, poc: 6), Picture(bottom: true, type: 0, ref: 2, frameNum: 3, poc: 7)])
        #expect(CodedFrame.frames(u).map(\.accessUnits) == [[0], [1, 2], [3], [4, 5]])
        let times = try Convert.derivedTimes(u, fps: (25, 1), path: "t")
        #expect(times.map(\.ptsMicroseconds) == [0, 40_000, 60_000, 80_000, 120_000, 140_000])
        #expect(times.map(\.dtsMicroseconds) == times.map(\.ptsMicroseconds))
        // A progressive stream keeps its frame times: display index x 40 ms.
        let frames = try units([Picture(bottom: nil, type: 2, ref: 3, frameNum: 0, poc: 0, idr: true),
                                Picture(bottom: nil, type: 0, ref: 2, frameNum: 1, poc: 4), Picture(bottom: nil, type: 1, ref: 0, frameNum: 2, poc: 2)])
        let t = try Convert.derivedTimes(frames, fps: (25, 1), path: "t")
        #expect(t.map(\.ptsMicroseconds) == [0, 80_000, 40_000] && t.map(\.dtsMicroseconds) == [-40_000, 0, 40_000])
    }
}
