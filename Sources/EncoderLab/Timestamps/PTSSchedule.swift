import H264

/// A generated timestamp schedule (`--pts-schedule SPEC`): one presentation time in microseconds per source frame,
/// modelling a capture clock with jitter, frame-rate switches and the drop / duplicate / step-back logic of a screen
/// recorder. The lab still encodes every source frame; only the times handed to the encoder change.
///
/// ## Grammar
///
/// ```
/// SPEC     = PART *(";" PART)            no spaces, no empty parts, each key at most once, in any order
/// PART     = KEY "=" VALUE
/// rate=RATE                  frames per second, N or N/D, both > 0 (default: the clip's nominal rate)
/// jitter=DURATION            each time moves by a uniform offset in [-jitter, +jitter] (default 0)
/// seed=UINT64                the generator's seed, decimal 0...18446744073709551615 (default 0)
/// switch=RATE@TIME[,...]     from TIME on the rate is RATE; TIMEs strictly increasing (default none)
/// drop=PROB                  probability that the capture logic skips a slot before a frame (default 0)
/// dup=PROB                   probability that a frame repeats the previous frame's PTS (default 0)
/// back=N@TIME[,...]          at TIME the clock steps back by N slots (frame durations), N >= 1;
///                            TIMEs strictly increasing (default none)
/// DURATION = DECIMAL UNIT    UNIT is us, ms or s; a whole number of microseconds, >= 0 (250us, 2ms, 0.5ms, 1.2s)
/// PROB     = DECIMAL         from 0 to 1 inclusive (0, 0.05, 1), at most 18 decimals
/// DECIMAL  = DIGITS ["." DIGITS]   no sign, no exponent
/// ```
///
/// Example: `rate=30;jitter=2ms;seed=7;switch=60@0s,20@2s;drop=0.1;dup=0.05;back=3@1.2s`.
///
/// ## What the times are
///
/// - **Slots.** The rate in force (`rate`, replaced by each `switch` entry from its TIME on) lays out slot times:
///   a segment that starts at time T with rate R has slots at T + j/R (j = 0, 1, ...) before the next segment's
///   start, so a slot falls exactly on every switch time (the last slot before a switch may be shorter). Slot
///   times are exact and become microseconds rounded to nearest, ties away from zero (rate=30: 0, 33333, 66667,
///   100000, ...). Slot numbers below 0 (after a step back near the start) continue the first segment backwards.
/// - **Random draws.** SplitMix64 (``SplitMix64``, the lab's seeded generator: Vigna's public-domain
///   `splitmix64.c`, https://prng.di.unimi.it/splitmix64.c, after Steele, Lea and Flood, OOPSLA 2014; the state
///   advances by 0x9E3779B97F4A7C15 and each output is mixed by `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB; z ^ (z >> 31)` modulo 2^64; seed 0 first gives 0xE220A8397B1DCDAF,
///   0x6E789E6AA1B965F4, 0x06C45D188009454F, so a sequence never changes with the platform) seeded with `seed`
///   gives three 64-bit draws per frame, in frame order, always
///   (so adding one fault never changes another's pattern): u1 for the jitter, u2 for the drop, u3 for the
///   duplicate. A probability p fires when u < p · 2^64 (exact; p = 1 always fires, p = 0 never). The jitter
///   offset in µs is ⌊u1 · (2J + 1) / 2^64⌋ − J for a jitter of J µs.
/// - **Capture clock** (``generateWithCaptureClock(frames:)``'s `capture`, the `--pts-clock capture` remedy):
///   frame k's time is slot k plus its jitter offset, then raised to the previous frame's time + 1 µs when the
///   jitter would not keep it increasing. It ignores drops, duplicates and steps back.
/// - **PTS** (what the recorder's logic stamps): a slot counter starts at 0. For frame k, in this order:
///   1. every `back` entry whose TIME is at or before frame k's capture slot time (slot k, without jitter) and not
///      yet applied moves the counter back by its N;
///   2. a duplicate (frame k > 0, u3 fires): the frame gets the previous frame's PTS exactly and uses no slot;
///   3. otherwise a drop (u2 fires) skips one slot: the frame itself is kept (the lab encodes every source frame)
///      and takes the next slot, so its PTS jumps by two slots from the previous frame's;
///   4. the frame takes the counter's slot time plus its jitter offset, and the counter moves on by one. As on the
///      capture clock, the time is raised to the previous PTS + 1 µs when jitter alone would break the increase;
///      the first frame to take a slot after a step back is not raised, so the step back shows as given.
///
///   Without faults the PTS equal the capture clock. A duplicate repeats, a step back goes back, a drop jumps:
///   these are the only non-increasing or uneven steps the generator makes.
///
/// ``spec`` writes the canonical text: keys in the order above, `rate` always (resolved against the clip's
/// rate, so the text stands alone), the other keys only when not at their default, durations in the largest of
/// s, ms, us that writes them whole.
///
/// Errors: ``LabError`` `.usage` (exit 64) naming `--pts-schedule` and the offending part, for unknown or repeated
/// keys, parts without `=`, empty parts, bad numbers, rates that are not positive, durations that are not whole
/// microseconds, probabilities outside [0, 1], and times that do not strictly increase in `switch` or `back`.
public struct PTSSchedule: Sendable, Equatable {
    /// A `switch` entry: from `atMicroseconds` on, the rate is `framesPerSecond`.
    public struct RateSwitch: Sendable, Equatable {
        public var framesPerSecond: Rational
        public var atMicroseconds: Int64
    }

