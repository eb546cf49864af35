/// RTP packetization of H.264 (RFC 6184): access units in, RTP packets out.
///
/// **Modes** (RFC 6184 5.2, 6.2, 6.3): ``Mode/singleNALUnit`` (`packetization-mode=0`) sends each NAL unit in a packet
/// of its own (5.6) and refuses one that does not fit; ``Mode/nonInterleaved`` (`packetization-mode=1`) also
/// aggregates NAL units of one access unit into STAP-A packets (5.7.1) and fragments a NAL unit that does not fit into
/// FU-A packets (5.8).
///
/// **MTU** as GStreamer's `rtph264pay` defines its `mtu` property: the largest RTP packet, its 12-byte header
/// included (`gst_rtp_buffer_calc_packet_len(payload, 0, 0) <= mtu`). So a single NAL unit packet holds a NAL unit of
/// up to `mtu - 12` bytes; an FU-A packet carries up to `mtu - 14` bytes of the NAL unit's payload after its FU
/// indicator and FU header; a STAP-A packet holds NAL units while `12 + 1 + sum(2 + size) <= mtu`.
///
/// **Aggregation** (``Aggregation``) follows `rtph264pay`'s `aggregate-mode` for access-unit-aligned input (what
/// `h264parse` hands it): ``Aggregation/none`` is `none` (its default), ``Aggregation/stapA`` is `max-stap` (and
/// `zero-latency`, which sends the same packets when each input buffer is one access unit): NAL units of an access unit
/// are collected in decode order while they fit; one that would overflow sends the collection first; one that cannot fit
/// in a STAP-A even alone (`12 + 1 + 2 + size > mtu`) sends the collection, then goes in a single NAL unit packet or in
/// FU-A fragments; the last NAL unit of the access unit sends the collection. A collection of one NAL unit is sent as a
/// single NAL unit packet. The STAP-A header's F bit is the OR of its NAL units' F bits and its NRI their largest NRI
/// (5.7: "the value of NRI MUST be the maximum of all the NAL units carried in the aggregation packet").
///
/// **FU-A** (5.8): the FU indicator is the NAL unit header's F and NRI with type 28, the FU header S, E, R=0 and the NAL
/// unit's type; the NAL unit header byte itself is not sent. (`rtph264pay` clears F in the FU indicator; here F is kept,
/// as 5.8 defines it, so a NAL unit with forbidden_zero_bit 1 comes back as it was.)
///
/// **Times**: each access unit's RTP timestamp is `timestampOffset + round(pts × 90,000 / 1,000,000)` modulo 2^32
/// (PTS in microseconds; RFC 6184 5.1: the timestamp is the access unit's presentation time on a 90 kHz clock), the
/// marker bit is set on the last packet of each access unit, and sequence numbers count from
/// ``Options/firstSequenceNumber`` modulo 2^16.
///
/// Parameter sets travel where the stream has them (in band) and in the SDP's `sprop-parameter-sets`
/// (``RTPSessionDescription``); none are inserted (`rtph264pay`'s `config-interval=0`, its default).
public enum RTPPacketizer {
    /// `packetization-mode` (RFC 6184 8.1).
    public enum Mode: String, Sendable, CaseIterable {
        /// `packetization-mode=0`: single NAL unit packets only.
        case singleNALUnit = "single"
        /// `packetization-mode=1`: single NAL unit, STAP-A and FU-A packets.
        case nonInterleaved = "non-interleaved"

        /// The value of SDP's `packetization-mode`.
        public var packetizationMode: Int { self == .singleNALUnit ? 0 : 1 }
    }

    /// Whether NAL units of one access unit share STAP-A packets (non-interleaved mode only).
    public enum Aggregation: String, Sendable, CaseIterable {
        /// `rtph264pay aggregate-mode=none`: no STAP-A.
        case none
        /// `rtph264pay aggregate-mode=max-stap` (= `zero-latency` for access-unit-aligned input).
        case stapA = "max-stap"
    }

    /// How to packetize.
    public struct Options: Sendable {
        /// The largest RTP packet in bytes, its header included (rtph264pay's `mtu`), 28...65,507 (28: rtph264pay's
        /// least; 65,507: the largest UDP payload in IPv4).
        public var mtu = 1400
        public var mode = Mode.nonInterleaved
        public var aggregation = Aggregation.stapA
        /// `PT`, 96...127 (dynamic).
        public var payloadType = 96
        public var ssrc: UInt32 = 0
        /// The first packet's sequence number.
        public var firstSequenceNumber: UInt16 = 0
        /// The RTP timestamp of PTS 0.
        public var timestampOffset: UInt32 = 0
        public init() {}
    }

    /// The least and largest ``Options/mtu``.
    public static let mtuRange = 28...65_507

    /// One access unit to send: its NAL units in decode order and its presentation time.
    public struct AccessUnitInput: Sendable {
        public var nalUnits: [NALUnit]
        /// Presentation time, microseconds.
        public var ptsMicroseconds: Int64
        public init(nalUnits: [NALUnit], ptsMicroseconds: Int64) {
            self.nalUnits = nalUnits
            self.ptsMicroseconds = ptsMicroseconds
        }
    }

