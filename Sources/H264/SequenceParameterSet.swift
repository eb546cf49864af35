/// Profiles whose SPS carries `chroma_format_idc`, bit depths and scaling matrices (7.3.2.1.1).
let highProfileIdcs: Set<Int> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

/// This module's limit on `pic_width_in_mbs_minus1` and `pic_height_in_map_units_minus1`
/// (the specification bounds them only through levels): 0...65,535, i.e. at most
/// 1,048,576 luma samples per dimension, which keeps every derived product far from overflow.
let maxPictureDimensionInMbsMinus1 = 65_535

/// A sequence parameter set, `seq_parameter_set_rbsp()` of H.264 clause 7.3.2.1.1, with semantics
/// from 7.4.2.1.1 and the derived picture size after cropping.
///
/// Syntax elements keep the specification's names in camelCase; `Codable` uses the snake_case
/// names (`pic_order_cnt_type`, `frame_crop_left_offset`, ..., plus `width` and `height`).
/// Elements that are absent from the bitstream take the value the specification infers
/// (`chroma_format_idc` 1, bit depths 0, flags false, crop offsets 0); elements that have no
/// inferred value when absent are `nil` and left out of the encoded form.
public struct SequenceParameterSet: Codable, Hashable, Sendable {
    public var profileIdc: Int
    public var constraintSet0Flag: Bool
    public var constraintSet1Flag: Bool
    public var constraintSet2Flag: Bool
    public var constraintSet3Flag: Bool
    public var constraintSet4Flag: Bool
    public var constraintSet5Flag: Bool
    public var reservedZero2Bits: Int
    public var levelIdc: Int
    /// 0...31.
    public var seqParameterSetId: Int
    /// 0...3 (monochrome, 4:2:0, 4:2:2, 4:4:4); 1 when absent.
    public var chromaFormatIdc: Int
    public var separateColourPlaneFlag: Bool
    /// 0...6.
    public var bitDepthLumaMinus8: Int
    /// 0...6.
    public var bitDepthChromaMinus8: Int
    public var qpprimeYZeroTransformBypassFlag: Bool
    public var seqScalingMatrixPresentFlag: Bool
    /// `seq_scaling_list_present_flag[i]`: 8 entries (12 for 4:4:4) when the matrix is present, else empty.
    public var seqScalingListPresentFlag: [Bool]
    /// The scaling lists as coded (zig-zag order, 16 entries for i < 6, 64 after), one per
    /// `seq_scaling_list_present_flag`; empty where that flag is 0 or the default matrix is used.
    public var seqScalingLists: [[Int]]
    /// `UseDefaultScalingMatrix4x4Flag` / `8x8Flag` for each list, as `seq_scaling_list_present_flag`.
    public var useDefaultScalingMatrixFlag: [Bool]
    /// 0...12; MaxFrameNum = 2^(log2_max_frame_num_minus4 + 4).
    public var log2MaxFrameNumMinus4: Int
    /// 0...2.
    public var picOrderCntType: Int
    /// 0...12, present when `pic_order_cnt_type` is 0.
    public var log2MaxPicOrderCntLsbMinus4: Int?
    public var deltaPicOrderAlwaysZeroFlag: Bool?
    public var offsetForNonRefPic: Int?
    public var offsetForTopToBottomField: Int?
    /// 0...255.
    public var numRefFramesInPicOrderCntCycle: Int?
    public var offsetForRefFrame: [Int]?
    /// 0...16.
    public var maxNumRefFrames: Int
    public var gapsInFrameNumValueAllowedFlag: Bool
    public var picWidthInMbsMinus1: Int
    public var picHeightInMapUnitsMinus1: Int
    public var frameMbsOnlyFlag: Bool
    public var mbAdaptiveFrameFieldFlag: Bool
    public var direct8x8InferenceFlag: Bool
    public var frameCroppingFlag: Bool
    /// In crop units (CropUnitX); 0 when `frame_cropping_flag` is 0.
    public var frameCropLeftOffset: Int
    public var frameCropRightOffset: Int
    /// In crop units (CropUnitY); 0 when `frame_cropping_flag` is 0.
    public var frameCropTopOffset: Int
    public var frameCropBottomOffset: Int
    public var vuiParametersPresentFlag: Bool
    public var vuiParameters: VUIParameters?

