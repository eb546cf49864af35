import Foundation
import H264

/// A timecode v2 file, the format of x264's `--tcfile-in` and mkvmerge's `--timestamps`: one time in milliseconds
/// per source frame, entry k timing source frame k.
///
/// Shape of the file:
/// - the first line that is not blank is the header `# timecode format v2`, or `# timestamp format v2` as mkvextract
///   writes it (either accepted in any letter case and with any run of spaces between its words, as x264's
///   `sscanf("# timecode format v%d")` is lenient about spacing);
/// - after it, one time per line in milliseconds: digits with an optional fraction (`0`, `33.367`, `33.3666`), no
///   sign or exponent; surrounding spaces, tabs and a trailing CR are ignored;
/// - lines whose first non-blank character is `#` are comments, and blank lines are skipped, anywhere after the header.
///
/// Times are exact: `33.367` is 33367/1000 ms, held as a ``Rational`` number of seconds (33367/1000000 s); no
/// floating point is involved. The only rounding is to whole microseconds, in ``ptsMicroseconds(seek:frames:)``,
/// through ``Rational/microseconds(ticks:)`` (to nearest, ties away from zero).
///
/// The order of the times is not checked when parsing: more entries than a run needs are ignored, so only the
/// entries a run uses are checked (``ptsMicroseconds(seek:frames:)``).
public struct TimecodeV2: Sendable, Equatable {
    /// The file the times came from, as given (used in error messages).
    public var path: String
    /// Entry k's time in seconds (exact), for source frame k.
    public var times: [Rational]
    /// Entry k's line number in the file, from 1 (for error messages).
    public var lines: [Int]
    /// The number of lines in the file (a last line without a newline counts); an entry past the end would be on
    /// line `lineCount + 1`.
    public var lineCount: Int

    /// The two header spellings accepted, in lower case with single spaces.
    static let headers = ["# timecode format v2", "# timestamp format v2"]

