import H264
import Testing
@testable import EncoderLab

/// Generated timestamp schedules (`--pts-schedule`): the generator against the SplitMix64 reference, exact
/// sequences worked out by hand from the grammar's rules, and grammar errors naming the part.
@Suite("PTS schedules: SplitMix64, exact sequences, grammar errors")
struct PTSScheduleTests {
    let r30 = Rational(30)

    func schedule(_ spec: String, nominal: Rational = Rational(30)) throws -> PTSSchedule {
        try PTSSchedule(parsing: spec, nominalRate: nominal)
    }

    func usage(_ spec: String) -> String? {
        do { _ = try schedule(spec); return nil } catch let e as LabError {
            return e.kind == .usage ? e.message : "\(e.kind): \(e.message)"
        } catch { return "\(error)" }
    }

    @Test("SplitMix64 matches Vigna's splitmix64.c for seed 0")
    func splitMixReference() {
        // https://prng.di.unimi.it/splitmix64.c, x = 0: the first outputs.
        var g = SplitMix64(seed: 0)
        #expect(g.next() == 0xE220_A839_7B1D_CDAF)
        #expect(g.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(g.next() == 0x06C4_5D18_8009_454F)
        #expect(g.next() == 0xF88B_B8A8_724C_81EC)
    }

    @Test("rate=30 alone: slot k at round(k × 1,000,000 / 30) µs; the default rate is the clip's")
    func constantRate() throws {
        let expected: [Int64] = [0, 33_333, 66_667, 100_000, 133_333, 166_667]
        #expect(try schedule("rate=30").generate(frames: 6) == expected)
        #expect(try schedule("seed=5", nominal: r30).generate(frames: 6) == expected)
        // 30000/1001: 33366.67 → 33367, 66733.33 → 66733, 100100.
        #expect(try schedule("rate=30000/1001").generate(frames: 4) == [0, 33_367, 66_733, 100_100])
        let capture = try schedule("rate=30").generateWithCaptureClock(frames: 6)
        #expect(capture.pts == expected && capture.capture == expected)
        #expect(try schedule("rate=30").generate(frames: 0) == [])
    }

    @Test("ties of half a microsecond round away from zero; generation keeps times increasing by at least 1 µs")
    func halfMicrosecond() throws {
        // 2,000,000 fps: slot k at k/2 µs = 0, 0.5→1, 1, 1.5→2, 2; equal rounded slots are raised to previous + 1.
        #expect(try schedule("rate=2000000").generate(frames: 5) == [0, 1, 2, 3, 4])
        // 2,000,000/3 fps: 1.5 µs per slot: 0, 1.5→2, 3, 4.5→5.
        #expect(try schedule("rate=2000000/3").generate(frames: 4) == [0, 2, 3, 5])
    }

    @Test("switch: a slot falls on each switch time; an entry at 0s replaces the starting rate")
    func rateSwitch() throws {
        // 30 fps up to 0.1 s (slots 0, 33333, 66667; 100000 is the switch), then 60 fps from 100000.
        #expect(try schedule("rate=30;switch=60@0.1s").generate(frames: 6) == [0, 33_333, 66_667, 100_000, 116_667, 133_333])
        // 60 fps from 0 (nominal 25 unused), 20 fps from 50 ms: 0, 16667, 33333, then 50000, 100000, 150000.
        #expect(try schedule("switch=60@0s,20@50ms", nominal: Rational(25)).generate(frames: 6) == [0, 16_667, 33_333, 50_000, 100_000, 150_000])
        // A switch between slots: 10 fps to 150 ms gives slots 0 and 100000 (the 100..150 ms slot is cut short).
        #expect(try schedule("rate=10;switch=20@150ms").generate(frames: 4) == [0, 100_000, 150_000, 200_000])
    }

    @Test("back: at TIME the PTS step back N slots; the capture clock does not")
    func stepBack() throws {
        // 100 ms is frame 3's slot: the counter goes 3 → 1, so frames 3, 4, 5 take slots 1, 2, 3.
        let s = try schedule("rate=30;back=2@0.1s").generateWithCaptureClock(frames: 6)
        #expect(s.pts == [0, 33_333, 66_667, 33_333, 66_667, 100_000])
        #expect(s.capture == [0, 33_333, 66_667, 100_000, 133_333, 166_667])
        // A step back past 0 continues the first rate backwards: frame 1 takes slot 1 - 3 = -2.
        #expect(try schedule("rate=30;back=3@10ms").generate(frames: 3) == [0, -66_667, -33_333])
    }

    @Test("dup gives equal neighbours; drop gives a two-slot gap; the capture clock ignores both")
    func dupAndDrop() throws {
        let dup = try schedule("rate=30;dup=1").generateWithCaptureClock(frames: 4)
        #expect(dup.pts == [0, 0, 0, 0]) // frame 0 has no previous PTS to repeat
        #expect(dup.capture == [0, 33_333, 66_667, 100_000])
        let drop = try schedule("rate=30;drop=1").generateWithCaptureClock(frames: 4)
        #expect(drop.pts == [33_333, 100_000, 166_667, 233_333]) // slots 1, 3, 5, 7
        #expect(drop.capture == [0, 33_333, 66_667, 100_000])
        // Without faults PTS and capture clock agree, jitter included.
        let plain = try schedule("rate=30;jitter=2ms;seed=7").generateWithCaptureClock(frames: 20)
        #expect(plain.pts == plain.capture)
    }

