/// A picture parameter set, `pic_parameter_set_rbsp()` of H.264 clause 7.3.2.2, semantics 7.4.2.2.
///
/// `Codable` uses the specification's snake_case names. Elements after
/// `redundant_pic_cnt_present_flag` that are absent (no `more_rbsp_data()`) take their inferred
/// values: `transform_8x8_mode_flag` 0, `pic_scaling_matrix_present_flag` 0,
/// `second_chroma_qp_index_offset` equal to `chroma_qp_index_offset`.
public struct PictureParameterSet: Codable, Hashable, Sendable {
    /// 0...255.
    public var picParameterSetId: Int
    /// 0...31.
    public var seqParameterSetId: Int
    /// 0 = CAVLC, 1 = CABAC.
    public var entropyCodingModeFlag: Bool
    public var bottomFieldPicOrderInFramePresentFlag: Bool
    /// 0...7.
    public var numSliceGroupsMinus1: Int
    /// 0...6, present when `num_slice_groups_minus1` > 0.
    public var sliceGroupMapType: Int?
    public var runLengthMinus1: [Int]?
    public var topLeft: [Int]?
    public var bottomRight: [Int]?
    public var sliceGroupChangeDirectionFlag: Bool?
    public var sliceGroupChangeRateMinus1: Int?
    public var picSizeInMapUnitsMinus1: Int?
    public var sliceGroupId: [Int]?
    /// 0...31.
    public var numRefIdxL0DefaultActiveMinus1: Int
    /// 0...31.
    public var numRefIdxL1DefaultActiveMinus1: Int
    public var weightedPredFlag: Bool
    /// 0...2.
    public var weightedBipredIdc: Int
    /// −(26 + 6 · bit_depth_luma_minus8)...25.
    public var picInitQpMinus26: Int
    /// −26...25.
    public var picInitQsMinus26: Int
    /// −12...12.
    public var chromaQpIndexOffset: Int
    public var deblockingFilterControlPresentFlag: Bool
    public var constrainedIntraPredFlag: Bool
    public var redundantPicCntPresentFlag: Bool
    public var transform8x8ModeFlag: Bool
    public var picScalingMatrixPresentFlag: Bool
    /// `pic_scaling_list_present_flag[i]`: 6 + (2 or 6 for 4:4:4) · transform_8x8_mode_flag entries
    /// when the matrix is present, else empty.
    public var picScalingListPresentFlag: [Bool]
    /// The lists as coded, as ``SequenceParameterSet/seqScalingLists``.
    public var picScalingLists: [[Int]]
    public var useDefaultScalingMatrixFlag: [Bool]
    /// −12...12.
    public var secondChromaQpIndexOffset: Int

    enum CodingKeys: String, CodingKey {
        case picParameterSetId = "pic_parameter_set_id"
        case seqParameterSetId = "seq_parameter_set_id"
        case entropyCodingModeFlag = "entropy_coding_mode_flag"
        case bottomFieldPicOrderInFramePresentFlag = "bottom_field_pic_order_in_frame_present_flag"
        case numSliceGroupsMinus1 = "num_slice_groups_minus1"
        case sliceGroupMapType = "slice_group_map_type"
        case runLengthMinus1 = "run_length_minus1"
        case topLeft = "top_left"
        case bottomRight = "bottom_right"
        case sliceGroupChangeDirectionFlag = "slice_group_change_direction_flag"
        case sliceGroupChangeRateMinus1 = "slice_group_change_rate_minus1"
        case picSizeInMapUnitsMinus1 = "pic_size_in_map_units_minus1"
        case sliceGroupId = "slice_group_id"
        case numRefIdxL0DefaultActiveMinus1 = "num_ref_idx_l0_default_active_minus1"
        case numRefIdxL1DefaultActiveMinus1 = "num_ref_idx_l1_default_active_minus1"
        case weightedPredFlag = "weighted_pred_flag"
        case weightedBipredIdc = "weighted_bipred_idc"
        case picInitQpMinus26 = "pic_init_qp_minus26"
        case picInitQsMinus26 = "pic_init_qs_minus26"
        case chromaQpIndexOffset = "chroma_qp_index_offset"
        case deblockingFilterControlPresentFlag = "deblocking_filter_control_present_flag"
        case constrainedIntraPredFlag = "constrained_intra_pred_flag"
        case redundantPicCntPresentFlag = "redundant_pic_cnt_present_flag"
        case transform8x8ModeFlag = "transform_8x8_mode_flag"
        case picScalingMatrixPresentFlag = "pic_scaling_matrix_present_flag"
        case picScalingListPresentFlag = "pic_scaling_list_present_flag"
        case picScalingLists = "pic_scaling_lists"
        case useDefaultScalingMatrixFlag = "use_default_scaling_matrix_flag"
        case secondChromaQpIndexOffset = "second_chroma_qp_index_offset"
    }