    /// Derived: luma width in samples after cropping,
    /// PicWidthInMbs · 16 − CropUnitX · (frame_crop_left_offset + frame_crop_right_offset) (7.4.2.1.1).
    public var width: Int
    /// Derived: luma height in samples after cropping,
    /// FrameHeightInMbs · 16 − CropUnitY · (frame_crop_top_offset + frame_crop_bottom_offset), where
    /// FrameHeightInMbs = (2 − frame_mbs_only_flag) · PicHeightInMapUnits.
    public var height: Int

    enum CodingKeys: String, CodingKey {
        case profileIdc = "profile_idc"
        case constraintSet0Flag = "constraint_set0_flag"
        case constraintSet1Flag = "constraint_set1_flag"
        case constraintSet2Flag = "constraint_set2_flag"
        case constraintSet3Flag = "constraint_set3_flag"
        case constraintSet4Flag = "constraint_set4_flag"
        case constraintSet5Flag = "constraint_set5_flag"
        case reservedZero2Bits = "reserved_zero_2bits"
        case levelIdc = "level_idc"
        case seqParameterSetId = "seq_parameter_set_id"
        case chromaFormatIdc = "chroma_format_idc"
        case separateColourPlaneFlag = "separate_colour_plane_flag"
        case bitDepthLumaMinus8 = "bit_depth_luma_minus8"
        case bitDepthChromaMinus8 = "bit_depth_chroma_minus8"
        case qpprimeYZeroTransformBypassFlag = "qpprime_y_zero_transform_bypass_flag"
        case seqScalingMatrixPresentFlag = "seq_scaling_matrix_present_flag"
        case seqScalingListPresentFlag = "seq_scaling_list_present_flag"
        case seqScalingLists = "seq_scaling_lists"
        case useDefaultScalingMatrixFlag = "use_default_scaling_matrix_flag"
        case log2MaxFrameNumMinus4 = "log2_max_frame_num_minus4"
        case picOrderCntType = "pic_order_cnt_type"
        case log2MaxPicOrderCntLsbMinus4 = "log2_max_pic_order_cnt_lsb_minus4"
        case deltaPicOrderAlwaysZeroFlag = "delta_pic_order_always_zero_flag"
        case offsetForNonRefPic = "offset_for_non_ref_pic"
        case offsetForTopToBottomField = "offset_for_top_to_bottom_field"
        case numRefFramesInPicOrderCntCycle = "num_ref_frames_in_pic_order_cnt_cycle"
        case offsetForRefFrame = "offset_for_ref_frame"
        case maxNumRefFrames = "max_num_ref_frames"
        case gapsInFrameNumValueAllowedFlag = "gaps_in_frame_num_value_allowed_flag"
        case picWidthInMbsMinus1 = "pic_width_in_mbs_minus1"
        case picHeightInMapUnitsMinus1 = "pic_height_in_map_units_minus1"
        case frameMbsOnlyFlag = "frame_mbs_only_flag"
        case mbAdaptiveFrameFieldFlag = "mb_adaptive_frame_field_flag"
        case direct8x8InferenceFlag = "direct_8x8_inference_flag"
        case frameCroppingFlag = "frame_cropping_flag"
        case frameCropLeftOffset = "frame_crop_left_offset"
        case frameCropRightOffset = "frame_crop_right_offset"
        case frameCropTopOffset = "frame_crop_top_offset"
        case frameCropBottomOffset = "frame_crop_bottom_offset"
        case vuiParametersPresentFlag = "vui_parameters_present_flag"
        case vuiParameters = "vui_parameters"
        case width = "width"
        case height = "height"
    }

