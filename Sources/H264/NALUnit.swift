/// `nal_unit_type` (H.264 Table 7-1). A struct rather than an enum so that every value 0...31
/// can be represented; the named constants cover the types this module handles.
public struct NALUnitType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 5-bit value, 0...31.
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let unspecified = NALUnitType(rawValue: 0)
    /// Coded slice of a non-IDR picture.
    public static let slice = NALUnitType(rawValue: 1)
    public static let sliceDataPartitionA = NALUnitType(rawValue: 2)
    public static let sliceDataPartitionB = NALUnitType(rawValue: 3)
    public static let sliceDataPartitionC = NALUnitType(rawValue: 4)
    /// Coded slice of an IDR picture.
    public static let idrSlice = NALUnitType(rawValue: 5)
    /// Supplemental enhancement information (7.3.2.3).
    public static let sei = NALUnitType(rawValue: 6)
    /// Sequence parameter set (7.3.2.1.1).
    public static let sps = NALUnitType(rawValue: 7)
    /// Picture parameter set (7.3.2.2).
    public static let pps = NALUnitType(rawValue: 8)
    /// Access unit delimiter (7.3.2.4).
    public static let accessUnitDelimiter = NALUnitType(rawValue: 9)
    public static let endOfSequence = NALUnitType(rawValue: 10)
    public static let endOfStream = NALUnitType(rawValue: 11)
    public static let fillerData = NALUnitType(rawValue: 12)
    public static let spsExtension = NALUnitType(rawValue: 13)
    public static let prefix = NALUnitType(rawValue: 14)
    public static let subsetSPS = NALUnitType(rawValue: 15)
    public static let depthParameterSet = NALUnitType(rawValue: 16)
    public static let auxiliarySlice = NALUnitType(rawValue: 19)
    public static let sliceExtension = NALUnitType(rawValue: 20)
    public static let sliceExtensionDepthView = NALUnitType(rawValue: 21)

    /// True for the VCL types of the primary coded picture, 1...5 (7.4.1.2.3).
    public var isVCL: Bool { (1...5).contains(rawValue) }

    /// A short name, as FFmpeg's `trace_headers` and Table 7-1 use them.
    public var description: String {
        switch rawValue {
        case 1: return "Slice"
        case 2: return "Slice data partition A"
        case 3: return "Slice data partition B"
        case 4: return "Slice data partition C"
        case 5: return "IDR slice"
        case 6: return "SEI"
        case 7: return "SPS"
        case 8: return "PPS"
        case 9: return "AUD"
        case 10: return "End of sequence"
        case 11: return "End of stream"
        case 12: return "Filler data"
        case 13: return "SPS extension"
        case 14: return "Prefix"
        case 15: return "Subset SPS"
        case 16: return "DPS"
        case 19: return "Auxiliary slice"
        case 20: return "Slice extension"
        case 21: return "Slice extension (depth)"
        default: return "Type \(rawValue)"
        }
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// One NAL unit (H.264 clause 7.3.1), held as its escaped bytes: the NAL unit header followed by
/// the payload with emulation prevention bytes still in place, without start code or length prefix.
///
/// Header fields are read by masking the first byte (never by comparing the whole byte, so a
/// parameter set with any `nal_ref_idc` is recognised).
public struct NALUnit: Hashable, Sendable {
    /// The escaped bytes, header included; never empty.
    public let bytes: [UInt8]

    /// Wraps escaped NAL unit bytes.
    /// - Parameter bytes: the NAL unit header and escaped payload, at least one byte.
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` when `bytes` is empty.
    public init(bytes: [UInt8]) throws {
        guard !bytes.isEmpty else {
            throw H264Error.invalid(element: "nal_unit", reason: "a NAL unit has at least one byte (its header)", byteOffset: 0)
        }
        self.bytes = bytes
    }

    /// Builds a NAL unit from header fields and an RBSP, inserting emulation prevention bytes.
    /// - Parameters:
    ///   - nalRefIdc: 0...3 (masked to 2 bits).
    ///   - nalUnitType: the type; only its low 5 bits are used.
    ///   - rbsp: the payload after the one-byte header, emulation prevention not yet applied.
    public init(nalRefIdc: Int, nalUnitType: NALUnitType, rbsp: [UInt8]) {
        let header = UInt8((nalRefIdc & 3) << 5 | (nalUnitType.rawValue & 31))
        self.bytes = [header] + EmulationPrevention.insert(rbsp)
    }

    /// The first byte, the NAL unit header of 7.3.1.
    public var header: UInt8 { bytes.first ?? 0 }
    /// `forbidden_zero_bit`: bit 7 of the header; 0 in a conforming stream.
    public var forbiddenZeroBit: Int { Int(header >> 7) }
    /// `nal_ref_idc`: bits 6-5 of the header, 0...3.
    public var nalRefIdc: Int { Int(header >> 5) & 3 }
    /// `nal_unit_type`: bits 4-0 of the header, 0...31.
    public var nalUnitType: NALUnitType { NALUnitType(rawValue: Int(header & 0x1F)) }

    /// The number of header bytes: 1, or 4 for types 14, 20 and 21, whose header continues with
    /// `nal_unit_header_svc_extension()` / `nal_unit_header_mvc_extension()` (7.3.1).
    public var headerSize: Int {
        switch nalUnitType.rawValue {
        case 14, 20, 21: return min(4, bytes.count)
        default: return 1
        }
    }

    /// The RBSP: the bytes after the NAL unit header with emulation prevention bytes removed.
    public var rbsp: [UInt8] { EmulationPrevention.remove(Array(bytes[headerSize...])) }
}
