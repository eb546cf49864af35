/// One `sei_message()` of an SEI NAL unit (H.264 clause 7.3.2.3.1), with the payloads this module
/// understands decoded (Annex D): recovery point (payloadType 6, D.1.8) and user data unregistered
/// (payloadType 5, D.1.7, e.g. x264's options string). Buffering period (0, D.1.2) and picture timing (1, D.1.3)
/// need an SPS to be read, so they are decoded on request: ``bufferingPeriod(sps:)``,
/// ``picTiming(sps:policy:warnings:)``.
public struct SEIMessage: Codable, Hashable, Sendable {
    /// `payloadType`: the sum of the `ff_byte`s and `last_payload_type_byte`.
    public var payloadType: Int
    /// `payloadSize` in bytes.
    public var payloadSize: Int
    /// The payload bytes (RBSP, emulation prevention removed), `payloadSize` long.
    public var payload: [UInt8]
    /// Decoded when `payloadType` is 6.
    public var recoveryPoint: RecoveryPoint?
    /// Decoded when `payloadType` is 5.
    public var userDataUnregistered: UserDataUnregistered?
    /// Byte offset of the payload in the SEI RBSP it was parsed from (0 for a message made from parts), for the
    /// errors of the payload parsers; not part of the encoded form.
    public var payloadByteOffset: Int = 0

    enum CodingKeys: String, CodingKey {
        case payloadType = "payload_type"
        case payloadSize = "payload_size"
        case payload = "payload"
        case recoveryPoint = "recovery_point"
        case userDataUnregistered = "user_data_unregistered"
    }

    /// Parses every `sei_message()` in an SEI RBSP (`sei_rbsp()`, 7.3.2.3), stopping at the
    /// `rbsp_trailing_bits` (a byte `0x80` followed by nothing but zero bytes).
    /// - Parameter rbsp: the SEI NAL unit's RBSP.
    /// - Returns: the messages in order.
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` when a payload type,
    ///   size or payload runs past the end (byte offsets in the RBSP); errors of the payload
    ///   parsers for a malformed recovery point or user data payload.
    public static func parse(rbsp: [UInt8]) throws -> [SEIMessage] {
        var ignored: [ParseWarning] = []
        return try parse(rbsp: rbsp, policy: .lenient, warnings: &ignored)
    }

    /// ``parse(rbsp:)``, with `policy` deciding what to do with an SEI RBSP whose last message is not followed by
    /// `rbsp_trailing_bits` (the NAL unit ends with the last payload, or with zero bytes after it): the messages are
    /// kept with a ``ParseWarning`` (element `rbsp_trailing_bits`, no NAL unit index) or, strict, refused. FFmpeg's
    /// decoder logs such an SEI ("SEI type 5 size 288 truncated at 287": it takes the payload's last bit equal to 1
    /// for the stop bit) and decodes on.
    /// - Throws: as ``parse(rbsp:)``; with the strict policy, ``H264Error/invalid(element:reason:byteOffset:)`` for
    ///   missing trailing bits (byte offset: the end of the last payload).
    public static func parse(rbsp: [UInt8], policy: ParsePolicy, warnings: inout [ParseWarning]) throws -> [SEIMessage] {
        var messages = [SEIMessage]()
        var p = 0
        // rbsp_trailing_bits: the last non-zero byte, when it is 0x80, holds the stop bit.
        let lastNonZero = rbsp.lastIndex { $0 != 0 } ?? -1
        func trailingOnly(_ p: Int) -> Bool {
            p >= rbsp.count || p > lastNonZero || (p == lastNonZero && rbsp[p] == 0x80)
        }
        // payloadType and payloadSize (7.3.2.3.1): each 0xFF byte adds 255, the first other byte ends the value.
        func value(_ element: String) throws -> Int {
            var total = 0
            while true {
                guard p < rbsp.count else { throw H264Error.truncated(element: element, byteOffset: p, needed: 1, available: 0) }
                let b = Int(rbsp[p]); p += 1
                total += b
                if b != 0xFF { return total }
            }
        }
        while !trailingOnly(p) {
            let payloadType = try value("payloadType")
            let payloadSize = try value("payloadSize")
            guard rbsp.count - p >= payloadSize else {
                throw H264Error.truncated(element: "sei_payload(\(payloadType))", byteOffset: p, needed: payloadSize, available: rbsp.count - p)
            }
            let payload = Array(rbsp[p..<(p + payloadSize)])
            var message = SEIMessage(payloadType: payloadType, payloadSize: payloadSize, payload: payload)
            message.payloadByteOffset = p
            if payloadType == 6 {
                message.recoveryPoint = try RecoveryPoint(payload: payload)
            } else if payloadType == 5 {
                message.userDataUnregistered = try UserDataUnregistered(payload: payload, byteOffset: p)
            }
            messages.append(message)
            p += payloadSize
        }
        // The loop ends at the trailing bits (0x80 as the last non-zero byte) or where nothing but zero bytes is left.
        if !(p == lastNonZero && rbsp[p] == 0x80) {
            let last = messages.last.map { "payloadType \($0.payloadType), payloadSize \($0.payloadSize)" } ?? "no sei_message"
            let problem = "no rbsp_trailing_bits after the last sei_message (\(last)): the NAL unit ends \(p >= rbsp.count ? "with its payload" : "in zero bytes")"
            if policy == .strict { throw H264Error.invalid(element: "rbsp_trailing_bits", reason: problem, byteOffset: p) }
            warnings.append(ParseWarning(element: "rbsp_trailing_bits", problem: problem,
                                         reason: "its messages are read; SEI is not needed to decode (H.264 Annex D)", byteOffset: p))
        }
        return messages
    }

    /// Creates a message from raw parts; decoded payloads are left nil.
    public init(payloadType: Int, payloadSize: Int, payload: [UInt8]) {
        self.payloadType = payloadType
        self.payloadSize = payloadSize
        self.payload = payload
    }
}

/// `recovery_point()` SEI payload (H.264 D.1.8, D.2.8): random access can start at this
/// access unit and the output is correct from `recovery_frame_cnt` frames later. x264 writes it
/// on the I pictures of an open GOP.
public struct RecoveryPoint: Codable, Hashable, Sendable {
    /// 0...MaxFrameNum − 1 (checked against the SPS by the caller if needed).
    public var recoveryFrameCnt: Int
    public var exactMatchFlag: Bool
    public var brokenLinkFlag: Bool
    /// 0...3 (2 bits).
    public var changingSliceGroupIdc: Int

    enum CodingKeys: String, CodingKey {
        case recoveryFrameCnt = "recovery_frame_cnt"
        case exactMatchFlag = "exact_match_flag"
        case brokenLinkFlag = "broken_link_flag"
        case changingSliceGroupIdc = "changing_slice_group_idc"
    }

    /// Parses the payload bytes of a payloadType 6 message.
    /// - Throws: ``H264Error/endOfData(element:bitOffset:)`` (bit offset within the payload).
    public init(payload: [UInt8]) throws {
        var r = BitReader(payload)
        recoveryFrameCnt = try r.ue("recovery_frame_cnt", 0...65535)
        exactMatchFlag = try r.flag("exact_match_flag")
        brokenLinkFlag = try r.flag("broken_link_flag")
        changingSliceGroupIdc = try r.u(2, "changing_slice_group_idc")
    }
}

/// `user_data_unregistered()` SEI payload (H.264 D.1.7): a 16-byte UUID then free bytes.
public struct UserDataUnregistered: Codable, Hashable, Sendable {
    /// `uuid_iso_iec_11578`, 16 bytes.
    public var uuidIsoIec11578: [UInt8]
    /// `user_data_payload_byte`s.
    public var userDataPayloadBytes: [UInt8]

    enum CodingKeys: String, CodingKey {
        case uuidIsoIec11578 = "uuid_iso_iec_11578"
        case userDataPayloadBytes = "user_data_payload_bytes"
    }

    /// The payload bytes as text: UTF-8 (invalid sequences replaced), up to the first NUL byte.
    /// x264 writes "x264 - core 164 r3095 baee400 - H.264/MPEG-4 AVC codec - ... - options: ...".
    public var string: String {
        let text = userDataPayloadBytes.prefix { $0 != 0 }
        return String(decoding: text, as: UTF8.self)
    }

    /// The UUID in the usual 8-4-4-4-12 lower-case hex form.
    public var uuidString: String {
        var s = ""
        for (i, b) in uuidIsoIec11578.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { s += "-" }
            s += String(b, radix: 16).count == 1 ? "0" + String(b, radix: 16) : String(b, radix: 16)
        }
        return s
    }

    /// Parses the payload bytes of a payloadType 5 message.
    /// - Parameters:
    ///   - payload: at least 16 bytes.
    ///   - byteOffset: where the payload starts, for the error.
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` for fewer than 16 bytes.
    public init(payload: [UInt8], byteOffset: Int = 0) throws {
        guard payload.count >= 16 else {
            throw H264Error.truncated(element: "uuid_iso_iec_11578", byteOffset: byteOffset, needed: 16, available: payload.count)
        }
        uuidIsoIec11578 = Array(payload[0..<16])
        userDataPayloadBytes = Array(payload[16...])
    }
}

