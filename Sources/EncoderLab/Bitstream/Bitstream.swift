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
    /// The empty NAL units skipped while splitting (lenient policy): an Annex B start code followed by no NAL unit
    /// (byte offset after the start code) or an AVCC length of 0 (byte offset of the length), past the first
    /// ``ParseWarning/listedEmptyNALUnits`` one warning with their ``ParseWarning/count``; and the AVCC lengths whose
    /// bytes were split at start codes (element `NALUnit`, byte offset of the first start code).
    public var skipped: [ParseWarning] = []
    /// For packets input: the byte offset of each packet in the file.
    public var packetOffsets: [Int]? = nil
}

/// Parameter sets given beside a stream rather than in it: an avcC record (as an MP4 sample entry holds them) or
/// SPS/PPS NAL units (a file of them in Annex B, or SDP's sprop-parameter-sets).
public struct OutOfBandParameterSets: Sendable {
    /// The flag and its value as messages name them: `--in-avcc-config s.avcC`, `--parameter-sets 'Z0IA...'`.
    public var source: String
    /// SPS and PPS NAL units, in the order given.
    public var nalUnits: [NALUnit]
    /// The avcC record's length size in bytes (`lengthSizeMinusOne + 1`); nil for `--parameter-sets`.
    public var lengthSize: Int?
    /// What reading them warned about (a sprop-parameter-sets part without its padding).
    public var warnings: [ParseWarning]

    /// Reads an avcC record (AVCDecoderConfigurationRecord, ISO/IEC 14496-15 5.3.3.1: the `avcC` box payload,
    /// without box size and type), as `--in-avcc-config FILE` gives it.
    /// - Throws: `.noInput` "--in-avcc-config FILE: no such file" (or "cannot be read"); `.data` naming the flag,
    ///   the file and the record's field when the record does not parse or holds no SPS.
    public static func avcC(path: String) throws -> OutOfBandParameterSets {
        let source = "--in-avcc-config \(path)"
        let bytes = try readFile(path, naming: source)
        do {
            let record = try AVCDecoderConfigurationRecord(bytes: bytes)
            guard !record.sequenceParameterSets.isEmpty else {
                throw LabError.data("\(source): the avcC record holds no SPS (numOfSequenceParameterSets 0)")
            }
            return OutOfBandParameterSets(source: source, nalUnits: record.sequenceParameterSets + record.pictureParameterSets,
                                          lengthSize: record.lengthSize, warnings: [])
        } catch let e as H264Error {
            throw LabError.data("\(source): not an avcC record: \(e)")
        }
    }

    /// Reads `--parameter-sets VALUE`: the file VALUE names when there is one (Annex B SPS and PPS NAL units),
    /// else VALUE as SDP's sprop-parameter-sets (base64 NAL units separated by commas, RFC 6184 8.1; a leading
    /// `sprop-parameter-sets=` is allowed).
    /// - Throws: `.noInput` when VALUE names a folder, or no file and holds a character base64 does not use (so it
    ///   can only be a path); `.data` naming the flag when the file does not split as Annex B, when VALUE is not valid
    ///   base64 (the message says no file has that name either), or when a NAL unit is not an SPS or PPS.
    /// - Parameter sdp: the SDP file VALUE was read from (`rtp unpack --sdp`): VALUE is then a sprop-parameter-sets
    ///   value only, never a path, and one that is not base64 is bad data (65) naming the SDP file.
    public static func parameterSets(_ value: String, strict: Bool = false, sdp: String? = nil) throws -> OutOfBandParameterSets {
        let policy: ParsePolicy = strict ? .strict : .lenient
        var isFolder: ObjCBool = false
        var warnings: [ParseWarning] = []
        let nals: [NALUnit]
        let source: String
        if let sdp {
            source = "--sdp \(sdp)"
            nals = try sprop(value, text: value, policy: policy, warnings: &warnings,
                             notBase64: { LabError.data("\(source): sprop-parameter-sets '\(value)' is not base64 parts separated by commas") },
                             refused: { LabError.data("\(source): sprop-parameter-sets '\(value)': \($0)") })
        } else if FileManager.default.fileExists(atPath: value, isDirectory: &isFolder) {
            if isFolder.boolValue { throw LabError.noInput("--parameter-sets \(value): a folder, not a file of SPS/PPS NAL units") }
            source = "--parameter-sets \(value)"
            let bytes = try readFile(value, naming: source)
            do {
                nals = try AnnexB.split(bytes, policy: policy, warnings: &warnings).map(\.nal)
            } catch let e as H264Error {
                throw LabError.data("\(source): not Annex B SPS/PPS NAL units: \(e)")
            }
            if nals.isEmpty { throw LabError.data("\(source): holds no NAL unit") }
        } else {
            source = "--parameter-sets '\(value)'"
            let text = value.hasPrefix("sprop-parameter-sets=") ? String(value.dropFirst("sprop-parameter-sets=".count)) : value
            nals = try sprop(value, text: text, policy: policy, warnings: &warnings,
                             notBase64: { LabError.noInput("\(source): no such file (nor a sprop-parameter-sets value: base64 parts separated by commas)") },
                             refused: { LabError.data("\(source): no such file, and not a sprop-parameter-sets value: \($0)") })
        }
        for (i, nal) in nals.enumerated() where nal.nalUnitType != .sps && nal.nalUnitType != .pps {
            throw LabError.data("\(source): NAL unit \(i) is nal_unit_type \(nal.nalUnitType.rawValue) (\(nal.nalUnitType)), not an SPS (7) or PPS (8)")
        }
        return OutOfBandParameterSets(source: source, nalUnits: nals, lengthSize: nil, warnings: warnings)
    }

