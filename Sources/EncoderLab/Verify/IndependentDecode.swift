import Foundation

/// Squared error of one decoded picture against its source, per plane.
public struct PlaneErrors: Equatable, Sendable {
    /// Sum over the plane's samples of (decoded - source)^2.
    public var sseY: Int64
    public var sseU: Int64
    public var sseV: Int64
}

/// Decodes a lab stream with FFmpeg's H.264 decoder (the `ffmpeg` CLI, `-fps_mode passthrough`, raw 4:2:0 out)
/// and measures each decoded picture against the source clip, independently of x264's own numbers. The verify stage
/// decodes in-process (``H264StreamDecoder``); this is the tests' witness for it: another process, another read of
/// the source.
public enum IndependentDecode {
    /// Measures one stream; see ``measure(streams:source:width:height:seek:frames:)``.
    public static func measure(stream: String, source: String, width: Int, height: Int, seek: Int, frames: Int?) throws -> [PlaneErrors] {
        try measure(streams: [stream], source: source, width: width, height: height, seek: seek, frames: frames)[0]
    }

    /// Decodes several streams of the same source side by side, reading (for a non-y4m clip: decoding) the
    /// source once.
    /// - Parameters:
    ///   - streams: Annex B files (given to ffmpeg's h264 demuxer as `file:` URLs, see ``FFmpegInput/url(_:)``).
    ///   - source: the clip as encoded (same path; `seek` frames skipped and at most `frames` compared).
    ///   - width, height: the encoded picture size (even).
    /// - Returns: per stream, one entry per decoded picture, in display order.
    /// - Throws: `.software` when ffmpeg fails, yields a partial picture, or the streams decode to different
    ///   picture counts; `.data` when a stream decodes to more pictures than the source has.
    public static func measure(streams: [String], source: String, width: Int, height: Int, seek: Int, frames: Int?) throws -> [[PlaneErrors]] {
        let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
        let decoders = try streams.map { stream in
            // -f h264: the lab's own Annex B file, read by the h264 demuxer whatever its folder is named.
            try SpawnedProcess(ffmpeg, ["-nostdin", "-hide_banner", "-v", "level+error"] + FFmpegInput.inputRestrictions + [
                                        "-f", "h264", "-i", FFmpegInput.url(stream), "-fps_mode", "passthrough",
                                        "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"])
        }
        let clip = try Clip(path: source)
        for _ in 0..<seek { _ = try clip.next() }
        let pictureBytes = width * height * 3 / 2
        var results = [[PlaneErrors]](repeating: [], count: streams.count)
        while true {
            try Interruption.check()
            let pictures = try zip(streams, decoders).map { try readPicture($1.stdout, bytes: pictureBytes, stream: $0) }
            if pictures.allSatisfy({ $0 == nil }) { break }
            guard pictures.allSatisfy({ $0 != nil }) else {
                throw LabError.software("\(streams.joined(separator: " and ")) decode to different numbers of pictures")
            }
            guard frames.map({ results[0].count < $0 }) ?? true, let picture = try clip.next() else {
                throw LabError.data("\(streams[0]): ffmpeg decoded more pictures than the source \(source) has")
            }
            guard picture.width == width, picture.height == height else {
                throw LabError.data("\(streams[0]): decoded \(width)x\(height) but the source is \(picture.width)x\(picture.height)")
            }
            for (k, decoded) in pictures.enumerated() {
                results[k].append(squaredErrors(decoded!, picture.bytes, width: width, height: height))
            }
        }
        for (stream, decoder) in zip(streams, decoders) {
            let (status, output) = decoder.finish()
            if status != 0 {
                let message = FFmpegInput.problem(output, path: stream) ?? "exit status \(status)"
                throw LabError.software("ffmpeg could not decode \(stream): \(message)")
            }
        }
        return results
    }

    /// Reads exactly one picture of `bytes` bytes, or nil at a clean end of output.
    private static func readPicture(_ handle: FileHandle, bytes: Int, stream: String) throws -> [UInt8]? {
        var picture = [UInt8]()
        picture.reserveCapacity(bytes)
        while picture.count < bytes {
            let chunk = handle.readData(ofLength: bytes - picture.count)
            if chunk.isEmpty { break }
            picture.append(contentsOf: chunk)
        }
        if picture.isEmpty { return nil }
        guard picture.count == bytes else {
            throw LabError.software("\(stream): ffmpeg's decode ended inside a picture (\(picture.count) of \(bytes) bytes)")
        }
        return picture
    }

    /// Sum of squared differences per plane of two 4:2:0 pictures of the same size.
    static func squaredErrors(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> PlaneErrors {
        let luma = width * height, chroma = luma / 4
        func sse(_ range: Range<Int>) -> Int64 {
            var total: Int64 = 0
            a.withUnsafeBufferPointer { pa in
                b.withUnsafeBufferPointer { pb in
                    for i in range {
                        let d = Int64(pa[i]) - Int64(pb[i])
                        total += d * d
                    }
                }
            }
            return total
        }
        return PlaneErrors(sseY: sse(0..<luma), sseU: sse(luma..<(luma + chroma)), sseV: sse((luma + chroma)..<(luma + 2 * chroma)))
    }

    /// The integer squared error behind x264's PSNR (``PSNR/sse(decibels:samples:)``).
    public static func sse(fromPSNR psnr: Double, samples: Int) -> Int64 {
        PSNR.sse(decibels: psnr, samples: samples)
    }
}
