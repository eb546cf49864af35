import Foundation

/// A field-coded (PAFF) H.264 stream made by hand, since the x264 CLI cannot write one: 2 x `frames` half-height
/// pictures (the fields, top then bottom, 50 a second) are encoded intra-only by the x264 CLI (every picture an IDR,
/// CAVLC, no deblocking, no 8x8 transform), and the headers are rewritten so each coded picture becomes one field of a
/// frame:
///
/// - SPS: profile_idc 77 (Main; Baseline forbids field coding), constraint_set1_flag, level_idc 30 (levels under
///   2.1 require frame_mbs_only_flag 1, H.264 A.3.3), max_num_ref_frames >= 1 (the second field of a frame refers to
///   nothing, but both fields are reference fields), pic_order_cnt_type 0 with 6-bit pic_order_cnt_lsb,
///   frame_mbs_only_flag 0 and mb_adaptive_frame_field_flag 0; pic_height_in_map_units_minus1 is kept, so the frame
///   is twice the field's height (FrameHeightInMbs = 2 x PicHeightInMapUnits, H.264 7.4.2.1.1); the VUI timing is
///   x264's for `--fps 25` (num_units_in_tick 1, time_scale 50): a field lasts one tick, 0.02 s (Table E-6), and
///   max_dec_frame_buffering >= 1.
/// - Each slice: field_pic_flag 1, bottom_field_flag 0 for the even fields (top) and 1 for the odd ones; the first
///   field of the frames in `idrFrames` is an IDR (nal_unit_type 5, idr_pic_id counting from 0), every other field
///   a non-IDR I field (nal_unit_type 1) with adaptive_ref_pic_marking_mode_flag 0; frame_num 0 from an IDR frame,
///   +1 per frame after it, the same for both fields; pic_order_cnt_lsb = 2 x (frames since the IDR) + (1 for a
///   bottom field); nal_ref_idc kept (3). slice_qp_delta, the deblocking elements and the slice data are copied
///   bit for bit.
///
/// Intra macroblocks decode the same in a field as in a picture of the field's size except for two things: deblocking
/// (bS 3 instead of 4 on horizontal edges in field pictures, H.264 8.7.2.1), left out of the encode, and the order of
/// transform coefficients (the field scan, 8.5.6), which CAVLC parses the same way but places differently. So the
/// fields' pictures are flat per macroblock (a `geq` pattern that changes from field to field): with the prediction
/// modes x264 picks for them each 4x4 block's residual is flat too, only coefficient 0 (the same in both scans) is
/// coded, and the field-coded stream decodes to exactly the pictures of the field encode woven top field first
/// (`FieldPictureTests.witnesses` checks it with framemd5).
///
/// The code reads and writes bits and emulation prevention itself: it does not use the `H264` module it tests.
enum FieldStream {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Makes `name` (Annex B) in `dir`: `frames` frames of `width`x`height` (multiples of 16 and 32, so neither the
    /// fields nor the frames are cropped), the first field of each frame in `idrFrames` an IDR. Leaves the fields
    /// (`fields.y4m`, `width`x`height/2`) and their x264 encode (`fields.264`) beside it.
    static func make(in dir: String, name: String, width: Int = 64, height: Int = 64, frames: Int = 4, idrFrames: Set<Int> = [0]) throws {
        func run(_ tool: String, _ args: [String]) throws {
            let r = try CommandLineTests.process("/usr/bin/\(tool)", args, in: dir)
            guard r.status == 0 else { throw Failure(description: "\(tool) \(args): \(r.stderr)") }
        }
        // Luma flat per 16x16 macroblock, chroma per 8x8; N (the field's number) moves every value.
        let pattern = "geq=lum='16+mod(floor(X/16)*37+floor(Y/16)*53+N*29\\,200)':cb='40+mod(floor(X/8)*23+N*41\\,170)'"
            + ":cr='40+mod(floor(Y/8)*61+N*17\\,170)'"
        try run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=size=\(width)x\(height / 2):rate=50,format=yuv420p,\(pattern)",
                           "-frames:v", "\(2 * frames)", "fields.y4m"])
        // --fps 25: VUI num_units_in_tick 1, time_scale 50.
        try run("x264", ["--quiet", "--threads", "1", "--keyint", "1", "--bframes", "0", "--no-cabac", "--no-deblock", "--no-8x8dct",
                         "--qp", "30", "--fps", "25", "-o", "fields.264", "fields.y4m"])
        let encoded = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/fields.264")))
        try Data(try rewrite(encoded, idrFrames: idrFrames)).write(to: URL(fileURLWithPath: "\(dir)/\(name)"))
    }

    /// The rewrite described above, on the x264 CLI's Annex B output.
    static func rewrite(_ stream: [UInt8], idrFrames: Set<Int>) throws -> [UInt8] {
        var out: [UInt8] = []
        var log2MaxFrameNum = 0
        var field = 0
        var frameNum = 0, idrPicId = 0, sinceIDR = 0
        for nal in split(stream) {
            let header = nal[0], type = Int(header & 0x1F)
            var rbsp = unescape(Array(nal.dropFirst()))
            var newHeader = header
            switch type {
            case 7:
                (rbsp, log2MaxFrameNum) = try rewriteSPS(rbsp)
            case 5:
                let frame = field / 2, bottom = field % 2 == 1
                let idr = !bottom && idrFrames.contains(frame)
                if !bottom {
                    if idr { if frame > 0 { idrPicId += 1 }; frameNum = 0; sinceIDR = 0 }
                    else if frame > 0 { frameNum += 1; sinceIDR += 1 }
                }
                rbsp = try rewriteSlice(rbsp, log2MaxFrameNum: log2MaxFrameNum, bottom: bottom, idrPicId: idr ? idrPicId : nil,
                                        frameNum: frameNum, pocLsb: 2 * sinceIDR + (bottom ? 1 : 0))
                newHeader = (header & 0xE0) | (idr ? 5 : 1)
                field += 1
            case 1:
                throw Failure(description: "a non-IDR slice in the field encode (expected --keyint 1)")
            default:
                break
            }
            out += [0, 0, 0, 1, newHeader] + escape(rbsp)
        }
        return out
    }

    /// SPS: see the type's description. Returns the new RBSP and log2(MaxFrameNum).
    static func rewriteSPS(_ rbsp: [UInt8]) throws -> ([UInt8], Int) {
        var r = Reader(rbsp), w = Writer()
        let profile = r.u(8)
        guard profile == 66 || profile == 77 else { throw Failure(description: "SPS profile_idc \(profile): expected x264's 66 or 77") }
        _ = r.u(8)
        w.u(8, 77)
        w.u(8, 0x40)          // constraint_set1_flag: conforms to Main
        _ = r.u(8); w.u(8, 30)  // level_idc 3.0
        w.ue(r.ue())          // seq_parameter_set_id
        let log2MaxFrameNumMinus4 = r.ue()
        w.ue(log2MaxFrameNumMinus4)
        let pocType = r.ue()
        guard pocType == 2 else { throw Failure(description: "SPS pic_order_cnt_type \(pocType): expected x264's 2") }
        w.ue(0)
        w.ue(2)               // log2_max_pic_order_cnt_lsb_minus4: 6 bits
        w.ue(max(r.ue(), 1))  // max_num_ref_frames
        w.flag(r.flag())      // gaps_in_frame_num_value_allowed_flag
        w.ue(r.ue())          // pic_width_in_mbs_minus1
        w.ue(r.ue())          // pic_height_in_map_units_minus1
        guard r.flag() else { throw Failure(description: "SPS frame_mbs_only_flag is already 0") }
        w.flag(false)         // frame_mbs_only_flag
        w.flag(false)         // mb_adaptive_frame_field_flag
        let direct8x8 = r.flag()
        guard direct8x8 else { throw Failure(description: "SPS direct_8x8_inference_flag 0 (field coding needs 1)") }
        w.flag(direct8x8)
        guard !r.flag() else { throw Failure(description: "SPS frame_cropping_flag 1: choose a height that is a multiple of 32") }
        w.flag(false)
        let vui = r.flag()
        w.flag(vui)
        if vui {
            let aspect = r.flag(); w.flag(aspect)
            if aspect { let idc = r.u(8); w.u(8, idc); if idc == 255 { w.u(32, r.u(32)) } }
            let overscan = r.flag(); w.flag(overscan)
            if overscan { w.flag(r.flag()) }
            let signal = r.flag(); w.flag(signal)
            if signal {
                w.u(4, r.u(4))
                let colour = r.flag(); w.flag(colour)
                if colour { w.u(24, r.u(24)) }
            }
            let chromaLoc = r.flag(); w.flag(chromaLoc)
            if chromaLoc { w.ue(r.ue()); w.ue(r.ue()) }
            let timing = r.flag(); w.flag(timing)
            if timing { w.u(32, r.u(32)); w.u(32, r.u(32)); w.flag(r.flag()) }
            let nalHRD = r.flag(), vclHRD = r.flag()
            guard !nalHRD && !vclHRD else { throw Failure(description: "SPS VUI with HRD parameters (not copied here)") }
            w.flag(false); w.flag(false)
            w.flag(r.flag())  // pic_struct_present_flag
            let restriction = r.flag(); w.flag(restriction)
            if restriction {
                w.flag(r.flag())
                for _ in 0..<5 { w.ue(r.ue()) }   // max_bytes_per_pic_denom ... max_num_reorder_frames
                w.ue(max(r.ue(), 1))             // max_dec_frame_buffering
            }
        }
        w.trailing()
        return (w.bytes, log2MaxFrameNumMinus4 + 4)
    }

    /// One slice of x264's intra-only encode (an IDR I slice of a CAVLC picture whose PPS has
    /// deblocking_filter_control_present_flag 1, bottom_field_pic_order_in_frame_present_flag 0 and
    /// redundant_pic_cnt_present_flag 0) as a field: see the type's description.
    static func rewriteSlice(_ rbsp: [UInt8], log2MaxFrameNum: Int, bottom: Bool, idrPicId: Int?, frameNum: Int, pocLsb: Int) throws -> [UInt8] {
        var r = Reader(rbsp), w = Writer()
        w.ue(r.ue())                      // first_mb_in_slice
        let sliceType = r.ue()
        guard sliceType % 5 == 2 else { throw Failure(description: "slice_type \(sliceType): expected I") }
        w.ue(sliceType)
        w.ue(r.ue())                      // pic_parameter_set_id
        _ = r.u(log2MaxFrameNum)
        w.u(log2MaxFrameNum, frameNum)
        w.flag(true)                      // field_pic_flag
        w.flag(bottom)                    // bottom_field_flag
        _ = r.ue()                        // idr_pic_id of the field encode
        if let idrPicId { w.ue(idrPicId) }
        w.u(6, pocLsb)                    // pic_order_cnt_lsb
        // dec_ref_pic_marking(): IDR no_output_of_prior_pics_flag, long_term_reference_flag; else the sliding window.
        _ = r.flag(); _ = r.flag()
        if idrPicId != nil { w.flag(false); w.flag(false) } else { w.flag(false) }
        w.se(r.se())                      // slice_qp_delta
        let disable = r.ue()              // disable_deblocking_filter_idc
        w.ue(disable)
        if disable != 1 { w.se(r.se()); w.se(r.se()) }
        // slice_data() up to the rbsp_stop_one_bit, then new trailing bits.
        let stop = try lastOneBit(rbsp)
        while r.position < stop { w.u(1, r.u(1)) }
        w.trailing()
        return w.bytes
    }

    /// The bit position of the rbsp_stop_one_bit: the last 1 bit.
    static func lastOneBit(_ rbsp: [UInt8]) throws -> Int {
        guard let i = rbsp.lastIndex(where: { $0 != 0 }) else { throw Failure(description: "an RBSP with no stop bit") }
        return i * 8 + 7 - rbsp[i].trailingZeroBitCount
    }

    /// NAL units of an Annex B stream (header byte first), without start codes or trailing zero bytes.
    static func split(_ s: [UInt8]) -> [[UInt8]] {
        var starts: [Int] = []
        var i = 0
        while i + 2 < s.count {
            if s[i] == 0 && s[i + 1] == 0 && s[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts.enumerated().map { k, start in
            var end = k + 1 < starts.count ? starts[k + 1] - 3 : s.count
            while end > start && s[end - 1] == 0 { end -= 1 }
            return Array(s[start..<end])
        }
    }

    /// Removes emulation_prevention_three_byte (00 00 03 -> 00 00).
    static func unescape(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        for x in b {
            if zeros >= 2 && x == 3 { zeros = 0; continue }
            out.append(x)
            zeros = x == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// Inserts emulation_prevention_three_byte after 00 00 before a byte <= 3 (H.264 7.4.1).
    static func escape(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        for x in b {
            if zeros >= 2 && x <= 3 { out.append(3); zeros = 0 }
            out.append(x)
            zeros = x == 0 ? zeros + 1 : 0
        }
        return out
    }

    struct Reader {
        let bytes: [UInt8]
        var position = 0
        init(_ b: [UInt8]) { bytes = b }
        mutating func u(_ n: Int) -> Int {
            var v = 0
            for _ in 0..<n {
                let bit = position / 8 < bytes.count ? Int(bytes[position / 8] >> (7 - position % 8)) & 1 : 0
                v = v << 1 | bit
                position += 1
            }
            return v
        }
        mutating func flag() -> Bool { u(1) == 1 }
        mutating func ue() -> Int {
            var zeros = 0
            while u(1) == 0 && zeros < 32 { zeros += 1 }
            return (1 << zeros) - 1 + u(zeros)
        }
        mutating func se() -> Int { let k = ue(); return k % 2 == 1 ? (k + 1) / 2 : -(k / 2) }
    }

    struct Writer {
        var bytes: [UInt8] = []
        var count = 0
        mutating func u(_ n: Int, _ value: Int) {
            for i in stride(from: n - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
                count += 1
            }
        }
        mutating func flag(_ b: Bool) { u(1, b ? 1 : 0) }
        mutating func ue(_ v: Int) {
            let x = v + 1, length = Int.bitWidth - x.leadingZeroBitCount
            u(length - 1, 0)
            u(length, x)
        }
        mutating func se(_ v: Int) { ue(v > 0 ? 2 * v - 1 : -2 * v) }
        mutating func trailing() {
            u(1, 1)
            while count % 8 != 0 { u(1, 0) }
        }
    }
}
