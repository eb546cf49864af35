import CPcap
import Foundation

/// One UDP datagram of a capture.
public struct UDPDatagram: Sendable, Equatable {
    /// The capture record it came from, from 0.
    public var record: Int
    /// The record's time in seconds since the epoch.
    public var timeSeconds: Double
    public var sourcePort: Int
    public var destinationPort: Int
    /// The UDP payload.
    public var payload: [UInt8]
}

/// Captures read and written with libpcap (`pcap_open_offline`, `pcap_open_dead` + `pcap_dump_open`).
///
/// **Written**: link type EN10MB (Ethernet), each datagram in an Ethernet II frame (02:00:00:00:00:01 to
/// 02:00:00:00:00:02, EtherType 0x0800), an IPv4 header (RFC 791: 20 bytes, DF set, TTL 64, identification the record
/// number, header checksum computed) from 10.0.0.1 to 10.0.0.2, and a UDP header (RFC 768) with the checksum over the
/// IPv4 pseudo-header computed (0 sent as 0xFFFF), so Wireshark and tshark find no bad checksum.
///
/// **Read**: pcap and pcapng, link types EN10MB (Ethernet II, with or without one 802.1Q tag), RAW (IPv4 or IPv6
/// from the first byte) and LINUX_SLL (`tcpdump -i any`); IPv4 with any header length, IPv6 without extension headers.
/// Non-UDP packets are passed over, as are IPv4 fragments (counted in ``ReadResult/skipped``); a record cut short by the
/// capture's snapshot length is passed over with a warning.
public enum Pcap {
    /// What ``readUDP(path:)`` found.
    public struct ReadResult: Sendable {
        public var datagrams: [UDPDatagram]
        /// The link type's name (`EN10MB`).
        public var linkType: String
        /// Records read.
        public var records: Int
        /// Records that held no whole UDP datagram (another protocol, an IP fragment, ARP).
        public var skipped: Int
        public var warnings: [String]
    }

    /// A pcap record's capture time holds its whole seconds in 32 bits (`ts_sec`): times from 2^32 s on wrap.
    static let latestCaptureSeconds: Double = 4_294_967_296

    /// Writes UDP datagrams (each `(time, payload)`) from `port` to `port` as an Ethernet pcap.
    /// - Returns: the file's bytes (libpcap writes to a temporary file, read back; the caller places it).
    /// - Throws: `.software` when libpcap cannot open a dumper; `.ioError` when the temporary file cannot be written or read.
    static func ethernetCapture(_ datagrams: [(timeSeconds: Double, payload: [UInt8])], port: Int) throws -> [UInt8] {
        guard let dead = pcap_open_dead(DLT_EN10MB, 65_535) else { throw LabError.software("libpcap: pcap_open_dead failed") }
        defer { pcap_close(dead) }
        let temporary = NSTemporaryDirectory() + "enclab-rtp-\(getpid())-\(UUID().uuidString).pcap"
        defer { unlink(temporary) }
        guard let dumper = pcap_dump_open(dead, temporary) else {
            throw LabError.ioError("libpcap cannot write a temporary capture \(temporary): \(String(cString: pcap_geterr(dead)))")
        }
        for (k, d) in datagrams.enumerated() {
            let frame = ethernetFrame(udpPayload: d.payload, port: port, identification: k)
            var header = pcap_pkthdr()
            let whole = d.timeSeconds.rounded(.down)
            header.ts.tv_sec = Int(whole)
            header.ts.tv_usec = Int(((d.timeSeconds - whole) * 1_000_000).rounded())
            header.caplen = bpf_u_int32(frame.count)
            header.len = bpf_u_int32(frame.count)
            frame.withUnsafeBufferPointer { enclab_pcap_dump(dumper, &header, $0.baseAddress) }
        }
        if pcap_dump_flush(dumper) != 0 {
            pcap_dump_close(dumper)
            throw LabError.ioError("libpcap could not write the temporary capture \(temporary)")
        }
        pcap_dump_close(dumper)
        guard let data = FileManager.default.contents(atPath: temporary) else {
            throw LabError.ioError("cannot read back the temporary capture \(temporary)")
        }
        return [UInt8](data)
    }

