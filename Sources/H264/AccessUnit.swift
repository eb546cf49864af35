/// One access unit (H.264 clause 7.4.1.2): the NAL units of one primary coded picture and the
/// non-VCL NAL units that belong to it.
public struct AccessUnit: Sendable {
    /// Index of this access unit in decode order, from 0.
    public var index: Int
    /// Indices of this access unit's NAL units in the sequence that was split (contiguous).
    public var nalUnitIndices: Range<Int>
    /// The NAL units, in decode order.
    public var nalUnits: [NALUnit]
    /// The slice headers of the VCL NAL units with one (types 1, 2 and 5), in order; redundant
    /// slices included (see ``SliceHeader/redundantPicCnt``).
    public var sliceHeaders: [SliceHeader]

    /// `slice_type % 5` of each slice, in order (several for a multi-slice picture).
    public var sliceTypes: [SliceType] { sliceHeaders.map(\.type) }
    /// True when the primary coded picture is an IDR picture (`nal_unit_type` 5).
    public var isIDR: Bool { nalUnits.contains { $0.nalUnitType == .idrSlice } }
    /// True when the primary coded picture is a reference picture (`nal_ref_idc` ≠ 0 on its slices).
    public var isReference: Bool { sliceHeaders.contains { $0.nalRefIdc != 0 } }
    /// True when the access unit holds a primary coded picture: a slice header (types 1, 2 and 5; a partition the
    /// splitter ignores, outside the Extended profile, is not one).
    public var hasPrimaryPicture: Bool { !sliceHeaders.isEmpty }
    /// `field_pic_flag` of the primary coded picture (its first slice header, H.264 7.4.3): true when the access
    /// unit is one field (every other row of a frame), false for a frame or an access unit without a slice header.
    /// A field is an access unit of its own: `field_pic_flag` and `bottom_field_flag` are among the values whose
    /// change starts a new primary coded picture (7.4.1.2.4). ``CodedFrame/frames(_:)`` pairs fields into frames.
    public var fieldPicFlag: Bool { sliceHeaders.first?.fieldPicFlag ?? false }
    /// `bottom_field_flag` of the primary coded picture: true for a bottom field, false for a top field or a frame.
    public var bottomFieldFlag: Bool { sliceHeaders.first?.bottomFieldFlag ?? false }

    /// Creates an access unit; ``split(_:)`` and ``AccessUnitSplitter`` make them from a stream.
    public init(index: Int, nalUnitIndices: Range<Int>, nalUnits: [NALUnit], sliceHeaders: [SliceHeader]) {
        self.index = index
        self.nalUnitIndices = nalUnitIndices
        self.nalUnits = nalUnits
        self.sliceHeaders = sliceHeaders
    }

    /// Groups NAL units in decode order into access units; see ``AccessUnitSplitter``.
    /// - Throws: the ``H264Error`` of a parameter set or slice header that does not parse.
    public static func split(_ nalUnits: [NALUnit]) throws -> [AccessUnit] {
        try splitWithParameterSets(nalUnits).accessUnits
    }

    /// ``split(_:)``, also returning the parameter sets the split parsed (the last of each id), so a stream's
    /// parameter sets are parsed once.
    /// - Parameter parameterSets: the parameter sets known before the first NAL unit (given out of band: an avcC
    ///   record, SDP's sprop-parameter-sets), and the ``ParsePolicy`` the split parses with; none and lenient
    ///   unless told.
    public static func splitWithParameterSets(_ nalUnits: [NALUnit], parameterSets: ParameterSets = ParameterSets()) throws -> (accessUnits: [AccessUnit], parameterSets: ParameterSets) {
        var splitter = AccessUnitSplitter(parameterSets: parameterSets)
        var units = [AccessUnit]()
        for nal in nalUnits {
            if let au = try splitter.push(nal) { units.append(au) }
        }
        if let au = splitter.finish() { units.append(au) }
        return (units, splitter.parameterSets)
    }
}

