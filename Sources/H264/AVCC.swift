/// The length-prefixed NAL unit format of ISO/IEC 14496-15 (5.3.4.2, "AVCC"): each NAL unit is
/// preceded by its size as a big-endian unsigned integer of 1, 2 or 4 bytes.
public enum AVCC {
    /// Splits one AVCC sample (or a whole length-prefixed stream) into NAL units.
    ///
    /// A length of 0 is an empty NAL unit: skipped with a warning (``ParsePolicy/lenient``, as FFmpeg
    /// drops them) or refused (``ParsePolicy/strict``).
    /// - Parameters:
    ///   - data: the sample bytes.
    ///   - lengthSize: the size of each length prefix in bytes: 1, 2 or 4
    ///     (`lengthSizeMinusOne + 1` from the avcC record).
    ///   - policy: what to do with a length of 0.
    ///   - warnings: gets a ``ParseWarning`` (element `NALUnitLength`, ``ParseWarning/byteOffset`` of the
    ///     length prefix) per empty NAL unit skipped.
    /// - Returns: the NAL units, each with the byte offset of its header (after the prefix).
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` for another
    ///   `lengthSize`; ``H264Error/truncated(element:byteOffset:needed:available:)`` when a prefix
    ///   or a NAL unit runs past the end; with the strict policy, ``H264Error/invalid(element:reason:byteOffset:)``
    ///   for a length of 0.
    public static func split(_ data: [UInt8], lengthSize: Int = 4, policy: ParsePolicy = .lenient,
                             warnings: inout [ParseWarning]) throws -> [LocatedNALUnit] {
        try checkLengthSize(lengthSize)
        var units = [LocatedNALUnit]()
        var empty = EmptyNALUnitTally()
        var p = 0
        while p < data.count {
            guard data.count - p >= lengthSize else {
                throw H264Error.truncated(element: "NALUnitLength", byteOffset: p, needed: lengthSize, available: data.count - p)
            }
            var length = 0
            for k in 0..<lengthSize { length = length << 8 | Int(data[p + k]) }
            let start = p + lengthSize
            guard length > 0 else {
                let problem = "length 0 (a NAL unit has at least its header byte)"
                if policy == .strict { throw H264Error.invalid(element: "NALUnitLength", reason: problem, byteOffset: p) }
                empty.add(ParseWarning(element: "NALUnitLength", problem: problem, reason: "skipped, as FFmpeg does", byteOffset: p), to: &warnings)
                p = start
                continue
            }
            guard data.count - start >= length else {
                throw H264Error.truncated(element: "NALUnit", byteOffset: start, needed: length, available: data.count - start)
            }
            units.append(LocatedNALUnit(offset: start, nal: try NALUnit(bytes: Array(data[start..<start + length]))))
            p = start + length
        }
        return units
    }

    /// ``split(_:lengthSize:policy:warnings:)`` without the warnings: a length of 0 is skipped (lenient) or
    /// refused (strict) all the same.
    public static func split(_ data: [UInt8], lengthSize: Int = 4, policy: ParsePolicy = .lenient) throws -> [LocatedNALUnit] {
        var ignored: [ParseWarning] = []
        return try split(data, lengthSize: lengthSize, policy: policy, warnings: &ignored)
    }

    /// Writes NAL units each behind a big-endian length prefix of `lengthSize` bytes.
    /// - Parameters:
    ///   - nalUnits: NAL units in decode order.
    ///   - lengthSize: 1, 2 or 4.
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` for another `lengthSize`;
    ///   ``H264Error/valueOutOfRange(element:value:range:)`` when a NAL unit is too long
    ///   for it (over 255, 65,535 or 4,294,967,295 bytes); the element names the NAL unit's index.
    public static func write(_ nalUnits: [NALUnit], lengthSize: Int = 4) throws -> [UInt8] {
        try checkLengthSize(lengthSize)
        let maxLength = (1 << (8 * lengthSize)) - 1
        var out = [UInt8]()
        out.reserveCapacity(nalUnits.reduce(0) { $0 + lengthSize + $1.bytes.count })
        for (index, nal) in nalUnits.enumerated() {
            let length = nal.bytes.count
            guard length <= maxLength else {
                throw H264Error.valueOutOfRange(element: "NALUnitLength of NAL unit \(index)", value: Int64(length), range: 1...Int64(maxLength))
            }
            for k in stride(from: lengthSize - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: length >> (8 * k))) }
            out += nal.bytes
        }
        return out
    }

    static func checkLengthSize(_ lengthSize: Int) throws {
        guard lengthSize == 1 || lengthSize == 2 || lengthSize == 4 else {
            throw H264Error.invalid(element: "lengthSize", reason: "must be 1, 2 or 4 bytes: \(lengthSize)", byteOffset: 0)
        }
    }
}
