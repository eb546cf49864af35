import Foundation
import Testing
@testable import H264

// SPS, PPS, slice header and SEI parsing. Expected values are those printed by
//   ffmpeg -hide_banner -i Vectors/<file> -c copy -bsf:v trace_headers -f null - 2>&1
// (ffmpeg 5.1.9) for the same bytes, or hand arithmetic written out here.

@Suite struct SequenceParameterSetTests {
    /// The SPS of main_1080.264 (x264 --profile main --level 4.1, 1920x1080 at 20 fps), escaped bytes.
    /// Its VUI holds num_units_in_tick = 00 00 00 01 and time_scale = 00 00 00 28, which put two
    /// `00 00 03` emulation prevention sequences into the bytes ("22 00 00 03 00 02 00 00 03 00 51").
    static let mainSPS = hex("674d4029eca03c0113f2e022000003000200000300511e30632c")

    @Test func mainLevel41With20fpsTimingAndEmulationPrevention() throws {
        let nal = try NALUnit(bytes: Self.mainSPS)
        #expect(EmulationPrevention.count(in: nal.bytes) == 2)
        #expect(nal.rbsp.count == Self.mainSPS.count - 1 - 2)
        // It is the SPS of the vector file.
        #expect(try nalUnits("main_1080.264").first == nal)
        let sps = try SequenceParameterSet(rbsp: nal.rbsp)
        // trace_headers: profile_idc 77, constraint_set1_flag 1 (others 0), level_idc 41,
        // seq_parameter_set_id 0, log2_max_frame_num_minus4 0, pic_order_cnt_type 0,
        // log2_max_pic_order_cnt_lsb_minus4 2, max_num_ref_frames 4, gaps 0,
        // pic_width_in_mbs_minus1 119, pic_height_in_map_units_minus1 67, frame_mbs_only_flag 1,
        // direct_8x8_inference_flag 1, frame_cropping_flag 1, crop offsets 0 0 0 4.
        #expect(sps.profileIdc == 77 && sps.levelIdc == 41)
        #expect(!sps.constraintSet0Flag && sps.constraintSet1Flag && !sps.constraintSet2Flag && !sps.constraintSet3Flag)
        #expect(sps.seqParameterSetId == 0 && sps.chromaFormatIdc == 1)
        #expect(sps.log2MaxFrameNumMinus4 == 0 && sps.picOrderCntType == 0 && sps.log2MaxPicOrderCntLsbMinus4 == 2)
        #expect(sps.maxNumRefFrames == 4 && !sps.gapsInFrameNumValueAllowedFlag)
        #expect(sps.picWidthInMbsMinus1 == 119 && sps.picHeightInMapUnitsMinus1 == 67)
        #expect(sps.frameMbsOnlyFlag && sps.direct8x8InferenceFlag && sps.frameCroppingFlag)
        #expect(sps.frameCropLeftOffset == 0 && sps.frameCropRightOffset == 0 && sps.frameCropTopOffset == 0 && sps.frameCropBottomOffset == 4)
        // 4:2:0 frames: CropUnitY = SubHeightC · (2 − frame_mbs_only_flag) = 2 · 1 = 2.
        // width = (119 + 1) · 16 = 1920; height = (67 + 1) · 16 − 2 · 4 = 1088 − 8 = 1080.
        #expect(sps.codedHeight == 1088)
        #expect(sps.width == 1920 && sps.height == 1080)
        // VUI (trace_headers): aspect_ratio_idc 1, timing num_units_in_tick 1, time_scale 40,
        // fixed_frame_rate_flag 1, no HRD, bitstream_restriction_flag 1 with
        // motion_vectors_over_pic_boundaries_flag 1, max_bytes_per_pic_denom 0, max_bits_per_mb_denom 0,
        // log2_max_mv_length_horizontal 11, vertical 11, max_num_reorder_frames 2, max_dec_frame_buffering 4.
        let vui = try #require(sps.vuiParameters)
        #expect(vui.aspectRatioIdc == 1 && vui.sarWidth == nil)
        #expect(vui.numUnitsInTick == 1 && vui.timeScale == 40 && vui.fixedFrameRateFlag == true)
        // 40 / (2 · 1) = 20 frames per second.
        #expect(vui.frameRate == 20)
        #expect(!vui.nalHrdParametersPresentFlag && !vui.vclHrdParametersPresentFlag && vui.lowDelayHrdFlag == nil)
        #expect(vui.bitstreamRestrictionFlag && vui.motionVectorsOverPicBoundariesFlag == true)
        #expect(vui.maxBytesPerPicDenom == 0 && vui.maxBitsPerMbDenom == 0)
        #expect(vui.log2MaxMvLengthHorizontal == 11 && vui.log2MaxMvLengthVertical == 11)
        #expect(vui.maxNumReorderFrames == 2 && vui.maxDecFrameBuffering == 4)
    }

