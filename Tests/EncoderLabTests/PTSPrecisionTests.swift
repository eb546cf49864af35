import Testing
@testable import EncoderLab

@Suite("the PTS precision stage and offset, against values computed by hand")
struct PTSPrecisionTests {
    @Test("parsing the flag; bad values are 64 naming --pts-precision and the text")
    func parsing() throws {
        #expect(try PTSPrecision(parsing: "int64") == .int64)
        #expect(try PTSPrecision(parsing: "float32") == .float32)
        #expect(try PTSPrecision(parsing: "int32") == .int32)
        #expect(try PTSPrecision(parsing: "timescale:90000") == .timescale(90000))
        for p in [PTSPrecision.int64, .float32, .int32, .timescale(600)] {
            #expect(try PTSPrecision(parsing: p.description) == p)
        }
        #expect(throws: LabError(.usage, "--pts-precision: 'float64' is not one of int64, float32, int32, timescale:N")) {
            try PTSPrecision(parsing: "float64")
        }
        #expect(throws: LabError(.usage, "--pts-precision: 'Int64' is not one of int64, float32, int32, timescale:N")) {
            try PTSPrecision(parsing: "Int64")
        }
        for n in ["0", "-3", "", "abc", "1.5", "99999999999999999999"] {
            #expect(throws: LabError(.usage, "--pts-precision: timescale '\(n)' in 'timescale:\(n)' is not a whole number of ticks per second > 0")) {
                try PTSPrecision(parsing: "timescale:\(n)")
            }
        }
    }

    @Test("float32 at 10^12 µs steps by 2^16 = 65,536 µs; neighbouring inputs collapse")
    func float32() {
        // 2^39 ≤ 10^12 < 2^40, so a Float's 24-bit significand steps by 2^(39-23) = 65,536 µs there.
        // 10^12 = 15,258,789 · 65,536 + 4,096, so 10^12 -> 15,258,789 · 65,536 = 999,999,995,904.
        #expect(PTSPrecision.float32.apply(1_000_000_000_000) == 999_999_995_904)
        // Half a frame later (+16,667 µs: 4,096 + 16,667 = 20,763 < 32,768) the same value: two inputs collapse.
        #expect(PTSPrecision.float32.apply(1_000_000_016_667) == 999_999_995_904)
        // One frame later (+33,367: 4,096 + 33,367 = 37,463 > 32,768) the next step up, 65,536 µs further.
        #expect(PTSPrecision.float32.apply(1_000_000_033_367) == 1_000_000_061_440)
        // Ties go to the even significand: 15,258,789.5 -> 15,258,790; 15,258,788.5 -> 15,258,788.
        #expect(PTSPrecision.float32.apply(999_999_995_904 + 32_768) == 1_000_000_061_440)
        #expect(PTSPrecision.float32.apply(999_999_995_904 - 32_768) == 999_999_930_368)
        // Below 2^24 every integer is exact.
        #expect(PTSPrecision.float32.apply(16_777_215) == 16_777_215)
        #expect(PTSPrecision.float32.apply(16_777_217) == 16_777_216)
        // Int64.max rounds to 2^63, which saturates; Int64.min = -2^63 is exact.
        #expect(PTSPrecision.float32.apply(Int64.max) == Int64.max)
        #expect(PTSPrecision.float32.apply(Int64.min) == Int64.min)
    }

    @Test("int32 keeps the low 32 bits, signed: wraps at 2^31")
    func int32() {
        #expect(PTSPrecision.int32.apply(2_147_483_647) == 2_147_483_647)
        #expect(PTSPrecision.int32.apply(2_147_483_648) == -2_147_483_648)
        #expect(PTSPrecision.int32.apply(4_294_967_296 + 5) == 5)
        #expect(PTSPrecision.int32.apply(-1) == -1)
        // 10^12 = 232 · 2^32 + 3,567,587,328, and 3,567,587,328 - 2^32 = -727,379,968.
        #expect(PTSPrecision.int32.apply(1_000_000_000_000) == -727_379_968)
    }

    @Test("timescale:N rounds to the nearest 1/N s, half away from zero, and back to µs the same way")
    func timescale() {
        // 33,367 µs at 1/1000 s is 33.367 units -> 33 -> 33,000 µs.
        #expect(PTSPrecision.timescale(1000).apply(33_367) == 33_000)
        // 33,367 µs at 1/30000 s is 1001.01 units -> 1001 -> 1001/30000 s = 33,366.67 µs -> 33,367 µs.
        #expect(PTSPrecision.timescale(30000).apply(33_367) == 33_367)
        // 0.5 s at 1/3 s is 1.5 units (a tie) -> 2 -> 2/3 s = 666,666.67 µs -> 666,667 µs; negative mirrors it.
        #expect(PTSPrecision.timescale(3).apply(500_000) == 666_667)
        #expect(PTSPrecision.timescale(3).apply(-500_000) == -666_667)
        // 1/600 s (QuickTime's): 33,367 µs is 20.0202 units -> 20 -> 33,333.33 µs -> 33,333 µs.
        #expect(PTSPrecision.timescale(600).apply(33_367) == 33_333)
        // 125,000 µs at 1/4 s is 0.5 units (a tie) -> 1 -> 250,000 µs; 1/2,000,000 s ticks: 1 µs -> 2 ticks -> 1 µs.
        #expect(PTSPrecision.timescale(4).apply(125_000) == 250_000)
        #expect(PTSPrecision.timescale(2_000_000).apply(1) == 1)
        // Near Int64.max at 1 s ticks: 9,223,372,036,854.775807 s -> 9,223,372,036,855 s, beyond Int64 µs: clamped.
        #expect(PTSPrecision.timescale(1).apply(Int64.max) == Int64.max)
        #expect(PTSPrecision.int64.apply(Int64.min) == Int64.min)
    }

    @Test("the offset adds µs; overflow and a bad value are 64 naming --pts-offset")
    func offset() throws {
        let offset = try PTSOffset(parsing: "1000000000000")
        #expect(offset.microseconds == 1_000_000_000_000)
        #expect(try offset.apply(33_367) == 1_000_000_033_367)
        #expect(try PTSOffset(parsing: "-5").apply(3) == -2)
        // An offset of 10^12 then float32: frames 0 and 16,667 µs collapse onto one PTS.
        #expect(PTSPrecision.float32.apply(try offset.apply(0)) == PTSPrecision.float32.apply(try offset.apply(16_667)))
        #expect(throws: LabError(.usage, "--pts-offset: 2 µs added to a PTS of 9223372036854775806 µs overflows 64-bit microseconds")) {
            try PTSOffset(microseconds: 2).apply(Int64.max - 1)
        }
        for bad in ["1e12", "", "10^12", "12 ", "9223372036854775808"] {
            #expect(throws: LabError(.usage, "--pts-offset: '\(bad)' is not a whole number of microseconds within ±9223372036854775807")) {
                try PTSOffset(parsing: bad)
            }
        }
    }
}
