import Testing
@testable import H264

// Byte vectors for the containers (Annex B, AVCC, avcC), emulation prevention, the bit reader and
// the NAL unit header. Expected values: hand arithmetic written out here, or ffmpeg's
// `-bsf:v trace_headers` output on the same bytes (ffmpeg 5.1.9), as each test says.

@Suite struct BitReaderTests {
    @Test func expGolombCodes() throws {
        // Bits 1 | 010 | 011 | 00100 | 00111 | 1: ue 0, 1, 2, 3 (9.1: codeNum = 2^leadingZeros − 1 + suffix),
        // then se of codeNum 6 = −3 (9.1.1: (−1)^(k+1)·Ceil(k/2)), then one bit.
        // 1010 0110 | 0100 0011 | 1100 0000 = A6 43 C0
        var r = BitReader([0xA6, 0x43, 0xC0])
        #expect(try r.ue("a") == 0)
        #expect(try r.ue("b") == 1)
        #expect(try r.ue("c") == 2)
        #expect(try r.ue("d") == 3)
        #expect(try r.se("e") == -3)
        #expect(r.bitOffset == 17)
        #expect(try r.u(1, "f") == 1)
        #expect(r.moreRBSPData() == false)
    }

    @Test func throwsAtEndOfData() {
        // 0x00: eight zero bits, a ue(v) prefix that never ends.
        var r = BitReader([0x00])
        #expect(throws: H264Error.endOfData(element: "first_mb_in_slice", bitOffset: 0)) { try r.ue("first_mb_in_slice") }
        var s = BitReader([0xFF])
        #expect(throws: H264Error.endOfData(element: "time_scale", bitOffset: 0)) { try s.u(32, "time_scale") }
        #expect("\(H264Error.endOfData(element: "time_scale", bitOffset: 0))" == "end of data reading time_scale (at bit 0)")
    }

    @Test func moreRBSPDataFindsTheStopBit() throws {
        // 0x40 = 0100 0000: bit 1 is the rbsp_stop_one_bit, so one bit of data precedes it.
        var r = BitReader([0x40])
        #expect(r.moreRBSPData())
        _ = try r.bit("x")
        #expect(!r.moreRBSPData())
        // 0x80 0x00: stop bit at bit 0 followed by a zero byte: no data.
        #expect(!BitReader([0x80, 0x00]).moreRBSPData())
        #expect(!BitReader([]).moreRBSPData())
    }

    @Test func rejectsCodesLongerThan32Bits() {
        // 32 zero bits then a 1: codeNum would be 2^32 − 1 + suffix, beyond 32 bits.
        var r = BitReader([0, 0, 0, 0, 0x80, 0, 0, 0, 0])
        #expect(throws: H264Error.self) { try r.ue("x") }
    }
}

@Suite struct EmulationPreventionTests {
    @Test func removeAndInsert() {
        // 00 00 03 01 is an escaped 00 00 01: the 03 goes.
        #expect(EmulationPrevention.remove([0x00, 0x00, 0x03, 0x01]) == [0x00, 0x00, 0x01])
        // 00 00 03 03: the first 03 is emulation prevention, the second is data.
        #expect(EmulationPrevention.remove([0x00, 0x00, 0x03, 0x03]) == [0x00, 0x00, 0x03])
        // A 03 after only one zero is data.
        #expect(EmulationPrevention.remove([0x00, 0x03, 0x00, 0x00, 0x03, 0x00]) == [0x00, 0x03, 0x00, 0x00, 0x00])
        #expect(EmulationPrevention.insert([0x00, 0x00, 0x00]) == [0x00, 0x00, 0x03, 0x00])
        #expect(EmulationPrevention.insert([0x00, 0x00, 0x03]) == [0x00, 0x00, 0x03, 0x03])
        #expect(EmulationPrevention.insert([0x00, 0x00, 0x04]) == [0x00, 0x00, 0x04])
        // Two trailing zeros: a final 03 so the NAL unit does not end in 00.
        #expect(EmulationPrevention.insert([0x01, 0x00, 0x00]) == [0x01, 0x00, 0x00, 0x03])
    }

