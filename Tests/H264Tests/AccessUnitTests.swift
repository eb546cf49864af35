import Foundation
import Testing
@testable import H264

// Access unit splitting (H.264 7.4.1.2.3 and 7.4.1.2.4). Expected values from
//   ffmpeg -hide_banner -i Vectors/<file> -c copy -bsf:v trace_headers -f null - 2>&1
// whose "Packet: N bytes" lines are FFmpeg's own access unit boundaries (its h264 parser), and
// whose slice headers give slice_type, nal_ref_idc and frame_num per picture.

/// Byte sizes of the access units in an Annex B stream: from the start code of each access
/// unit's first NAL unit (3 bytes, or 4 with its zero_byte) to that of the next one.
func accessUnitByteSizes(_ data: [UInt8]) throws -> [Int] {
    let units = try AnnexB.split(data)
    let aus = try AccessUnit.split(units.map(\.nal))
    let starts = aus.map { au -> Int in
        let offset = units[au.nalUnitIndices.lowerBound].offset
        return offset >= 4 && data[offset - 4] == 0 ? offset - 4 : offset - 3
    }
    return zip(starts, starts.dropFirst() + [data.count]).map { $1 - $0 }
}

@Suite struct AccessUnitTests {
    @Test func openGOPStream() throws {
        // open_gop.264: x264 --open-gop --keyint 4 --bframes 2 --b-adapt 0, 12 frames of 64x48.
        // trace_headers packets: 1052, 20, 11, 12, 417, 24, 11, 13, 417, 26, 11, 12 bytes;
        // slice_type 7, 5, 6, 6, 7, 5, 6, 6, 7, 5, 6, 6 (I P B B ...); nal_unit_type 5 only in the first;
        // nal_ref_idc 3, 2, 2, 0, 2, 2, 2, 0, 2, 2, 2, 0; the I pictures at 4 and 8 follow an SEI
        // with a Recovery Point: recovery_frame_cnt 0, exact_match_flag 1, broken_link_flag 0,
        // changing_slice_group_idc 0.
        let data = try vector("open_gop.264")
        #expect(try accessUnitByteSizes(data) == [1052, 20, 11, 12, 417, 24, 11, 13, 417, 26, 11, 12])
        let aus = try AccessUnit.split(try AnnexB.split(data).map(\.nal))
        #expect(aus.count == 12)
        #expect(aus.map(\.index) == Array(0..<12))
        #expect(aus.flatMap(\.sliceHeaders).map(\.sliceType) == [7, 5, 6, 6, 7, 5, 6, 6, 7, 5, 6, 6])
        #expect(aus.map(\.sliceTypes) == [[.i], [.p], [.b], [.b], [.i], [.p], [.b], [.b], [.i], [.p], [.b], [.b]])
        #expect(aus.map(\.isIDR) == [true] + [Bool](repeating: false, count: 11))
        #expect(aus.map(\.isReference) == [true, true, true, false, true, true, true, false, true, true, true, false])
        // frame_num 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9 (trace_headers).
        #expect(aus.map { $0.sliceHeaders[0].frameNum } == [0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9])
        // Access unit 0: SPS, PPS, SEI (x264's options), IDR slice; 4 and 8: SPS, PPS, SEI, slice.
        #expect(aus[0].nalUnits.map(\.nalUnitType) == [.sps, .pps, .sei, .idrSlice])
        #expect(aus[4].nalUnits.map(\.nalUnitType) == [.sps, .pps, .sei, .slice])
        #expect(aus[0].nalUnitIndices == 0..<4 && aus[1].nalUnitIndices == 4..<5)
        for i in [4, 8] {
            let sei = try #require(aus[i].nalUnits.first { $0.nalUnitType == .sei })
            let recovery = try #require(try SEIMessage.parse(rbsp: sei.rbsp).first?.recoveryPoint)
            #expect(recovery.recoveryFrameCnt == 0 && recovery.exactMatchFlag && !recovery.brokenLinkFlag && recovery.changingSliceGroupIdc == 0)
        }
    }

    @Test func fourSlicesPerPicture() throws {
        // slices4.264: x264 --slices 4, 3 frames of 64x64 (4 macroblock rows).
        // trace_headers packets: 1198, 42, 59 bytes; each with four slice headers, first_mb_in_slice
        // 0, 4, 8, 12; slice_type 7 (I, IDR) in the first picture, 5 (P) in the others; frame_num 0, 1, 2.
        let data = try vector("slices4.264")
        #expect(try accessUnitByteSizes(data) == [1198, 42, 59])
        let aus = try AccessUnit.split(try AnnexB.split(data).map(\.nal))
        #expect(aus.count == 3)
        #expect(aus.map { $0.sliceHeaders.map(\.firstMbInSlice) } == [[0, 4, 8, 12], [0, 4, 8, 12], [0, 4, 8, 12]])
        #expect(aus.map(\.sliceTypes) == [[.i, .i, .i, .i], [.p, .p, .p, .p], [.p, .p, .p, .p]])
        #expect(aus.map { $0.sliceHeaders.map(\.frameNum) } == [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2]])
    }

