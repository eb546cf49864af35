import EncoderLab
import Foundation

/// One `enclab` command: its name, its flags, its help and its work. `enclab NAME --help`, `enclab NAME -h` and
/// `enclab help NAME` all print ``help``, which is built from the same flag table the parser reads.
///
/// A command line goes through three steps, as swift-argument-parser's commands do (`validate()` then `run()`):
/// ``FlagParser`` takes the words of the flag table out (``ParsedArguments``); ``options(_:)``, the one validation
/// step, turns them into the command's typed ``Options`` (every value checked, every usage error thrown there);
/// ``run(_:)`` does the work with those options alone and returns the exit status.
protocol Command: Sendable {
    /// The command's options once validated: each flag and operand as a typed value.
    associatedtype Options
    /// The word after `enclab` that names it.
    var name: String { get }
    /// One line for `enclab help`.
    var summary: String { get }
    /// The operands in its usage line (`INPUT [x264 flags]`), "" for none.
    var operands: String { get }
    /// The flags it takes: the parser reads exactly these and the help lists them (`-h`/`--help` comes with every
    /// command and is not listed here).
    var flags: [Flag] { get }
    /// What it does: the help's paragraphs between the usage line and the flags.
    var about: String { get }
    /// More sections after the flags (title, text), such as encode's x264 flags; empty for none.
    var sections: [(title: String, text: String)] { get }
    /// The exit statuses it can end with, and what each means for it.
    var exitStatuses: [(status: Int32, meaning: String)] { get }
    /// An example command line (or a few, one a line), without a leading `$`.
    var example: String { get }
    /// Whether a flag not in ``flags`` is left among the operands (`encode`: x264's flags, for x264's parser)
    /// rather than refused.
    var handsOn: Bool { get }
    /// The one validation step: the parsed words as typed options.
    /// - Throws: `LabError` (`.usage` for a bad value, a missing or extra operand).
    func options(_ parsed: ParsedArguments) throws -> Options
    /// Does the work with validated options.
    /// - Returns: the exit status: 0, or 1 for a check that found violations (`check`).
    /// - Throws: `LabError`, which `main` maps to the exit status.
    func run(_ options: Options) throws -> Int32
}

extension Command {
    var sections: [(title: String, text: String)] { [] }
    var handsOn: Bool { false }

    /// Parses, validates and runs: `arguments` are the words after the command's name.
    /// - Returns: the exit status (0 after printing the help).
    func execute(arguments: [String]) throws -> Int32 {
        guard let parsed = try parse(arguments) else { return 0 }
        return try run(options(parsed))
    }

    /// The usage after `enclab NAME`, word by word: its required flags, operands, then the optional flags (a flag
    /// and its value one word).
    var usageWords: [String] {
        func shown(_ f: Flag) -> String { f.value.map { "\(f.name) \($0)" } ?? f.name }
        var words = flags.filter(\.required).map(shown)
        if !operands.isEmpty { words.append(operands) }
        words += flags.filter { !$0.required }.map { "[\(shown($0))\($0.repeatable ? " ..." : "")]" }
        return words
    }

    /// The usage line after `lead` (`usage: `), wrapped under the first word after the command's name.
    func usage(after lead: String) -> String {
        usageWords.isEmpty ? "\(lead)enclab \(name)" : wrapped(words: usageWords, after: "\(lead)enclab \(name) ")
    }

    /// The full help: usage, what it does, flags with defaults, further sections, exit statuses, an example.
    var help: String {
        var rows = flags.map { f -> (String, String) in
            var about = f.about
            if f.required { about += " (required)" } else if let d = f.defaultValue { about += " (default: \(d))" }
            if f.repeatable { about += "; may be given more than once" }
            return (f.value.map { "\(f.name) \($0)" } ?? f.name, about)
        }
        rows.append(("-h, --help", "this help (a word of its own anywhere on the line, unless it is the value of a flag above)"))
        let width = rows.map(\.0.count).max() ?? 0
        let flagLines = rows.map { wrapped($0.1, after: "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  ") }
        var text = "\(usage(after: "usage: "))\n\n\(about)\n\nFlags (--name VALUE or --name=VALUE):\n"
        text += flagLines.joined(separator: "\n")
        for section in sections { text += "\n\n\(section.title):\n\(section.text)" }
        text += "\n\nExit status:\n" + exitStatuses.map { wrapped($0.meaning, after: "  " + String($0.status).padding(toLength: 5, withPad: " ", startingAt: 0)) }
            .joined(separator: "\n")
        text += "\n\nExample:\n" + example.split(separator: "\n").map { "  \($0)" }.joined(separator: "\n")
        return text
    }

    /// Parses `arguments` with this command's flags (flags not in ``flags`` left in `rest` when ``handsOn``).
    /// - Returns: the parsed arguments, or nil when help was asked for (it has been printed to stdout).
    func parse(_ arguments: [String]) throws -> ParsedArguments? {
        switch try FlagParser(command: name, flags: flags, handsOn: handsOn).parse(arguments) {
        case .help:
            print(help)
            return nil
        case .arguments(let parsed):
            return parsed
        }
    }
}