    /// Parses the text of a timecode v2 file.
    /// - Parameters:
    ///   - text: the whole file.
    ///   - path: the file's name, for error messages.
    /// - Throws: `.data` naming `path` and the line: a missing or wrong header (another format version, say), a line
    ///   that is not a time in milliseconds, a time with more digits than a 64-bit exact fraction holds.
    public static func parse(_ text: String, path: String) throws -> TimecodeV2 {
        // Split on LF scalars: Swift reads CR LF as one Character, which a Character split would not cut.
        var rawLines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0)) }
        if text.unicodeScalars.last == "\n" { rawLines.removeLast() }
        var sawHeader = false
        var times: [Rational] = []
        var lines: [Int] = []
        for (offset, raw) in rawLines.enumerated() {
            let lineNumber = offset + 1
            var line = Substring(raw)
            if lineNumber == 1, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
            let trimmed = line.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if trimmed.isEmpty { continue }
            if !sawHeader {
                let words = trimmed.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" })
                let spaced = words.joined(separator: " ")
                let normalized = spaced.hasPrefix("#") && !spaced.hasPrefix("# ") ? "# " + spaced.dropFirst() : spaced
                guard headers.contains(normalized) else {
                    let found = normalized.hasPrefix("# timecode format v") || normalized.hasPrefix("# timestamp format v")
                        ? "\(quoted(trimmed)), a format other than v2 (only v2 is read)"
                        : quoted(trimmed)
                    throw LabError.data("\(path): line \(lineNumber): expected the header '# timecode format v2' (or '# timestamp format v2'), found \(found)")
                }
                sawHeader = true
                continue
            }
            if trimmed.hasPrefix("#") { continue }
            times.append(try milliseconds(trimmed, path: path, line: lineNumber))
            lines.append(lineNumber)
        }
        guard sawHeader else {
            throw LabError.data("\(path): no header: a timecode v2 file starts with '# timecode format v2' (or '# timestamp format v2')")
        }
        return TimecodeV2(path: path, times: times, lines: lines, lineCount: rawLines.count)
    }

    /// The largest timecode file read: 64 MiB, some 5 million frames of `123456.789` (a day at 60 fps).
    public static let maximumBytes = 64 << 20

    /// Reads and parses a timecode v2 file.
    /// - Throws: `.noInput` when the file does not exist or cannot be read; `.data` when it is larger than
    ///   ``maximumBytes``, is not UTF-8 text or does not parse (``parse(_:path:)``).
    public static func read(path: String) throws -> TimecodeV2 {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LabError.noInput("\(path): no such timecode file")
        }
        if !isDirectory.boolValue, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > maximumBytes {
            throw LabError.data("\(path): a timecode file of \(size) bytes, over the \(maximumBytes >> 20) MiB the lab reads (some 5 million frames)")
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw LabError.noInput("\(path): cannot be read as a timecode file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw LabError.data("\(path): not a timecode v2 file (not UTF-8 text)")
        }
        return try parse(text, path: path)
    }

    /// The presentation times of entries `seek ..< seek + frames` in microseconds, each rounded to nearest with ties
    /// away from zero (``Rational/microseconds(ticks:)``), not rebased (entry `seek` keeps its own time).
    /// - Parameters:
    ///   - seek: the first entry used (the run's `--seek`, ≥ 0).
    ///   - frames: how many entries (the frames the run encodes, ≥ 0).
    /// - Returns: `frames` strictly increasing times in µs.
    /// - Throws: `.usage` for a negative seek or count; `.data` naming the file and a line: the line where the first
    ///   missing entry would be when the file has fewer than `seek + frames` entries; the line of a time that is not
    ///   after the one before it (exactly, or once both are rounded to µs), or whose µs value overflows 64 bits.
    public func ptsMicroseconds(seek: Int, frames: Int) throws -> [Int64] {
        guard seek >= 0 else { throw LabError.usage("--seek: \(seek) is negative") }
        guard frames >= 0 else { throw LabError.usage("frame count \(frames) is negative") }
        let (end, overflow) = seek.addingReportingOverflow(frames)
        guard !overflow, end <= times.count else {
            let missing = times.count
            throw LabError.data("\(path): line \(lineCount + 1): entry \(missing + 1) is missing: the file has \(times.count) times, "
                                + "and --seek \(seek) with \(frames) frames needs \(overflow ? "more than 2^63" : "\(end)")")
        }
        var result: [Int64] = []
        result.reserveCapacity(frames)
        for k in seek..<end {
            let time = times[k]
            let us: Int64
            do {
                us = try Rational(1, time.denominator).microseconds(ticks: time.numerator)
            } catch {
                throw LabError.data("\(path): line \(lines[k]): \(Self.millisecondsText(time)) ms does not fit in 64-bit microseconds")
            }
            if k > seek {
                let previous = times[k - 1]
                guard previous < time else {
                    throw LabError.data("\(path): line \(lines[k]): \(Self.millisecondsText(time)) ms is not after "
                                        + "\(Self.millisecondsText(previous)) ms on line \(lines[k - 1]) (times must increase)")
                }
                guard result[result.count - 1] < us else {
                    throw LabError.data("\(path): line \(lines[k]): \(Self.millisecondsText(time)) ms and "
                                        + "\(Self.millisecondsText(previous)) ms on line \(lines[k - 1]) round to the same microsecond, \(us) µs")
                }
            }
            result.append(us)
        }
        return result
    }

    /// Parses `digits[.digits]` milliseconds into exact seconds.
    static func milliseconds(_ text: String, path: String, line: Int) throws -> Rational {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits: (Substring) -> Bool = { $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        let whole = parts[0]
        var fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, isDigits(whole), isDigits(fraction), parts.count == 1 || !fraction.isEmpty else {
            throw LabError.data("\(path): line \(line): \(quoted(text)) is not a time in milliseconds (digits with an optional fraction, e.g. 33.367)")
        }
        while fraction.hasSuffix("0") { fraction = fraction.dropLast() }
        let tooLong = LabError.data("\(path): line \(line): \(quoted(text)) has more digits than an exact 64-bit time holds")
        // ms = whole.fraction = (whole * 10^f + fraction) / 10^f; seconds = that / 1000.
        let wholeDigits = whole.drop(while: { $0 == "0" })
        let digits = String(wholeDigits) + String(fraction)
        guard fraction.count <= 15, digits.count <= 18, let numerator = Int64(digits.isEmpty ? "0" : digits) else { throw tooLong }
        var denominator: Int64 = 1000
        for _ in 0..<fraction.count { denominator *= 10 }
        guard let value = try? Rational(numerator, denominator) else { throw tooLong }
        return value
    }

    /// A time in seconds written as milliseconds, exactly when it has a finite decimal expansion of ≤ 6 decimals,
    /// else as a fraction of milliseconds.
    static func millisecondsText(_ seconds: Rational) -> String {
        guard let ms = try? seconds * Rational(1000) else { return "\(seconds) s ×1000" }
        if ms.denominator == 1 { return "\(ms.numerator)" }
        var scale: Int64 = 1
        for decimals in 1...6 {
            scale *= 10
            if scale % ms.denominator == 0 {
                let scaled = ms.numerator * (scale / ms.denominator)
                let sign = scaled < 0 ? "-" : ""
                let magnitude = scaled.magnitude
                let fraction = String(magnitude % UInt64(scale))
                return "\(sign)\(magnitude / UInt64(scale)).\(String(repeating: "0", count: decimals - fraction.count))\(fraction)"
            }
        }
        return "\(ms)"
    }

    /// A line quoted for a message, cut to 60 characters.
    static func quoted(_ text: String) -> String {
        text.count > 60 ? "'\(text.prefix(60))…'" : "'\(text)'"
    }
}
