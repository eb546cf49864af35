import Foundation
import H264

/// One check of a written stream against what the encoder said or was asked to do.
public struct BitstreamCheck: Sendable, Equatable {
    /// What was checked, e.g. `access_unit_count`, `slice_types`, `profile_idc`.
    public var name: String
    /// What x264 or the settings call for, e.g. `true`, `100`, `>= 1`, `<= 100 (--profile high)`.
    public var expected: String
    /// What the stream holds.
    public var actual: String
    public var passed: Bool
}

/// A parameter set as parsed back from a stream, with its syntax elements as JSON (snake_case spec names): one
/// row of `parameter_sets` (its occurrence and `new_content` follow from its place in
/// ``StreamVerification/parameterSets``).
public struct StoredParameterSet: Sendable {
    /// `sps` or `pps`.
    public var kind: String
    /// seq_parameter_set_id or pic_parameter_set_id.
    public var id: Int
    public var profileIdc: Int?
    public var levelIdc: Int?
    public var width: Int?
    public var height: Int?
    public var entropyCodingModeFlag: Int?
    public var maxNumReorderFrames: Int?
    public var fieldsJSON: String
    /// The index (from 0) of its NAL unit among the stream's NAL units, as `inspect` numbers them; nil when unknown.
    public var nalUnitIndex: Int? = nil
}

/// What the lab learned by parsing a stream back with the `H264` module.
public struct StreamVerification: Sendable {
    /// The stream's access units when a caller split a whole stream; empty from the pipeline, which checks each
    /// access unit as it is written and keeps none (memory flat in clip length).
    public var accessUnits: [AccessUnit]
    public var checks: [BitstreamCheck]
    /// Every SPS and PPS NAL unit of the stream, in stream order (repeats included).
    public var parameterSets: [StoredParameterSet]
    public var failures: [BitstreamCheck] { checks.filter { !$0.passed } }
}

/// Parses a lab stream back and checks it against x264's report and the settings (the encoder is not trusted):
/// the number of access units; per access unit, IDR (nal_unit_type 5) against x264's IDR, reference
/// (nal_ref_idc) against x264's reference types, and slice_type against the picture type; in the SPS and PPS,
/// profile_idc against `--profile`, level_idc against x264's level, entropy_coding_mode_flag against CABAC, and
/// the VUI bitstream restriction's max_num_reorder_frames: 0 without B-frames, at least 1 with them, absent
/// only for intra-only High profiles (constraint_set3_flag).
///
/// Incremental: ``add(_:bytes:)`` takes each frame's bytes as written, in decode order; the access units are split
/// from those bytes by the `H264` module's ``AccessUnitSplitter`` (the spec's rules, not x264's frame boundaries)
/// and each is checked against the frame of its position as it completes; ``finish(resolved:profile:)`` adds the
/// count and the parameter set checks. Only the frames whose access unit is not complete yet are held.
public struct StreamCheck {
    /// profile_idc of x264's `--profile` names (H.264 Annex A).
    static let profileIdc = ["baseline": 66, "main": 77, "high": 100, "high10": 110, "high422": 122, "high444": 244]
    /// Those profiles from least to most capable.
    static let profileOrder = [66, 77, 100, 110, 122, 244]

    private var splitter = AccessUnitSplitter()
    private var sets = ParameterSetRecorder()
    /// Frames written whose access unit has not completed, oldest first.
    private var waiting: [EncodedFrame] = []
    private var perUnit: [BitstreamCheck] = []
    private var frameCount = 0
    private var unitCount = 0
    /// Called with each access unit as it completes and the frame x264 wrote it as (nil past x264's frames).
    private let completed: (AccessUnit, EncodedFrame?) throws -> Void

    /// - Parameter completed: called with each access unit, in decode order, as soon as the next one begins (the
    ///   last at ``finish(resolved:profile:)``), with x264's frame of the same position.
    public init(completed: @escaping (AccessUnit, EncodedFrame?) throws -> Void = { _, _ in }) {
        self.completed = completed
    }

    /// Parses the next frame's bytes as written (its NAL units with their start codes, in order).
    /// - Parameter bytes: the access unit's bytes, Annex B.
    /// - Throws: the `H264` module's error, naming the byte or bit offset, when they do not parse; `completed`'s.
    public mutating func add(_ frame: EncodedFrame, bytes: [UInt8]) throws {
        var bare = frame
        bare.nals = []
        waiting.append(bare)
        frameCount += 1
        for located in try AnnexB.split(bytes) {
            try sets.add(located.nal)
            if let unit = try splitter.push(located.nal) { try checkUnit(unit) }
        }
    }

