/// One RTP packet (RFC 3550 5.1): the fixed header, its CSRC list and header extension, and the payload with any
/// padding taken off.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// |                           timestamp                           |
/// |           synchronization source (SSRC) identifier            |
/// |            contributing source (CSRC) identifiers (CC x 32)   |
/// | [X: profile-defined 16 bits | length in 32-bit words, 16 bits | extension words]
/// | payload ...                     [P: padding, its last byte the padding count]  |
/// ```
public struct RTPPacket: Hashable, Sendable {
    /// `P`: whether the packet ends in padding; ``serialize()`` writes ``paddingCount`` bytes when it is above 0.
    public var paddingCount: Int
    /// `M`: for H.264 (RFC 6184 5.1), set on the last packet of an access unit.
    public var marker: Bool
    /// `PT`: 0...127; H.264 uses a dynamic type (96...127), 96 by default.
    public var payloadType: Int
    /// `sequence number`: +1 per packet, wrapping at 65,536.
    public var sequenceNumber: UInt16
    /// `timestamp`: for H.264 a 90 kHz clock (RFC 6184 5.1), wrapping at 2^32.
    public var timestamp: UInt32
    /// `SSRC`.
    public var ssrc: UInt32
    /// The CSRC list, 0...15 entries (`CC`).
    public var csrcs: [UInt32]
    /// The header extension's 16-bit profile-defined value (`X`, RFC 3550 5.3.1); nil when `X` is 0.
    public var extensionProfile: UInt16?
    /// The header extension's data, a multiple of 4 bytes; empty when `X` is 0.
    public var extensionData: [UInt8]
    /// The payload: after the header, CSRCs and extension, before any padding.
    public var payload: [UInt8]

    /// The size of the fixed header, bytes.
    public static let fixedHeaderSize = 12

    /// A packet with no CSRC, no extension and no padding.
    public init(marker: Bool, payloadType: Int, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32, payload: [UInt8]) {
        self.paddingCount = 0
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = []
        self.extensionProfile = nil
        self.extensionData = []
        self.payload = payload
    }

    /// Parses a UDP payload as an RTP packet.
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` when the fixed header, the CSRC list
    ///   or the extension runs past the end; ``H264Error/invalid(element:reason:byteOffset:)`` for a version other
    ///   than 2 (`V`: not RTP), a padding count of 0 or longer than the packet after its header (`P`).
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count >= Self.fixedHeaderSize else {
            throw H264Error.truncated(element: "RTP fixed header", byteOffset: 0, needed: Self.fixedHeaderSize, available: bytes.count)
        }
        let version = Int(bytes[0] >> 6)
        guard version == 2 else {
            throw H264Error.invalid(element: "RTP version (V)", reason: "\(version), not 2: not an RTP packet", byteOffset: 0)
        }
        let hasPadding = bytes[0] & 0x20 != 0
        let hasExtension = bytes[0] & 0x10 != 0
        let csrcCount = Int(bytes[0] & 0x0F)
        marker = bytes[1] & 0x80 != 0
        payloadType = Int(bytes[1] & 0x7F)
        sequenceNumber = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        timestamp = Self.u32(bytes, 4)
        ssrc = Self.u32(bytes, 8)
        var p = Self.fixedHeaderSize
        guard bytes.count - p >= 4 * csrcCount else {
            throw H264Error.truncated(element: "RTP CSRC list (CC \(csrcCount))", byteOffset: p, needed: 4 * csrcCount, available: bytes.count - p)
        }
        csrcs = (0..<csrcCount).map { Self.u32(bytes, p + 4 * $0) }
        p += 4 * csrcCount
        extensionProfile = nil
        extensionData = []
        if hasExtension {
            guard bytes.count - p >= 4 else {
                throw H264Error.truncated(element: "RTP header extension", byteOffset: p, needed: 4, available: bytes.count - p)
            }
            let words = Int(bytes[p + 2]) << 8 | Int(bytes[p + 3])
            guard bytes.count - p - 4 >= 4 * words else {
                throw H264Error.truncated(element: "RTP header extension data (\(words) words)", byteOffset: p + 4, needed: 4 * words, available: bytes.count - p - 4)
            }
            extensionProfile = UInt16(bytes[p]) << 8 | UInt16(bytes[p + 1])
            extensionData = Array(bytes[(p + 4)..<(p + 4 + 4 * words)])
            p += 4 + 4 * words
        }
        var end = bytes.count
        paddingCount = 0
        if hasPadding {
            let count = Int(bytes[bytes.count - 1])
            guard count >= 1 && count <= bytes.count - p else {
                throw H264Error.invalid(element: "RTP padding (P)", reason: "padding count \(count) where 1...\(bytes.count - p) bytes follow the header",
                                        byteOffset: bytes.count - 1)
            }
            paddingCount = count
            end -= count
        }
        payload = Array(bytes[p..<end])
    }

    /// The packet's bytes: header, CSRCs, extension, payload, then ``paddingCount`` bytes of padding (zeros, the
    /// last one the count).
    /// - Precondition: 0...15 CSRCs, ``payloadType`` 0...127, extension data a multiple of 4 bytes (at most 65,535
    ///   words), ``paddingCount`` 0...255: the lab's own packets.
    public func serialize() -> [UInt8] {
        precondition(csrcs.count <= 15 && (0...127).contains(payloadType) && (0...255).contains(paddingCount))
        precondition(extensionData.count % 4 == 0 && extensionData.count / 4 <= 0xFFFF)
        var out: [UInt8] = []
        out.reserveCapacity(Self.fixedHeaderSize + 4 * csrcs.count + payload.count + paddingCount + 4 + extensionData.count)
        out.append(0x80 | (paddingCount > 0 ? 0x20 : 0) | (extensionProfile != nil ? 0x10 : 0) | UInt8(csrcs.count))
        out.append((marker ? 0x80 : 0) | UInt8(payloadType))
        out += [UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF)]
        Self.put(timestamp, &out)
        Self.put(ssrc, &out)
        for c in csrcs { Self.put(c, &out) }
        if let profile = extensionProfile {
            let words = extensionData.count / 4
            out += [UInt8(profile >> 8), UInt8(profile & 0xFF), UInt8(words >> 8), UInt8(words & 0xFF)]
            out += extensionData
        }
        out += payload
        if paddingCount > 0 {
            out += [UInt8](repeating: 0, count: paddingCount - 1)
            out.append(UInt8(paddingCount))
        }
        return out
    }

    static func u32(_ b: [UInt8], _ p: Int) -> UInt32 {
        UInt32(b[p]) << 24 | UInt32(b[p + 1]) << 16 | UInt32(b[p + 2]) << 8 | UInt32(b[p + 3])
    }

    static func put(_ v: UInt32, _ out: inout [UInt8]) {
        out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
