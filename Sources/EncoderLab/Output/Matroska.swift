import Foundation
import H264

/// A run's raw H.264 stream written as Matroska with the presentation times the lab recorded, so ffprobe and players
/// show the lab's own timeline. Made by mkvmerge (Debian package mkvtoolnix) from a timestamp file in format v2.
public enum Matroska {
    /// The largest presentation time ``write(stream:ptsMicroseconds:to:knownFrames:)`` takes: 10^15 µs (about 31.7 years).
    ///
    /// mkvmerge reads each v2 time as a `double` number of milliseconds and truncates it to integer nanoseconds
    /// (`timestamp_factory_v2_c::parse` in mkvtoolnix's src/merge/timestamp_factory.cpp), then rounds to the
    /// timestamp scale. Measured with mkvmerge 74.0.0 on 2,000 irregular times each: every time exact at offsets 0,
    /// 10^12, 10^15 − 10^9 and 2^41 ms; at 3 × 10^15 µs 248 of 2,000 were 1 µs early, from 4.4 × 10^15 µs on about
    /// a quarter. The limit keeps a factor of two from the last exact measurement.
    public static let largestPTSMicroseconds: Int64 = 1_000_000_000_000_000

    /// Writes `output` (Matroska) from the raw Annex B H.264 stream at `stream`, giving its frames, in display
    /// order, the presentation times `ptsMicroseconds`.
    ///
    /// Runs `mkvmerge --output TMP --timestamp-scale 1000 --timestamps 0:TC STREAM` (an argument vector, every path
    /// absolute, so none is read as an option or as an `@` options file), in the C.UTF-8 locale (mkvmerge aborts
    /// when the inherited locale is not installed). TC is a timestamp file in format v2 (mkvmerge(1), "External
    /// timestamp files": the line `# timestamp format v2`, then one time in milliseconds per frame), each time
    /// written with exactly three decimals, so whole microseconds pass unrounded; `--timestamp-scale 1000` makes the
    /// file's unit 1 µs (mkvmerge's default, 1 ms, would round every time to a millisecond, up to 0.5 ms off: 0.34 ms
    /// at 29.97 fps). mkvmerge gives the v2 entries to the frames in display (presentation) order, not decode order:
    /// measured on an x264 stream with `--bframes 3 --b-pyramid normal`, where ffprobe reads the written packets
    /// (decode order) with times out of order and the decoded frames (display order) with exactly the given ones; a
    /// first time above zero (10^12 µs, say) is kept as it is, not moved to 0. ffprobe reports the track's time
    /// base as 1/1000000, so its `pts` values are these microseconds.
    ///
    /// TC and TMP are hidden files in the output's folder (`.NAME.RANDOM.timestamps.txt`,
    /// `.NAME.RANDOM.partial.mkv`); both are removed afterwards, and TMP is renamed to `output` (replacing a file of
    /// that name) only when mkvmerge succeeded, so a failure leaves no partial Matroska file and an older `output`
    /// untouched. The stream's bytes are not changed (mkvmerge stores the same NAL units behind length fields).
    ///
    /// - Parameters:
    ///   - stream: an Annex B H.264 stream of frame (not field) pictures, as x264 writes; a relative path is taken
    ///     from the current folder.
    ///   - ptsMicroseconds: one presentation time per frame (access unit with a picture), in display order, in
    ///     microseconds, from 0 to ``largestPTSMicroseconds``, never decreasing. Equal neighbours (a repeated
    ///     PTS, as a schedule's duplicates give) are kept: Matroska holds them and ffprobe reads both back; a
    ///     decreasing time is refused, since a container's frames are in display order by their times, and sorting
    ///     would give times to the wrong frames.
    ///   - output: the Matroska file to write; a relative path is taken from the current folder.
    ///   - knownFrames: the stream's frame count when the caller has parsed it already (a run's verify stage parses
    ///     each access unit as it is written and requires one frame picture per x264 frame), so the stream is not
    ///     read whole again; nil to count them here (``frameCount(_:)``).
    /// - Returns: mkvmerge's warning lines (exit status 1: the file was written), usually none.
    /// - Throws: `.noInput` when `stream` is missing or unreadable; `.data` when it is empty, does not parse as
    ///   Annex B H.264, holds field pictures or no picture, or when `ptsMicroseconds` has another count than the
    ///   stream has frames, a negative time, one above ``largestPTSMicroseconds`` or one below its predecessor
    ///   (naming the frame); `.usage` when `output` is the stream itself; `.software` when mkvmerge is not on PATH
    ///   (naming the Debian package mkvtoolnix), cannot be started, fails (exit status 2, with mkvmerge's message)
    ///   or ends otherwise; `.cantCreate` when the output's folder cannot take the temporary files or the rename
    ///   fails; `.ioError` when the disk is full (mkvmerge's "The drive may be full" error, or ENOSPC/EDQUOT
    ///   writing TC); `.interrupted` when SIGINT or SIGTERM arrived (``Interruption``) before mkvmerge started or
    ///   while it ran.
    @discardableResult
    public static func write(stream: String, ptsMicroseconds: [Int64], to output: String, knownFrames: Int? = nil) throws -> [String] {
        let streamPath = Paths.absolute(stream)
        let outputPath = Paths.absolute(output)
        let frames = try knownFrames ?? frameCount(streamPath)
        try check(ptsMicroseconds, frames: frames, stream: streamPath)
        if let a = Paths.real(streamPath), let b = Paths.real(outputPath), a == b {
            throw LabError.usage("the Matroska output '\(outputPath)' is the stream '\(streamPath)': it would overwrite its input")
        }
        let mkvmerge = try Tools.require("mkvmerge", package: "mkvtoolnix")
        let env = try Tools.require("env", package: "coreutils")
        try Interruption.check()

        let folder = Paths.parent(outputPath)
        let stem = (folder == "/" ? "/" : folder + "/") + "." + Paths.fileName(outputPath) + "." + UUID().uuidString
        let timecodes = stem + ".timestamps.txt"
        let partial = stem + ".partial.mkv"
        defer {
            unlink(timecodes)
            unlink(partial)
        }
        try OutputFiles.write(timecodeText(ptsMicroseconds), to: timecodes)
        let arguments = ["LC_ALL=C.UTF-8", mkvmerge, "--quiet", "--output", partial, "--timestamp-scale", "1000",
                         "--timestamps", "0:" + timecodes, streamPath]
        let result = try Tools.run(env, arguments)
        try Interruption.check()
        let lines = (String(decoding: result.stdout, as: UTF8.self) + "\n" + String(decoding: result.stderr, as: UTF8.self))
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        switch result.status {
        case 0, 1:
            break
        case 2:
            let errors = lines.filter { $0.hasPrefix("Error: ") }.map { String($0.dropFirst("Error: ".count)) }
            let message = (errors.isEmpty ? lines : errors).joined(separator: " ")
            let text = "mkvmerge could not write '\(outputPath)' from '\(streamPath)': \(message)"
            throw message.contains("writing the destination file") ? LabError.ioError(text) : LabError.software(text)
        default:
            throw LabError.software("mkvmerge ended with status \(result.status) writing '\(outputPath)' from '\(streamPath)': \(lines.joined(separator: " "))")
        }
        if rename(partial, outputPath) != 0 {
            let code = errno
            throw OutputFiles.creationError("\(outputPath): cannot move the Matroska file into place: \(OutputFiles.reason(code))", code)
        }
        return lines.filter { $0.hasPrefix("Warning:") }
    }

