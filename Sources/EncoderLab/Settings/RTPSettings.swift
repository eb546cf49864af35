import Foundation
import H264

/// A run's RTP stage (`--rtp`, `--loss`; docs/rtp.md, "A run's RTP stage"): the stream packetized after the encode
/// (RFC 6184, ``RTPPacketizer``) and, with a loss model, sent through a seeded channel (``RTPChannel``),
/// depacketized and decoded by libavcodec with its error concealment. Part of the run key only when given.
public struct RTPRunSettings: Equatable, Sendable {
    /// rtph264pay's `mtu`: the largest RTP packet, its 12-byte header included (default 1400, as rtph264pay's).
    public var mtu = 1400
    public var mode = RTPPacketizer.Mode.nonInterleaved
    /// `--loss`: the channel between packetizer and depacketizer; nil for packetization alone.
    public var channel: RTPChannel.Spec?

    public init() {}

    /// `--rtp mtu=N[,mode=non-interleaved|single]` in canonical form (both keys, in that order).
    public var rtpSpec: String { "mtu=\(mtu),mode=\(mode.rawValue)" }

    /// `--loss` in canonical form: the model and its parameters in a fixed order, then the seed and the other processes
    /// when not 0 (e.g. `gilbert:p=0.01,r=0.5,k=1,h=0,seed=1`).
    public var lossSpec: String? {
        guard let c = channel else { return nil }
        func n(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) }
        var parts: [String]
        let head: String
        switch c.loss {
        case .none: head = "none"; parts = []
        case .bernoulli(let p): head = "bernoulli"; parts = ["p=\(n(p))"]
        case .gilbertElliott(let p, let r, let k, let h): head = "gilbert"; parts = ["p=\(n(p))", "r=\(n(r))", "k=\(n(k))", "h=\(n(h))"]
        }
        parts.append("seed=\(c.seed)")
        if c.duplicate > 0 { parts.append("duplicate=\(n(c.duplicate))") }
        if c.reorder > 0 { parts.append("reorder=\(n(c.reorder))") }
        if c.jitterMilliseconds > 0 { parts.append("jitter=\(n(c.jitterMilliseconds))") }
        return head + ":" + parts.joined(separator: ",")
    }

    /// `KEY=VALUE` pairs separated by commas; a key given twice or without `=` is refused.
    static func pairs(_ text: String, setting: String) throws -> [(key: String, value: String)] {
        var seen: Set<String> = []
        return try text.split(separator: ",", omittingEmptySubsequences: false).map { item in
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw LabError.usage("setting '\(setting)': '\(item)' is not KEY=VALUE (in '\(text)')")
            }
            let key = String(item[..<eq]).lowercased(), value = String(item[item.index(after: eq)...])
            guard seen.insert(key).inserted else { throw LabError.usage("setting '\(setting)': '\(key)' is given twice (in '\(text)')") }
            return (key, value)
        }
    }

    /// Takes `--rtp mtu=N[,mode=non-interleaved|single]`.
    /// - Throws: `.usage` naming the key for an unknown key, an MTU outside ``RTPPacketizer/mtuRange``, an unknown mode.
    public mutating func setRTP(_ text: String) throws {
        for (key, value) in try Self.pairs(text, setting: "rtp") {
            switch key {
            case "mtu":
                guard let m = Int(value), RTPPacketizer.mtuRange.contains(m) else {
                    throw LabError.usage("setting 'rtp': mtu must be \(RTPPacketizer.mtuRange.lowerBound)...\(RTPPacketizer.mtuRange.upperBound) bytes (the RTP packet, its 12-byte header included, as rtph264pay's mtu), got '\(value)'")
                }
                mtu = m
            case "mode":
                guard let m = RTPPacketizer.Mode(rawValue: value.lowercased()) else {
                    throw LabError.usage("setting 'rtp': mode must be non-interleaved or single, got '\(value)'")
                }
                mode = m
            default:
                throw LabError.usage("setting 'rtp': unknown key '\(key)' (mtu, mode), in '\(text)'")
            }
        }
    }

    /// Takes `--loss MODEL:KEY=VALUE,...`: `bernoulli:p=P`, `gilbert:p=P,r=R[,k=K][,h=H]` (k 1 and h 0 unless given),
    /// or `none:` (no loss, for reordering, duplication or jitter alone); then `seed=N` (default 1), `duplicate=P`,
    /// `reorder=P`, `jitter=MS`. Probabilities 0...1; jitter 0...10000 ms; each a decimal number (no sign, exponent or hex).
    /// - Throws: `.usage` naming the model or key for an unknown model or key, a missing p (or r), a value out of range.
    public mutating func setLoss(_ text: String) throws {
        let colon = text.firstIndex(of: ":")
        let model = String(colon.map { text[..<$0] } ?? text[...]).lowercased()
        let rest = colon.map { String(text[text.index(after: $0)...]) } ?? ""
        guard ["bernoulli", "gilbert", "gilbert-elliott", "none"].contains(model) else {
            throw LabError.usage("setting 'loss': unknown model '\(model)' (bernoulli, gilbert, none), in '\(text)'")
        }
        var spec = RTPChannel.Spec()
        var values: [String: Double] = [:]
        for (key, value) in rest.isEmpty ? [] : try Self.pairs(rest, setting: "loss") {
            if key == "seed" {
                guard let s = UInt64(value) else { throw LabError.usage("setting 'loss': seed must be a whole number 0...\(UInt64.max), got '\(value)'") }
                spec.seed = s
                continue
            }
            let allowed: Set<String> = switch model {
            case "bernoulli": ["p", "duplicate", "reorder", "jitter"]
            case "gilbert", "gilbert-elliott": ["p", "r", "k", "h", "duplicate", "reorder", "jitter"]
            default: ["duplicate", "reorder", "jitter"]
            }
            guard allowed.contains(key) else {
                throw LabError.usage("setting 'loss': unknown key '\(key)' for \(model) (\(allowed.sorted().joined(separator: ", ")), seed), in '\(text)'")
            }
            // A decimal number only: Swift's Double(_:) also reads 0x1 (hex, 1), nan and inf.
            guard let d = EncodeSettings.plainDecimal(value), key == "jitter" ? d <= 10_000 : d <= 1 else {
                throw LabError.usage("setting 'loss': \(key) must be \(key == "jitter" ? "milliseconds 0...10000" : "a probability 0...1"), a decimal number (e.g. \(key == "jitter" ? "20" : "0.01")), got '\(value)'")
            }
            values[key] = d
        }
        switch model {
        case "bernoulli":
            guard let p = values["p"] else { throw LabError.usage("setting 'loss': bernoulli needs p (e.g. bernoulli:p=0.01,seed=1)") }
            spec.loss = .bernoulli(p: p)
        case "gilbert", "gilbert-elliott":
            guard let p = values["p"], let r = values["r"] else {
                throw LabError.usage("setting 'loss': gilbert needs p and r (e.g. gilbert:p=0.01,r=0.5,k=1,h=0,seed=1)")
            }
            spec.loss = .gilbertElliott(p: p, r: r, k: values["k"] ?? 1, h: values["h"] ?? 0)
        case "none":
            spec.loss = .none
        default:
            throw LabError.usage("setting 'loss': unknown model '\(model)' (bernoulli, gilbert, none), in '\(text)'")
        }
        spec.duplicate = values["duplicate"] ?? 0
        spec.reorder = values["reorder"] ?? 0
        spec.jitterMilliseconds = values["jitter"] ?? 0
        channel = spec
    }
}