    @Test func codableUsesSpecNames() throws {
        let sps = try SequenceParameterSet(rbsp: NALUnit(bytes: Self.mainSPS).rbsp)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(sps)) as? [String: Any]
        #expect(json?["pic_order_cnt_type"] as? Int == 0)
        #expect(json?["log2_max_frame_num_minus4"] as? Int == 0)
        #expect(json?["frame_crop_bottom_offset"] as? Int == 4)
        #expect(json?["width"] as? Int == 1920 && json?["height"] as? Int == 1080)
        #expect(json?["direct_8x8_inference_flag"] as? Bool == true)
        let vui = json?["vui_parameters"] as? [String: Any]
        #expect(vui?["max_num_reorder_frames"] as? Int == 2)
        #expect(vui?["time_scale"] as? Int == 40)
        // Absent elements are left out: pic_order_cnt_type 0 has no offset_for_non_ref_pic.
        #expect(json?["offset_for_non_ref_pic"] == nil)
        #expect(try JSONDecoder().decode(SequenceParameterSet.self, from: JSONEncoder().encode(sps)) == sps)
    }

    @Test(arguments: [("i444_1080.264", 244, 3), ("i422_1080.264", 122, 2)])
    func highChromaFormatsCropTo1080(file: String, profile: Int, chromaFormat: Int) throws {
        // trace_headers, 4:4:4: profile_idc 244, level_idc 40, chroma_format_idc 3,
        // separate_colour_plane_flag 0, bit depths 0, seq_scaling_matrix_present_flag 0,
        // pic_width_in_mbs_minus1 119, pic_height_in_map_units_minus1 67, crop bottom 8.
        // 4:2:2: profile_idc 122, chroma_format_idc 2, the same sizes and crop bottom 8.
        let nals = try nalUnits(file)
        var ps = ParameterSets()
        for nal in nals { try ps.add(nal) }
        let sps = try #require(ps.sequenceParameterSets[0])
        #expect(sps.profileIdc == profile && sps.levelIdc == 40 && sps.chromaFormatIdc == chromaFormat)
        #expect(!sps.separateColourPlaneFlag && sps.bitDepthLumaMinus8 == 0 && sps.bitDepthChromaMinus8 == 0)
        #expect(!sps.seqScalingMatrixPresentFlag)
        #expect(sps.picWidthInMbsMinus1 == 119 && sps.picHeightInMapUnitsMinus1 == 67 && sps.frameCropBottomOffset == 8)
        // SubHeightC is 1 for 4:2:2 and 4:4:4, so CropUnitY = 1: 1088 − 1 · 8 = 1080
        // (the same offset in a 4:2:0 SPS would crop 16 rows).
        #expect(sps.width == 1920 && sps.height == 1080)
        // PPS: transform_8x8_mode_flag 1, pic_scaling_matrix_present_flag 0,
        // second_chroma_qp_index_offset 4 (4:4:4) or −2 (4:2:2), entropy_coding_mode_flag 1.
        let pps = try #require(ps.pictureParameterSets[0])
        #expect(pps.entropyCodingModeFlag && pps.transform8x8ModeFlag && !pps.picScalingMatrixPresentFlag)
        #expect(pps.secondChromaQpIndexOffset == (chromaFormat == 3 ? 4 : -2))
        #expect(pps.picInitQpMinus26 == 25)
    }

    @Test func fieldCodingCropUnit() throws {
        // tff.264 (x264 --tff, 64x48): trace_headers: pic_height_in_map_units_minus1 1,
        // frame_mbs_only_flag 0, mb_adaptive_frame_field_flag 1, frame_crop_bottom_offset 4.
        // FrameHeightInMbs = (2 − 0) · 2 = 4 → 64 rows; CropUnitY = 2 · (2 − 0) = 4; 64 − 4 · 4 = 48.
        var ps = ParameterSets()
        for nal in try nalUnits("tff.264") { try ps.add(nal) }
        let sps = try #require(ps.sequenceParameterSets[0])
        #expect(!sps.frameMbsOnlyFlag && sps.mbAdaptiveFrameFieldFlag)
        #expect(sps.picHeightInMapUnitsMinus1 == 1 && sps.frameCropBottomOffset == 4)
        #expect(sps.codedHeight == 64 && sps.height == 48 && sps.width == 64)
        #expect(ps.pictureParameterSets[0]?.bottomFieldPicOrderInFramePresentFlag == true)
    }

    @Test func handBuiltCroppingAndRanges() throws {
        // Baseline, 4x3 macroblocks (64x48), crop left 1, right 2, top 3, bottom 4:
        // CropUnitX = CropUnitY = 2 (4:2:0 frames): 64 − 2·3 = 58, 48 − 2·7 = 34.
        let sps = try SequenceParameterSet(rbsp: baselineSPS(crop: (1, 2, 3, 4)))
        #expect(sps.width == 58 && sps.height == 34)
        // log2_max_frame_num_minus4 15: it starts at bit 8 + 8 + 8 + 1 = 25 (after profile, flags,
        // level and the 1-bit ue(0) seq_parameter_set_id). Message in the style of FFmpeg's h264_ps.c.
        #expect(throws: H264Error.outOfRange(element: "log2_max_frame_num_minus4", value: 15, range: 0...12, bitOffset: 25)) {
            try SequenceParameterSet(rbsp: baselineSPS(log2MaxFrameNumMinus4: 15))
        }
        let error = H264Error.outOfRange(element: "log2_max_frame_num_minus4", value: 15, range: 0...12, bitOffset: 25)
        #expect("\(error)" == "log2_max_frame_num_minus4 out of range (0-12): 15 (at bit 25)")
        // seq_parameter_set_id 32 (0-31).
        #expect(throws: H264Error.outOfRange(element: "seq_parameter_set_id", value: 32, range: 0...31, bitOffset: 24)) {
            try SequenceParameterSet(rbsp: baselineSPS(id: 32))
        }
        // Cropping away the whole width: 64 / 2 = 32 crop units, at most 31 may go.
        #expect(throws: H264Error.self) { try SequenceParameterSet(rbsp: baselineSPS(crop: (16, 16, 0, 0))) }
        // Truncated: the SPS cut after 3 bytes ends while reading seq_parameter_set_id at bit 24.
        #expect(throws: H264Error.endOfData(element: "seq_parameter_set_id", bitOffset: 24)) {
            try SequenceParameterSet(rbsp: Array(baselineSPS().prefix(3)))
        }
    }

    @Test func scalingListsAndHRD() throws {
        // High profile SPS with seq_scaling_matrix_present_flag 1: list 0 coded as delta_scale −8
        // (nextScale = (8 − 8 + 256) % 256 = 0 at j = 0 → UseDefaultScalingMatrix4x4Flag), list 1 as
        // +8 then −16 (16 then nextScale 0: 16 repeated), lists 2...7 absent. VUI with NAL HRD:
        // cpb_cnt_minus1 0, bit_rate_scale 4, cpb_size_scale 3, bit_rate_value_minus1 999,
        // cpb_size_value_minus1 1999, cbr_flag 1, lengths 23, 23, 23, 24.
        var w = BitWriter()
        w.u(8, 100); w.u(8, 0); w.u(8, 31); w.ue(0)
        w.ue(1); w.ue(0); w.ue(0); w.flag(false)       // chroma_format_idc 1, bit depths 0, bypass 0
        w.flag(true)                                    // seq_scaling_matrix_present_flag
        w.flag(true); w.se(-8)                          // list 0: default
        w.flag(true); w.se(8); w.se(-16)                // list 1: 16 × 16
        for _ in 2..<8 { w.flag(false) }
        w.ue(0); w.ue(2); w.ue(1); w.flag(false)        // frame num, poc type 2, 1 ref, no gaps
        w.ue(3); w.ue(2); w.flag(true); w.flag(true); w.flag(false)
        w.flag(true)                                    // vui_parameters_present_flag
        w.flag(false); w.flag(false); w.flag(false); w.flag(false) // aspect, overscan, video signal, chroma loc
        w.flag(false)                                   // timing
        w.flag(true)                                    // nal_hrd_parameters_present_flag
        w.ue(0); w.u(4, 4); w.u(4, 3); w.ue(999); w.ue(1999); w.flag(true)
        w.u(5, 23); w.u(5, 23); w.u(5, 23); w.u(5, 24)
        w.flag(false)                                   // vcl hrd
        w.flag(true)                                    // low_delay_hrd_flag
        w.flag(false); w.flag(false)                    // pic_struct, bitstream_restriction
        w.trailing()
        let sps = try SequenceParameterSet(rbsp: w.bytes)
        #expect(sps.seqScalingListPresentFlag == [true, true, false, false, false, false, false, false])
        #expect(sps.useDefaultScalingMatrixFlag[0] && !sps.useDefaultScalingMatrixFlag[1])
        #expect(sps.seqScalingLists[1] == [Int](repeating: 16, count: 16))
        let hrd = try #require(sps.vuiParameters?.nalHrdParameters)
        #expect(hrd.cpbCntMinus1 == 0 && hrd.bitRateScale == 4 && hrd.cpbSizeScale == 3)
        #expect(hrd.bitRateValueMinus1 == [999] && hrd.cpbSizeValueMinus1 == [1999] && hrd.cbrFlag == [true])
        #expect(hrd.timeOffsetLength == 24)
        #expect(sps.vuiParameters?.lowDelayHrdFlag == true && sps.vuiParameters?.bitstreamRestrictionFlag == false)
        #expect(sps.vuiParameters?.maxNumReorderFrames == nil)
        #expect(sps.width == 64 && sps.height == 48)
    }
}

