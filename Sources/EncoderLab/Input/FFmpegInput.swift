import Foundation

/// How the lab hands files to the ffmpeg and ffprobe CLIs, and what it keeps of what they print.
enum FFmpegInput {
    /// A path as the URL ffmpeg must be given for it: `file:` followed by the absolute path.
    ///
    /// ffmpeg takes every `-i` argument as a URL: a relative name with a colon before any slash is read as a
    /// protocol (`12:30.mp4` fails with "Protocol not found", a file named `concat:a.mp4|b.mp4` reads `a.mp4` and
    /// `b.mp4` instead, `res:1/run-1/stream.264` fails). The `file` protocol (libavformat/file.c) opens the rest
    /// of the string as it is; making it absolute keeps the result independent of how it is joined.
    /// - Parameter path: a path as the user gave it, absolute or relative to the current directory.
    static func url(_ path: String) -> String {
        "file:" + absolute(path)
    }

    /// `path` made absolute against the current directory (not otherwise normalized).
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        let cwd = FileManager.default.currentDirectoryPath
        return cwd.hasSuffix("/") ? cwd + path : cwd + "/" + path
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
    /// its `[level]` tag apart; `file:` URLs of `path` are shown as `path` itself.
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
            if let path { text = text.replacingOccurrences(of: url(path), with: path) }
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
