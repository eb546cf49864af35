import Foundation
import Testing
@testable import H264

// Field pictures: each field an access unit (7.4.1.2.4), fields paired into frames as H.264 clause 3 defines
// complementary reference (3.30) and non-reference (3.29) field pairs. The NAL units are built here bit by bit: an
// SPS with frame_mbs_only_flag 0 (4x3 map units: frames of 4x6 macroblocks, fields of 4x3), a CAVLC PPS, and slice
// headers up to where SliceHeader stops (their slice data is left out). The end-to-end tests check a stream that
// FFmpeg decodes.

/// One slice as a field (or a frame when `bottom` is nil) of the SPS below (pic_order_cnt_type 2, 4-bit frame_num).
private struct Field {
    var bottom: Bool?
    var frameNum: Int
    var ref = 2
    var idrPicId: Int?
    var firstMb = 0
}

private func nals(_ fields: [Field]) -> [NALUnit] {
    var pps = BitWriter()
    pps.ue(0); pps.ue(0)          // pic_parameter_set_id, seq_parameter_set_id
    pps.flag(false); pps.flag(false)  // entropy_coding_mode_flag, bottom_field_pic_order_in_frame_present_flag
    pps.ue(0); pps.ue(0); pps.ue(0)   // num_slice_groups_minus1, num_ref_idx_l0/l1_default_active_minus1
    pps.flag(false); pps.u(2, 0)      // weighted_pred_flag, weighted_bipred_idc
    pps.se(0); pps.se(0); pps.se(0)   // pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset
    pps.flag(true); pps.flag(false); pps.flag(false)  // deblocking control, constrained intra, redundant_pic_cnt
    pps.trailing()
    var out = [NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: baselineSPS(frameMbsOnly: false)),
               NALUnit(nalRefIdc: 3, nalUnitType: .pps, rbsp: pps.bytes)]
    for f in fields {
        var w = BitWriter()
        w.ue(f.firstMb); w.ue(7); w.ue(0)  // first_mb_in_slice, slice_type I (all), pic_parameter_set_id
        w.u(4, f.frameNum)
        w.flag(f.bottom != nil)            // field_pic_flag
        if let b = f.bottom { w.flag(b) }  // bottom_field_flag
        if let id = f.idrPicId { w.ue(id) }
        w.trailing()
        out.append(NALUnit(nalRefIdc: f.ref, nalUnitType: f.idrPicId == nil ? .slice : .idrSlice, rbsp: w.bytes))
    }
    return out
}