    @Test("seeded faults: frame k uses SplitMix64 outputs 3k (jitter), 3k+1 (drop), 3k+2 (dup)")
    func seeded() throws {
        // Seed 0, jitter 1 ms: u = 0xE220A8397B1DCDAF, u/2^64 = 0.88331..., ⌊0.88331 × 2001⌋ = 1767, 1767 - 1000 = 767.
        #expect(try schedule("rate=30;jitter=1ms").generate(frames: 6) == [767, 34_275, 66_014, 100_905, 133_381, 166_704])
        // rate=25 (40 ms slots), seed 0, drop 0.5, dup 0.25.
        // Frame 0: drop draw 0x6E78... = 0.43 < 0.5 fires → slot 1 = 40000 (a dup on frame 0 has nothing to repeat).
        // Frame 1: draws 0xF88B..., 0x1B39... = 0.11 < 0.5 drop fires, 0x53CB... = 0.33 ≥ 0.25 no dup → slot 3 = 120000.
        // Later frames from the same rule (checked with a separate Python implementation of the documented rules).
        let s = try schedule("rate=25;drop=0.5;dup=0.25").generateWithCaptureClock(frames: 8)
        #expect(s.pts == [40_000, 120_000, 120_000, 200_000, 240_000, 320_000, 360_000, 400_000])
        #expect(s.capture == [0, 40_000, 80_000, 120_000, 160_000, 200_000, 240_000, 280_000])
        // Seed 7, jitter 2 ms: the first draw 0x63CBE1E459320DD7 / 2^64 = 0.38983..., ⌊0.38983 × 4001⌋ = 1559, 1559 - 2000 = -441.
        #expect(try schedule("rate=30;jitter=2ms;seed=7").generate(frames: 6) == [-441, 33_665, 66_539, 99_652, 135_005, 166_860])
        // Everything at once (from the separate implementation): 60 fps then 20 fps from 0.1 s; back 3 at 0.2 s
        // (frame 8, whose slot is 200000) drops the PTS from 198426 to 101611.
        let all = try schedule("rate=20;jitter=2ms;seed=7;switch=60@0s,20@0.1s;drop=0.1;dup=0.05;back=3@0.2s").generateWithCaptureClock(frames: 10)
        #expect(all.pts == [16_226, 33_665, 49_872, 66_319, 85_005, 100_193, 150_477, 198_426, 101_611, 149_628])
        #expect(all.capture == [-441, 16_999, 33_205, 49_652, 68_339, 83_526, 100_477, 148_426, 201_611, 249_628])
        // Same seed, same sequence, every time.
        #expect(try schedule("rate=25;drop=0.5;dup=0.25").generate(frames: 8) == s.pts)
    }

    @Test("extreme values saturate at Int64's limits instead of trapping")
    func extremes() throws {
        let huge = try schedule("rate=1/9223372036854775807;jitter=9223372036854775807us;back=2147483647@0s").generateWithCaptureClock(frames: 4)
        #expect(huge.pts.count == 4 && huge.capture.count == 4)
        // One frame per 9223372036854775807 s: slot 1 is far beyond Int64 microseconds, so it saturates.
        #expect(try schedule("rate=1/9223372036854775807").generate(frames: 3) == [0, Int64.max, Int64.max])
        // 9223372036854775807 fps: slot 1 rounds to 0 µs and is raised to 0 + 1 to keep the times increasing.
        #expect(try schedule("rate=9223372036854775807;switch=1@9223372036854775807us").generate(frames: 2) == [0, 1])
    }

    @Test("spec is canonical and parses back to an equal schedule")
    func canonical() throws {
        let s = try schedule("back=3@1.2s;dup=0.05;drop=0.10;switch=60@0s,20@2000ms;seed=7;jitter=2000us", nominal: Rational(25))
        #expect(s.spec == "rate=25;jitter=2ms;seed=7;switch=60@0s,20@2s;drop=0.1;dup=0.05;back=3@1200ms")
        #expect(try PTSSchedule(parsing: s.spec, nominalRate: Rational(50)) == s)
        #expect(try schedule("rate=60000/1001;jitter=0.25ms;drop=1").spec == "rate=60000/1001;jitter=250us;drop=1")
        #expect(try schedule("drop=0", nominal: Rational(24)).spec == "rate=24")
    }