    /// One packet made, with the access unit it belongs to.
    public struct Output: Sendable, Equatable {
        public var packet: RTPPacket
        /// Index of its access unit in the input, from 0.
        public var accessUnit: Int
    }

    /// The 90 kHz RTP clock reading of a time in microseconds: `round(us × 9 / 100)`, ties away from zero.
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` when `us × 9` overflows 64 bits.
    public static func rtpTicks(microseconds us: Int64) throws -> Int64 {
        let (nine, overflow) = us.multipliedReportingOverflow(by: 9)
        guard !overflow else {
            throw H264Error.valueOutOfRange(element: "PTS (microseconds)", value: us, range: (Int64.min / 9)...(Int64.max / 9))
        }
        return nine >= 0 ? (nine + 50) / 100 : -((-nine + 50) / 100)
    }

    /// Packetizes access units.
    /// - Returns: the packets in sending order (decode order of the access units).
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` for an MTU outside ``mtuRange`` or a payload
    ///   type outside 96...127; ``H264Error/invalid(element:reason:byteOffset:)`` for a NAL unit of type 24...31
    ///   (RFC 6184 5.2: those values name RTP payload structures, so such a NAL unit cannot be sent), an empty access
    ///   unit, or in single NAL unit mode a NAL unit over `mtu - 12` bytes (the byte offset is the NAL unit's index in
    ///   its access unit).
    public static func packetize(_ units: [AccessUnitInput], options: Options) throws -> [Output] {
        guard mtuRange.contains(options.mtu) else {
            throw H264Error.valueOutOfRange(element: "mtu", value: Int64(options.mtu), range: Int64(mtuRange.lowerBound)...Int64(mtuRange.upperBound))
        }
        guard (96...127).contains(options.payloadType) else {
            throw H264Error.valueOutOfRange(element: "payload type", value: Int64(options.payloadType), range: 96...127)
        }
        let mtu = options.mtu
        let header = RTPPacket.fixedHeaderSize
        var out: [Output] = []
        var sequence = options.firstSequenceNumber
        for (k, unit) in units.enumerated() {
            guard !unit.nalUnits.isEmpty else {
                throw H264Error.invalid(element: "access unit \(k)", reason: "no NAL unit to send", byteOffset: 0)
            }
            let timestamp = options.timestampOffset &+ UInt32(truncatingIfNeeded: try rtpTicks(microseconds: unit.ptsMicroseconds))
            func send(_ payload: [UInt8], marker: Bool) {
                out.append(Output(packet: RTPPacket(marker: marker, payloadType: options.payloadType, sequenceNumber: sequence,
                                                    timestamp: timestamp, ssrc: options.ssrc, payload: payload), accessUnit: k))
                sequence &+= 1
            }
            // A single NAL unit packet when it fits, else FU-A fragments (5.8).
            func singleOrFragments(_ nal: NALUnit, endOfAccessUnit: Bool) {
                let bytes = nal.bytes
                if header + bytes.count <= mtu {
                    send(bytes, marker: endOfAccessUnit)
                    return
                }
                let maxFragment = mtu - 2 - header
                let indicator = (bytes[0] & 0xE0) | 28
                var position = 1
                while position < bytes.count {
                    let size = min(bytes.count - position, maxFragment)
                    let first = position == 1
                    let last = bytes.count - position <= maxFragment
                    let fuHeader = (first ? 0x80 : 0) | (last ? 0x40 : 0) | (bytes[0] & 0x1F)
                    send([indicator, fuHeader] + bytes[position..<(position + size)], marker: last && endOfAccessUnit)
                    position += size
                }
            }
            var bundle: [NALUnit] = []
            var bundleSize = 0   // STAP-A payload bytes: 1 (its header) + 2 + size per NAL unit
            func sendBundle(endOfAccessUnit: Bool) {
                defer { bundle = []; bundleSize = 0 }
                if bundle.count == 1 { send(bundle[0].bytes, marker: endOfAccessUnit); return }
                guard bundle.count > 1 else { return }
                var stapHeader: UInt8 = 24
                var payload: [UInt8] = [0]
                for nal in bundle {
                    stapHeader |= nal.header & 0x80
                    if nal.header & 0x60 > stapHeader & 0x60 { stapHeader = (stapHeader & 0x9F) | (nal.header & 0x60) }
                    payload += [UInt8(nal.bytes.count >> 8), UInt8(nal.bytes.count & 0xFF)] + nal.bytes
                }
                payload[0] = stapHeader
                send(payload, marker: endOfAccessUnit)
            }
            for (i, nal) in unit.nalUnits.enumerated() {
                let type = nal.nalUnitType.rawValue
                guard type < 24 else {
                    throw H264Error.invalid(element: "nal_unit_type", reason: "\(type) in access unit \(k): RFC 6184 5.2 gives 24...31 to RTP "
                                            + "payload structures, so such a NAL unit cannot be sent", byteOffset: i)
                }
                let end = i == unit.nalUnits.count - 1
                switch (options.mode, options.aggregation) {
                case (.singleNALUnit, _):
                    guard header + nal.bytes.count <= mtu else {
                        throw H264Error.invalid(element: "NAL unit \(i) of access unit \(k)",
                                                reason: "\(nal.bytes.count) bytes do not fit a single NAL unit packet of MTU \(mtu) "
                                                + "(\(mtu - header) bytes after the 12-byte RTP header); packetization-mode 0 cannot fragment: "
                                                + "use non-interleaved mode or a larger MTU", byteOffset: i)
                    }
                    send(nal.bytes, marker: end)
                case (.nonInterleaved, .none):
                    singleOrFragments(nal, endOfAccessUnit: end)
                case (.nonInterleaved, .stapA):
                    let paySize = 2 + nal.bytes.count
                    if header + 1 + paySize > mtu {
                        sendBundle(endOfAccessUnit: false)
                        singleOrFragments(nal, endOfAccessUnit: end)
                        continue
                    }
                    if !bundle.isEmpty && header + bundleSize + paySize > mtu { sendBundle(endOfAccessUnit: false) }
                    if bundle.isEmpty { bundleSize = 1 }
                    bundle.append(nal)
                    bundleSize += paySize
                    if end { sendBundle(endOfAccessUnit: true) }
                }
            }
        }
        return out
    }
}

