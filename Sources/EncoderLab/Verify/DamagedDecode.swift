import CAVCodec
import Foundation

/// libavcodec's H.264 decoder on a stream that lost packets (the RTP stage's damaged stream, docs/rtp.md): the same
/// decoder and defaults as the verify stage (one thread, libavcodec's own error concealment), but nothing it says about
/// damage fails the run: an access unit it refuses is counted, a picture it flags (`decode_error_flags`) is kept and
/// marked concealed. What it outputs is what is measured.
///
/// Each access unit is handed in with its display index as `pts`, so each picture that comes out names the frame it
/// shows (libavcodec carries the packet's pts to the picture through its reordering).
final class DamagedStreamDecoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    let width: Int, height: Int
    /// Access units libavcodec refused (`avcodec_send_packet` < 0).
    private(set) var refused = 0
    /// Called with each picture output: the display index its pts names (nil when it has none), the picture packed
    /// 4:2:0 (nil when its size or format is not the source's), whether libavcodec flagged it concealed.
    var output: (_ displayIndex: Int64?, _ packed: [UInt8]?, _ concealed: Bool) throws -> Void = { _, _, _ in }

    init(width: Int, height: Int) throws {
        self.width = width
        self.height = height
        av_log_set_level(AV_LOG_QUIET)
        let decoder = try H264StreamDecoder.openDecoder(exportingQP: false)
        context = decoder.context
        packet = decoder.packet
        frame = decoder.frame
    }

    deinit {
        av_log_set_level(AV_LOG_ERROR)
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    /// Decodes one access unit (Annex B bytes) shown as frame `displayIndex`.
    func decode(_ accessUnit: [UInt8], displayIndex: Int64) throws {
        guard let packet, let context, !accessUnit.isEmpty else { return }
        let status = accessUnit.withUnsafeBufferPointer { bytes -> Int32 in
            packet.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress)
            packet.pointee.size = Int32(bytes.count)
            packet.pointee.pts = displayIndex
            packet.pointee.dts = enclab_nopts()
            defer { packet.pointee.data = nil; packet.pointee.size = 0 }
            return avcodec_send_packet(context, packet)
        }
        if status < 0 { refused += 1 }
        try drain()
    }

    /// Flushes the decoder and hands out the pictures it still held.
    func finish() throws {
        guard let context else { return }
        _ = avcodec_send_packet(context, nil)
        try drain()
    }

    private func drain() throws {
        guard let context, let frame else { return }
        while true {
            let status = avcodec_receive_frame(context, frame)
            if status < 0 { return }
            defer { av_frame_unref(frame) }
            let f = frame.pointee
            let pts = f.pts == enclab_nopts() ? (f.best_effort_timestamp == enclab_nopts() ? nil : f.best_effort_timestamp) : f.pts
            let fits = Int(f.width) == width && Int(f.height) == height && f.format == AV_PIX_FMT_YUV420P.rawValue
            try output(pts, fits ? H264StreamDecoder.packed(frame, width: width, height: height) : nil, f.decode_error_flags != 0)
        }
    }
}