    /// The timestamp file mkvmerge reads: `# timestamp format v2`, then each time in milliseconds with exactly three
    /// decimals (33,367 µs → `33.367`, 7 µs → `0.007`), one a line. `ptsMicroseconds` must not be negative.
    static func timecodeText(_ ptsMicroseconds: [Int64]) -> String {
        var text = "# timestamp format v2\n"
        for t in ptsMicroseconds {
            precondition(t >= 0, "timecodeText takes times checked by check(_:frames:stream:)")
            let fraction = String(t % 1000)
            text += "\(t / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "\n"
        }
        return text
    }

    /// The number of frames in the Annex B stream at `path`: access units holding a primary coded picture.
    /// - Throws: `.noInput` for a missing or unreadable file; `.data` naming the file for an empty file, a stream
    ///   that does not parse, one with no picture, or a field picture (naming its access unit in decode order;
    ///   mkvmerge would not give each field a time of its own).
    static func frameCount(_ path: String) throws -> Int {
        var input = StreamInput(path: path)
        input.format = .annexb
        let units = try Bitstream.open(input).accessUnits
        var frames = 0
        for unit in units where unit.hasPrimaryPicture {
            if unit.sliceHeaders.contains(where: \.fieldPicFlag) {
                throw LabError.data("\(path): access unit \(unit.index) (decode order) is a field picture (field_pic_flag 1); only frame pictures are written to Matroska")
            }
            frames += 1
        }
        if frames == 0 { throw LabError.data("\(path): no picture in the stream") }
        return frames
    }

    /// Checks `ptsMicroseconds` against the stream's frame count and the limits of ``write(stream:ptsMicroseconds:to:knownFrames:)``.
    /// - Throws: `.data` naming the stream, the frame (display order, from 0) and the time.
    static func check(_ ptsMicroseconds: [Int64], frames: Int, stream: String) throws {
        guard ptsMicroseconds.count == frames else {
            throw LabError.data("\(stream): \(frames) frames, but \(ptsMicroseconds.count) presentation times given")
        }
        for (k, t) in ptsMicroseconds.enumerated() {
            if t < 0 {
                throw LabError.data("\(stream): frame \(k) (display order): presentation time \(t) µs is negative (Matroska times start at 0)")
            }
            if t > largestPTSMicroseconds {
                throw LabError.data("\(stream): frame \(k) (display order): presentation time \(t) µs is above \(largestPTSMicroseconds) µs, beyond which mkvmerge loses microseconds")
            }
            if k > 0 && t < ptsMicroseconds[k - 1] {
                throw LabError.data("\(stream): frame \(k) (display order): presentation time \(t) µs is before frame \(k - 1)'s \(ptsMicroseconds[k - 1]) µs (a container orders frames by their times)")
            }
        }
    }

    /// The warning for a stream.mkv left out because ``write(stream:ptsMicroseconds:to:knownFrames:)`` refused its times (a
    /// `.data` error): "stream.mkv not written: stream.264: REASON", the stream named by its file name only (the
    /// error names its path, a temporary folder while a run is written).
    static func notWrittenWarning(_ error: LabError) -> String {
        let reason = error.message.range(of: "stream.264: ").map { String(error.message[$0.upperBound...]) } ?? error.message
        return "stream.mkv not written: stream.264: \(reason)"
    }
}