/// Every command, in the order `enclab help` lists them, and the names `main` dispatches on.
enum Commands {
    static let all: [any Command] = [EncodeCommand(), RunCommand(), MergeCommand(), PlotCommand(), ReportCommand(), AnalyzeCommand(), MeasureCommand(), CompareCommand(),
                                     InspectCommand(), ConvertCommand(), CheckCommand(), RTPCommand(), BDRateCommand(), ExportCommand(),
                                     VersionCommand(), HelpCommand()]

    /// The command a first argument names: a command's name, or `-h`/`--help` (help) or `--version` (version).
    /// - Throws: `.usage` "unknown command 'X' (encode, run, ...)".
    static func named(_ word: String) throws -> any Command {
        let name = ["-h": "help", "--help": "help", "--version": "version"][word] ?? word
        guard let command = all.first(where: { $0.name == name }) else {
            throw LabError(.usage, "unknown command '\(word)' (\(all.map(\.name).joined(separator: ", ")))")
        }
        return command
    }

    /// Where a usage error on this command line points: `enclab NAME --help` for a known command (other than
    /// `help`), else `enclab help`.
    static func helpReference(_ arguments: [String]) -> String {
        guard let first = arguments.first, let command = try? named(first), command.name != "help" else { return "enclab help" }
        return "enclab \(command.name) --help"
    }

    /// `enclab help`: every command's usage line and summary.
    static var overview: String {
        let width = all.map(\.name.count).max() ?? 0
        return """
            \(all.enumerated().map { $1.usage(after: $0 == 0 ? "usage: " : "       ") }.joined(separator: "\n"))

            \(all.map { $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.summary }.joined(separator: "\n"))

            'enclab COMMAND --help' (or 'enclab help COMMAND') gives a command's flags, defaults, exit statuses and an example.
            """
    }
}

// Shared by the commands.

/// `text` after `lead` (a help row's first columns), its words wrapped at `width` columns, continuation lines
/// indented to where the text starts.
func wrapped(_ text: String, after lead: String, width: Int = 112) -> String {
    wrapped(words: text.split(separator: " ").map(String.init), after: lead, width: width)
}

/// `words` after `lead`, one space apart, wrapped at `width` columns (a word longer than a line stands alone),
/// continuation lines indented to where the first word starts.
func wrapped(words: [String], after lead: String, width: Int = 112) -> String {
    var lines: [String] = []
    var line = lead
    for word in words {
        if line.count > lead.count && line.count + 1 + word.count > width {
            lines.append(line)
            line = String(repeating: " ", count: lead.count)
        }
        line += (line.count > lead.count ? " " : "") + word
    }
    lines.append(line)
    return lines.joined(separator: "\n")
}

/// One run's line on stdout: id, clip, label, frames, bytes, rate, mean PSNR and the stream's path.
func describe(_ o: RunOutcome) -> String {
    let psnr = o.meanPSNR.map { String(format: "%.2f dB", $0) } ?? "n/a"
    return String(format: "run %lld  %@  %@  frames=%d  bytes=%d  %.1f kbit/s  psnr_avg=%@  %@%@",
                  o.runID, oneLine((o.clip as NSString).lastPathComponent), oneLine(o.settingsText), o.frames, o.bytes, o.kbps, psnr,
                  oneLine(o.streamPath), o.alreadyDone ? "  (already done\(alreadyDoneNote(o)))" : "")
}