    /// Parses a PPS from its RBSP.
    /// - Parameters:
    ///   - rbsp: the payload after the NAL unit header, emulation prevention removed.
    ///   - sequenceParameterSets: the SPSs seen so far by `seq_parameter_set_id`; the one this PPS
    ///     names gives `chroma_format_idc` (number of scaling lists), the luma bit depth (range of
    ///     `pic_init_qp_minus26`) and PicSizeInMapUnits (slice group map type 6).
    /// - Throws: ``H264Error/missingParameterSet(element:id:bitOffset:)`` when the SPS is not in
    ///   `sequenceParameterSets`; otherwise ``H264Error`` naming the bit offset, element and range.
    public init(rbsp: [UInt8], sequenceParameterSets: [Int: SequenceParameterSet]) throws {
        var ignored: [ParseWarning] = []
        try self.init(rbsp: rbsp, sequenceParameterSets: sequenceParameterSets, policy: .lenient, warnings: &ignored)
    }

    /// Parses a PPS from its RBSP, as ``init(rbsp:sequenceParameterSets:)``, with `policy` deciding what to do with
    /// `rbsp_trailing_bits` missing or followed by data (``BitReader/rbspTrailingBits(after:)``; data after the stop
    /// bit is first read as the optional elements from `transform_8x8_mode_flag` on, as `more_rbsp_data()` says).
    /// - Parameter warnings: gets a ``ParseWarning`` (bit offset in `rbsp`) per such problem accepted (lenient);
    ///   nothing is appended when the PPS does not parse.
    public init(rbsp: [UInt8], sequenceParameterSets: [Int: SequenceParameterSet], policy: ParsePolicy,
                warnings: inout [ParseWarning]) throws {
        var r = BitReader(rbsp, policy: policy)
        picParameterSetId = try r.ue("pic_parameter_set_id", 0...255)
        let spsIdOffset = r.bitOffset
        seqParameterSetId = try r.ue("seq_parameter_set_id", 0...31)
        guard let sps = sequenceParameterSets[seqParameterSetId] else {
            throw H264Error.missingParameterSet(element: "seq_parameter_set_id", id: seqParameterSetId, bitOffset: spsIdOffset)
        }
        entropyCodingModeFlag = try r.flag("entropy_coding_mode_flag")
        bottomFieldPicOrderInFramePresentFlag = try r.flag("bottom_field_pic_order_in_frame_present_flag")
        numSliceGroupsMinus1 = try r.ue("num_slice_groups_minus1", 0...7)
        if numSliceGroupsMinus1 > 0 {
            let picSizeInMapUnits = sps.picWidthInMbs * (sps.picHeightInMapUnitsMinus1 + 1)
            let mapType = try r.ue("slice_group_map_type", 0...6)
            sliceGroupMapType = mapType
            switch mapType {
            case 0:
                var runs = [Int]()
                for i in 0...numSliceGroupsMinus1 {
                    runs.append(try r.ue("run_length_minus1[\(i)]", 0...(picSizeInMapUnits - 1)))
                }
                runLengthMinus1 = runs
            case 2:
                var tl = [Int]()
                var br = [Int]()
                for i in 0..<numSliceGroupsMinus1 {
                    tl.append(try r.ue("top_left[\(i)]", 0...(picSizeInMapUnits - 1)))
                    br.append(try r.ue("bottom_right[\(i)]", 0...(picSizeInMapUnits - 1)))
                }
                topLeft = tl
                bottomRight = br
            case 3, 4, 5:
                sliceGroupChangeDirectionFlag = try r.flag("slice_group_change_direction_flag")
                sliceGroupChangeRateMinus1 = try r.ue("slice_group_change_rate_minus1", 0...(picSizeInMapUnits - 1))
            case 6:
                let size = try r.ue("pic_size_in_map_units_minus1", (picSizeInMapUnits - 1)...(picSizeInMapUnits - 1))
                picSizeInMapUnitsMinus1 = size
                // Ceil(Log2(num_slice_groups_minus1 + 1)) bits per entry, at least 1 here.
                let bits = Int.bitWidth - numSliceGroupsMinus1.leadingZeroBitCount
                let idsStart = r.bitOffset
                guard r.bitsRemaining >= (size + 1) * bits else {
                    throw H264Error.endOfData(element: "slice_group_id[\(size + 1) entries]", bitOffset: idsStart)
                }
                var ids = [Int]()
                ids.reserveCapacity(size + 1)
                for i in 0...size {
                    ids.append(try r.u(bits, "slice_group_id[\(i)]", 0...numSliceGroupsMinus1))
                }
                sliceGroupId = ids
            default:
                break
            }
        }
        numRefIdxL0DefaultActiveMinus1 = try r.ue("num_ref_idx_l0_default_active_minus1", 0...31)
        numRefIdxL1DefaultActiveMinus1 = try r.ue("num_ref_idx_l1_default_active_minus1", 0...31)
        weightedPredFlag = try r.flag("weighted_pred_flag")
        weightedBipredIdc = try r.u(2, "weighted_bipred_idc", 0...2)
        picInitQpMinus26 = try r.se("pic_init_qp_minus26", -(26 + 6 * sps.bitDepthLumaMinus8)...25)
        picInitQsMinus26 = try r.se("pic_init_qs_minus26", -26...25)
        chromaQpIndexOffset = try r.se("chroma_qp_index_offset", -12...12)
        deblockingFilterControlPresentFlag = try r.flag("deblocking_filter_control_present_flag")
        constrainedIntraPredFlag = try r.flag("constrained_intra_pred_flag")
        redundantPicCntPresentFlag = try r.flag("redundant_pic_cnt_present_flag")
        transform8x8ModeFlag = false
        picScalingMatrixPresentFlag = false
        picScalingListPresentFlag = []
        picScalingLists = []
        useDefaultScalingMatrixFlag = []
        secondChromaQpIndexOffset = chromaQpIndexOffset
        if r.moreRBSPData() {
            transform8x8ModeFlag = try r.flag("transform_8x8_mode_flag")
            picScalingMatrixPresentFlag = try r.flag("pic_scaling_matrix_present_flag")
            if picScalingMatrixPresentFlag {
                let count = 6 + (transform8x8ModeFlag ? (sps.chromaFormatIdc != 3 ? 2 : 6) : 0)
                (picScalingListPresentFlag, picScalingLists, useDefaultScalingMatrixFlag) = try readScalingMatrix(&r, count: count, prefix: "pic")
            }
            secondChromaQpIndexOffset = try r.se("second_chroma_qp_index_offset", -12...12)
        }
        try r.rbspTrailingBits(after: "pic_parameter_set_rbsp")
        warnings += r.warnings
    }
}

