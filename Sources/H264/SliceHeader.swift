/// `slice_type % 5` (H.264 Table 7-6).
public enum SliceType: Int, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case p = 0, b = 1, i = 2, sp = 3, si = 4

    /// "P", "B", "I", "SP" or "SI".
    public var description: String {
        switch self {
        case .p: return "P"
        case .b: return "B"
        case .i: return "I"
        case .sp: return "SP"
        case .si: return "SI"
        }
    }
}

/// The start of `slice_header()` (H.264 clause 7.3.3): every element up to `redundant_pic_cnt`,
/// which is what clause 7.4.1.2.4 needs to find the first VCL NAL unit of a new primary coded
/// picture. Parsing stops there (`direct_spatial_mv_pred_flag` and later are not read).
///
/// The NAL unit header's `nal_unit_type` and `nal_ref_idc` are carried along because 7.4.1.2.4
/// compares them too. `Codable` uses the specification's snake_case names.
public struct SliceHeader: Codable, Hashable, Sendable {
    /// From the NAL unit header: 1 (non-IDR), 2 (data partition A) or 5 (IDR).
    public var nalUnitType: Int
    /// From the NAL unit header: 0...3; 0 means the picture is not used for reference.
    public var nalRefIdc: Int
    /// 0...PicSizeInMbs − 1.
    public var firstMbInSlice: Int
    /// 0...9; values 5...9 also say every slice of the picture has type `slice_type − 5`.
    public var sliceType: Int
    /// 0...255.
    public var picParameterSetId: Int
    /// 0...2, present when `separate_colour_plane_flag` is 1.
    public var colourPlaneId: Int?
    /// 0...MaxFrameNum − 1, `log2_max_frame_num_minus4 + 4` bits.
    public var frameNum: Int
    /// True when the slice belongs to a field, not a frame (H.264 7.4.3); present, and possibly true, only when the
    /// SPS's `frame_mbs_only_flag` is 0 (false otherwise). A field is a picture of every other row of a frame:
    /// PicHeightInMbs = FrameHeightInMbs / 2, so first_mb_in_slice is below half the frame's macroblocks.
    public var fieldPicFlag: Bool
    /// True for a bottom field (the frame's odd rows, counting from 0), false for a top field or a frame (7.4.3);
    /// present when `field_pic_flag` is 1.
    public var bottomFieldFlag: Bool
    /// 0...65,535, present in IDR pictures.
    public var idrPicId: Int?
    /// Present when `pic_order_cnt_type` is 0.
    public var picOrderCntLsb: Int?
    public var deltaPicOrderCntBottom: Int?
    /// `delta_pic_order_cnt[0]` and `[1]`: 0, 1 or 2 entries, present when
    /// `pic_order_cnt_type` is 1 and `delta_pic_order_always_zero_flag` is 0.
    public var deltaPicOrderCnt: [Int]
    /// 0...127, present when the PPS's `redundant_pic_cnt_present_flag` is 1.
    public var redundantPicCnt: Int?

    enum CodingKeys: String, CodingKey {
        case nalUnitType = "nal_unit_type"
        case nalRefIdc = "nal_ref_idc"
        case firstMbInSlice = "first_mb_in_slice"
        case sliceType = "slice_type"
        case picParameterSetId = "pic_parameter_set_id"
        case colourPlaneId = "colour_plane_id"
        case frameNum = "frame_num"
        case fieldPicFlag = "field_pic_flag"
        case bottomFieldFlag = "bottom_field_flag"
        case idrPicId = "idr_pic_id"
        case picOrderCntLsb = "pic_order_cnt_lsb"
        case deltaPicOrderCntBottom = "delta_pic_order_cnt_bottom"
        case deltaPicOrderCnt = "delta_pic_order_cnt"
        case redundantPicCnt = "redundant_pic_cnt"
    }

    /// `slice_type % 5`.
    public var type: SliceType { SliceType(rawValue: sliceType % 5) ?? .p }
    /// IdrPicFlag: `nal_unit_type` is 5.
    public var isIDR: Bool { nalUnitType == 5 }