@Suite struct FieldPictureTests {
    @Test("each field is an access unit with its field_pic_flag and bottom_field_flag; a reference pair is one frame")
    func referencePair() throws {
        let units = try AccessUnit.split(nals([Field(bottom: false, frameNum: 0, ref: 3, idrPicId: 0), Field(bottom: true, frameNum: 0),
                                               Field(bottom: false, frameNum: 1), Field(bottom: true, frameNum: 1)]))
        #expect(units.count == 4)
        #expect(units.map(\.fieldPicFlag) == [true, true, true, true])
        #expect(units.map(\.bottomFieldFlag) == [false, true, false, true])
        #expect(units.map(\.isIDR) == [true, false, false, false])
        #expect(CodedFrame.frames(units) == [CodedFrame(index: 0, accessUnits: [0, 1], structure: .complementaryReferenceFieldPair),
                                              CodedFrame(index: 1, accessUnits: [2, 3], structure: .complementaryReferenceFieldPair)])
        // The JSON shape carries both flags.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(units[1])) as? [String: Any]
        #expect(json?["field_pic_flag"] as? Bool == true && json?["bottom_field_flag"] as? Bool == true)
    }

    @Test("fields that do not pair: same parity, another frame_num, reference with non-reference, an IDR second field")
    func nonPaired() throws {
        func structures(_ fields: [Field]) throws -> [[Int]] {
            try CodedFrame.frames(AccessUnit.split(nals(fields))).map(\.accessUnits)
        }
        // Two top fields: two frames, each a non-paired field. (With one frame_num they would be two slices of one
        // picture, 7.4.1.2.4, so the pairing rule is asked about their headers directly.)
        let same = try CodedFrame.frames(AccessUnit.split(nals([Field(bottom: false, frameNum: 0), Field(bottom: false, frameNum: 1)])))
        #expect(same.map(\.structure) == [.nonPairedField, .nonPairedField])
        var sets = ParameterSets()
        let list = nals([Field(bottom: false, frameNum: 0), Field(bottom: false, frameNum: 0), Field(bottom: true, frameNum: 0)])
        for n in list.prefix(2) { try sets.add(n) }
        let headers = try list.dropFirst(2).map { try SliceHeader(nal: $0, parameterSets: sets) }
        #expect(CodedFrame.pairing(headers[0], headers[1]) == nil)
        #expect(CodedFrame.pairing(headers[0], headers[2]) == .complementaryReferenceFieldPair)
        #expect(try structures([Field(bottom: false, frameNum: 0), Field(bottom: true, frameNum: 1)]) == [[0], [1]])
        #expect(try structures([Field(bottom: false, frameNum: 0), Field(bottom: true, frameNum: 0, ref: 0)]) == [[0], [1]])
        #expect(try structures([Field(bottom: false, frameNum: 0, ref: 0), Field(bottom: true, frameNum: 0)]) == [[0], [1]])
        // An IDR field after a field of the same frame_num starts over (3.30: the second field is not an IDR).
        #expect(try structures([Field(bottom: false, frameNum: 0, idrPicId: 0), Field(bottom: true, frameNum: 0, idrPicId: 1)]) == [[0], [1]])
        // Non-reference fields of opposite parity and one frame_num pair (3.29).
        let nonRef = try CodedFrame.frames(AccessUnit.split(nals([Field(bottom: true, frameNum: 2, ref: 0), Field(bottom: false, frameNum: 2, ref: 0)])))
        #expect(nonRef == [CodedFrame(index: 0, accessUnits: [0, 1], structure: .complementaryNonReferenceFieldPair)])
    }

    @Test("a field pairs once; frames and fields mix; access units without a picture belong to no frame")
    func mixed() throws {
        // frame, top, bottom, top (same frame_num: the first field of the third frame is already paired), frame.
        var list = nals([Field(bottom: nil, frameNum: 0, idrPicId: 0), Field(bottom: false, frameNum: 1), Field(bottom: true, frameNum: 1),
                         Field(bottom: false, frameNum: 1), Field(bottom: nil, frameNum: 2)])
        // An end-of-stream NAL unit closes the last access unit; an SEI after it is an access unit without a picture.
        list.append(NALUnit(nalRefIdc: 0, nalUnitType: .endOfStream, rbsp: []))
        list.append(NALUnit(nalRefIdc: 0, nalUnitType: .sei, rbsp: [5, 1, 0, 0x80]))
        let units = try AccessUnit.split(list)
        #expect(units.count == 6)
        let frames = CodedFrame.frames(units)
        #expect(frames.map(\.accessUnits) == [[0], [1, 2], [3], [4]])
        #expect(frames.map(\.structure) == [.frame, .complementaryReferenceFieldPair, .nonPairedField, .frame])
        #expect(frames.map(\.index) == [0, 1, 2, 3])
    }

    @Test("first_mb_in_slice of a field is below the field's macroblocks (half the frame's)")
    func fieldSize() throws {
        // Frames of 4x6 = 24 macroblocks, fields of 12: 11 is the field's last, 12 is out of range in a field and
        // allowed in a frame.
        #expect(try AccessUnit.split(nals([Field(bottom: false, frameNum: 0, firstMb: 11)])).count == 1)
        #expect(try AccessUnit.split(nals([Field(bottom: nil, frameNum: 0, firstMb: 12)])).count == 1)
        #expect(throws: H264Error.outOfRange(element: "first_mb_in_slice", value: 12, range: 0...11, bitOffset: 0)) {
            try AccessUnit.split(nals([Field(bottom: true, frameNum: 0, firstMb: 12)]))
        }
    }
}
