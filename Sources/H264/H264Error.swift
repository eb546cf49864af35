/// The one error type of the `H264` module.
///
/// Every case names where the problem is (a byte offset into the container being split, or a bit
/// offset into the RBSP being parsed), the syntax element involved and, where the H.264 or
/// ISO/IEC 14496-15 specification gives one, the allowed range. ``description`` renders the
/// message in the style of FFmpeg's `h264_ps.c`, e.g.
/// `log2_max_frame_num_minus4 out of range (0-12): 15 (at bit 40)`.
///
/// Bit offsets count from the first bit of the RBSP that follows the NAL unit header (the header
/// byte itself is not counted). Byte offsets count from the first byte of the buffer handed to the
/// function that threw.
public enum H264Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The data ended while reading `element`; `bitOffset` is where the read started and
    /// no value could be read.
    case endOfData(element: String, bitOffset: Int)
    /// A syntax element's value lies outside the range the specification allows.
    case outOfRange(element: String, value: Int64, range: ClosedRange<Int64>, bitOffset: Int)
    /// A value this module was asked to write, or an argument, lies outside what the format can
    /// hold (e.g. a NAL unit too long for a 2-byte AVCC length); no bitstream position applies.
    case valueOutOfRange(element: String, value: Int64, range: ClosedRange<Int64>)
    /// A container (Annex B stream, AVCC sample, avcC record, packet) is truncated: `element`
    /// starting at `byteOffset` needs `needed` bytes but only `available` remain.
    case truncated(element: String, byteOffset: Int, needed: Int, available: Int)
    /// Data that is malformed in a way a range cannot express; `reason` says how.
    case invalid(element: String, reason: String, byteOffset: Int)
    /// A slice or PPS refers to a parameter set that has not been seen.
    case missingParameterSet(element: String, id: Int, bitOffset: Int)

    public var description: String {
        switch self {
        case let .endOfData(element, bitOffset):
            return "end of data reading \(element) (at bit \(bitOffset))"
        case let .outOfRange(element, value, range, bitOffset):
            return "\(element) out of range (\(range.lowerBound)-\(range.upperBound)): \(value) (at bit \(bitOffset))"
        case let .valueOutOfRange(element, value, range):
            return "\(element) out of range (\(range.lowerBound)-\(range.upperBound)): \(value)"
        case let .truncated(element, byteOffset, needed, available):
            return "\(element) truncated at byte \(byteOffset): needs \(needed) bytes, \(available) available"
        case let .invalid(element, reason, byteOffset):
            return "invalid \(element) at byte \(byteOffset): \(reason)"
        case let .missingParameterSet(element, id, bitOffset):
            return "\(element) \(id) refers to a parameter set not seen before (at bit \(bitOffset))"
        }
    }
}
