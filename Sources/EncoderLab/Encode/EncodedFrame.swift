/// The picture type of one coded frame, as x264 reports it in `x264_picture_t.i_type` (x264.h `X264_TYPE_*`).
public enum FrameType: String, Sendable, CaseIterable {
    /// An IDR picture (nal_unit_type 5).
    case idr = "IDR"
    /// A non-IDR I picture (e.g. an open-GOP keyframe or a scenecut inside min-keyint).
    case i = "I"
    case p = "P"
    /// A B picture kept as a reference (nal_ref_idc > 0), x264's `X264_TYPE_BREF`.
    case bref = "Bref"
    /// A non-reference B picture (nal_ref_idc 0).
    case b = "B"
}

/// One NAL unit as x264 wrote it: its type, nal_ref_idc and bytes (Annex B start code included).
public struct WrittenNAL: Sendable {
    /// nal_unit_type (H.264 Table 7-1).
    public var type: Int
    /// nal_ref_idc (0 to 3).
    public var refIdc: Int
    /// The NAL unit as written, with its start code.
    public var bytes: [UInt8]
}

/// What the lab records for one output frame (one access unit), in decode order.
public struct EncodedFrame: Sendable {
    /// Position in decode (coded) order, from 0.
    public var codedIndex: Int
    /// The input frame number this picture came from (display order), from 0.
    public var displayIndex: Int
    public var type: FrameType
    /// x264's `b_keyframe`: a point a decoder can start from.
    public var keyframe: Bool
    /// Presentation time in the run's timebase (ticks of timebase_num/timebase_den seconds).
    public var pts: Int64
    /// Decode time in the run's timebase; negative for the first frames when B-frames delay output.
    public var dts: Int64
    /// The frame's average QP over its macroblocks (x264's `f_qp_avg_aq`, from its per-frame debug line).
    public var qp: Double
    /// PSNR in dB of Y, U and V against the (cropped) source; nil when x264 computes none (`--qp 0`).
    public var psnrY: Double?
    public var psnrU: Double?
    public var psnrV: Double?
    /// x264's `f_psnr_avg`: PSNR of the squared error summed over all three planes divided by all their samples.
    public var psnrAvg: Double?
    /// x264's luma SSIM (0 to 1); nil when x264 computes none.
    public var ssim: Double?
    /// The NAL units of the access unit, in the order written; the lab empties this once the bytes are in
    /// the stream file, so a long clip's frames do not hold the whole stream in memory.
    public var nals: [WrittenNAL]
    /// Every byte of the access unit as written: start codes, headers and filler included.
    public let sizeBytes: Int
    /// Bytes of SPS, PPS, SEI and AUD NAL units (types 7, 8, 6, 9), start codes included.
    public let headerBytes: Int
    /// Bytes of filler data NAL units (type 12), start codes included.
    public let fillerBytes: Int
    /// The encoder call that returned this frame, counted from 0 (one per picture handed in, then one per flush
    /// call); nil for an encoder that does not say (docs/schema.md, "Encoder delay").
    public var outputCall: Int?
    /// The frames the encoder held right after that call (x264's `x264_encoder_delayed_frames`); nil likewise.
    public var delayedFrames: Int?

    init(codedIndex: Int, displayIndex: Int, type: FrameType, keyframe: Bool, pts: Int64, dts: Int64, qp: Double,
         psnrY: Double?, psnrU: Double?, psnrV: Double?, psnrAvg: Double?, ssim: Double?, nals: [WrittenNAL]) {
        self.codedIndex = codedIndex; self.displayIndex = displayIndex; self.type = type; self.keyframe = keyframe
        self.pts = pts; self.dts = dts; self.qp = qp; self.psnrY = psnrY; self.psnrU = psnrU; self.psnrV = psnrV
        self.psnrAvg = psnrAvg; self.ssim = ssim; self.nals = nals
        sizeBytes = nals.reduce(0) { $0 + $1.bytes.count }
        headerBytes = nals.filter { [6, 7, 8, 9].contains($0.type) }.reduce(0) { $0 + $1.bytes.count }
        fillerBytes = nals.filter { $0.type == 12 }.reduce(0) { $0 + $1.bytes.count }
    }

    /// A frame of a stream the lab did not make (`enclab check --db`), its byte counts as read from the stream (no
    /// NAL units kept), no PSNR or SSIM, and `qp` 0, which the store writes as NULL (`frames.qp`).
    init(codedIndex: Int, displayIndex: Int, type: FrameType, pts: Int64, dts: Int64, sizeBytes: Int, headerBytes: Int, fillerBytes: Int) {
        self.codedIndex = codedIndex; self.displayIndex = displayIndex; self.type = type; self.keyframe = type == .idr
        self.pts = pts; self.dts = dts; self.qp = 0; self.nals = []
        self.sizeBytes = sizeBytes; self.headerBytes = headerBytes; self.fillerBytes = fillerBytes
    }
}
