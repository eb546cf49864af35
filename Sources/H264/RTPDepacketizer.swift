/// RTP depacketization of H.264 in single NAL unit and non-interleaved mode (RFC 6184 5.6, 5.7.1, 5.8), with the
/// receiver statistics of RFC 3550 (6.4.1, A.1, A.8).
///
/// **Order.** Packets are taken in arrival order and given extended sequence numbers (the 16-bit number extended by
/// its wraps, RFC 3550 A.1: each packet's number is placed within 32,768 of the highest one so far); a second packet
/// with an extended number already seen is a duplicate and dropped; the rest are put in extended sequence number order
/// before their payloads are read, so reordering and the 16-bit wrap cost nothing.
///
/// **Payloads.** NAL unit types 1...23 are single NAL unit packets; 24 (STAP-A) is split at its 16-bit sizes; 28 (FU-A)
/// is reassembled: the NAL unit header is the FU indicator's F and NRI with the FU header's type (5.8: masked, never the
/// whole indicator byte), the payload the fragments' bytes in order from the one with S to the one with E. A NAL unit
/// one of whose fragments is missing (a sequence number gap inside it, no start fragment, no end fragment before the next
/// start or the end) is discarded whole, as 5.8 says a receiver SHOULD. STAP-B, MTAP16, MTAP24 and FU-B (25, 26, 27, 29)
/// belong to interleaved mode and types 0, 30 and 31 are undefined: such packets are dropped with a warning, as is a
/// STAP-A whose sizes run past its end.
///
/// **Access units.** Consecutive NAL units of one RTP timestamp form an access unit; a packet with the marker bit set
/// ends one too. Each access unit's PTS is its timestamp extended across 32-bit wraps (each placed within 2^31 of the
/// one before), less the first access unit's, in microseconds (`round(ticks × 100 / 9)`).
///
/// **Incomplete access units**: one whose first slice (in decode order) has first_mb_in_slice other than 0 (its first
/// slice is missing), one that lost a NAL unit to a missing fragment, one with a sequence gap between two of its
/// packets, and one whose last packet before a gap lacks the marker bit (its end is missing). A slice lost in the middle
/// of a picture is seen from the sequence numbers; first_mb_in_slice alone cannot show it without decoding the slices.
public enum RTPDepacketizer {
    /// One packet as captured.
    public struct Received: Sendable {
        public var packet: RTPPacket
        /// Arrival time in seconds (the capture's record time), for the jitter.
        public var arrivalSeconds: Double
        public init(packet: RTPPacket, arrivalSeconds: Double) {
            self.packet = packet
            self.arrivalSeconds = arrivalSeconds
        }
    }

    /// One access unit rebuilt.
    public struct AccessUnitOutput: Sendable, Equatable {
        /// Its NAL units in decode order (escaped bytes, header included).
        public var nalUnits: [NALUnit]
        /// Its RTP timestamp as sent.
        public var rtpTimestamp: UInt32
        /// Its timestamp extended across 32-bit wraps, in 90 kHz ticks (the first access unit's as sent).
        public var extendedTimestamp: Int64
        /// Presentation time in microseconds from the first access unit's.
        public var ptsMicroseconds: Int64
        /// Why it is incomplete; empty when nothing shows it is.
        public var incomplete: [String]
    }

    /// RFC 3550's receiver counts.
    public struct Statistics: Sendable, Equatable {
        /// Packets taken in (duplicates included).
        public var received = 0
        /// Highest extended sequence number - lowest + 1 (RFC 3550 A.3's "expected").
        public var expected = 0
        /// Expected less the distinct packets received (never negative here: duplicates are counted apart).
        public var lost = 0
        /// Packets whose extended sequence number was already received.
        public var duplicates = 0
        /// Packets that arrived after one with a higher extended sequence number.
        public var reordered = 0
        /// RFC 3550 6.4.1's interarrival jitter after the last packet, in timestamp units (90 kHz ticks).
        public var jitterTicks = 0.0
        /// NAL units discarded because a fragment was missing.
        public var discardedNALUnits = 0
        public init() {}
        /// Jitter in milliseconds.
        public var jitterMilliseconds: Double { jitterTicks / 90 }
    }

    public struct Result: Sendable {
        public var accessUnits: [AccessUnitOutput]
        public var statistics: Statistics
        /// One line per packet or NAL unit dropped and why, naming its sequence number.
        public var warnings: [String]
    }

