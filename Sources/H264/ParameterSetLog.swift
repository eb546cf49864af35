/// One SPS or PPS NAL unit as it appears in a stream, or as it was given out of band (an avcC record, SDP's
/// sprop-parameter-sets): what `enclab inspect` lists, and what decides whether one avcC record can describe a
/// stream (it holds one set per id: ISO/IEC 14496-15 5.3.3.1 needs a new sample entry where a set changes).
public struct ParameterSetOccurrence: Sendable {
    /// SPS (`nal_unit_type` 7) or PPS (8).
    public enum Kind: String, Sendable {
        case sps, pps
    }

    /// How an occurrence relates to the parameter set in force for its id just before it.
    public enum Content: String, Sendable {
        /// The first occurrence of its id.
        case first
        /// The same bytes after the NAL unit header as the one in force: a repetition.
        case repeated
        /// Other bytes: the id is given new content (a resolution switch reusing SPS id 0, say).
        case changed
    }

    public var kind: Kind
    /// `seq_parameter_set_id` (0...31) or `pic_parameter_set_id` (0...255).
    public var id: Int
    /// Its position among the occurrences of its kind, from 0 (SPSs and PPSs are numbered apart).
    public var occurrence: Int
    /// Index of the NAL unit in the stream's NAL units (decode order, from 0); nil when given out of band.
    public var nalUnitIndex: Int?
    /// The NAL unit (escaped bytes, header included).
    public var nal: NALUnit
    public var content: Content
    /// The parsed SPS, for kind `.sps`.
    public var sps: SequenceParameterSet?
    /// The parsed PPS, for kind `.pps`.
    public var pps: PictureParameterSet?
    /// For a PPS: the ``occurrence`` of the SPS it was parsed with (the one in force for its
    /// `seq_parameter_set_id` then).
    public var spsOccurrence: Int?
}

/// Every SPS and PPS of a stream in the order they come, each parsed against the parameter sets in force at that
/// point (as a decoder keeps them: a later set with the same id replaces the earlier one), with the warnings of
/// their tolerated values (``ParsePolicy``).
///
/// ``AccessUnit/splitWithParameterSets(_:parameterSets:)`` keeps only the sets in force; this log keeps each
/// occurrence, so a stream whose SPS 0 changes mid-stream shows both, and each access unit can name the
/// occurrences it was parsed with (``occurrences(for:)``).
public struct ParameterSetLog: Sendable {
    /// Every occurrence, in the order added (out-of-band ones first when they were added first).
    public private(set) var occurrences: [ParameterSetOccurrence] = []
    /// The parameter sets in force after the last occurrence added.
    public private(set) var inForce: ParameterSets
    /// The warnings of tolerated values, each with its ``ParseWarning/nalUnitIndex`` (nil for one given out of
    /// band). A repeated occurrence (same bytes as the set in force) adds none: its warnings were given once.
    public private(set) var warnings: [ParseWarning] = []
    private var spsCount = 0
    private var ppsCount = 0
    /// Occurrence number of the SPS in force, by id.
    private var spsInForce: [Int: Int] = [:]

    /// An empty log that parses with `policy`.
    public init(policy: ParsePolicy = .lenient) {
        inForce = ParameterSets(policy: policy)
    }

    /// The SPS occurrences, in order.
    public var sequenceParameterSets: [ParameterSetOccurrence] { occurrences.filter { $0.kind == .sps } }
    /// The PPS occurrences, in order.
    public var pictureParameterSets: [ParameterSetOccurrence] { occurrences.filter { $0.kind == .pps } }
    /// The first occurrence that gives an id new content, nil when no id changes.
    public var firstChange: ParameterSetOccurrence? { occurrences.first { $0.content == .changed } }

