import EncoderLab
import Foundation

/// `enclab convert --to FORMAT IN OUT`: a stream between Annex B, AVCC and the lab's packets.
struct ConvertCommand: Command {
    let name = "convert"
    let summary = "a stream between Annex B, AVCC (with its avcC record) and the lab's packet format"
    let operands = "IN OUT"
    let flags = [
        Flag("--to", value: "avcc|annexb|packets", about: "the output's format", required: true),
        StreamFlags.from,
        StreamFlags.lengthSize,
        Flag("--avcc-config", value: "FILE", about: "also write the avcC record (ISO/IEC 14496-15) of the stream's SPSs and PPSs",
             default: "none written"),
        Flag("--avcc-config-first", about: "with --avcc-config: write the first SPS and PPS of each id even when the stream "
             + "gives an id new content (otherwise refused, 65)"),
        StreamFlags.inAVCConfig,
        StreamFlags.parameterSets,
        StreamFlags.strict,
        Flag("--fps", value: "NUM[/DEN]", about: "frame rate for the times of packets made from Annex B or AVCC",
             default: "2 x num_units_in_tick / time_scale from the SPS VUI"),
    ]
    let about = """
        Writes IN's access units to OUT in another format. AVCC output is every NAL unit in decode order, parameter
        sets included, each behind a big-endian length of --length-size bytes; --avcc-config writes the avcC record of
        the first SPS and PPS of each id, and refuses a stream that gives an id new content (a resolution switch
        reusing SPS id 0: one record cannot describe it, ISO/IEC 14496-15 needs a new sample entry there) unless
        --avcc-config-first asks for the first ones. Annex B output uses 4-byte start codes. Annex B and AVCC carry no
        times, so packets made from them get derived ones: a frame lasts the frame duration and a field half of it;
        DTS = the durations before it in decode order, PTS = those before it in display order (the picture order count
        within each IDR period), DTS shifted back so that DTS <= PTS. Parameter sets sent apart from IN
        (--in-avcc-config for AVCC input, --parameter-sets) are written in band before the first NAL unit, except into
        the --avcc-config record when there is one. What a decoder can live with is accepted with a warning on stderr
        (as inspect says); --strict refuses it. OUT (and the avcC record) are written under temporary names and renamed
        into place when whole. stdout gets one line: IN, its format and counts, OUT, its format and size.
        """
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "converted"),
        (64, "usage: a bad flag or value, no --to, packets wanted from a stream without VUI timing and no --fps, "
            + "--in-avcc-config with --parameter-sets or with --from other than avcc, an output naming an input"),
        (65, "bad data: IN is empty, holds no NAL unit, holds nothing to decode (no SPS, no PPS and no slice) or does not parse in its format, the --in-avcc-config record or --parameter-sets value "
            + "does not parse, --avcc-config for a stream whose parameter sets change (without --avcc-config-first); "
            + "with --strict, anything otherwise accepted with a warning"),
        (66, "IN or the --in-avcc-config or --parameter-sets file is missing or cannot be read"),
        (73, "OUT or the --avcc-config file cannot be created (a folder, a read-only place)"),
        (74, "a write failed part-way (a full disk)"),
    ]
    let example = """
        enclab convert --to avcc --avcc-config stream.avcC --length-size 4 stream.264 stream.avcc
        enclab convert --to annexb --in-avcc-config stream.avcC stream.avcc stream.264
        """

    /// `convert`'s options.
    struct Options {
        var input: String
        var output: String
        var convert: Convert.Options
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        let rest = parsed.rest
        guard rest.count == 2 else { throw LabError(.usage, "convert takes IN and OUT") }
        guard let to = try streamFormat(parsed.value("--to")) else { throw LabError(.usage, "convert needs --to avcc|annexb|packets") }
        var options = Convert.Options(to: to)
        options.from = try streamFormat(parsed.value("--from"))
        options.lengthSize = try lengthSize(parsed.value("--length-size"))
        options.avccConfigPath = parsed.value("--avcc-config")
        options.avccConfigFirst = parsed.has("--avcc-config-first")
        options.inAVCConfigPath = parsed.value("--in-avcc-config")
        options.parameterSets = parsed.value("--parameter-sets")
        options.strict = parsed.has("--strict")
        if let fps = parsed.value("--fps") {
            let parts = fps.split(separator: "/").map { Int($0) }
            guard (1...2).contains(parts.count), let num = parts[0], let den = parts.count == 2 ? parts[1] : 1 else {
                throw LabError(.usage, "--fps must be NUM or NUM/DEN, got '\(fps)'")
            }
            options.fps = (num, den)
        }
        return Options(input: rest[0], output: rest[1], convert: options)
    }

    func run(_ o: Options) throws -> Int32 {
        let summary = try Convert.run(input: o.input, output: o.output, options: o.convert)
        for w in summary.warnings { FileHandle.standardError.write(Data("warning: \(oneLine(w))\n".utf8)) }
        print("\(o.input) (\(summary.from.rawValue), \(summary.nalUnits) NAL units, \(summary.accessUnits) access units) -> \(o.output) (\(o.convert.to.rawValue), \(summary.bytes) bytes)")
        return 0
    }
}
