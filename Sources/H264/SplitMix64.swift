/// SplitMix64 (Steele, Lea, Flood 2014; the generator `java.util.SplittableRandom` uses): a 64-bit state advanced by
/// 0x9E3779B97F4A7C15 and mixed. Small, fast, and the same sequence everywhere: the lab's one seeded generator
/// (``RTPChannel``'s loss, duplication, reordering and jitter; EncoderLab's synthetic clips and PTS schedules).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number uniformly in [0, 1): the top 53 bits of the next value.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