/// The parameter sets seen so far in a stream, by id, as a decoder keeps them: a later SPS or PPS
/// with the same id replaces the earlier one.
public struct ParameterSets: Sendable {
    /// Parsed SPSs by `seq_parameter_set_id`.
    public private(set) var sequenceParameterSets: [Int: SequenceParameterSet] = [:]
    /// Parsed PPSs by `pic_parameter_set_id`.
    public private(set) var pictureParameterSets: [Int: PictureParameterSet] = [:]
    /// The NAL units the SPSs came from, by id.
    public private(set) var spsNALUnits: [Int: NALUnit] = [:]
    /// The NAL units the PPSs came from, by id.
    public private(set) var ppsNALUnits: [Int: NALUnit] = [:]

    /// How ``add(_:)`` parses: what it does with a value a decoder can live with (``ParsePolicy``).
    public let policy: ParsePolicy

    /// An empty store.
    /// - Parameter policy: how ``add(_:)`` parses (lenient unless told).
    public init(policy: ParsePolicy = .lenient) {
        self.policy = policy
    }

    /// Parses and stores `nal` when it is an SPS (type 7) or PPS (type 8); ignores other types.
    /// With the lenient ``policy`` the warnings of a tolerated value are dropped (``ParameterSetLog`` keeps them).
    /// - Returns: true when `nal` was a parameter set.
    /// - Throws: the ``H264Error`` of ``SequenceParameterSet/init(rbsp:policy:warnings:)`` or
    ///   ``PictureParameterSet/init(rbsp:sequenceParameterSets:)``; nothing is stored then.
    @discardableResult
    public mutating func add(_ nal: NALUnit) throws -> Bool {
        var ignored: [ParseWarning] = []
        return try add(nal, warnings: &ignored) != nil
    }

    /// ``add(_:)``, returning what was parsed and appending the warnings of tolerated values (bit offsets in the
    /// NAL unit's RBSP, no NAL unit index).
    /// - Returns: the parsed SPS or PPS, nil for another type.
    mutating func add(_ nal: NALUnit, warnings: inout [ParseWarning]) throws -> Parsed? {
        switch nal.nalUnitType {
        case .sps:
            let sps = try SequenceParameterSet(rbsp: nal.rbsp, policy: policy, warnings: &warnings)
            sequenceParameterSets[sps.seqParameterSetId] = sps
            spsNALUnits[sps.seqParameterSetId] = nal
            return .sps(sps)
        case .pps:
            let pps = try PictureParameterSet(rbsp: nal.rbsp, sequenceParameterSets: sequenceParameterSets, policy: policy, warnings: &warnings)
            pictureParameterSets[pps.picParameterSetId] = pps
            ppsNALUnits[pps.picParameterSetId] = nal
            return .pps(pps)
        default:
            return nil
        }
    }

    /// A parameter set as parsed.
    enum Parsed {
        case sps(SequenceParameterSet)
        case pps(PictureParameterSet)
    }
}