    @Test func roundTripOnSeededRandomData() {
        var g = SplitMix64(seed: 42)
        for _ in 0..<500 {
            let count = Int(g.next() % 64)
            // Mostly zeros and small values, where emulation prevention happens.
            let rbsp = (0..<count).map { _ in UInt8([0, 0, 0, 1, 2, 3, 4, 0xFF][Int(g.next() % 8)]) }
            let escaped = EmulationPrevention.insert(rbsp)
            #expect(EmulationPrevention.remove(escaped) == rbsp)
            // No 00 00 00, 00 00 01 or 00 00 02 inside escaped data (7.4.1).
            for i in 0..<max(0, escaped.count - 2) where escaped[i] == 0 && escaped[i + 1] == 0 {
                #expect(escaped[i + 2] >= 3)
            }
        }
    }
}

@Suite struct NALUnitTests {
    @Test func headerFieldsByMasking() throws {
        // 0x67 = 0 11 00111: forbidden_zero_bit 0, nal_ref_idc 3, nal_unit_type 7 (SPS).
        let sps = try NALUnit(bytes: [0x67, 0x42])
        #expect(sps.forbiddenZeroBit == 0 && sps.nalRefIdc == 3 && sps.nalUnitType == .sps)
        // 0x47 = 0 10 00111: still an SPS, with nal_ref_idc 2 (comparing the byte with 0x67 would miss it).
        let sps2 = try NALUnit(bytes: [0x47, 0x42])
        #expect(sps2.nalRefIdc == 2 && sps2.nalUnitType == .sps)
        // 0xE5 = 1 11 00101: forbidden_zero_bit 1, IDR slice.
        let bad = try NALUnit(bytes: [0xE5])
        #expect(bad.forbiddenZeroBit == 1 && bad.nalUnitType == .idrSlice && bad.rbsp == [])
        #expect(throws: H264Error.self) { try NALUnit(bytes: []) }
    }

    @Test func rbspDropsHeaderAndEmulationPrevention() throws {
        let nal = try NALUnit(bytes: [0x06, 0x00, 0x00, 0x03, 0x01, 0x80])
        #expect(nal.rbsp == [0x00, 0x00, 0x01, 0x80])
        #expect(NALUnit(nalRefIdc: 0, nalUnitType: .sei, rbsp: [0x00, 0x00, 0x01, 0x80]) == nal)
    }
}

@Suite struct AnnexBTests {
    @Test func threeAndFourByteStartCodes() throws {
        // 00 00 00 01 | 09 10 | 00 00 01 | 09 30: two AUDs; headers at byte 4 and byte 6 + 3 = 9.
        let units = try AnnexB.split([0x00, 0x00, 0x00, 0x01, 0x09, 0x10, 0x00, 0x00, 0x01, 0x09, 0x30])
        #expect(units.map(\.offset) == [4, 9])
        #expect(units.map(\.size) == [2, 2])
        #expect(units.map(\.nal.bytes) == [[0x09, 0x10], [0x09, 0x30]])
    }