    /// The Ethernet II frame of one UDP datagram (see ``Pcap``).
    static func ethernetFrame(udpPayload: [UInt8], port: Int, identification: Int) -> [UInt8] {
        let source: [UInt8] = [10, 0, 0, 1], destination: [UInt8] = [10, 0, 0, 2]
        let udpLength = 8 + udpPayload.count
        let totalLength = 20 + udpLength
        var ip: [UInt8] = [0x45, 0, UInt8(totalLength >> 8), UInt8(totalLength & 0xFF),
                           UInt8((identification >> 8) & 0xFF), UInt8(identification & 0xFF), 0x40, 0,
                           64, 17, 0, 0] + source + destination
        let ipSum = checksum(ip)
        ip[10] = UInt8(ipSum >> 8)
        ip[11] = UInt8(ipSum & 0xFF)
        var udp: [UInt8] = [UInt8(port >> 8), UInt8(port & 0xFF), UInt8(port >> 8), UInt8(port & 0xFF),
                            UInt8(udpLength >> 8), UInt8(udpLength & 0xFF), 0, 0] + udpPayload
        // The pseudo-header (RFC 768): source, destination, zero, protocol 17, UDP length.
        var udpSum = checksum(source + destination + [0, 17, UInt8(udpLength >> 8), UInt8(udpLength & 0xFF)] + udp)
        if udpSum == 0 { udpSum = 0xFFFF }
        udp[6] = UInt8(udpSum >> 8)
        udp[7] = UInt8(udpSum & 0xFF)
        let ethernet: [UInt8] = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]
        return ethernet + ip + udp
    }

    /// The Internet checksum (RFC 1071): the one's complement of the one's complement sum of 16-bit big-endian words,
    /// an odd last byte padded with zero.
    static func checksum(_ bytes: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        var i = 0
        while i + 1 < bytes.count {
            sum += UInt32(bytes[i]) << 8 | UInt32(bytes[i + 1])
            i += 2
        }
        if i < bytes.count { sum += UInt32(bytes[i]) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return ~UInt16(sum)
    }

    /// Reads every UDP datagram of a pcap or pcapng capture.
    /// - Throws: `.noInput` when the file is missing or cannot be opened; `.data` naming the file when libpcap
    ///   refuses it (not a capture: its message), a record is truncated (the file ends inside it: libpcap's message and
    ///   the record number), or the link type is not EN10MB, RAW or LINUX_SLL (naming it).
    public static func readUDP(path: String) throws -> ReadResult {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw LabError.noInput("\(path): no such file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        return try Interruption.endingAtOnce(reading: path, naming: path) { try readUDPNow(path: path) }
    }

    /// ``readUDP(path:)`` once the file is known to exist and be readable.
    private static func readUDPNow(path: String) throws -> ReadResult {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let handle = pcap_open_offline(path, &errorBuffer) else {
            let message = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw LabError.data("\(path): not a capture libpcap can read (pcap or pcapng): \(message)")
        }
        defer { pcap_close(handle) }
        let link = pcap_datalink(handle)
        let linkName = pcap_datalink_val_to_name(link).map { String(cString: $0) } ?? "\(link)"
        let raw = enclab_dlt_raw()
        guard link == DLT_EN10MB || link == raw || link == DLT_LINUX_SLL || link == 228 || link == 229 else {
            throw LabError.data("\(path): link type \(linkName) (\(link)): enclab rtp reads EN10MB (Ethernet), RAW (IP) and LINUX_SLL captures")
        }
        var result = ReadResult(datagrams: [], linkType: linkName, records: 0, skipped: 0, warnings: [])
        var cut = 0
        while true {
            var header: UnsafeMutablePointer<pcap_pkthdr>?
            var data: UnsafePointer<UInt8>?
            let status = pcap_next_ex(handle, &header, &data)
            if status == PCAP_ERROR_BREAK { break }   // -2: the end of the file
            guard status == 1, let header, let data else {
                let message = String(cString: pcap_geterr(handle))
                throw LabError.data("\(path): record \(result.records) cannot be read: \(message) (a truncated or damaged capture)")
            }
            let record = result.records
            result.records += 1
            let caplen = Int(header.pointee.caplen)
            let bytes = [UInt8](UnsafeBufferPointer(start: data, count: caplen))
            let time = Double(header.pointee.ts.tv_sec) + Double(header.pointee.ts.tv_usec) / 1_000_000
            guard caplen >= Int(header.pointee.len) else {
                cut += 1
                if cut <= 3 {
                    result.warnings.append("\(path): record \(record) holds \(caplen) of its \(header.pointee.len) bytes (the capture's snapshot length cut it): passed over")
                }
                continue
            }
            if let d = udp(bytes, link: link, raw: raw) {
                result.datagrams.append(UDPDatagram(record: record, timeSeconds: time, sourcePort: d.source, destinationPort: d.destination, payload: d.payload))
            } else {
                result.skipped += 1
            }
        }
        if cut > 3 { result.warnings.append("\(path): \(cut - 3) more records cut by the snapshot length passed over") }
        return result
    }

    /// The UDP datagram in a link-layer frame, or nil when it holds none (not IP, not UDP, an IPv4 fragment, too short).
    static func udp(_ b: [UInt8], link: Int32, raw: Int32) -> (source: Int, destination: Int, payload: [UInt8])? {
        var p = 0
        var etherType = 0
        switch link {
        case DLT_EN10MB:
            guard b.count >= 14 else { return nil }
            etherType = Int(b[12]) << 8 | Int(b[13])
            p = 14
            if etherType == 0x8100 {
                guard b.count >= 18 else { return nil }
                etherType = Int(b[16]) << 8 | Int(b[17])
                p = 18
            }
        case DLT_LINUX_SLL:
            guard b.count >= 16 else { return nil }
            etherType = Int(b[14]) << 8 | Int(b[15])
            p = 16
        default:   // raw IP
            guard let first = b.first else { return nil }
            etherType = first >> 4 == 4 ? 0x0800 : first >> 4 == 6 ? 0x86DD : 0
        }
        var udpStart = 0
        var udpEnd = 0
        switch etherType {
        case 0x0800:
            guard b.count - p >= 20, b[p] >> 4 == 4 else { return nil }
            let headerLength = Int(b[p] & 0x0F) * 4
            let total = Int(b[p + 2]) << 8 | Int(b[p + 3])
            let fragment = (Int(b[p + 6]) << 8 | Int(b[p + 7])) & 0x3FFF   // MF flag and fragment offset
            guard headerLength >= 20, b[p + 9] == 17, fragment == 0, total >= headerLength, b.count - p >= total else { return nil }
            udpStart = p + headerLength
            udpEnd = p + total
        case 0x86DD:
            guard b.count - p >= 40, b[p] >> 4 == 6, b[p + 6] == 17 else { return nil }
            let payloadLength = Int(b[p + 4]) << 8 | Int(b[p + 5])
            guard b.count - p - 40 >= payloadLength else { return nil }
            udpStart = p + 40
            udpEnd = udpStart + payloadLength
        default:
            return nil
        }
        guard udpEnd - udpStart >= 8 else { return nil }
        let length = Int(b[udpStart + 4]) << 8 | Int(b[udpStart + 5])
        guard length >= 8, udpStart + length <= udpEnd else { return nil }
        return (Int(b[udpStart]) << 8 | Int(b[udpStart + 1]), Int(b[udpStart + 2]) << 8 | Int(b[udpStart + 3]),
                Array(b[(udpStart + 8)..<(udpStart + length)]))
    }
}