    /// Completes the stream: the last access unit, the count, and the parameter sets against x264's `resolved`
    /// parameters and `--profile`.
    public mutating func finish(resolved: ResolvedParameters, profile: String?) throws -> StreamVerification {
        if let unit = splitter.finish() { try checkUnit(unit) }
        var checks: [BitstreamCheck] = []
        func check(_ name: String, _ expected: some CustomStringConvertible, _ actual: some CustomStringConvertible) {
            checks.append(BitstreamCheck(name: name, expected: expected.description, actual: actual.description,
                                         passed: expected.description == actual.description))
        }
        func check(_ name: String, expected: String, actual: some CustomStringConvertible, passed: Bool) {
            checks.append(BitstreamCheck(name: name, expected: expected, actual: actual.description, passed: passed))
        }
        check("access_unit_count", frameCount, unitCount)
        checks += perUnit
        // Checks: the last parameter set of each id in the stream (parsed once, by the access unit split).
        let parsed = splitter.parameterSets
        for (id, sps) in parsed.sequenceParameterSets.sorted(by: { $0.key < $1.key }) {
            // --profile is a ceiling: x264 writes the lowest profile its settings need (x264.h, x264_param_apply_profile).
            if let p = profile, let idc = Self.profileIdc[p.lowercased()], let rank = Self.profileOrder.firstIndex(of: idc) {
                let within = Self.profileOrder.firstIndex(of: sps.profileIdc).map { $0 <= rank } ?? false
                check("sps[\(id)].profile_idc", expected: "<= \(idc) (--profile \(p))", actual: sps.profileIdc, passed: within)
            }
            check("sps[\(id)].level_idc", resolved.levelIdc, sps.levelIdc)
            if let reorder = Self.reorderFrames(sps) {
                check("sps[\(id)].max_num_reorder_frames", expected: resolved.bframes == 0 ? "0" : ">= 1", actual: reorder,
                      passed: resolved.bframes == 0 ? reorder == 0 : reorder >= 1)
            } else {
                check("sps[\(id)].bitstream_restriction_flag", expected: "1, or 0 for intra-only High (constraint_set3_flag 1)",
                      actual: "0 (profile_idc \(sps.profileIdc), constraint_set3_flag \(sps.constraintSet3Flag ? 1 : 0))",
                      passed: sps.profileIdc >= 100 && sps.constraintSet3Flag)
            }
        }
        for (id, pps) in parsed.pictureParameterSets.sorted(by: { $0.key < $1.key }) {
            check("pps[\(id)].entropy_coding_mode_flag", resolved.cabac ? 1 : 0, pps.entropyCodingModeFlag ? 1 : 0)
        }
        if parsed.sequenceParameterSets.isEmpty { check("sps present", true, false) }
        return StreamVerification(accessUnits: [], checks: checks, parameterSets: sets.stored)
    }

    /// The per-access-unit checks of one completed access unit against the frame of its position.
    private mutating func checkUnit(_ unit: AccessUnit) throws {
        unitCount += 1
        let frame = waiting.isEmpty ? nil : waiting.removeFirst()
        try completed(unit, frame)
        guard let frame else { return }
        func check(_ name: String, _ expected: some CustomStringConvertible, _ actual: some CustomStringConvertible) {
            perUnit.append(BitstreamCheck(name: name, expected: expected.description, actual: actual.description,
                                          passed: expected.description == actual.description))
        }
        let at = "access_unit[\(frame.codedIndex)]"
        check("\(at).idr", frame.type == .idr, unit.isIDR)
        check("\(at).reference", frame.type != .b, unit.isReference)
        let expectedSlice: SliceType = [.idr, .i].contains(frame.type) ? .i : frame.type == .p ? .p : .b
        let types = Set(unit.sliceTypes)
        check("\(at).slice_types", expectedSlice.description, types.count == 1 ? types.first!.description : unit.sliceTypes.map(\.description).joined(separator: ","))
    }

    /// max_num_reorder_frames of the SPS VUI's bitstream restriction, nil when absent.
    static func reorderFrames(_ sps: SequenceParameterSet) -> Int? {
        sps.vuiParameters.flatMap { $0.bitstreamRestrictionFlag ? $0.maxNumReorderFrames : nil }
    }

    /// Every SPS and PPS among `nals` (a stream's NAL units in order), as the store keeps them
    /// (``ParameterSetRecorder``).
    /// - Throws: the `H264` module's error for a parameter set that does not parse.
    static func parameterSets(_ nals: [NALUnit]) throws -> [StoredParameterSet] {
        var recorder = ParameterSetRecorder()
        for nal in nals { try recorder.add(nal) }
        return recorder.stored
    }
}

/// Every SPS and PPS of a stream as the store keeps them: in stream order, each with its NAL unit index; a PPS parsed
/// with the SPSs seen before it. Takes the stream's NAL units one at a time.
struct ParameterSetRecorder {
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    private var seen: [Int: SequenceParameterSet] = [:]
    private var index = 0
    /// The parameter sets so far, in stream order.
    private(set) var stored: [StoredParameterSet] = []