    /// ChromaArrayType: 0 when `separate_colour_plane_flag` is 1, else `chroma_format_idc`.
    public var chromaArrayType: Int { separateColourPlaneFlag ? 0 : chromaFormatIdc }
    /// PicWidthInMbs = pic_width_in_mbs_minus1 + 1.
    public var picWidthInMbs: Int { picWidthInMbsMinus1 + 1 }
    /// FrameHeightInMbs = (2 − frame_mbs_only_flag) · (pic_height_in_map_units_minus1 + 1).
    public var frameHeightInMbs: Int { (frameMbsOnlyFlag ? 1 : 2) * (picHeightInMapUnitsMinus1 + 1) }
    /// Coded luma width before cropping, PicWidthInMbs · 16.
    public var codedWidth: Int { picWidthInMbs * 16 }
    /// Coded luma height before cropping, FrameHeightInMbs · 16.
    public var codedHeight: Int { frameHeightInMbs * 16 }
    /// MaxFrameNum = 2^(log2_max_frame_num_minus4 + 4).
    public var maxFrameNum: Int { 1 << (log2MaxFrameNumMinus4 + 4) }

    /// Parses an SPS from its RBSP with the lenient ``ParsePolicy``, its warnings dropped (see
    /// ``init(rbsp:policy:warnings:)`` to have them).
    /// - Parameter rbsp: the payload after the NAL unit header, emulation prevention removed
    ///   (``NALUnit/rbsp``).
    /// - Throws: ``H264Error`` naming the bit offset (from the start of `rbsp`), the syntax element
    ///   and its range when a value is out of range or the data ends early.
    public init(rbsp: [UInt8]) throws {
        var ignored: [ParseWarning] = []
        try self.init(rbsp: rbsp, policy: .lenient, warnings: &ignored)
    }