    @Test func audThenSliceWithAndWithoutTrailingZeros() throws {
        // aud_slice.264: 00 00 00 01 | AUD (09 10) | 00 00 00 01 | IDR slice; 383 bytes.
        // AUD header at byte 4, slice header at 4 + 2 + 4 = 10, slice size 383 − 10 = 373.
        let plain = try AnnexB.split(vector("aud_slice.264"))
        #expect(plain.map(\.offset) == [4, 10])
        #expect(plain.map(\.size) == [2, 373])
        // aud_slice_5zeros.264: the same with 5 zero bytes before the second start code; they are
        // trailing_zero_8bits and belong to no NAL unit: the AUD is still 2 bytes, the slice moves to 15.
        let zeros = try AnnexB.split(vector("aud_slice_5zeros.264"))
        #expect(zeros.map(\.offset) == [4, 15])
        #expect(zeros.map(\.size) == [2, 373])
        #expect(zeros.map(\.nal) == plain.map(\.nal))
        // trace_headers on aud_slice_parameter_sets.264 + aud_slice_5zeros.264:
        //   Access Unit Delimiter: nal_ref_idc 0, nal_unit_type 9, primary_pic_type 0
        //   Slice Header: nal_ref_idc 3, nal_unit_type 5, first_mb_in_slice 0, slice_type 7,
        //   pic_parameter_set_id 0, frame_num 0, idr_pic_id 0, pic_order_cnt_lsb 0
        let aud = zeros[0].nal
        #expect(aud.nalRefIdc == 0 && aud.nalUnitType == .accessUnitDelimiter)
        var r = BitReader(aud.rbsp)
        #expect(try r.u(3, "primary_pic_type") == 0)
        var ps = ParameterSets()
        for unit in try AnnexB.split(vector("aud_slice_parameter_sets.264")) { try ps.add(unit.nal) }
        let slice = try SliceHeader(nal: zeros[1].nal, parameterSets: ps)
        #expect(slice.nalRefIdc == 3 && slice.nalUnitType == 5)
        #expect(slice.firstMbInSlice == 0 && slice.sliceType == 7 && slice.type == .i)
        #expect(slice.picParameterSetId == 0 && slice.frameNum == 0 && slice.idrPicId == 0 && slice.picOrderCntLsb == 0)
        // One access unit: the AUD starts it, the slice is its primary coded picture.
        let aus = try AccessUnit.split(try AnnexB.split(vector("aud_slice_parameter_sets.264") + vector("aud_slice_5zeros.264")).map(\.nal))
        #expect(aus.count == 1)
    }

    @Test func leadingDataNoStartCodeAndEmptyUnits() throws {
        // AA BB before the first start code: rejected by default, skipped on request.
        let data: [UInt8] = [0xAA, 0xBB, 0x00, 0x00, 0x01, 0x09, 0x10]
        #expect(throws: H264Error.invalid(element: "leading_zero_8bits", reason: "2 bytes before the first start code are not all zero (non-zero byte 0xaa at byte 0)", byteOffset: 0)) {
            try AnnexB.split(data)
        }
        #expect(try AnnexB.split(data, leadingData: .skip).map(\.offset) == [5])
        // leading_zero_8bits are fine: 3 zeros then 00 00 01 → header at byte 6.
        #expect(try AnnexB.split([0, 0, 0, 0, 0, 1, 0x09, 0x10]).map(\.offset) == [6])
        // No start code at all.
        #expect(throws: H264Error.invalid(element: "start_code_prefix_one_3bytes", reason: "no start code (0x000001) in 3 bytes of data", byteOffset: 0)) {
            try AnnexB.split([0x09, 0x10, 0x20])
        }
        #expect(try AnnexB.split([]) == [])
        // Trailing zeros at the end of the data: not part of the NAL unit.
        #expect(try AnnexB.split([0, 0, 1, 0x09, 0x10, 0, 0, 0]).map(\.size) == [2])
        // A start code straight after a start code: an empty NAL unit at byte 3, skipped with a warning (lenient,
        // the default: the AUD's header is then at byte 6), refused with the strict policy.
        var warnings: [ParseWarning] = []
        #expect(try AnnexB.split([0, 0, 1, 0, 0, 1, 0x09, 0x10], warnings: &warnings).map(\.offset) == [6])
        #expect(warnings == [ParseWarning(element: "nal_unit", problem: "start code followed by no NAL unit (empty NAL unit)",
                                          reason: "skipped, as FFmpeg's splitter does", byteOffset: 3)])
        #expect(throws: H264Error.invalid(element: "nal_unit", reason: "start code followed by no NAL unit (empty NAL unit)", byteOffset: 3)) {
            try AnnexB.split([0, 0, 1, 0, 0, 1, 0x09, 0x10], policy: .strict)
        }
        // A start code at the very end is one too (byte 8), as is one followed only by zero bytes (byte 3).
        warnings = []
        #expect(try AnnexB.split([0, 0, 1, 0, 0, 0, 0, 1, 0x09, 0x10, 0, 0, 1], warnings: &warnings).map(\.offset) == [8])
        #expect(warnings.map(\.byteOffset) == [3, 13])
        #expect(AnnexB.startsWithStartCode([0, 0, 0, 1, 0x67]))
        #expect(!AnnexB.startsWithStartCode([0, 0, 0, 0x19, 0x67]))
    }

    @Test func writeThenSplitRoundTrips() throws {
        let nals = try nalUnits("open_gop.264")
        #expect(try AnnexB.split(AnnexB.write(nals)).map(\.nal) == nals)
    }
}

