/// A seeded, repeatable model of the network between an RTP packetizer and a depacketizer: packet loss (Bernoulli or
/// Gilbert-Elliott), duplication, reordering and jitter (docs/rtp.md, "Loss models").
///
/// **Repeatable.** Every random draw comes from ``SplitMix64`` seeded from ``Spec/seed``; each process (loss,
/// duplication, reordering, jitter) has a generator of its own (the seed mixed with a constant per process), so the
/// packets lost depend only on the loss model, the seed and the packet count: adding reordering or jitter to a spec
/// does not change which packets are lost. The same spec and packets give the same arrivals on every machine.
///
/// **Order of the processes**, per packet in sending order: lost (the loss model's draw, one per packet sent) or kept;
/// a kept packet is duplicated with probability ``Spec/duplicate`` (the copy arrives right after it); then each kept
/// packet (copies included) is held back behind the next one with probability ``Spec/reorder`` (the two swap places,
/// a packet moves at most once); then each is given an arrival time: its send time plus a delay drawn uniformly from
/// 0 to ``Spec/jitterMilliseconds``, and the packets are put in arrival order (ties kept in their order), so jitter
/// larger than the gap between packets reorders too, as a network's would.
public enum RTPChannel {
    /// How packets are lost.
    public enum LossModel: Equatable, Sendable {
        /// No loss.
        case none
        /// Each packet lost with probability `p`, independently.
        case bernoulli(p: Double)
        /// Gilbert-Elliott: a two-state Markov chain, Good and Bad, in the names of Hasslinger & Hohlfeld (and Linux
        /// netem's `loss gemodel p r 1-h 1-k`): `p` the probability of going from Good to Bad after a packet, `r` from
        /// Bad to Good; `k` the probability a packet gets through in Good, `h` in Bad. `k = 1, h = 0` is Gilbert's
        /// model (loss exactly in Bad). The chain starts in Good; per packet: the packet is lost with probability
        /// `1 - k` (Good) or `1 - h` (Bad), then the state moves.
        case gilbertElliott(p: Double, r: Double, k: Double, h: Double)

        /// The long-run loss rate: `1 - k` in Good, `1 - h` in Bad, weighted by the stationary share of each
        /// (Bad: `p / (p + r)`).
        public var expectedLossRate: Double {
            switch self {
            case .none: return 0
            case .bernoulli(let p): return p
            case .gilbertElliott(let p, let r, let k, let h):
                guard p + r > 0 else { return 1 - k }
                let bad = p / (p + r)
                return (1 - bad) * (1 - k) + bad * (1 - h)
            }
        }
    }

    /// A channel: a loss model, a seed, and the probabilities and delay of the other processes.
    public struct Spec: Equatable, Sendable {
        public var loss = LossModel.none
        public var seed: UInt64 = 1
        /// Probability that a packet is duplicated.
        public var duplicate = 0.0
        /// Probability that a packet swaps places with the one after it.
        public var reorder = 0.0
        /// The largest extra delay, milliseconds (uniform from 0).
        public var jitterMilliseconds = 0.0
        public init() {}
    }

    /// The generator of one process: the seed mixed with the process's number.
    static func generator(_ seed: UInt64, process: UInt64) -> SplitMix64 {
        var g = SplitMix64(seed: seed ^ (process &* 0xD1B5_4A32_D192_ED03))
        _ = g.next()
        return g
    }

    /// Which of `count` packets sent in order are lost (true: lost): the loss model's draws from `seed` alone.
    public static func lossPattern(_ model: LossModel, count: Int, seed: UInt64) -> [Bool] {
        var g = generator(seed, process: 1)
        switch model {
        case .none:
            return [Bool](repeating: false, count: count)
        case .bernoulli(let p):
            return (0..<count).map { _ in g.unit() < p }
        case .gilbertElliott(let p, let r, let k, let h):
            var bad = false
            return (0..<count).map { _ in
                let lost = g.unit() >= (bad ? h : k)
                bad = bad ? !(g.unit() < r) : g.unit() < p
                return lost
            }
        }
    }

    /// One packet as it arrives: the index of the packet sent (in sending order) and its arrival time.
    public struct Arrival: Equatable, Sendable {
        public var sent: Int
        public var seconds: Double
        public init(sent: Int, seconds: Double) { self.sent = sent; self.seconds = seconds }
    }

    /// What the channel did to `sendSeconds.count` packets sent at those times (seconds, in sending order).
    public struct Outcome: Equatable, Sendable {
        /// The packets that arrive, in arrival order (a duplicated packet twice).
        public var arrivals: [Arrival]
        /// Per packet sent, whether it was lost.
        public var lost: [Bool]
        public var duplicated = 0
        public var reordered = 0
    }

    /// Runs the channel over packets sent at `sendSeconds` (see the type's description for the order of the processes).
    public static func transmit(sendSeconds: [Double], spec: Spec) -> Outcome {
        let lost = lossPattern(spec.loss, count: sendSeconds.count, seed: spec.seed)
        var duplicates = generator(spec.seed, process: 2)
        var reorders = generator(spec.seed, process: 3)
        var delays = generator(spec.seed, process: 4)
        var kept: [Int] = []
        var duplicated = 0
        for (i, l) in lost.enumerated() where !l {
            kept.append(i)
            if spec.duplicate > 0, duplicates.unit() < spec.duplicate {
                kept.append(i)
                duplicated += 1
            }
        }
        var reordered = 0
        if spec.reorder > 0 {
            var k = 0
            while k + 1 < kept.count {
                if reorders.unit() < spec.reorder {
                    kept.swapAt(k, k + 1)
                    reordered += 1
                    k += 2
                } else {
                    k += 1
                }
            }
        }
        // Arrival times: each packet's send time, plus the time the packet before it in the channel's order arrived
        // when that is later (a packet held back arrives after the one that overtook it), plus its jitter.
        var arrivals: [Arrival] = []
        arrivals.reserveCapacity(kept.count)
        var previous = -Double.infinity
        for i in kept {
            let jitter = spec.jitterMilliseconds > 0 ? delays.unit() * spec.jitterMilliseconds / 1000 : 0
            let t = max(sendSeconds[i], previous) + jitter
            arrivals.append(Arrival(sent: i, seconds: t))
            previous = max(previous, sendSeconds[i])
        }
        // Stable sort by arrival time.
        let ordered = arrivals.enumerated().sorted { $0.element.seconds != $1.element.seconds ? $0.element.seconds < $1.element.seconds : $0.offset < $1.offset }.map(\.element)
        return Outcome(arrivals: ordered, lost: lost, duplicated: duplicated, reordered: reordered)
    }
}
