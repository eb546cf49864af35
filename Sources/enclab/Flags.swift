import EncoderLab

/// One flag of a command: what the parser needs (its name, whether it takes a value) and what the help says of it.
/// The parser reads exactly the flags of a command's table, and its help lists exactly them.
struct Flag: Sendable {
    /// The long name with its dashes: `--db`.
    let name: String
    /// The value's placeholder in the help (`FILE`, `N`), or nil for a switch, which takes no value.
    let value: String?
    /// What it does, for the help: one line.
    let about: String
    /// What applies when it is not given, for the help; nil for a switch or a required flag.
    let defaultValue: String?
    /// Whether the command cannot run without it.
    let required: Bool
    /// Whether it may be given more than once, every value kept (otherwise the last one given counts).
    let repeatable: Bool

    /// A flag with a value: `--db FILE` or `--db=FILE`.
    init(_ name: String, value: String, about: String, default defaultValue: String? = nil, required: Bool = false,
         repeatable: Bool = false) {
        precondition(name.hasPrefix("--") && (defaultValue != nil || required), "\(name): a valued flag states its default or is required")
        self.name = name
        self.value = value
        self.about = about
        self.defaultValue = defaultValue
        self.required = required
        self.repeatable = repeatable
    }

    /// A switch: `--json`.
    init(_ name: String, about: String) {
        precondition(name.hasPrefix("--"))
        self.name = name
        self.value = nil
        self.about = about
        self.defaultValue = nil
        self.required = false
        self.repeatable = false
    }
}

/// A command line once its command's flags are taken out.
struct ParsedArguments {
    /// Each valued flag's values, in the order given.
    fileprivate(set) var values: [String: [String]] = [:]
    /// The switches given.
    fileprivate(set) var switches: Set<String> = []
    /// The words that are not the command's own flags, in order: its operands, and for a command that hands on
    /// what it does not know (`encode`, to x264's flag parser) those flags with their values.
    fileprivate(set) var rest: [String] = []

    /// The last value given for the flag `name` (`--db`), or nil.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given for the repeatable flag `name`, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether the switch `name` was given.
    func has(_ name: String) -> Bool { switches.contains(name) }

    /// The value of the flag `name`, which the command needs.
    /// - Throws: `.usage` "COMMAND needs NAME PLACEHOLDER" (`plot needs --db FILE`) when it is absent.
    func required(_ name: String, _ command: String, _ placeholder: String) throws -> String {
        guard let v = value(name) else { throw LabError(.usage, "\(command) needs \(name) \(placeholder)") }
        return v
    }

    /// Refuses operands for a command that takes none.
    /// - Throws: `.usage` "COMMAND takes no operands, got WORDS".
    func noOperands(_ command: String, _ what: String = "operands") throws {
        guard rest.isEmpty else { throw LabError(.usage, "\(command) takes no \(what), got \(rest.joined(separator: " "))") }
    }

    /// The value of a folder or file flag (`--out`), nil when absent.
    /// - Throws: `.usage` "--out needs a folder path" when it is given empty (`--out=`).
    func path(_ name: String, what: String) throws -> String? {
        guard let v = value(name) else { return nil }
        if v.isEmpty { throw LabError(.usage, "\(name) needs \(what)") }
        return v
    }
}

/// What a command line asks for: help, or the work with these arguments.
enum ParseResult {
    case help
    case arguments(ParsedArguments)
}

/// The one flag parser of every command.
///
/// - A flag is a word that starts with `-`, is longer than `-` and is not a whole number (`-5` is an operand).
/// - `--name value` and `--name=value` are the same for every valued flag; the value is the next word whatever it
///   is (`--out -h` names a folder `-h`). A switch refuses `--name=value`.
/// - `-h` or `--help` as a word of its own, anywhere, asks for the command's help, even after an error on the line;
///   as a flag's value it is that value, not help.
/// - A flag not in the table is refused (`.usage`, "unknown flag '--x' (run takes --db, ...)"), unless the
///   command hands such flags on (`handsOn`: `encode`, to x264's flag parser), when it goes to `rest` as any other
///   word does. The parser does not know what such a flag takes, so the words after it are read as usual: the
///   command's own flags and `-h` are found wherever they stand (`--keyint --db x` gives `--db` the value `x`).
struct FlagParser {
    /// The command's name, for the messages.
    let command: String
    /// The flags it takes.
    let flags: [Flag]
    /// Whether a flag not in ``flags`` goes to `rest` (for another parser) rather than being refused.
    var handsOn = false

