/// `buffering_period()` SEI payload (payloadType 0; H.264 D.1.2 syntax, D.2.2 semantics): the initial removal delay
/// of the coded picture buffer (CPB) at the start of a buffering period, per CPB specification (`SchedSelIdx`), for
/// the NAL HRD and the VCL HRD that the SPS's VUI describes (E.1.2 `hrd_parameters()`). x264 writes one on every
/// keyframe under `--nal-hrd vbr|cbr` (NAL HRD only, one CPB specification).
///
/// Its lengths come from the SPS it names (`seq_parameter_set_id`), so the payload is decoded with that SPS at hand:
/// ``SEIMessage/bufferingPeriod(sps:)``.
public struct BufferingPeriod: Codable, Hashable, Sendable {
    /// One CPB specification's initial delays, in units of a 90 kHz clock (D.2.2).
    public struct InitialDelay: Codable, Hashable, Sendable {
        /// `initial_cpb_removal_delay[SchedSelIdx]`: delay from the arrival of the first bit of this access unit to
        /// its removal from the CPB, 90 kHz ticks; D.2.2 allows 1 ... 90000 · (CpbSize ÷ BitRate) (not checked here:
        /// the value is kept as read).
        public var initialCpbRemovalDelay: Int
        /// `initial_cpb_removal_delay_offset[SchedSelIdx]`, 90 kHz ticks: with the delay, the initial delivery time of
        /// the access units to the CPB (C.1.2); their sum stays constant over the stream.
        public var initialCpbRemovalDelayOffset: Int

        enum CodingKeys: String, CodingKey {
            case initialCpbRemovalDelay = "initial_cpb_removal_delay"
            case initialCpbRemovalDelayOffset = "initial_cpb_removal_delay_offset"
        }

        public init(initialCpbRemovalDelay: Int, initialCpbRemovalDelayOffset: Int) {
            self.initialCpbRemovalDelay = initialCpbRemovalDelay
            self.initialCpbRemovalDelayOffset = initialCpbRemovalDelayOffset
        }
    }

    /// `seq_parameter_set_id` (0...31): the SPS whose HRD parameters this message goes with.
    public var seqParameterSetId: Int
    /// One entry per `SchedSelIdx` (cpb_cnt_minus1 + 1) when NalHrdBpPresentFlag (the SPS's
    /// `nal_hrd_parameters_present_flag`) is 1; nil otherwise.
    public var nalHrd: [InitialDelay]?
    /// The same for the VCL HRD (`vcl_hrd_parameters_present_flag`).
    public var vclHrd: [InitialDelay]?

    enum CodingKeys: String, CodingKey {
        case seqParameterSetId = "seq_parameter_set_id"
        case nalHrd = "nal_hrd"
        case vclHrd = "vcl_hrd"
    }

    public init(seqParameterSetId: Int, nalHrd: [InitialDelay]?, vclHrd: [InitialDelay]?) {
        self.seqParameterSetId = seqParameterSetId
        self.nalHrd = nalHrd
        self.vclHrd = vclHrd
    }

    /// Parses the payload bytes of a payloadType 0 message.
    /// - Parameters:
    ///   - payload: the payload (RBSP bytes).
    ///   - byteOffset: where the payload starts in the SEI RBSP, for the errors.
    ///   - sps: the SPS of a `seq_parameter_set_id` (the one in force where the SEI NAL unit is), or nil when none is.
    /// - Throws: ``H264Error/outOfRange(element:value:range:bitOffset:)`` for `seq_parameter_set_id` above 31;
    ///   ``H264Error/missingParameterSet(element:id:bitOffset:)`` when `sps` has none for it;
    ///   ``H264Error/truncated(element:byteOffset:needed:available:)`` naming the element (with its `SchedSelIdx`)
    ///   when the payload ends inside it (byte offsets in the SEI RBSP; bit offsets in the payload).
    public init(payload: [UInt8], byteOffset: Int = 0, sps: (Int) throws -> SequenceParameterSet?) throws {
        var r = PayloadReader(payload, byteOffset: byteOffset, policy: .lenient)
        let id = try r.ue("seq_parameter_set_id", 0...31)
        seqParameterSetId = id
        guard let sps = try sps(id) else {
            throw H264Error.missingParameterSet(element: "seq_parameter_set_id of buffering_period", id: id, bitOffset: 0)
        }
        let vui = sps.vuiParameters
        func delays(_ hrd: HRDParameters?, _ which: String) throws -> [InitialDelay]? {
            guard let hrd else { return nil }
            let n = hrd.initialCpbRemovalDelayLengthMinus1 + 1
            return try (0...hrd.cpbCntMinus1).map { i in
                InitialDelay(initialCpbRemovalDelay: try r.u(n, "\(which) initial_cpb_removal_delay[\(i)]"),
                             initialCpbRemovalDelayOffset: try r.u(n, "\(which) initial_cpb_removal_delay_offset[\(i)]"))
            }
        }
        nalHrd = try delays(vui?.nalHrdParametersPresentFlag == true ? vui?.nalHrdParameters : nil, "nal")
        vclHrd = try delays(vui?.vclHrdParametersPresentFlag == true ? vui?.vclHrdParameters : nil, "vcl")
    }
}