/// The SDP of an H.264 RTP stream (RFC 4566; RFC 6184 8.1 and 8.2.1 for its `a=fmtp` parameters).
public enum RTPSessionDescription {
    /// `profile-level-id` (RFC 6184 8.1): the SPS's profile_idc, its constraint_set flags byte (constraint_set0_flag
    /// ... reserved_zero_2bits) and level_idc, as six hexadecimal digits: the first three bytes of its RBSP.
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` for an SPS of under 3 RBSP bytes.
    public static func profileLevelId(sps: NALUnit) throws -> String {
        let rbsp = sps.rbsp
        guard rbsp.count >= 3 else {
            throw H264Error.truncated(element: "profile_idc, constraint flags, level_idc", byteOffset: 1, needed: 3, available: rbsp.count)
        }
        return rbsp[0..<3].map { hex($0) }.joined()
    }

    /// `sprop-parameter-sets` (RFC 6184 8.1): each NAL unit in base64 (RFC 4648 section 4, padded), comma-separated.
    public static func spropParameterSets(_ nalUnits: [NALUnit]) -> String {
        nalUnits.map { base64($0.bytes) }.joined(separator: ",")
    }

    /// The SDP text: one video stream of payload type `payloadType` on `port` at `address` (IPv4), its `rtpmap`
    /// (`H264/90000`) and `fmtp` with `packetization-mode`, `profile-level-id` (from the first SPS) and
    /// `sprop-parameter-sets` (every distinct SPS then every distinct PPS, in the order first seen). Lines end in CRLF
    /// (RFC 4566 5).
    /// - Throws: as ``profileLevelId(sps:)``; ``H264Error/invalid(element:reason:byteOffset:)`` when there is no SPS.
    public static func text(parameterSets: [NALUnit], mode: RTPPacketizer.Mode, payloadType: Int, port: Int, address: String) throws -> String {
        var sps: [NALUnit] = []
        var pps: [NALUnit] = []
        for nal in parameterSets {
            if nal.nalUnitType == .sps, !sps.contains(nal) { sps.append(nal) }
            if nal.nalUnitType == .pps, !pps.contains(nal) { pps.append(nal) }
        }
        guard let first = sps.first else {
            throw H264Error.invalid(element: "sprop-parameter-sets", reason: "the stream holds no SPS for profile-level-id", byteOffset: 0)
        }
        let lines = [
            "v=0",
            "o=- 0 0 IN IP4 \(address)",
            "s=enclab rtp pack",
            "c=IN IP4 \(address)",
            "t=0 0",
            "m=video \(port) RTP/AVP \(payloadType)",
            "a=rtpmap:\(payloadType) H264/90000",
            "a=fmtp:\(payloadType) packetization-mode=\(mode.packetizationMode);profile-level-id=\(try profileLevelId(sps: first));"
                + "sprop-parameter-sets=\(spropParameterSets(sps + pps))",
        ]
        return lines.map { $0 + "\r\n" }.joined()
    }

    static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(b >> 4)], digits[Int(b & 15)]])
    }

    /// RFC 4648 section 4 base64 with `=` padding.
    public static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out: [Character] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = Int(bytes[i]), b1 = n > 1 ? Int(bytes[i + 1]) : 0, b2 = n > 2 ? Int(bytes[i + 2]) : 0
            let v = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[(v >> 18) & 63])
            out.append(alphabet[(v >> 12) & 63])
            out.append(n > 1 ? alphabet[(v >> 6) & 63] : "=")
            out.append(n > 2 ? alphabet[v & 63] : "=")
            i += 3
        }
        return String(out)
    }
}