extension AccessUnit {
    /// The recovery point of this access unit: the first `recovery_point()` SEI message (payloadType 6, D.1.8) in
    /// its SEI NAL units. With it, an access unit that is not IDR is a random access point (open GOP, periodic
    /// intra refresh): decoding can start here, and the output is correct from `recovery_frame_cnt` frames on.
    /// - Parameters:
    ///   - policy: what to do with an SEI NAL unit that does not parse (SEI is not needed to decode, H.264
    ///     Annex D): skipped with a warning (lenient) or an error (strict).
    ///   - warnings: gets one ``ParseWarning`` (element `sei_rbsp`, the NAL unit's index in the split sequence)
    ///     per SEI NAL unit skipped.
    /// - Returns: the recovery point, nil when there is none.
    /// - Throws: with the strict policy, the ``H264Error`` of an SEI NAL unit that does not parse.
    public func recoveryPoint(policy: ParsePolicy = .lenient, warnings: inout [ParseWarning]) throws -> RecoveryPoint? {
        var found: RecoveryPoint?
        for (k, nal) in nalUnits.enumerated() where nal.nalUnitType == .sei {
            do {
                var missing: [ParseWarning] = []
                let messages = try SEIMessage.parse(rbsp: nal.rbsp, policy: policy, warnings: &missing)
                warnings += missing.map { var w = $0; w.nalUnitIndex = nalUnitIndices.lowerBound + k; return w }
                if found == nil { found = messages.lazy.compactMap(\.recoveryPoint).first }
            } catch let error as H264Error {
                if policy == .strict { throw error }
                warnings.append(ParseWarning(element: "sei_rbsp", problem: "\(error)",
                                             reason: "SEI is not needed to decode (H.264 Annex D); its messages are not read",
                                             nalUnitIndex: nalUnitIndices.lowerBound + k))
            }
        }
        return found
    }
}
