import Foundation

/// How the lab hands files to the ffmpeg and ffprobe CLIs, and what it keeps of what they print.
enum FFmpegInput {
    /// A path as the URL ffmpeg must be given for it: `file:` followed by the absolute path.
    ///
    /// ffmpeg takes every `-i` argument as a URL: a relative name with a colon before any slash is read as a
    /// protocol (`12:30.mp4` fails with "Protocol not found", a file named `concat:a.mp4|b.mp4` reads `a.mp4` and
    /// `b.mp4` instead, `res:1/run-1/stream.264` fails). The `file` protocol (libavformat/file.c) opens the rest
    /// of the string as it is; making it absolute (``Paths/absolute(_:)``, no `~` expanded) keeps the result
    /// independent of how it is joined.
    /// - Parameter path: a path as the user gave it, absolute or relative to the current directory.
    static func url(_ path: String) -> String {
        "file:" + Paths.absolute(path)
    }

    /// The demuxers (ffmpeg's `-format_whitelist`, names as `ffmpeg -demuxers` lists them) that read one file
    /// holding video and nothing beside it: containers (mov/mp4, matroska/webm, MPEG-TS and -PS, AVI, FLV, ASF,
    /// MXF, NUT, Ogg, DV, GXF, WTV, RealMedia, NuppelVideo, IVF, AV1 OBU), elementary video streams (H.264 and
    /// HEVC Annex B among them: the lab decodes its own `.264` files), y4m, GIF/APNG and raw video.
    ///
    /// Left out are the demuxers that open other files or resources named by the input or its name: `hls` and
    /// `dash` (playlists of segments), `concat` (an ffconcat script), `image2` (a numbered or glob file name is
    /// a sequence of other files), `imf`, `webm_dash_manifest`, `sdp`/`rtp`/`rtsp`, `lavfi`, `ffmetadata`; and the
    /// image pipes (one still picture is not a clip).
    static let singleFileDemuxers = [
        "mov", "matroska", "webm", "mpegts", "mpeg", "avi", "flv", "asf", "mxf", "nut", "ogg", "dv", "gxf", "wtv", "rm",
        "nuv", "ivf", "obu", "av1", "h264", "hevc", "m4v", "mpegvideo", "h261", "h263", "vc1", "dirac", "cavsvideo",
        "avs2", "avs3", "mjpeg", "yuv4mpegpipe", "gif", "apng", "rawvideo",
    ]

    /// The options put before every `-i` the lab gives ffmpeg: only ``singleFileDemuxers`` may read the input
    /// (`-format_whitelist`), and only through the `file` protocol (`-protocol_whitelist file`). A demuxer that
    /// ffmpeg's probe picks but the list lacks makes ffmpeg fail with "Format not on whitelist" (see
    /// ``refusedFormat(_:)``) instead of reading anything else.
    static var inputRestrictions: [String] {
        ["-format_whitelist", singleFileDemuxers.joined(separator: ","), "-protocol_whitelist", "file"]
    }

    /// The URL ffmpeg reads a user's clip from: the file the lab opened and handed over as ffmpeg's standard input,
    /// reopened through `/proc/self/fd/0` (a regular file: seekable, so an mp4 with its index at the end works).
    ///
    /// ffmpeg's probe scores a format by the file name as well as by the bytes: a name with `%03d` or `*` in it
    /// makes the `image2` demuxer read a sequence of OTHER files (`img%03d.png` reads img001.png, img002.png ...).
    /// Handed this name instead, ffmpeg chooses by the bytes alone, and nothing in the user's name can steer it.
    static let standardInputURL = "file:/proc/self/fd/0"

    /// Runs ffprobe on the file at `path`, handed over as its standard input (``standardInputURL``, only through
    /// ``inputRestrictions``, so nothing in the name reaches ffprobe), with `arguments` after `-i`.
    /// - Returns: ffprobe's exit status, its standard output and its standard error.
    /// - Throws: `.software` when ffprobe is missing or cannot start; `.noInput` when the file cannot be opened.
    static func ffprobe(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: Data, errors: String) {
        let ffprobe = try Tools.require("ffprobe", package: "ffmpeg")
        guard let input = FileHandle(forReadingAtPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        defer { try? input.close() }
        let spawned = try SpawnedProcess(ffprobe, ["-v", "error", "-hide_banner"] + inputRestrictions + ["-i", standardInputURL] + arguments,
                                         standardInput: input)
        let output = spawned.stdout.readDataToEndOfFile()
        let (status, errors) = spawned.finish()
        return (status, output, errors)
    }

    /// The demuxer ffmpeg refused because ``inputRestrictions`` lacks it (`hls`, `concat`, `image2` ...), read from
    /// its `[NAME @ 0x...] Format not on whitelist` line; nil when ffmpeg refused none.
    static func refusedFormat(_ stderr: String) -> String? {
        for line in stderr.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) where line.contains("Format not on whitelist") {
            guard line.hasPrefix("["), let at = line.range(of: " @ ") else { return "unknown" }
            return String(line[line.index(after: line.startIndex)..<at.lowerBound])
        }
        return nil
    }