    /// A `back` entry: at `atMicroseconds` the clock steps back by `slots` frame durations.
    public struct BackStep: Sendable, Equatable {
        public var slots: Int64
        public var atMicroseconds: Int64
    }

    /// The rate from time 0 (until a `switch` entry at 0 or later), in frames per second.
    public var rate: Rational
    /// The largest jitter offset, in microseconds (≥ 0).
    public var jitterMicroseconds: Int64
    public var seed: UInt64
    /// Rate switches, by strictly increasing time.
    public var switches: [RateSwitch]
    /// Probability of a dropped slot before a frame, in [0, 1].
    public var dropProbability: Rational
    /// Probability of a duplicated PTS, in [0, 1].
    public var dupProbability: Rational
    /// Steps back, by strictly increasing time.
    public var backSteps: [BackStep]

    /// The keys, in canonical order.
    public static let keys = ["rate", "jitter", "seed", "switch", "drop", "dup", "back"]

    /// Parses `spec` (grammar in the type's documentation); `nominalRate` (frames per second, > 0) is the rate
    /// when `rate` is absent.
    /// - Throws: ``LabError`` `.usage` naming `--pts-schedule` and the part.
    public init(parsing spec: String, nominalRate: Rational) throws {
        rate = nominalRate
        jitterMicroseconds = 0
        seed = 0
        switches = []
        dropProbability = .zero
        dupProbability = .zero
        backSteps = []
        guard !spec.isEmpty else { throw LabError.usage("--pts-schedule: the schedule is empty (give at least one key=value part, e.g. 'rate=30')") }
        var seen: Set<String> = []
        for part in spec.split(separator: ";", omittingEmptySubsequences: false) {
            let part = String(part)
            guard !part.isEmpty else {
                throw LabError.usage("--pts-schedule: empty part in \(Self.quoted(spec)) (two ';' in a row, or one at either end)")
            }
            guard let eq = part.firstIndex(of: "=") else {
                throw Self.partError(part, "needs the form key=value")
            }
            let key = String(part[..<eq]), value = String(part[part.index(after: eq)...])
            guard Self.keys.contains(key) else {
                throw Self.partError(part, "unknown key \(Self.quoted(key)) (keys: \(Self.keys.joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw Self.partError(part, "key '\(key)' is given twice") }
            switch key {
            case "rate":
                rate = try Self.parseRate(value, part: part)
            case "jitter":
                jitterMicroseconds = try Self.parseDuration(value, part: part)
            case "seed":
                guard Self.isDigits(value), let s = UInt64(value) else {
                    throw Self.partError(part, "seed must be a whole number from 0 to 18446744073709551615")
                }
                seed = s
            case "switch":
                switches = try Self.parseList(value, part: part) { fps, time in
                    RateSwitch(framesPerSecond: try Self.parseRate(fps, part: part), atMicroseconds: time)
                }
            case "drop":
                dropProbability = try Self.parseProbability(value, part: part)
            case "dup":
                dupProbability = try Self.parseProbability(value, part: part)
            default: // "back"
                backSteps = try Self.parseList(value, part: part) { n, time in
                    guard Self.isDigits(n), let slots = Int64(n), slots >= 1, slots <= Int64(Int32.max) else {
                        throw Self.partError(part, "a step back needs a whole number of frames from 1 to 2147483647, got \(Self.quoted(n))")
                    }
                    return BackStep(slots: slots, atMicroseconds: time)
                }
            }
        }
        guard rate.numerator > 0 else {
            throw LabError.usage("--pts-schedule: the clip's nominal rate \(rate) is not a positive rate")
        }
    }

    /// The canonical text (see the type's documentation); parsing it gives an equal schedule whatever the
    /// nominal rate.
    public var spec: String {
        var parts = ["rate=\(rate)"]
        if jitterMicroseconds != 0 { parts.append("jitter=\(Self.format(microseconds: jitterMicroseconds))") }
        if seed != 0 { parts.append("seed=\(seed)") }
        if !switches.isEmpty {
            parts.append("switch=" + switches.map { "\($0.framesPerSecond)@\(Self.format(microseconds: $0.atMicroseconds))" }.joined(separator: ","))
        }
        if dropProbability != .zero { parts.append("drop=\(Self.format(probability: dropProbability))") }
        if dupProbability != .zero { parts.append("dup=\(Self.format(probability: dupProbability))") }
        if !backSteps.isEmpty {
            parts.append("back=" + backSteps.map { "\($0.slots)@\(Self.format(microseconds: $0.atMicroseconds))" }.joined(separator: ","))
        }
        return parts.joined(separator: ";")
    }

    /// The PTS in microseconds, one per source frame (`frames` ≤ 0 gives none); the same for the same schedule on
    /// every platform.
    public func generate(frames: Int) -> [Int64] {
        generateWithCaptureClock(frames: frames).pts
    }

    /// The PTS and the capture-clock time of each source frame, both in microseconds (see the type's
    /// documentation); the capture clock ignores drops, duplicates and steps back.
    public func generateWithCaptureClock(frames: Int) -> (pts: [Int64], capture: [Int64]) {
        guard frames > 0 else { return ([], []) }
        let slots = SlotClock(rate: rate, switches: switches)
        var random = SplitMix64(seed: seed)
        var pts: [Int64] = [], capture: [Int64] = []
        pts.reserveCapacity(frames)
        capture.reserveCapacity(frames)
        var counter: Int64 = 0
        var afterStepBack = false
        var nextBack = 0
        let span = UInt128(jitterMicroseconds) * 2 + 1
        for k in 0..<frames {
            let uJitter = random.next(), uDrop = random.next(), uDup = random.next()
            let offset = Int64(Int128((UInt128(uJitter) * span) >> 64) - Int128(jitterMicroseconds)) // in [-J, J]
            let slotK = slots.microseconds(slot: Int64(k))

            var c = Self.add(slotK, offset)
            if let last = capture.last { c = max(c, Self.add(last, 1)) }
            capture.append(c)

            while nextBack < backSteps.count, backSteps[nextBack].atMicroseconds <= slotK {
                counter = Int64(clamping: Int128(counter) - Int128(backSteps[nextBack].slots))
                afterStepBack = true
                nextBack += 1
            }
            if let last = pts.last, Self.fires(dupProbability, uDup) {
                pts.append(last)
                continue
            }
            if Self.fires(dropProbability, uDrop) { counter = Self.add(counter, 1) }
            var p = Self.add(slots.microseconds(slot: counter), offset)
            if let last = pts.last, !afterStepBack { p = max(p, Self.add(last, 1)) }
            afterStepBack = false
            pts.append(p)
            counter = Self.add(counter, 1)
        }
        return (pts, capture)
    }

    // MARK: - Generation helpers

    /// Slot times of the rate segments, exact until the final rounding to microseconds.
    struct SlotClock {
        struct Segment {
            var startMicroseconds: Int64
            var rate: Rational
            var firstSlot: Int64
        }
        var segments: [Segment]

        init(rate: Rational, switches: [RateSwitch]) {
            var list: [(Int64, Rational)] = [(0, rate)]
            for s in switches {
                if s.atMicroseconds == 0 { list[0] = (0, s.framesPerSecond) } else { list.append((s.atMicroseconds, s.framesPerSecond)) }
            }
            segments = []
            var first: Int64 = 0
            for (i, (start, r)) in list.enumerated() {
                segments.append(Segment(startMicroseconds: start, rate: r, firstSlot: first))
                if i + 1 < list.count {
                    // Slots j with start + j/r < nextStart: ceil((nextStart - start) · r) of them, r = N/D per second.
                    let n = Int128(list[i + 1].0 - start) * Int128(r.numerator)
                    let d = Int128(r.denominator) * 1_000_000
                    first = Int64(clamping: Int128(first) + (n + d - 1) / d)
                }
            }
        }

        /// Slot `slot`'s time in µs, rounded to nearest with ties away from zero, saturating at Int64's limits.
        func microseconds(slot: Int64) -> Int64 {
            let seg = segments.last(where: { $0.firstSlot <= slot }) ?? segments[0]
            let j = Int128(slot) - Int128(seg.firstSlot)
            let (scaled, o1) = j.multipliedReportingOverflow(by: Int128(seg.rate.denominator))
            let (n, o2) = scaled.multipliedReportingOverflow(by: 1_000_000)
            if o1 || o2 { return j < 0 ? Int64.min : Int64.max }
            let d = Int128(seg.rate.numerator)
            let q = n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d)
            return Int64(clamping: Int128(seg.startMicroseconds) + q)
        }
    }

    /// Whether a draw `u` fires with probability `p` (0 ≤ p ≤ 1): u < p · 2^64, exactly.
    static func fires(_ p: Rational, _ u: UInt64) -> Bool {
        UInt128(u) * UInt128(p.denominator) < UInt128(p.numerator) << 64
    }

    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        Int64(clamping: Int128(a) + Int128(b))
    }

