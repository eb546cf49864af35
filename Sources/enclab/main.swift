import EncoderLab
import Foundation

// The command line: find the command the first argument names, run it, and map errors to exit codes
// (sysexits.h). Each command (its flags, help and work) is a file in Commands/; Flags.swift parses their flags.

/// A message as one printable line: control characters (newlines, ESC, NUL) shown as `\u{..}` escapes, and
/// at most `limit` (500) characters. A longer one loses the middle of its longest words first (paths, values: each
/// kept as its first and last characters around "..."), never a short word, so the reason said after a long path
/// stays; only when the short words alone are too many is the middle of the whole line cut.
func oneLine(_ message: String, limit: Int = 500) -> String {
    var out = ""
    for scalar in message.unicodeScalars {
        if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
    }
    return shortened(out, limit: limit)
}

/// `text` cut to at most `limit` characters (at least 100) as ``oneLine(_:limit:)`` says: the middles of its longest
/// space-separated words first, down to 60 characters each, then the middle of the whole.
func shortened(_ text: String, limit: Int = 500) -> String {
    let limit = max(limit, 100)
    var count = text.count
    guard count > limit else { return text }
    let keep = 60
    var words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
    var lengths = words.map(\.count)
    while count > limit, let k = lengths.indices.max(by: { lengths[$0] < lengths[$1] }), lengths[k] > keep {
        let target = max(keep, lengths[k] - (count - limit))
        let head = (target - 3 + 1) / 2, tail = (target - 3) / 2
        words[k] = String(words[k].prefix(head)) + "..." + String(words[k].suffix(tail))
        count -= lengths[k] - target
        lengths[k] = target
    }
    let joined = words.joined(separator: " ")
    guard count > limit else { return joined }
    return String(joined.prefix((limit - 3 + 1) / 2)) + "..." + String(joined.suffix((limit - 3) / 2))
}

/// Refuses an argument that is not valid UTF-8 (a file name in another encoding, bytes from a fuzzer): Swift's
/// `CommandLine.arguments` and Foundation's file calls would read it with U+FFFD in place of its bad bytes, naming
/// another file (two such databases become one, an existing clip is "not found").
/// - Throws: `.usage` "argument N is not valid UTF-8: 'ESCAPED'", the bytes above 0x7E and control bytes as `\xNN`.
func requireUTF8Arguments() throws {
    for k in 1..<Int(CommandLine.argc) {
        guard let pointer = CommandLine.unsafeArgv[k] else { continue }
        let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
        guard String(validating: bytes, as: UTF8.self) == nil else { continue }
        throw LabError(.usage, "argument \(k) is not valid UTF-8: '\(escapedBytes(bytes))' (the lab reads file names and values as UTF-8 text; rename the file)")
    }
}

/// `bytes` as text: printable ASCII as itself, control bytes and bytes above 0x7E as `\xNN`.
func escapedBytes(_ bytes: [UInt8]) -> String {
    bytes.map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16, uppercase: true).leftPadded(2) }.joined()
}

/// Refuses a working folder whose path is not valid UTF-8 (read with getcwd(3), as bytes): Foundation reads it with
/// U+FFFD in place of its bad bytes, so every relative path and every tool started in it (ffmpeg, gnuplot: their
/// working folder is Foundation's idea of this one) would name a folder that is not there, failing part-way with 70
/// after files were written. A working folder that cannot be read (removed) is left to the commands.
/// - Throws: `.usage` "the working folder is not valid UTF-8: 'ESCAPED'", its bytes escaped as arguments' are.
func requireUTF8WorkingFolder() throws {
    guard let pointer = getcwd(nil, 0) else { return }
    defer { free(pointer) }
    let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
    guard String(validating: bytes, as: UTF8.self) == nil else { return }
    throw LabError(.usage, "the working folder is not valid UTF-8: '\(escapedBytes(bytes))' (the lab reads file names as UTF-8 text; run it from a folder whose path is UTF-8)")
}

extension String {
    /// The string with "0" before it up to `width` characters.
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Runs the command named by the first argument with the arguments after it; with none, prints the list of
/// commands to stderr and exits 64.
/// - Returns: the command's exit status (0, or 1 for a check that found violations).
func main() throws -> Int32 {
    Interruption.install()
    // A signal that came before any work: nothing started, 130 at once.
    try Interruption.check()
    try requireUTF8Arguments()
    let args = Array(CommandLine.arguments.dropFirst())
    guard let name = args.first else {
        FileHandle.standardError.write(Data((Commands.overview + "\n").utf8))
        return 64
    }
    // Before any command reads or writes a relative path or starts a tool; help needs no folder.
    if !["help", "--help", "-h"].contains(name) { try requireUTF8WorkingFolder() }
    return try Commands.named(name).execute(arguments: Array(args.dropFirst()))
}

do {
    let status = try main()
    // Work that ended without checking after a signal came still reports it: every SIGINT or SIGTERM that did not end
    // the process before main is 130.
    if let signal = Interruption.received {
        fflush(nil)
        FileHandle.standardError.write(Data("enclab: interrupted by \(signal)\n".utf8))
        exit(LabError.Kind.interrupted.exitCode)
    }
    exit(status)
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
