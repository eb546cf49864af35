import Foundation
@testable import H264

/// The test vectors folder, found from this file's path (no Package.swift resources needed).
let vectorsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")
/// The repository root (for fuzz/regressions).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Reads a vector made by Vectors/make_vectors.sh.
func vector(_ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: vectorsDirectory.appendingPathComponent(name)))
}

/// Bytes from a hex string; spaces ignored.
func hex(_ s: String) -> [UInt8] {
    let digits = Array(s.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Writes bits MSB first, for hand-built RBSPs (the inverse of BitReader; test-only).
struct BitWriter {
    var bytes: [UInt8] = []
    var bitCount = 0
    mutating func u(_ n: Int, _ value: Int) {
        for i in stride(from: n - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (bitCount % 8)) }
            bitCount += 1
        }
    }
    mutating func flag(_ b: Bool) { u(1, b ? 1 : 0) }
    /// ue(v): codeNum + 1 in binary, preceded by (length − 1) zeros.
    mutating func ue(_ v: Int) {
        let x = v + 1
        let len = Int.bitWidth - x.leadingZeroBitCount
        u(len - 1, 0)
        u(len, x)
    }
    mutating func se(_ v: Int) { ue(v > 0 ? 2 * v - 1 : -2 * v) }
    /// rbsp_trailing_bits: a 1 then zeros to the byte boundary.
    mutating func trailing() {
        u(1, 1)
        while bitCount % 8 != 0 { u(1, 0) }
    }
}

/// A Baseline SPS RBSP with the given fields, for range and cropping tests.
func baselineSPS(id: Int = 0, log2MaxFrameNumMinus4: Int = 0, pocType: Int = 2, widthMbs: Int = 4, heightMapUnits: Int = 3,
                 frameMbsOnly: Bool = true, crop: (Int, Int, Int, Int)? = nil) -> [UInt8] {
    var w = BitWriter()
    w.u(8, 66)            // profile_idc Baseline
    w.u(8, 0)             // constraint flags, reserved_zero_2bits
    w.u(8, 30)            // level_idc
    w.ue(id)              // seq_parameter_set_id
    w.ue(log2MaxFrameNumMinus4)
    w.ue(pocType)         // pic_order_cnt_type
    if pocType == 0 { w.ue(0) }
    w.ue(1)               // max_num_ref_frames
    w.flag(false)         // gaps_in_frame_num_value_allowed_flag
    w.ue(widthMbs - 1)
    w.ue(heightMapUnits - 1)
    w.flag(frameMbsOnly)
    if !frameMbsOnly { w.flag(false) }  // mb_adaptive_frame_field_flag
    w.flag(true)          // direct_8x8_inference_flag
    if let crop {
        w.flag(true)
        w.ue(crop.0); w.ue(crop.1); w.ue(crop.2); w.ue(crop.3)
    } else {
        w.flag(false)
    }
    w.flag(false)         // vui_parameters_present_flag
    w.trailing()
    return w.bytes
}

/// NAL units of an Annex B vector.
func nalUnits(_ name: String) throws -> [NALUnit] {
    try AnnexB.split(vector(name)).map(\.nal)
}
