/// The parse entry points the libFuzzer targets in `fuzz/targets/` call, and that the
/// regression tests in `H264Tests` replay with the inputs kept under `fuzz/regressions/`.
///
/// Each function feeds arbitrary bytes to the parsers, ignores the ``H264Error``s they throw
/// (rejecting bad input is the expected outcome) and checks round-trip invariants with
/// `precondition`, so that a broken invariant is a crash the fuzzer reports. Any trap inside the
/// parsers (out-of-range index, overflow, force unwrap) is a bug.
///
/// Internal, not API: the fuzz targets are compiled into this module (`fuzz/README.md`) and the tests reach it
/// with `@testable import H264`.
enum FuzzEntryPoints {
    /// An SPS and PPS from x264 (High, 64x48, CABAC), RBSPs of the parameter sets that
    /// ``parameterSets(_:)`` uses to parse slice headers and PPSs.
    static let x264SPS: [UInt8] = [0x64, 0x00, 0x0a, 0xac, 0xd9, 0x44, 0x7b, 0x01, 0x10, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x03, 0x28, 0xf1, 0x22, 0x59, 0x60]
    static let x264PPS: [UInt8] = [0xeb, 0xe0, 0xe4, 0xb2, 0x2c]

    /// Annex B splitting, then everything downstream: RBSP extraction, SEI parsing and access
    /// unit splitting (which parses SPS, PPS and slice headers).
    static func annexB(_ data: [UInt8]) {
        _ = try? AnnexB.split(data, leadingData: .reject)
        guard let units = try? AnnexB.split(data, leadingData: .skip) else { return }
        // Writing and splitting again gives the same NAL units.
        let again = try? AnnexB.split(AnnexB.write(units.map(\.nal)))
        precondition(again?.map(\.nal) == units.map(\.nal), "Annex B write/split round trip")
        for unit in units {
            let rbsp = unit.nal.rbsp
            precondition(rbsp.count < unit.nal.bytes.count, "RBSP shorter than the NAL unit")
            if unit.nal.nalUnitType == .sei { _ = try? SEIMessage.parse(rbsp: rbsp) }
        }
        if let aus = try? AccessUnit.split(units.map(\.nal)) {
            precondition(aus.reduce(0) { $0 + $1.nalUnits.count } == units.count, "access units hold every NAL unit")
            let times = aus.indices.map { (ptsMicroseconds: Int64($0), dtsMicroseconds: Int64($0)) }
            if let packets = try? Packet.fromAccessUnits(aus, timestamps: times) {
                for p in packets {
                    if let bytes = try? p.serialize() {
                        precondition((try? Packet.deserialize(bytes)) == p, "packet round trip")
                    }
                }
            }
        }
    }

    /// AVCC splitting; the first byte chooses the length size (1, 2 or 4 from its low 2 bits).
    static func avcc(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let lengthSize = [1, 2, 4, 4][Int(first & 3)]
        let body = Array(data.dropFirst())
        var skipped: [ParseWarning] = []
        guard let units = try? AVCC.split(body, lengthSize: lengthSize, warnings: &skipped) else { return }
        let written = try? AVCC.write(units.map(\.nal), lengthSize: lengthSize)
        if skipped.isEmpty {
            precondition(written == body, "AVCC split/write round trip")
        } else {
            // Lengths of 0 skipped: the sample less one prefix each (unless start codes split a NAL unit), whose strict
            // split gives the same NAL units.
            precondition(skipped.contains { $0.element == "NALUnit" }
                         || written?.count == body.count - skipped.reduce(0) { $0 + $1.count } * lengthSize,
                         "AVCC skips only the empty prefixes")
            precondition((try? AVCC.split(written ?? [], lengthSize: lengthSize, policy: .strict))?.map(\.nal) == units.map(\.nal),
                         "AVCC split/write round trip without the empty NAL units")
        }
    }

    /// avcC record parsing; a record that parses is written and parsed again to the same value.
    static func avcCRecord(_ data: [UInt8]) {
        guard let record = try? AVCDecoderConfigurationRecord(bytes: data) else { return }
        guard let bytes = try? record.serialize() else { return }
        let again = try? AVCDecoderConfigurationRecord(bytes: bytes)
        var expected = record
        if expected.chromaFormat == nil { expected.sequenceParameterSetExt = [] }
        precondition(again == expected, "avcC serialize/parse round trip")
    }

    /// SPS, PPS, slice header and SEI parsing of `data` taken as an RBSP, against x264's
    /// parameter sets and against the SPS parsed from `data` itself.
    static func parameterSets(_ data: [UInt8]) {
        var store = ParameterSets()
        _ = try? store.add(NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: x264SPS))
        _ = try? store.add(NALUnit(nalRefIdc: 3, nalUnitType: .pps, rbsp: x264PPS))
        if let sps = try? SequenceParameterSet(rbsp: data) {
            precondition(sps.width > 0 && sps.height > 0, "cropped size is positive")
            _ = try? PictureParameterSet(rbsp: x264PPS, sequenceParameterSets: [sps.seqParameterSetId: sps])
            var own = ParameterSets()
            if (try? own.add(NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: data))) != nil,
               (try? own.add(NALUnit(nalRefIdc: 3, nalUnitType: .pps, rbsp: [0xce, 0x38, 0x80]))) != nil {
                _ = try? SliceHeader(rbsp: [0x88, 0x84, 0x00], nalUnitType: 5, nalRefIdc: 3, parameterSets: own)
            }
        }
        _ = try? PictureParameterSet(rbsp: data, sequenceParameterSets: store.sequenceParameterSets)
        for type in [1, 2, 5] {
            _ = try? SliceHeader(rbsp: data, nalUnitType: type, nalRefIdc: data.first.map { Int($0 & 3) } ?? 0, parameterSets: store)
        }
        _ = try? SEIMessage.parse(rbsp: data)
        // Emulation prevention round trip.
        precondition(EmulationPrevention.remove(EmulationPrevention.insert(data)) == data, "emulation prevention round trip")
    }

    /// Packet file parsing; packets that parse are written back to the same bytes.
    static func packets(_ data: [UInt8]) {
        guard let packets = try? Packet.deserializeAll(data) else { return }
        var out = [UInt8]()
        for p in packets {
            guard let bytes = try? p.serialize() else { return }
            out += bytes
        }
        precondition(out == data, "packet deserialize/serialize round trip")
    }
}
