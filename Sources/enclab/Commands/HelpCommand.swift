import EncoderLab

/// `enclab help [COMMAND]` (also `enclab --help`, `enclab -h`): the list of commands, or one command's help.
struct HelpCommand: Command {
    let name = "help"
    let summary = "the list of commands, or one command's help (the same as 'enclab COMMAND --help')"
    let operands = "[COMMAND]"
    let flags: [Flag] = []
    let about = "Without COMMAND, lists every command with its usage. 'enclab --help' and 'enclab -h' are the same."
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "printed"),
        (64, "usage: an unknown COMMAND, or more than one"),
    ]
    let example = "enclab help encode"

    func run(arguments: [String]) throws {
        guard let parsed = try parse(arguments) else { return }
        switch parsed.rest.count {
        case 0: print(Commands.overview)
        case 1: print(try Commands.named(parsed.rest[0]).help)
        default: throw LabError(.usage, "help takes one COMMAND, got \(parsed.rest.joined(separator: " "))")
        }
    }
}
