import Testing
@testable import H264

/// The seeded channel between packetizer and depacketizer (issue 23, item 3): the generator against SplitMix64's
/// published outputs, the loss models on hand-worked sequences and on their stationary arithmetic, repeatability, and the
/// order of duplication, reordering and jitter written out by hand.
@Suite("RTP channel: seeded loss (Bernoulli, Gilbert-Elliott), duplication, reordering, jitter")
struct RTPChannelTests {
    @Test("SplitMix64 from state 0 gives Vigna's reference outputs (splitmix64.c: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f)")
    func splitMixReference() {
        var g = SplitMix64(seed: 0)
        #expect([g.next(), g.next(), g.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        var u = SplitMix64(seed: 0)
        // unit(): the top 53 bits over 2^53.
        #expect(u.unit() == Double(UInt64(0xE220_A839_7B1D_CDAF) >> 11) / 9_007_199_254_740_992)
    }

    @Test("the same seed gives the same lost packets; another seed other ones; p 0 loses none and p 1 all")
    func repeatable() {
        let a = RTPChannel.lossPattern(.bernoulli(p: 0.1), count: 2000, seed: 7)
        let b = RTPChannel.lossPattern(.bernoulli(p: 0.1), count: 2000, seed: 7)
        let c = RTPChannel.lossPattern(.bernoulli(p: 0.1), count: 2000, seed: 8)
        #expect(a == b)
        #expect(a != c)
        #expect(RTPChannel.lossPattern(.bernoulli(p: 0), count: 100, seed: 1) == [Bool](repeating: false, count: 100))
        #expect(RTPChannel.lossPattern(.bernoulli(p: 1), count: 100, seed: 1) == [Bool](repeating: true, count: 100))
        let g = RTPChannel.LossModel.gilbertElliott(p: 0.05, r: 0.3, k: 1, h: 0)
        #expect(RTPChannel.lossPattern(g, count: 500, seed: 3) == RTPChannel.lossPattern(g, count: 500, seed: 3))
        // Adding reordering, duplication and jitter leaves the lost packets as they were.
        var plain = RTPChannel.Spec(), busy = RTPChannel.Spec()
        plain.loss = g; plain.seed = 3
        busy.loss = g; busy.seed = 3; busy.reorder = 0.2; busy.duplicate = 0.1; busy.jitterMilliseconds = 30
        let times = (0..<500).map { Double($0) / 100 }
        #expect(RTPChannel.transmit(sendSeconds: times, spec: plain).lost == RTPChannel.transmit(sendSeconds: times, spec: busy).lost)
        #expect(RTPChannel.transmit(sendSeconds: times, spec: busy) == RTPChannel.transmit(sendSeconds: times, spec: busy))
    }

    @Test("Bernoulli's loss rate over 200,000 packets is p within 5 standard deviations")
    func bernoulliRate() {
        let n = 200_000, p = 0.05
        let lost = Double(RTPChannel.lossPattern(.bernoulli(p: p), count: n, seed: 11).filter { $0 }.count)
        let sd = (Double(n) * p * (1 - p)).squareRoot()
        #expect(abs(lost - Double(n) * p) < 5 * sd, "\(lost)")
    }

    @Test("Gilbert-Elliott by hand: p 1, r 1, k 1, h 0 alternates Good (kept) and Bad (lost) from Good; p 0 never leaves Good")
    func gilbertByHand() {
        #expect(RTPChannel.lossPattern(.gilbertElliott(p: 1, r: 1, k: 1, h: 0), count: 6, seed: 5) == [false, true, false, true, false, true])
        // p 1, r 0: Good once, then Bad for ever.
        #expect(RTPChannel.lossPattern(.gilbertElliott(p: 1, r: 0, k: 1, h: 0), count: 5, seed: 5) == [false, true, true, true, true])
        #expect(RTPChannel.lossPattern(.gilbertElliott(p: 0, r: 0.5, k: 1, h: 0), count: 1000, seed: 5).allSatisfy { !$0 })
        // k 0: every packet in Good is lost too.
        #expect(RTPChannel.lossPattern(.gilbertElliott(p: 0, r: 0.5, k: 0, h: 0), count: 10, seed: 5).allSatisfy { $0 })
    }

