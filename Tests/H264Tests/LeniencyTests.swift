import Foundation
import Testing
@testable import H264

/// A Baseline SPS RBSP with VUI timing and bitstream restriction, for the tolerated VUI values. Bit positions
/// (from the first RBSP bit, as H264Error counts), written out: profile_idc, the constraint byte and level_idc take
/// bits 0-23; ue(0) seq_parameter_set_id "1" 24; ue(0) log2_max_frame_num_minus4 "1" 25; ue(2)
/// pic_order_cnt_type "011" 26-28; ue(1) max_num_ref_frames "010" 29-31; gaps 32; ue(3) pic_width_in_mbs_minus1
/// "00100" 33-37; ue(2) pic_height_in_map_units_minus1 "011" 38-40; frame_mbs_only_flag 41;
/// direct_8x8_inference_flag 42; frame_cropping_flag 43; vui_parameters_present_flag 44. VUI: aspect ratio,
/// overscan, video signal, chroma location flags 45-48; timing_info_present_flag 49; num_units_in_tick u(32)
/// 50-81; time_scale u(32) 82-113; fixed_frame_rate_flag 114; NAL and VCL HRD flags 115-116; pic_struct 117;
/// bitstream_restriction_flag 118; motion_vectors_over_pic_boundaries_flag 119; ue(2) max_bytes_per_pic_denom
/// "011" 120-122; ue(1) max_bits_per_mb_denom "010" 123-125; log2_max_mv_length_horizontal from 126 (ue(16) is
/// "000010001", 9 bits; ue(9) "0001010", 7 bits), then log2_max_mv_length_vertical, ue(0) max_num_reorder_frames,
/// ue(1) max_dec_frame_buffering, trailing bits.
func vuiSPS(mvHorizontal: Int = 9, mvVertical: Int = 9, numUnitsInTick: Int = 1, timeScale: Int = 50) -> [UInt8] {
    var w = BitWriter()
    w.u(8, 66); w.u(8, 0); w.u(8, 30)
    w.ue(0); w.ue(0); w.ue(2); w.ue(1); w.flag(false)
    w.ue(3); w.ue(2)
    w.flag(true); w.flag(true); w.flag(false)
    w.flag(true)                       // vui_parameters_present_flag
    w.flag(false); w.flag(false); w.flag(false); w.flag(false)
    w.flag(true); w.u(32, numUnitsInTick); w.u(32, timeScale); w.flag(true)
    w.flag(false); w.flag(false); w.flag(false)
    w.flag(true)                       // bitstream_restriction_flag
    w.flag(true); w.ue(2); w.ue(1)
    w.ue(mvHorizontal); w.ue(mvVertical)
    w.ue(0); w.ue(1)
    w.trailing()
    return w.bytes
}

@Suite("the leniency policy: tolerated values, empty NAL units, SEI")
struct LeniencyTests {
    static let edition2003 = "the 2003 edition allowed 0-16, and VUI does not affect decoding (H.264 Annex E)"

