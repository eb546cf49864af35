/// SDP's `sprop-parameter-sets` (RFC 6184 8.1): the parameter sets of an RTP stream, sent out of band as NAL
/// units in base64 (RFC 4648 section 4), separated by commas: `Z0IAH5WoFAFuQA==,aM48gA==`.
public enum SpropParameterSets {
    /// Decodes a `sprop-parameter-sets` value into its NAL units.
    ///
    /// A leading `sprop-parameter-sets=` (the value copied with its name from an SDP `a=fmtp` line) is
    /// skipped. A part without its `=` padding (RFC 4648 3.2 requires it; some senders drop it) is decoded as if
    /// padded, and an empty part (a comma at either end, or two in a row: some senders end the list with a comma) is
    /// skipped, each with a warning (``ParsePolicy/lenient``) or refused (``ParsePolicy/strict``).
    /// - Parameters:
    ///   - value: the attribute value.
    ///   - policy: what to do with a part that lacks its padding, or an empty part.
    ///   - warnings: gets one ``ParseWarning`` (element `sprop-parameter-sets[i]`) per part decoded without its
    ///     padding or skipped as empty.
    /// - Returns: the NAL units in the order given (of any type: the caller checks they are SPSs and PPSs).
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` naming the part (`sprop-parameter-sets[1]`,
    ///   from 0) and the character offset where it starts in `value`, for an empty part (strict), a character outside
    ///   the base64 alphabet, a length no padding can mend, or non-zero bits after the last full byte; element
    ///   `sprop-parameter-sets` when no part holds anything.
    public static func decode(_ value: String, policy: ParsePolicy = .lenient, warnings: inout [ParseWarning]) throws -> [NALUnit] {
        var text = Array(value.utf8)
        var base = 0
        let name = Array("sprop-parameter-sets=".utf8)
        if text.starts(with: name) {
            text.removeFirst(name.count)
            base = name.count
        }
        var units: [NALUnit] = []
        var start = 0
        for (i, part) in text.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).enumerated() {
            let element = "sprop-parameter-sets[\(i)]"
            let offset = base + start
            start += part.count + 1
            guard !part.isEmpty else {
                let problem = "empty (two commas in a row, or one at either end)"
                if policy == .strict { throw H264Error.invalid(element: element, reason: problem, byteOffset: offset) }
                warnings.append(ParseWarning(element: element, problem: problem, reason: "skipped, the other parts kept (FFmpeg's RTP reader skips an empty part between commas, "
                                             + "and ignores the whole value after a trailing comma: \"Missing PPS in sprop-parameter-sets, ignoring\")"))
                continue
            }
            var padded = Array(part)
            let missing = (4 - padded.count % 4) % 4
            if missing > 0 && !padded.contains(UInt8(ascii: "=")) && missing < 3 {
                let problem = "base64 without its '=' padding (RFC 4648 3.2)"
                if policy == .strict { throw H264Error.invalid(element: element, reason: problem, byteOffset: offset) }
                warnings.append(ParseWarning(element: element, problem: problem, reason: "decoded as if padded, as many receivers do"))
                padded += Array(repeating: UInt8(ascii: "="), count: missing)
            }
            let bytes = try base64(padded, element: element, offset: offset)
            units.append(try NALUnit(bytes: bytes))
        }
        guard !units.isEmpty else {
            throw H264Error.invalid(element: "sprop-parameter-sets", reason: "no parameter set: every part is empty", byteOffset: base)
        }
        return units
    }

    /// RFC 4648 section 4 base64 with padding.
    /// - Throws: ``H264Error/invalid(element:reason:byteOffset:)`` at `offset` plus the position of the fault.
    static func base64(_ chars: [UInt8], element: String, offset: Int) throws -> [UInt8] {
        func value(_ c: UInt8) -> Int? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): return 62
            case UInt8(ascii: "/"): return 63
            default: return nil
            }
        }
        guard chars.count % 4 == 0 else {
            throw H264Error.invalid(element: element, reason: "not base64: \(chars.count) characters, not a multiple of 4", byteOffset: offset)
        }
        let padding = chars.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else {
            throw H264Error.invalid(element: element, reason: "not base64: \(padding) '=' at the end (at most 2)", byteOffset: offset)
        }
        var out: [UInt8] = []
        var accumulator = 0
        var bits = 0
        for (k, c) in chars.dropLast(padding).enumerated() {
            guard let v = value(c) else {
                let shown = c >= 0x20 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16))"
                throw H264Error.invalid(element: element, reason: "not base64: \(shown) at character \(offset + k)", byteOffset: offset)
            }
            accumulator = (accumulator << 6 | v) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((accumulator >> bits) & 0xFF))
            }
        }
        guard accumulator & ((1 << bits) - 1) == 0 else {
            throw H264Error.invalid(element: element, reason: "not base64: non-zero bits after the last byte", byteOffset: offset)
        }
        guard !out.isEmpty else {
            throw H264Error.invalid(element: element, reason: "decodes to no bytes", byteOffset: offset)
        }
        return out
    }
}
