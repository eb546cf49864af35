import Testing
import H264

@Suite("exact rationals: rates, timebases, durations and the one microsecond rounding")
struct RationalTests {
    @Test("reduced, with the sign on the numerator")
    func reduced() throws {
        let r = try Rational(60000, -2002)
        #expect(r.numerator == -30000 && r.denominator == 1001)
        #expect(try Rational(0, 7) == Rational.zero)
        #expect(throws: H264Error.self) { try Rational(1, 0) }
        #expect(Rational(parsing: "30000:1001") == (try Rational(30000, 1001)))
        #expect(Rational(parsing: "25") == Rational(25))
        #expect(Rational(parsing: "25/0") == nil && Rational(parsing: "a/b") == nil && Rational(parsing: "1/2/3") == nil)
    }

    @Test("arithmetic, written out by hand")
    func arithmetic() throws {
        // 29.97 fps: one frame lasts 1001/30000 s; 9,000 frames last 9000 * 1001 / 30000 = 300.3 s = 3003/10.
        let frame = try Rational(1001, 30000)
        #expect(try frame.times(9000) == (try Rational(3003, 10)))
        // 1/3 + 1/6 = 1/2; 1/2 - 1/3 = 1/6; (2/3) * (9/4) = 3/2; (1/2) / (1/4) = 2.
        #expect(try Rational(1, 3) + Rational(1, 6) == (try Rational(1, 2)))
        #expect(try Rational(1, 2) - Rational(1, 3) == (try Rational(1, 6)))
        #expect(try Rational(2, 3) * Rational(9, 4) == (try Rational(3, 2)))
        #expect(try Rational(1, 2) / Rational(1, 4) == Rational(2))
        #expect(try Rational(30000, 1001).reciprocal == frame)
        #expect(try Rational(1, 3) < Rational(1, 2))
        // Products beyond 64 bits that reduce back are exact: (2^40/3) * (3/2^40) = 1.
        #expect(try Rational(1 << 40, 3) * Rational(3, 1 << 40) == Rational.one)
        #expect(throws: H264Error.self) { try Rational(Int64.max, 1) + Rational(1) }
    }

    @Test("microseconds: nearest, ties away from zero")
    func microseconds() throws {
        // 1 tick of 1/3 s = 333,333.33 µs -> 333,333; 2 ticks = 666,666.67 -> 666,667.
        let third = try Rational(1, 3)
        #expect(try third.microseconds(ticks: 1) == 333_333)
        #expect(try third.microseconds(ticks: 2) == 666_667)
        #expect(try third.microseconds(ticks: -2) == -666_667)
        // A tie: 1 tick of 1/2,000,000 s = 0.5 µs -> 1; -1 tick -> -1.
        let half = try Rational(1, 2_000_000)
        #expect(try half.microseconds(ticks: 1) == 1)
        #expect(try half.microseconds(ticks: -1) == -1)
        #expect(try half.microseconds(ticks: 3) == 2)
        // 29.97 fps frame 9,000: 9000 * 1001 / 30000 s = 300,300,000 µs exactly.
        #expect(try Rational(1001, 30000).microseconds(ticks: 9000) == 300_300_000)
        #expect(throws: H264Error.self) { try Rational(1).microseconds(ticks: Int64.max) }
        // The packet format's conversion is this one.
        #expect(try Packet.microseconds(ticks: 2, timebaseNumerator: 1, timebaseDenominator: 3) == 666_667)
    }
}
