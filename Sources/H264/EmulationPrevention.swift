/// Emulation prevention (H.264 clause 7.4.1, `emulation_prevention_three_byte`).
///
/// Three views of a NAL unit are kept apart in this module, as FFmpeg's `h2645_parse.h` does:
/// - the **escaped bytes** (`NALUnit.bytes`): what travels in a stream, where every
///   `0x00 0x00` followed by a byte `0x00`...`0x03` has a `0x03` inserted after the two zeros;
/// - the **RBSP** (raw byte sequence payload): the escaped bytes after the NAL unit header with
///   those `0x03` bytes removed;
/// - the **SODB** (string of data bits): the RBSP up to, not including, the `rbsp_stop_one_bit`.
public enum EmulationPrevention {
    /// Removes every `emulation_prevention_three_byte`: a `0x03` that follows two `0x00` bytes
    /// (counted from the start or from the last removed `0x03`).
    ///
    /// Lenient: malformed sequences (`0x00 0x00 0x00`, or `0x00 0x00 0x03` followed by a byte
    /// greater than 3) are copied through without error.
    /// - Parameter escaped: escaped bytes, any length.
    /// - Returns: the RBSP bytes, at most `escaped.count` long.
    public static func remove(_ escaped: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(escaped.count)
        var zeros = 0
        for b in escaped {
            if zeros >= 2 && b == 0x03 {
                zeros = 0
                continue
            }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// Inserts an `emulation_prevention_three_byte` wherever two `0x00` bytes are followed by a
    /// byte in `0x00`...`0x03`, and after two trailing `0x00` bytes at the end (clause 7.4.1: the
    /// last byte of a NAL unit shall not be `0x00`).
    /// - Parameter rbsp: RBSP bytes, any length.
    /// - Returns: escaped bytes; `remove(insert(x)) == x` for every `x`.
    public static func insert(_ rbsp: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(rbsp.count + rbsp.count / 64 + 1)
        var zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 0x03 {
                out.append(0x03)
                zeros = 0
            }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        if zeros >= 2 { out.append(0x03) }
        return out
    }

    /// The number of `emulation_prevention_three_byte`s that ``remove(_:)`` would drop.
    public static func count(in escaped: [UInt8]) -> Int {
        var n = 0
        var zeros = 0
        for b in escaped {
            if zeros >= 2 && b == 0x03 { n += 1; zeros = 0; continue }
            zeros = b == 0 ? zeros + 1 : 0
        }
        return n
    }
}
