import Foundation
import H264

/// `enclab convert`: Annex B, AVCC and packets into one another.
public enum Convert {
    /// Options of one conversion.
    public struct Options: Sendable {
        public var to: StreamFormat
        public var from: StreamFormat?
        /// AVCC length size in bytes (1, 2 or 4), for AVCC output, and for AVCC input without an avcC record.
        public var lengthSize: Int = 4
        /// Where to write the avcC record (AVCDecoderConfigurationRecord) for AVCC output.
        public var avccConfigPath: String?
        /// With ``avccConfigPath``: write the first set of each id even when the stream gives an id new content
        /// (otherwise refused).
        public var avccConfigFirst = false
        /// An avcC record giving the parameter sets and length size of AVCC input (`--in-avcc-config`).
        public var inAVCConfigPath: String?
        /// Parameter sets given beside the input: a file of Annex B SPS/PPS NAL units or SDP's
        /// sprop-parameter-sets (`--parameter-sets`).
        public var parameterSets: String?
        /// Refuse what the lenient policy accepts with a warning (`--strict`; `H264.ParsePolicy`).
        public var strict = false
        /// Frame rate for packet timestamps when the SPS carries no VUI timing: num/den frames per second.
        public var fps: (num: Int, den: Int)?
        public init(to: StreamFormat) { self.to = to }
    }

    /// What a conversion wrote.
    public struct Summary: Sendable {
        public var from: StreamFormat
        /// NAL units and access units of the input stream (out-of-band parameter sets not counted).
        public var nalUnits: Int
        public var accessUnits: Int
        public var bytes: Int
        /// What was accepted with a warning, one line each (``StreamWarning/message``).
        public var warnings: [String]
    }

