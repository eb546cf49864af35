/// The length-prefixed NAL unit format of ISO/IEC 14496-15 (5.3.4.2, "AVCC"): each NAL unit is
/// preceded by its size as a big-endian unsigned integer of 1, 2 or 4 bytes.
public enum AVCC {
    /// Splits one AVCC sample (or a whole length-prefixed stream) into NAL units.
    ///
    /// A length of 0 is an empty NAL unit: skipped with a warning (``ParsePolicy/lenient``, as FFmpeg
    /// drops them) or refused (``ParsePolicy/strict``). A start code inside the bytes behind one length is NAL units
    /// packed as Annex B: split at the start codes with a warning, or refused (``splitAtStartCodes(_:_:policy:warnings:)``).
    /// - Parameters:
    ///   - data: the sample bytes.
    ///   - lengthSize: the size of each length prefix in bytes: 1, 2 or 4
    ///     (`lengthSizeMinusOne + 1` from the avcC record).
    ///   - policy: what to do with a length of 0, and with start codes behind one length.
    ///   - warnings: gets a ``ParseWarning`` (element `NALUnitLength`, ``ParseWarning/byteOffset`` of the
    ///     length prefix) per empty NAL unit skipped, and one (element `NALUnit`, the byte offset of the first start
    ///     code) per length whose bytes were split at start codes.
    /// - Returns: the NAL units, each with the byte offset of its header (after the prefix).
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` for another
    ///   `lengthSize`; ``H264Error/truncated(element:byteOffset:needed:available:)`` when a prefix
    ///   or a NAL unit runs past the end; with the strict policy, ``H264Error/invalid(element:reason:byteOffset:)``
    ///   for a length of 0 or a start code behind a length.
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
            units += try splitAtStartCodes(data, start..<start + length, policy: policy, warnings: &warnings)
            p = start + length
        }
        return units
    }

    /// The NAL unit behind one length, or the NAL units packed behind it at start codes.
    ///
    /// A start code (0x000001) inside a NAL unit is never legal (H.264 7.4.1: no three-byte sequence 0x000000,
    /// 0x000001 or 0x000002 at any byte-aligned position; emulation prevention keeps them out of the payload). Behind
    /// one length it means NAL units packed as Annex B (a camera or encoder that writes SPS, start code, PPS, start
    /// code, IDR slice behind one length, or a length before an Annex B NAL unit): with the lenient policy the bytes
    /// are split at each start code as FFmpeg's splitter does (zero bytes before a start code, a 4-byte start code's
    /// `zero_byte`, belong to no NAL unit; empty parts are dropped), with one ``ParseWarning`` (element `NALUnit`,
    /// the byte offset of the first start code); with the strict policy it is refused.
    static func splitAtStartCodes(_ data: [UInt8], _ range: Range<Int>, policy: ParsePolicy,
                                  warnings: inout [ParseWarning]) throws -> [LocatedNALUnit] {
        var cuts: [Int] = []   // where each start code's 0x000001 begins
        var i = range.lowerBound
        while i + 2 < range.upperBound {
            if data[i + 2] > 1 {
                i += 3
            } else if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
                cuts.append(i)
                i += 3
            } else {
                i += 1
            }
        }
        guard let first = cuts.first else {
            return [LocatedNALUnit(offset: range.lowerBound, nal: try NALUnit(bytes: Array(data[range])))]
        }
        var units: [LocatedNALUnit] = []
        let starts = [range.lowerBound] + cuts.map { $0 + 3 }
        for (k, s) in starts.enumerated() {
            var e = k < cuts.count ? cuts[k] : range.upperBound
            if k < cuts.count { while e > s && data[e - 1] == 0 { e -= 1 } }
            if e > s { units.append(LocatedNALUnit(offset: s, nal: try NALUnit(bytes: Array(data[s..<e])))) }
        }
        let problem = "start code 0x000001 inside a NAL unit of \(range.count) bytes (\(cuts.count) start code\(cuts.count == 1 ? "" : "s"); "
            + "H.264 7.4.1 allows none): NAL units packed as Annex B behind one length"
        if policy == .strict { throw H264Error.invalid(element: "NALUnit", reason: problem, byteOffset: first) }
        warnings.append(ParseWarning(element: "NALUnit", problem: problem,
                                     reason: "split at its start codes into \(units.count) NAL unit\(units.count == 1 ? "" : "s"), as FFmpeg does",
                                     byteOffset: first))
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