    /// RFC 3550 6.4.1 / A.8: `J += (|D| - J) / 16` per packet in arrival order, `D` the difference of two
    /// consecutive packets' transit times `arrival × clockRate - timestamp` (timestamps extended across the wrap).
    /// - Parameters:
    ///   - arrivals: arrival times in seconds and extended RTP timestamps, in arrival order.
    ///   - clockRate: timestamp units per second (90,000 for H.264).
    /// - Returns: the jitter after the last packet, in timestamp units; 0 for fewer than two packets.
    public static func interarrivalJitter(_ arrivals: [(seconds: Double, timestamp: Int64)], clockRate: Double = 90_000) -> Double {
        var jitter = 0.0
        var previousTransit: Double?
        for a in arrivals {
            let transit = a.seconds * clockRate - Double(a.timestamp)
            if let p = previousTransit { jitter += (abs(transit - p) - jitter) / 16 }
            previousTransit = transit
        }
        return jitter
    }

    /// Extends 16-bit sequence numbers in arrival order (RFC 3550 A.1): each is placed within 32,768 of the highest
    /// extended number so far (the first as it is).
    public static func extendedSequenceNumbers(_ numbers: [UInt16]) -> [Int64] {
        var highest: Int64?
        return numbers.map { n in
            guard let h = highest else { highest = Int64(n); return Int64(n) }
            let delta = Int64(Int16(bitPattern: n &- UInt16(truncatingIfNeeded: h)))
            let e = h + delta
            highest = max(h, e)
            return e
        }
    }

    /// Extends 32-bit timestamps in the given order: each within 2^31 of the one before (the first as it is).
    public static func extendedTimestamps(_ stamps: [UInt32]) -> [Int64] {
        var previous: Int64?
        return stamps.map { t in
            guard let p = previous else { previous = Int64(t); return Int64(t) }
            let e = p + Int64(Int32(bitPattern: t &- UInt32(truncatingIfNeeded: p)))
            previous = e
            return e
        }
    }

