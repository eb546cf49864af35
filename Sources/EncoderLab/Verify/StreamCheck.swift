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
public enum StreamCheck {
    /// profile_idc of x264's `--profile` names (H.264 Annex A).
    static let profileIdc = ["baseline": 66, "main": 77, "high": 100, "high10": 110, "high422": 122, "high444": 244]
    /// Those profiles from least to most capable.
    static let profileOrder = [66, 77, 100, 110, 122, 244]

    /// - Throws: the `H264` module's error, naming the byte or bit offset, when the stream does not parse.
    public static func verify(stream: [UInt8], frames: [EncodedFrame], resolved: ResolvedParameters,
                              profile: String?) throws -> StreamVerification {
        let nals = try AnnexB.split(stream).map(\.nal)
        let (units, sets) = try AccessUnit.splitWithParameterSets(nals)
        var checks: [BitstreamCheck] = []
        func check(_ name: String, _ expected: some CustomStringConvertible, _ actual: some CustomStringConvertible) {
            checks.append(BitstreamCheck(name: name, expected: expected.description, actual: actual.description,
                                         passed: expected.description == actual.description))
        }
        func check(_ name: String, expected: String, actual: some CustomStringConvertible, passed: Bool) {
            checks.append(BitstreamCheck(name: name, expected: expected, actual: actual.description, passed: passed))
        }
        check("access_unit_count", frames.count, units.count)
        for (frame, unit) in zip(frames, units) {
            let at = "access_unit[\(frame.codedIndex)]"
            check("\(at).idr", frame.type == .idr, unit.isIDR)
            check("\(at).reference", frame.type != .b, unit.isReference)
            let expectedSlice: SliceType = [.idr, .i].contains(frame.type) ? .i : frame.type == .p ? .p : .b
            let types = Set(unit.sliceTypes)
            check("\(at).slice_types", expectedSlice.description, types.count == 1 ? types.first!.description : unit.sliceTypes.map(\.description).joined(separator: ","))
        }
        // Checks: the last parameter set of each id in the stream (parsed once, by the access unit split).
        for (id, sps) in sets.sequenceParameterSets.sorted(by: { $0.key < $1.key }) {
            // --profile is a ceiling: x264 writes the lowest profile its settings need (x264.h, x264_param_apply_profile).
            if let p = profile, let idc = profileIdc[p.lowercased()], let rank = profileOrder.firstIndex(of: idc) {
                let within = profileOrder.firstIndex(of: sps.profileIdc).map { $0 <= rank } ?? false
                check("sps[\(id)].profile_idc", expected: "<= \(idc) (--profile \(p))", actual: sps.profileIdc, passed: within)
            }
            check("sps[\(id)].level_idc", resolved.levelIdc, sps.levelIdc)
            if let reorder = reorderFrames(sps) {
                check("sps[\(id)].max_num_reorder_frames", expected: resolved.bframes == 0 ? "0" : ">= 1", actual: reorder,
                      passed: resolved.bframes == 0 ? reorder == 0 : reorder >= 1)
            } else {
                check("sps[\(id)].bitstream_restriction_flag", expected: "1, or 0 for intra-only High (constraint_set3_flag 1)",
                      actual: "0 (profile_idc \(sps.profileIdc), constraint_set3_flag \(sps.constraintSet3Flag ? 1 : 0))",
                      passed: sps.profileIdc >= 100 && sps.constraintSet3Flag)
            }
        }
        for (id, pps) in sets.pictureParameterSets.sorted(by: { $0.key < $1.key }) {
            check("pps[\(id)].entropy_coding_mode_flag", resolved.cabac ? 1 : 0, pps.entropyCodingModeFlag ? 1 : 0)
        }
        let stored = try parameterSets(nals)
        if sets.sequenceParameterSets.isEmpty { check("sps present", true, false) }
        return StreamVerification(accessUnits: units, checks: checks, parameterSets: stored)
    }

    /// max_num_reorder_frames of the SPS VUI's bitstream restriction, nil when absent.
    static func reorderFrames(_ sps: SequenceParameterSet) -> Int? {
        sps.vuiParameters.flatMap { $0.bitstreamRestrictionFlag ? $0.maxNumReorderFrames : nil }
    }

    /// Every SPS and PPS among `nals` (a stream's NAL units in order), as the store keeps them: in stream order,
    /// each with its NAL unit index; a PPS parsed with the SPSs seen before it.
    /// - Throws: the `H264` module's error for a parameter set that does not parse.
    static func parameterSets(_ nals: [NALUnit]) throws -> [StoredParameterSet] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var seen: [Int: SequenceParameterSet] = [:]
        var stored: [StoredParameterSet] = []
        for (index, nal) in nals.enumerated() {
            switch nal.nalUnitType {
            case .sps:
                let sps = try SequenceParameterSet(rbsp: nal.rbsp)
                seen[sps.seqParameterSetId] = sps
                stored.append(StoredParameterSet(kind: "sps", id: sps.seqParameterSetId, profileIdc: sps.profileIdc,
                                                 levelIdc: sps.levelIdc, width: sps.width, height: sps.height,
                                                 entropyCodingModeFlag: nil, maxNumReorderFrames: reorderFrames(sps),
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
                continue
            }
        }
        return stored
    }

    /// Round-trips a stream's access units through the packet format and back to Annex B.
    ///
    /// - Returns: the serialized packets (one file's bytes) and the Annex B stream rebuilt from them.
    /// - Throws: `.software` when the rebuilt stream's NAL units differ from the original's (parameter sets,
    ///   AUD and filler aside, which the packet format moves or drops), or the `H264` module's error.
    public static func packetRoundTrip(_ units: [AccessUnit], frames: [EncodedFrame], timebaseNum: Int, timebaseDen: Int) throws -> (packets: [UInt8], annexB: [UInt8]) {
        let times = try frames.map { f in
            (ptsMicroseconds: try Packet.microseconds(ticks: f.pts, timebaseNumerator: Int64(timebaseNum), timebaseDenominator: Int64(timebaseDen)),
             dtsMicroseconds: try Packet.microseconds(ticks: f.dts, timebaseNumerator: Int64(timebaseNum), timebaseDenominator: Int64(timebaseDen)))
        }
        let packets = try Packet.fromAccessUnits(units, timestamps: times)
        var bytes: [UInt8] = []
        for p in packets { bytes += try p.serialize() }
        let back = try Packet.deserializeAll(bytes)
        guard back == packets else { throw LabError.software("packets changed in a serialize/deserialize round trip") }
        let annexB = Packet.annexB(back)
        let kept: (NALUnit) -> Bool = { ![.sps, .pps].contains($0.nalUnitType) && !Packet.droppedNALUnitTypes.contains($0.nalUnitType) }
        let original = units.flatMap(\.nalUnits).filter(kept)
        let rebuilt = try AnnexB.split(annexB).map(\.nal).filter(kept)
        guard original == rebuilt else {
            throw LabError.software("Annex B -> packets -> Annex B changed the NAL units (\(original.count) before, \(rebuilt.count) after)")
        }
        return (bytes, annexB)
    }
}
