import EncoderLab
import Foundation

// The command line: parse arguments, call EncoderLab, print, and map errors to exit codes (sysexits.h).

let usage = """
usage: enclab encode INPUT [x264 flags] [--rc cqp|crf|abr|cbr|vbr] [--db FILE] [--out DIR]
       enclab run EXPERIMENT.json [--db FILE] [--out DIR] [--max-runs N]
       enclab inspect STREAM [--json] [--strict] [--from annexb|avcc|packets] [--length-size 1|2|4]
       enclab convert --to avcc|annexb|packets IN OUT [--from annexb|avcc|packets] [--length-size 1|2|4]
                      [--avcc-config FILE] [--fps NUM[/DEN]]
       enclab version

encode  one encode of INPUT (.y4m, or any file ffmpeg decodes) with x264's own flags
        (defaults: --db results/encode.sqlite --out results/encode)
run     every run of an experiment file (defaults: --db results/NAME.sqlite --out results/NAME)
inspect NAL units, access units with slice types, and SPS/PPS fields of an H.264 stream
convert a stream between Annex B, AVCC (with its avcC record) and the lab's packet format
"""

/// Takes `--db` and `--out` (with a value) out of `arguments`.
func labOptions(_ arguments: [String]) throws -> (db: String?, out: String?, rest: [String]) {
    var db: String?, out: String?, rest: [String] = []
    var i = 0
    while i < arguments.count {
        let a = arguments[i]
        if a == "--db" || a == "--out" {
            guard i + 1 < arguments.count else { throw LabError(.usage, "flag '\(a)' needs an argument") }
            if a == "--db" { db = arguments[i + 1] } else { out = arguments[i + 1] }
            i += 2
        } else if a.hasPrefix("--db=") {
            db = String(a.dropFirst(5)); i += 1
        } else if a.hasPrefix("--out=") {
            out = String(a.dropFirst(6)); i += 1
        } else {
            rest.append(a); i += 1
        }
    }
    if out == "" { throw LabError(.usage, "--out needs a folder path") }
    return (db, out, rest)
}

/// Splits `--name value` options of inspect/convert from positional arguments; `flags` take no value.
func bitstreamOptions(_ arguments: [String], flags: Set<String>) throws -> ([String: String], Set<String>, [String]) {
    let valued: Set<String> = ["--to", "--from", "--length-size", "--avcc-config", "--fps"]
    var values: [String: String] = [:], seen: Set<String> = [], rest: [String] = []
    var i = 0
    while i < arguments.count {
        let a = arguments[i]
        if valued.contains(a) {
            guard i + 1 < arguments.count else { throw LabError(.usage, "flag '\(a)' needs an argument") }
            values[a] = arguments[i + 1]
            i += 2
        } else if flags.contains(a) {
            seen.insert(a)
            i += 1
        } else if a.hasPrefix("--") {
            throw LabError(.usage, "unknown flag '\(a)'")
        } else {
            rest.append(a)
            i += 1
        }
    }
    return (values, seen, rest)
}

func format(_ value: String?) throws -> StreamFormat? {
    guard let value else { return nil }
    guard let f = StreamFormat(rawValue: value) else { throw LabError(.usage, "stream format must be annexb, avcc or packets, got '\(value)'") }
    return f
}

func lengthSize(_ value: String?) throws -> Int {
    guard let value else { return 4 }
    guard let n = Int(value), [1, 2, 4].contains(n) else { throw LabError(.usage, "--length-size must be 1, 2 or 4, got '\(value)'") }
    return n
}

/// A message as one printable line: control characters (newlines, ESC, NUL) shown as `\u{..}` escapes, and
/// at most 500 characters.
func oneLine(_ message: String) -> String {
    var out = ""
    for scalar in message.unicodeScalars {
        if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
    }
    return out.count > 500 ? String(out.prefix(497)) + "..." : out
}

func describe(_ o: RunOutcome) -> String {
    let psnr = o.meanPSNR.map { String(format: "%.2f dB", $0) } ?? "n/a"
    return String(format: "run %lld  %@  %@  frames=%d  bytes=%d  %.1f kbit/s  psnr_avg=%@  %@",
                  o.runID, oneLine((o.clip as NSString).lastPathComponent), oneLine(o.label), o.frames, o.bytes, o.kbps, psnr,
                  oneLine(o.streamPath))
}

