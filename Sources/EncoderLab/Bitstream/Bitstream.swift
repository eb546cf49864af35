import Foundation
import H264

/// The three shapes an H.264 stream travels in, as `enclab inspect` and `enclab convert` read and write them.
public enum StreamFormat: String, CaseIterable, Sendable {
    /// Start codes before each NAL unit (H.264 Annex B), as x264 writes.
    case annexb
    /// Each NAL unit behind a big-endian length (ISO/IEC 14496-15 sample format), as VideoToolbox writes.
    case avcc
    /// The lab's packet format (`Sources/H264/PACKETS.md`).
    case packets
}

/// A stream read into NAL units in decode order, with where each sits in the file.
public struct LoadedStream {
    public var format: StreamFormat
    /// NAL units in decode order with the byte offset of each NAL header (after its start code or length).
    public var nalUnits: [LocatedNALUnit]
    /// For packets input: the packets as read.
    public var packets: [Packet]?
}

/// Reading, inspecting and converting streams: the command line's `inspect` and `convert`.
public enum Bitstream {
    /// Reads a stream file.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - format: the format, or nil to detect it: a leading start code (00 00 01 or 00 00 00 01) means Annex B;
    ///     otherwise the file is read as packets when it parses whole as packets, else as AVCC.
    ///   - lengthSize: the AVCC length size in bytes (1, 2 or 4).
    /// - Throws: `.noInput` for a missing file; `.data` naming the file and the `H264` module's message (byte
    ///   offset, syntax element) when it does not parse.
    public static func load(_ path: String, format: StreamFormat? = nil, lengthSize: Int = 4) throws -> LoadedStream {
        guard FileManager.default.fileExists(atPath: path) else { throw LabError.noInput("\(path): no such file") }
        guard let data = FileManager.default.contents(atPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        let bytes = [UInt8](data)
        if bytes.isEmpty { throw LabError.data("\(path): empty file") }
        do {
            // Packets offsets are reported within the Annex B stream the packets stand for.
            func fromPackets(_ packets: [Packet]) throws -> LoadedStream {
                LoadedStream(format: .packets, nalUnits: try AnnexB.split(Packet.annexB(packets)), packets: packets)
            }
            switch format {
            case .annexb?:
                return LoadedStream(format: .annexb, nalUnits: try AnnexB.split(bytes), packets: nil)
            case .avcc?:
                return LoadedStream(format: .avcc, nalUnits: try AVCC.split(bytes, lengthSize: lengthSize), packets: nil)
            case .packets?:
                return try fromPackets(try Packet.deserializeAll(bytes))
            case nil:
                if AnnexB.startsWithStartCode(bytes) {
                    return LoadedStream(format: .annexb, nalUnits: try AnnexB.split(bytes), packets: nil)
                }
                // Neither start code nor --from: packets if the whole file reads as packets, else AVCC; if neither
                // reads, say what each reading found.
                do { return try fromPackets(try Packet.deserializeAll(bytes)) } catch let asPackets as H264Error {
                    do {
                        return LoadedStream(format: .avcc, nalUnits: try AVCC.split(bytes, lengthSize: lengthSize), packets: nil)
                    } catch let asAVCC as H264Error {
                        throw LabError.data("\(path): not Annex B (no leading start code); as packets: \(asPackets); as AVCC with \(lengthSize)-byte lengths: \(asAVCC) (another --length-size?)")
                    }
                }
            }
        } catch let error as H264Error {
            throw LabError.data("\(path): \(error)")
        }
    }

    /// The stream's NAL units, access units and parameter sets (latest per id).
    /// - Throws: `.data` naming the file when a parameter set or slice header does not parse.
    static func structure(_ stream: LoadedStream, path: String) throws -> ([NALUnit], [AccessUnit], ParameterSets) {
        let nals = stream.nalUnits.map(\.nal)
        do {
            let (units, sets) = try AccessUnit.splitWithParameterSets(nals)
            return (nals, units, sets)
        } catch let e as H264Error { throw LabError.data("\(path): \(e)") }
    }

    /// The picture's type in the lab's `frames.type` vocabulary: IDR, I, P, Bref (reference B), B (non-reference B).
    static func pictureName(_ u: AccessUnit) -> String {
        if u.isIDR { return "IDR" }
        let types = Set(u.sliceTypes)
        if types.contains(.b) { return u.isReference ? "Bref" : "B" }
        if types.contains(.p) { return "P" }
        return types.isEmpty ? "(no picture)" : "I"
    }

    /// The stream's frames (``CodedFrame/frames(_:)``: a field pair counted once), the frame each access unit
    /// belongs to (nil for one without a picture), and each frame's picture name: its first access unit's
    /// (``pictureName(_:)``; so a frame whose first field is an IDR is an IDR frame).
    static func frames(_ units: [AccessUnit]) -> (frames: [CodedFrame], frameOf: [Int: Int], names: [String]) {
        let frames = CodedFrame.frames(units)
        var frameOf: [Int: Int] = [:]
        for f in frames { for k in f.accessUnits { frameOf[k] = f.index } }
        let byIndex = Dictionary(units.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        return (frames, frameOf, frames.map { byIndex[$0.accessUnits[0]].map(pictureName) ?? "(no picture)" })
    }

    /// Frame-level counts: frames, field pairs, non-paired fields, and frames per picture name (IDR, I, P, Bref, B).
    static func frameCounts(_ frames: [CodedFrame], names: [String]) -> (frames: Int, fieldPairs: Int, nonPairedFields: Int, pictures: [(String, Int)]) {
        let pictures = ["IDR", "I", "P", "Bref", "B"].map { name in (name, names.filter { $0 == name }.count) }
        return (frames.count, frames.filter(\.structure.isFieldPair).count, frames.filter { $0.structure == .nonPairedField }.count, pictures)
    }

    /// NAL units a reader can still list but that break a rule of the NAL unit header: today those whose
    /// `forbidden_zero_bit` is 1 (H.264 7.3.1; 7.4.1 says it shall be 0, and RFC 6184 5.3 uses it to mark a NAL
    /// unit that may hold bit errors). Each is one line naming the file, the NAL unit's index in decode order and
    /// the byte offset of its header (for packets input, in the Annex B stream the packets stand for).
    /// - Returns: `(index, message)` per such NAL unit, in stream order.
    public static func headerProblems(_ stream: LoadedStream, path: String) -> [(index: Int, message: String)] {
        let within = stream.format == .packets ? " of the Annex B stream the packets stand for" : ""
        return stream.nalUnits.enumerated().compactMap { i, l in
            l.nal.forbiddenZeroBit == 0 ? nil
                : (i, "\(path): NAL unit \(i) at byte \(l.offset)\(within) has forbidden_zero_bit 1 (H.264 7.4.1: shall be 0)")
        }
    }

    /// What `inspect` does with ``headerProblems(_:path:)``, FFmpeg's leniency: each is reported to `warn` (saying
    /// how the NAL unit is read: as its `nal_unit_type` says) and the listing goes on; with `strict` the first one
    /// is an error instead.
    /// - Throws: `.data` with the first problem's message when `strict` and there is one.
    public static func checkHeaders(_ stream: LoadedStream, path: String, strict: Bool, warn: (String) -> Void) throws {
        let problems = headerProblems(stream, path: path)
        if strict, let first = problems.first { throw LabError.data(first.message) }
        for (index, message) in problems {
            let type = stream.nalUnits[index].nal.nalUnitType
            warn("\(message); listed and read as its nal_unit_type \(type.rawValue) (\(type)) says")
        }
    }

    /// `enclab inspect --json`: `nal_units` (offset, size, nal_unit_type, nal_ref_idc, forbidden_zero_bit), `access_units` (index,
    /// nal_units, slice_types, idr, reference, picture, field_pic_flag, bottom_field_flag, frame: the index of the
    /// frame it belongs to, null without a picture), `frames` (index, access_units, structure: "frame",
    /// "complementary reference field pair", "complementary non-reference field pair" or "non-paired field",
    /// picture), `frame_counts` (frames, field_pairs, non_paired_fields, pictures: frames per picture name) and
    /// `sps`/`pps` (every parameter set, latest per id, with the specification's syntax element names;
    /// `width`/`height` after cropping).
    /// - Throws: `.data` when a parameter set or slice header does not parse.
    public static func inspectJSON(_ stream: LoadedStream, path: String) throws -> String {
        let (_, units, sets) = try structure(stream, path: path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func object<T: Encodable>(_ value: T) throws -> Any {
            try JSONSerialization.jsonObject(with: try encoder.encode(value))
        }
        var root: [String: Any] = ["format": stream.format.rawValue]
        root["nal_units"] = stream.nalUnits.map { l -> [String: Any] in
            ["offset": l.offset, "size": l.nal.bytes.count, "nal_unit_type": l.nal.nalUnitType.rawValue, "nal_ref_idc": l.nal.nalRefIdc,
             "forbidden_zero_bit": l.nal.forbiddenZeroBit]
        }
        let (frames, frameOf, names) = self.frames(units)
        root["access_units"] = units.map { u -> [String: Any] in
            ["index": u.index, "nal_units": Array(u.nalUnitIndices), "slice_types": u.sliceTypes.map(\.description),
             "idr": u.isIDR, "reference": u.isReference, "picture": pictureName(u),
             "field_pic_flag": u.fieldPicFlag, "bottom_field_flag": u.bottomFieldFlag, "frame": frameOf[u.index] ?? NSNull()]
        }
        root["frames"] = frames.map { f -> [String: Any] in
            ["index": f.index, "access_units": f.accessUnits, "structure": f.structure.rawValue, "picture": names[f.index]]
        }
        let counts = frameCounts(frames, names: names)
        root["frame_counts"] = ["frames": counts.frames, "field_pairs": counts.fieldPairs, "non_paired_fields": counts.nonPairedFields,
                                "pictures": Dictionary(uniqueKeysWithValues: counts.pictures)] as [String: Any]
        root["sps"] = try sets.sequenceParameterSets.sorted { $0.key < $1.key }.map { try object($0.value) }
        root["pps"] = try sets.pictureParameterSets.sorted { $0.key < $1.key }.map { try object($0.value) }
        let data = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .prettyPrinted])
        return String(decoding: data, as: UTF8.self)
    }

    /// `enclab inspect` without `--json`: a readable listing. A NAL unit whose `forbidden_zero_bit` is 1 has
    /// `forbidden_zero_bit 1` at the end of its line; an access unit that is a field ends with `top field` or
    /// `bottom field` and the frame it belongs to (`of frame N`, `, non-paired` when it has no partner); the
    /// second line counts frames (a field pair once) and frames per picture name.
    public static func inspectText(_ stream: LoadedStream, path: String) throws -> String {
        let (nals, units, sets) = try structure(stream, path: path)
        let (frames, frameOf, names) = self.frames(units)
        let counts = frameCounts(frames, names: names)
        var out = "\(path): \(stream.format.rawValue), \(nals.count) NAL units, \(units.count) access units\n"
        out += "Frames (a field pair counted once): \(counts.frames) (\(counts.fieldPairs) field pairs, \(counts.nonPairedFields) non-paired fields):"
        out += counts.pictures.map { " \($0.0) \($0.1)" }.joined(separator: ",") + "\n"
        for (id, sps) in sets.sequenceParameterSets.sorted(by: { $0.key < $1.key }) {
            let vui = sps.vuiParameters
            out += "SPS \(id): profile_idc \(sps.profileIdc) level_idc \(sps.levelIdc) \(sps.width)x\(sps.height)"
            out += " chroma_format_idc \(sps.chromaFormatIdc) bit_depth \(sps.bitDepthLumaMinus8 + 8)"
            out += " pic_order_cnt_type \(sps.picOrderCntType) max_num_ref_frames \(sps.maxNumRefFrames)"
            if let v = vui, let t = v.timeScale, let n = v.numUnitsInTick { out += " time_scale \(t) num_units_in_tick \(n)" }
            if let r = vui?.maxNumReorderFrames { out += " max_num_reorder_frames \(r)" }
            out += "\n"
        }
        for (id, pps) in sets.pictureParameterSets.sorted(by: { $0.key < $1.key }) {
            out += "PPS \(id): seq_parameter_set_id \(pps.seqParameterSetId) entropy_coding_mode_flag \(pps.entropyCodingModeFlag ? 1 : 0)\n"
        }
        out += "NAL units (offset, size, nal_unit_type, nal_ref_idc):\n"
        for (i, l) in stream.nalUnits.enumerated() {
            out += "  [\(i)] offset \(l.offset) size \(l.nal.bytes.count) type \(l.nal.nalUnitType.rawValue) (\(l.nal.nalUnitType)) ref_idc \(l.nal.nalRefIdc)"
            out += l.nal.forbiddenZeroBit == 1 ? " forbidden_zero_bit 1\n" : "\n"
        }
        out += "Access units (index: NAL units, slice types, picture as the lab's frames table names it):\n"
        for u in units {
            out += "  \(u.index): NAL \(u.nalUnitIndices.count == 1 ? "\(u.nalUnitIndices.lowerBound)" : "\(u.nalUnitIndices.lowerBound)-\(u.nalUnitIndices.upperBound - 1)") slices \(u.sliceTypes.map(\.description).joined(separator: ",")) -> \(pictureName(u))"
            if u.fieldPicFlag, let f = frameOf[u.index] {
                out += ", \(u.bottomFieldFlag ? "bottom" : "top") field of frame \(f)\(frames[f].structure == .nonPairedField ? ", non-paired" : "")"
            }
            out += "\n"
        }
        return out
    }
}