    /// The NAL units of a sprop-parameter-sets value `value` (base64 parts separated by commas, RFC 6184 8.1), as
    /// both `--sdp` and `--parameter-sets` read it.
    /// - Throws: `notBase64()` when `text` (the value without a leading `sprop-parameter-sets=`) is empty or holds a
    ///   character base64 does not use; `refused(e)` when ``SpropParameterSets/decode(_:policy:warnings:)`` throws `e`.
    private static func sprop(_ value: String, text: String, policy: ParsePolicy, warnings: inout [ParseWarning],
                              notBase64: () -> LabError, refused: (H264Error) -> LabError) throws -> [NALUnit] {
        let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=,")
        guard !text.isEmpty, text.allSatisfy(base64.contains) else { throw notBase64() }
        do {
            return try SpropParameterSets.decode(value, policy: policy, warnings: &warnings)
        } catch let e as H264Error {
            throw refused(e)
        }
    }
}

/// What `inspect` and `convert` read: the stream file, how, and the parameter sets given beside it.
public struct StreamInput: Sendable {
    /// The stream file.
    public var path: String
    /// Its format, or nil to detect it (``Bitstream/load(_:format:lengthSize:strict:)``); AVCC with an avcC record.
    public var format: StreamFormat?
    /// The AVCC length size in bytes (1, 2 or 4); nil for 4, or the avcC record's with ``inAVCConfigPath``.
    public var lengthSize: Int?
    /// `--in-avcc-config FILE`: an avcC record giving the parameter sets and length size of an AVCC stream.
    public var inAVCConfigPath: String?
    /// `--parameter-sets VALUE`: a file of Annex B SPS/PPS NAL units, or SDP's sprop-parameter-sets.
    public var parameterSets: String?
    /// `--strict`: refuse what the lenient policy accepts with a warning (``ParsePolicy``, and a NAL unit with
    /// forbidden_zero_bit 1).
    public var strict = false
    /// Whether the command reading it takes `--in-avcc-config` and `--parameter-sets` (`inspect`, `convert`): only
    /// then does a missing parameter set's message advise them.
    public var takesParameterSetFlags = false

    public init(path: String) { self.path = path }
}

/// A warning as `inspect` and `convert` report it: a warning of the `H264` module placed in the file, a NAL unit
/// with forbidden_zero_bit 1, or the count of empty NAL units skipped.
public struct StreamWarning: Sendable {
    /// One line naming the file (or the flag) and what was accepted, as stderr shows it after `warning: `.
    public var message: String
    /// The syntax element (`log2_max_mv_length_horizontal`, `forbidden_zero_bit`, `nal_unit`, `NALUnitLength`).
    public var element: String
    public var value: Int64?
    /// The range the current edition allows.
    public var allowedRange: ClosedRange<Int64>?
    /// Index of the NAL unit in the stream (decode order); nil for an empty NAL unit or an out-of-band one.
    public var nalUnitIndex: Int?
    /// Bit offset of the element in the NAL unit's RBSP (after its header).
    public var bitOffset: Int?
    /// Byte offsets in the file: of the NAL unit's header, or of each empty NAL unit skipped.
    public var byteOffsets: [Int]
    /// How many times it happened (several empty NAL units make one warning).
    public var count: Int
}

/// A stream parsed: access units, every parameter set as it appeared, recovery points and warnings.
public struct ParsedStream {
    public var path: String
    public var stream: LoadedStream
    public var outOfBand: OutOfBandParameterSets?
    public var accessUnits: [AccessUnit]
    /// Every SPS and PPS occurrence, out-of-band ones first.
    public var parameterSets: ParameterSetLog
    /// Each access unit's recovery point SEI (payloadType 6), nil where it has none.
    public var recoveryPoints: [RecoveryPoint?]
    /// Each access unit's buffering period (payloadType 0) and picture timing (1) SEI, read with the SPS in force
    /// (``AccessUnit/hrdTiming(sps:activeSPS:policy:warnings:)``); both nil where it has none.
    public var hrdTimings: [HRDTiming]
    /// Every warning, in the order reported: out-of-band ones, empty NAL units, then by NAL unit, then by packet.
    public var warnings: [StreamWarning]