@Suite struct AVCCTests {
    @Test func seventyThousandByteNALUnitThenAnother() throws {
        // A 70,000-byte NAL unit (header 0x41: nal_ref_idc 2, type 1; then 69,999 bytes 0x55),
        // then a 2-byte one (0x09 0x10). 70,000 = 0x0001_1170, so its 4-byte length is 00 01 11 70.
        let big = try NALUnit(bytes: [0x41] + [UInt8](repeating: 0x55, count: 69_999))
        let small = try NALUnit(bytes: [0x09, 0x10])
        let sample = try AVCC.write([big, small], lengthSize: 4)
        #expect(Array(sample[0..<4]) == [0x00, 0x01, 0x11, 0x70])
        // Second length at 4 + 70,000 = 70,004: 00 00 00 02; total 4 + 70,000 + 4 + 2 = 70,010 bytes.
        #expect(Array(sample[70_004..<70_008]) == [0x00, 0x00, 0x00, 0x02])
        #expect(sample.count == 70_010)
        let units = try AVCC.split(sample, lengthSize: 4)
        #expect(units.map(\.offset) == [4, 70_008])
        #expect(units.map(\.size) == [70_000, 2])
        #expect(units.map(\.nal) == [big, small])
        // 70,000 does not fit a 2-byte length (max 65,535).
        #expect(throws: H264Error.valueOutOfRange(element: "NALUnitLength of NAL unit 0", value: 70_000, range: 1...65_535)) {
            try AVCC.write([big], lengthSize: 2)
        }
        // Read with 2-byte lengths, the first length is 00 01 = 1 byte (00), the next 11 70 = 4464
        // bytes of 0x41 0x55...; then 55 55 = 21845 bytes, ... until one runs past the end.
        #expect(throws: H264Error.self) { try AVCC.split(sample, lengthSize: 2) }
    }

    @Test func oneTwoAndFourByteLengths() throws {
        let nals = [try NALUnit(bytes: [0x09, 0x10]), try NALUnit(bytes: [0x65, 0x88, 0x84])]
        // 1-byte lengths: 02 09 10 03 65 88 84.
        #expect(try AVCC.write(nals, lengthSize: 1) == [0x02, 0x09, 0x10, 0x03, 0x65, 0x88, 0x84])
        // 2-byte lengths: 00 02 09 10 00 03 65 88 84; headers at 2 and 2 + 2 + 2 = 6.
        #expect(try AVCC.split([0x00, 0x02, 0x09, 0x10, 0x00, 0x03, 0x65, 0x88, 0x84], lengthSize: 2).map(\.offset) == [2, 6])
        for size in [1, 2, 4] {
            #expect(try AVCC.split(AVCC.write(nals, lengthSize: size), lengthSize: size).map(\.nal) == nals)
        }
        #expect(throws: H264Error.invalid(element: "lengthSize", reason: "must be 1, 2 or 4 bytes: 3", byteOffset: 0)) {
            try AVCC.split([], lengthSize: 3)
        }
        // Length 5 with 2 bytes left: truncated NAL unit at byte 1.
        #expect(throws: H264Error.truncated(element: "NALUnit", byteOffset: 1, needed: 5, available: 2)) {
            try AVCC.split([0x05, 0x09, 0x10], lengthSize: 1)
        }
        // A 4-byte length with only 3 bytes: truncated prefix.
        #expect(throws: H264Error.truncated(element: "NALUnitLength", byteOffset: 0, needed: 4, available: 3)) {
            try AVCC.split([0x00, 0x00, 0x00], lengthSize: 4)
        }
    }
}

