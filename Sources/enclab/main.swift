import EncoderLab
import Foundation

// The command line: find the command the first argument names, run it, and map errors to exit codes
// (sysexits.h). Each command (its flags, help and work) is a file in Commands/; Flags.swift parses their flags.

/// A message as one printable line: control characters (newlines, ESC, NUL) shown as `\u{..}` escapes, and
/// at most 500 characters.
func oneLine(_ message: String) -> String {
    var out = ""
    for scalar in message.unicodeScalars {
        if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
    }
    return out.count > 500 ? String(out.prefix(497)) + "..." : out
}

/// Runs the command named by the first argument with the arguments after it; with none, prints the list of
/// commands to stderr and exits 64.
func main() throws {
    Interruption.install()
    let args = Array(CommandLine.arguments.dropFirst())
    guard let name = args.first else {
        FileHandle.standardError.write(Data((Commands.overview + "\n").utf8))
        exit(64)
    }
    try Commands.named(name).run(arguments: Array(args.dropFirst()))
}

do {
    try main()
} catch let error as LabError {
    // What went to stdout before the failure (an interrupted analyze's "analysed run N" lines) is kept: flushed
    // before exit, as exit(3) would, and before the message, so a terminal shows them in order.
    fflush(nil)
    // Ctrl-C at any stage exits 130, whatever the interrupted step failed with.
    let reported = Interruption.received.map { error.kind == .interrupted ? error : LabError(.interrupted, "interrupted by \($0)") } ?? error
    // A usage error points at the help of the command it came from ("enclab help" without one).
    let pointer = reported.kind == .usage ? " (see '\(Commands.helpReference(Array(CommandLine.arguments.dropFirst())))')" : ""
    FileHandle.standardError.write(Data("enclab: \(oneLine(reported.message))\(pointer)\n".utf8))
    exit(reported.kind.exitCode)
} catch {
    fflush(nil)
    FileHandle.standardError.write(Data("enclab: \(oneLine(error.localizedDescription))\n".utf8))
    exit(70)
}