    /// Parses an SPS from its RBSP.
    /// - Parameters:
    ///   - rbsp: the payload after the NAL unit header, emulation prevention removed (``NALUnit/rbsp``).
    ///   - policy: what to do with a VUI value outside its range that does not affect decoding
    ///     (``VUIParameters/init(reader:)`` lists them), and with `rbsp_trailing_bits` missing or followed by data
    ///     (``BitReader/rbspTrailingBits(after:)``).
    ///   - warnings: gets one ``ParseWarning`` per such value accepted (lenient), bit offsets in `rbsp`;
    ///     nothing is appended when the SPS does not parse.
    /// - Throws: ``H264Error`` naming the bit offset (from the start of `rbsp`), the syntax element
    ///   and its range when a value is out of range (with `policy` strict, a tolerated one too) or the data ends early.
    public init(rbsp: [UInt8], policy: ParsePolicy, warnings: inout [ParseWarning]) throws {
        var r = BitReader(rbsp, policy: policy)
        profileIdc = try r.u(8, "profile_idc")
        constraintSet0Flag = try r.flag("constraint_set0_flag")
        constraintSet1Flag = try r.flag("constraint_set1_flag")
        constraintSet2Flag = try r.flag("constraint_set2_flag")
        constraintSet3Flag = try r.flag("constraint_set3_flag")
        constraintSet4Flag = try r.flag("constraint_set4_flag")
        constraintSet5Flag = try r.flag("constraint_set5_flag")
        reservedZero2Bits = try r.u(2, "reserved_zero_2bits")
        levelIdc = try r.u(8, "level_idc")
        seqParameterSetId = try r.ue("seq_parameter_set_id", 0...31)
        chromaFormatIdc = 1
        separateColourPlaneFlag = false
        bitDepthLumaMinus8 = 0
        bitDepthChromaMinus8 = 0
        qpprimeYZeroTransformBypassFlag = false
        seqScalingMatrixPresentFlag = false
        seqScalingListPresentFlag = []
        seqScalingLists = []
        useDefaultScalingMatrixFlag = []
        if highProfileIdcs.contains(profileIdc) {
            chromaFormatIdc = try r.ue("chroma_format_idc", 0...3)
            if chromaFormatIdc == 3 {
                separateColourPlaneFlag = try r.flag("separate_colour_plane_flag")
            }
            bitDepthLumaMinus8 = try r.ue("bit_depth_luma_minus8", 0...6)
            bitDepthChromaMinus8 = try r.ue("bit_depth_chroma_minus8", 0...6)
            qpprimeYZeroTransformBypassFlag = try r.flag("qpprime_y_zero_transform_bypass_flag")
            seqScalingMatrixPresentFlag = try r.flag("seq_scaling_matrix_present_flag")
            if seqScalingMatrixPresentFlag {
                let count = chromaFormatIdc != 3 ? 8 : 12
                (seqScalingListPresentFlag, seqScalingLists, useDefaultScalingMatrixFlag) = try readScalingMatrix(&r, count: count, prefix: "seq")
            }
        }
        log2MaxFrameNumMinus4 = try r.ue("log2_max_frame_num_minus4", 0...12)
        picOrderCntType = try r.ue("pic_order_cnt_type", 0...2)
        if picOrderCntType == 0 {
            log2MaxPicOrderCntLsbMinus4 = try r.ue("log2_max_pic_order_cnt_lsb_minus4", 0...12)
        } else if picOrderCntType == 1 {
            deltaPicOrderAlwaysZeroFlag = try r.flag("delta_pic_order_always_zero_flag")
            offsetForNonRefPic = try r.se("offset_for_non_ref_pic")
            offsetForTopToBottomField = try r.se("offset_for_top_to_bottom_field")
            let n = try r.ue("num_ref_frames_in_pic_order_cnt_cycle", 0...255)
            numRefFramesInPicOrderCntCycle = n
            var offsets = [Int]()
            for i in 0..<n { offsets.append(try r.se("offset_for_ref_frame[\(i)]")) }
            offsetForRefFrame = offsets
        }
        maxNumRefFrames = try r.ue("max_num_ref_frames", 0...16)
        gapsInFrameNumValueAllowedFlag = try r.flag("gaps_in_frame_num_value_allowed_flag")
        picWidthInMbsMinus1 = try r.ue("pic_width_in_mbs_minus1", 0...maxPictureDimensionInMbsMinus1)
        picHeightInMapUnitsMinus1 = try r.ue("pic_height_in_map_units_minus1", 0...maxPictureDimensionInMbsMinus1)
        frameMbsOnlyFlag = try r.flag("frame_mbs_only_flag")
        mbAdaptiveFrameFieldFlag = false
        if !frameMbsOnlyFlag {
            mbAdaptiveFrameFieldFlag = try r.flag("mb_adaptive_frame_field_flag")
        }
        direct8x8InferenceFlag = try r.flag("direct_8x8_inference_flag")
        frameCroppingFlag = try r.flag("frame_cropping_flag")
        frameCropLeftOffset = 0
        frameCropRightOffset = 0
        frameCropTopOffset = 0
        frameCropBottomOffset = 0
        // Cropping semantics (7.4.2.1.1): CropUnitX/Y from ChromaArrayType and frame_mbs_only_flag.
        let chromaArrayType = separateColourPlaneFlag ? 0 : chromaFormatIdc
        let subWidthC = chromaFormatIdc == 3 ? 1 : 2
        let subHeightC = chromaFormatIdc == 1 ? 2 : 1
        let fieldFactor = frameMbsOnlyFlag ? 1 : 2
        let cropUnitX = chromaArrayType == 0 ? 1 : subWidthC
        let cropUnitY = chromaArrayType == 0 ? fieldFactor : subHeightC * fieldFactor
        let codedWidth = (picWidthInMbsMinus1 + 1) * 16
        let codedHeight = fieldFactor * (picHeightInMapUnitsMinus1 + 1) * 16
        if frameCroppingFlag {
            let start = r.bitOffset
            frameCropLeftOffset = try r.ue("frame_crop_left_offset")
            frameCropRightOffset = try r.ue("frame_crop_right_offset")
            frameCropTopOffset = try r.ue("frame_crop_top_offset")
            frameCropBottomOffset = try r.ue("frame_crop_bottom_offset")
            // The cropped picture keeps at least one sample in each direction.
            let maxX = codedWidth / cropUnitX - 1
            let maxY = codedHeight / cropUnitY - 1
            guard frameCropLeftOffset + frameCropRightOffset <= maxX else {
                throw H264Error.outOfRange(element: "frame_crop_left_offset + frame_crop_right_offset", value: Int64(frameCropLeftOffset + frameCropRightOffset), range: 0...Int64(maxX), bitOffset: start)
            }
            guard frameCropTopOffset + frameCropBottomOffset <= maxY else {
                throw H264Error.outOfRange(element: "frame_crop_top_offset + frame_crop_bottom_offset", value: Int64(frameCropTopOffset + frameCropBottomOffset), range: 0...Int64(maxY), bitOffset: start)
            }
        }
        width = codedWidth - cropUnitX * (frameCropLeftOffset + frameCropRightOffset)
        height = codedHeight - cropUnitY * (frameCropTopOffset + frameCropBottomOffset)
        vuiParametersPresentFlag = try r.flag("vui_parameters_present_flag")
        if vuiParametersPresentFlag {
            vuiParameters = try VUIParameters(reader: &r)
        }
        try r.rbspTrailingBits(after: "seq_parameter_set_rbsp")
        warnings += r.warnings
    }
}