func main() throws {
    Interruption.install()
    let args = Array(CommandLine.arguments.dropFirst())
    if args.count >= 2, ["-h", "--help"].contains(args[1]) {
        print(usage)
        return
    }
    guard let command = args.first else {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(64)
    }
    switch command {
    case "-h", "--help", "help":
        print(usage)
    case "version", "--version":
        print("enclab \(labVersion) (libx264 \(x264Version))")
    case "encode":
        let (db, out, rest) = try labOptions(Array(args.dropFirst()))
        let (settings, positional) = try EncodeSettings.parse(arguments: rest)
        guard positional.count == 1 else {
            throw LabError(.usage, positional.isEmpty ? "encode needs an INPUT clip" : "encode takes one INPUT, got \(positional.joined(separator: " "))")
        }
        // Settings, clip and tools are checked before any database or folder is made.
        try Lab.requireTools()
        try Lab.validate([Experiment.Run(clip: positional[0], settings: settings, label: "")])
        let lab = try Lab(databasePath: db ?? "results/encode.sqlite", outDirectory: out ?? "results/encode")
        let outcome = try lab.run(experiment: "encode", clipPath: positional[0], settings: settings)
        print(describe(outcome))
    case "run":
        let (db, out, afterLab) = try labOptions(Array(args.dropFirst()))
        var maxRuns = Experiment.defaultMaxRuns
        var rest: [String] = []
        var i = 0
        while i < afterLab.count {
            let a = afterLab[i]
            if a == "--max-runs" || a.hasPrefix("--max-runs=") {
                let value: String
                if a == "--max-runs" {
                    guard i + 1 < afterLab.count else { throw LabError(.usage, "flag '--max-runs' needs an argument") }
                    value = afterLab[i + 1]; i += 2
                } else {
                    value = String(a.dropFirst("--max-runs=".count)); i += 1
                }
                guard let n = Int(value), n > 0 else { throw LabError(.usage, "--max-runs needs a whole number above 0, got '\(value)'") }
                maxRuns = n
            } else if a.hasPrefix("-") && a.count > 1 {
                throw LabError(.usage, "run: unknown flag '\(a)' (run takes --db, --out, --max-runs)")
            } else {
                rest.append(a); i += 1
            }
        }
        guard rest.count == 1 else {
            throw LabError(.usage, rest.isEmpty ? "run needs an EXPERIMENT.json" : "run takes one experiment file, got \(rest.joined(separator: " "))")
        }
        let experiment = try Experiment(path: rest[0], maxRuns: maxRuns)
        try Lab.requireTools()
        try Lab.validate(experiment.runs)
        let lab = try Lab(databasePath: db ?? "results/\(experiment.name).sqlite", outDirectory: out ?? "results/\(experiment.name)")
        let outcomes = try lab.run(experiment, validated: true) { print(describe($0)) }
        print("\(outcomes.count) runs done: database \(lab.store.database.path), plots in \(lab.outDirectory)")
    case "inspect":
        let (values, flags, rest) = try bitstreamOptions(Array(args.dropFirst()), flags: ["--json", "--strict"])
        guard rest.count == 1 else { throw LabError(.usage, "inspect takes one STREAM") }
        let stream = try Bitstream.load(rest[0], format: try format(values["--from"]), lengthSize: try lengthSize(values["--length-size"]))
        // A header rule broken (forbidden_zero_bit 1): a warning per NAL unit, or with --strict an error (65).
        try Bitstream.checkHeaders(stream, path: rest[0], strict: flags.contains("--strict")) {
            FileHandle.standardError.write(Data("warning: \(oneLine($0))\n".utf8))
        }
        print(flags.contains("--json") ? try Bitstream.inspectJSON(stream, path: rest[0]) : try Bitstream.inspectText(stream, path: rest[0]), terminator: flags.contains("--json") ? "\n" : "")
    case "convert":
        let (values, _, rest) = try bitstreamOptions(Array(args.dropFirst()), flags: [])
        guard rest.count == 2 else { throw LabError(.usage, "convert takes IN and OUT") }
        guard let to = try format(values["--to"]) else { throw LabError(.usage, "convert needs --to avcc|annexb|packets") }
        var options = Convert.Options(to: to)
        options.from = try format(values["--from"])
        options.lengthSize = try lengthSize(values["--length-size"])
        options.avccConfigPath = values["--avcc-config"]
        if let fps = values["--fps"] {
            let parts = fps.split(separator: "/").map { Int($0) }
            guard (1...2).contains(parts.count), let num = parts[0], let den = parts.count == 2 ? parts[1] : 1 else {
                throw LabError(.usage, "--fps must be NUM or NUM/DEN, got '\(fps)'")
            }
            options.fps = (num, den)
        }
        let summary = try Convert.run(input: rest[0], output: rest[1], options: options)
        print("\(rest[0]) (\(summary.from.rawValue), \(summary.nalUnits) NAL units, \(summary.accessUnits) access units) -> \(rest[1]) (\(to.rawValue), \(summary.bytes) bytes)")
    default:
        throw LabError(.usage, "unknown command '\(command)' (encode, run, inspect, convert, version)")
    }
}

do {
    try main()
} catch let error as LabError {
    // Ctrl-C at any stage exits 130, whatever the interrupted step failed with.
    let reported = Interruption.received.map { error.kind == .interrupted ? error : LabError(.interrupted, "interrupted by \($0)") } ?? error
    FileHandle.standardError.write(Data("enclab: \(oneLine(reported.message))\n".utf8))
    exit(reported.kind.exitCode)
} catch {
    FileHandle.standardError.write(Data("enclab: \(oneLine(error.localizedDescription))\n".utf8))
    exit(70)
}