    /// Converts `input` into `output`.
    ///
    /// - AVCC output: every NAL unit in decode order, parameter sets included, each behind a big-endian length of
    ///   `lengthSize` bytes; with `avccConfigPath`, the avcC record (ISO/IEC 14496-15 5.3.3.1) of the first SPS
    ///   and PPS of each id is written there. A record holds one set per id, so a stream that gives an id new
    ///   content (a resolution switch reusing SPS id 0) is refused, naming the NAL unit where it does, unless
    ///   `avccConfigFirst` asks for the first sets anyway.
    /// - Annex B output: 4-byte start codes.
    /// - Packets output: one packet per access unit (a field of a field-coded stream is an access unit of its
    ///   own), parameter sets on every packet. Annex B and AVCC carry no times, so they are derived: a frame lasts
    ///   the frame duration, a field half of it (H.264 Table E-6: one clock tick); DTS = the durations of the
    ///   access units before it in decode order; PTS = the durations of those before it in display order, from
    ///   the picture order count (H.264 8.2.1, types 0 and 2; display order is decode order for type 1) within
    ///   each IDR period; DTS then shifted back by the largest DTS - PTS so that DTS <= PTS. The frame duration is
    ///   2 x num_units_in_tick / time_scale from the SPS VUI, or 1/fps with `fps`.
    /// - Parameter sets given beside the input (`inAVCConfigPath`, `parameterSets`) are written in band before the
    ///   first NAL unit (so the output decodes on its own), except into AVCC output with `avccConfigPath`, whose
    ///   record holds them.
    /// - The output (and the avcC record) are written under temporary names and renamed into place when whole
    ///   (``StagedFiles``); an input with no NAL unit is refused (65), so no output is ever empty.
    /// - Throws: `.usage` for a bad length size, a missing frame rate, an `fps` whose frame duration puts the
    ///   stream's times beyond 64-bit microseconds, or an output or avcC path that names the input or each other
    ///   (the same device and inode, or the same folder and name, or the same normalised absolute path), or the
    ///   out-of-band flags misused (``Bitstream/open(_:)``); `.noInput` for a missing input or out-of-band file;
    ///   `.data` for input that does not parse (with `strict`, anything the lenient policy tolerates), or
    ///   parameter sets that change under `avccConfigPath` without `avccConfigFirst`;
    ///   `.cantCreate` (73) when the output is a folder or cannot be created, `.ioError` (74) when a write fails.
    public static func run(input: String, output: String, options: Options) throws -> Summary {
        guard [1, 2, 4].contains(options.lengthSize) else {
            throw LabError.usage("--length-size must be 1, 2 or 4, got \(options.lengthSize)")
        }
        if let fps = options.fps, fps.num <= 0 || fps.den <= 0 {
            throw LabError.usage("--fps must be a positive rate, got \(fps.num)/\(fps.den)")
        }
        if options.avccConfigPath != nil && options.to != .avcc {
            throw LabError.usage("--avcc-config goes with --to avcc")
        }
        if sameFile(output, input) {
            throw LabError.usage("the output '\(output)' is the input '\(input)': convert would overwrite its input")
        }
        if let configPath = options.avccConfigPath {
            if sameFile(configPath, input) {
                throw LabError.usage("--avcc-config '\(configPath)' is the input '\(input)': convert would overwrite its input")
            }
            if sameFile(configPath, output) {
                throw LabError.usage("--avcc-config '\(configPath)' is the output '\(output)': one file cannot hold both")
            }
        }
        for (flag, path) in [("--in-avcc-config", options.inAVCConfigPath), ("--parameter-sets", options.parameterSets)] {
            guard let path, !path.isEmpty else { continue }
            if sameFile(path, output) {
                throw LabError.usage("\(flag) '\(path)' is the output '\(output)': convert would overwrite its input")
            }
            if let configPath = options.avccConfigPath, sameFile(path, configPath) {
                throw LabError.usage("\(flag) '\(path)' is the --avcc-config '\(configPath)': convert would overwrite its input")
            }
        }
        var source = StreamInput(path: input)
        source.takesParameterSetFlags = true
        source.format = options.from
        source.lengthSize = options.inAVCConfigPath == nil ? options.lengthSize : nil
        source.inAVCConfigPath = options.inAVCConfigPath
        source.parameterSets = options.parameterSets
        source.strict = options.strict
        let parsed = try Bitstream.open(source)
        let stream = parsed.stream
        let streamNALs = stream.nalUnits.map(\.nal)
        var bytes: [UInt8]
        var config: [UInt8]?
        // Out-of-band parameter sets go in band, before everything, unless an avcC record is written to hold them.
        let outOfBand = parsed.outOfBand?.nalUnits ?? []
        let inBand = options.to == .avcc && options.avccConfigPath != nil ? [] : outOfBand
        let nals = inBand + streamNALs
        do {
            let units = inBand.isEmpty ? parsed.accessUnits : try AccessUnit.split(nals)
            switch options.to {
            case .annexb:
                bytes = AnnexB.write(nals)
            case .avcc:
                if options.avccConfigPath != nil {
                    let log = parsed.parameterSets
                    if let change = log.firstChange, !options.avccConfigFirst {
                        let at = change.nalUnitIndex.map { "at NAL unit \($0)" } ?? "in \(parsed.outOfBand?.source ?? "the out-of-band parameter sets")"
                        throw LabError.data("\(input): the parameter sets change \(at) (\(change.kind == .sps ? "SPS" : "PPS") id \(change.id) given new content): an avcC record holds one set per id, and ISO/IEC 14496-15 needs a new sample entry there; --avcc-config-first writes the first ones")
                    }
                    let first = log.firstOfEachId
                    let record = try AVCDecoderConfigurationRecord(sequenceParameterSets: first.sequenceParameterSets,
                                                                   pictureParameterSets: first.pictureParameterSets,
                                                                   lengthSize: options.lengthSize)
                    bytes = try AVCC.write(nals, lengthSize: options.lengthSize)
                    config = try record.serialize()
                } else {
                    bytes = try AVCC.write(nals, lengthSize: options.lengthSize)
                }
            case .packets:
                let times: [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)]
                if let packets = stream.packets {
                    times = packets.map { ($0.ptsMicroseconds, $0.dtsMicroseconds) }
                } else {
                    times = try derivedTimes(units, fps: options.fps, path: input)
                }
                var out: [UInt8] = []
                for (k, p) in try Packet.fromAccessUnits(units, timestamps: times).enumerated() {
                    if k & 0xFFF == 0 { try Interruption.check() }
                    out += try p.serialize()
                }
                bytes = out
            }
        } catch let e as H264Error {
            throw LabError.data("\(input): \(e)")
        }
        // An interrupted conversion writes nothing (the command then exits 130 without its success line).
        try Interruption.check()
        // Written under temporary names and renamed into place together, only when both are whole: a failure leaves
        // neither an empty nor a partial output. (A stream with no NAL unit was refused by Bitstream.open.)
        if let config, let configPath = options.avccConfigPath {
            try StagedFiles.write([(bytes, output), (config, configPath)])
        } else {
            try StagedFiles.write([(bytes, output)])
        }
        return Summary(from: stream.format, nalUnits: streamNALs.count, accessUnits: parsed.accessUnits.count, bytes: bytes.count,
                       warnings: parsed.warnings.map(\.message))
    }

    /// Whether paths `a` and `b` name one file: both exist and share device and inode (stat(2), so a symbolic or
    /// hard link to a file is that file); or neither does, and their folders share device and inode and their
    /// last components are equal; or their absolute paths, normalised by ``Paths/normalized(_:)`` (which
    /// keeps `x/..` where `x` is a symbolic link), are equal.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        func absolute(_ p: String) -> String {
            p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
        }
        let (x, y) = (Paths.normalized(absolute(a)), Paths.normalized(absolute(b)))
        if x == y { return true }
        func identity(_ p: String) -> (dev: UInt64, ino: UInt64)? {
            var info = stat()
            return stat(p, &info) == 0 ? (UInt64(info.st_dev), UInt64(info.st_ino)) : nil
        }
        switch (identity(x), identity(y)) {
        case let (i?, j?): return i == j
        case (nil, nil):
            let (nx, ny) = (Paths.fileName(x), Paths.fileName(y))
            guard nx == ny, nx != "..", let i = identity(Paths.parent(x)), let j = identity(Paths.parent(y)) else { return false }
            return i == j
        default: return false
        }
    }

    /// Picture order counts and durations → (PTS, DTS) in microseconds per access unit (see ``run``).
    ///
    /// Times are counted in ticks of half a frame (H.264 Table E-6 without pic_struct: a field lasts one clock tick,
    /// num_units_in_tick / time_scale, a frame two): a field access unit lasts 1 tick, a frame or an access unit
    /// without a picture 2. PTS = the durations of the access units before it in display order (earlier IDR periods
    /// first, then by picture order count, then decode order); DTS = the durations before it in decode order, less
    /// the largest DTS − PTS when positive. A progressive stream's times are the frame-based ones (display index x
    /// frame duration), to the microsecond.
    static func derivedTimes(_ units: [AccessUnit], fps: (num: Int, den: Int)?, path: String) throws -> [(ptsMicroseconds: Int64, dtsMicroseconds: Int64)] {
        let derived = try derivedTicks(units, fps: fps, path: path)
        let (pts, dts, tick) = (derived.pts, derived.dts, derived.tick)
        let overflow = derived.overflow
        func time(_ ticks: Int) throws -> Int64 { try tick.microseconds(ticks: Int64(ticks)) }
        // The extreme ticks (the last PTS, the first DTS) bound every time: a rate given with --fps whose times do
        // not fit is the caller's mistake, not the stream's.
        if fps != nil, !units.isEmpty {
            do { _ = (try time(pts.max() ?? 0), try time(dts.min() ?? 0)) } catch is H264Error { throw overflow }
        }
        return try units.indices.map { k in (try time(pts[k]), try time(dts[k])) }
    }

    /// The times of ``derivedTimes(_:fps:path:)`` in whole ticks of half a frame, before they become microseconds:
    /// per access unit its PTS and DTS in ticks (DTS already shifted back so that DTS <= PTS), and one tick in
    /// seconds (half the frame duration: num_units_in_tick / time_scale from the SPS VUI, or 1 / (2 x fps)).
    /// The order of the PTS is the display order the picture order counts give (earlier IDR periods first, then
    /// by picture order count, then decode order), whatever the duration.
    /// - Returns: also `overflow`, the error ``derivedTimes(_:fps:path:)`` throws when an `fps` puts the times
    ///   beyond 64-bit microseconds.
    /// - Throws: as ``derivedTimes(_:fps:path:)``: `.usage` without a frame duration or with one under a
    ///   microsecond; the `H264` module's error for a parameter set that does not parse.
    static func derivedTicks(_ units: [AccessUnit], fps: (num: Int, den: Int)?, path: String) throws
        -> (pts: [Int], dts: [Int], tick: Rational, overflow: LabError) {
        var sets = ParameterSets()
        var durationNum = 0, durationDen = 0   // frame duration = durationNum / durationDen seconds
        if let fps {
            guard fps.num > 0, fps.den > 0 else { throw LabError.usage("--fps must be positive, got \(fps.num)/\(fps.den)") }
            (durationNum, durationDen) = (fps.den, fps.num)
        }
        // Picture order count per access unit (H.264 8.2.1; a frame's is the smaller of its fields'), and the IDR
        // period it belongs to.
        var pocs: [Int] = []
        var periods: [Int] = []
        var period = -1
        var prevMsb = 0, prevLsb = 0, prevFrameNumOffset = 0, prevFrameNum = 0
        for u in units {
            for n in u.nalUnits { try sets.add(n) }
            guard let header = u.sliceHeaders.first,
                  let pps = sets.pictureParameterSets[header.picParameterSetId],
                  let sps = sets.sequenceParameterSets[pps.seqParameterSetId] else {
                pocs.append(pocs.last.map { $0 + 1 } ?? 0)
                periods.append(max(period, 0))
                continue
            }
            if durationDen == 0, let v = sps.vuiParameters, let n = v.numUnitsInTick, let t = v.timeScale, n > 0, t > 0 {
                (durationNum, durationDen) = (2 * n, t)
            }
            if u.isIDR { period += 1; prevMsb = 0; prevLsb = 0; prevFrameNumOffset = 0; prevFrameNum = 0 }
            var poc: Int
            switch sps.picOrderCntType {
            case 0:
                let maxLsb = 1 << ((sps.log2MaxPicOrderCntLsbMinus4 ?? 0) + 4)
                let lsb = header.picOrderCntLsb ?? 0
                var msb = prevMsb
                if lsb < prevLsb && prevLsb - lsb >= maxLsb / 2 { msb = prevMsb + maxLsb }
                else if lsb > prevLsb && lsb - prevLsb > maxLsb / 2 { msb = prevMsb - maxLsb }
                // A field's order count is msb + lsb; a frame's is Min(TopFieldOrderCnt, BottomFieldOrderCnt).
                poc = msb + lsb + min(0, header.deltaPicOrderCntBottom ?? 0)
                if u.isReference { prevMsb = msb; prevLsb = lsb }
            case 2:
                let offset = u.isIDR ? 0 : (prevFrameNum > header.frameNum ? prevFrameNumOffset + sps.maxFrameNum : prevFrameNumOffset)
                poc = u.isIDR ? 0 : 2 * (offset + header.frameNum) - (u.isReference ? 0 : 1)
                prevFrameNumOffset = offset
                prevFrameNum = header.frameNum
            default:
                poc = pocs.count  // type 1: display order taken as decode order
            }
            pocs.append(poc)
            periods.append(max(period, 0))
        }
        let hasFields = units.contains(where: \.fieldPicFlag)
        // Compared in 128 bits: an --fps of 1/99999999999999 would overflow 64.
        guard durationDen == 0 || Int128(durationNum) * 1_000_000 >= Int128(durationDen) * (hasFields ? 2 : 1) else {
            throw LabError.usage(hasFields
                ? "\(path): a field duration of \(durationNum)/\(2 * Int128(durationDen)) s is under a microsecond, the packets' time unit"
                : "\(path): a frame duration of \(durationNum)/\(durationDen) s is under a microsecond, the packets' time unit")
        }
        guard durationDen > 0 else {
            // Say what is really missing: no SPS at all, or no slice to take one from, before the SPS's VUI.
            if sets.sequenceParameterSets.isEmpty {
                throw LabError.data("\(path): no SPS in the stream, so no frame rate and no picture to time: packets need an SPS, a PPS and slices")
            }
            if !units.contains(where: \.hasPrimaryPicture) {
                throw LabError.data("\(path): no access unit holds a slice, so there is no picture to time: packets need slices")
            }
            throw LabError.usage("\(path): the SPS has no VUI timing; give --fps NUM[/DEN] for the packets' timestamps")
        }
        // Durations in ticks (half frames), then the start of each access unit in display and in decode order.
        let durations = units.map { $0.fieldPicFlag ? 1 : 2 }
        let order = units.indices.sorted { (periods[$0], pocs[$0], $0) < (periods[$1], pocs[$1], $1) }
        var pts = [Int](repeating: 0, count: units.count)
        var dts = [Int](repeating: 0, count: units.count)
        var t = 0
        for k in order { pts[k] = t; t += durations[k] }
        t = 0
        for k in units.indices { dts[k] = t; t += durations[k] }
        let delay = max(units.indices.map { dts[$0] - pts[$0] }.max() ?? 0, 0)
        let overflow = LabError.usage("--fps \(fps?.num ?? 0)/\(fps?.den ?? 0): a frame duration of \(durationNum)/\(durationDen) s puts the times of \(path)'s \(units.count) access units beyond 64-bit microseconds")
        let tick: Rational
        do { tick = try Rational(Int64(durationNum), Int64(durationDen)) / Rational(2) } catch is H264Error where fps != nil { throw overflow }
        return (pts, dts.map { $0 - delay }, tick, overflow)
    }
}