/// A run's answers, the line printed under its run line (``describe(_:)``): the largest GOP in frames and the longest
/// in display seconds (two GOPs, maybe), the 1-s peak against the target in force where the peak starts (``RunAnswers/targetKbps``) as a ratio, and each VideoToolbox rule's violations (keyframe limits by
/// limit, DataRateLimits by pair: windows over its bytes, and the worst window as a ratio of them), as stored.
/// `  run 3: largest GOP 30 frames, longest GOP 1.001 s; peak 1 s 412.3 kbit/s, 1.37 x the target 300 kbit/s; MaxKeyFrameInterval=30: 0 violations`
/// (and for a run whose encoder dropped pictures: `...; 58 of 90 pictures skipped by the encoder (skipped_frames)`)
func describe(_ a: RunAnswers, runID: Int64) -> String {
    var parts: [String] = []
    if let frames = a.gopMaxFrames {
        parts.append("largest GOP \(frames) frames" + (a.gopMaxSeconds.map { String(format: ", longest GOP %.3f s", $0) } ?? ""))
    } else {
        parts.append("largest GOP n/a (no run metrics: 'enclab analyze' computes them)")
    }
    switch (a.peak1sKbps, a.targetKbps) {
    case let (peak?, target?) where target > 0:
        parts.append(String(format: "peak 1 s %.1f kbit/s, %.2f x the target %@ kbit/s", peak, peak / target, number(target))
                     + (a.targetFromSchedule ? " in force there (rate schedule)" : ""))
    case let (peak?, _):
        parts.append(String(format: "peak 1 s %.1f kbit/s (no target bitrate)", peak))
    case (nil, _):
        parts.append("peak 1 s n/a (no full 1-s window)")
    }
    func violations(_ n: Int64) -> String { "\(n) violation\(n == 1 ? "" : "s")" }
    if let k = a.keyframeLimits {
        if k.maxFrames > 0 {
            parts.append("MaxKeyFrameInterval=\(k.maxFrames): " + (k.frameLimitApplied ? violations(Int64(k.frameLimitViolations))
                : "not applied (vt-compat keeps the duration limit alone; 'enclab check' counts against it)"))
        }
        if k.maxDuration != "0" {
            // Stored exact (`1/2`, `1001/500`): shown as a decimal of at most 6 places, as the property is written.
            let parts2 = k.maxDuration.split(separator: "/").compactMap { Double($0) }
            let shown = parts2.count == 2 && parts2[1] > 0 ? decimal(parts2[0] / parts2[1], places: 6) : k.maxDuration
            parts.append("MaxKeyFrameIntervalDuration=\(shown): \(violations(Int64(k.durationLimitViolations)))")
        }
    }
    if a.skippedFrames > 0 {
        parts.append("\(a.skippedFrames) of \(a.inputFrames.map(String.init) ?? "?") pictures skipped by the encoder (skipped_frames)")
    }
    for p in a.dataRateLimits {
        var text = "DataRateLimits pair \(p.pair) (\(p.bytes) bytes in \(p.seconds) s\(p.honoured ? "" : ", not honoured: vt-compat")): "
            + "\(p.windowsOver) of \(p.windows) windows over"
        if let r = p.worstRatio { text += String(format: ", the worst %.3f x the limit", r) }
        parts.append(text)
    }
    return "  run \(runID): " + parts.joined(separator: "; ")
}

/// A number as short as it is exact to 3 decimals: `300`, `612.5`.
func number(_ value: Double) -> String { decimal(value, places: 3) }

/// `value` rounded to `places` decimals, trailing zeros (and a trailing point) left out: `0.5`, `2`.
func decimal(_ value: Double, places: Int) -> String {
    var text = String(format: "%.\(places)f", value)
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}

/// What an already-done run's line adds when its encode is not repeatable (``Repeatability``): the stored bytes
/// are one sample of its key, and how many repeats of it the database holds.
func alreadyDoneNote(_ o: RunOutcome) -> String {
    guard o.repeatable == false else { return "" }
    return "; not repeatable: stored from an earlier process, a new encode would give other bytes"
        + (o.repeats > 1 ? "; \(o.repeats) repeats stored, this is the first" : "")
}

/// A `--from`/`--to` value as a stream format, nil when absent.
/// - Throws: `.usage` "stream format must be annexb, avcc or packets, got 'X'".
func streamFormat(_ value: String?) throws -> StreamFormat? {
    guard let value else { return nil }
    guard let f = StreamFormat(rawValue: value) else { throw LabError(.usage, "stream format must be annexb, avcc or packets, got '\(value)'") }
    return f
}

/// A `--length-size` value: 1, 2 or 4 bytes (4 when absent).
/// - Throws: `.usage` "--length-size must be 1, 2 or 4, got 'X'".
func lengthSize(_ value: String?) throws -> Int {
    guard let value else { return 4 }
    guard let n = Int(value), [1, 2, 4].contains(n) else { throw LabError(.usage, "--length-size must be 1, 2 or 4, got '\(value)'") }
    return n
}

/// The flags `inspect` and `convert` share.
enum StreamFlags {
    static let from = Flag("--from", value: "annexb|avcc|packets", about: "the input's format",
                           default: "detected: a leading start code is Annex B, a file that parses whole as packets is packets, else AVCC")
    static let lengthSize = Flag("--length-size", value: "1|2|4", about: "bytes of each AVCC length prefix",
                                 default: "4, or for input with --in-avcc-config the record's")
    static let strict = Flag("--strict", about: "refuse (65) what is otherwise accepted with a warning: a value outside its range "
                             + "that does not affect decoding, an empty NAL unit, forbidden_zero_bit 1, an SEI that does not parse")
    static let inAVCConfig = Flag("--in-avcc-config", value: "FILE",
                                  about: "an avcC record (ISO/IEC 14496-15, as an MP4 sample entry holds it) giving the parameter "
                                  + "sets and length size of AVCC input", default: "none: the stream carries its parameter sets")
    static let parameterSets = Flag("--parameter-sets", value: "VALUE",
                                    about: "parameter sets sent beside the stream: a file of Annex B SPS/PPS NAL units, or SDP's "
                                    + "sprop-parameter-sets (base64 NAL units separated by commas)",
                                    default: "none: the stream carries its parameter sets")
}

/// The environment section of the commands that open a database.
let databaseEnvironment = (title: "Environment", text: wrapped(
    "how long to wait for a database another process holds, in milliseconds (default 10000; 0: fail at once)",
    after: "  ENCLAB_DB_TIMEOUT_MS  "))