    @Test("grammar errors name --pts-schedule and the part")
    func errors() throws {
        #expect(usage("") == "--pts-schedule: the schedule is empty (give at least one key=value part, e.g. 'rate=30')")
        #expect(usage("rate=30;") == "--pts-schedule: empty part in 'rate=30;' (two ';' in a row, or one at either end)")
        #expect(usage("rate") == "--pts-schedule: part 'rate': needs the form key=value")
        #expect(usage("fps=30") == "--pts-schedule: part 'fps=30': unknown key 'fps' (keys: rate, jitter, seed, switch, drop, dup, back)")
        #expect(usage("seed=1;seed=2") == "--pts-schedule: part 'seed=2': key 'seed' is given twice")
        #expect(usage("rate=0") == "--pts-schedule: part 'rate=0': a rate must be N or N/D frames per second with whole numbers above 0, got '0'")
        #expect(usage("rate=30/0") == "--pts-schedule: part 'rate=30/0': a rate must be N or N/D frames per second with whole numbers above 0, got '30/0'")
        #expect(usage("rate=-30") == "--pts-schedule: part 'rate=-30': a rate must be N or N/D frames per second with whole numbers above 0, got '-30'")
        #expect(usage("rate=29.97") == "--pts-schedule: part 'rate=29.97': a rate must be N or N/D frames per second with whole numbers above 0, got '29.97'")
        #expect(usage("seed=-1") == "--pts-schedule: part 'seed=-1': seed must be a whole number from 0 to 18446744073709551615")
        #expect(usage("seed=18446744073709551616") == "--pts-schedule: part 'seed=18446744073709551616': seed must be a whole number from 0 to 18446744073709551615")
        #expect(usage("jitter=2") == "--pts-schedule: part 'jitter=2': a duration must be a number with unit us, ms or s (e.g. 2ms, 1.2s), got '2'")
        #expect(usage("jitter=1e3us") == "--pts-schedule: part 'jitter=1e3us': a duration must be a number with unit us, ms or s (e.g. 2ms, 1.2s), got '1e3us'")
        #expect(usage("jitter=0.5us") == "--pts-schedule: part 'jitter=0.5us': duration '0.5us' is not a whole number of microseconds")
        #expect(usage("jitter=0.0005ms") == "--pts-schedule: part 'jitter=0.0005ms': duration '0.0005ms' is not a whole number of microseconds")
        #expect(usage("jitter=0.0000005s") == "--pts-schedule: part 'jitter=0.0000005s': duration '0.0000005s' is not a whole number of microseconds")
        #expect(try schedule("jitter=0.000001000s").jitterMicroseconds == 1)
        #expect(usage("jitter=99999999999999999999us") == "--pts-schedule: part 'jitter=99999999999999999999us': duration '99999999999999999999us' is out of range (at most 9223372036854775807us)")
        #expect(usage("jitter=9223372036855s") == "--pts-schedule: part 'jitter=9223372036855s': duration '9223372036855s' is out of range (at most 9223372036854775807us)")
        #expect(usage("drop=1.5") == "--pts-schedule: part 'drop=1.5': probability '1.5' is outside 0 to 1")
        #expect(usage("dup=1.0000000001") == "--pts-schedule: part 'dup=1.0000000001': probability '1.0000000001' is outside 0 to 1")
        #expect(usage("dup=-0.1") == "--pts-schedule: part 'dup=-0.1': a probability must be a decimal from 0 to 1 with at most 18 decimals, got '-0.1'")
        #expect(usage("drop=.5") == "--pts-schedule: part 'drop=.5': a probability must be a decimal from 0 to 1 with at most 18 decimals, got '.5'")
        #expect(usage("switch=60@1s,20@1s") == "--pts-schedule: part 'switch=60@1s,20@1s': times must strictly increase, but '1s' is not after 1s")
        #expect(usage("switch=60@2s,20@1s") == "--pts-schedule: part 'switch=60@2s,20@1s': times must strictly increase, but '1s' is not after 2s")
        #expect(usage("switch=60") == "--pts-schedule: part 'switch=60': each entry must be VALUE@TIME, got '60'")
        #expect(usage("switch=0@1s") == "--pts-schedule: part 'switch=0@1s': a rate must be N or N/D frames per second with whole numbers above 0, got '0'")
        #expect(usage("back=0@1s") == "--pts-schedule: part 'back=0@1s': a step back needs a whole number of frames from 1 to 2147483647, got '0'")
        #expect(usage("back=3@1s,2@0.5s") == "--pts-schedule: part 'back=3@1s,2@0.5s': times must strictly increase, but '0.5s' is not after 1s")
        #expect(usage("rate=30; seed=1") == "--pts-schedule: part ' seed=1': unknown key ' seed' (keys: rate, jitter, seed, switch, drop, dup, back)")
        // A control character is shown as '?', so the message stays one line.
        #expect(usage("x=1\nrm") == "--pts-schedule: part 'x=1?rm': unknown key 'x' (keys: rate, jitter, seed, switch, drop, dup, back)")
        #expect(throws: LabError(.usage, "--pts-schedule: the clip's nominal rate 0 is not a positive rate")) {
            try PTSSchedule(parsing: "seed=1", nominalRate: .zero)
        }
    }
}
