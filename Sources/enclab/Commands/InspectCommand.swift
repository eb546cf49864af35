import EncoderLab
import Foundation

/// `enclab inspect STREAM`: a stream's NAL units, access units and parameter sets, as text or JSON.
struct InspectCommand: Command {
    let name = "inspect"
    let summary = "NAL units, access units with slice types, and SPS/PPS fields of an H.264 stream"
    let operands = "STREAM"
    let flags = [
        Flag("--json", about: "print one JSON object (format, nal_units, access_units with recovery_point, buffering_period and pic_timing, frames, frame_counts, sps, pps, warnings) instead of text"),
        StreamFlags.strict,
        StreamFlags.from,
        StreamFlags.lengthSize,
        StreamFlags.inAVCConfig,
        StreamFlags.parameterSets,
    ]
    let about = """
        Lists STREAM's NAL units (offset, size, forbidden_zero_bit, nal_unit_type, nal_ref_idc), every SPS and PPS as it
        appears (the NAL unit it is in, all its fields with H.264 syntax element names, width and height after
        cropping, and whether it gives its id new content), and the access units: slice types, picture type (IDR, I,
        P, Bref, B), the SPS and PPS occurrences they were parsed with, their recovery point SEI (recovery_frame_cnt,
        exact_match_flag, broken_link_flag, changing_slice_group_idc), their buffering period SEI (initial_cpb_removal_delay
        and initial_cpb_removal_delay_offset per CPB of the NAL and VCL HRD, read with the SPS it names) and picture timing
        SEI (cpb_removal_delay, dpb_output_delay, pic_struct; read with the active SPS), and whether each is a random access point
        (IDR or recovery point). Each field of a field-coded stream is an access unit, marked top or bottom field of
        its frame; frame counts count a field pair once. Packets are listed as the Annex B stream they stand for. Parameter sets sent apart
        from the stream are given with --in-avcc-config (AVCC input) or --parameter-sets, and listed first. What a
        decoder can live with is accepted with a warning on stderr and in the listing (a VUI value outside its range,
        such as log2_max_mv_length_horizontal 16 as the 2003 edition allowed; an empty NAL unit, skipped; a NAL unit
        with forbidden_zero_bit 1; an SEI that does not parse or lacks rbsp_trailing_bits; an SPS or PPS with no stop bit
        or data after its rbsp_trailing_bits; NAL units packed behind one AVCC length, split at their start codes; a data
        partition, nal_unit_type 2-4, outside the Extended profile; an empty sprop-parameter-sets part; a packet whose
        flags, decode_order or dts_us contradict its NAL units, named with its byte offset); --strict refuses it. A
        stream with no NAL unit is refused.
        """
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "listed (warnings, if any, on stderr and in the listing)"),
        (64, "usage: a bad flag or value, --in-avcc-config with --parameter-sets or with --from other than avcc, or a "
            + "--length-size the avcC record contradicts"),
        (65, "bad data: STREAM is empty, holds no NAL unit, holds nothing to decode (no SPS, no PPS and no slice) or does not parse in its format, the --in-avcc-config record or --parameter-sets "
            + "value does not parse; with --strict, anything otherwise accepted with a warning"),
        (66, "STREAM or the --in-avcc-config or --parameter-sets file is missing or cannot be read"),
    ]
    let example = """
        enclab inspect results/encode/KEY16/stream.264 --json
        enclab inspect slices.avcc --in-avcc-config stream.avcC
        enclab inspect slices.264 --parameter-sets Z2QACqzZRHsBEAAAAwAQAAADAyjxIllg,aOvg5LIs
        """

    /// `inspect`'s options: the stream as the library opens it, and how it is listed.
    struct Options {
        var input: StreamInput
        var json: Bool
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        let rest = parsed.rest
        guard rest.count == 1 else { throw LabError(.usage, "inspect takes one STREAM") }
        var input = StreamInput(path: rest[0])
        input.takesParameterSetFlags = true
        input.format = try streamFormat(parsed.value("--from"))
        input.lengthSize = try parsed.value("--length-size").map { try lengthSize($0) }
        input.inAVCConfigPath = parsed.value("--in-avcc-config")
        input.parameterSets = parsed.value("--parameter-sets")
        input.strict = parsed.has("--strict")
        return Options(input: input, json: parsed.has("--json"))
    }

    func run(_ o: Options) throws -> Int32 {
        let stream = try Bitstream.open(o.input)
        // Each thing accepted (with --strict it was an error, 65): a warning on stderr, and in the listing.
        for w in stream.warnings { FileHandle.standardError.write(Data("warning: \(oneLine(w.message))\n".utf8)) }
        let listing = o.json ? try Bitstream.inspectJSON(stream) : Bitstream.inspectText(stream)
        try Interruption.check()   // interrupted while listing: 130, and no listing
        print(listing, terminator: o.json ? "\n" : "")
        return 0
    }
}