@Suite struct PictureParameterSetTests {
    @Test func scalingListsInPPS() throws {
        // cqm.264 (x264 --cqm jvt --cqm4iy 6,12,...): trace_headers PPS: transform_8x8_mode_flag 1,
        // pic_scaling_matrix_present_flag 1, list 0 delta_scale −2, 6, 6, 6, −6, −6, 6, 6, 0, 6, 6, −6, −6, 6, 6, 6;
        // list 1 delta_scale 8, −16; flags for lists 2, 4, 5 are 0; lists 3, 6, 7 as list 1;
        // second_chroma_qp_index_offset −2.
        // List 0 from 8: 6, 12, 18, 24, 18, 12, 18, 24, 24, 30, 36, 30, 24, 30, 36, 42.
        // List 1: 8 + 8 = 16, then nextScale 16 − 16 = 0, so 16 repeats: 16 × 16.
        var ps = ParameterSets()
        for nal in try nalUnits("cqm.264") { try ps.add(nal) }
        let pps = try #require(ps.pictureParameterSets[0])
        #expect(pps.transform8x8ModeFlag && pps.picScalingMatrixPresentFlag)
        #expect(pps.picScalingListPresentFlag == [true, true, false, true, false, false, true, true])
        #expect(pps.picScalingLists[0] == [6, 12, 18, 24, 18, 12, 18, 24, 24, 30, 36, 30, 24, 30, 36, 42])
        #expect(pps.picScalingLists[1] == [Int](repeating: 16, count: 16))
        #expect(pps.picScalingLists[6] == [Int](repeating: 16, count: 64))
        #expect(pps.secondChromaQpIndexOffset == -2 && pps.chromaQpIndexOffset == -2)
    }

