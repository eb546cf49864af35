import Testing
@testable import H264

/// buffering_period (D.1.2) and pic_timing (D.1.3) SEI payloads, read with the SPS they need: x264's own bytes, and
/// payloads written bit by bit here with the values worked out in the comments; truncated and malformed ones.
struct HRDTimingTests {
    /// The SPS NAL unit x264 0.164 writes for `--bitrate 300 --vbv-maxrate 400 --vbv-bufsize 500 --nal-hrd vbr
    /// --pic-struct` on a 176x144 clip. `ffmpeg -bsf:v trace_headers` reads in it: bit_rate_scale 1,
    /// bit_rate_value_minus1 3124 (3125 · 2^7 = 400,000 bit/s), cpb_size_scale 1, cpb_size_value_minus1 15624
    /// (15625 · 2^5 = 500,000 bits), cbr_flag 0, initial_cpb_removal_delay_length_minus1 18, cpb_removal_delay_length_minus1
    /// 12, dpb_output_delay_length_minus1 6, time_offset_length 0, pic_struct_present_flag 1.
    static let spsNAL = hex("6764000cacd942c4effc020001d4400000fa40003a98388800c350007a12930c03e28532c0")

    func sps() throws -> SequenceParameterSet {
        try SequenceParameterSet(rbsp: try NALUnit(bytes: Self.spsNAL).rbsp)
    }

    @Test func theSPSIsTheOneTraceHeadersRead() throws {
        let hrd = try #require(try sps().vuiParameters?.nalHrdParameters)
        #expect(hrd.bitRateValueMinus1 == [3124] && hrd.bitRateScale == 1)
        #expect(hrd.cpbSizeValueMinus1 == [15624] && hrd.cpbSizeScale == 1)
        #expect(hrd.initialCpbRemovalDelayLengthMinus1 == 18 && hrd.cpbRemovalDelayLengthMinus1 == 12)
        #expect(hrd.dpbOutputDelayLengthMinus1 == 6 && hrd.timeOffsetLength == 0)
        #expect(try sps().vuiParameters?.picStructPresentFlag == true)
    }