    @Test("log2_max_mv_length 16 (the 2003 edition's range): kept with a warning per element, or refused when strict")
    func mvLength16() throws {
        let rbsp = vuiSPS(mvHorizontal: 16, mvVertical: 16)
        var warnings: [ParseWarning] = []
        let sps = try SequenceParameterSet(rbsp: rbsp, policy: .lenient, warnings: &warnings)
        #expect(sps.vuiParameters?.log2MaxMvLengthHorizontal == 16 && sps.vuiParameters?.log2MaxMvLengthVertical == 16)
        // The fields after them are read where they are: reorder 0, buffering 1.
        #expect(sps.vuiParameters?.maxNumReorderFrames == 0 && sps.vuiParameters?.maxDecFrameBuffering == 1)
        // horizontal at bit 126, vertical 9 bits later at 135.
        #expect(warnings == [
            ParseWarning(element: "log2_max_mv_length_horizontal", value: 16, allowedRange: 0...15, reason: Self.edition2003, bitOffset: 126),
            ParseWarning(element: "log2_max_mv_length_vertical", value: 16, allowedRange: 0...15, reason: Self.edition2003, bitOffset: 135),
        ])
        #expect(warnings[0].description == "log2_max_mv_length_horizontal out of range (0-15): 16 (at bit 126); accepted: \(Self.edition2003)")
        // The default init is lenient too, and drops the warnings.
        #expect(try SequenceParameterSet(rbsp: rbsp) == sps)
        #expect(throws: H264Error.outOfRange(element: "log2_max_mv_length_horizontal", value: 16, range: 0...15, bitOffset: 126)) {
            var ignored: [ParseWarning] = []
            _ = try SequenceParameterSet(rbsp: rbsp, policy: .strict, warnings: &ignored)
        }
        // 9 and 9 (what x264 writes at 160x96): no warning in either mode.
        var none: [ParseWarning] = []
        _ = try SequenceParameterSet(rbsp: vuiSPS(), policy: .strict, warnings: &none)
        #expect(none.isEmpty)
    }

    @Test("num_units_in_tick 0: read as no timing (frameRate nil) with a warning, refused when strict")
    func zeroTick() throws {
        var warnings: [ParseWarning] = []
        let sps = try SequenceParameterSet(rbsp: vuiSPS(numUnitsInTick: 0), policy: .lenient, warnings: &warnings)
        #expect(sps.vuiParameters?.numUnitsInTick == 0 && sps.vuiParameters?.frameRate == nil)
        #expect(warnings.map(\.element) == ["num_units_in_tick"] && warnings.map(\.bitOffset) == [50])
        #expect(throws: H264Error.outOfRange(element: "num_units_in_tick", value: 0, range: 1...0xFFFF_FFFF, bitOffset: 50)) {
            var ignored: [ParseWarning] = []
            _ = try SequenceParameterSet(rbsp: vuiSPS(numUnitsInTick: 0), policy: .strict, warnings: &ignored)
        }
        // With time_scale 50 and one tick per unit: 50 / (2 x 1) = 25 frames per second.
        #expect(try SequenceParameterSet(rbsp: vuiSPS()).vuiParameters?.frameRate == 25)
    }

    @Test("a value decoding uses stays an error in both modes (log2_max_frame_num_minus4 13)")
    func decodingValuesStayErrors() {
        // baselineSPS: log2_max_frame_num_minus4 ue(13) starts at bit 25 (24 bits, then ue(0) id at 24).
        let rbsp = baselineSPS(log2MaxFrameNumMinus4: 13)
        for policy in [ParsePolicy.lenient, .strict] {
            #expect(throws: H264Error.outOfRange(element: "log2_max_frame_num_minus4", value: 13, range: 0...12, bitOffset: 25)) {
                var ignored: [ParseWarning] = []
                _ = try SequenceParameterSet(rbsp: rbsp, policy: policy, warnings: &ignored)
            }
        }
    }

    @Test("AVCC: a length of 0 is skipped with a warning at its byte, refused when strict; a length beyond the data stays an error")
    func avccZeroLength() throws {
        // 00 00 00 00 (empty) | 00 00 00 02 09 10 (AUD) | 00 00 00 00 (empty): the AUD's header at byte 8.
        let sample: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 2, 0x09, 0x10, 0, 0, 0, 0]
        var warnings: [ParseWarning] = []
        #expect(try AVCC.split(sample, warnings: &warnings).map(\.offset) == [8])
        #expect(warnings.map(\.byteOffset) == [0, 10] && warnings.allSatisfy { $0.element == "NALUnitLength" })
        #expect(throws: H264Error.invalid(element: "NALUnitLength", reason: "length 0 (a NAL unit has at least its header byte)", byteOffset: 0)) {
            try AVCC.split(sample, policy: .strict)
        }
        #expect(throws: H264Error.truncated(element: "NALUnit", byteOffset: 4, needed: 5, available: 2)) {
            try AVCC.split([0, 0, 0, 5, 0x09, 0x10])
        }
        // The packet format is the lab's own: a length of 0 in a body stays damage (PACKETS.md).
        let packet = Packet(isIDR: false, decodeOrder: 0, ptsMicroseconds: 0, dtsMicroseconds: 0, sequenceParameterSets: [],
                            pictureParameterSets: [], nalUnits: [try NALUnit(bytes: [0x09, 0x10])])
        var bytes = try packet.serialize()
        // body_length 6 -> 10, and a zero length before the AUD's: the fixed 26 bytes, two counts, then body_length.
        bytes.replaceSubrange(28..<32, with: [0, 0, 0, 10])
        bytes.insert(contentsOf: [0, 0, 0, 0], at: 32)
        #expect(throws: H264Error.self) { try Packet.deserialize(bytes) }
    }

    @Test("every SPS and PPS as it appears: open_gop.264 then slices4.264, both with SPS id 0")
    func parameterSetLog() throws {
        // open_gop.264: NAL types 7 8 6 5 1 1 1 7 8 6 1 1 1 1 7 8 6 1 1 1 1 (21 NAL units, 12 access units; its three
        // SPSs and PPSs are the same bytes); slices4.264 (64x64): 7 8 6 5 5 5 5 1 ... (3 access units), an SPS and
        // a PPS of other bytes (trace_headers: pic_height_in_map_units_minus1 3 against 2; the PPS's
        // weighted_bipred_idc 0 against 2). So NAL units 21 and 22 give ids 0 new content.
        let nals = try nalUnits("open_gop.264") + nalUnits("slices4.264")
        var log = ParameterSetLog()
        for (i, nal) in nals.enumerated() { try log.add(nal, nalUnitIndex: i) }
        #expect(log.sequenceParameterSets.map(\.nalUnitIndex) == [0, 7, 14, 21])
        #expect(log.sequenceParameterSets.map(\.content) == [.first, .repeated, .repeated, .changed])
        #expect(log.sequenceParameterSets.map(\.occurrence) == [0, 1, 2, 3])
        #expect(log.sequenceParameterSets.compactMap(\.sps).map(\.height) == [48, 48, 48, 64])
        #expect(log.pictureParameterSets.map(\.nalUnitIndex) == [1, 8, 15, 22])
        #expect(log.pictureParameterSets.map(\.content) == [.first, .repeated, .repeated, .changed])
        #expect(log.pictureParameterSets.map(\.spsOccurrence) == [0, 1, 2, 3])
        #expect(log.firstChange?.nalUnitIndex == 21 && log.firstChange?.kind == .sps)
        // The first of each id: open_gop's SPS and PPS (hex from the vector).
        #expect(log.firstOfEachId.sequenceParameterSets.map(\.bytes) == [hex("6764000aacd9447b011000000300100000030328f1225960")])
        #expect(log.firstOfEachId.pictureParameterSets.map(\.bytes) == [hex("68ebe0e4b22c")])
        // Each access unit names the occurrences in force at its first slice: 4 per SPS in open_gop, then slices4's.
        let units = try AccessUnit.split(nals)
        #expect(units.count == 15)
        #expect(units.map { log.occurrences(for: $0).sps?.occurrence } == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3])
        #expect(units.map { log.occurrences(for: $0).pps?.occurrence } == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3])
        // Parsed against the SPS in force: the splitter keeps only the last (64x64).
        let (_, inForce) = try AccessUnit.splitWithParameterSets(nals)
        #expect(inForce.sequenceParameterSets[0]?.height == 64)
    }

    @Test("out-of-band parameter sets: the split starts with them, and they are logged without a NAL unit index")
    func outOfBand() throws {
        let nals = try nalUnits("open_gop.264")
        let slices = nals.filter { $0.nalUnitType != .sps && $0.nalUnitType != .pps }
        #expect(throws: H264Error.missingParameterSet(element: "pic_parameter_set_id", id: 0, bitOffset: 8)) { try AccessUnit.split(slices) }
        var log = ParameterSetLog()
        for nal in nals.prefix(2) { try log.add(nal, nalUnitIndex: nil) }
        let units = try AccessUnit.splitWithParameterSets(slices, parameterSets: log.inForce).accessUnits
        let full = try AccessUnit.split(nals)
        #expect(units.map(\.sliceTypes) == full.map(\.sliceTypes) && units.map(\.isIDR) == full.map(\.isIDR))
        for (i, nal) in slices.enumerated() { try log.add(nal, nalUnitIndex: i) }
        #expect(log.occurrences.map(\.nalUnitIndex) == [nil, nil])
        #expect(units.allSatisfy { log.occurrences(for: $0).sps?.occurrence == 0 })
        // A strict store refuses what a lenient one keeps: the mv-length SPS.
        var strict = ParameterSets(policy: .strict)
        #expect(throws: H264Error.self) { try strict.add(NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: vuiSPS(mvHorizontal: 16))) }
        var lenient = ParameterSetLog()
        try lenient.add(NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: vuiSPS(mvHorizontal: 16)), nalUnitIndex: 4)
        // A repeat of the same bytes adds no second warning.
        try lenient.add(NALUnit(nalRefIdc: 3, nalUnitType: .sps, rbsp: vuiSPS(mvHorizontal: 16)), nalUnitIndex: 9)
        #expect(lenient.warnings.map(\.nalUnitIndex) == [4] && lenient.warnings.map(\.bitOffset) == [126])
    }

    @Test("recovery points: open_gop.264's I pictures 4 and 8 (trace_headers); an SEI that does not parse warns or throws")
    func recoveryPoints() throws {
        let units = try AccessUnit.split(try nalUnits("open_gop.264"))
        var warnings: [ParseWarning] = []
        let points = try units.map { try $0.recoveryPoint(warnings: &warnings) }
        #expect(points.indices.filter { points[$0] != nil } == [4, 8])
        #expect(points[4] == points[8])
        #expect(points[4]?.recoveryFrameCnt == 0 && points[4]?.exactMatchFlag == true && points[4]?.brokenLinkFlag == false
                && points[4]?.changingSliceGroupIdc == 0)
        #expect(warnings.isEmpty)
        // SEI payloadType 6, payloadSize 5, and no payload: truncated. As NAL unit 7 of some stream.
        let bad = AccessUnit(index: 2, nalUnitIndices: 7..<8, nalUnits: [try NALUnit(bytes: [0x06, 0x06, 0x05])], sliceHeaders: [])
        #expect(try bad.recoveryPoint(warnings: &warnings) == nil)
        #expect(warnings.map(\.element) == ["sei_rbsp"] && warnings.map(\.nalUnitIndex) == [7])
        #expect(warnings.first?.problem == "sei_payload(6) truncated at byte 2: needs 5 bytes, 0 available")
        #expect(throws: H264Error.truncated(element: "sei_payload(6)", byteOffset: 2, needed: 5, available: 0)) {
            try bad.recoveryPoint(policy: .strict, warnings: &warnings)
        }
    }

    @Test("sprop-parameter-sets: base64 NAL units (Python's base64 gave the strings), padding, and errors naming the part")
    func sprop() throws {
        // base64.b64encode of the SPS and PPS of aud_slice_parameter_sets.264 (hex in AVCDecoderConfigurationRecordTests).
        let sps = hex("6764000aacd9447b011000000300100000030328f1225960"), pps = hex("68ebe0e4b22c")
        var warnings: [ParseWarning] = []
        #expect(try SpropParameterSets.decode("Z2QACqzZRHsBEAAAAwAQAAADAyjxIllg,aOvg5LIs", warnings: &warnings).map(\.bytes) == [sps, pps])
        #expect(try SpropParameterSets.decode("sprop-parameter-sets=Z2QACqzZRHsBEAAAAwAQAAADAyjxIllg,aOvg5LIs", warnings: &warnings).map(\.bytes) == [sps, pps])
        #expect(warnings.isEmpty)
        // The hand-built PPS 68 53 8F 20 is "aFOPIA==": without its padding, decoded with a warning, or refused.
        #expect(try SpropParameterSets.decode("aFOPIA", warnings: &warnings).map(\.bytes) == [hex("68538f20")])
        #expect(warnings.map(\.element) == ["sprop-parameter-sets[0]"])
        #expect(throws: H264Error.invalid(element: "sprop-parameter-sets[0]", reason: "base64 without its '=' padding (RFC 4648 3.2)", byteOffset: 0)) {
            try SpropParameterSets.decode("aFOPIA", policy: .strict, warnings: &warnings)
        }
        // Part 1 starts at character 9 ("aOvg5LIs," is 9 long): a '.' in it, an empty part, a length no padding mends.
        #expect(throws: H264Error.invalid(element: "sprop-parameter-sets[1]", reason: "not base64: '.' at character 11", byteOffset: 9)) {
            try SpropParameterSets.decode("aOvg5LIs,aF.PIA==", warnings: &warnings)
        }
        // An empty part (a trailing comma, as some senders write): skipped with a warning, as FFmpeg's RTP reader
        // skips it; refused when strict; a value of empty parts only holds no parameter set.
        warnings = []
        #expect(try SpropParameterSets.decode("aOvg5LIs,", warnings: &warnings).map(\.bytes) == [pps])
        #expect(warnings.map(\.element) == ["sprop-parameter-sets[1]"])
        #expect(throws: H264Error.invalid(element: "sprop-parameter-sets[1]", reason: "empty (two commas in a row, or one at either end)", byteOffset: 9)) {
            try SpropParameterSets.decode("aOvg5LIs,", policy: .strict, warnings: &warnings)
        }
        #expect(throws: H264Error.invalid(element: "sprop-parameter-sets", reason: "no parameter set: every part is empty", byteOffset: 0)) {
            try SpropParameterSets.decode(",", warnings: &warnings)
        }
        #expect(throws: H264Error.invalid(element: "sprop-parameter-sets[0]", reason: "not base64: 5 characters, not a multiple of 4", byteOffset: 0)) {
            try SpropParameterSets.decode("aOvg5", warnings: &warnings)
        }
    }
}