/// `scaling_list()` of 7.3.2.1.1.1: returns the list as coded and `useDefaultScalingMatrixFlag`.
func readScalingList(_ r: inout BitReader, size: Int, name: String) throws -> ([Int], Bool) {
    var list = [Int](repeating: 0, count: size)
    var lastScale = 8
    var nextScale = 8
    var useDefault = false
    for j in 0..<size {
        if nextScale != 0 {
            let delta = try r.se("delta_scale of \(name)[\(j)]", -128...127)
            nextScale = (lastScale + delta + 256) % 256
            useDefault = j == 0 && nextScale == 0
        }
        list[j] = nextScale == 0 ? lastScale : nextScale
        lastScale = list[j]
    }
    return (useDefault ? [] : list, useDefault)
}

/// The lists of a `seq_scaling_matrix_present_flag` or `pic_scaling_matrix_present_flag` equal to 1 (7.3.2.1.1, 7.3.2.2):
/// for each of `count` lists its `PREFIX_scaling_list_present_flag[i]`, then when it is set the list
/// (``readScalingList(_:size:name:)`` of `PREFIX_scaling_list[i]`: 16 entries for i < 6, else 64); a list not present is
/// `[]` with `useDefaultScalingMatrixFlag` false.
func readScalingMatrix(_ r: inout BitReader, count: Int, prefix: String) throws -> (present: [Bool], lists: [[Int]], useDefault: [Bool]) {
    var present: [Bool] = [], lists: [[Int]] = [], useDefault: [Bool] = []
    for i in 0..<count {
        let flag = try r.flag("\(prefix)_scaling_list_present_flag[\(i)]")
        present.append(flag)
        if flag {
            let (list, isDefault) = try readScalingList(&r, size: i < 6 ? 16 : 64, name: "\(prefix)_scaling_list[\(i)]")
            lists.append(list)
            useDefault.append(isDefault)
        } else {
            lists.append([])
            useDefault.append(false)
        }
    }
    return (present, lists, useDefault)
}

