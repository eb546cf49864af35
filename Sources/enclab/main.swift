import EncoderLab
import Foundation

// The command line: parse arguments, call EncoderLab, print, and map errors to exit codes (sysexits.h).

let usage = """
usage: enclab encode INPUT [x264 flags] [--rc cqp|crf|abr|cbr|vbr] [--db FILE] [--out DIR]
       enclab run EXPERIMENT.json [--db FILE] [--out DIR]
       enclab version

encode  one encode of INPUT (.y4m, or any file ffmpeg decodes) with x264's own flags
        (defaults: --db results/encode.sqlite --out results/encode)
run     every run of an experiment file (defaults: --db results/NAME.sqlite --out results/NAME)
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
    return (db, out, rest)
}

func describe(_ o: RunOutcome) -> String {
    let psnr = o.meanPSNR.map { String(format: "%.2f dB", $0) } ?? "n/a"
    return String(format: "run %lld  %@  %@  frames=%d  bytes=%d  %.1f kbit/s  psnr_avg=%@  %@",
                  o.runID, (o.clip as NSString).lastPathComponent, o.label, o.frames, o.bytes, o.kbps, psnr, o.streamPath)
}

func main() throws {
    let args = Array(CommandLine.arguments.dropFirst())
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
        _ = try settings.resolved()
        let lab = try Lab(databasePath: db ?? "results/encode.sqlite", outDirectory: out ?? "results/encode")
        let outcome = try lab.run(experiment: "encode", clipPath: positional[0], settings: settings)
        print(describe(outcome))
    case "run":
        let (db, out, rest) = try labOptions(Array(args.dropFirst()))
        guard rest.count == 1 else {
            throw LabError(.usage, rest.isEmpty ? "run needs an EXPERIMENT.json" : "run takes one experiment file, got \(rest.joined(separator: " "))")
        }
        let experiment = try Experiment(path: rest[0])
        let lab = try Lab(databasePath: db ?? "results/\(experiment.name).sqlite", outDirectory: out ?? "results/\(experiment.name)")
        let outcomes = try lab.run(experiment) { print(describe($0)) }
        print("\(outcomes.count) runs done: database \(lab.store.database.path), plots in \(lab.outDirectory)")
    default:
        throw LabError(.usage, "unknown command '\(command)' (encode, run, version)")
    }
}

do {
    try main()
} catch let error as LabError {
    FileHandle.standardError.write(Data("enclab: \(error.message)\n".utf8))
    exit(error.kind.exitCode)
} catch {
    FileHandle.standardError.write(Data("enclab: \(error)\n".utf8))
    exit(70)
}
