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
    public var isReference: Bool { nalUnits.contains { $0.nalUnitType.isVCL && $0.nalRefIdc != 0 } }
    /// True when the access unit holds a VCL NAL unit (types 1...5).
    public var hasPrimaryPicture: Bool { nalUnits.contains { $0.nalUnitType.isVCL } }

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

/// Groups NAL units into access units one at a time, so a long stream need not be held whole.
///
/// Rules (H.264 7.4.1.2.3 and 7.4.1.2.4):
/// - after the last VCL NAL unit of a primary coded picture, the first access unit delimiter (9),
///   SPS (7), PPS (8), SEI (6) or NAL unit of type 14...18 starts a new access unit;
/// - so does the first VCL NAL unit (1...5) of a new primary coded picture, found by comparing
///   its slice header with the previous one (``SliceHeader/startsNewPicture(after:)``); data
///   partitions B and C (3, 4) carry no slice header and join the current access unit;
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
        if type == 1 || type == 2 || type == 5 {
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
        var completed: AccessUnit?
        if startsNew && !current.isEmpty {
            completed = takeCurrent()
        }
        current.append(nal)
        nalCount += 1
        if let header { currentHeaders.append(header) }
        if nal.nalUnitType.isVCL { hasVCL = true }
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

/// The JSON shape `enclab inspect --json` lists access units in: `index`, `nal_unit_indices`
/// (indices into the stream's NAL units), `slice_types` ("I", "P", "B", "SP", "SI", one per slice),
/// `idr` and `reference`.
extension AccessUnit: Encodable {
    enum CodingKeys: String, CodingKey {
        case index
        case nalUnitIndices = "nal_unit_indices"
        case sliceTypes = "slice_types"
        case idr, reference
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(Array(nalUnitIndices), forKey: .nalUnitIndices)
        try c.encode(sliceTypes.map(\.description), forKey: .sliceTypes)
        try c.encode(isIDR, forKey: .idr)
        try c.encode(isReference, forKey: .reference)
    }
}