/// `vui_parameters()` of H.264 Annex E.1.1 with semantics from E.2.1. Elements inside an absent
/// group (e.g. `num_units_in_tick` when `timing_info_present_flag` is 0) are `nil`.
public struct VUIParameters: Codable, Hashable, Sendable {
    public var aspectRatioInfoPresentFlag: Bool
    public var aspectRatioIdc: Int?
    public var sarWidth: Int?
    public var sarHeight: Int?
    public var overscanInfoPresentFlag: Bool
    public var overscanAppropriateFlag: Bool?
    public var videoSignalTypePresentFlag: Bool
    public var videoFormat: Int?
    public var videoFullRangeFlag: Bool?
    public var colourDescriptionPresentFlag: Bool?
    public var colourPrimaries: Int?
    public var transferCharacteristics: Int?
    public var matrixCoefficients: Int?
    public var chromaLocInfoPresentFlag: Bool
    public var chromaSampleLocTypeTopField: Int?
    public var chromaSampleLocTypeBottomField: Int?
    public var timingInfoPresentFlag: Bool
    /// Units of the clock ticking at `time_scale` Hz; 1...4,294,967,295.
    public var numUnitsInTick: Int?
    /// Hz; 1...4,294,967,295.
    public var timeScale: Int?
    public var fixedFrameRateFlag: Bool?
    public var nalHrdParametersPresentFlag: Bool
    public var nalHrdParameters: HRDParameters?
    public var vclHrdParametersPresentFlag: Bool
    public var vclHrdParameters: HRDParameters?
    public var lowDelayHrdFlag: Bool?
    public var picStructPresentFlag: Bool
    public var bitstreamRestrictionFlag: Bool
    public var motionVectorsOverPicBoundariesFlag: Bool?
    public var maxBytesPerPicDenom: Int?
    public var maxBitsPerMbDenom: Int?
    public var log2MaxMvLengthHorizontal: Int?
    public var log2MaxMvLengthVertical: Int?
    /// 0...`max_dec_frame_buffering`: 0 for a stream without B-frame reordering.
    public var maxNumReorderFrames: Int?
    /// 0...16.
    public var maxDecFrameBuffering: Int?

    enum CodingKeys: String, CodingKey {
        case aspectRatioInfoPresentFlag = "aspect_ratio_info_present_flag"
        case aspectRatioIdc = "aspect_ratio_idc"
        case sarWidth = "sar_width"
        case sarHeight = "sar_height"
        case overscanInfoPresentFlag = "overscan_info_present_flag"
        case overscanAppropriateFlag = "overscan_appropriate_flag"
        case videoSignalTypePresentFlag = "video_signal_type_present_flag"
        case videoFormat = "video_format"
        case videoFullRangeFlag = "video_full_range_flag"
        case colourDescriptionPresentFlag = "colour_description_present_flag"
        case colourPrimaries = "colour_primaries"
        case transferCharacteristics = "transfer_characteristics"
        case matrixCoefficients = "matrix_coefficients"
        case chromaLocInfoPresentFlag = "chroma_loc_info_present_flag"
        case chromaSampleLocTypeTopField = "chroma_sample_loc_type_top_field"
        case chromaSampleLocTypeBottomField = "chroma_sample_loc_type_bottom_field"
        case timingInfoPresentFlag = "timing_info_present_flag"
        case numUnitsInTick = "num_units_in_tick"
        case timeScale = "time_scale"
        case fixedFrameRateFlag = "fixed_frame_rate_flag"
        case nalHrdParametersPresentFlag = "nal_hrd_parameters_present_flag"
        case nalHrdParameters = "nal_hrd_parameters"
        case vclHrdParametersPresentFlag = "vcl_hrd_parameters_present_flag"
        case vclHrdParameters = "vcl_hrd_parameters"
        case lowDelayHrdFlag = "low_delay_hrd_flag"
        case picStructPresentFlag = "pic_struct_present_flag"
        case bitstreamRestrictionFlag = "bitstream_restriction_flag"
        case motionVectorsOverPicBoundariesFlag = "motion_vectors_over_pic_boundaries_flag"
        case maxBytesPerPicDenom = "max_bytes_per_pic_denom"
        case maxBitsPerMbDenom = "max_bits_per_mb_denom"
        case log2MaxMvLengthHorizontal = "log2_max_mv_length_horizontal"
        case log2MaxMvLengthVertical = "log2_max_mv_length_vertical"
        case maxNumReorderFrames = "max_num_reorder_frames"
        case maxDecFrameBuffering = "max_dec_frame_buffering"
    }

    /// Frames per second for a frame-coded stream, `time_scale` ÷ (2 · `num_units_in_tick`)
    /// (E.2.1: a frame lasts two ticks); nil without timing information or with either of them 0.
    public var frameRate: Double? {
        guard let n = numUnitsInTick, let t = timeScale, n > 0, t > 0 else { return nil }
        return Double(t) / Double(2 * n)
    }

