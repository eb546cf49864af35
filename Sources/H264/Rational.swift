/// An exact rational number of seconds or a rate: frame rates (frames per second), timebases (seconds per tick)
/// and durations. Always reduced, with a positive denominator; no floating point is involved in any arithmetic,
/// and intermediate products are computed in 128 bits.
///
/// The one conversion of a time to microseconds, and its rounding (to nearest, ties away from zero), is
/// ``microseconds(ticks:)``: the packet format (PACKETS.md) and the lab's timestamps use it.
public struct Rational: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The numerator; its sign is the number's.
    public let numerator: Int64
    /// The denominator, > 0.
    public let denominator: Int64

    /// `numerator / denominator`, reduced.
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` for a zero denominator, or when the reduced
    ///   value needs Int64.min (which has no positive counterpart).
    public init(_ numerator: Int64, _ denominator: Int64) throws {
        guard denominator != 0 else {
            throw H264Error.valueOutOfRange(element: "denominator of \(numerator)/\(denominator)", value: 0, range: 1...Int64.max)
        }
        try self.init(reducing: Int128(numerator), Int128(denominator))
    }

    /// A whole number.
    public init(_ integer: Int64) {
        numerator = integer
        denominator = 1
    }

    /// Reduces a 128-bit fraction into 64 bits.
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` when a reduced part does not fit.
    init(reducing n: Int128, _ d: Int128) throws {
        var (n, d) = d < 0 ? (-n, -d) : (n, d)
        let g = Self.gcd(n.magnitude, d.magnitude)
        if g > 1 { n /= Int128(g); d /= Int128(g) }
        guard n > Int128(Int64.min), n <= Int128(Int64.max), d <= Int128(Int64.max) else {
            throw H264Error.valueOutOfRange(element: "rational \(n)/\(d) in 64 bits", value: Int64(clamping: n), range: (Int64.min + 1)...Int64.max)
        }
        numerator = Int64(n)
        denominator = Int64(d)
    }

    static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : x
    }

    /// Parses `N`, `N/D` or `N:D` (as y4m's F tag and ffprobe's r_frame_rate write rates).
    /// - Returns: nil when the text is not of that shape or D is 0.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == ":" })
        guard (1...2).contains(parts.count), let n = Int64(parts[0]) else { return nil }
        let d = parts.count == 2 ? Int64(parts[1]) : 1
        guard let d, d != 0, let value = try? Rational(n, d) else { return nil }
        self = value
    }

    public static let zero = Rational(0)
    public static let one = Rational(1)

    /// 1 / self.
    /// - Throws: for zero.
    public var reciprocal: Rational { get throws { try Rational(denominator, numerator) } }

    public static func + (a: Rational, b: Rational) throws -> Rational {
        try Rational(reducing: Int128(a.numerator) * Int128(b.denominator) + Int128(b.numerator) * Int128(a.denominator),
                     Int128(a.denominator) * Int128(b.denominator))
    }

    public static func - (a: Rational, b: Rational) throws -> Rational {
        try Rational(reducing: Int128(a.numerator) * Int128(b.denominator) - Int128(b.numerator) * Int128(a.denominator),
                     Int128(a.denominator) * Int128(b.denominator))
    }

    public static func * (a: Rational, b: Rational) throws -> Rational {
        try Rational(reducing: Int128(a.numerator) * Int128(b.numerator), Int128(a.denominator) * Int128(b.denominator))
    }

    public static func / (a: Rational, b: Rational) throws -> Rational {
        guard b.numerator != 0 else {
            throw H264Error.valueOutOfRange(element: "divisor", value: 0, range: 1...Int64.max)
        }
        return try Rational(reducing: Int128(a.numerator) * Int128(b.denominator), Int128(a.denominator) * Int128(b.numerator))
    }

    /// `count` times self, e.g. a frame index times the frame duration.
    public func times(_ count: Int64) throws -> Rational {
        try Rational(reducing: Int128(numerator) * Int128(count), Int128(denominator))
    }

    public static func < (a: Rational, b: Rational) -> Bool {
        Int128(a.numerator) * Int128(b.denominator) < Int128(b.numerator) * Int128(a.denominator)
    }

    /// The value rounded to the nearest integer, ties away from zero.
    public var roundedToNearest: Int128 {
        Self.divideRoundingToNearest(Int128(numerator), Int128(denominator))
    }

    /// n / d rounded to nearest, ties away from zero (d > 0).
    static func divideRoundingToNearest(_ n: Int128, _ d: Int128) -> Int128 {
        n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d)
    }

    /// A time of `ticks` ticks of this timebase (seconds per tick) in microseconds, rounded to nearest with ties
    /// away from zero: µs = round(ticks · numerator · 1,000,000 ÷ denominator).
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` for a timebase ≤ 0 or a result outside Int64.
    public func microseconds(ticks: Int64) throws -> Int64 {
        guard numerator > 0 else {
            throw H264Error.valueOutOfRange(element: "timebase numerator", value: numerator, range: 1...Int64.max)
        }
        let d = Int128(denominator)
        let q = Self.divideRoundingToNearest(Int128(ticks) * Int128(numerator) * 1_000_000, d)
        guard q >= Int128(Int64.min) && q <= Int128(Int64.max) else {
            // The ticks whose microsecond value fits in 64 bits (rounded inwards).
            let maxTicks = Int64(clamping: Int128(Int64.max) * d / (Int128(numerator) * 1_000_000))
            throw H264Error.valueOutOfRange(element: "ticks of \(numerator)/\(denominator) s as 64-bit microseconds", value: ticks, range: -maxTicks...maxTicks)
        }
        return Int64(q)
    }

    /// The value as a Double, for display and plotting only (never for timing arithmetic).
    public var approximateValue: Double { Double(numerator) / Double(denominator) }

    /// `N/D`, or `N` for a whole number.
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }
}