@Suite struct AVCDecoderConfigurationRecordTests {
    // x264's SPS for 64x48 High (profile_idc 100 = 0x64, compatibility 0x00, level_idc 10 = 0x0a), 24 bytes,
    // and PPS id 0, 6 bytes (both from aud_slice_parameter_sets.264).
    static let sps = hex("6764000aacd9447b011000000300100000030328f1225960")
    static let pps0 = hex("68ebe0e4b22c")
    // A hand-built PPS with pic_parameter_set_id 1: header 0x68, then the bits
    // 010 (ue 1: pps id) 1 (ue 0: sps id) 0 (CAVLC) 0 1 (ue 0: one slice group) 1 1 (ref idx 0, 0)
    // 0 00 (no weighted prediction) 1 1 1 (se 0: qp, qs, chroma offsets) 1 0 0 (deblocking on) 1 (stop bit)
    // = 0101 0011 1000 1111 001 + 00000 padding = 53 8F 20.
    static let pps1 = hex("68538f20")

    /// configurationVersion 1, AVCProfileIndication 0x64, profile_compatibility 0x00, AVCLevelIndication 0x0a,
    /// 0xFF = '111111' + lengthSizeMinusOne 3, 0xE1 = '111' + 1 SPS, 00 18 (24) + SPS,
    /// 02 PPSs, 00 06 + PPS 0, 00 04 + PPS 1: 6 + 2 + 24 + 1 + 2 + 6 + 2 + 4 = 47 bytes.
    static let recordWithoutExtension: [UInt8] =
        [0x01, 0x64, 0x00, 0x0A, 0xFF, 0xE1, 0x00, 0x18] + sps + [0x02, 0x00, 0x06] + pps0 + [0x00, 0x04] + pps1
    /// The same plus the High-profile extension block: 0xFD = '111111' + chroma_format 1,
    /// 0xF8 = '11111' + bit_depth_luma_minus8 0, 0xF8 likewise for chroma, 00 SPS extensions: 51 bytes.
    static let recordWithExtension: [UInt8] = recordWithoutExtension + [0xFD, 0xF8, 0xF8, 0x00]

    @Test func oneSPSAndTwoPPS() throws {
        #expect(Self.recordWithoutExtension.count == 47)
        let record = try AVCDecoderConfigurationRecord(bytes: Self.recordWithoutExtension)
        #expect(record.configurationVersion == 1)
        #expect(record.avcProfileIndication == 100 && record.profileCompatibility == 0 && record.avcLevelIndication == 10)
        #expect(record.lengthSizeMinusOne == 3 && record.lengthSize == 4)
        #expect(record.sequenceParameterSets.map(\.bytes) == [Self.sps])
        #expect(record.pictureParameterSets.map(\.bytes) == [Self.pps0, Self.pps1])
        // Extension tolerated when absent.
        #expect(record.chromaFormat == nil)
        // The two PPSs parse with ids 0 and 1 against the SPS.
        var ps = ParameterSets()
        for nal in record.sequenceParameterSets + record.pictureParameterSets { try ps.add(nal) }
        #expect(ps.pictureParameterSets.keys.sorted() == [0, 1])
        #expect(ps.pictureParameterSets[1]?.entropyCodingModeFlag == false)
        #expect(ps.pictureParameterSets[0]?.entropyCodingModeFlag == true)

        let extended = try AVCDecoderConfigurationRecord(bytes: Self.recordWithExtension)
        #expect(extended.chromaFormat == 1 && extended.bitDepthLumaMinus8 == 0 && extended.bitDepthChromaMinus8 == 0)
        #expect(extended.sequenceParameterSetExt.isEmpty)
        // The builder derives every field from the SPS and writes the extension block for profile 100.
        let built = try AVCDecoderConfigurationRecord(sequenceParameterSets: record.sequenceParameterSets,
                                                      pictureParameterSets: record.pictureParameterSets, lengthSize: 4)
        #expect(try built.serialize() == Self.recordWithExtension)
    }

