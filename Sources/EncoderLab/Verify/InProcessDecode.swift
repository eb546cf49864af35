import CAVCodec
import Foundation

/// FFmpeg's H.264 decoder (libavcodec, the decoder the `ffmpeg` CLI runs) inside the process: the verify stage hands
/// it each access unit as x264 writes it and measures each picture it outputs against the source picture the
/// pipeline still holds, so no second pass over the source, no `ffmpeg` process and no raw-video pipe
/// (docs/verification.md, "How every run is verified"). ``IndependentDecode`` (the `ffmpeg` CLI) stays the tests' witness.
///
/// One thread (`thread_count` 1): the decode is deterministic and runs on the verify stage's thread (the pipeline's,
/// or one of its own when x264 has threads: ``VerifyStage``) while x264's own threads encode the next frames; one
/// thread at a time uses a decoder. The owner of the `AVCodecContext`, `AVPacket` and `AVFrame`, freed in `deinit`.
final class H264StreamDecoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    /// The luma size every picture must have (the encoded size, even).
    let width: Int, height: Int
    /// Source pictures handed to x264 and not yet decoded, in display order: the decoder's and x264's delay, not the clip.
    private var window: [Picture] = []
    /// Access units handed to the decoder so far.
    private var sent = 0
    /// Pictures decoded so far (the next one's display index).
    private(set) var decodedCount = 0
    /// The squared errors per picture, in display order.
    private(set) var errors: [PlaneErrors] = []
    /// Each decoded picture's QP as the decoder saw it, in display order: the sum and count of its macroblocks' QPs
    /// as libavcodec decoded them (AVVideoEncParams `qp` + `delta_qp`, H.264 QP_Y per macroblock), whose mean is the
    /// picture's QP; nil when libavcodec attached no such side data.
    private(set) var meanQP: [MacroblockQP?] = []
    /// The largest number of source pictures held at once (for tests of the window).
    private(set) var largestWindow = 0
    /// The stream's path, for messages.
    let name: String
    /// With `--metrics`: each decoded picture and its source picture are written here as they are measured.
    var pairs: PairedPictures?

    /// libavcodec logs to stderr through av_log: only errors (as `ffmpeg -v error` did), set once per process.
    private static let quietLog: Void = av_log_set_level(AV_LOG_ERROR)

    /// - Parameters:
    ///   - width, height: the encoded picture size in luma samples (both even).
    ///   - name: the stream's path, for messages.
    /// - Throws: `.software` when libavcodec has no H.264 decoder or cannot open it.
    init(width: Int, height: Int, name: String) throws {
        self.width = width
        self.height = height
        self.name = name
        _ = Self.quietLog
        let decoder = try Self.openDecoder(exportingQP: true)
        context = decoder.context
        packet = decoder.packet
        frame = decoder.frame
    }

    /// libavcodec's H.264 decoder as the lab opens it (here and in ``DamagedStreamDecoder``): one thread
    /// (`thread_count` 1), libavcodec's defaults otherwise (its own error concealment); with `exportingQP`, each
    /// picture's per-macroblock QP as side data (``meanQP``). The caller owns what it returns and frees it.
    /// - Throws: `.software` when libavcodec has no H.264 decoder, is out of memory or cannot open it (nothing is left
    ///   allocated then).
    static func openDecoder(exportingQP: Bool) throws
        -> (context: UnsafeMutablePointer<AVCodecContext>, packet: UnsafeMutablePointer<AVPacket>, frame: UnsafeMutablePointer<AVFrame>) {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else {
            throw LabError.software("libavcodec has no H.264 decoder (Debian's libavcodec59 has one)")
        }
        var context = avcodec_alloc_context3(codec)
        var packet = av_packet_alloc()
        var frame = av_frame_alloc()
        func freeAll() {
            av_frame_free(&frame)
            av_packet_free(&packet)
            avcodec_free_context(&context)
        }
        guard let c = context, let p = packet, let f = frame else {
            freeAll()
            throw LabError.software("libavcodec: out of memory opening the H.264 decoder")
        }
        c.pointee.thread_count = 1
        if exportingQP { enclab_export_video_enc_params(c) }
        let status = avcodec_open2(c, codec, nil)
        guard status >= 0 else {
            freeAll()
            throw LabError.software("libavcodec: cannot open the H.264 decoder: \(describe(status))")
        }
        return (c, p, f)
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&context)
    }

    /// Keeps the next source picture in display order (the one just handed to x264) until its decode is measured.
    func source(_ picture: Picture) {
        window.append(picture)
        windowSkipped.append(nil)
        largestWindow = max(largestWindow, window.count)
    }

    /// Whether pictures the encoder dropped are measured (``skipped(_:inputIndex:)``): each decoded picture is then kept
    /// (packed 4:2:0) until the next one replaces it.
    var measuresSkipped = false
    /// The input frame number of each held source picture that the encoder dropped, nil for a coded one (parallel to `window`).
    private var windowSkipped: [Int?] = []
    /// The last decoded picture, packed 4:2:0 (with ``measuresSkipped``).
    private var lastDecoded: [UInt8]?
    /// Each dropped picture's input frame number and the squared errors of the picture a receiver shows in its place
    /// (the previous decoded picture) against it; nil errors when no picture was decoded before it.
    private(set) var skippedErrors: [(inputIndex: Int, errors: PlaneErrors?)] = []

    /// Keeps a source picture the encoder dropped (OpenH264's frame skip), in display order among ``source(_:)``'s: it is
    /// measured against the decoded picture before it, the one a receiver shows again.
    func skipped(_ picture: Picture, inputIndex: Int) {
        window.append(picture)
        windowSkipped.append(inputIndex)
        largestWindow = max(largestWindow, window.count)
    }

    /// Measures the dropped pictures at the head of the window against the last decoded picture (and, with
    /// ``pairs``, pairs them for libvmaf: the held picture against the dropped one's source).
    private func measureLeadingSkipped() throws {
        while let first = windowSkipped.first, let index = first {
            let source = window.removeFirst()
            windowSkipped.removeFirst()
            let errors = lastDecoded.map { held in
                held.withUnsafeBufferPointer { h in source.withUnsafeBytes { Self.squaredErrors(packed: h, source: $0, width: width, height: height) } }
            }
            skippedErrors.append((index, errors))
            if let held = lastDecoded { try pairs?.write(held: held, source: source) }
        }
    }

    /// Sum of squared differences per plane of two packed 4:2:0 pictures of the same size.
    static func squaredErrors(packed a: UnsafeBufferPointer<UInt8>, source b: UnsafeBufferPointer<UInt8>, width: Int, height: Int) -> PlaneErrors {
        let luma = width * height, chroma = (width / 2) * (height / 2)
        func sse(_ from: Int, _ count: Int) -> Int64 {
            var total: Int64 = 0
            for k in from..<(from + count) { let e = Int64(a[k]) - Int64(b[k]); total += e * e }
            return total
        }
        return PlaneErrors(sseY: sse(0, luma), sseU: sse(luma, chroma), sseV: sse(luma + chroma, chroma))
    }

    /// The decoded frame's planes packed as 4:2:0 (rows without their padding): a `width` x `height` yuv420p picture.
    static func packed(_ frame: UnsafePointer<AVFrame>, width: Int, height: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(width * height * 3 / 2)
        for (plane, w, h) in [(0, width, height), (1, width / 2, height / 2), (2, width / 2, height / 2)] {
            let base = enclab_frame_plane(frame, Int32(plane))!
            let stride = Int(enclab_frame_linesize(frame, Int32(plane)))
            for row in 0..<h { out.append(contentsOf: UnsafeBufferPointer(start: base + row * stride, count: w)) }
        }
        return out
    }

    /// Decodes one access unit (its bytes as written, start codes included) and measures every picture it releases.
    /// - Throws: `.software` when libavcodec refuses the data or outputs a picture it cannot vouch for (see ``drain()``).
    func decode(_ accessUnit: [UInt8]) throws {
        guard let packet, let context else { return }
        let status = accessUnit.withUnsafeBufferPointer { bytes -> Int32 in
            // The packet borrows the bytes (no buf: libavcodec copies what it keeps) for the call only.
            packet.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress)
            packet.pointee.size = Int32(bytes.count)
            defer { packet.pointee.data = nil; packet.pointee.size = 0 }
            return avcodec_send_packet(context, packet)
        }
        guard status >= 0 else { throw LabError.software("\(name): libavcodec refused access unit \(sent) (decode order): \(Self.describe(status))") }
        sent += 1
        try drain()
    }

    /// Flushes the decoder (its reorder delay) and measures the pictures it still held.
    /// - Returns: the squared errors per decoded picture, in display order.
    /// - Throws: as ``drain()``; `.software` when pictures handed to x264 were not decoded.
    func finish() throws -> [PlaneErrors] {
        guard let context else { return errors }
        let status = avcodec_send_packet(context, nil)
        guard status >= 0 else { throw LabError.software("\(name): libavcodec refused the end of the stream: \(Self.describe(status))") }
        try drain()
        try measureLeadingSkipped()
        guard window.isEmpty else {
            throw LabError.software("\(name): libavcodec decoded \(decodedCount) pictures, \(decodedCount + window.count) were encoded")
        }
        return errors
    }

    /// Takes every picture the decoder has ready and measures it against the oldest source picture held.
    /// - Throws: `.software` for a picture of another size or pixel format than the source's 4:2:0, one flagged
    ///   with decode errors (concealed), or more pictures than were encoded.
    private func drain() throws {
        guard let context, let frame else { return }
        while true {
            let status = avcodec_receive_frame(context, frame)
            if status == enclab_averror_eagain() || status == enclab_averror_eof() { return }
            guard status >= 0 else { throw LabError.software("\(name): libavcodec failed decoding picture \(decodedCount): \(Self.describe(status))") }
            defer { av_frame_unref(frame) }
            let f = frame.pointee
            guard Int(f.width) == width, Int(f.height) == height, f.format == AV_PIX_FMT_YUV420P.rawValue else {
                throw LabError.software("\(name): libavcodec decoded picture \(decodedCount) as \(f.width)x\(f.height) pixel format \(f.format), the source is \(width)x\(height) yuv420p")
            }
            guard f.decode_error_flags == 0 else {
                throw LabError.software("\(name): libavcodec flagged picture \(decodedCount) as damaged (decode_error_flags \(f.decode_error_flags))")
            }
            try measureLeadingSkipped()
            guard !window.isEmpty else {
                throw LabError.software("\(name): libavcodec decoded more pictures than were encoded (\(decodedCount + 1))")
            }
            let source = window.removeFirst()
            windowSkipped.removeFirst()
            errors.append(source.withUnsafeBytes { Self.squaredErrors(frame, source: $0, width: width, height: height) })
            var total: Int64 = 0, blocks: Int64 = 0
            meanQP.append(enclab_frame_qp_total(frame, &total, &blocks) == 0 ? MacroblockQP(total: Int(total), blocks: Int(blocks)) : nil)
            try pairs?.write(decoded: frame, source: source)
            if measuresSkipped { lastDecoded = Self.packed(frame, width: width, height: height) }
            decodedCount += 1
        }
    }

    /// Sum of squared differences per plane of a decoded yuv420p frame (rows `linesize` apart) and a packed 4:2:0
    /// picture of the same size (a ``Picture``'s bytes, read in place): the same sums as ``IndependentDecode/squaredErrors(_:_:width:height:)``.
    static func squaredErrors(_ frame: UnsafePointer<AVFrame>, source s: UnsafeBufferPointer<UInt8>, width: Int, height: Int) -> PlaneErrors {
        precondition(s.count == width * height * 3 / 2, "source picture size does not match the decoded picture's")
        func sse(plane: Int, offset: Int, width w: Int, height h: Int) -> Int64 {
            let base = enclab_frame_plane(frame, Int32(plane))!
            let stride = Int(enclab_frame_linesize(frame, Int32(plane)))
            var total: Int64 = 0
            let source = UnsafeRawPointer(s.baseAddress!)
            for row in 0..<h {
                let d = UnsafeRawPointer(base + row * stride)
                let o = offset + row * w
                // 16 samples a step in 16 Int32 lanes; a lane gains at most 255^2 a step, so runs of at most
                // 2048 steps (2048 x 65025 < 2^31) are exact; the runs add up in an Int64. The row's last
                // samples (fewer than 16) one at a time.
                var x = 0
                while x + 16 <= w {
                    let steps = min((w - x) / 16, 2048)
                    var lanes = SIMD16<Int32>()
                    for k in 0..<steps {
                        let a = SIMD16<Int32>(truncatingIfNeeded: d.loadUnaligned(fromByteOffset: x + 16 * k, as: SIMD16<UInt8>.self))
                        let b = SIMD16<Int32>(truncatingIfNeeded: source.loadUnaligned(fromByteOffset: o + x + 16 * k, as: SIMD16<UInt8>.self))
                        let e = a &- b
                        lanes &+= e &* e
                    }
                    total += SIMD16<Int64>(truncatingIfNeeded: lanes).wrappedSum()
                    x += 16 * steps
                }
                while x < w {
                    let e = Int64(d.load(fromByteOffset: x, as: UInt8.self)) - Int64(s[o + x])
                    total += e * e
                    x += 1
                }
            }
            return total
        }
        let luma = width * height, cw = width / 2, ch = height / 2
        return PlaneErrors(sseY: sse(plane: 0, offset: 0, width: width, height: height),
                           sseU: sse(plane: 1, offset: luma, width: cw, height: ch),
                           sseV: sse(plane: 2, offset: luma + cw * ch, width: cw, height: ch))
    }

    /// libavcodec's message for an error code (av_strerror).
    static func describe(_ status: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = av_strerror(status, &buffer, buffer.count)
        return "\(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) (\(status))"
    }
}
