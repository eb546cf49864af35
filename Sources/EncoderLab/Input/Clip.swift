import Foundation

/// Where a clip's pictures come from, and what the lab learned about it before encoding.
public struct ClipInfo: Sendable {
    /// The path as given.
    public var path: String
    /// Width and height of the pictures handed to the encoder (even).
    public var width: Int
    public var height: Int
    /// Nominal frame rate from the y4m F tag (after ffmpeg's decode for other files).
    public var fpsNum: Int
    public var fpsDen: Int
    /// Sample aspect ratio from the y4m A tag (0:0 unknown).
    public var sarWidth: Int
    public var sarHeight: Int
    /// `p`, `t` (top field first) or `b` (bottom field first).
    public var interlacing: Character
    /// Columns and rows cropped from the right and bottom (0 or 1 each).
    public var cropRight: Int
    public var cropBottom: Int
    /// Frames in the file when it can be known without decoding (a y4m file), else nil; x264's CLI puts
    /// this in `i_frame_total`.
    public var frameCountHint: Int?
    /// `ffmpeg -version`'s first line when ffmpeg decoded the input, else nil.
    public var ffmpegVersion: String?

    /// The crop as recorded in the `runs` table: nil without one, else `"right=R,bottom=B"` in samples.
    public var cropDescription: String? {
        cropRight == 0 && cropBottom == 0 ? nil : "right=\(cropRight),bottom=\(cropBottom) (from \(width + cropRight)x\(height + cropBottom))"
    }
}

/// A source of pictures, read one at a time: a y4m file read natively, or any other file decoded by the
/// `ffmpeg` CLI into a y4m pipe (`-fps_mode passthrough`: no frame invented or dropped).
public final class Clip {
    public let info: ClipInfo
    private let reader: Y4MReader
    private let file: FileHandle
    /// The ffmpeg decode feeding `reader`, for non-y4m clips.
    private let decoder: SpawnedProcess?