    /// Parses the slice header of a coded slice NAL unit.
    /// - Parameters:
    ///   - nal: a NAL unit of type 1, 2 or 5.
    ///   - parameterSets: the parameter sets seen so far; the PPS named by the slice and its SPS
    ///     must be there.
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` for another NAL unit type;
    ///   ``H264Error/missingParameterSet(element:id:bitOffset:)`` when the PPS or its SPS is
    ///   unknown; otherwise ``H264Error`` naming the bit offset (in the RBSP), element and range.
    public init(nal: NALUnit, parameterSets: ParameterSets) throws {
        // The elements parsed here take at most about 370 bits (47 bytes, 71 when escaped), so
        // only the first 128 escaped bytes are unescaped rather than the whole slice.
        let prefix = Array(nal.bytes.dropFirst().prefix(128))
        try self.init(rbsp: EmulationPrevention.remove(prefix), nalUnitType: nal.nalUnitType.rawValue, nalRefIdc: nal.nalRefIdc, parameterSets: parameterSets)
    }

    /// Parses a slice header from the RBSP of a coded slice NAL unit; see ``init(nal:parameterSets:)``.
    public init(rbsp: [UInt8], nalUnitType: Int, nalRefIdc: Int, parameterSets: ParameterSets) throws {
        guard nalUnitType == 1 || nalUnitType == 2 || nalUnitType == 5 else {
            throw H264Error.invalid(element: "nal_unit_type", reason: "\(nalUnitType) carries no slice header (expected 1, 2 or 5)", byteOffset: 0)
        }
        self.nalUnitType = nalUnitType
        self.nalRefIdc = nalRefIdc
        var r = BitReader(rbsp)
        firstMbInSlice = try r.ue("first_mb_in_slice")
        sliceType = try r.ue("slice_type", 0...9)
        let ppsOffset = r.bitOffset
        picParameterSetId = try r.ue("pic_parameter_set_id", 0...255)
        guard let pps = parameterSets.pictureParameterSets[picParameterSetId] else {
            throw H264Error.missingParameterSet(element: "pic_parameter_set_id", id: picParameterSetId, bitOffset: ppsOffset)
        }
        guard let sps = parameterSets.sequenceParameterSets[pps.seqParameterSetId] else {
            throw H264Error.missingParameterSet(element: "seq_parameter_set_id", id: pps.seqParameterSetId, bitOffset: ppsOffset)
        }
        let picSizeInMbs = sps.picWidthInMbs * sps.frameHeightInMbs
        guard firstMbInSlice < picSizeInMbs else {
            throw H264Error.outOfRange(element: "first_mb_in_slice", value: Int64(firstMbInSlice), range: 0...Int64(picSizeInMbs - 1), bitOffset: 0)
        }
        if sps.separateColourPlaneFlag {
            colourPlaneId = try r.u(2, "colour_plane_id", 0...2)
        }
        frameNum = try r.u(sps.log2MaxFrameNumMinus4 + 4, "frame_num")
        fieldPicFlag = false
        bottomFieldFlag = false
        if !sps.frameMbsOnlyFlag {
            fieldPicFlag = try r.flag("field_pic_flag")
            if fieldPicFlag {
                bottomFieldFlag = try r.flag("bottom_field_flag")
            }
        }
        // A field has half the frame's macroblocks (PicSizeInMbs, 7.4.3).
        if fieldPicFlag && firstMbInSlice >= picSizeInMbs / 2 {
            throw H264Error.outOfRange(element: "first_mb_in_slice", value: Int64(firstMbInSlice), range: 0...Int64(picSizeInMbs / 2 - 1), bitOffset: 0)
        }
        if nalUnitType == 5 {
            idrPicId = try r.ue("idr_pic_id", 0...65535)
        }
        deltaPicOrderCnt = []
        if sps.picOrderCntType == 0 {
            picOrderCntLsb = try r.u((sps.log2MaxPicOrderCntLsbMinus4 ?? 0) + 4, "pic_order_cnt_lsb")
            if pps.bottomFieldPicOrderInFramePresentFlag && !fieldPicFlag {
                deltaPicOrderCntBottom = try r.se("delta_pic_order_cnt_bottom")
            }
        }
        if sps.picOrderCntType == 1 && sps.deltaPicOrderAlwaysZeroFlag != true {
            deltaPicOrderCnt.append(try r.se("delta_pic_order_cnt[0]"))
            if pps.bottomFieldPicOrderInFramePresentFlag && !fieldPicFlag {
                deltaPicOrderCnt.append(try r.se("delta_pic_order_cnt[1]"))
            }
        }
        if pps.redundantPicCntPresentFlag {
            redundantPicCnt = try r.ue("redundant_pic_cnt", 0...127)
        }
    }

    /// True when a VCL NAL unit with header `next` starts a new primary coded picture after one
    /// with header `self` (H.264 7.4.1.2.4): `frame_num`, `pic_parameter_set_id`,
    /// `field_pic_flag`, `bottom_field_flag` differ; `nal_ref_idc` differs with one of them 0;
    /// for `pic_order_cnt_type` 0 `pic_order_cnt_lsb` or `delta_pic_order_cnt_bottom` differ, for
    /// type 1 `delta_pic_order_cnt[0]` or `[1]` differ; IdrPicFlag differs; or both are IDR with
    /// different `idr_pic_id`. A redundant slice (`redundant_pic_cnt` > 0) never starts one.
    public func startsNewPicture(after previous: SliceHeader) -> Bool {
        if (redundantPicCnt ?? 0) > 0 { return false }
        if frameNum != previous.frameNum { return true }
        if picParameterSetId != previous.picParameterSetId { return true }
        if fieldPicFlag != previous.fieldPicFlag { return true }
        if fieldPicFlag && bottomFieldFlag != previous.bottomFieldFlag { return true }
        if nalRefIdc != previous.nalRefIdc && (nalRefIdc == 0 || previous.nalRefIdc == 0) { return true }
        if picOrderCntLsb != previous.picOrderCntLsb || deltaPicOrderCntBottom != previous.deltaPicOrderCntBottom { return true }
        if deltaPicOrderCnt != previous.deltaPicOrderCnt { return true }
        if isIDR != previous.isIDR { return true }
        if isIDR && previous.isIDR && idrPicId != previous.idrPicId { return true }
        return false
    }
}
