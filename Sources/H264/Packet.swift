/// One encoded frame for transport: an access unit's NAL units with its parameter sets and
/// times, in the binary layout documented in `PACKETS.md` (version 1).
///
/// Layout (all integers big-endian; offsets in bytes):
/// ```
/// 0   u8   version                 1
/// 1   u8   flags                   bit 0: the access unit is an IDR picture (nal_unit_type 5);
///                                  bits 1-7 reserved, 0
/// 2   u64  decode_order            position of the access unit in decode order, from 0
/// 10  i64  pts_us                  presentation time, microseconds, two's complement
/// 18  i64  dts_us                  decode time, microseconds, two's complement (checked against pts_us by check(_:byteOffsets:accessUnits:), not on reading)
/// 26  u8   sps_count               0...31
///     sps_count × { u16 length (1...65535); SPS NAL unit (header byte included, escaped) }
///     u8   pps_count               0...255
///     pps_count × { u16 length (1...65535); PPS NAL unit }
///     u32  body_length             bytes that follow
///     body: { u32 length (>= 1); NAL unit } ... (AVCC with 4-byte lengths), in decode order
/// ```
/// - Parameter sets travel in their own fields, never in the body: on every packet by default
///   (``ParameterSetPlacement/everyPacket``), or only on IDR packets
///   (``ParameterSetPlacement/idrOnly``). A packet carries every SPS and PPS seen up to and
///   including its access unit, latest version per id, in increasing id order.
/// - The body keeps every NAL unit of the access unit except SPS (7) and PPS (8), which move to
///   the parameter set fields, and access unit delimiters (9), end of sequence (10), end of
///   stream (11) and filler data (12), which are dropped. So slices (1-5) and SEI (6) are kept,
///   as are any other types (13-23), in their original order.
/// - Times are microseconds rounded to nearest, ties away from zero
///   (``microseconds(ticks:timebaseNumerator:timebaseDenominator:)``).
/// - A file of packets is the packets one after another, in decode order.
public struct Packet: Hashable, Sendable {
    /// The layout version this code writes and reads.
    public static let version: UInt8 = 1
    /// Size of the fixed part before `sps_count`, in bytes.
    public static let fixedHeaderSize = 26

    /// Where parameter sets are carried.
    public enum ParameterSetPlacement: Sendable {
        /// On every packet (the seed format's behaviour; default).
        case everyPacket
        /// Only on packets whose access unit is an IDR picture.
        case idrOnly
    }

    /// True when the access unit holds an IDR picture.
    public var isIDR: Bool
    /// Position in decode order, from 0.
    public var decodeOrder: UInt64
    /// Presentation time in microseconds.
    public var ptsMicroseconds: Int64
    /// Decode time in microseconds.
    public var dtsMicroseconds: Int64
    /// SPS NAL units (type 7), empty when this packet carries no parameter sets.
    public var sequenceParameterSets: [NALUnit]
    /// PPS NAL units (type 8).
    public var pictureParameterSets: [NALUnit]
    /// The body's NAL units in decode order.
    public var nalUnits: [NALUnit]

    /// Creates a packet; times in microseconds, parameter sets and body NAL units as they are to be written.
    public init(isIDR: Bool, decodeOrder: UInt64, ptsMicroseconds: Int64, dtsMicroseconds: Int64,
                sequenceParameterSets: [NALUnit], pictureParameterSets: [NALUnit], nalUnits: [NALUnit]) {
        self.isIDR = isIDR
        self.decodeOrder = decodeOrder
        self.ptsMicroseconds = ptsMicroseconds
        self.dtsMicroseconds = dtsMicroseconds
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.nalUnits = nalUnits
    }

    /// The NAL unit types the body drops: 9 (AUD), 10 (end of sequence), 11 (end of stream),
    /// 12 (filler data). Types 7 and 8 move to the parameter set fields.
    public static let droppedNALUnitTypes: Set<NALUnitType> = [.accessUnitDelimiter, .endOfSequence, .endOfStream, .fillerData]

    /// The body: each NAL unit behind a 4-byte big-endian length.
    public var body: [UInt8] {
        var out = [UInt8]()
        for nal in nalUnits {
            let n = UInt32(truncatingIfNeeded: nal.bytes.count)
            out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
            out += nal.bytes
        }
        return out
    }