    /// Opens a clip.
    /// - Parameter path: a `.y4m` file (or any file starting with `YUV4MPEG2`), or a file ffmpeg can decode with
    ///   one of ``FFmpegInput/singleFileDemuxers``; ffmpeg is handed the file's bytes, never its name (see
    ///   ``FFmpegInput/standardInputURL``).
    /// - Throws: `.noInput` when the file is missing or unreadable, or is not a regular file (a named pipe, a
    ///   device, a socket: the lab reads a clip twice, once to encode and once to verify the decode, and opening
    ///   a named pipe without a writer would block); `.data` for a bad y4m header, a file ffmpeg cannot decode
    ///   (with ffmpeg's own lines naming the problem), or one whose format reads other files (an HLS playlist, an
    ///   ffconcat script: "ffmpeg reads it as 'hls' ..."); `.software` when ffmpeg is needed but missing.
    public init(path: String) throws {
        // stat before any open: opening a FIFO for reading blocks until a writer comes.
        let size = try Self.regularFileSize(path)
        guard let probe = FileHandle(forReadingAtPath: path) else {
            throw LabError.noInput("\(path): cannot be read (permission denied?)")
        }
        let magic = (try? probe.read(upToCount: 9)) ?? Data()
        try? probe.close()
        if magic.isEmpty { throw LabError.data("\(path): empty file") }
        if magic == Data("YUV4MPEG2".utf8) || path.lowercased().hasSuffix(".y4m") {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw LabError.noInput("\(path): cannot be read") }
            file = handle
            decoder = nil
            reader = try Y4MReader(handle: handle, name: path)
            let frameSize = reader.header.pictureBytes + 6  // "FRAME\n"
            let hint = max(0, size - reader.header.headerLength) / frameSize
            info = Self.info(path: path, reader: reader, hint: hint, ffmpeg: nil)
        } else {
            let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
            guard let input = FileHandle(forReadingAtPath: path) else {
                throw LabError.noInput("\(path): cannot be read (permission denied?)")
            }
            // The clip reaches ffmpeg as its standard input, by a name that says nothing (see
            // FFmpegInput.standardInputURL), and only single-file demuxers may read it (FFmpegInput.inputRestrictions).
            // level+warning: ffmpeg's warnings about damage are kept (see ``warnings``), each line tagged with its level.
            let spawned = try SpawnedProcess(ffmpeg, [
                "-nostdin", "-hide_banner", "-v", "level+warning"] + FFmpegInput.inputRestrictions + [
                "-i", FFmpegInput.standardInputURL, "-map", "0:v:0",
                "-fps_mode", "passthrough", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-"], standardInput: input)
            try? input.close()
            decoder = spawned
            file = spawned.stdout
            do {
                reader = try Y4MReader(handle: file, name: path)
            } catch {
                let output = spawned.finish(terminate: true).stderr
                if output.contains("matches no streams") { throw LabError.data("\(path): has no video stream") }
                if let format = FFmpegInput.refusedFormat(output) {
                    throw LabError.data("\(path): ffmpeg reads it as '\(format)', a format that reads other files or resources (a playlist, a file list, an image sequence) or a still image; enclab takes one file that holds the video (mp4, mkv, webm, ts, avi, raw .264 ...)")
                }
                let message = FFmpegInput.problem(output, path: path) ?? "no output"
                throw LabError.data("\(path): ffmpeg could not decode it: \(message)")
            }
            info = Self.info(path: path, reader: reader, hint: nil, ffmpeg: Tools.ffmpegVersion())
        }
    }

    /// The size in bytes of the regular file at `path`, checked with stat(2) without opening it.
    /// - Throws: `.noInput` when it is missing, cannot be examined, or is not a regular file.
    static func regularFileSize(_ path: String) throws -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw LabError.noInput("\(path): no such file")
            case EACCES: throw LabError.noInput("\(path): cannot be read (permission denied?)")
            default: throw LabError.noInput("\(path): cannot be examined: \(String(cString: strerror(code)))")
            }
        }
        let kind: String
        switch st.st_mode & S_IFMT {
        case S_IFREG: return Int(st.st_size)
        case S_IFDIR: throw LabError.noInput("\(path): is a directory, not a clip")
        case S_IFIFO: kind = "a named pipe"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "mode \(String(st.st_mode & S_IFMT, radix: 8))"
        }
        throw LabError.noInput("\(path): not a regular file (\(kind)); enclab reads a clip twice, give it a file")
    }

    private static func info(path: String, reader: Y4MReader, hint: Int?, ffmpeg: String?) -> ClipInfo {
        let h = reader.header
        return ClipInfo(path: path, width: reader.width, height: reader.height, fpsNum: h.fpsNum, fpsDen: h.fpsDen,
                        sarWidth: h.sarWidth, sarHeight: h.sarHeight, interlacing: h.interlacing,
                        cropRight: reader.crop.right, cropBottom: reader.crop.bottom, frameCountHint: hint,
                        ffmpegVersion: ffmpeg)
    }

    /// The y4m header as read (after ffmpeg's conversion for non-y4m files).
    public var header: Y4MHeader { reader.header }

    /// The next picture in display order, or nil at the end.
    /// - Throws: `.data` for a damaged y4m stream, or when ffmpeg exits with an error at the end of a decode
    ///   (with ffmpeg's lines naming the problem).
    public func next() throws -> Picture? {
        if let picture = try reader.next() { return picture }
        if let decoder, !decoderFinished {
            decoderFinished = true
            let (status, output) = decoder.finish()
            if status != 0 {
                let message = FFmpegInput.problem(output, path: info.path) ?? "exit status \(status)"
                throw LabError.data("\(info.path): ffmpeg failed while decoding: \(message)")
            }
            warnings = FFmpegInput.warnings(output, path: info.path)
        }
        return nil
    }

    /// What ffmpeg said about damage in a clip it decoded to the end (a partial file, corrupt packets), one
    /// line each, as `"PATH: ffmpeg: TEXT"` (see ``FFmpegInput/warnings(_:path:)``); the frames it could not
    /// decode are missing from the clip. Empty for a y4m file (see ``truncatedBytes``) and until ``next()`` has
    /// returned nil: ffmpeg's messages are read when it exits.
    public private(set) var warnings: [String] = []
    private var decoderFinished = false

    /// Bytes of a partial last frame when the input ended inside one (see ``Y4MReader/truncatedBytes``).
    public var truncatedBytes: Int? { reader.truncatedBytes }

    /// Whole frames handed out so far.
    public var framesRead: Int { reader.framesRead }

    deinit {
        try? file.close()
    }
}
