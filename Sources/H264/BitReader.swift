/// Reads the bits of an RBSP (emulation prevention already removed) most significant bit first,
/// with the descriptors of H.264 clause 7.2: `u(n)`, `ue(v)`, `se(v)`, and the function
/// `more_rbsp_data()` of 7.2.
///
/// Every read takes the name of the syntax element being read, so that an error can say what was
/// being read and where. Reading past the end throws ``H264Error/endOfData(element:bitOffset:)``;
/// nothing traps on any input.
///
/// The reads with a `tolerated` reason apply the module's ``ParsePolicy``: a value outside the element's range
/// is kept with a ``ParseWarning`` in ``warnings`` (lenient) or throws (strict).
public struct BitReader: Sendable {
    /// The RBSP bytes being read.
    public let bytes: [UInt8]
    /// What the `tolerated` reads do with a value outside its range.
    public let policy: ParsePolicy
    /// The warnings of the `tolerated` reads so far (lenient policy), in reading order.
    public private(set) var warnings: [ParseWarning] = []
    /// The number of bits read so far (the position of the next bit to read), from 0 to `bitCount`.
    public private(set) var bitOffset: Int = 0
    /// The total number of bits, `bytes.count * 8`.
    public var bitCount: Int { bytes.count * 8 }
    /// The number of bits not yet read.
    public var bitsRemaining: Int { bitCount - bitOffset }
    /// Whether the position is at a byte boundary (`byte_aligned()` of 7.2).
    public var isByteAligned: Bool { bitOffset % 8 == 0 }

    /// Position of the last bit equal to 1 (the `rbsp_stop_one_bit`), or -1 when there is none.
    private let lastOneBit: Int

    /// Creates a reader positioned at the first bit of `bytes`.
    /// - Parameter policy: what the `tolerated` reads do with a value outside its range (lenient unless told).
    public init(_ bytes: [UInt8], policy: ParsePolicy = .lenient) {
        self.bytes = bytes
        self.policy = policy
        var last = -1
        var i = bytes.count - 1
        while i >= 0 {
            let b = bytes[i]
            if b != 0 {
                last = i * 8 + (7 - b.trailingZeroBitCount)
                break
            }
            i -= 1
        }
        lastOneBit = last
    }

    /// Reads one bit (`u(1)`).
    /// - Throws: ``H264Error/endOfData(element:bitOffset:)`` when no bit remains.
    public mutating func bit(_ element: String) throws -> Int {
        guard bitOffset < bitCount else { throw H264Error.endOfData(element: element, bitOffset: bitOffset) }
        let b = Int(bytes[bitOffset >> 3] >> (7 - UInt8(bitOffset & 7))) & 1
        bitOffset += 1
        return b
    }

    /// Reads a one-bit flag (`u(1)`) as a `Bool`.
    /// - Throws: ``H264Error/endOfData(element:bitOffset:)`` when no bit remains.
    public mutating func flag(_ element: String) throws -> Bool {
        try bit(element) == 1
    }

    /// Reads `n` bits as an unsigned integer (`u(n)`), most significant bit first.
    /// - Parameter n: the number of bits, 0 to 32 (0 returns 0 and reads nothing).
    /// - Throws: ``H264Error/endOfData(element:bitOffset:)`` when fewer than `n` bits remain;
    ///   ``H264Error/outOfRange(element:value:range:bitOffset:)`` when `n` is not in 0...32.
    public mutating func u(_ n: Int, _ element: String) throws -> Int {
        guard n >= 0 && n <= 32 else {
            throw H264Error.outOfRange(element: "bit count of \(element)", value: Int64(n), range: 0...32, bitOffset: bitOffset)
        }
        guard bitsRemaining >= n else { throw H264Error.endOfData(element: element, bitOffset: bitOffset) }
        var v = 0
        for _ in 0..<n {
            v = (v << 1) | (Int(bytes[bitOffset >> 3] >> (7 - UInt8(bitOffset & 7))) & 1)
            bitOffset += 1
        }
        return v
    }