    /// Whether access unit `k` is a random access point: an IDR picture, or one with a recovery point SEI.
    public func isRandomAccessPoint(_ k: Int) -> Bool { accessUnits[k].isIDR || recoveryPoints[k] != nil }
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
    ///   - strict: refuse an empty NAL unit instead of skipping it (``ParsePolicy``).
    /// - Throws: `.noInput` for a missing file; `.data` naming the file and the `H264` module's message (byte
    ///   offset, syntax element) when it does not parse, and naming the file and what it holds instead when it holds
    ///   no NAL unit (only zero bytes, only empty NAL units, packets with nothing in them): a file of zero bytes is
    ///   refused after reading it in chunks, before it is held whole.
    public static func load(_ path: String, format: StreamFormat? = nil, lengthSize: Int = 4, strict: Bool = false) throws -> LoadedStream {
        if let size = try zeroFileSize(path, naming: path) {
            if size == 0 { throw LabError.data("\(path): empty file") }
            throw LabError.data("\(path): no NAL unit: its \(size) bytes are all 0x00 (no start code, and no length or packet other than 0)")
        }
        let bytes = try readFile(path, naming: path)
        if bytes.isEmpty { throw LabError.data("\(path): empty file") }
        // Annex B input is refused before its NAL units are held apart (about 60 bytes each) when it has nothing to
        // decode: a file of 4-byte AUDs would otherwise cost fifteen times its size before the refusal.
        if format == .annexb || (format == nil && AnnexB.startsWithStartCode(bytes)) {
            if let refusal = nothingToDecode(annexBTypeCounts(bytes), path: path) { throw refusal }
        }
        let loaded = try split(bytes, path: path, format: format, lengthSize: lengthSize, strict: strict)
        if !loaded.nalUnits.isEmpty {
            var counts = [Int](repeating: 0, count: 32)
            for (i, l) in loaded.nalUnits.enumerated() {
                if i & 0xFFF == 0 { try Interruption.check() }
                counts[l.nal.nalUnitType.rawValue] += 1
            }
            if let refusal = nothingToDecode(counts, path: path) { throw refusal }
            return loaded
        }
        let empties = loaded.skipped.reduce(0) { $0 + $1.count }
        let holds: String
        switch loaded.format {
        case .annexb: holds = empties == 1 ? "1 start code, followed by no NAL unit" : "\(empties) start codes, each followed by no NAL unit"
        case .avcc: holds = "\(empties) NAL unit length\(empties == 1 ? "" : "s") of 0 (read as AVCC with \(lengthSize)-byte lengths)"
        case .packets:
            let n = loaded.packets?.count ?? 0
            holds = n == 1 ? "1 packet with no parameter set and an empty body" : "\(n) packets, each with no parameter set and an empty body"
        }
        throw LabError.data("\(path): no NAL unit in its \(bytes.count) bytes: \(holds)")
    }

