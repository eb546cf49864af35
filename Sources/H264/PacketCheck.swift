/// A way a packet breaks what `PACKETS.md` promises about it, found by comparing its fields with the NAL units
/// inside it: which packet (index in the file, byte offset), which field, and what is wrong.
public struct PacketProblem: Hashable, Sendable, CustomStringConvertible {
    /// Index of the packet in the file, from 0.
    public var packetIndex: Int
    /// Byte offset of the packet's first byte (`version`) in the file.
    public var packetOffset: Int
    /// The field as `PACKETS.md` names it (`flags`, `decode_order`, `dts_us`, `body`).
    public var field: String
    /// Byte offset of the field in the file.
    public var byteOffset: Int
    /// What is wrong, with the values read.
    public var problem: String

    public init(packetIndex: Int, packetOffset: Int, field: String, byteOffset: Int, problem: String) {
        self.packetIndex = packetIndex
        self.packetOffset = packetOffset
        self.field = field
        self.byteOffset = byteOffset
        self.problem = problem
    }

    /// `packet 3 at byte 1234: flags (byte 1235): bit 0 says IDR, but ...`.
    public var description: String { "packet \(packetIndex) at byte \(packetOffset): \(field) (byte \(byteOffset)): \(problem)" }
}

extension Packet {
    /// Checks packets read from a packet file against what `PACKETS.md` promises of each, from the NAL units
    /// inside it (``deserialize(_:at:)`` checks only the layout):
    /// - `flags` bit 0 is set exactly when the body holds an IDR slice (`nal_unit_type` 5);
    /// - `decode_order` is 0 for the first packet and one more than the packet before for every other;
    /// - `dts_us <= pts_us`;
    /// - the body holds no SPS or PPS (7, 8: they travel in their own fields) and no access unit delimiter, end of
    ///   sequence, end of stream or filler data (9-12: dropped);
    /// - the body holds one coded picture: coded slices (1-5) of exactly one access unit, none of whose slices are
    ///   in another packet (with `accessUnits`).
    ///
    /// - Parameters:
    ///   - packets: the packets in file order.
    ///   - byteOffsets: the byte offset of each packet in the file (as many as `packets`).
    ///   - accessUnits: the access units of ``nalUnits(_:skipRepeatedParameterSets:)`` of `packets` (every
    ///     carried parameter set written), as ``AccessUnit/split(_:)`` groups them; nil (or access units of another
    ///     number of NAL units) to skip the picture check.
    /// - Returns: every problem, by packet then field, in the order above.
    public static func check(_ packets: [Packet], byteOffsets: [Int], accessUnits: [AccessUnit]? = nil) -> [PacketProblem] {
        precondition(byteOffsets.count == packets.count, "one byte offset per packet")
        // The access unit of each NAL unit of nalUnits(packets), by index.
        var unitOf: [Int] = []
        if let accessUnits {
            for u in accessUnits { unitOf += Array(repeating: u.index, count: u.nalUnitIndices.count) }
        }
        // Access units of another sequence of NAL units (a body NAL unit holding a start code splits in two when
        // read back as Annex B): no picture check.
        let total = packets.reduce(0) { $0 + $1.sequenceParameterSets.count + $1.pictureParameterSets.count + $1.nalUnits.count }
        let checksPictures = accessUnits != nil && unitOf.count == total
        if !checksPictures { unitOf = [] }
        // The packets whose bodies hold VCL NAL units of each access unit.
        var packetsOf: [Int: Set<Int>] = [:]
        var bodyRanges: [Range<Int>] = []
        var next = 0
        for (i, p) in packets.enumerated() {
            let start = next + p.sequenceParameterSets.count + p.pictureParameterSets.count
            next = start + p.nalUnits.count
            bodyRanges.append(start..<next)
            for (k, nal) in p.nalUnits.enumerated() where nal.nalUnitType.isVCL && start + k < unitOf.count {
                packetsOf[unitOf[start + k], default: []].insert(i)
            }
        }
        var problems: [PacketProblem] = []
        var previousOrder: UInt64?
        for (i, p) in packets.enumerated() {
            let at = byteOffsets[i]
            func problem(_ field: String, _ offset: Int, _ text: String) {
                problems.append(PacketProblem(packetIndex: i, packetOffset: at, field: field, byteOffset: at + offset, problem: text))
            }
            let types = p.nalUnits.map(\.nalUnitType.rawValue)
            let typeList = types.isEmpty ? "none" : types.map(String.init).joined(separator: ", ")
            let holdsIDR = types.contains(NALUnitType.idrSlice.rawValue)
            if p.isIDR && !holdsIDR {
                problem("flags", 1, "bit 0 says IDR, but the body holds no IDR slice (nal_unit_type 5); its nal_unit_types: \(typeList)")
            } else if !p.isIDR && holdsIDR {
                problem("flags", 1, "bit 0 says not IDR, but the body holds an IDR slice (nal_unit_type 5)")
            }
            let expected = previousOrder.map { $0 &+ 1 } ?? 0
            if p.decodeOrder != expected {
                problem("decode_order", 2, "\(p.decodeOrder), expected \(expected) (0 for the first packet, +1 per packet)")
            }
            previousOrder = p.decodeOrder
            if p.dtsMicroseconds > p.ptsMicroseconds {
                problem("dts_us", 18, "\(p.dtsMicroseconds) is after pts_us \(p.ptsMicroseconds) (dts_us <= pts_us)")
            }
            let bodyOffset = 26 + p.sequenceParameterSets.reduce(1) { $0 + 2 + $1.bytes.count }
                + p.pictureParameterSets.reduce(1) { $0 + 2 + $1.bytes.count } + 4
            let misplaced = p.nalUnits.enumerated().filter { [7, 8, 9, 10, 11, 12].contains($0.element.nalUnitType.rawValue) }
            for (k, nal) in misplaced {
                let type = nal.nalUnitType
                let rule = type == .sps || type == .pps ? "moved to the parameter set fields" : "dropped"
                problem("body", bodyOffset, "NAL unit \(k) is nal_unit_type \(type.rawValue) (\(type)), which the body never holds (\(rule))")
            }
            let vcl = bodyRanges[i].filter { p.nalUnits[$0 - bodyRanges[i].lowerBound].nalUnitType.isVCL }
            if vcl.isEmpty {
                problem("body", bodyOffset, "no coded slice (nal_unit_type 1-5): a packet is one access unit's coded picture; its nal_unit_types: \(typeList)")
            } else if checksPictures {
                let units = Set(vcl.compactMap { $0 < unitOf.count ? unitOf[$0] : nil }).sorted()
                if units.count > 1 {
                    problem("body", bodyOffset, "\(units.count) coded pictures (access units \(units.map(String.init).joined(separator: ", "))): a packet is one access unit")
                } else if let u = units.first, let shared = packetsOf[u], shared.count > 1 {
                    let others = shared.subtracting([i]).sorted().map(String.init).joined(separator: ", ")
                    problem("body", bodyOffset, "its coded picture (access unit \(u)) continues in packet \(others): a packet is one whole access unit")
                }
            }
        }
        return problems
    }
}