    @Test func x264PPSFields() throws {
        // aud_slice_parameter_sets.264, trace_headers PPS: pic_parameter_set_id 0, seq_parameter_set_id 0,
        // entropy_coding_mode_flag 1, bottom_field_pic_order_in_frame_present_flag 0, num_slice_groups_minus1 0,
        // num_ref_idx_l0_default_active_minus1 2, l1 0, weighted_pred_flag 1, weighted_bipred_idc 2,
        // pic_init_qp_minus26 14, pic_init_qs_minus26 0, chroma_qp_index_offset −2,
        // deblocking_filter_control_present_flag 1, constrained_intra_pred_flag 0,
        // redundant_pic_cnt_present_flag 0, transform_8x8_mode_flag 1, pic_scaling_matrix_present_flag 0,
        // second_chroma_qp_index_offset −2.
        var ps = ParameterSets()
        for nal in try nalUnits("aud_slice_parameter_sets.264") { try ps.add(nal) }
        let pps = try #require(ps.pictureParameterSets[0])
        #expect(pps.picParameterSetId == 0 && pps.seqParameterSetId == 0 && pps.entropyCodingModeFlag)
        #expect(!pps.bottomFieldPicOrderInFramePresentFlag && pps.numSliceGroupsMinus1 == 0)
        #expect(pps.numRefIdxL0DefaultActiveMinus1 == 2 && pps.numRefIdxL1DefaultActiveMinus1 == 0)
        #expect(pps.weightedPredFlag && pps.weightedBipredIdc == 2)
        #expect(pps.picInitQpMinus26 == 14 && pps.picInitQsMinus26 == 0 && pps.chromaQpIndexOffset == -2)
        #expect(pps.deblockingFilterControlPresentFlag && !pps.constrainedIntraPredFlag && !pps.redundantPicCntPresentFlag)
        #expect(pps.transform8x8ModeFlag && !pps.picScalingMatrixPresentFlag && pps.secondChromaQpIndexOffset == -2)
        // The SPS (trace_headers): profile_idc 100, level_idc 10, 64x48, time_scale 50, max_num_reorder_frames 2.
        let sps = try #require(ps.sequenceParameterSets[0])
        #expect(sps.profileIdc == 100 && sps.levelIdc == 10 && sps.width == 64 && sps.height == 48)
        #expect(sps.vuiParameters?.timeScale == 50 && sps.vuiParameters?.maxNumReorderFrames == 2)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(pps)) as? [String: Any]
        #expect(json?["entropy_coding_mode_flag"] as? Bool == true)
        #expect(json?["transform_8x8_mode_flag"] as? Bool == true)
    }