    @Test func seiBeforeSPSAndParameterSetsWithNalRefIdc2() throws {
        // sei_first_ref2.264: SEI, then SPS and PPS with nal_ref_idc 2 (headers 0x47, 0x48), then
        // the IDR slice; 4-byte start codes before the SEI and SPS, 3-byte before the PPS and slice.
        // trace_headers: SEI nal_ref_idc 0 type 6; SPS nal_ref_idc 2 type 7; PPS nal_ref_idc 2 type 8;
        // slice nal_ref_idc 3 type 5, slice_type 7, idr_pic_id 0; one packet of 1056 bytes.
        let data = try vector("sei_first_ref2.264")
        let units = try AnnexB.split(data)
        #expect(units.map(\.nal.nalUnitType) == [.sei, .sps, .pps, .idrSlice])
        #expect(units.map(\.nal.nalRefIdc) == [0, 2, 2, 3])
        // Offsets: SEI at 4; SEI size s; SPS at 4 + s + 4; PPS at SPS + SPS size + 3; slice at PPS + PPS size + 3.
        let sizes = units.map(\.size)
        #expect(units.map(\.offset) == [4, 8 + sizes[0], 11 + sizes[0] + sizes[1], 14 + sizes[0] + sizes[1] + sizes[2]])
        // The SEI's payload is 633 bytes: 1 type + 3 size bytes + 633 + 1 trailing byte (0x80), plus the header.
        #expect(sizes[0] == 1 + 1 + 3 + 633 + 1)
        #expect(data.count == 1056)
        let aus = try AccessUnit.split(units.map(\.nal))
        #expect(aus.count == 1)
        #expect(aus[0].sliceHeaders.first?.idrPicId == 0)
        #expect(try accessUnitByteSizes(data) == [1056])
    }

    @Test func interlacedStreamFields() throws {
        // tff.264: trace_headers packets 1025 and 19 bytes; slice field_pic_flag 0,
        // pic_order_cnt_lsb 0 then 2, delta_pic_order_cnt_bottom 1 in both.
        let data = try vector("tff.264")
        #expect(try accessUnitByteSizes(data) == [1025, 19])
        let aus = try AccessUnit.split(try AnnexB.split(data).map(\.nal))
        #expect(aus.map { $0.sliceHeaders[0].picOrderCntLsb } == [0, 2])
        #expect(aus.map { $0.sliceHeaders[0].deltaPicOrderCntBottom } == [1, 1])
        #expect(aus.map { $0.sliceHeaders[0].fieldPicFlag } == [false, false])
    }

    @Test func endOfSequenceClosesTheAccessUnit() throws {
        // IDR, end of sequence (0x0A), then the same IDR slice again: without the end of sequence
        // the two slices would look like one picture (same frame_num, idr_pic_id, POC); with it,
        // the second starts a new access unit.
        let nals = try nalUnits("aud_slice_parameter_sets.264")
        let idr = try #require(try nalUnits("aud_slice.264").last)
        let eos = try NALUnit(bytes: [0x0A])
        let together = try AccessUnit.split(nals + [idr, idr])
        #expect(together.count == 1 && together[0].sliceHeaders.count == 2)
        let apart = try AccessUnit.split(nals + [idr, eos, idr])
        #expect(apart.count == 2)
        #expect(apart[0].nalUnits.last == eos)
        // A slice naming an unknown PPS: the error names it and its bit offset. trace_headers shows
        // pic_parameter_set_id at bit 16 counting the 8 header bits; in the RBSP that is bit 16 − 8 = 8.
        #expect(throws: H264Error.missingParameterSet(element: "pic_parameter_set_id", id: 0, bitOffset: 8)) {
            try AccessUnit.split([idr])
        }
    }
}

@Suite struct InspectJSONTests {
    @Test func nalUnitsAndAccessUnitsEncode() throws {
        // slices4.264: SPS at byte 4 (after 00 00 00 01), nal_unit_type 7, nal_ref_idc 3.
        let units = try AnnexB.split(vector("slices4.264"))
        let nal = try JSONSerialization.jsonObject(with: JSONEncoder().encode(units[0])) as? [String: Any]
        #expect(nal?["offset"] as? Int == 4 && nal?["nal_unit_type"] as? Int == 7 && nal?["nal_ref_idc"] as? Int == 3)
        #expect(nal?["size"] as? Int == units[0].nal.bytes.count)
        let aus = try AccessUnit.split(units.map(\.nal))
        let au = try JSONSerialization.jsonObject(with: JSONEncoder().encode(aus[1])) as? [String: Any]
        // NAL units: 0 SPS, 1 PPS, 2 SEI, 3...6 the IDR picture's four slices, so access unit 1
        // is NAL units 7...10, its four P slices.
        #expect(au?["index"] as? Int == 1)
        #expect(au?["nal_unit_indices"] as? [Int] == [7, 8, 9, 10])
        #expect(au?["slice_types"] as? [String] == ["P", "P", "P", "P"])
        #expect(au?["idr"] as? Bool == false && au?["reference"] as? Bool == true)
    }
}