    /// How many NAL units of each `nal_unit_type` (0...31) an Annex B byte stream holds, from the byte after each start
    /// code (`0x000001`), in one pass and without holding the NAL units: a start code followed by a zero byte (an empty
    /// NAL unit, or another start code) counts as type 0, which no check below looks at.
    static func annexBTypeCounts(_ bytes: [UInt8]) -> [Int] {
        var counts = [Int](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { b in
            let n = b.count
            var i = 0
            while i + 3 < n {
                if b[i + 2] > 1 {
                    i += 3
                } else if b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 {
                    counts[Int(b[i + 3] & 0x1F)] += 1
                    i += 3
                } else {
                    i += 1
                }
            }
        }
        return counts
    }

    /// The refusal of a stream that holds NAL units but nothing a decoder can start from: no SPS (7), no PPS (8) and
    /// no slice (1-5). `counts` is the number of NAL units of each `nal_unit_type`; nil when one of those is there,
    /// or when there is no non-empty NAL unit at all (refused elsewhere, saying so).
    static func nothingToDecode(_ counts: [Int], path: String) -> LabError? {
        let decodable = [1, 2, 3, 4, 5, 7, 8].reduce(0) { $0 + counts[$1] }
        let others = (1..<32).filter { counts[$0] > 0 }
        guard decodable == 0, !others.isEmpty else { return nil }
        let total = others.reduce(0) { $0 + counts[$1] }
        let kinds = others.map { "\(counts[$0]) \(NALUnitType(rawValue: $0)) (nal_unit_type \($0))" }.joined(separator: ", ")
        return LabError.data("\(path): nothing to decode: no SPS, no PPS and no slice among its \(total) NAL unit\(total == 1 ? "" : "s") (\(kinds))")
    }

    /// ``load(_:format:lengthSize:strict:)`` once the file is read.
    static func split(_ bytes: [UInt8], path: String, format: StreamFormat?, lengthSize: Int, strict: Bool) throws -> LoadedStream {
        let policy: ParsePolicy = strict ? .strict : .lenient
        var skipped: [ParseWarning] = []
        do {
            func annexB() throws -> LoadedStream {
                LoadedStream(format: .annexb, nalUnits: try AnnexB.split(bytes, policy: policy, warnings: &skipped), packets: nil, skipped: skipped)
            }
            func avcc() throws -> LoadedStream {
                LoadedStream(format: .avcc, nalUnits: try AVCC.split(bytes, lengthSize: lengthSize, policy: policy, warnings: &skipped),
                             packets: nil, skipped: skipped)
            }
            // Packets offsets are reported within the Annex B stream the packets stand for.
            func fromPackets() throws -> LoadedStream {
                var packets: [Packet] = [], offsets: [Int] = []
                var p = 0
                while p < bytes.count {
                    let (packet, end) = try Packet.deserialize(bytes, at: p)
                    packets.append(packet)
                    offsets.append(p)
                    p = end
                }
                return LoadedStream(format: .packets, nalUnits: try AnnexB.split(Packet.annexB(packets)), packets: packets, packetOffsets: offsets)
            }
            switch format {
            case .annexb?:
                return try annexB()
            case .avcc?:
                return try avcc()
            case .packets?:
                return try fromPackets()
            case nil:
                if AnnexB.startsWithStartCode(bytes) { return try annexB() }
                // Neither start code nor --from: packets if the whole file reads as packets, else AVCC; if neither
                // reads, say what each reading found.
                do { return try fromPackets() } catch let asPackets as H264Error {
                    do { return try avcc() } catch let asAVCC as H264Error {
                        throw LabError.data("\(path): not Annex B (no leading start code); as packets: \(asPackets); as AVCC with \(lengthSize)-byte lengths: \(asAVCC) (another --length-size?)")
                    }
                }
            }
        } catch let error as H264Error {
            throw LabError.data("\(path): \(error)")
        }
    }

    /// Reads and parses what `input` names: the parameter sets given beside the stream (`--in-avcc-config`,
    /// `--parameter-sets`), the stream, its access units, every parameter set occurrence and each access unit's
    /// recovery point, with the module's ``ParsePolicy`` (strict with ``StreamInput/strict``).
    ///
    /// With `strict`, the first thing the lenient policy would warn about is an error instead, in this order: the
    /// out-of-band parameter sets, an empty NAL unit, a NAL unit with forbidden_zero_bit 1, then the stream's
    /// parameter sets and slice headers in decode order, then its SEI, then for packets input each packet's fields
    /// against its NAL units (``Packet/check(_:byteOffsets:accessUnits:)``: an IDR flag without an IDR slice,
    /// `decode_order` not 0, 1, 2, ..., `dts_us` after `pts_us`, a body that is not one coded picture).
    /// - Throws: `.usage` for both out-of-band flags, `--in-avcc-config` with `--from` other than avcc, or a
    ///   `--length-size` that disagrees with the avcC record; `.noInput` for a missing stream or out-of-band file;
    ///   `.data` naming the file or flag when something does not parse (a structural error, or anything tolerated
    ///   with `strict`).
    public static func open(_ input: StreamInput) throws -> ParsedStream {
        let policy: ParsePolicy = input.strict ? .strict : .lenient
        if input.inAVCConfigPath != nil && input.parameterSets != nil {
            throw LabError.usage("--in-avcc-config and --parameter-sets both give the parameter sets: give one")
        }
        if input.inAVCConfigPath != nil, let format = input.format, format != .avcc {
            throw LabError.usage("--in-avcc-config goes with AVCC input, not --from \(format.rawValue)")
        }
        if let path = input.inAVCConfigPath, path.isEmpty { throw LabError.usage("--in-avcc-config needs a file") }
        if let value = input.parameterSets, value.isEmpty { throw LabError.usage("--parameter-sets needs a file or a sprop-parameter-sets value") }
        // An avcC record goes with AVCC: a file that starts with an Annex B start code is refused before it is
        // read as length-prefixed NAL units (which would fail on a nonsense length).
        if input.inAVCConfigPath != nil, input.format == nil, let handle = FileHandle(forReadingAtPath: input.path) {
            let head = [UInt8](handle.readData(ofLength: 4))
            try? handle.close()
            if AnnexB.startsWithStartCode(head) {
                throw LabError.usage("--in-avcc-config goes with AVCC input, but \(input.path) starts with an Annex B start code (give --from avcc if it really is AVCC)")
            }
        }
        var outOfBand: OutOfBandParameterSets?
        if let path = input.inAVCConfigPath {
            let sets = try OutOfBandParameterSets.avcC(path: path)
            if let given = input.lengthSize, given != sets.lengthSize {
                throw LabError.usage("--length-size \(given) disagrees with \(sets.source), whose lengthSizeMinusOne says \(sets.lengthSize ?? 4) bytes")
            }
            outOfBand = sets
        } else if let value = input.parameterSets {
            outOfBand = try OutOfBandParameterSets.parameterSets(value, strict: input.strict)
        }
        let stream = try load(input.path, format: outOfBand?.lengthSize != nil ? .avcc : input.format,
                              lengthSize: outOfBand?.lengthSize ?? input.lengthSize ?? 4, strict: input.strict)
        try checkHeaders(stream, path: input.path, strict: input.strict) { _ in }
        return try parse(stream, path: input.path, outOfBand: outOfBand, policy: policy, adviseFlags: input.takesParameterSetFlags)
    }

    /// Parses a loaded stream; see ``open(_:)``.
    static func parse(_ stream: LoadedStream, path: String, outOfBand: OutOfBandParameterSets?, policy: ParsePolicy,
                      adviseFlags: Bool = false) throws -> ParsedStream {
        var warnings: [StreamWarning] = []
        var log = ParameterSetLog(policy: policy)
        if let outOfBand {
            for w in outOfBand.warnings {
                warnings.append(StreamWarning(message: "\(outOfBand.source): \(w)", element: w.element, value: w.value, allowedRange: w.allowedRange,
                                              bitOffset: w.bitOffset, byteOffsets: [], count: 1))
            }
            for (k, nal) in outOfBand.nalUnits.enumerated() {
                let before = log.warnings.count
                do { try log.add(nal, nalUnitIndex: nil) } catch let e as H264Error {
                    throw LabError.data("\(outOfBand.source): parameter set \(k) (\(nal.nalUnitType)): \(e)")
                }
                for w in log.warnings[before...] {
                    warnings.append(StreamWarning(message: "\(outOfBand.source): parameter set \(k) (\(nal.nalUnitType)): \(w)", element: w.element,
                                                  value: w.value, allowedRange: w.allowedRange, bitOffset: w.bitOffset, byteOffsets: [], count: 1))
                }
            }
        }
        let fromOutOfBand = log.warnings.count
        // NAL units packed behind one AVCC length, split at their start codes: one warning each.
        let within = stream.format == .packets ? " of the Annex B stream the packets stand for" : ""
        for w in stream.skipped where w.element == "NALUnit" {
            warnings.append(StreamWarning(message: "\(path): \(w)",
                                          element: w.element, byteOffsets: w.byteOffset.map { [$0] } ?? [], count: 1))
        }
        let empties = stream.skipped.filter { $0.element != "NALUnit" }
        if let first = empties.first {
            // The splitters list the first few one by one and fold the rest into one warning with their count.
            let offsets = empties.filter { $0.count == 1 }.compactMap(\.byteOffset)
            let count = empties.reduce(0) { $0 + $1.count }
            let more = empties.first { $0.count > 1 }.map { w in " and \(w.count) more from byte \(w.byteOffset ?? 0) on" } ?? ""
            let problem = first.problem.map { ": \($0)" } ?? ""
            warnings.append(StreamWarning(
                message: "\(path): \(count) empty NAL unit\(count == 1 ? "" : "s") at byte\(count == 1 ? "" : "s") \(offsets.map(String.init).joined(separator: ", "))\(more)\(within) (\(first.element)\(problem)); \(first.reason)",
                element: first.element, byteOffsets: offsets, count: count))
        }
        let nals = stream.nalUnits.map(\.nal)
        let units: [AccessUnit]
        var recoveryPoints: [RecoveryPoint?] = []
        var hrdTimings: [HRDTiming] = []
        var found: [ParseWarning] = []
        // Where an error is: the NAL unit's index and its byte offset in the file, as the warnings say it.
        func place(_ i: Int) -> String {
            stream.nalUnits.indices.contains(i)
                ? "NAL unit \(i) at byte \(stream.nalUnits[i].offset)\(within) (\(stream.nalUnits[i].nal.nalUnitType)): " : ""
        }
        // The access-unit readers below throw, with the strict policy, on the first value the lenient policy warns
        // about, without the NAL unit; so they read leniently, and strict refuses the first warning (what it says,
        // without its "accepted: ...") by its place.
        func refuseFirst(_ warnings: [ParseWarning]) throws {
            guard policy == .strict, let w = warnings.first(where: { $0.nalUnitIndex != nil }), let i = w.nalUnitIndex else { return }
            throw LabError.data("\(path): \(place(i))\(w.what)")
        }
        var at = 0
        do {
            var splitter = AccessUnitSplitter(parameterSets: log.inForce)
            var split: [AccessUnit] = []
            for (i, nal) in nals.enumerated() {
                at = i
                if i & 0xFFF == 0 { try Interruption.check() }
                if let u = try splitter.push(nal) { split.append(u) }
            }
            if let u = splitter.finish() { split.append(u) }
            units = split
            for (i, nal) in nals.enumerated() {
                at = i
                if i & 0xFFF == 0 { try Interruption.check() }
                try log.add(nal, nalUnitIndex: i)
            }
            at = -1   // below, errors of a whole access unit
            // Data partitions outside the Extended profile, read with the SPS the access unit's slices use (else the
            // last SPS before it).
            var partitions: [ParseWarning] = []
            for u in units {
                if u.index & 0xFFF == 0 { try Interruption.check() }
                let sps = log.occurrences(for: u).sps?.sps
                    ?? log.occurrences.last { $0.kind == .sps && ($0.nalUnitIndex ?? -1) < u.nalUnitIndices.lowerBound }?.sps
                try DataPartitioning.check(u, sps: sps, policy: .lenient, warnings: &partitions)
            }
            try refuseFirst(partitions)
            found += partitions
            var seiWarnings: [ParseWarning] = []
            for u in units {
                if u.index & 0xFFF == 0 { try Interruption.check() }
                recoveryPoints.append(try u.recoveryPoint(policy: .lenient, warnings: &seiWarnings))
            }
            try refuseFirst(seiWarnings)
            found += seiWarnings
            for u in units {
                if u.index & 0xFFF == 0 { try Interruption.check() }
                // An SEI NAL unit that does not parse was reported by recoveryPoint already.
                var timingWarnings: [ParseWarning] = []
                hrdTimings.append(try u.hrdTiming(sps: { id, before in log.occurrence(.sps, id: id, before: before)?.sps },
                                                  activeSPS: log.occurrences(for: u).sps?.sps, policy: .lenient, warnings: &timingWarnings))
                try refuseFirst(timingWarnings)
                found += timingWarnings.filter { $0.element != "sei_rbsp" }
            }
        } catch let e as H264Error {
            // A stream whose parameter sets travel apart (an MP4 sample entry, SDP) is refused without them: say how
            // to give them.
            if case .missingParameterSet = e, outOfBand == nil, adviseFlags {
                throw LabError.data("\(path): \(place(at))\(e); if its parameter sets travel apart, give them with --in-avcc-config FILE (AVCC) or --parameter-sets VALUE")
            }
            throw LabError.data("\(path): \(place(at))\(e)")
        }
        found = log.warnings[fromOutOfBand...] + found
        var byNAL = headerProblems(stream, path: path).map { index, message -> (Int, StreamWarning) in
            let type = stream.nalUnits[index].nal.nalUnitType
            return (index, StreamWarning(message: "\(message); listed and read as its nal_unit_type \(type.rawValue) (\(type)) says",
                                         element: "forbidden_zero_bit", value: 1, allowedRange: 0...0, nalUnitIndex: index,
                                         byteOffsets: [stream.nalUnits[index].offset], count: 1))
        }
        for w in found {
            guard let i = w.nalUnitIndex else { continue }
            let l = stream.nalUnits[i]
            byNAL.append((i, StreamWarning(message: "\(path): NAL unit \(i) at byte \(l.offset)\(within) (\(l.nal.nalUnitType)): \(w)",
                                           element: w.element, value: w.value, allowedRange: w.allowedRange, nalUnitIndex: i,
                                           bitOffset: w.bitOffset, byteOffsets: [l.offset], count: 1)))
        }
        warnings += byNAL.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
        // Packets against what PACKETS.md promises of each (flags, decode_order, dts_us, the body's NAL units): a
        // warning each, or with the strict policy the first refused, naming the packet and its byte offset.
        if let packets = stream.packets, let offsets = stream.packetOffsets {
            let problems = Packet.check(packets, byteOffsets: offsets, accessUnits: units)
            if policy == .strict, let first = problems.first {
                throw LabError.data("\(path): \(first) (PACKETS.md)")
            }
            for p in problems {
                warnings.append(StreamWarning(message: "\(path): \(p) (PACKETS.md); accepted", element: p.field,
                                              byteOffsets: [p.byteOffset], count: 1))
            }
        }
        return ParsedStream(path: path, stream: stream, outOfBand: outOfBand, accessUnits: units, parameterSets: log,
                            recoveryPoints: recoveryPoints, hrdTimings: hrdTimings, warnings: warnings)
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

    /// Where a parameter set occurrence came from: `at NAL unit 4`, or `out of band (` the flag `)`.
    static func place(_ o: ParameterSetOccurrence, _ parsed: ParsedStream) -> String {
        o.nalUnitIndex.map { "at NAL unit \($0)" } ?? "out of band (\(parsed.outOfBand?.source ?? "given beside the stream"))"
    }

    /// `enclab inspect --json`: one object with
    /// - `format`;
    /// - `nal_units` (offset, size, nal_unit_type, nal_ref_idc, forbidden_zero_bit);
    /// - `access_units` (index, nal_units, slice_types, idr, reference, picture; field_pic_flag,
    ///   bottom_field_flag and frame: the index of the frame it belongs to, null without a picture; `sps` and
    ///   `pps`, the occurrence numbers of the parameter sets its slices were parsed with; `recovery_point`, the
    ///   recovery point SEI's fields or null; `buffering_period` and `pic_timing`, those SEI messages' fields with the
    ///   specification's names or null; `random_access`, IDR or recovery point);
    /// - `frames` (index, access_units, structure: "frame", "complementary reference field pair",
    ///   "complementary non-reference field pair" or "non-paired field", picture) and `frame_counts` (frames,
    ///   field_pairs, non_paired_fields, pictures: frames per picture name);
    /// - `sps` and `pps`: every occurrence in order (out-of-band ones first), each with the specification's
    ///   syntax element names (`width`/`height` after cropping) and `occurrence` (its number, from 0),
    ///   `nal_unit` (index, null out of band), `content` (`first`, `repeated`, or `changed`: the id given new
    ///   content); a PPS also with `sps_occurrence`;
    /// - `warnings`: each with `message`, `element`, `value`, `allowed_range` ([low, high]), `nal_unit`,
    ///   `bit_offset` (in the NAL unit's RBSP), `byte_offset`, `byte_offsets` and `count` (null where they do not apply).
    /// - Throws: `.software` should JSON encoding fail.
    public static func inspectJSON(_ parsed: ParsedStream) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func object<T: Encodable>(_ value: T) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: try encoder.encode(value)) as? [String: Any] ?? [:]
        }
        func orNull(_ v: Any?) -> Any { v ?? NSNull() }
        let stream = parsed.stream
        var root: [String: Any] = ["format": stream.format.rawValue]
        root["nal_units"] = stream.nalUnits.map { l -> [String: Any] in
            ["offset": l.offset, "size": l.nal.bytes.count, "nal_unit_type": l.nal.nalUnitType.rawValue, "nal_ref_idc": l.nal.nalRefIdc,
             "forbidden_zero_bit": l.nal.forbiddenZeroBit]
        }
        let (frames, frameOf, names) = self.frames(parsed.accessUnits)
        root["access_units"] = try parsed.accessUnits.enumerated().map { k, u -> [String: Any] in
            let (sps, pps) = parsed.parameterSets.occurrences(for: u)
            return ["index": u.index, "nal_units": Array(u.nalUnitIndices), "slice_types": u.sliceTypes.map(\.description),
                    "idr": u.isIDR, "reference": u.isReference, "picture": pictureName(u),
                    "sps": orNull(sps?.occurrence), "pps": orNull(pps?.occurrence),
                    "recovery_point": try parsed.recoveryPoints[k].map { try object($0) } ?? NSNull(),
                    "buffering_period": try parsed.hrdTimings[k].bufferingPeriod.map { try object($0) } ?? NSNull(),
                    "pic_timing": try parsed.hrdTimings[k].picTiming.map { try object($0) } ?? NSNull(),
                    "random_access": parsed.isRandomAccessPoint(k),
                    "field_pic_flag": u.fieldPicFlag, "bottom_field_flag": u.bottomFieldFlag, "frame": frameOf[u.index] ?? NSNull()]
        }
        root["frames"] = frames.map { f -> [String: Any] in
            ["index": f.index, "access_units": f.accessUnits, "structure": f.structure.rawValue, "picture": names[f.index]]
        }
        let counts = frameCounts(frames, names: names)
        root["frame_counts"] = ["frames": counts.frames, "field_pairs": counts.fieldPairs, "non_paired_fields": counts.nonPairedFields,
                                "pictures": Dictionary(uniqueKeysWithValues: counts.pictures)] as [String: Any]
        func occurrence(_ o: ParameterSetOccurrence) throws -> [String: Any] {
            var fields = try o.sps.map { try object($0) } ?? o.pps.map { try object($0) } ?? [:]
            fields["occurrence"] = o.occurrence
            fields["nal_unit"] = orNull(o.nalUnitIndex)
            fields["content"] = o.content.rawValue
            if o.kind == .pps { fields["sps_occurrence"] = orNull(o.spsOccurrence) }
            return fields
        }
        root["sps"] = try parsed.parameterSets.sequenceParameterSets.map(occurrence)
        root["pps"] = try parsed.parameterSets.pictureParameterSets.map(occurrence)
        root["warnings"] = parsed.warnings.map { w -> [String: Any] in
            ["message": w.message, "element": w.element, "value": orNull(w.value),
             "allowed_range": orNull(w.allowedRange.map { [$0.lowerBound, $0.upperBound] }), "nal_unit": orNull(w.nalUnitIndex),
             "bit_offset": orNull(w.bitOffset), "byte_offset": orNull(w.byteOffsets.first), "byte_offsets": w.byteOffsets, "count": w.count]
        }
        let data = try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .prettyPrinted])
        return String(decoding: data, as: UTF8.self)
    }

    /// `enclab inspect` without `--json`: a readable listing. Every SPS and PPS occurrence in order (where it
    /// appears, and `new content` when it changes its id's); the NAL units (a NAL unit whose `forbidden_zero_bit`
    /// is 1 has `forbidden_zero_bit 1` at the end of its line); the access units, each with the occurrences of
    /// the SPS and PPS it was parsed with, its recovery point SEI, its buffering period SEI (`initial_cpb_removal_delay`
    /// and `_offset` per CPB specification of the NAL and VCL HRD) and picture timing SEI (`cpb_removal_delay`,
    /// `dpb_output_delay`, `pic_struct`), and `random access` when it is a random access
    /// point, and for a field `top field` or `bottom field` and the frame it belongs to (`of frame N`,
    /// `, non-paired` when it has no partner); then, when there are any, the warnings (apart from
    /// forbidden_zero_bit, shown on its NAL unit's line). The second line counts frames (a field pair once) and
    /// frames per picture name.
    public static func inspectText(_ parsed: ParsedStream) -> String {
        let stream = parsed.stream
        var out = "\(parsed.path): \(stream.format.rawValue), \(stream.nalUnits.count) NAL units, \(parsed.accessUnits.count) access units\n"
        let (frames, frameOf, names) = self.frames(parsed.accessUnits)
        let counts = frameCounts(frames, names: names)
        out += "Frames (a field pair counted once): \(counts.frames) (\(counts.fieldPairs) field pairs, \(counts.nonPairedFields) non-paired fields):"
        out += counts.pictures.map { " \($0.0) \($0.1)" }.joined(separator: ",") + "\n"
        func mark(_ o: ParameterSetOccurrence) -> String {
            "\(o.kind == .sps ? "SPS" : "PPS") #\(o.occurrence) (id \(o.id)) \(place(o, parsed))\(o.content == .changed ? ", new content" : o.content == .repeated ? ", repeated" : ""):"
        }
        for o in parsed.parameterSets.sequenceParameterSets {
            guard let sps = o.sps else { continue }
            let vui = sps.vuiParameters
            out += "\(mark(o)) profile_idc \(sps.profileIdc) level_idc \(sps.levelIdc) \(sps.width)x\(sps.height)"
            out += " chroma_format_idc \(sps.chromaFormatIdc) bit_depth \(sps.bitDepthLumaMinus8 + 8)"
            out += " pic_order_cnt_type \(sps.picOrderCntType) max_num_ref_frames \(sps.maxNumRefFrames)"
            if let v = vui, let t = v.timeScale, let n = v.numUnitsInTick { out += " time_scale \(t) num_units_in_tick \(n)" }
            if let r = vui?.maxNumReorderFrames { out += " max_num_reorder_frames \(r)" }
            out += "\n"
        }
        for o in parsed.parameterSets.pictureParameterSets {
            guard let pps = o.pps else { continue }
            out += "\(mark(o)) seq_parameter_set_id \(pps.seqParameterSetId)\(o.spsOccurrence.map { " (SPS #\($0))" } ?? "")"
            out += " entropy_coding_mode_flag \(pps.entropyCodingModeFlag ? 1 : 0)\n"
        }
        out += "NAL units (offset, size, nal_unit_type, nal_ref_idc):\n"
        for (i, l) in stream.nalUnits.enumerated() {
            out += "  [\(i)] offset \(l.offset) size \(l.nal.bytes.count) type \(l.nal.nalUnitType.rawValue) (\(l.nal.nalUnitType)) ref_idc \(l.nal.nalRefIdc)"
            out += l.nal.forbiddenZeroBit == 1 ? " forbidden_zero_bit 1\n" : "\n"
        }
        out += "Access units (index: NAL units, slice types, picture as the lab's frames table names it; SPS and PPS occurrences; recovery point; buffering period and pic timing SEI; random access):\n"
        for (k, u) in parsed.accessUnits.enumerated() {
            let range = u.nalUnitIndices.count == 1 ? "\(u.nalUnitIndices.lowerBound)" : "\(u.nalUnitIndices.lowerBound)-\(u.nalUnitIndices.upperBound - 1)"
            out += "  \(u.index): NAL \(range) slices \(u.sliceTypes.map(\.description).joined(separator: ",")) -> \(pictureName(u))"
            let (sps, pps) = parsed.parameterSets.occurrences(for: u)
            if let sps, let pps { out += ", SPS #\(sps.occurrence) PPS #\(pps.occurrence)" }
            if let r = parsed.recoveryPoints[k] {
                out += ", recovery point (recovery_frame_cnt \(r.recoveryFrameCnt) exact_match_flag \(r.exactMatchFlag ? 1 : 0)"
                out += " broken_link_flag \(r.brokenLinkFlag ? 1 : 0) changing_slice_group_idc \(r.changingSliceGroupIdc))"
            }
            if let bp = parsed.hrdTimings[k].bufferingPeriod {
                out += ", buffering period (seq_parameter_set_id \(bp.seqParameterSetId)"
                for (name, delays) in [("nal", bp.nalHrd), ("vcl", bp.vclHrd)] {
                    for (i, d) in (delays ?? []).enumerated() {
                        out += " \(name) initial_cpb_removal_delay[\(i)] \(d.initialCpbRemovalDelay) initial_cpb_removal_delay_offset[\(i)] \(d.initialCpbRemovalDelayOffset)"
                    }
                }
                out += ")"
            }
            if let pt = parsed.hrdTimings[k].picTiming {
                var fields: [String] = []
                if let c = pt.cpbRemovalDelay { fields.append("cpb_removal_delay \(c)") }
                if let d = pt.dpbOutputDelay { fields.append("dpb_output_delay \(d)") }
                if let s = pt.picStruct { fields.append("pic_struct \(s)") }
                out += ", pic timing (\(fields.joined(separator: " ")))"
            }
            if parsed.isRandomAccessPoint(k) { out += ", random access" }
            if u.fieldPicFlag, let f = frameOf[u.index] {
                out += ", \(u.bottomFieldFlag ? "bottom" : "top") field of frame \(f)\(frames[f].structure == .nonPairedField ? ", non-paired" : "")"
            }
            out += "\n"
        }
        let listed = parsed.warnings.filter { $0.element != "forbidden_zero_bit" }
        if !listed.isEmpty {
            out += "Warnings (accepted; --strict refuses them):\n"
            for w in listed { out += "  \(w.message)\n" }
        }
        return out
    }
}