    /// Converts a time in timebase ticks to microseconds, rounding to nearest with ties away
    /// from zero: µs = round(ticks · numerator · 1,000,000 ÷ denominator).
    /// - Parameters:
    ///   - ticks: the time in ticks of `numerator/denominator` seconds.
    ///   - timebaseNumerator: > 0.
    ///   - timebaseDenominator: > 0.
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` for a timebase part
    ///   ≤ 0 or a result outside Int64.
    public static func microseconds(ticks: Int64, timebaseNumerator: Int64, timebaseDenominator: Int64) throws -> Int64 {
        guard timebaseNumerator > 0 else {
            throw H264Error.valueOutOfRange(element: "timebase numerator", value: timebaseNumerator, range: 1...Int64.max)
        }
        guard timebaseDenominator > 0 else {
            throw H264Error.valueOutOfRange(element: "timebase denominator", value: timebaseDenominator, range: 1...Int64.max)
        }
        return try Rational(timebaseNumerator, timebaseDenominator).microseconds(ticks: ticks)
    }

    /// Builds one packet per access unit.
    /// - Parameters:
    ///   - accessUnits: access units in decode order (from ``AccessUnit/split(_:)``).
    ///   - timestamps: one (pts, dts) pair in microseconds per access unit, in decode order.
    ///   - placement: which packets carry parameter sets.
    /// - Returns: packets with `decodeOrder` 0, 1, 2, ...
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` when the counts differ or a
    ///   packet that must carry parameter sets has none seen yet; the ``H264Error`` of a parameter
    ///   set that does not parse.
    public static func fromAccessUnits(_ accessUnits: [AccessUnit], timestamps: [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)],
                                       placement: ParameterSetPlacement = .everyPacket) throws -> [Packet] {
        guard accessUnits.count == timestamps.count else {
            throw H264Error.invalid(element: "timestamps", reason: "\(timestamps.count) timestamps for \(accessUnits.count) access units", byteOffset: 0)
        }
        var parameterSets = ParameterSets()
        var packets = [Packet]()
        packets.reserveCapacity(accessUnits.count)
        for (i, au) in accessUnits.enumerated() {
            var body = [NALUnit]()
            for nal in au.nalUnits {
                if try parameterSets.add(nal) { continue }
                if droppedNALUnitTypes.contains(nal.nalUnitType) { continue }
                body.append(nal)
            }
            let carry = placement == .everyPacket || au.isIDR
            let sps = carry ? parameterSets.spsNALUnits.sorted { $0.key < $1.key }.map(\.value) : []
            let pps = carry ? parameterSets.ppsNALUnits.sorted { $0.key < $1.key }.map(\.value) : []
            packets.append(Packet(isIDR: au.isIDR, decodeOrder: UInt64(i), ptsMicroseconds: timestamps[i].ptsMicroseconds,
                                  dtsMicroseconds: timestamps[i].dtsMicroseconds, sequenceParameterSets: sps,
                                  pictureParameterSets: pps, nalUnits: body))
        }
        return packets
    }

    /// The NAL units a decoder needs for `packets`, in decode order: each packet's SPSs, PPSs,
    /// then body. By default every carried parameter set is written. With
    /// `skipRepeatedParameterSets`, a packet's SPSs and PPSs are written only when they differ
    /// from the last ones written (so `.everyPacket` packets do not repeat them).
    public static func nalUnits(_ packets: [Packet], skipRepeatedParameterSets: Bool = false) -> [NALUnit] {
        var out = [NALUnit]()
        var lastSPS: [NALUnit] = []
        var lastPPS: [NALUnit] = []
        for p in packets {
            let same = skipRepeatedParameterSets && p.sequenceParameterSets == lastSPS && p.pictureParameterSets == lastPPS
            if !same {
                out += p.sequenceParameterSets
                out += p.pictureParameterSets
                if !p.sequenceParameterSets.isEmpty || !p.pictureParameterSets.isEmpty {
                    lastSPS = p.sequenceParameterSets
                    lastPPS = p.pictureParameterSets
                }
            }
            out += p.nalUnits
        }
        return out
    }

    /// Annex B byte stream for `packets` (``nalUnits(_:skipRepeatedParameterSets:)`` written by
    /// ``AnnexB/write(_:)`` with 4-byte start codes).
    public static func annexB(_ packets: [Packet], skipRepeatedParameterSets: Bool = false) -> [UInt8] {
        AnnexB.write(nalUnits(packets, skipRepeatedParameterSets: skipRepeatedParameterSets))
    }

    /// Writes the packet in the version 1 layout.
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` for more than 31 SPSs or
    ///   255 PPSs, a parameter set over 65,535 bytes, or a body over 4,294,967,295 bytes.
    public func serialize() throws -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.fixedHeaderSize + 6 + nalUnits.reduce(0) { $0 + 4 + $1.bytes.count })
        out.append(Self.version)
        out.append(isIDR ? 1 : 0)
        appendBigEndian(&out, decodeOrder, 8)
        appendBigEndian(&out, UInt64(bitPattern: ptsMicroseconds), 8)
        appendBigEndian(&out, UInt64(bitPattern: dtsMicroseconds), 8)
        for (sets, name, maxCount) in [(sequenceParameterSets, "sps", 31), (pictureParameterSets, "pps", 255)] {
            guard sets.count <= maxCount else {
                throw H264Error.valueOutOfRange(element: "\(name)_count", value: Int64(sets.count), range: 0...Int64(maxCount))
            }
            out.append(UInt8(sets.count))
            for (i, nal) in sets.enumerated() {
                guard nal.bytes.count <= 0xFFFF else {
                    throw H264Error.valueOutOfRange(element: "\(name)_length[\(i)]", value: Int64(nal.bytes.count), range: 1...0xFFFF)
                }
                appendBigEndian(&out, UInt64(nal.bytes.count), 2)
                out += nal.bytes
            }
        }
        let body = self.body
        guard body.count <= 0xFFFF_FFFF else {
            throw H264Error.valueOutOfRange(element: "body_length", value: Int64(body.count), range: 0...0xFFFF_FFFF)
        }
        appendBigEndian(&out, UInt64(body.count), 4)
        out += body
        return out
    }

    /// Reads one packet that fills `bytes` exactly.
    /// - Throws: as ``deserialize(_:at:)``, and ``H264Error/invalid(element:reason:byteOffset:)``
    ///   when bytes follow the packet.
    public static func deserialize(_ bytes: [UInt8]) throws -> Packet {
        let (packet, end) = try deserialize(bytes, at: 0)
        guard end == bytes.count else {
            throw H264Error.invalid(element: "packet", reason: "\(bytes.count - end) bytes after the end of the packet", byteOffset: end)
        }
        return packet
    }

    /// Reads every packet of a packet file (packets back to back).
    /// - Throws: as ``deserialize(_:at:)``.
    public static func deserializeAll(_ bytes: [UInt8]) throws -> [Packet] {
        var packets = [Packet]()
        var p = 0
        while p < bytes.count {
            let (packet, end) = try deserialize(bytes, at: p)
            packets.append(packet)
            p = end
        }
        return packets
    }

    /// Reads one packet starting at byte `offset` of `bytes`.
    /// - Returns: the packet and the offset just after it.
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` naming the field
    ///   and byte offset; ``H264Error/invalid(element:reason:byteOffset:)`` for a version other
    ///   than 1, reserved flag bits set, `sps_count` over 31, a zero length, a parameter set of the
    ///   wrong `nal_unit_type`, or a body that is not valid AVCC.
    public static func deserialize(_ bytes: [UInt8], at offset: Int) throws -> (packet: Packet, end: Int) {
        var p = offset
        func need(_ n: Int, _ name: String) throws {
            guard p >= 0, bytes.count - p >= n else {
                throw H264Error.truncated(element: name, byteOffset: p, needed: n, available: max(0, bytes.count - p))
            }
        }
        func read(_ n: Int, _ name: String) throws -> UInt64 {
            try need(n, name)
            var v: UInt64 = 0
            for k in 0..<n { v = v << 8 | UInt64(bytes[p + k]) }
            p += n
            return v
        }
        let version = try read(1, "version")
        guard version == UInt64(Self.version) else {
            throw H264Error.invalid(element: "version", reason: "unsupported packet version \(version), expected \(Self.version)", byteOffset: p - 1)
        }
        let flags = try read(1, "flags")
        guard flags & ~1 == 0 else {
            throw H264Error.invalid(element: "flags", reason: "reserved bits set: 0x\(String(flags, radix: 16))", byteOffset: p - 1)
        }
        let decodeOrder = try read(8, "decode_order")
        let pts = Int64(bitPattern: try read(8, "pts_us"))
        let dts = Int64(bitPattern: try read(8, "dts_us"))
        var sets: [[NALUnit]] = []
        for (name, maxCount, type) in [("sps", 31, NALUnitType.sps), ("pps", 255, NALUnitType.pps)] {
            let countOffset = p
            let count = Int(try read(1, "\(name)_count"))
            guard count <= maxCount else {
                throw H264Error.invalid(element: "\(name)_count", reason: "out of range (0-\(maxCount)): \(count)", byteOffset: countOffset)
            }
            var list = [NALUnit]()
            for i in 0..<count {
                let lengthOffset = p
                let length = Int(try read(2, "\(name)_length[\(i)]"))
                guard length > 0 else {
                    throw H264Error.invalid(element: "\(name)_length[\(i)]", reason: "length 0", byteOffset: lengthOffset)
                }
                try need(length, "\(name)[\(i)]")
                let nal = try NALUnit(bytes: Array(bytes[p..<p + length]))
                guard nal.nalUnitType == type else {
                    throw H264Error.invalid(element: "\(name)[\(i)]", reason: "nal_unit_type \(nal.nalUnitType.rawValue), expected \(type.rawValue)", byteOffset: p)
                }
                list.append(nal)
                p += length
            }
            sets.append(list)
        }
        let bodyLength = Int(try read(4, "body_length"))
        try need(bodyLength, "body")
        let bodyStart = p
        let located: [LocatedNALUnit]
        do {
            // The lab's own format: a length of 0 is damage here, not a sender's habit (PACKETS.md).
            located = try AVCC.split(Array(bytes[p..<p + bodyLength]), lengthSize: 4, policy: .strict)
        } catch let error as H264Error {
            throw H264Error.invalid(element: "body", reason: "\(error) (body starts at byte \(bodyStart))", byteOffset: bodyStart)
        }
        p += bodyLength
        let packet = Packet(isIDR: flags & 1 == 1, decodeOrder: decodeOrder, ptsMicroseconds: pts, dtsMicroseconds: dts,
                            sequenceParameterSets: sets[0], pictureParameterSets: sets[1], nalUnits: located.map(\.nal))
        return (packet, p)
    }
}

private func appendBigEndian(_ out: inout [UInt8], _ value: UInt64, _ size: Int) {
    for k in stride(from: size - 1, through: 0, by: -1) {
        out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))))
    }
}
