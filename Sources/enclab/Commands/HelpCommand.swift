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

    /// `help`'s option: the command whose help is printed, nil for the list.
    func options(_ parsed: ParsedArguments) throws -> (any Command)? {
        switch parsed.rest.count {
        case 0: return nil
        case 1: return try Commands.named(parsed.rest[0])
        default: throw LabError(.usage, "help takes one COMMAND, got \(parsed.rest.joined(separator: " "))")
        }
    }

    func run(_ command: (any Command)?) throws -> Int32 {
        print(command?.help ?? Commands.overview)
        return 0
    }
}
