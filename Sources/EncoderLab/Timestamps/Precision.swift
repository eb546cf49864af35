import Foundation

/// The precision stage a presentation time passes through before the encoder (`--pts-precision`), modelling how an
/// app or API stores a timestamp: the input and output are whole microseconds.
///
/// - `int64`: unchanged (the lab's own representation).
/// - `float32`: the integer µs count converted to a 32-bit IEEE float (round to nearest, ties to even) and back to
///   an integer: `Int64(Float(x))`, exact since every Float ≥ 2^24 is whole. At 10^12 µs the step is 2^16 = 65,536 µs.
/// - `int32`: the low 32 bits kept as a signed two's-complement value, so 2^31 µs becomes −2^31 µs.
/// - `timescale(N)`: the time rounded to the nearest 1/N s, ties away from zero (CMTimeConvertScale's default,
///   kCMTimeRoundingMethod_RoundHalfAwayFromZero), then converted back to µs, rounded to nearest, ties away from zero.
public enum PTSPrecision: Sendable, Equatable, CustomStringConvertible {
    case int64, float32, int32
    /// Ticks per second, > 0.
    case timescale(Int64)

    /// Parses the flag's value: `int64`, `float32`, `int32` or `timescale:N` with a whole N > 0.
    /// - Throws: `.usage` naming `--pts-precision` and the text (or the N) that is wrong.
    public init(parsing text: String) throws {
        switch text {
        case "int64": self = .int64
        case "float32": self = .float32
        case "int32": self = .int32
        default:
            guard text.hasPrefix("timescale:") else {
                throw LabError.usage("--pts-precision: \(TimecodeV2.quoted(text)) is not one of int64, float32, int32, timescale:N")
            }
            let number = String(text.dropFirst("timescale:".count))
            guard let n = Int64(number), n > 0 else {
                throw LabError.usage("--pts-precision: timescale \(TimecodeV2.quoted(number)) in \(TimecodeV2.quoted(text)) is not a whole number of ticks per second > 0")
            }
            self = .timescale(n)
        }
    }

    /// The flag's spelling: `int64`, `float32`, `int32`, `timescale:N`; ``init(parsing:)`` reads it back.
    public var description: String {
        switch self {
        case .int64: return "int64"
        case .float32: return "float32"
        case .int32: return "int32"
        case .timescale(let n): return "timescale:\(n)"
        }
    }

    /// A presentation time in µs after this stage, in µs.
    ///
    /// Saturates where the model's result has no Int64 value: float32 of a value that rounds to 2^63 (within
    /// 2^39 µs of Int64.max) gives Int64.max; timescale:N of a time within half a tick of the ends of Int64 is
    /// clamped to Int64.min...Int64.max.
    public func apply(_ microseconds: Int64) -> Int64 {
        switch self {
        case .int64:
            return microseconds
        case .float32:
            let f = Float(microseconds)
            return f >= Float(Int64.max) ? Int64.max : Int64(f)
        case .int32:
            return Int64(Int32(truncatingIfNeeded: microseconds))
        case .timescale(let n):
            precondition(n > 0, "timescale must be > 0")
            let ticks = Self.divideRoundingHalfAwayFromZero(Int128(microseconds) * Int128(n), 1_000_000)
            return Int64(clamping: Self.divideRoundingHalfAwayFromZero(ticks * 1_000_000, Int128(n)))
        }
    }

    /// n / d rounded to nearest, ties away from zero (d > 0).
    static func divideRoundingHalfAwayFromZero(_ n: Int128, _ d: Int128) -> Int128 {
        let q = n / d, r = n % d   // truncates toward zero; r has n's sign
        guard r.magnitude * 2 >= d.magnitude else { return q }
        return n < 0 ? q - 1 : q + 1
    }
}

/// An absolute offset added to every presentation time (`--pts-offset MICROSECONDS`), modelling host-clock
/// timestamps that grow with uptime (10^9 to 10^13 µs).
public struct PTSOffset: Sendable, Equatable, CustomStringConvertible {
    /// The offset in µs; may be negative.
    public var microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// Parses the flag's value: a whole number of microseconds, optionally signed (`1000000000000`, `-5`).
    /// - Throws: `.usage` naming `--pts-offset` and the text.
    public init(parsing text: String) throws {
        guard let value = Int64(text) else {
            throw LabError.usage("--pts-offset: \(TimecodeV2.quoted(text)) is not a whole number of microseconds within ±9223372036854775807")
        }
        microseconds = value
    }

    /// The offset in µs, as the flag takes it.
    public var description: String { "\(microseconds)" }

    /// `pts + offset`, in µs.
    /// - Throws: `.usage` naming `--pts-offset` when the sum leaves Int64.
    public func apply(_ pts: Int64) throws -> Int64 {
        let (sum, overflow) = pts.addingReportingOverflow(microseconds)
        guard !overflow else {
            throw LabError.usage("--pts-offset: \(microseconds) µs added to a PTS of \(pts) µs overflows 64-bit microseconds")
        }
        return sum
    }
}
