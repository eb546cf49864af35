import EncoderLab

/// `enclab version` (also `enclab --version`): the lab's version and libx264's.
struct VersionCommand: Command {
    let name = "version"
    let summary = "the lab's version and the libx264 it is built with"
    let operands = ""
    let flags: [Flag] = []
    let about = "Prints 'enclab VERSION (libx264 X264_VERSION)'. 'enclab --version' is the same."
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "printed"),
        (64, "usage: any argument"),
    ]
    let example = "enclab version"

    func options(_ parsed: ParsedArguments) throws {
        try parsed.noOperands(name, "arguments")
    }

    func run(_: Void) throws -> Int32 {
        print("enclab \(labVersion) (libx264 \(x264Version))")
        return 0
    }
}