    /// Why a VUI value outside its range is accepted (``ParsePolicy``).
    static let notDecoding = "VUI does not affect decoding (H.264 Annex E)"
    static let noTiming = "read as no timing (as FFmpeg does), and VUI does not affect decoding (H.264 Annex E)"
    static let edition2003 = "the 2003 edition allowed 0-16, and VUI does not affect decoding (H.264 Annex E)"

    /// Parses `vui_parameters()` from the reader's position (inside an SPS RBSP).
    ///
    /// Values outside their range that do not affect decoding are tolerated as the reader's ``BitReader/policy``
    /// says (``ParsePolicy``): `chroma_sample_loc_type_top_field`/`_bottom_field` (0-5), `num_units_in_tick` and
    /// `time_scale` of 0 (``frameRate`` is then nil), `max_bytes_per_pic_denom`, `max_bits_per_mb_denom` (0-16),
    /// `log2_max_mv_length_horizontal`/`_vertical` (0-15, 0-16 in the 2003 edition).
    /// - Throws: ``H264Error`` naming the element, its range and the bit offset.
    public init(reader r: inout BitReader) throws {
        aspectRatioInfoPresentFlag = try r.flag("aspect_ratio_info_present_flag")
        if aspectRatioInfoPresentFlag {
            let idc = try r.u(8, "aspect_ratio_idc")
            aspectRatioIdc = idc
            if idc == 255 {  // Extended_SAR
                sarWidth = try r.u(16, "sar_width")
                sarHeight = try r.u(16, "sar_height")
            }
        }
        overscanInfoPresentFlag = try r.flag("overscan_info_present_flag")
        if overscanInfoPresentFlag {
            overscanAppropriateFlag = try r.flag("overscan_appropriate_flag")
        }
        videoSignalTypePresentFlag = try r.flag("video_signal_type_present_flag")
        if videoSignalTypePresentFlag {
            videoFormat = try r.u(3, "video_format")
            videoFullRangeFlag = try r.flag("video_full_range_flag")
            let colour = try r.flag("colour_description_present_flag")
            colourDescriptionPresentFlag = colour
            if colour {
                colourPrimaries = try r.u(8, "colour_primaries")
                transferCharacteristics = try r.u(8, "transfer_characteristics")
                matrixCoefficients = try r.u(8, "matrix_coefficients")
            }
        }
        chromaLocInfoPresentFlag = try r.flag("chroma_loc_info_present_flag")
        if chromaLocInfoPresentFlag {
            chromaSampleLocTypeTopField = try r.ue("chroma_sample_loc_type_top_field", 0...5, tolerated: Self.notDecoding)
            chromaSampleLocTypeBottomField = try r.ue("chroma_sample_loc_type_bottom_field", 0...5, tolerated: Self.notDecoding)
        }
        timingInfoPresentFlag = try r.flag("timing_info_present_flag")
        if timingInfoPresentFlag {
            numUnitsInTick = try r.u(32, "num_units_in_tick", 1...0xFFFF_FFFF, tolerated: Self.noTiming)
            timeScale = try r.u(32, "time_scale", 1...0xFFFF_FFFF, tolerated: Self.noTiming)
            fixedFrameRateFlag = try r.flag("fixed_frame_rate_flag")
        }
        nalHrdParametersPresentFlag = try r.flag("nal_hrd_parameters_present_flag")
        if nalHrdParametersPresentFlag {
            nalHrdParameters = try HRDParameters(reader: &r)
        }
        vclHrdParametersPresentFlag = try r.flag("vcl_hrd_parameters_present_flag")
        if vclHrdParametersPresentFlag {
            vclHrdParameters = try HRDParameters(reader: &r)
        }
        if nalHrdParametersPresentFlag || vclHrdParametersPresentFlag {
            lowDelayHrdFlag = try r.flag("low_delay_hrd_flag")
        }
        picStructPresentFlag = try r.flag("pic_struct_present_flag")
        bitstreamRestrictionFlag = try r.flag("bitstream_restriction_flag")
        if bitstreamRestrictionFlag {
            motionVectorsOverPicBoundariesFlag = try r.flag("motion_vectors_over_pic_boundaries_flag")
            maxBytesPerPicDenom = try r.ue("max_bytes_per_pic_denom", 0...16, tolerated: Self.notDecoding)
            maxBitsPerMbDenom = try r.ue("max_bits_per_mb_denom", 0...16, tolerated: Self.notDecoding)
            log2MaxMvLengthHorizontal = try r.ue("log2_max_mv_length_horizontal", 0...15, tolerated: Self.edition2003)
            log2MaxMvLengthVertical = try r.ue("log2_max_mv_length_vertical", 0...15, tolerated: Self.edition2003)
            let reorderStart = r.bitOffset
            let reorder = try r.ue("max_num_reorder_frames", 0...16)
            let buffering = try r.ue("max_dec_frame_buffering", 0...16)
            guard reorder <= buffering else {
                throw H264Error.outOfRange(element: "max_num_reorder_frames", value: Int64(reorder), range: 0...Int64(buffering), bitOffset: reorderStart)
            }
            maxNumReorderFrames = reorder
            maxDecFrameBuffering = buffering
        }
    }
}

