/// A NAL unit together with where it was found.
public struct LocatedNALUnit: Hashable, Sendable {
    /// Byte offset of the NAL unit header in the buffer that was split: after the start code
    /// (Annex B) or the length prefix (AVCC).
    public let offset: Int
    /// The NAL unit (escaped bytes, header included).
    public let nal: NALUnit
    /// The NAL unit's size in bytes, without start code or length prefix.
    public var size: Int { nal.bytes.count }

    /// Pairs a NAL unit with the byte offset of its header.
    public init(offset: Int, nal: NALUnit) {
        self.offset = offset
        self.nal = nal
    }
}

/// The byte stream format of H.264 Annex B: NAL units behind `0x000001` start codes.
public enum AnnexB {
    /// What to do with bytes before the first start code that are not all zero.
    public enum LeadingData: Sendable {
        /// Throw ``H264Error/invalid(element:reason:byteOffset:)``.
        case reject
        /// Ignore them, as FFmpeg does.
        case skip
    }

    /// Splits an Annex B byte stream (B.1.1) into NAL units.
    ///
    /// - Start codes are `0x000001`; a 4-byte start code `0x00000001` is a `zero_byte` then the
    ///   3-byte start code, so both work.
    /// - A NAL unit never ends in `0x00` (7.4.1): zero bytes before a start code and at the end of
    ///   the data are `trailing_zero_8bits` / `zero_byte` and belong to no NAL unit.
    /// - Zero bytes before the first start code are `leading_zero_8bits`. Other data there is
    ///   rejected or skipped as `leadingData` says.
    /// - A start code followed by no NAL unit byte (another start code, or the end of the data) is an
    ///   empty NAL unit: skipped with a warning (``ParsePolicy/lenient``, as FFmpeg's splitter drops
    ///   them) or refused (``ParsePolicy/strict``).
    /// - Empty data gives no NAL units.
    ///
    /// - Parameters:
    ///   - data: the byte stream.
    ///   - leadingData: what to do with non-zero bytes before the first start code.
    ///   - policy: what to do with an empty NAL unit.
    ///   - warnings: gets a ``ParseWarning`` (element `nal_unit`, ``ParseWarning/byteOffset`` just after the
    ///     start code) per empty NAL unit skipped.
    /// - Returns: the NAL units in stream order, each with the byte offset of its header in `data`.
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` when non-empty data holds no
    ///   start code, when non-zero data precedes the first start code (with `.reject`), or, with the strict
    ///   policy, for an empty NAL unit.
    public static func split(_ data: [UInt8], leadingData: LeadingData = .reject, policy: ParsePolicy = .lenient,
                             warnings: inout [ParseWarning]) throws -> [LocatedNALUnit] {
        // One pass: each start code found ends the NAL unit begun at the one before (so memory holds the NAL units
        // found, never a list of every start code).
        let n = data.count
        var units = [LocatedNALUnit]()
        var empty = EmptyNALUnitTally()
        var previousStart = -1   // just after the last start code, -1 before the first
        func take(_ start: Int, _ limit: Int) throws {
            var end = limit
            while end > start && data[end - 1] == 0 { end -= 1 }
            guard end > start else {
                let problem = "start code followed by no NAL unit (empty NAL unit)"
                if policy == .strict { throw H264Error.invalid(element: "nal_unit", reason: problem, byteOffset: start) }
                empty.add(ParseWarning(element: "nal_unit", problem: problem, reason: "skipped, as FFmpeg's splitter does", byteOffset: start),
                          to: &warnings)
                return
            }
            units.append(LocatedNALUnit(offset: start, nal: try NALUnit(bytes: Array(data[start..<end]))))
        }
        var i = 0
        while i + 2 < n {
            if data[i + 2] > 1 {
                i += 3
            } else if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
                if previousStart < 0 {
                    if leadingData == .reject, let j = data[..<i].firstIndex(where: { $0 != 0 }) {
                        throw H264Error.invalid(element: "leading_zero_8bits", reason: "\(i) bytes before the first start code are not all zero (non-zero byte 0x\(String(data[j], radix: 16)) at byte \(j))", byteOffset: j)
                    }
                } else {
                    try take(previousStart, i)
                }
                previousStart = i + 3
                i += 3
            } else {
                i += 1
            }
        }
        if previousStart < 0 {
            if data.allSatisfy({ $0 == 0 }) { return [] }
            throw H264Error.invalid(element: "start_code_prefix_one_3bytes", reason: "no start code (0x000001) in \(n) bytes of data", byteOffset: 0)
        }
        try take(previousStart, n)
        return units
    }

    /// ``split(_:leadingData:policy:warnings:)`` without the warnings: empty NAL units are skipped (lenient) or
    /// refused (strict) all the same.
    public static func split(_ data: [UInt8], leadingData: LeadingData = .reject, policy: ParsePolicy = .lenient) throws -> [LocatedNALUnit] {
        var ignored: [ParseWarning] = []
        return try split(data, leadingData: leadingData, policy: policy, warnings: &ignored)
    }

    /// Writes NAL units as an Annex B byte stream, each behind a 4-byte start code `0x00000001`
    /// (a `zero_byte` plus `start_code_prefix_one_3bytes`, as B.1.2 requires for parameter sets
    /// and the first NAL unit of an access unit, and as x264 writes for every NAL unit).
    /// - Parameter nalUnits: NAL units in decode order.
    /// - Returns: the byte stream; its length is the sum of `4 + bytes.count`.
    public static func write(_ nalUnits: [NALUnit]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(nalUnits.reduce(0) { $0 + 4 + $1.bytes.count })
        for nal in nalUnits {
            out += [0, 0, 0, 1]
            out += nal.bytes
        }
        return out
    }

    /// True when `data` starts with a start code, optionally after zero bytes (`0x000001` or
    /// `0x00000001`...): the test `enclab convert` uses to detect Annex B input.
    public static func startsWithStartCode(_ data: [UInt8]) -> Bool {
        var i = 0
        while i < data.count && data[i] == 0 { i += 1 }
        return i >= 2 && i < data.count && data[i] == 1
    }
}

/// The JSON shape `enclab inspect --json` lists NAL units in: `offset` (byte offset of the NAL
/// unit header, after any start code or length prefix), `size` (bytes without start code or
/// length prefix), `nal_unit_type`, `nal_ref_idc`, `forbidden_zero_bit` (0, or 1 in a damaged or
/// non-conforming stream: 7.4.1).
extension LocatedNALUnit: Encodable {
    enum CodingKeys: String, CodingKey {
        case offset, size
        case nalUnitType = "nal_unit_type"
        case nalRefIdc = "nal_ref_idc"
        case forbiddenZeroBit = "forbidden_zero_bit"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(offset, forKey: .offset)
        try c.encode(size, forKey: .size)
        try c.encode(nal.nalUnitType.rawValue, forKey: .nalUnitType)
        try c.encode(nal.nalRefIdc, forKey: .nalRefIdc)
        try c.encode(nal.forbiddenZeroBit, forKey: .forbiddenZeroBit)
    }
}
