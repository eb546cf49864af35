/// How this module treats input that breaks a rule a decoder can live with: the one leniency policy of the
/// module, after FFmpeg's (a value a decoder can use is warned about and used unless the caller asks for
/// strictness, `AV_EF_EXPLODE`; structural damage is always an error).
///
/// What is tolerated (accepted in ``lenient`` with a ``ParseWarning``, refused in ``strict`` with the
/// ``H264Error`` the value would otherwise give):
/// - a value outside the current edition's range that an earlier edition or common practice allows, or that does
///   not affect decoding: today the VUI elements `chroma_sample_loc_type_top_field`/`_bottom_field` (0-5),
///   `num_units_in_tick` and `time_scale` of 0 (kept as 0: no timing, as FFmpeg reads them),
///   `max_bytes_per_pic_denom` and `max_bits_per_mb_denom` (0-16), and `log2_max_mv_length_horizontal`/`_vertical`
///   (0-15; the 2003 edition allowed 0-16). VUI does not take part in decoding (H.264 Annex E);
/// - an empty NAL unit: a start code directly followed by another start code (or the end of the data) in Annex B,
///   a length of 0 in AVCC. It is skipped (FFmpeg's splitter drops them too);
/// - an SEI NAL unit that does not parse (SEI is not needed to decode: H.264 Annex D), skipped by the readers of
///   SEI (``AccessUnit/recoveryPoint(policy:warnings:)``, ``AccessUnit/hrdTiming(sps:activeSPS:policy:warnings:)``), and a
///   clock timestamp value of picture timing SEI outside its range (`seconds_value`, `minutes_value`, `hours_value`);
/// - a base64 part of SDP's sprop-parameter-sets without its `=` padding, or an empty part (``SpropParameterSets``);
/// - an SPS or PPS with no `rbsp_stop_one_bit`, or with data after its `rbsp_trailing_bits`
///   (``BitReader/rbspTrailingBits(after:)``), and an SEI without `rbsp_trailing_bits` after its last message
///   (``SEIMessage/parse(rbsp:policy:warnings:)``);
/// - start codes inside the bytes behind one AVCC length: NAL units packed as Annex B, split at the start codes
///   (``AVCC/split(_:lengthSize:policy:warnings:)``);
/// - a slice data partition (`nal_unit_type` 2-4) in a stream whose SPS is not of the Extended profile
///   (``DataPartitioning``).
///
/// Structural errors stay errors in both modes: a truncated NAL unit, a length beyond the data, a slice that
/// refers to a missing PPS, a value that decides how the rest is parsed (`cpb_cnt_minus1`, a bit count), a value
/// decoding uses (`log2_max_frame_num_minus4`, `max_num_reorder_frames`, ...).
public enum ParsePolicy: String, Sendable, Hashable {
    /// Accept what is tolerated, with a ``ParseWarning`` for each (the default).
    case lenient
    /// Refuse what is tolerated, with the ``H264Error`` it would give.
    case strict
}

/// Something ``ParsePolicy/lenient`` accepted that breaks a rule of the specification: which syntax element,
/// its value, the range the current edition allows, why it was accepted, and where it is.
///
/// ``description`` reads as the ``H264Error`` that ``ParsePolicy/strict`` throws for it, followed by
/// `; accepted: ` and ``reason``, e.g. `log2_max_mv_length_horizontal out of range (0-15): 16 (at bit 144);
/// accepted: the 2003 edition allowed 0-16, and VUI does not affect decoding (H.264 Annex E)`.
public struct ParseWarning: Hashable, Sendable, CustomStringConvertible {
    /// The syntax element as the specification names it (`log2_max_mv_length_horizontal`), or the container
    /// element (`nal_unit`, `NALUnitLength`, `sei_message`).
    public var element: String
    /// The value read, when the problem is a value.
    public var value: Int64?
    /// The range the current edition allows for ``value``.
    public var allowedRange: ClosedRange<Int64>?
    /// The problem itself when it is not a value out of range (`start code followed by no NAL unit`).
    public var problem: String?
    /// Why it was accepted and what was done with it.
    public var reason: String
    /// Index of the NAL unit it is in, in the sequence of NAL units being parsed; nil when the parser did not
    /// know it (filled in by the caller that does) or the problem is not inside a NAL unit (an empty one).
    public var nalUnitIndex: Int?
    /// Bit offset of the element in the NAL unit's RBSP (after the NAL unit header, as ``H264Error`` counts).
    public var bitOffset: Int?
    /// Byte offset in the buffer that was split (Annex B stream, AVCC sample), for container problems.
    public var byteOffset: Int?
    /// How many times it happened: 1, or for the warning the splitters fold the empty NAL units beyond the first
    /// ``listedEmptyNALUnits`` into, how many were folded (``byteOffset`` is then the first of them).
    public var count: Int = 1

    /// How many empty NAL units ``AnnexB/split(_:leadingData:policy:warnings:)`` and
    /// ``AVCC/split(_:lengthSize:policy:warnings:)`` report one by one; the rest are one warning with their
    /// ``count``, so the warnings of a hostile stream (every 3 bytes a start code, every 4 bytes a length of 0) stay
    /// a few lines, whatever its size.
    public static let listedEmptyNALUnits = 16

    /// A warning; see the properties.
    public init(element: String, value: Int64? = nil, allowedRange: ClosedRange<Int64>? = nil, problem: String? = nil,
                reason: String, nalUnitIndex: Int? = nil, bitOffset: Int? = nil, byteOffset: Int? = nil) {
        self.element = element
        self.value = value
        self.allowedRange = allowedRange
        self.problem = problem
        self.reason = reason
        self.nalUnitIndex = nalUnitIndex
        self.bitOffset = bitOffset
        self.byteOffset = byteOffset
    }

    /// What is wrong and where, without the reason: `log2_max_mv_length_horizontal out of range (0-15): 16 (at bit
    /// 144)`, or `nal_unit at byte 3: start code followed by no NAL unit (empty NAL unit)`.
    public var what: String {
        var text = element
        if let byteOffset { text += " at byte \(byteOffset)" }
        if let value, let r = allowedRange {
            text += " out of range (\(r.lowerBound)-\(r.upperBound)): \(value)"
        } else if let value {
            text += ": \(value)"
        }
        if let problem { text += ": \(problem)" }
        if let bitOffset { text += " (at bit \(bitOffset))" }
        if count > 1 { text += " (and \(count - 1) more like it after it)" }
        return text
    }

    public var description: String { "\(what); accepted: \(reason)" }
}

/// Counts the empty NAL units one split skips and reports them to a warnings list: the first
/// ``ParseWarning/listedEmptyNALUnits`` one by one, then one warning whose ``ParseWarning/count`` grows.
struct EmptyNALUnitTally {
    private var seen = 0
    private var foldedIndex: Int?

    mutating func add(_ warning: ParseWarning, to warnings: inout [ParseWarning]) {
        seen += 1
        if seen <= ParseWarning.listedEmptyNALUnits {
            warnings.append(warning)
        } else if let k = foldedIndex {
            warnings[k].count += 1
        } else {
            foldedIndex = warnings.count
            warnings.append(warning)
        }
    }
}