/// `pic_timing()` SEI payload (payloadType 1; H.264 D.1.3 syntax, D.2.3 semantics): when the active SPS has an HRD
/// (CpbDpbDelaysPresentFlag), the picture's CPB removal and DPB output delays in clock ticks
/// (t_c = `num_units_in_tick` ÷ `time_scale` seconds); when it has `pic_struct_present_flag`, how the picture is
/// displayed (Table D-1) and its clock timestamps.
///
/// Decoded with the active SPS at hand: ``SEIMessage/picTiming(sps:policy:warnings:)``.
public struct PicTiming: Codable, Hashable, Sendable {
    /// One `clock_timestamp_flag[i]` with the timestamp it announces (D.2.3).
    public struct ClockTimestamp: Codable, Hashable, Sendable {
        /// 0 progressive, 1 interlaced, 2 unknown (3 reserved).
        public var ctType: Int
        public var nuitFieldBasedFlag: Bool
        /// 0...6 (7...31 reserved).
        public var countingType: Int
        public var fullTimestampFlag: Bool
        public var discontinuityFlag: Bool
        public var cntDroppedFlag: Bool
        public var nFrames: Int
        /// `seconds_flag`, `minutes_flag`, `hours_flag`: nil when `full_timestamp_flag` is 1 (all three values
        /// present) or when an enclosing flag is 0.
        public var secondsFlag: Bool?
        public var minutesFlag: Bool?
        public var hoursFlag: Bool?
        /// 0...59, 0...59, 0...23; nil when absent.
        public var secondsValue: Int?
        public var minutesValue: Int?
        public var hoursValue: Int?
        /// `time_offset`, i(time_offset_length) (two's complement); nil when time_offset_length is 0.
        public var timeOffset: Int?

        enum CodingKeys: String, CodingKey {
            case ctType = "ct_type"
            case nuitFieldBasedFlag = "nuit_field_based_flag"
            case countingType = "counting_type"
            case fullTimestampFlag = "full_timestamp_flag"
            case discontinuityFlag = "discontinuity_flag"
            case cntDroppedFlag = "cnt_dropped_flag"
            case nFrames = "n_frames"
            case secondsFlag = "seconds_flag"
            case minutesFlag = "minutes_flag"
            case hoursFlag = "hours_flag"
            case secondsValue = "seconds_value"
            case minutesValue = "minutes_value"
            case hoursValue = "hours_value"
            case timeOffset = "time_offset"
        }
    }

    /// `cpb_removal_delay`, clock ticks after the removal of the access unit of the latest buffering period SEI
    /// before it (D.2.3); nil without CpbDpbDelaysPresentFlag.
    public var cpbRemovalDelay: Int?
    /// `dpb_output_delay`, clock ticks from the picture's removal from the CPB to its output from the DPB; nil
    /// without CpbDpbDelaysPresentFlag.
    public var dpbOutputDelay: Int?
    /// `pic_struct` (Table D-1: 0 frame, 1 top field, 2 bottom field, 3 top-bottom, 4 bottom-top, 5 top-bottom-top,
    /// 6 bottom-top-bottom, 7 frame doubling, 8 frame tripling); nil without `pic_struct_present_flag`.
    public var picStruct: Int?
    /// NumClockTS entries (Table D-1) with `pic_struct`: nil where `clock_timestamp_flag[i]` is 0; empty without
    /// `pic_struct`.
    public var clockTimestamps: [ClockTimestamp?]

