import EncoderLab
import Foundation

/// `enclab inspect STREAM`: a stream's NAL units, access units and parameter sets, as text or JSON.
struct InspectCommand: Command {
    let name = "inspect"
    let summary = "NAL units, access units with slice types, and SPS/PPS fields of an H.264 stream"
    let operands = "STREAM"
    let flags = [
        Flag("--json", about: "print one JSON object (nal_units, access_units, frames, frame_counts, format, sps, pps) instead of text"),
        Flag("--strict", about: "a NAL unit with forbidden_zero_bit 1 is an error (65), not a warning"),
        StreamFlags.from,
        StreamFlags.lengthSize,
    ]
    let about = """
        Lists STREAM's NAL units (offset, size, forbidden_zero_bit, nal_unit_type, nal_ref_idc), its access units with
        their slice types and picture type (IDR, I, P, Bref, B), and every SPS and PPS field (H.264 syntax element
        names; width and height after cropping). Each field of a field-coded stream is an access unit, marked top or
        bottom field of its frame; frame counts count a field pair once. Packets are listed as the Annex B stream
        they stand for. A NAL unit with forbidden_zero_bit 1 (H.264 7.4.1: shall be 0) is listed, with a warning on
        stderr naming it.
        """
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "listed (warnings, if any, on stderr)"),
        (64, "usage: a bad flag or value"),
        (65, "bad data: STREAM is empty or does not parse in its format; with --strict, a forbidden_zero_bit 1"),
        (66, "STREAM is missing or cannot be read"),
    ]
    let example = "enclab inspect results/encode/run-1/stream.264 --json"

    func run(arguments: [String]) throws {
        guard let parsed = try parse(arguments) else { return }
        let rest = parsed.rest
        guard rest.count == 1 else { throw LabError(.usage, "inspect takes one STREAM") }
        let json = parsed.has("--json")
        let stream = try Bitstream.load(rest[0], format: try streamFormat(parsed.value("--from")), lengthSize: try lengthSize(parsed.value("--length-size")))
        // A header rule broken (forbidden_zero_bit 1): a warning per NAL unit, or with --strict an error (65).
        try Bitstream.checkHeaders(stream, path: rest[0], strict: parsed.has("--strict")) {
            FileHandle.standardError.write(Data("warning: \(oneLine($0))\n".utf8))
        }
        print(json ? try Bitstream.inspectJSON(stream, path: rest[0]) : try Bitstream.inspectText(stream, path: rest[0]), terminator: json ? "\n" : "")
    }
}