    /// Depacketizes one RTP stream (one SSRC), packets in arrival order.
    public static func depacketize(_ packets: [Received]) -> Result {
        var stats = Statistics()
        var warnings: [String] = []
        stats.received = packets.count
        let extended = extendedSequenceNumbers(packets.map(\.packet.sequenceNumber))
        var seen = Set<Int64>()
        var highest = Int64.min
        var unique: [(ext: Int64, received: Received)] = []
        for (p, e) in zip(packets, extended) {
            if !seen.insert(e).inserted {
                stats.duplicates += 1
                continue
            }
            if e < highest { stats.reordered += 1 }
            highest = max(highest, e)
            unique.append((e, p))
        }
        // Jitter in arrival order over distinct packets (their timestamps extended in sequence order first).
        let bySequence = unique.sorted { $0.ext < $1.ext }
        let stamps = extendedTimestamps(bySequence.map(\.received.packet.timestamp))
        var stampOf: [Int64: Int64] = [:]
        for (u, t) in zip(bySequence, stamps) { stampOf[u.ext] = t }
        stats.jitterTicks = interarrivalJitter(unique.map { ($0.received.arrivalSeconds, stampOf[$0.ext]!) })
        if let first = bySequence.first, let last = bySequence.last {
            stats.expected = Int(last.ext - first.ext + 1)
            stats.lost = stats.expected - bySequence.count
        }

        var units: [AccessUnitOutput] = []
        var firstStamp: Int64?
        var previous: (ext: Int64, marker: Bool, stamp: Int64)?
        var openUnit = false   // whether units.last still takes NAL units
        // A FU-A NAL unit being reassembled.
        var fragment: (header: UInt8, bytes: [UInt8], startSequence: Int64, broken: String?)?
        func markIncomplete(_ reason: String) {
            if openUnit, !units.isEmpty, !units[units.count - 1].incomplete.contains(reason) { units[units.count - 1].incomplete.append(reason) }
        }
        func dropFragment(_ why: String) {
            guard let f = fragment else { return }
            stats.discardedNALUnits += 1
            let type = Int(f.header & 0x1F)
            warnings.append("FU-A NAL unit (nal_unit_type \(type)) starting at sequence number \(f.startSequence & 0xFFFF) discarded whole: \(why) (RFC 6184 5.8)")
            markIncomplete("a NAL unit (nal_unit_type \(type)) lost a fragment")
            fragment = nil
        }
        func emit(_ nal: NALUnit) {
            units[units.count - 1].nalUnits.append(nal)
        }
        for (u, stamp) in zip(bySequence, stamps) {
            let e = u.ext
            let packet = u.received.packet
            let seq = e & 0xFFFF
            // Where this packet's access unit starts: a new timestamp, or the previous packet carried the marker bit.
            if let prev = previous {
                let gap = e - prev.ext - 1
                if gap > 0 {
                    if fragment != nil { fragment!.broken = "\(gap) packet(s) lost before sequence number \(seq)" }
                    if !prev.marker && stamp != prev.stamp {
                        markIncomplete("\(gap) packet(s) lost after its packet \(prev.ext & 0xFFFF), which lacks the marker bit (its end is missing)")
                    }
                }
                if prev.marker || stamp != prev.stamp {
                    if fragment != nil { dropFragment("no end fragment before the access unit ended") }
                    openUnit = false
                } else if gap > 0 {
                    markIncomplete("\(gap) packet(s) lost between two of its packets")
                }
            }
            if !openUnit {
                if firstStamp == nil { firstStamp = stamp }
                let ticks = stamp - firstStamp!
                let pts = ticks >= 0 ? (ticks * 100 + 4) / 9 : -((-ticks * 100 + 4) / 9)
                units.append(AccessUnitOutput(nalUnits: [], rtpTimestamp: packet.timestamp, extendedTimestamp: stamp, ptsMicroseconds: pts, incomplete: []))
                openUnit = true
            }
            previous = (e, packet.marker, stamp)
            let payload = packet.payload
            guard let indicator = payload.first else {
                warnings.append("packet \(seq): empty payload, dropped")
                continue
            }
            let type = Int(indicator & 0x1F)
            switch type {
            case 1...23:
                if fragment != nil { dropFragment("a single NAL unit packet came before its end fragment") }
                emit(try! NALUnit(bytes: payload))
            case 24:
                if fragment != nil { dropFragment("a STAP-A came before its end fragment") }
                var p = 1
                var parts: [NALUnit] = []
                var bad: String?
                while p < payload.count {
                    guard payload.count - p >= 2 else { bad = "a NAL unit size at byte \(p) is cut off"; break }
                    let size = Int(payload[p]) << 8 | Int(payload[p + 1])
                    guard size > 0 else { bad = "NAL unit size 0 at byte \(p)"; break }
                    guard payload.count - p - 2 >= size else { bad = "NAL unit size \(size) at byte \(p) runs past the packet's end (\(payload.count - p - 2) bytes left)"; break }
                    parts.append(try! NALUnit(bytes: Array(payload[(p + 2)..<(p + 2 + size)])))
                    p += 2 + size
                }
                if let bad {
                    warnings.append("packet \(seq): STAP-A \(bad), dropped (its \(parts.count) whole NAL unit(s) with it)")
                    markIncomplete("a malformed STAP-A was dropped")
                } else {
                    parts.forEach(emit)
                }
            case 28:
                guard payload.count >= 2 else {
                    warnings.append("packet \(seq): FU-A of \(payload.count) byte(s), no FU header, dropped")
                    if fragment != nil { fragment!.broken = "a fragment without its FU header" }
                    continue
                }
                let fu = payload[1]
                let start = fu & 0x80 != 0, end = fu & 0x40 != 0
                let header = (indicator & 0xE0) | (fu & 0x1F)
                if start {
                    if fragment != nil { dropFragment("a new start fragment came before its end fragment") }
                    fragment = (header, [header] + payload[2...], e, nil)
                    if end {
                        warnings.append("packet \(seq): FU-A with both start and end bits (RFC 6184 5.8 forbids it), taken as a whole NAL unit")
                    }
                } else if fragment == nil {
                    // Its start fragment was lost: the rest of the NAL unit is collected only to be discarded once, whole.
                    fragment = (header, [header] + payload[2...], e, "its start fragment was lost")
                } else {
                    if fragment!.header != header { fragment!.broken = "fragment \(seq) gives another NAL unit header (0x\(RTPSessionDescription.hex(header)))" }
                    fragment!.bytes += payload[2...]
                }
                if end, let f = fragment {
                    if let broken = f.broken {
                        dropFragment(broken)
                    } else {
                        fragment = nil
                        emit(try! NALUnit(bytes: f.bytes))
                    }
                }
            default:
                if fragment != nil { dropFragment("a packet of type \(type) came before its end fragment") }
                let why = [25: "STAP-B", 26: "MTAP16", 27: "MTAP24", 29: "FU-B"][type].map { "\($0) belongs to interleaved mode, which this reader does not take" }
                    ?? "packet type \(type) is undefined (RFC 6184 Table 1)"
                warnings.append("packet \(seq): \(why), dropped")
                markIncomplete("a packet of type \(type) was dropped")
            }
        }
        if fragment != nil { dropFragment("the capture ended before its end fragment") }
        units.removeAll { $0.nalUnits.isEmpty }
        // The first slice of each access unit starts at macroblock 0.
        for k in units.indices {
            guard let slice = units[k].nalUnits.first(where: { $0.nalUnitType.isVCL && $0.forbiddenZeroBit == 0 }) else { continue }
            var reader = BitReader(slice.rbsp)
            if let firstMb = try? reader.ue("first_mb_in_slice"), firstMb != 0 {
                units[k].incomplete.append("its first slice starts at macroblock \(firstMb) (first_mb_in_slice), not 0")
            }
        }
        return Result(accessUnits: units, statistics: stats, warnings: warnings)
    }
}