    enum CodingKeys: String, CodingKey {
        case cpbRemovalDelay = "cpb_removal_delay"
        case dpbOutputDelay = "dpb_output_delay"
        case picStruct = "pic_struct"
        case clockTimestamps = "clock_timestamps"
    }

    /// NumClockTS of Table D-1 for `pic_struct` 0...8.
    public static let numClockTS = [1, 1, 1, 2, 2, 3, 3, 2, 3]

    /// Why a clock timestamp value outside its range is accepted (``ParsePolicy``).
    static let notDecoding = "SEI does not affect decoding (H.264 Annex D)"

    /// Parses the payload bytes of a payloadType 1 message.
    /// - Parameters:
    ///   - payload: the payload (RBSP bytes).
    ///   - byteOffset: where the payload starts in the SEI RBSP, for the errors.
    ///   - sps: the active SPS (of the access unit's slices). Its VUI decides what is present: CpbDpbDelaysPresentFlag
    ///     (`nal_hrd_parameters_present_flag` or `vcl_hrd_parameters_present_flag`; the lengths are the NAL HRD's,
    ///     else the VCL HRD's), `pic_struct_present_flag`, and `time_offset_length` (24 when there is no HRD, E.2.2).
    ///   - policy: `seconds_value`/`minutes_value` above 59 and `hours_value` above 23 are kept with a warning
    ///     (lenient) or refused (strict).
    ///   - warnings: gets those warnings (bit offsets in the payload).
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` naming the element when the payload
    ///   ends inside it; ``H264Error/outOfRange(element:value:range:bitOffset:)`` for a reserved `pic_struct` (9...15:
    ///   the number of clock timestamps that follow is unknown) and, strict, the values above.
    public init(payload: [UInt8], byteOffset: Int = 0, sps: SequenceParameterSet, policy: ParsePolicy = .lenient,
                warnings: inout [ParseWarning]) throws {
        var r = PayloadReader(payload, byteOffset: byteOffset, policy: policy)
        let vui = sps.vuiParameters
        let hrd = (vui?.nalHrdParametersPresentFlag == true ? vui?.nalHrdParameters : nil)
            ?? (vui?.vclHrdParametersPresentFlag == true ? vui?.vclHrdParameters : nil)
        if let hrd {
            cpbRemovalDelay = try r.u(hrd.cpbRemovalDelayLengthMinus1 + 1, "cpb_removal_delay")
            dpbOutputDelay = try r.u(hrd.dpbOutputDelayLengthMinus1 + 1, "dpb_output_delay")
        }
        clockTimestamps = []
        if vui?.picStructPresentFlag == true {
            let s = try r.u(4, "pic_struct", 0...8)
            picStruct = s
            let timeOffsetLength = hrd?.timeOffsetLength ?? 24
            for i in 0..<Self.numClockTS[s] {
                guard try r.flag("clock_timestamp_flag[\(i)]") else { clockTimestamps.append(nil); continue }
                var t = ClockTimestamp(ctType: try r.u(2, "ct_type[\(i)]"), nuitFieldBasedFlag: try r.flag("nuit_field_based_flag[\(i)]"),
                                       countingType: try r.u(5, "counting_type[\(i)]"), fullTimestampFlag: try r.flag("full_timestamp_flag[\(i)]"),
                                       discontinuityFlag: try r.flag("discontinuity_flag[\(i)]"), cntDroppedFlag: try r.flag("cnt_dropped_flag[\(i)]"),
                                       nFrames: try r.u(8, "n_frames[\(i)]"))
                func seconds() throws -> Int { try r.u(6, "seconds_value[\(i)]", 0...59, tolerated: Self.notDecoding) }
                func minutes() throws -> Int { try r.u(6, "minutes_value[\(i)]", 0...59, tolerated: Self.notDecoding) }
                func hours() throws -> Int { try r.u(5, "hours_value[\(i)]", 0...23, tolerated: Self.notDecoding) }
                if t.fullTimestampFlag {
                    t.secondsValue = try seconds()
                    t.minutesValue = try minutes()
                    t.hoursValue = try hours()
                } else {
                    t.secondsFlag = try r.flag("seconds_flag[\(i)]")
                    if t.secondsFlag == true {
                        t.secondsValue = try seconds()
                        t.minutesFlag = try r.flag("minutes_flag[\(i)]")
                        if t.minutesFlag == true {
                            t.minutesValue = try minutes()
                            t.hoursFlag = try r.flag("hours_flag[\(i)]")
                            if t.hoursFlag == true { t.hoursValue = try hours() }
                        }
                    }
                }
                if timeOffsetLength > 0 {
                    let raw = try r.u(timeOffsetLength, "time_offset[\(i)]")
                    // i(v): two's complement in time_offset_length bits.
                    t.timeOffset = raw >= 1 << (timeOffsetLength - 1) ? raw - (1 << timeOffsetLength) : raw
                }
                clockTimestamps.append(t)
            }
        }
        warnings += r.reader.warnings
    }
}

/// A ``BitReader`` over one SEI payload whose running out of data is reported as the container error the SEI
/// parser gives (``H264Error/truncated(element:byteOffset:needed:available:)``, byte offsets in the SEI RBSP) rather
/// than as a bit position.
struct PayloadReader {
    var reader: BitReader
    let byteOffset: Int
    let count: Int

    init(_ payload: [UInt8], byteOffset: Int, policy: ParsePolicy) {
        reader = BitReader(payload, policy: policy)
        self.byteOffset = byteOffset
        count = payload.count
    }

    private func truncated(_ element: String, bits: Int) -> H264Error {
        let at = reader.bitOffset
        return H264Error.truncated(element: element, byteOffset: byteOffset + at / 8, needed: (at % 8 + bits + 7) / 8,
                                   available: count - at / 8)
    }

    mutating func u(_ n: Int, _ element: String) throws -> Int {
        guard reader.bitsRemaining >= n else { throw truncated(element, bits: n) }
        return try reader.u(n, element)
    }

    mutating func u(_ n: Int, _ element: String, _ range: ClosedRange<Int>) throws -> Int {
        guard reader.bitsRemaining >= n else { throw truncated(element, bits: n) }
        return try reader.u(n, element, range)
    }

    mutating func u(_ n: Int, _ element: String, _ range: ClosedRange<Int>, tolerated reason: String) throws -> Int {
        guard reader.bitsRemaining >= n else { throw truncated(element, bits: n) }
        return try reader.u(n, element, range, tolerated: reason)
    }

    mutating func flag(_ element: String) throws -> Bool { try u(1, element) == 1 }

    mutating func ue(_ element: String, _ range: ClosedRange<Int>) throws -> Int {
        do { return try reader.ue(element, range) } catch H264Error.endOfData(element, _) {
            throw truncated(element, bits: 1)
        }
    }
}

extension SEIMessage {
    /// The `buffering_period()` of a payloadType 0 message, decoded with the SPS it names; nil for another type.
    /// - Parameter sps: the SPS of an id (the one in force where the SEI NAL unit is), nil for none.
    /// - Throws: as ``BufferingPeriod/init(payload:byteOffset:sps:)``, byte offsets in the SEI RBSP.
    public func bufferingPeriod(sps: (Int) throws -> SequenceParameterSet?) throws -> BufferingPeriod? {
        payloadType == 0 ? try BufferingPeriod(payload: payload, byteOffset: payloadByteOffset, sps: sps) : nil
    }

    /// The `pic_timing()` of a payloadType 1 message, decoded with the active SPS; nil for another type.
    /// - Throws: as ``PicTiming/init(payload:byteOffset:sps:policy:warnings:)``, byte offsets in the SEI RBSP.
    public func picTiming(sps: SequenceParameterSet, policy: ParsePolicy = .lenient, warnings: inout [ParseWarning]) throws -> PicTiming? {
        payloadType == 1 ? try PicTiming(payload: payload, byteOffset: payloadByteOffset, sps: sps, policy: policy, warnings: &warnings) : nil
    }
}

/// The HRD timing SEI of one access unit: its buffering period and its picture timing.
public struct HRDTiming: Codable, Hashable, Sendable {
    public var bufferingPeriod: BufferingPeriod?
    public var picTiming: PicTiming?

    enum CodingKeys: String, CodingKey {
        case bufferingPeriod = "buffering_period"
        case picTiming = "pic_timing"
    }

    public init(bufferingPeriod: BufferingPeriod? = nil, picTiming: PicTiming? = nil) {
        self.bufferingPeriod = bufferingPeriod
        self.picTiming = picTiming
    }
}

extension AccessUnit {
    /// The first `buffering_period()` (payloadType 0) and first `pic_timing()` (payloadType 1) SEI messages in this
    /// access unit's SEI NAL units (H.264 D.1.2, D.1.3).
    ///
    /// Both need an SPS, which the caller supplies: a buffering period names its own (`seq_parameter_set_id`: give
    /// the one in force at the SEI NAL unit, e.g. ``ParameterSetLog/occurrence(_:id:before:)``); picture timing uses
    /// the active SPS, the one the access unit's slices were parsed with (``ParameterSetLog/occurrences(for:)``). A
    /// buffering period in the same access unit activates the SPS it names, so that SPS is used for the picture
    /// timing when `activeSPS` is nil.
    /// - Parameters:
    ///   - sps: the SPS of an id in force before NAL unit index (in the split sequence, as
    ///     ``nalUnitIndices``); nil for none.
    ///   - activeSPS: the active SPS; nil to use the buffering period's.
    ///   - policy: an SEI NAL unit or timing payload that does not parse (SEI is not needed to decode, H.264 Annex D)
    ///     is skipped with a warning (lenient) or is an error (strict), as ``recoveryPoint(policy:warnings:)`` does.
    ///   - warnings: gets one ``ParseWarning`` (element `sei_rbsp`, `buffering_period` or `pic_timing`, the NAL
    ///     unit's index) per NAL unit or payload skipped, and those of tolerated clock timestamp values (bit offsets
    ///     in the SEI NAL unit's RBSP).
    /// - Returns: what was found (both nil when none).
    /// - Throws: with the strict policy, the ``H264Error`` of an SEI NAL unit or timing payload that does not parse.
    public func hrdTiming(sps: (_ id: Int, _ beforeNALUnitIndex: Int) -> SequenceParameterSet?, activeSPS: SequenceParameterSet?,
                          policy: ParsePolicy = .lenient, warnings: inout [ParseWarning]) throws -> HRDTiming {
        var timing = HRDTiming()
        var pending: [(SEIMessage, Int)] = []  // pic_timing messages, decoded once the buffering period is known
        for (k, nal) in nalUnits.enumerated() where nal.nalUnitType == .sei {
            let index = nalUnitIndices.lowerBound + k
            func skip(_ element: String, _ error: H264Error) throws {
                if policy == .strict { throw error }
                warnings.append(ParseWarning(element: element, problem: "\(error)",
                                             reason: "SEI is not needed to decode (H.264 Annex D); the message is not read",
                                             nalUnitIndex: index))
            }
            let messages: [SEIMessage]
            // Missing rbsp_trailing_bits: refused with the strict policy, else reported by recoveryPoint(policy:warnings:).
            var reported: [ParseWarning] = []
            do { messages = try SEIMessage.parse(rbsp: nal.rbsp, policy: policy, warnings: &reported) } catch let error as H264Error {
                try skip("sei_rbsp", error)
                continue
            }
            for message in messages {
                if message.payloadType == 0, timing.bufferingPeriod == nil {
                    do { timing.bufferingPeriod = try message.bufferingPeriod { sps($0, index) } } catch let error as H264Error {
                        try skip("buffering_period", error)
                    }
                } else if message.payloadType == 1 {
                    pending.append((message, index))
                }
            }
        }
        let active = activeSPS ?? timing.bufferingPeriod.flatMap { bp in sps(bp.seqParameterSetId, nalUnitIndices.upperBound) }
        for (message, index) in pending where timing.picTiming == nil {
            guard let active else {
                let error = H264Error.invalid(element: "pic_timing", reason: "no active SPS to read it with", byteOffset: message.payloadByteOffset)
                if policy == .strict { throw error }
                warnings.append(ParseWarning(element: "pic_timing", problem: "\(error)",
                                             reason: "SEI is not needed to decode (H.264 Annex D); the message is not read",
                                             nalUnitIndex: index))
                continue
            }
            var found: [ParseWarning] = []
            do {
                timing.picTiming = try message.picTiming(sps: active, policy: policy, warnings: &found)
                // Bit offsets in the NAL unit's RBSP, as ParseWarning counts them.
                warnings += found.map { var w = $0; w.nalUnitIndex = index; w.bitOffset = w.bitOffset.map { $0 + 8 * message.payloadByteOffset }; return w }
            } catch let error as H264Error {
                if policy == .strict { throw error }
                warnings.append(ParseWarning(element: "pic_timing", problem: "\(error)",
                                             reason: "SEI is not needed to decode (H.264 Annex D); the message is not read",
                                             nalUnitIndex: index))
            }
        }
        return timing
    }
}
