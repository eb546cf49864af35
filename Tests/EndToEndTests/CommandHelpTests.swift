import Foundation
import Testing
import EncoderLab

/// Every command's help, its flags as the parser reads them, `--name=value`, and usage errors, run through the
/// built `enclab`.
@Suite("enclab help, flags and usage errors, end to end", .serialized)
struct CommandHelpTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    /// Every command, as the issue names them.
    static let commands = ["encode", "run", "merge", "plot", "report", "analyze", "measure", "compare", "inspect", "convert", "check", "rtp", "bd-rate", "export", "version", "help"]

    /// Arguments that make each command do some work or refuse something, to put before `-h`.
    static let someArguments: [String: [String]] = [
        "encode": ["c.y4m", "--crf", "30", "--db", "x.sqlite"], "run": ["x.json", "--max-runs", "3"],
        "plot": ["--db", "x.sqlite", "--run", "1"], "report": ["--db", "x.sqlite", "--worst", "2"], "analyze": ["--db", "x.sqlite", "--run", "1"], "compare": ["--db", "x.sqlite", "1", "2"],
        "measure": ["--db", "x.sqlite", "--metrics", "vmaf"],
        "inspect": ["s.264", "--json"], "convert": ["--to", "avcc", "a", "b"],
        "check": ["s.264", "--expect", "MaxKeyFrameInterval=30", "--db", "x.sqlite"], "merge": ["m.sqlite", "a.sqlite"], "version": ["extra"], "help": ["encode"],
        "bd-rate": ["--anchor", "1:30", "--method", "cubic"], "rtp": ["pack", "s.264", "o.pcap", "--mtu", "500"], "export": ["--db", "x.sqlite", "--table", "runs"],
    ]

    /// One flag row of a help's flags section.
    struct HelpFlag: Equatable { var name: String; var value: String?; var text: String }

    /// The rows of the "Flags" section of `help` (from its title line to the blank line), continuation lines
    /// joined to their row; `-h, --help` left out.
    static func flags(in help: String) -> [HelpFlag] {
        var rows: [HelpFlag] = []
        var inside = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("Flags") { inside = true; continue }
            guard inside else { continue }
            if line.isEmpty { break }
            if line.hasPrefix("  --") {
                // "  --name VALUE  text" or "  --name  text": the name, one space and a value word, then 2+ spaces.
                let body = line.dropFirst(2)
                let words = body.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let name = words[0]
                let after = words.count > 1 ? words[1] : ""
                if after.hasPrefix(" ") {
                    rows.append(HelpFlag(name: name, value: nil, text: after.trimmingCharacters(in: .whitespaces)))
                } else {
                    let parts = after.split(separator: " ", maxSplits: 1).map(String.init)
                    rows.append(HelpFlag(name: name, value: parts[0], text: (parts.count > 1 ? parts[1] : "").trimmingCharacters(in: .whitespaces)))
                }
            } else if line.hasPrefix("   "), !rows.isEmpty {
                rows[rows.count - 1].text += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return rows
    }

    func help(_ command: String, in dir: String) throws -> String {
        let r = try cli.enclab([command, "--help"], in: dir)
        try #require(r.status == 0, "\(r.stderr)")
        return r.stdout
    }

    /// A value each placeholder accepts, so that giving the flag alone changes no outcome's kind.
    static func sample(_ placeholder: String) -> String {
        ["N": "5", "1|2|4": "2", "NUM[/DEN]": "25", "KEY|ID": "1", "FILE": "f.out", "DIR": "d.out",
         "NAME=VALUE": "MaxKeyFrameInterval=30", "BYTES": "1200", "PT": "96", "SSRC": "0x1234", "RATE:PSNR,...": "1:30,2:31,3:32", "K/N": "1/2", "FIELD=VALUE": "uiIntraPeriod=30", "ID,...": "1,2", "LIST": "vmaf", "METRIC": "vmaf"][placeholder]
            ?? String(placeholder.split(separator: "|")[0])
    }

    /// Arguments with which each command fails early, without creating anything, and not with a usage error.
    static let failing: [String: [String]] = [
        "encode": ["missing.y4m"], "run": ["missing.json"], "plot": ["--db", "missing.sqlite"], "report": ["--db", "missing.sqlite"], "analyze": ["--db", "missing.sqlite"],
        "measure": ["--db", "missing.sqlite", "--metrics", "vmaf"],
        "compare": ["--db", "missing.sqlite", "1", "2"], "inspect": ["missing.264"],
        "convert": ["--to", "avcc", "missing.264", "o.avcc"], "check": ["missing.264", "--expect", "MaxKeyFrameInterval=30"],
        "merge": ["m.sqlite", "missing.sqlite"], "version": [], "help": [],
        // bd-rate: 3 points are refused as data (65); export: the database is missing (66).
        "bd-rate": ["--anchor", "1:30,2:31,3:32", "--test", "1:30,2:31,3:32"],
        "export": ["--db", "missing.sqlite", "--table", "frames", "--format", "csv"],
        "rtp": ["pack", "missing.264", "o.pcap"],
    ]

    /// For a flag that cannot go with a command's ``failing`` arguments (check's --run checks a stored run, not a
    /// STREAM): arguments with which the command fails early, not with a usage error, once the flag is added.
    static let failingWith: [String: [String]] = [
        "check --run": ["--db", "missing.sqlite", "--expect", "MaxKeyFrameInterval=30"],
        // rtp's --parameter-sets goes with unpack (a sprop value "VALUE" that is not base64 of a NAL unit: 65).
        "rtp --parameter-sets": ["unpack", "missing.pcap", "o.264"],
        // rtp pack's --db and --run go together, without STREAM: the database is missing (66).
        "rtp --db": ["pack", "o.pcap", "--run", "1"], "rtp --run": ["pack", "o.pcap", "--db", "missing.sqlite"],
    ]

    @Test("--help, -h (anywhere, even after a bad flag), 'help X' and '--help X' print the same help, exit 0", arguments: commands)
    func sameHelp(command: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let forms: [[String]] = [
            [command, "--help"], ["help", command], ["--help", command], [command, "-h"],
            [command] + Self.someArguments[command]! + ["-h"], [command] + Self.someArguments[command]! + ["--help"],
            [command, "--no-such-flag=1", "-h"],
        ]
        let first = try cli.enclab(forms[0], in: dir)
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first.stderr)")
        #expect(first.stdout.hasPrefix("usage: enclab \(command)"))
        for section in ["\n\nFlags (--name VALUE or --name=VALUE):\n", "\n  -h, --help ", "\n\nExit status:\n  0 ", "\n\nExample:\n  enclab \(command)"] {
            #expect(first.stdout.contains(section), "\(command): \(section)")
        }
        for form in forms.dropFirst() {
            let r = try cli.enclab(form, in: dir)
            #expect(r.status == 0 && r.stderr.isEmpty, "\(form): \(r.stderr)")
            #expect(r.stdout == first.stdout, "\(form)")
        }
        // Help does no work: nothing is written.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    /// The help lists the flags the parser takes: each flag a command's help names is accepted by it, and each flag
    /// another command's help names is refused by it (64, pointing at its help) unless its own help names it too.
    @Test("each command takes exactly the flags its help names (of all the flags any help names)", arguments: commands)
    func helpNamesEveryFlag(command: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 2, seed: 5).write(to: "\(dir)/c.y4m")
        let own = Self.flags(in: try help(command, in: dir))
        var everyFlag: [String: String?] = [:]
        for other in Self.commands {
            for f in Self.flags(in: try help(other, in: dir)) { everyFlag[f.name] = f.value }
        }
        // 13, encode's and run's --mkv, inspect's and convert's --in-avcc-config and --parameter-sets, convert's
        // --avcc-config-first, encode's --vt and --vt-compat, check's --expect and --tcfile-in; bd-rate's --anchor,
        // --test and --method, export's --table and --format; run's --jobs and --shard; encode's and run's --verify,
        // --plots and --no-plots; report's --experiment, --runs, --worst, --best and --overlay (its --anchor is bd-rate's name); encode's, run's
        // and measure's --metrics and --vmaf-ffmpeg; report's and bd-rate's --metric; encode's --encoder and --openh264; rtp's --mtu,
        // --mode, --aggregate, --port, --ssrc, --sdp, --seq, --timestamp and --pt (its --fps is convert's name).
        #expect(everyFlag.count == 50, "\(everyFlag.keys.sorted())")
        // The parser's own table, as its unknown-flag message lists it (encode hands unknown flags on to x264, so
        // its own eleven come from the issues).
        if command == "encode" {
            #expect(own.map(\.name).sorted() == ["--db", "--encoder", "--force", "--metrics", "--mkv", "--no-plots", "--openh264", "--out", "--plots", "--rc", "--verify", "--vmaf-ffmpeg", "--vt", "--vt-compat"])
        } else {
            let r = try cli.enclab([command, "--no-such-flag"], in: dir)
            let prefix = "enclab: unknown flag '--no-such-flag' (\(command) takes "
            try #require(r.status == 64 && r.stderr.hasPrefix(prefix), "\(r.stderr)")
            let listed = r.stderr.dropFirst(prefix.count).prefix { $0 != ")" }
            #expect(listed == "no flags" ? own.isEmpty : listed.components(separatedBy: ", ") == own.map(\.name), "\(command): \(listed)")
        }
        let usage = try help(command, in: dir).components(separatedBy: "\n\n")[0]
        for f in own {
            #expect(!f.text.isEmpty, "\(command) \(f.name) has no text")
            if f.value != nil {
                #expect(f.text.contains("(default: ") || f.text.contains("(required)"), "\(command) \(f.name): \(f.text)")
            }
            #expect(usage.contains(f.value.map { "\(f.name) \($0)" } ?? f.name), "\(command)'s usage lacks \(f.name)")
        }
        for (name, value) in everyFlag.sorted(by: { $0.key < $1.key }) {
            let word = value.map { "\(name)=\(Self.sample($0))" } ?? name
            if own.contains(where: { $0.name == name }) {
                let r = try cli.enclab([command] + (Self.failingWith["\(command) \(name)"] ?? Self.failing[command]!) + [word], in: dir)
                #expect(r.status != 64 && !r.stderr.contains("unknown flag"), "\(command) \(word): \(r.status) \(r.stderr)")
            } else if command == "encode" && name == "--tcfile-in" {
                // check's --tcfile-in is encode's too, among its timestamps options (a section of its help, not its
                // flag table): handed on and read as a timecode file.
                let r = try cli.enclab(["encode", "c.y4m", "--db", "lab.sqlite", "--out", "out", word], in: dir)
                #expect(r.status == 66 && r.stderr == "enclab: f.out: no such timecode file\n", "\(word): \(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite") && !FileManager.default.fileExists(atPath: "\(dir)/out"))
            } else if command == "encode" {
                // Handed on to x264's flag parser, which knows none of these.
                let r = try cli.enclab(["encode", "c.y4m", "--db", "lab.sqlite", "--out", "out", word], in: dir)
                #expect(r.status == 64 && r.stderr.hasSuffix(" (see 'enclab encode --help')\n"), "\(word): \(r.stderr)")
                #expect(r.stderr.contains(String(name.dropFirst(2))), "\(word): \(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: "\(dir)/lab.sqlite") && !FileManager.default.fileExists(atPath: "\(dir)/out"))
            } else {
                let r = try cli.enclab([command] + Self.failing[command]! + [word], in: dir)
                #expect(r.status == 64, "\(command) \(word): \(r.stderr)")
                let reference = command == "help" ? "enclab help" : "enclab \(command) --help"
                #expect(r.stderr.hasPrefix("enclab: unknown flag '\(name)' (\(command) takes ") && r.stderr.hasSuffix(") (see '\(reference)')\n"),
                        "\(command) \(word): \(r.stderr)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["c.y4m"])
    }

    /// A help's words, whatever its line breaks and column alignment.
    static func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    /// docs/rtp.md's rule for --loss's numbers was in no help.
    @Test("encode's help states --loss's number rule: probabilities 0...1, jitter 0...10000, plain decimals")
    func lossNumberRule() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(Self.words(try help("encode", in: dir)).contains("frames to recover. Probabilities are 0...1 and jitter 0...10000 (ms), each a plain decimal "
                                                                + "(0.01, .5, 20): a sign, an exponent, hex, nan or inf is refused (64)"))
    }

    @Test("encode's, run's and measure's help give 69 for an ffmpeg with libvmaf that does not answer its check")
    func unansweredProbeStatus() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for command in ["encode", "run", "measure"] {
            #expect(Self.words(try help(command, in: dir)).contains("69 the ffmpeg with libvmaf (--vmaf-ffmpeg, ENCLAB_VMAF_FFMPEG or the venv's) "
                                                                   + "did not answer its -filters check within 30 s 70 "), "\(command)")
        }
    }

    @Test("a flag of another command is refused with 64, naming the flags the command takes and its help")
    func foreignFlag() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["run", "x.json", "--json"], in: dir)
        #expect(r.status == 64 && r.stdout.isEmpty)
        #expect(r.stderr == "enclab: unknown flag '--json' (run takes --db, --out, --max-runs, --verify, --force, --mkv, --plots, --no-plots, --metrics, --vmaf-ffmpeg, --jobs, --shard) (see 'enclab run --help')\n")
        let inspect = try cli.enclab(["inspect", "s.264", "--to", "avcc"], in: dir)
        #expect(inspect.status == 64)
        #expect(inspect.stderr == "enclab: unknown flag '--to' (inspect takes --json, --strict, --from, --length-size, --in-avcc-config, --parameter-sets) (see 'enclab inspect --help')\n")
        let version = try cli.enclab(["version", "--json"], in: dir)
        #expect(version.status == 64 && version.stderr == "enclab: unknown flag '--json' (version takes no flags) (see 'enclab version --help')\n")
    }

    @Test("-h as the value of a command's flag is that value, not help (x264's flags are read after: there it is help); a switch refuses a value")
    func helpAsValue() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = try cli.enclab(["encode", "missing.y4m", "--out", "-h"], in: dir)
        #expect(out.status == 66 && out.stdout.isEmpty && out.stderr == "enclab: missing.y4m: no such file\n")
        let from = try cli.enclab(["inspect", "s.264", "--from", "-h"], in: dir)
        #expect(from.status == 64 && from.stderr == "enclab: stream format must be annexb, avcc or packets, got '-h' (see 'enclab inspect --help')\n")
        let keyint = try cli.enclab(["encode", "missing.y4m", "--keyint", "--help"], in: dir)
        #expect(keyint.status == 0 && keyint.stdout.hasPrefix("usage: enclab encode INPUT"), "\(keyint.stderr)")
        let json = try cli.enclab(["inspect", "s.264", "--json=yes"], in: dir)
        #expect(json.status == 64 && json.stderr == "enclab: flag '--json' takes no argument, got 'yes' (see 'enclab inspect --help')\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test("enclab help, --help and -h list every command; enclab alone prints the list to stderr, exit 64")
    func commandList() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let list = try cli.enclab(["help"], in: dir)
        #expect(list.status == 0 && list.stderr.isEmpty)
        for command in Self.commands {
            #expect(list.stdout.contains("\n\(command) "), "\(command)")
            let usage = try help(command, in: dir).components(separatedBy: "\n\n")[0].dropFirst("usage: ".count)
            #expect(list.stdout.contains(usage), "\(command)'s usage")
        }
        // encode drives two encoders: its one-line summary names both, and no "with x264's own flags" only.
        let encodeLine = list.stdout.split(separator: "\n").first { $0.hasPrefix("encode ") }.map(String.init) ?? ""
        #expect(encodeLine.contains("libx264") && encodeLine.contains("--encoder openh264") && !encodeLine.contains("with x264's own flags"), "\(encodeLine)")
        for form in [["--help"], ["-h"]] {
            let r = try cli.enclab(form, in: dir)
            #expect(r.status == 0 && r.stdout == list.stdout, "\(form)")
        }
        let bare = try cli.enclab([], in: dir)
        #expect(bare.status == 64 && bare.stdout.isEmpty && bare.stderr == list.stdout)
        let unknown = try cli.enclab(["help", "frobnicate"], in: dir)
        #expect(unknown.status == 64)
        #expect(unknown.stderr == "enclab: unknown command 'frobnicate' (encode, run, merge, plot, report, analyze, measure, compare, inspect, convert, check, rtp, bd-rate, export, version, help) (see 'enclab help')\n")
    }

    @Test("encode refused before it starts leaves the folder as it was: no database, no results folder")
    func refusedEncodeLeavesNothing() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = try cli.enclab(["encode", "missing.y4m"], in: dir)
        #expect(missing.status == 66 && missing.stderr == "enclab: missing.y4m: no such file\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        try SyntheticClip(width: 64, height: 48, frames: 2, seed: 5).write(to: "\(dir)/c.y4m")
        let contradictory = try cli.enclab(["encode", "c.y4m", "--rc", "cbr"], in: dir)
        #expect(contradictory.status == 64, "\(contradictory.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["c.y4m"])
    }

    // --name=value against --name value, one cheap case per command.

    /// stdout, stderr and exit status of two command lines in two folders prepared alike.
    func both(_ spaced: [String], _ joined: [String], prepare: (String) throws -> Void) throws -> (CLI.Result, CLI.Result, String, String) {
        let a = cli.scratch(), b = cli.scratch()
        try prepare(a)
        try prepare(b)
        return (try cli.enclab(spaced, in: a), try cli.enclab(joined, in: b), a, b)
    }

    func same(_ x: CLI.Result, _ y: CLI.Result) -> Bool { x.status == y.status && x.stdout == y.stdout && x.stderr == y.stderr }

    @Test("encode and plot: --db, --out, --rc, --run as --name=value record and print what --name value does")
    func encodeJoined() throws {
        let (x, y, a, b) = try both(
            ["encode", "c.y4m", "--db", "lab.sqlite", "--out", "out", "--rc", "crf", "--crf", "35", "--threads", "1"],
            ["encode", "c.y4m", "--db=lab.sqlite", "--out=out", "--rc=crf", "--crf=35", "--threads=1"]) {
                try SyntheticClip(width: 64, height: 48, frames: 4, seed: 7).write(to: "\($0)/c.y4m")
            }
        defer { for d in [a, b] { try? FileManager.default.removeItem(atPath: d) } }
        #expect(x.status == 0 && same(x, y), "\(x.stderr) | \(y.stderr)")
        let query = "SELECT experiment, clip, settings, status, frames, bytes, stream_path, json_extract(settings, '$.rc') FROM runs"
        let rows = try cli.sqlite("\(a)/lab.sqlite", query)
        #expect(rows.count == 1 && rows[0].hasSuffix("|crf"), "\(rows)")
        #expect(try cli.sqlite("\(b)/lab.sqlite", query) == rows)
        #expect(try cli.sqlite("\(a)/lab.sqlite", "SELECT group_concat(size_bytes) FROM frames") == cli.sqlite("\(b)/lab.sqlite", "SELECT group_concat(size_bytes) FROM frames"))
        for d in [a, b] {
            #expect(!FileManager.default.fileExists(atPath: "\(d)/results"), "the defaults were not used")
            #expect(FileManager.default.fileExists(atPath: "\(d)/out"))
        }
        let plotX = try cli.enclab(["plot", "--db", "lab.sqlite", "--out", "p", "--run", "1", "--run", "2"], in: a)
        let plotY = try cli.enclab(["plot", "--db=lab.sqlite", "--out=p", "--run=1", "--run=2"], in: b)
        #expect(same(plotX, plotY), "\(plotX.stderr) | \(plotY.stderr)")
    }

    @Test("run: --db, --out, --max-runs as --name=value record and print what --name value does")
    func runJoined() throws {
        let prepare: (String) throws -> Void = { dir in
            try SyntheticClip(width: 64, height: 48, frames: 3, seed: 8).write(to: "\(dir)/c.y4m")
            try #"{"name": "one", "clips": ["c.y4m"], "base": {"threads": 1}, "grid": {"crf": [33]}}"#
                .write(toFile: "\(dir)/one.json", atomically: true, encoding: .utf8)
            try #"{"name": "two", "clips": ["c.y4m"], "grid": {"crf": [30, 40]}}"#
                .write(toFile: "\(dir)/two.json", atomically: true, encoding: .utf8)
        }
        let (x, y, a, b) = try both(["run", "one.json", "--db", "lab.sqlite", "--out", "out", "--max-runs", "1"],
                                    ["run", "one.json", "--db=lab.sqlite", "--out=out", "--max-runs=1"], prepare: prepare)
        defer { for d in [a, b] { try? FileManager.default.removeItem(atPath: d) } }
        // stderr: one progress line per run (its rate and time vary between the two), nothing else.
        func progressLines(_ r: CLI.Result) -> [Substring] { r.stderr.split(separator: "\n").filter { $0.hasPrefix("run  1/1 runs  ") } }
        let quiet = { (r: CLI.Result) in CLI.Result(status: r.status, stdout: r.stdout, stderr: r.stderr.split(separator: "\n").filter { !$0.hasPrefix("run  1/1 runs  ") }.joined(separator: "\n")) }
        #expect(progressLines(x).count == 1 && progressLines(y).count == 1, "\(x.stderr) | \(y.stderr)")
        #expect(x.status == 0 && same(quiet(x), quiet(y)) && quiet(x).stderr.isEmpty, "\(x.stderr) | \(y.stderr)")
        #expect(x.stdout.hasSuffix("1 runs done: database lab.sqlite, plots in out\n"), "\(x.stdout)")
        let query = "SELECT experiment, clip, settings, status, frames, bytes, stream_path FROM runs"
        #expect(try cli.sqlite("\(a)/lab.sqlite", query) == cli.sqlite("\(b)/lab.sqlite", query))
        // Two runs over --max-runs 1: refused alike, so the value was read in both forms (the default is 100000).
        let over = try cli.enclab(["run", "two.json", "--db", "two.sqlite", "--max-runs", "1"], in: a)
        let overJoined = try cli.enclab(["run", "two.json", "--db", "two.sqlite", "--max-runs=1"], in: b)
        #expect(over.status == 64 && over.stderr.contains("expands to 2 runs") && same(over, overJoined), "\(over.stderr)")
    }

    @Test("inspect and convert: every valued flag as --name=value gives the bytes and lines --name value does")
    func bitstreamJoined() throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 6, seed: 9).write(to: "\(dir)/c.y4m")
        let x264 = try CLI.process("/usr/bin/x264", ["--quiet", "--threads", "1", "--bframes", "2", "-o", "s.264", "c.y4m"], in: dir)
        try #require(x264.status == 0, "\(x264.stderr)")
        var outcomes: [String: CLI.Result] = [:]
        for from in ["annexb", "avcc"] {
            let x = try cli.enclab(["inspect", "s.264", "--json", "--from", from, "--length-size", "2"], in: dir)
            let y = try cli.enclab(["inspect", "s.264", "--json", "--from=\(from)", "--length-size=2"], in: dir)
            #expect(same(x, y), "\(from): \(x.stderr) | \(y.stderr)")
            outcomes[from] = x
        }
        #expect(outcomes["annexb"]!.status == 0 && !same(outcomes["annexb"]!, outcomes["avcc"]!), "--from is read")
        func files(_ args: [String], _ names: [String]) throws -> (CLI.Result, [Data?]) {
            for n in names { try? FileManager.default.removeItem(atPath: "\(dir)/\(n)") }
            let r = try cli.enclab(args, in: dir)
            return (r, names.map { FileManager.default.contents(atPath: "\(dir)/\($0)") })
        }
        let avcc = try files(["convert", "--to", "avcc", "--from", "annexb", "--length-size", "2", "--avcc-config", "s.avcC", "s.264", "o.avcc"], ["o.avcc", "s.avcC"])
        let avccJoined = try files(["convert", "--to=avcc", "--from=annexb", "--length-size=2", "--avcc-config=s.avcC", "s.264", "o.avcc"], ["o.avcc", "s.avcC"])
        #expect(avcc.0.status == 0 && same(avcc.0, avccJoined.0) && avcc.1 == avccJoined.1, "\(avcc.0.stderr) | \(avccJoined.0.stderr)")
        #expect(avcc.1.allSatisfy { $0 != nil })
        let packets = try files(["convert", "--to", "packets", "--fps", "50/1", "s.264", "o.pkt"], ["o.pkt"])
        let packetsJoined = try files(["convert", "--to=packets", "--fps=50/1", "s.264", "o.pkt"], ["o.pkt"])
        let packetsVUI = try files(["convert", "--to", "packets", "s.264", "o.pkt"], ["o.pkt"])
        #expect(packets.0.status == 0 && same(packets.0, packetsJoined.0) && packets.1 == packetsJoined.1, "\(packets.0.stderr)")
        #expect(packets.1 != packetsVUI.1, "--fps 50 changes the times of a 25 fps stream")
    }
}