    @Test func sliceGroupMapType6IsBoundedByTheSPS() throws {
        // Against x264's 64x48 SPS (4 × 3 = 12 map units): two slice groups, slice_group_map_type 6,
        // pic_size_in_map_units_minus1 must be 12 − 1 = 11. A value of 2^32 − 2 is rejected before
        // anything is allocated for it; 11 with no slice_group_id bits left ends the data
        // (12 entries × Ceil(Log2(2)) = 1 bit = 12 bits needed, 0 present).
        var ps = ParameterSets()
        for nal in try nalUnits("aud_slice_parameter_sets.264") where nal.nalUnitType == .sps { try ps.add(nal) }
        func pps(_ size: Int) -> [UInt8] {
            var w = BitWriter()
            w.ue(0); w.ue(0); w.flag(false); w.flag(false); w.ue(1); w.ue(6); w.ue(size)
            return w.bytes
        }
        // Bits before pic_size_in_map_units_minus1: 1 + 1 + 1 + 1 + 3 (ue 1 = 010) + 5 (ue 6 = 00111) = 12.
        #expect(throws: H264Error.outOfRange(element: "pic_size_in_map_units_minus1", value: 4_294_967_294, range: 11...11, bitOffset: 12)) {
            try PictureParameterSet(rbsp: pps(4_294_967_294), sequenceParameterSets: ps.sequenceParameterSets)
        }
        // ue(11) = 0001100 (7 bits) ends at bit 19; BitWriter pads to 24 bits, so 5 bits remain.
        #expect(throws: H264Error.endOfData(element: "slice_group_id[12 entries]", bitOffset: 19)) {
            try PictureParameterSet(rbsp: pps(11), sequenceParameterSets: ps.sequenceParameterSets)
        }
    }

    @Test func missingSPSNamesTheId() throws {
        // pic_parameter_set_id 0 ('1'), seq_parameter_set_id 3 ('00100') at bit 1.
        var w = BitWriter()
        w.ue(0); w.ue(3); w.trailing()
        #expect(throws: H264Error.missingParameterSet(element: "seq_parameter_set_id", id: 3, bitOffset: 1)) {
            try PictureParameterSet(rbsp: w.bytes, sequenceParameterSets: [:])
        }
    }
}