    /// Whether `word` is written as a flag rather than an operand.
    static func isFlag(_ word: String) -> Bool {
        word.hasPrefix("-") && word.count > 1 && Int(word) == nil
    }

    /// Reads `words` (the arguments after the command's name).
    /// - Returns: `.help` when `-h` or `--help` stands as a word of its own, else the parsed arguments.
    /// - Throws: `.usage` for the first bad flag: unknown, a valued one without its value, a switch given a value.
    func parse(_ words: [String]) throws -> ParseResult {
        var parsed = ParsedArguments()
        var firstError: LabError?
        func refuse(_ message: String) {
            if firstError == nil { firstError = LabError(.usage, message) }
        }
        var i = 0
        while i < words.count {
            let word = words[i]
            i += 1
            if word == "-h" || word == "--help" { return .help }
            guard Self.isFlag(word) else {
                parsed.rest.append(word)
                continue
            }
            var name = word
            var inline: String?
            if word.hasPrefix("--"), let eq = word.firstIndex(of: "=") {
                name = String(word[..<eq])
                inline = String(word[word.index(after: eq)...])
            }
            if let flag = flags.first(where: { $0.name == name }) {
                if flag.value == nil {
                    if let inline { refuse("flag '\(name)' takes no argument, got '\(inline)'") } else { parsed.switches.insert(name) }
                } else if let value = inline {
                    parsed.values[name, default: []].append(value)
                } else if i < words.count {
                    parsed.values[name, default: []].append(words[i])
                    i += 1
                } else {
                    refuse("flag '\(name)' needs an argument")
                }
            } else if name == "--help", let inline {
                refuse("flag '--help' takes no argument, got '\(inline)'")
            } else if handsOn {
                parsed.rest.append(word)
            } else {
                let takes = flags.isEmpty ? "takes no flags" : "takes " + flags.map(\.name).joined(separator: ", ")
                refuse("unknown flag '\(name)' (\(command) \(takes))")
            }
        }
        if let firstError { throw firstError }
        return .arguments(parsed)
    }
}

/// `encode`'s and `run`'s `--metrics LIST` and `--vmaf-ffmpeg PATH` (docs/quality-metrics.md).
enum MetricsFlags {
    /// The two flags, `--metrics` with its default as the command says it (`run`'s falls back on the experiment's).
    static func flags(metricsDefault: String) -> [Flag] {
        [
            Flag("--metrics", value: "LIST", about: "score every displayed frame with libvmaf against its source picture: vmaf, vmaf-neg, vmaf-4k, psnr-hvs, ms-ssim, ssim, ciede2000, xpsnr, comma-separated (docs/quality-metrics.md); not part of the run key",
                 default: metricsDefault),
            Flag("--vmaf-ffmpeg", value: "PATH", about: "the ffmpeg built with libvmaf that scores --metrics",
                 default: "$ENCLAB_VMAF_FFMPEG, else the imageio-ffmpeg binary in $ENCLAB_VENV (/opt/enclab-venv)"),
        ]
    }

    /// `--metrics` as given (nil without it) and `--vmaf-ffmpeg`'s path (nil without it).
    /// - Throws: `.usage` for a metric libvmaf does not score (``QualityMetric/list(_:flag:)``), then for an empty
    ///   `--vmaf-ffmpeg`.
    static func parse(_ parsed: ParsedArguments) throws -> (metrics: String?, vmafFFmpeg: String?) {
        let metrics = parsed.value("--metrics")
        if let metrics { _ = try QualityMetric.list(metrics) }
        return (metrics, try parsed.path("--vmaf-ffmpeg", what: "the path of an ffmpeg built with libvmaf"))
    }
}