    // MARK: - Parsing helpers

    static func partError(_ part: String, _ what: String) -> LabError {
        LabError.usage("--pts-schedule: part \(quoted(part)): \(what)")
    }

    /// `'text'`, with control characters shown as `?` and long text cut to 80 characters, so a message stays one line.
    static func quoted(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for s in text.unicodeScalars { scalars.append(s.value < 0x20 || s.value == 0x7F ? "?" : s) }
        let clean = String(scalars)
        return clean.count > 80 ? "'\(clean.prefix(80))...'" : "'\(clean)'"
    }

    static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// `N` or `N/D`, both whole numbers > 0 that fit in 64 bits.
    static func parseRate(_ text: String, part: String) throws -> Rational {
        let pieces = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), pieces.allSatisfy({ isDigits($0) }),
              let n = Int64(pieces[0]), let d = pieces.count == 2 ? Int64(pieces[1]) : 1, n > 0, d > 0,
              let r = try? Rational(n, d) else {
            throw partError(part, "a rate must be N or N/D frames per second with whole numbers above 0, got \(quoted(text))")
        }
        return r
    }

    /// A decimal `I[.F]` as (integer part, fraction digits), both digit strings; nil when not of that shape.
    static func splitDecimal(_ text: Substring) -> (Substring, Substring)? {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), isDigits(pieces[0]) else { return nil }
        if pieces.count == 2 { guard isDigits(pieces[1]) else { return nil } }
        return (pieces[0], pieces.count == 2 ? pieces[1] : "")
    }

    /// `DECIMAL us|ms|s` as whole microseconds, fitting in Int64.
    static func parseDuration(_ text: String, part: String) throws -> Int64 {
        let units: [(String, Int128)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000)]
        // Built only when needed: `part` may be long (a switch list of many entries).
        func bad() -> LabError { partError(part, "a duration must be a number with unit us, ms or s (e.g. 2ms, 1.2s), got \(quoted(text))") }
        guard let (unit, scale) = units.first(where: { text.hasSuffix($0.0) }),
              let (whole, rawFraction) = splitDecimal(text.dropLast(unit.count)) else { throw bad() }
        var fraction = rawFraction
        while fraction.hasSuffix("0") { fraction = fraction.dropLast() }
        guard fraction.count <= 6 else {
            throw partError(part, "duration \(quoted(text)) is not a whole number of microseconds")
        }
        guard whole.count <= 19, let w = Int128(whole), let f = Int128(fraction.isEmpty ? "0" : fraction) else {
            throw partError(part, "duration \(quoted(text)) is out of range (at most 9223372036854775807us)")
        }
        var pow: Int128 = 1
        for _ in 0..<fraction.count { pow *= 10 }
        guard (f * scale) % pow == 0 else {
            throw partError(part, "duration \(quoted(text)) is not a whole number of microseconds")
        }
        let us = w * scale + f * scale / pow
        guard us <= Int128(Int64.max) else {
            throw partError(part, "duration \(quoted(text)) is out of range (at most 9223372036854775807us)")
        }
        return Int64(us)
    }

    /// A decimal from 0 to 1 inclusive, exactly.
    static func parseProbability(_ text: String, part: String) throws -> Rational {
        guard let (whole, fraction) = splitDecimal(Substring(text)), whole.count <= 18, fraction.count <= 18,
              let w = Int64(whole), let f = Int64(fraction.isEmpty ? "0" : fraction) else {
            throw partError(part, "a probability must be a decimal from 0 to 1 with at most 18 decimals, got \(quoted(text))")
        }
        var pow: Int64 = 1
        for _ in 0..<fraction.count { pow *= 10 }
        guard w == 0 || (w == 1 && f == 0) else {
            throw partError(part, "probability \(quoted(text)) is outside 0 to 1")
        }
        return try Rational(w * pow + f, pow)
    }

    /// `ITEM@DURATION[,ITEM@DURATION...]` with strictly increasing durations; `make` turns each item.
    static func parseList<T>(_ text: String, part: String, _ make: (String, Int64) throws -> T) throws -> [T] {
        var out: [T] = []
        var previous: Int64?
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = entry.split(separator: "@", omittingEmptySubsequences: false)
            guard pieces.count == 2 else {
                throw partError(part, "each entry must be VALUE@TIME, got \(quoted(String(entry)))")
            }
            let time = try parseDuration(String(pieces[1]), part: part)
            if let previous, time <= previous {
                throw partError(part, "times must strictly increase, but \(quoted(String(pieces[1]))) is not after \(format(microseconds: previous))")
            }
            previous = time
            out.append(try make(String(pieces[0]), time))
        }
        return out
    }

    static func format(microseconds us: Int64) -> String {
        if us % 1_000_000 == 0 { return "\(us / 1_000_000)s" }
        if us % 1_000 == 0 { return "\(us / 1_000)ms" }
        return "\(us)us"
    }

    /// A probability (denominator a divisor of 10^18, as parsing makes it) as a plain decimal: 0, 0.05, 1.
    static func format(probability p: Rational) -> String {
        if p.denominator == 1 { return "\(p.numerator)" }
        var pow: Int64 = 1, digits = 0
        while pow % p.denominator != 0 && digits < 18 { pow *= 10; digits += 1 }
        let scaled = String(p.numerator * (pow / p.denominator))
        var fraction = String(repeating: "0", count: max(0, digits - scaled.count)) + scaled
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "0.\(fraction)"
    }
}