@Suite struct SEITests {
    @Test func userDataUnregisteredFromX264() throws {
        // sei_first_ref2.264, trace_headers SEI: last_payload_type_byte 5; ff_byte 255, ff_byte 255,
        // last_payload_size_byte 123 → payloadSize = 255 + 255 + 123 = 633;
        // uuid_iso_iec_11578 220 69 233 189 230 217 72 183 150 44 216 32 217 35 238 239;
        // user_data_payload_byte[0...] 120 50 54 52 32 45 ("x264 -"), ..., user_data_payload_byte[616] 0.
        let sei = try #require(try nalUnits("sei_first_ref2.264").first)
        #expect(sei.nalUnitType == .sei)
        let messages = try SEIMessage.parse(rbsp: sei.rbsp)
        #expect(messages.count == 1)
        let m = messages[0]
        #expect(m.payloadType == 5 && m.payloadSize == 633)
        let user = try #require(m.userDataUnregistered)
        #expect(user.uuidIsoIec11578 == [220, 69, 233, 189, 230, 217, 72, 183, 150, 44, 216, 32, 217, 35, 238, 239])
        #expect(user.uuidString == "dc45e9bd-e6d9-48b7-962c-d820d923eeef")
        // 633 − 16 = 617 payload bytes, the last (index 616) the NUL that ends the string.
        #expect(user.userDataPayloadBytes.count == 617 && user.userDataPayloadBytes.last == 0)
        #expect(user.string.hasPrefix("x264 - core 164"))
        #expect(user.string.hasSuffix("ip_ratio=1.40 aq=0") || user.string.contains("options:"))
    }

    @Test func truncatedPayload() {
        // payloadType 6, payloadSize 10, 1 byte of payload: truncated at byte 2.
        #expect(throws: H264Error.truncated(element: "sei_payload(6)", byteOffset: 2, needed: 10, available: 1)) {
            try SEIMessage.parse(rbsp: [0x06, 0x0A, 0x80])
        }
        // An 0xFF byte says the value goes on: payloadType 255 + ... with nothing after it ends at byte 1; payloadType
        // 6, then payloadSize 255 + ... ends at byte 2.
        #expect(throws: H264Error.truncated(element: "payloadType", byteOffset: 1, needed: 1, available: 0)) {
            try SEIMessage.parse(rbsp: [0xFF])
        }
        #expect(throws: H264Error.truncated(element: "payloadSize", byteOffset: 2, needed: 1, available: 0)) {
            try SEIMessage.parse(rbsp: [0x06, 0xFF])
        }
        // payloadType 0xFF 0x01 = 256, payloadSize 0xFF 0x00 = 255, and 3 payload bytes: sei_payload(256) truncated at byte 4.
        #expect(throws: H264Error.truncated(element: "sei_payload(256)", byteOffset: 4, needed: 255, available: 3)) {
            try SEIMessage.parse(rbsp: [0xFF, 0x01, 0xFF, 0x00, 0x01, 0x02, 0x03])
        }
    }
}