    /// One line of ffmpeg's log, as `-v level+LEVEL` prints it: `[context @ 0x...] [level] text`.
    struct LogLine: Equatable {
        /// `panic`, `fatal`, `error`, `warning`, `info`, ...; nil for a line without the tag (a continuation).
        var level: String?
        /// The message, without its contexts (their addresses change from run to run) and level tag.
        var text: String
    }

    private static let levels: Set<String> = ["quiet", "panic", "fatal", "error", "warning", "info", "verbose", "debug", "trace"]

    /// Splits ffmpeg's standard error into lines, dropping each line's `[name @ 0xADDRESS]` contexts and keeping
    /// its `[level]` tag apart; `file:` URLs of `path` (and ``standardInputURL``) are shown as `path` itself.
    static func parse(_ stderr: String, path: String? = nil) -> [LogLine] {
        var lines: [LogLine] = []
        for raw in stderr.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            var rest = Substring(raw)
            var level: String?
            while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                let inner = rest[rest.index(after: rest.startIndex)..<close]
                if levels.contains(String(inner)) {
                    level = String(inner)
                } else if !inner.contains(" @ ") {
                    break
                }
                rest = rest[rest.index(after: close)...].drop { $0 == " " }
            }
            var text = String(rest).trimmingCharacters(in: .whitespaces)
            if let path {
                text = text.replacingOccurrences(of: url(path), with: path).replacingOccurrences(of: standardInputURL, with: path)
            }
            if !text.isEmpty { lines.append(LogLine(level: level, text: text)) }
        }
        return lines
    }

    /// Lines ffmpeg prints around a failure that say only that it failed, not why (ffmpeg's fftools).
    private static let boilerplate = [
        "Conversion failed!", "Error marking filters as finished", "Error while ", "Error opening output file",
        "Error initializing output stream", "Nothing was written into output file", "To ignore this, add a trailing",
        "Terminating thread with return code",
    ]

    /// The lines of a failed ffmpeg run that name the problem, joined with "; " and cut to `limit` characters.
    ///
    /// Lines tagged `error`, `fatal` or `panic` and untagged continuation lines are taken (all lines when there
    /// are none); ffmpeg's closing boilerplate ("Conversion failed!", "Error marking filters as finished",
    /// "Error while decoding ...") is dropped unless nothing else is left; repeated lines are kept once.
    /// - Parameters:
    ///   - stderr: ffmpeg's standard error, with or without level tags.
    ///   - path: the input as the user named it, shown instead of its `file:` URL.
    ///   - limit: the longest message returned, in characters (a longer one ends in "...").
    /// - Returns: the message, or nil when ffmpeg printed nothing.
    static func problem(_ stderr: String, path: String? = nil, limit: Int = 400) -> String? {
        let all = parse(stderr, path: path)
        let serious = all.filter { $0.level == nil || ["error", "fatal", "panic"].contains($0.level!) }
        let candidates = (serious.isEmpty ? all : serious).map(\.text)
        guard let last = candidates.last else { return nil }
        var kept: [String] = []
        for text in candidates where !boilerplate.contains(where: { text.hasPrefix($0) }) && !kept.contains(text) {
            kept.append(text)
        }
        let message = kept.isEmpty ? last : kept.joined(separator: "; ")
        return message.count <= limit ? message : String(message.prefix(limit - 3)) + "..."
    }

    /// Warnings ffmpeg prints about inputs that are not damaged: a channel layout guessed for an audio stream
    /// the lab does not read, swscale's note on `yuvj*` formats, a frame rate not yet estimated.
    private static let noise = ["Guessed Channel Layout", "deprecated pixel format used", "not enough frames to estimate rate"]

    /// At most this many distinct warning lines are kept per clip; the rest are counted.
    static let maximumWarnings = 5

    /// What a successful ffmpeg decode said about damage in its input, one entry per distinct line, each
    /// `"PATH: ffmpeg: TEXT"`.
    ///
    /// ffmpeg decodes a damaged file (a partial mp4, corrupt packets) as far as it can and exits 0: its
    /// `warning` and `error` lines are then the only sign that frames are missing. Known noise (see `noise`)
    /// is dropped; past ``maximumWarnings`` lines one more entry counts the rest.
    /// - Parameters:
    ///   - stderr: ffmpeg's standard error, run with `-v level+warning`.
    ///   - path: the input as the user named it.
    static func warnings(_ stderr: String, path: String) -> [String] {
        var distinct: [String] = []
        for line in parse(stderr, path: path) where line.level != "info" && !noise.contains(where: { line.text.contains($0) }) {
            // "PATH: corrupt input packet ...": the path is already the entry's prefix.
            let text = line.text.hasPrefix("\(path): ") ? String(line.text.dropFirst(path.count + 2)) : line.text
            if !distinct.contains(text) { distinct.append(text) }
        }
        var out = distinct.prefix(maximumWarnings).map { "\(path): ffmpeg: \($0)" }
        if distinct.count > maximumWarnings {
            out.append("\(path): ffmpeg: \(distinct.count - maximumWarnings) more distinct warnings")
        }
        return out
    }
}