    /// Reads an unsigned exp-Golomb code (`ue(v)`, clause 9.1).
    ///
    /// The largest value representable with 32-bit `codeNum` is 2^32 − 2 (31 leading zero bits);
    /// a code with 32 or more leading zero bits is rejected.
    /// - Returns: a value in 0 ... 4,294,967,294.
    /// - Throws: ``H264Error/endOfData(element:bitOffset:)`` at the end of data;
    ///   ``H264Error/invalid(element:reason:byteOffset:)`` for more than 31 leading zero bits.
    public mutating func ue(_ element: String) throws -> Int {
        let start = bitOffset
        var leadingZeros = 0
        while true {
            guard bitOffset < bitCount else { throw H264Error.endOfData(element: element, bitOffset: start) }
            let b = try bit(element)
            if b == 1 { break }
            leadingZeros += 1
            if leadingZeros > 31 {
                throw H264Error.invalid(element: element, reason: "exp-Golomb code with more than 31 leading zero bits (at bit \(start))", byteOffset: start / 8)
            }
        }
        guard bitsRemaining >= leadingZeros else { throw H264Error.endOfData(element: element, bitOffset: start) }
        let suffix = try u(leadingZeros, element)
        return (1 << leadingZeros) - 1 + suffix
    }

    /// Reads a signed exp-Golomb code (`se(v)`, clause 9.1.1): codeNum k maps to (−1)^(k+1) · Ceil(k ÷ 2).
    /// - Returns: a value in −2,147,483,647 ... 2,147,483,647.
    /// - Throws: as ``ue(_:)``.
    public mutating func se(_ element: String) throws -> Int {
        let k = try ue(element)
        return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
    }

    /// Reads `ue(v)` and checks it against `range`.
    /// - Throws: as ``ue(_:)``, and ``H264Error/outOfRange(element:value:range:bitOffset:)``
    ///   naming the element, its range and the bit offset where the code started.
    public mutating func ue(_ element: String, _ range: ClosedRange<Int>) throws -> Int {
        let start = bitOffset
        return try Self.inRange(try ue(element), element, range, start: start)
    }

    /// Reads `se(v)` and checks it against `range`.
    /// - Throws: as ``se(_:)``, and ``H264Error/outOfRange(element:value:range:bitOffset:)``.
    public mutating func se(_ element: String, _ range: ClosedRange<Int>) throws -> Int {
        let start = bitOffset
        return try Self.inRange(try se(element), element, range, start: start)
    }

    /// Reads `u(n)` and checks it against `range`.
    public mutating func u(_ n: Int, _ element: String, _ range: ClosedRange<Int>) throws -> Int {
        let start = bitOffset
        return try Self.inRange(try u(n, element), element, range, start: start)
    }

    /// `v`, the value of `element` read from bit `start`, when `range` holds it.
    /// - Throws: ``H264Error/outOfRange(element:value:range:bitOffset:)`` naming the element, its range and `start`.
    private static func inRange(_ v: Int, _ element: String, _ range: ClosedRange<Int>, start: Int) throws -> Int {
        guard range.contains(v) else {
            throw H264Error.outOfRange(element: element, value: Int64(v), range: Int64(range.lowerBound)...Int64(range.upperBound), bitOffset: start)
        }
        return v
    }

    /// Reads `ue(v)` for an element whose value outside `range` a decoder can live with (``ParsePolicy``).
    /// - Parameters:
    ///   - range: the range the current edition allows.
    ///   - reason: why a value outside it is accepted, for the warning.
    /// - Returns: the value read, inside `range` or (lenient) not.
    /// - Throws: as ``ue(_:)``; with the strict policy, ``H264Error/outOfRange(element:value:range:bitOffset:)``
    ///   as ``ue(_:_:)`` does.
    public mutating func ue(_ element: String, _ range: ClosedRange<Int>, tolerated reason: String) throws -> Int {
        let start = bitOffset
        let v = try ue(element)
        try tolerate(element, v, range, reason, start)
        return v
    }