    @Test("Gilbert-Elliott's stationary arithmetic: loss rate p/(p+r) and bursts 1/r long (k 1, h 0); expectedLossRate by hand")
    func gilbertStationary() {
        let n = 400_000, p = 0.01, r = 0.25
        let lost = RTPChannel.lossPattern(.gilbertElliott(p: p, r: r, k: 1, h: 0), count: n, seed: 2)
        let rate = Double(lost.filter { $0 }.count) / Double(n)
        #expect(abs(rate - p / (p + r)) < 0.004, "\(rate)")
        var bursts: [Int] = [], run = 0
        for l in lost {
            if l { run += 1 } else if run > 0 { bursts.append(run); run = 0 }
        }
        let mean = Double(bursts.reduce(0, +)) / Double(bursts.count)
        #expect(abs(mean - 1 / r) < 0.2, "\(mean)")
        // 0.1 -> Bad, 0.3 back: Bad a quarter of the time; 0.75 x 0.1 + 0.25 x 0.8 = 0.275.
        #expect(abs(RTPChannel.LossModel.gilbertElliott(p: 0.1, r: 0.3, k: 0.9, h: 0.2).expectedLossRate - 0.275) < 1e-12)
        #expect(RTPChannel.LossModel.bernoulli(p: 0.01).expectedLossRate == 0.01)
    }

    @Test("reorder 1 swaps each pair, duplicate 1 sends each packet twice, jitter stays within its bound; worked by hand")
    func otherProcesses() {
        let times = [0.0, 0.1, 0.2, 0.3]
        var s = RTPChannel.Spec()
        s.reorder = 1
        // [0,1,2,3] -> swap (0,1), skip, swap (2,3) -> [1,0,3,2]; a held-back packet arrives with the one that passed it.
        #expect(RTPChannel.transmit(sendSeconds: times, spec: s).arrivals ==
                [.init(sent: 1, seconds: 0.1), .init(sent: 0, seconds: 0.1), .init(sent: 3, seconds: 0.3), .init(sent: 2, seconds: 0.3)])
        #expect(RTPChannel.transmit(sendSeconds: times, spec: s).reordered == 2)
        s = RTPChannel.Spec()
        s.duplicate = 1
        let d = RTPChannel.transmit(sendSeconds: times, spec: s)
        #expect(d.arrivals.map(\.sent) == [0, 0, 1, 1, 2, 2, 3, 3])
        #expect(d.duplicated == 4)
        s = RTPChannel.Spec()
        s.jitterMilliseconds = 20
        let j = RTPChannel.transmit(sendSeconds: (0..<200).map { Double($0) }, spec: s)
        // Packets a second apart with at most 20 ms of jitter keep their order.
        #expect(j.arrivals.map(\.sent) == Array(0..<200))
        #expect(j.arrivals.allSatisfy { $0.seconds >= Double($0.sent) && $0.seconds <= Double($0.sent) + 0.020 })
        #expect(Set(j.arrivals.map { $0.seconds - Double($0.sent) }).count > 150)
    }

    @Test("the channel's output depacketized: a Bernoulli loss that hits a middle FU-A fragment drops exactly that NAL unit")
    func channelIntoDepacketizer() throws {
        // One access unit: a 3000-byte IDR slice at MTU 1000 -> 4 FU-A packets (986 payload bytes each after FU indicator and header).
        var payload = [UInt8](repeating: 0x55, count: 2999)
        payload[0] = 0x88
        let idr = try NALUnit(bytes: [0x65] + payload)
        let sps = try NALUnit(bytes: [0x67, 0x42, 0x00, 0x1E, 0x95])
        var options = RTPPacketizer.Options()
        options.mtu = 1000
        let made = try RTPPacketizer.packetize([.init(nalUnits: [sps, idr], ptsMicroseconds: 0),
                                                .init(nalUnits: [try NALUnit(bytes: [0x41, 0x9A, 0x10])], ptsMicroseconds: 40_000)], options: options)
        // Packet 0 the SPS alone (the IDR does not fit beside it in a STAP-A), 1...4 the IDR's fragments, 5 the P slice.
        #expect(made.count == 6)
        // Find a seed whose Bernoulli 0.2 pattern over 6 packets loses exactly packet 2 (the second fragment).
        var spec = RTPChannel.Spec()
        spec.loss = .bernoulli(p: 0.2)
        let seed = (UInt64(0)..<10_000).first { RTPChannel.lossPattern(spec.loss, count: 6, seed: $0) == [false, false, true, false, false, false] }
        spec.seed = try #require(seed)
        let out = RTPChannel.transmit(sendSeconds: [0, 0, 0, 0, 0, 0.04], spec: spec)
        let result = RTPDepacketizer.depacketize(out.arrivals.map { .init(packet: made[$0.sent].packet, arrivalSeconds: $0.seconds) })
        #expect(result.accessUnits.map { $0.nalUnits.map(\.bytes) } == [[sps.bytes], [[0x41, 0x9A, 0x10]]])
        #expect(result.statistics.lost == 1 && result.statistics.discardedNALUnits == 1)
    }
}