/// A frame in decode order as the decoding process outputs it: an access unit that is a coded frame, two access
/// units that are a complementary field pair, or a field without a partner (a non-paired field). Frame-level counts
/// (frames, IDR frames, picture types) count a field pair once.
///
/// Fields pair as H.264 clause 3 defines it: a complementary reference field pair (3.30) is two reference fields
/// (`nal_ref_idc` ≠ 0) in consecutive access units in decoding order, of opposite parity, with the same
/// `frame_num`, the second not an IDR picture; a complementary non-reference field pair (3.29) is two non-reference
/// fields in consecutive access units, of opposite parity, with the same `frame_num`; in both, the first field is
/// not already paired. One condition is not checked: a second reference field holding
/// `memory_management_control_operation` 5 does not pair either, but ``SliceHeader`` stops before
/// `dec_ref_pic_marking()`, so such a field is paired here.
public struct CodedFrame: Sendable, Hashable {
    /// How the frame is coded.
    public enum Structure: String, Sendable, Hashable, CaseIterable {
        /// One access unit, `field_pic_flag` 0.
        case frame
        /// Two reference fields (3.30).
        case complementaryReferenceFieldPair = "complementary reference field pair"
        /// Two non-reference fields (3.29).
        case complementaryNonReferenceFieldPair = "complementary non-reference field pair"
        /// A field of neither kind of pair: the other field of its frame is missing, of the same parity, or of
        /// another `frame_num` or reference kind.
        case nonPairedField = "non-paired field"

        /// True for the two kinds of field pair.
        public var isFieldPair: Bool { self == .complementaryReferenceFieldPair || self == .complementaryNonReferenceFieldPair }
    }

    /// Index in decode order among the frames, from 0.
    public var index: Int
    /// The ``AccessUnit/index`` of its access units in decode order: one, or two for a field pair.
    public var accessUnits: [Int]
    public var structure: Structure

    public init(index: Int, accessUnits: [Int], structure: Structure) {
        self.index = index
        self.accessUnits = accessUnits
        self.structure = structure
    }

    /// The frames of `units` (access units in decode order, as ``AccessUnit/split(_:)`` returns them), in decode
    /// order. Access units without a slice header (no primary coded picture) belong to no frame.
    public static func frames(_ units: [AccessUnit]) -> [CodedFrame] {
        var frames: [CodedFrame] = []
        var previous: (unit: AccessUnit, header: SliceHeader)?   // the last access unit, if an unpaired field
        for unit in units {
            guard let header = unit.sliceHeaders.first else { previous = nil; continue }
            if header.fieldPicFlag, let first = previous, let kind = pairing(first.header, header) {
                frames[frames.count - 1].accessUnits.append(unit.index)
                frames[frames.count - 1].structure = kind
                previous = nil
                continue
            }
            frames.append(CodedFrame(index: frames.count, accessUnits: [unit.index], structure: header.fieldPicFlag ? .nonPairedField : .frame))
            previous = header.fieldPicFlag ? (unit, header) : nil
        }
        return frames
    }

    /// The kind of pair that the field of `second` makes with the field of `first` just before it in decode order
    /// (3.29, 3.30), or nil when they do not pair.
    static func pairing(_ first: SliceHeader, _ second: SliceHeader) -> Structure? {
        guard first.fieldPicFlag, second.fieldPicFlag, first.bottomFieldFlag != second.bottomFieldFlag,
              first.frameNum == second.frameNum else { return nil }
        switch (first.nalRefIdc != 0, second.nalRefIdc != 0) {
        case (true, true): return second.isIDR ? nil : .complementaryReferenceFieldPair
        case (false, false): return .complementaryNonReferenceFieldPair
        default: return nil
        }
    }
}

/// Groups NAL units into access units one at a time, so a long stream need not be held whole.
///
/// Rules (H.264 7.4.1.2.3 and 7.4.1.2.4):
/// - after the last VCL NAL unit of a primary coded picture, the first access unit delimiter (9),
///   SPS (7), PPS (8), SEI (6) or NAL unit of type 14...18 starts a new access unit;
/// - so does the first VCL NAL unit (1...5) of a new primary coded picture, found by comparing
///   its slice header with the previous one (``SliceHeader/startsNewPicture(after:)``); data
///   partitions B and C (3, 4) carry no slice header and join the current access unit;
/// - a data partition (2...4) in a stream whose SPS (the last slice's, else the last one seen) is not of the
///   Extended profile is a NAL unit the decoder ignores, as FFmpeg's does ("data partitioning is not implemented"):
///   it joins the current access unit, its slice header is not read and it starts no picture, so it is not counted
///   as one (``DataPartitioning``);
/// - end of sequence (10) and end of stream (11) end the current access unit: the next NAL unit
///   starts a new one;
/// - every other type (filler data, SPS extension, auxiliary slices, ...) joins the current one.
///
/// SPS and PPS NAL units are parsed as they pass, to parse the slice headers.
public struct AccessUnitSplitter: Sendable {
    /// Parameter sets seen so far.
    public private(set) var parameterSets = ParameterSets()
    private var current: [NALUnit] = []
    private var currentHeaders: [SliceHeader] = []
    private var currentStart = 0
    private var hasVCL = false
    private var closed = false
    private var nextIndex = 0
    private var nalCount = 0
    /// The SPS of the last slice header read, and the last SPS seen: the profile that says whether a partition is one.
    private var sliceSPS: SequenceParameterSet?
    private var lastSPS: SequenceParameterSet?