    /// Reads `u(n)` for an element whose value outside `range` a decoder can live with; see
    /// ``ue(_:_:tolerated:)``.
    public mutating func u(_ n: Int, _ element: String, _ range: ClosedRange<Int>, tolerated reason: String) throws -> Int {
        let start = bitOffset
        let v = try u(n, element)
        try tolerate(element, v, range, reason, start)
        return v
    }

    private mutating func tolerate(_ element: String, _ v: Int, _ range: ClosedRange<Int>, _ reason: String, _ start: Int) throws {
        guard !range.contains(v) else { return }
        let allowed = Int64(range.lowerBound)...Int64(range.upperBound)
        if policy == .strict {
            throw H264Error.outOfRange(element: element, value: Int64(v), range: allowed, bitOffset: start)
        }
        warnings.append(ParseWarning(element: element, value: Int64(v), allowedRange: allowed, reason: reason, bitOffset: start))
    }

    /// Skips `n` bits.
    /// - Throws: ``H264Error/endOfData(element:bitOffset:)`` when fewer than `n` bits remain.
    public mutating func skip(_ n: Int, _ element: String) throws {
        guard n >= 0, bitsRemaining >= n else { throw H264Error.endOfData(element: element, bitOffset: bitOffset) }
        bitOffset += n
    }

    /// `rbsp_trailing_bits()` of 7.3.2.11 after the last syntax element of a parameter set: the
    /// `rbsp_stop_one_bit` (the last bit equal to 1 in the RBSP) must be the next bit, followed by nothing but zero
    /// bits. Two ways to break it are tolerated (``ParsePolicy``), as FFmpeg's decoder reads such a set: no stop bit at
    /// all (no bit equal to 1 from here on: an RTP stack or muxer that cut the trailing byte), and data after the
    /// stop bit (a bit equal to 1 beyond this position: bytes appended to the NAL unit, or two NAL units packed as
    /// one). Zero bytes after the trailing bits are not data (FFmpeg drops them too).
    /// - Parameter what: the syntax structure being ended (`seq_parameter_set_rbsp`), for the message.
    /// - Throws: with the strict policy, ``H264Error/invalid(element:reason:byteOffset:)`` (element
    ///   `rbsp_trailing_bits`, the byte offset of this position in the RBSP); lenient, a ``ParseWarning`` is kept.
    public mutating func rbspTrailingBits(after what: String) throws {
        guard bitOffset != lastOneBit else { return }
        let problem: String
        let reason: String
        if bitOffset > lastOneBit {
            problem = "no rbsp_stop_one_bit after \(what): no bit equal to 1 follows its last syntax element"
            reason = "every syntax element was read; the stop bit is not needed to decode"
        } else {
            let after = lastOneBit / 8 - bitOffset / 8
            problem = "data after the end of \(what): its rbsp_stop_one_bit is due here, and bits equal to 1 follow up to bit \(lastOneBit)"
                + (after > 0 ? " (\(after) byte\(after == 1 ? "" : "s") after the byte where the stop bit is due)" : "")
            reason = "the data after the last syntax element is ignored, as FFmpeg's decoder does"
        }
        if policy == .strict {
            throw H264Error.invalid(element: "rbsp_trailing_bits", reason: "\(problem) (at bit \(bitOffset))", byteOffset: bitOffset / 8)
        }
        warnings.append(ParseWarning(element: "rbsp_trailing_bits", problem: problem, reason: reason, bitOffset: bitOffset))
    }

    /// `more_rbsp_data()` of clause 7.2: true when there is more data before the
    /// `rbsp_stop_one_bit` (the last bit equal to 1 in the RBSP). False when no bit equal to 1
    /// remains after the current position.
    public func moreRBSPData() -> Bool {
        bitOffset < lastOneBit
    }
}