    @Test func x264sOwnMessagesAsTraceHeadersReadThem() throws {
        let sps = try sps()
        // The first access unit's SEI NAL units (header byte 06 dropped): buffering_period, then pic_timing.
        // trace_headers: initial_cpb_removal_delay[0] 101249, initial_cpb_removal_delay_offset[0] 11251;
        // cpb_removal_delay 0, dpb_output_delay 4, pic_struct 0, clock_timestamp_flag[0] 0.
        let bpMessages = try SEIMessage.parse(rbsp: hex("000598b81057e780"))
        let bp = try #require(try bpMessages[0].bufferingPeriod { $0 == 0 ? sps : nil })
        #expect(bp == BufferingPeriod(seqParameterSetId: 0, nalHrd: [.init(initialCpbRemovalDelay: 101_249, initialCpbRemovalDelayOffset: 11_251)],
                                      vclHrd: nil))
        // 400,000 · 101,249 / 90,000 = 449,995.6 bits: x264's 0.9 × 500,000 = 450,000 rounded down in 90 kHz ticks;
        // the sum is 90,000 · 500,000 / 400,000 = 112,500.
        #expect(101_249 + 11_251 == 112_500)
        var warnings: [ParseWarning] = []
        let ptMessages = try SEIMessage.parse(rbsp: hex("0104000040408" + "0"))
        let pt = try #require(try ptMessages[0].picTiming(sps: sps, warnings: &warnings))
        #expect(pt.cpbRemovalDelay == 0 && pt.dpbOutputDelay == 4 && pt.picStruct == 0)
        #expect(pt.clockTimestamps == [nil])
        #expect(warnings.isEmpty)
        // Other payload types decode to nil.
        #expect(try ptMessages[0].bufferingPeriod { _ in sps } == nil)
        #expect(try bpMessages[0].picTiming(sps: sps, warnings: &warnings) == nil)
    }

    /// A pic_timing payload for the SPS above, written bit by bit.
    func picTimingPayload(picStruct: Int, seconds: Int = 12, full: Bool = false) -> [UInt8] {
        var w = BitWriter()
        w.u(13, 4321)          // cpb_removal_delay
        w.u(7, 100)            // dpb_output_delay
        w.u(4, picStruct)      // pic_struct: 3 (top, bottom) has NumClockTS 2
        w.flag(true)           // clock_timestamp_flag[0]
        w.u(2, 1)              // ct_type interlaced
        w.flag(false)          // nuit_field_based_flag
        w.u(5, 4)              // counting_type
        w.flag(full)           // full_timestamp_flag
        w.flag(true)           // discontinuity_flag
        w.flag(false)          // cnt_dropped_flag
        w.u(8, 29)             // n_frames
        if full {
            w.u(6, seconds); w.u(6, 34); w.u(5, 23)
        } else {
            w.flag(true); w.u(6, seconds)   // seconds_flag, seconds_value
            w.flag(true); w.u(6, 34)        // minutes_flag, minutes_value
            w.flag(false)                   // hours_flag
        }
        // time_offset_length is 0: no time_offset.
        w.flag(false)          // clock_timestamp_flag[1]
        w.trailing()
        return w.bytes
    }

    @Test func clockTimestampsPerTableD1() throws {
        var warnings: [ParseWarning] = []
        let pt = try PicTiming(payload: picTimingPayload(picStruct: 3), sps: try sps(), warnings: &warnings)
        #expect(pt.cpbRemovalDelay == 4321 && pt.dpbOutputDelay == 100 && pt.picStruct == 3)
        #expect(pt.clockTimestamps.count == 2)  // Table D-1: pic_struct 3 has two clock timestamps
        let t = try #require(pt.clockTimestamps[0])
        #expect(t.ctType == 1 && !t.nuitFieldBasedFlag && t.countingType == 4 && !t.fullTimestampFlag)
        #expect(t.discontinuityFlag && !t.cntDroppedFlag && t.nFrames == 29)
        #expect(t.secondsFlag == true && t.secondsValue == 12 && t.minutesFlag == true && t.minutesValue == 34)
        #expect(t.hoursFlag == false && t.hoursValue == nil && t.timeOffset == nil)
        #expect(pt.clockTimestamps[1] == nil)
        // With full_timestamp_flag the three values follow without their flags.
        let full = try PicTiming(payload: picTimingPayload(picStruct: 3, full: true), sps: try sps(), warnings: &warnings)
        let f = try #require(full.clockTimestamps[0])
        #expect(f.secondsFlag == nil && f.secondsValue == 12 && f.minutesValue == 34 && f.hoursValue == 23)
        #expect(warnings.isEmpty)
    }

    @Test func secondsOutsideTheirRangeAreToleratedOnlyWhenLenient() throws {
        var warnings: [ParseWarning] = []
        let payload = picTimingPayload(picStruct: 0, seconds: 61)
        let pt = try PicTiming(payload: payload, sps: try sps(), policy: .lenient, warnings: &warnings)
        #expect(pt.clockTimestamps[0]?.secondsValue == 61)
        #expect(warnings.count == 1)
        #expect(warnings.first?.element == "seconds_value[0]" && warnings.first?.value == 61 && warnings.first?.allowedRange == 0...59)
        // seconds_value starts after 13 + 7 + 4 + 1 + 2 + 1 + 5 + 1 + 1 + 1 + 8 + 1 = 45 bits.
        #expect(throws: H264Error.outOfRange(element: "seconds_value[0]", value: 61, range: 0...59, bitOffset: 45)) {
            var none: [ParseWarning] = []
            _ = try PicTiming(payload: payload, sps: try self.sps(), policy: .strict, warnings: &none)
        }
    }

    @Test func reservedPicStructIsAnError() throws {
        var warnings: [ParseWarning] = []
        // pic_struct 9 is reserved: how many clock timestamps follow is unknown. It starts at bit 13 + 7 = 20.
        #expect(throws: H264Error.outOfRange(element: "pic_struct", value: 9, range: 0...8, bitOffset: 20)) {
            _ = try PicTiming(payload: self.picTimingPayload(picStruct: 9), sps: try self.sps(), warnings: &warnings)
        }
    }

    @Test func truncatedPayloadsNameTheElementAndByte() throws {
        let sps = try sps()
        // buffering_period: ue(0) is one bit, then 19 + 19 bits. Two bytes hold the id and 15 bits of the delay.
        // In an SEI RBSP "00 02 xx xx 80", the payload starts at byte 2; the delay starts at bit 1 of it.
        let short = try SEIMessage.parse(rbsp: hex("0002 98b8 80"))
        #expect(throws: H264Error.truncated(element: "nal initial_cpb_removal_delay[0]", byteOffset: 2, needed: 3, available: 2)) {
            _ = try short[0].bufferingPeriod { _ in sps }
        }
        // Four bytes: the delay (bits 1-19) fits, the offset (bits 20-38) does not: it starts in payload byte 2
        // (RBSP byte 4) at bit 4 and needs (4 + 19 + 7) / 8 = 3 bytes, 2 remain.
        let shortOffset = try SEIMessage.parse(rbsp: hex("0004 98b81057 80"))
        #expect(throws: H264Error.truncated(element: "nal initial_cpb_removal_delay_offset[0]", byteOffset: 4, needed: 3, available: 2)) {
            _ = try shortOffset[0].bufferingPeriod { _ in sps }
        }
        // An empty payload: seq_parameter_set_id cannot be read.
        let empty = SEIMessage(payloadType: 0, payloadSize: 0, payload: [])
        #expect(throws: H264Error.truncated(element: "seq_parameter_set_id", byteOffset: 0, needed: 1, available: 0)) {
            _ = try empty.bufferingPeriod { _ in sps }
        }
        // pic_timing cut after its two delays (20 bits): pic_struct at bit 20 of a 3-byte payload, bits 20-23 present,
        // then clock_timestamp_flag[0] at bit 24 is missing.
        var w = BitWriter()
        w.u(13, 1); w.u(7, 2); w.u(4, 0)
        var warnings: [ParseWarning] = []
        #expect(throws: H264Error.truncated(element: "clock_timestamp_flag[0]", byteOffset: 10 + 3, needed: 1, available: 0)) {
            _ = try PicTiming(payload: w.bytes, byteOffset: 10, sps: sps, warnings: &warnings)
        }
    }

    @Test func aBufferingPeriodNamingAnUnknownSPSIsRefused() throws {
        var w = BitWriter()
        w.ue(5)  // seq_parameter_set_id 5, not given
        w.u(19, 1); w.u(19, 1)
        w.trailing()
        let sps = try sps()
        #expect(throws: H264Error.missingParameterSet(element: "seq_parameter_set_id of buffering_period", id: 5, bitOffset: 0)) {
            _ = try BufferingPeriod(payload: w.bytes) { $0 == 0 ? sps : nil }
        }
        var big = BitWriter()
        big.ue(32)
        big.trailing()
        #expect(throws: H264Error.outOfRange(element: "seq_parameter_set_id", value: 32, range: 0...31, bitOffset: 0)) {
            _ = try BufferingPeriod(payload: big.bytes) { _ in sps }
        }
    }

    @Test func anAccessUnitsTimingIsSkippedWhenLenientAndRefusedWhenStrict() throws {
        let sps = try sps()
        // An access unit whose buffering period SEI is cut short (payload "98 b8"), and whose pic timing is whole.
        let bad = NALUnit(nalRefIdc: 0, nalUnitType: .sei, rbsp: hex("000298b8 80"))
        let good = NALUnit(nalRefIdc: 0, nalUnitType: .sei, rbsp: hex("0104000040408" + "0"))
        let unit = AccessUnit(index: 0, nalUnitIndices: 7..<9, nalUnits: [bad, good], sliceHeaders: [])
        var warnings: [ParseWarning] = []
        let timing = try unit.hrdTiming(sps: { id, _ in id == 0 ? sps : nil }, activeSPS: sps, policy: .lenient, warnings: &warnings)
        #expect(timing.bufferingPeriod == nil)
        #expect(timing.picTiming?.dpbOutputDelay == 4)
        #expect(warnings.count == 1)
        #expect(warnings.first?.element == "buffering_period" && warnings.first?.nalUnitIndex == 7)
        #expect(warnings.first?.problem == "nal initial_cpb_removal_delay[0] truncated at byte 2: needs 3 bytes, 2 available")
        var none: [ParseWarning] = []
        #expect(throws: H264Error.truncated(element: "nal initial_cpb_removal_delay[0]", byteOffset: 2, needed: 3, available: 2)) {
            _ = try unit.hrdTiming(sps: { id, _ in id == 0 ? sps : nil }, activeSPS: sps, policy: .strict, warnings: &none)
        }
        // Without an active SPS, the buffering period's SPS reads the picture timing; with neither, the picture
        // timing is skipped with a warning.
        let whole = NALUnit(nalRefIdc: 0, nalUnitType: .sei, rbsp: hex("000598b81057e780"))
        let both = AccessUnit(index: 0, nalUnitIndices: 0..<2, nalUnits: [whole, good], sliceHeaders: [])
        var w2: [ParseWarning] = []
        let viaBP = try both.hrdTiming(sps: { id, _ in id == 0 ? sps : nil }, activeSPS: nil, warnings: &w2)
        #expect(viaBP.bufferingPeriod?.nalHrd?.first?.initialCpbRemovalDelay == 101_249 && viaBP.picTiming?.cpbRemovalDelay == 0)
        #expect(w2.isEmpty)
        let alone = AccessUnit(index: 0, nalUnitIndices: 3..<4, nalUnits: [good], sliceHeaders: [])
        let noSPS = try alone.hrdTiming(sps: { _, _ in nil }, activeSPS: nil, warnings: &w2)
        #expect(noSPS.picTiming == nil && w2.map(\.element) == ["pic_timing"] && w2.first?.nalUnitIndex == 3)
    }
}