    /// The NAL units of the first occurrence of each id, SPSs then PPSs, each in increasing id order: the sets
    /// an avcC record written for the start of the stream holds.
    public var firstOfEachId: (sequenceParameterSets: [NALUnit], pictureParameterSets: [NALUnit]) {
        func firsts(_ kind: ParameterSetOccurrence.Kind) -> [NALUnit] {
            var seen: [Int: NALUnit] = [:]
            for o in occurrences where o.kind == kind && seen[o.id] == nil { seen[o.id] = o.nal }
            return seen.sorted { $0.key < $1.key }.map(\.value)
        }
        return (firsts(.sps), firsts(.pps))
    }

    /// Parses `nal` when it is an SPS or PPS and logs it; ignores other types.
    /// - Parameters:
    ///   - nal: any NAL unit.
    ///   - nalUnitIndex: its index in the stream's NAL units; nil for one given out of band.
    /// - Returns: the occurrence logged, nil for another type.
    /// - Throws: the ``H264Error`` of the parameter set (a PPS whose SPS is unknown included); nothing is logged.
    @discardableResult
    public mutating func add(_ nal: NALUnit, nalUnitIndex: Int?) throws -> ParameterSetOccurrence? {
        guard nal.nalUnitType == .sps || nal.nalUnitType == .pps else { return nil }
        var found: [ParseWarning] = []
        let before = inForce
        guard let parsed = try inForce.add(nal, warnings: &found) else { return nil }
        func content(_ previous: NALUnit?) -> ParameterSetOccurrence.Content {
            guard let previous else { return .first }
            return previous.bytes.dropFirst() == nal.bytes.dropFirst() ? .repeated : .changed
        }
        let occurrence: ParameterSetOccurrence
        switch parsed {
        case .sps(let sps):
            let id = sps.seqParameterSetId
            occurrence = ParameterSetOccurrence(kind: .sps, id: id, occurrence: spsCount, nalUnitIndex: nalUnitIndex, nal: nal,
                                                content: content(before.spsNALUnits[id]), sps: sps)
            spsInForce[id] = spsCount
            spsCount += 1
        case .pps(let pps):
            let id = pps.picParameterSetId
            occurrence = ParameterSetOccurrence(kind: .pps, id: id, occurrence: ppsCount, nalUnitIndex: nalUnitIndex, nal: nal,
                                                content: content(before.ppsNALUnits[id]), pps: pps,
                                                spsOccurrence: spsInForce[pps.seqParameterSetId])
            ppsCount += 1
        }
        if occurrence.content != .repeated {
            warnings += found.map { var w = $0; w.nalUnitIndex = nalUnitIndex; return w }
        }
        occurrences.append(occurrence)
        return occurrence
    }

    /// The occurrence of `kind` and `id` in force just before NAL unit `nalUnitIndex`: the last one logged from an
    /// earlier NAL unit or out of band.
    public func occurrence(_ kind: ParameterSetOccurrence.Kind, id: Int, before nalUnitIndex: Int) -> ParameterSetOccurrence? {
        occurrences.last { $0.kind == kind && $0.id == id && ($0.nalUnitIndex ?? -1) < nalUnitIndex }
    }

    /// The SPS and PPS occurrences an access unit's slices were parsed with: the PPS its first slice names, in
    /// force at that slice, and the SPS that PPS names, in force there too. Both nil for an access unit without a
    /// slice header. `unit` comes from splitting the same NAL units this log was given, with the same indices.
    public func occurrences(for unit: AccessUnit) -> (sps: ParameterSetOccurrence?, pps: ParameterSetOccurrence?) {
        guard let header = unit.sliceHeaders.first,
              let k = unit.nalUnits.firstIndex(where: { [1, 2, 5].contains($0.nalUnitType.rawValue) }) else { return (nil, nil) }
        let at = unit.nalUnitIndices.lowerBound + k
        guard let pps = occurrence(.pps, id: header.picParameterSetId, before: at) else { return (nil, nil) }
        return (pps.pps.flatMap { occurrence(.sps, id: $0.seqParameterSetId, before: at) }, pps)
    }
}