/// `hrd_parameters()` of H.264 Annex E.1.2.
public struct HRDParameters: Codable, Hashable, Sendable {
    /// 0...31.
    public var cpbCntMinus1: Int
    public var bitRateScale: Int
    public var cpbSizeScale: Int
    /// One entry per CPB specification, `cpb_cnt_minus1 + 1` entries. Bit rate in bit/s is
    /// (value + 1) · 2^(6 + bit_rate_scale).
    public var bitRateValueMinus1: [Int]
    /// CPB size in bits is (value + 1) · 2^(4 + cpb_size_scale).
    public var cpbSizeValueMinus1: [Int]
    public var cbrFlag: [Bool]
    public var initialCpbRemovalDelayLengthMinus1: Int
    public var cpbRemovalDelayLengthMinus1: Int
    public var dpbOutputDelayLengthMinus1: Int
    public var timeOffsetLength: Int

    enum CodingKeys: String, CodingKey {
        case cpbCntMinus1 = "cpb_cnt_minus1"
        case bitRateScale = "bit_rate_scale"
        case cpbSizeScale = "cpb_size_scale"
        case bitRateValueMinus1 = "bit_rate_value_minus1"
        case cpbSizeValueMinus1 = "cpb_size_value_minus1"
        case cbrFlag = "cbr_flag"
        case initialCpbRemovalDelayLengthMinus1 = "initial_cpb_removal_delay_length_minus1"
        case cpbRemovalDelayLengthMinus1 = "cpb_removal_delay_length_minus1"
        case dpbOutputDelayLengthMinus1 = "dpb_output_delay_length_minus1"
        case timeOffsetLength = "time_offset_length"
    }

    /// Parses `hrd_parameters()` from the reader's position.
    /// - Throws: ``H264Error`` naming the element, its range and the bit offset.
    public init(reader r: inout BitReader) throws {
        cpbCntMinus1 = try r.ue("cpb_cnt_minus1", 0...31)
        bitRateScale = try r.u(4, "bit_rate_scale")
        cpbSizeScale = try r.u(4, "cpb_size_scale")
        bitRateValueMinus1 = []
        cpbSizeValueMinus1 = []
        cbrFlag = []
        for i in 0...cpbCntMinus1 {
            bitRateValueMinus1.append(try r.ue("bit_rate_value_minus1[\(i)]"))
            cpbSizeValueMinus1.append(try r.ue("cpb_size_value_minus1[\(i)]"))
            cbrFlag.append(try r.flag("cbr_flag[\(i)]"))
        }
        initialCpbRemovalDelayLengthMinus1 = try r.u(5, "initial_cpb_removal_delay_length_minus1")
        cpbRemovalDelayLengthMinus1 = try r.u(5, "cpb_removal_delay_length_minus1")
        dpbOutputDelayLengthMinus1 = try r.u(5, "dpb_output_delay_length_minus1")
        timeOffsetLength = try r.u(5, "time_offset_length")
    }
}