    /// A splitter at the start of a stream, with no parameter sets.
    public init() {}

    /// A splitter at the start of a stream that knows `parameterSets` already (given out of band) and parses
    /// with their ``ParameterSets/policy``.
    public init(parameterSets: ParameterSets) {
        self.parameterSets = parameterSets
    }

    /// Adds the next NAL unit in decode order.
    /// - Returns: the access unit that `nal` completed (the one before it), if any.
    /// - Throws: the ``H264Error`` of an SPS, PPS or slice header that does not parse; the
    ///   splitter is left as it was before the call.
    public mutating func push(_ nal: NALUnit) throws -> AccessUnit? {
        let type = nal.nalUnitType.rawValue
        var header: SliceHeader?
        var newParameterSets = parameterSets
        try newParameterSets.add(nal)
        var newLastSPS = lastSPS
        if type == 7, let id = newParameterSets.spsNALUnits.first(where: { $0.value == nal })?.key {
            newLastSPS = newParameterSets.sequenceParameterSets[id]
        }
        // A partition outside the Extended profile is a NAL unit the decoder ignores (FFmpeg skips it): it joins the
        // current access unit, its slice header is not read and it starts no picture.
        let ignoredPartition = (2...4).contains(type) && (sliceSPS ?? newLastSPS).map { $0.profileIdc != DataPartitioning.extendedProfileIdc } == true
        if type == 1 || type == 5 || (type == 2 && !ignoredPartition) {
            header = try SliceHeader(nal: nal, parameterSets: newParameterSets)
        }
        var startsNew = closed
        if hasVCL {
            switch type {
            case 6, 7, 8, 9, 14...18:
                startsNew = true
            case 1, 2, 5:
                if let header, let previous = currentHeaders.last, header.startsNewPicture(after: previous) {
                    startsNew = true
                }
            default:
                break
            }
        }
        parameterSets = newParameterSets
        lastSPS = newLastSPS
        if let header, let pps = parameterSets.pictureParameterSets[header.picParameterSetId] {
            sliceSPS = parameterSets.sequenceParameterSets[pps.seqParameterSetId]
        }
        var completed: AccessUnit?
        if startsNew && !current.isEmpty {
            completed = takeCurrent()
        }
        current.append(nal)
        nalCount += 1
        if let header { currentHeaders.append(header) }
        if nal.nalUnitType.isVCL && !ignoredPartition { hasVCL = true }
        closed = type == 10 || type == 11
        return completed
    }

    /// Returns the last, unfinished access unit (nil if no NAL unit is pending).
    public mutating func finish() -> AccessUnit? {
        current.isEmpty ? nil : takeCurrent()
    }

    private mutating func takeCurrent() -> AccessUnit {
        let au = AccessUnit(index: nextIndex, nalUnitIndices: currentStart..<nalCount, nalUnits: current, sliceHeaders: currentHeaders)
        nextIndex += 1
        currentStart = nalCount
        current = []
        currentHeaders = []
        hasVCL = false
        return au
    }
}

/// The JSON shape of an access unit: `index`, `nal_unit_indices` (indices into the stream's NAL units),
/// `slice_types` ("I", "P", "B", "SP", "SI", one per slice), `idr`, `reference`, `field_pic_flag` and
/// `bottom_field_flag` (booleans).
extension AccessUnit: Encodable {
    enum CodingKeys: String, CodingKey {
        case index
        case nalUnitIndices = "nal_unit_indices"
        case sliceTypes = "slice_types"
        case idr, reference
        case fieldPicFlag = "field_pic_flag"
        case bottomFieldFlag = "bottom_field_flag"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(Array(nalUnitIndices), forKey: .nalUnitIndices)
        try c.encode(sliceTypes.map(\.description), forKey: .sliceTypes)
        try c.encode(isIDR, forKey: .idr)
        try c.encode(isReference, forKey: .reference)
        try c.encode(fieldPicFlag, forKey: .fieldPicFlag)
        try c.encode(bottomFieldFlag, forKey: .bottomFieldFlag)
    }
}