/// The bytes of the file at `path`, read straight into one array (not through `Data`, which held the file twice).
/// - Throws: `.noInput` "`naming`: no such file" or "`naming`: cannot be read".
func readFile(_ path: String, naming: String) throws -> [UInt8] {
    guard FileManager.default.fileExists(atPath: path) else { throw LabError.noInput("\(naming): no such file") }
    return try Interruption.endingAtOnce(reading: path, naming: naming) { try readFileNow(path, naming: naming) }
}

/// ``readFile(_:naming:)`` once the file is known to exist.
private func readFileNow(_ path: String, naming: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw LabError.noInput("\(naming): cannot be read") }
    defer { close(fd) }
    var info = stat()
    let expected = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? Int(info.st_size) : 0
    var bytes = [UInt8]()
    bytes.reserveCapacity(expected)
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw LabError.noInput("\(naming): cannot be read")
        }
        if n == 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes
}

/// The size of the regular file at `path` when every byte of it is 0x00 (an empty file included), read in chunks of
/// 1 MiB and stopping at the first other byte; nil when it holds another byte or is not a regular file.
/// - Throws: as ``readFile(_:naming:)``.
func zeroFileSize(_ path: String, naming: String) throws -> Int? {
    guard FileManager.default.fileExists(atPath: path) else { throw LabError.noInput("\(naming): no such file") }
    // Not opened unless regular: opening a named pipe waits for a writer, and its bytes are read once, by readFile.
    var kind = stat()
    guard stat(path, &kind) == 0, kind.st_mode & S_IFMT == S_IFREG else { return nil }
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw LabError.noInput("\(naming): cannot be read") }
    defer { close(fd) }
    // Only a regular file is read twice: a pipe's bytes would be gone.
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    let zeros = [UInt8](repeating: 0, count: chunk.count)
    var size = 0
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw LabError.noInput("\(naming): cannot be read")
        }
        if n == 0 { return size }
        // memcmp(3) against zeros: a byte-by-byte Swift loop takes minutes over a large file in a debug build.
        if memcmp(chunk, zeros, n) != 0 { return nil }
        size += n
    }
}