    @Test func lengthSizeMinusOneHonoured() throws {
        // 0xFD = '111111' + 01: lengthSizeMinusOne 1, 2-byte lengths.
        var bytes = Self.recordWithoutExtension
        bytes[4] = 0xFD
        #expect(try AVCDecoderConfigurationRecord(bytes: bytes).lengthSize == 2)
        // 0xFE: lengthSizeMinusOne 2 (3-byte lengths) does not exist.
        bytes[4] = 0xFE
        #expect(throws: H264Error.invalid(element: "lengthSizeMinusOne", reason: "must be 0, 1 or 3: 2", byteOffset: 4)) {
            try AVCDecoderConfigurationRecord(bytes: bytes)
        }
        let built = try AVCDecoderConfigurationRecord(sequenceParameterSets: [try NALUnit(bytes: Self.sps)], pictureParameterSets: [], lengthSize: 1)
        #expect(try built.serialize()[4] == 0xFC)
    }

    @Test func truncatedRecords() throws {
        // Cut inside the SPS: its length says 24 bytes, 10 remain after the length at byte 6.
        let cut = Array(Self.recordWithoutExtension[0..<18])
        #expect(throws: H264Error.truncated(element: "sequenceParameterSetNALUnit[0]", byteOffset: 8, needed: 24, available: 10)) {
            try AVCDecoderConfigurationRecord(bytes: cut)
        }
        #expect(throws: H264Error.truncated(element: "configurationVersion", byteOffset: 0, needed: 1, available: 0)) {
            try AVCDecoderConfigurationRecord(bytes: [])
        }
    }

    @Test func extensionFieldsFor422And444() throws {
        // x264 --output-csp i422: profile_idc 122, chroma_format_idc 2 (trace_headers), so the
        // record gets the extension block with chroma_format 2: 0xFC | 2 = 0xFE.
        let nals422 = try nalUnits("i422_1080.264")
        let r422 = try AVCDecoderConfigurationRecord(sequenceParameterSets: nals422.filter { $0.nalUnitType == .sps },
                                                     pictureParameterSets: nals422.filter { $0.nalUnitType == .pps })
        let bytes422 = try r422.serialize()
        #expect(r422.avcProfileIndication == 122 && r422.chromaFormat == 2)
        #expect(Array(bytes422.suffix(4)) == [0xFE, 0xF8, 0xF8, 0x00])
        #expect(try AVCDecoderConfigurationRecord(bytes: bytes422) == r422)
        // x264 --output-csp i444: profile_idc 244, which ISO/IEC 14496-15 does not list for the
        // extension block: none is written (the record ends with the PPS).
        let nals444 = try nalUnits("i444_1080.264")
        let r444 = try AVCDecoderConfigurationRecord(sequenceParameterSets: nals444.filter { $0.nalUnitType == .sps },
                                                     pictureParameterSets: nals444.filter { $0.nalUnitType == .pps })
        let pps444 = nals444.first { $0.nalUnitType == .pps }!.bytes
        #expect(r444.avcProfileIndication == 244)
        #expect(Array(try r444.serialize().suffix(pps444.count)) == pps444)
    }
}
