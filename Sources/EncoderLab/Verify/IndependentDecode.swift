import Foundation

/// Squared error of one decoded picture against its source, per plane.
public struct PlaneErrors: Equatable, Sendable {
    /// Sum over the plane's samples of (decoded - source)^2.
    public var sseY: Int64
    public var sseU: Int64
    public var sseV: Int64
}

/// Decodes a lab stream with FFmpeg's H.264 decoder (the `ffmpeg` CLI, `-fps_mode passthrough`, raw 4:2:0 out)
/// and measures each decoded picture against the source clip, independently of x264's own numbers.
public enum IndependentDecode {
    /// - Parameters:
    ///   - stream: an Annex B file.
    ///   - source: the clip as encoded (same path; `seek` frames skipped and at most `frames` compared).
    ///   - width, height: the encoded picture size (even).
    /// - Returns: one entry per decoded picture, in display order.
    /// - Throws: `.software` when ffmpeg fails or yields a partial picture; `.data` when the decoded count
    ///   exceeds the source's.
    public static func measure(stream: String, source: String, width: Int, height: Int, seek: Int, frames: Int?) throws -> [PlaneErrors] {
        let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: ffmpeg)
        p.arguments = ["-nostdin", "-hide_banner", "-v", "error", "-i", stream, "-fps_mode", "passthrough",
                       "-pix_fmt", "yuv420p", "-f", "rawvideo", "-"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { throw LabError.software("could not start ffmpeg: \(error.localizedDescription)") }
        let errors = DataBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errors.set(err.fileHandleForReading.readDataToEndOfFile()); group.leave() }
        defer { if p.isRunning { p.terminate() }; group.wait(); p.waitUntilExit() }

        let clip = try Clip(path: source)
        for _ in 0..<seek { _ = try clip.next() }
        let pictureBytes = width * height * 3 / 2
        let handle = out.fileHandleForReading
        var pending = [UInt8]()
        var results: [PlaneErrors] = []
        while true {
            try Interruption.check()
            while pending.count < pictureBytes {
                let chunk = handle.readData(ofLength: max(pictureBytes - pending.count, 1 << 16))
                if chunk.isEmpty { break }
                pending.append(contentsOf: chunk)
            }
            if pending.count < pictureBytes {
                if !pending.isEmpty {
                    throw LabError.software("\(stream): ffmpeg's decode ended inside a picture (\(pending.count) of \(pictureBytes) bytes)")
                }
                break
            }
            guard frames.map({ results.count < $0 }) ?? true, let picture = try clip.next() else {
                throw LabError.data("\(stream): ffmpeg decoded more pictures than the source \(source) has")
            }
            guard picture.width == width, picture.height == height else {
                throw LabError.data("\(stream): decoded \(width)x\(height) but the source is \(picture.width)x\(picture.height)")
            }
            results.append(squaredErrors(Array(pending[0..<pictureBytes]), picture.bytes, width: width, height: height))
            pending.removeFirst(pictureBytes)
        }
        group.wait()
        p.waitUntilExit()
        if p.terminationStatus != 0 {
            let message = String(decoding: errors.get(), as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            throw LabError.software("ffmpeg could not decode \(stream): \(message)")
        }
        return results
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

    /// The integer squared error behind x264's PSNR: x264 computes `-10 log10(sse / (255^2 * samples))`
    /// (common/base.c, x264_psnr), so sse = 255^2 * samples * 10^(-psnr/10), rounded. x264 reports 100 dB
    /// for an error of 0 (mse <= 1e-10).
    public static func sse(fromPSNR psnr: Double, samples: Int) -> Int64 {
        if psnr >= 100 { return 0 }
        return Int64((255.0 * 255.0 * Double(samples) * pow(10, -psnr / 10)).rounded())
    }
}