    /// Takes the stream's next NAL unit.
    /// - Throws: the `H264` module's error for a parameter set that does not parse.
    mutating func add(_ nal: NALUnit) throws {
        defer { index += 1 }
        switch nal.nalUnitType {
        case .sps:
            let sps = try SequenceParameterSet(rbsp: nal.rbsp)
            seen[sps.seqParameterSetId] = sps
            stored.append(StoredParameterSet(kind: "sps", id: sps.seqParameterSetId, profileIdc: sps.profileIdc,
                                             levelIdc: sps.levelIdc, width: sps.width, height: sps.height,
                                             entropyCodingModeFlag: nil, maxNumReorderFrames: StreamCheck.reorderFrames(sps),
                                             fieldsJSON: String(decoding: try encoder.encode(sps), as: UTF8.self),
                                             nalUnitIndex: index))
        case .pps:
            let pps = try PictureParameterSet(rbsp: nal.rbsp, sequenceParameterSets: seen)
            stored.append(StoredParameterSet(kind: "pps", id: pps.picParameterSetId, profileIdc: nil, levelIdc: nil,
                                             width: nil, height: nil, entropyCodingModeFlag: pps.entropyCodingModeFlag ? 1 : 0,
                                             maxNumReorderFrames: nil,
                                             fieldsJSON: String(decoding: try encoder.encode(pps), as: UTF8.self),
                                             nalUnitIndex: index))
        default:
            break
        }
    }
}

/// Round-trips a stream's access units, one at a time, through the lab's packet format and back to Annex B, as
/// ``Packet/fromAccessUnits(_:timestamps:placement:)`` (parameter sets on every packet) and ``Packet/annexB(_:skipRepeatedParameterSets:)``
/// do for a whole stream: the same bytes, packet by packet.
///
/// Each rebuilt access unit's NAL units are compared byte for byte with the original's (parameter sets, AUD and
/// filler aside, which the packet format moves or drops). With its parameter sets those in force at that access unit
/// in the original (the last of each id its slices refer to, carried on every packet), this proves the rebuilt stream decodes to the
/// same pictures: a decoder's output depends only on the slices, SEI and the parameter sets in force, not on AUD,
/// filler or repeats of an identical parameter set.
struct PacketRoundTrip {
    private var parameterSets = ParameterSets()
    private var decodeOrder: UInt64 = 0
    let timebaseNum: Int, timebaseDen: Int

    init(timebaseNum: Int, timebaseDen: Int) {
        self.timebaseNum = timebaseNum
        self.timebaseDen = timebaseDen
    }

    /// One access unit in decode order, with its frame's times.
    /// - Returns: the serialized packet (the next bytes of `packets.bin`) and the Annex B bytes rebuilt from it (the
    ///   next bytes of `from-packets.264`).
    /// - Throws: `.software` when the packet changes in a serialize/deserialize round trip or the rebuilt NAL units
    ///   differ from the original's; the `H264` module's error.
    mutating func next(_ unit: AccessUnit, pts: Int64, dts: Int64) throws -> (packet: [UInt8], annexB: [UInt8]) {
        var body = [NALUnit]()
        for nal in unit.nalUnits {
            if try parameterSets.add(nal) { continue }
            if Packet.droppedNALUnitTypes.contains(nal.nalUnitType) { continue }
            body.append(nal)
        }
        // The parameter sets this access unit's slices refer to (their PPSs and those PPSs' SPSs), as in force here. Not
        // every id seen: OpenH264's default eSpsPpsIdStrategy (INCREASING_ID) gives each IDR new ids, so a stream of
        // more than 31 IDRs has 32 SPS ids (seq_parameter_set_id 0-31), more than a packet holds (31, avcC's 5 bits).
        let ppsIds = Set(unit.sliceHeaders.map(\.picParameterSetId))
        let spsIds = Set(ppsIds.compactMap { parameterSets.pictureParameterSets[$0]?.seqParameterSetId })
        let packet = Packet(isIDR: unit.isIDR, decodeOrder: decodeOrder,
                            ptsMicroseconds: try microseconds(pts), dtsMicroseconds: try microseconds(dts),
                            sequenceParameterSets: parameterSets.spsNALUnits.filter { spsIds.contains($0.key) }.sorted { $0.key < $1.key }.map(\.value),
                            pictureParameterSets: parameterSets.ppsNALUnits.filter { ppsIds.contains($0.key) }.sorted { $0.key < $1.key }.map(\.value),
                            nalUnits: body)
        decodeOrder += 1
        let bytes = try packet.serialize()
        let back = try Packet.deserialize(bytes)
        guard back == packet else {
            throw LabError.software("packet \(packet.decodeOrder) changed in a serialize/deserialize round trip")
        }
        let annexB = Packet.annexB([back])
        let kept: (NALUnit) -> Bool = { ![.sps, .pps].contains($0.nalUnitType) && !Packet.droppedNALUnitTypes.contains($0.nalUnitType) }
        let rebuilt = try AnnexB.split(annexB).map(\.nal)
        guard unit.nalUnits.filter(kept) == rebuilt.filter(kept),
              rebuilt.filter({ [.sps, .pps].contains($0.nalUnitType) }) == packet.sequenceParameterSets + packet.pictureParameterSets else {
            throw LabError.software("Annex B -> packets -> Annex B changed the NAL units of access unit \(packet.decodeOrder)")
        }
        return (bytes, annexB)
    }

    private func microseconds(_ ticks: Int64) throws -> Int64 {
        try Packet.microseconds(ticks: ticks, timebaseNumerator: Int64(timebaseNum), timebaseDenominator: Int64(timebaseDen))
    }
}
