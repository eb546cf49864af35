import Foundation
import H264

/// An H.264 stream the lab did not make (a phone's recording, an NVENC or ffmpeg output), read for `enclab check`:
/// its frames in decode order with their picture types, bytes and times, and its parameter sets.
///
/// **What is read.** A file that starts with an Annex B start code is a raw Annex B stream, read by the `H264`
/// module (``Bitstream/open(_:)``). Any other file is handed to ffprobe and ffmpeg as their standard input
/// (``FFmpegInput/standardInputURL``, ``FFmpegInput/inputRestrictions``: its name never reaches them): ffprobe lists
/// the first video stream's packets (`pts`, `dts`, `duration`, `size`) and the stream's codec, time base, frame
/// rates and extradata; `ffmpeg -map 0:v:0 -c copy -copyinkf -f data` writes the packets' bytes as they are stored,
/// which the packet sizes cut apart. Each packet's NAL units are split by the avcC record's length size (the
/// extradata of MP4, MOV, Matroska and FLV), or at start codes when the packets are Annex B; the avcC record's
/// parameter sets count as given out of band. Each packet must hold one frame.
///
/// **Edit lists.** Packets that ffprobe flags as discarded (`D`: before the start of an MP4 edit list) are read and
/// decoded but are not frames of the stream: the frames are those shown, as `ffprobe -show_frames` counts them.
///
/// **Keyframes and picture types** come from the bitstream alone (an IDR picture is `nal_unit_type` 5), never from
/// a container's key flag.
///
/// **Times**, the first source that applies:
/// 1. a timecode v2 file (`--tcfile-in`, ``TimecodeV2``): entry k times the k-th frame in display order (the
///    order of the picture order counts, H.264 8.2.1), to the microsecond; timebase 1/1000000 s;
/// 2. the container: every packet's `pts` in the stream's time base; each frame's `dts` when every packet has one,
///    else the PTS sorted and given to the frames in decode order, moved back so that no DTS is after its PTS;
/// 3. the SPS's VUI timing when `fixed_frame_rate_flag` is 1 in every SPS and all give the same
///    `num_units_in_tick` and `time_scale`: a frame lasts 2 x num_units_in_tick / time_scale (H.264 Table E-6),
///    and times come from the picture order counts as ``Convert`` derives them; timebase one clock tick. A
///    variable-rate stream's tick (fixed_frame_rate_flag 0) is not a frame duration, so it is not used.
///
/// A stream with none of them is read without times (``TimeSource/none(reason:)``): the rules that count frames
/// (MaxKeyFrameInterval, AllowFrameReordering, H264EntropyMode) are checked, one that needs times is refused (65) by
/// ``RuleCheck/check(_:_:)``. A frame of a field-coded stream is a field pair
/// (``CodedFrame/frames(_:)``): its PTS is its first field's, in display order.
public struct ForeignStream: Sendable {
    /// Where the times came from.
    public enum TimeSource: Sendable, Equatable {
        /// A timecode v2 file, by its path as given.
        case timecode(path: String)
        /// The container (ffprobe's format name, `mov,mp4,m4a,3gp,3g2,mj2`).
        case container(format: String)
        /// The SPS's VUI timing: the fixed frame rate, frames per second.
        case sps(frameRate: Rational)
        /// No times (a raw stream without --tcfile-in or a fixed-rate SPS), and why: each frame's PTS is its place in
        /// output order and its DTS its place in decode order, one tick (``ForeignStream/timebase`` 1) each; only the
        /// rules that count frames can be checked.
        case none(reason: String)

        /// The reason there are no times, for ``none(reason:)``; nil otherwise.
        public var untimed: String? {
            if case .none(let reason) = self { return reason }
            return nil
        }

        /// How the summary names it: `the timecode file t.txt`, `the container (mov,mp4,...)`, `the SPS (fixed frame
        /// rate 15 fps)`.
        public var description: String {
            switch self {
            case .timecode(let path): return "the timecode file \(path)"
            case .container(let format): return "the container (\(format))"
            case .sps(let rate): return "the SPS (fixed frame rate \(VideoToolboxSettings.text(rate)) fps)"
            case .none(let reason): return "nowhere (\(reason))"
            }
        }

        /// `timecode`, `container`, `sps` or `none`, as the stored settings name it.
        public var name: String {
            switch self {
            case .timecode: return "timecode"
            case .container: return "container"
            case .sps: return "sps"
            case .none: return "none"
            }
        }
    }

    /// One frame (an access unit, or the two of a field pair), as the lab's `frames` table holds it.
    public struct Frame: Sendable, Equatable {
        /// Position in decode order, from 0.
        public var codedIndex: Int
        /// Position in display order (by ``pts``), from 0.
        public var displayIndex: Int
        /// The picture type from the bitstream: IDR (`nal_unit_type` 5), I, P, Bref or B (``Bitstream/pictureName(_:)``).
        public var type: FrameType
        /// Presentation and decode time in ticks of ``ForeignStream/timebase``.
        public var pts: Int64
        public var dts: Int64
        /// Every byte of the frame as stored: an Annex B stream's access units with their start codes (and any
        /// zero bytes before them), a container's packet with its length prefixes; what ffprobe calls the packet's
        /// size.
        public var sizeBytes: Int
        /// The bytes of its SPS, PPS, SEI and AUD NAL units (types 7, 8, 6, 9) as stored, start codes or length
        /// prefixes included.
        public var headerBytes: Int
        /// The bytes of its filler-data NAL units (type 12) as stored.
        public var fillerBytes: Int
        /// Its NAL units' bytes without start codes or length prefixes: what DataRateLimits counts, so that a raw
        /// stream and an MP4 of the same access units count alike.
        public var payloadBytes: Int
        /// Whether any of its slices is a B slice (slice_type 1 or 6).
        public var hasBSlices: Bool
        /// Its place in the order the bitstream outputs the frames (picture order count within each IDR period),
        /// from 0: the reordering check compares it with decode order.
        public var outputRank: Int
    }

    /// The file as given.
    public var path: String
    /// `annexb` for a raw Annex B stream, else ffprobe's format name.
    public var format: String
    public var timeSource: TimeSource
    /// Seconds per tick of every PTS and DTS.
    public var timebase: Rational
    /// The frames in decode order.
    public var frames: [Frame]
    /// The stream's end in ticks: the last frame's PTS (display order) plus its duration: the container's packet
    /// duration when it gives one above 0, the next timecode entry when the file has one, one frame at the SPS's
    /// fixed rate; else the gap before the last frame; 1 tick for a stream of one frame with none of these.
    public var endPTS: Int64
    /// The picture size after cropping, from the first SPS (luma samples).
    public var width: Int
    public var height: Int
    /// The nominal frame rate: the container's `avg_frame_rate` (else `r_frame_rate`), the SPS's fixed rate, or
    /// for timecodes the frames over the span (first PTS to ``endPTS``).
    public var frameRate: Rational
    /// Every SPS and PPS as it appeared, out-of-band ones (an avcC record's) first with no NAL unit index.
    public var parameterSets: [StoredParameterSet]
    /// What was accepted with a warning (the `H264` module's lenient policy), one line each.
    public var warnings: [String]

    /// Reads `path` (a raw Annex B stream or a container) and times it.
    /// - Parameter timecodePath: a timecode v2 file whose entries time the frames in display order; more entries
    ///   than frames are ignored (the next one ends the last frame).
    /// - Throws: `.noInput` when the stream or the timecode file is missing or cannot be read; `.data` naming the
    ///   file when it is empty, does not parse, is not H.264 (ffprobe's codec), when ffprobe or ffmpeg fail on it, a
    ///   packet does not hold one frame, some packets have a PTS and others not, the timecode file is bad or has
    ///   fewer entries than frames, or no times can be had ("no times: ..."); `.software` when ffprobe or ffmpeg
    ///   are missing (containers only).
    public static func read(path: String, timecodePath: String? = nil) throws -> ForeignStream {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw LabError.noInput("\(path): no such file")
        }
        if isFolder.boolValue { throw LabError.noInput("\(path): a folder, not a stream") }
        // A named pipe or a device is refused before any open (opening a FIFO without a writer would block).
        _ = try Clip.regularFileSize(path)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        let head = [UInt8](handle.readData(ofLength: 4))
        try? handle.close()
        if head.isEmpty { throw LabError.data("\(path): empty file") }
        // The timecode file is read before the stream, so that a missing one is 66 whatever the stream holds.
        let timecode = try timecodePath.map { try TimecodeV2.read(path: $0) }
        if AnnexB.startsWithStartCode(head) {
            return try readAnnexB(path: path, timecode: timecode)
        }
        return try readContainer(path: path, timecode: timecode)
    }

    // MARK: - Raw Annex B

    static func readAnnexB(path: String, timecode: TimecodeV2?) throws -> ForeignStream {
        var input = StreamInput(path: path)
        input.format = .annexb
        let parsed = try Bitstream.open(input)
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
        // Each NAL unit as stored: the bytes since the previous NAL unit's end (its start code and any zero bytes
        // before it) and the NAL unit; the bytes after the last NAL unit go to the last one.
        let located = parsed.stream.nalUnits
        var stored = [Int](repeating: 0, count: located.count)
        var end = 0
        for (i, l) in located.enumerated() {
            stored[i] = l.offset - end + l.size
            end = l.offset + l.size
        }
        if let fileSize, !stored.isEmpty { stored[stored.count - 1] += max(0, fileSize - end) }
        return try assemble(parsed: parsed, path: path, format: "annexb", timecode: timecode, container: nil,
                            storedBytes: { i in stored[i] }, packetOfFrame: nil)
    }

    // MARK: - Containers

    /// What ffprobe says of a container's first video stream.
    struct Probe {
        var formatName: String
        var codecName: String
        var timebase: Rational
        var averageFrameRate: Rational?
        var extradata: [UInt8]
        /// Per packet in file (decode) order; `discard`: ffprobe's flag `D`, a packet decoded but not shown (before
        /// the start of an MP4 edit list).
        var packets: [(pts: Int64?, dts: Int64?, duration: Int64?, size: Int, discard: Bool)]
    }

    static func readContainer(path: String, timecode: TimecodeV2?) throws -> ForeignStream {
        let probe = try self.probe(path: path)
        guard probe.codecName == "h264" else {
            throw LabError.data("\(path): its first video stream is \(probe.codecName), not H.264 (ffprobe's codec_name)")
        }
        guard !probe.packets.isEmpty else { throw LabError.data("\(path): its video stream has no packets (ffprobe)") }
        let total = probe.packets.reduce(0) { $0 + $1.size }
        let data = try packetData(path: path)
        guard data.count == total else {
            throw LabError.data("\(path): ffmpeg copied \(data.count) bytes of video packets, ffprobe lists \(total) in \(probe.packets.count) packets")
        }
        // The avcC record (ISO/IEC 14496-15 5.3.3.1) gives the length size and the parameter sets; without one the
        // packets are Annex B.
        var outOfBand: OutOfBandParameterSets?
        var lengthSize: Int?
        if let first = probe.extradata.first, first == 1 {
            do {
                let record = try AVCDecoderConfigurationRecord(bytes: probe.extradata)
                outOfBand = OutOfBandParameterSets(source: "\(path)'s avcC record", nalUnits: record.sequenceParameterSets + record.pictureParameterSets,
                                                   lengthSize: record.lengthSize, warnings: [])
                lengthSize = record.lengthSize
            } catch let e as H264Error {
                throw LabError.data("\(path): the video stream's avcC record (extradata) does not parse: \(e)")
            }
        } else if !probe.extradata.isEmpty && !AnnexB.startsWithStartCode(probe.extradata) {
            throw LabError.data("\(path): the video stream's extradata is neither an avcC record nor Annex B parameter sets")
        }
        // Every packet's NAL units, their offsets within the packets' bytes; each NAL unit's packet and stored bytes.
        var located: [LocatedNALUnit] = []
        var skipped: [ParseWarning] = []
        var packetOfNAL: [Int] = []
        var stored: [Int] = []
        var start = 0
        for (k, p) in probe.packets.enumerated() {
            let bytes = Array(data[start ..< start + p.size])
            let warned = skipped.count
            do {
                let nals: [LocatedNALUnit]
                // With an avcC record the packets are length-prefixed (a 4-byte length of 256 to 511 bytes starts
                // with 00 00 01, so the bytes are not sniffed for a start code).
                if let lengthSize {
                    nals = try AVCC.split(bytes, lengthSize: lengthSize, policy: .lenient, warnings: &skipped)
                } else {
                    nals = try AnnexB.split(bytes, leadingData: .reject, policy: .lenient, warnings: &skipped)
                }
                var end = 0
                for (i, l) in nals.enumerated() {
                    located.append(LocatedNALUnit(offset: start + l.offset, nal: l.nal))
                    packetOfNAL.append(k)
                    stored.append(l.offset - end + l.size + (i == nals.count - 1 ? p.size - (l.offset + l.size) : 0))
                    end = l.offset + l.size
                }
            } catch let e as H264Error {
                throw LabError.data("\(path): packet \(k) (\(p.size) bytes at byte \(start) of the video packets): \(e)")
            }
            // Byte offsets within the video packets' bytes, as the NAL units' offsets are.
            for w in warned..<skipped.count { skipped[w].byteOffset = skipped[w].byteOffset.map { $0 + start } }
            start += p.size
        }
        let stream = LoadedStream(format: lengthSize == nil ? .annexb : .avcc, nalUnits: located, packets: nil, skipped: skipped)
        try Bitstream.checkHeaders(stream, path: path, strict: false) { _ in }
        let parsed = try Bitstream.parse(stream, path: path, outOfBand: outOfBand, policy: .lenient)
        return try assemble(parsed: parsed, path: path, format: probe.formatName, timecode: timecode, container: probe,
                            storedBytes: { i in stored[i] }, packetOfFrame: { frame, units in
                                // The frame's first NAL unit with a slice must lie in packet `frame`.
                                let unit = units[0]
                                let vcl = unit.nalUnitIndices.first { located[$0].nal.nalUnitType.isVCL } ?? unit.nalUnitIndices.lowerBound
                                return packetOfNAL[vcl]
                            })
    }

    /// Runs ffprobe on the file (as its standard input) for its first video stream and that stream's packets.
    /// - Throws: `.data` naming the file when ffprobe fails or its answer lacks a video stream or a usable time base.
    static func probe(path: String) throws -> Probe {
        let (status, output, errors) = try FFmpegInput.ffprobe(path, [
            "-select_streams", "v:0",
            "-show_entries", "format=format_name:stream=codec_name,time_base,avg_frame_rate,r_frame_rate,extradata:packet=pts,dts,duration,size,flags",
            "-show_data", "-of", "json"])
        guard status == 0 else {
            if let refused = FFmpegInput.refusedFormat(errors) {
                throw LabError.data("\(path): not an Annex B stream (no leading start code), and ffprobe reads it as '\(refused)', which the lab does not open")
            }
            throw LabError.data("\(path): not an Annex B stream (no leading start code), and ffprobe cannot read it: \(FFmpegInput.problem(errors, path: path) ?? "exit status \(status)")")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: output)) as? [String: Any] else {
            throw LabError.data("\(path): ffprobe's answer is not JSON")
        }
        guard let stream = (root["streams"] as? [[String: Any]])?.first else {
            throw LabError.data("\(path): not an Annex B stream (no leading start code), and ffprobe finds no video stream in it")
        }
        func rational(_ value: Any?) -> Rational? {
            guard let text = value as? String else { return nil }
            let parts = text.split(separator: "/")
            guard parts.count == 2, let n = Int64(parts[0]), let d = Int64(parts[1]), n > 0, d > 0 else { return nil }
            return try? Rational(n, d)
        }
        func integer(_ value: Any?) -> Int64? {
            if let n = value as? NSNumber { return n.int64Value }
            if let s = value as? String { return Int64(s) }
            return nil
        }
        guard let timebase = rational(stream["time_base"]) else {
            throw LabError.data("\(path): ffprobe gives the video stream an unusable time base '\(stream["time_base"] ?? "none")'")
        }
        var packets: [(pts: Int64?, dts: Int64?, duration: Int64?, size: Int, discard: Bool)] = []
        for (k, p) in ((root["packets"] as? [[String: Any]]) ?? []).enumerated() {
            guard let size = integer(p["size"]), size >= 0, size <= Int64(Int32.max) else {
                throw LabError.data("\(path): ffprobe gives packet \(k) no usable size ('\(p["size"] ?? "none")')")
            }
            packets.append((integer(p["pts"]), integer(p["dts"]), integer(p["duration"]), Int(size), (p["flags"] as? String)?.contains("D") ?? false))
        }
        return Probe(formatName: (root["format"] as? [String: Any])?["format_name"] as? String ?? "unknown",
                     codecName: stream["codec_name"] as? String ?? "unknown", timebase: timebase,
                     averageFrameRate: rational(stream["avg_frame_rate"]) ?? rational(stream["r_frame_rate"]),
                     extradata: hexDump(stream["extradata"] as? String ?? ""), packets: packets)
    }

    /// The bytes of ffprobe's hex dump (`-show_data`): lines `00000010: 0164 000a ffe1 ...  .d...`, eight groups of
    /// up to four hex digits after the offset, then the text.
    static func hexDump(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let body = line[line.index(after: colon)...].dropFirst()   // the space after the colon
            // The hex area is 39 characters (8 groups of 4 digits and 7 spaces); the text follows 2 spaces later.
            let hex = body.prefix(39).filter { !$0.isWhitespace }
            var i = hex.startIndex
            while i < hex.endIndex, hex.index(after: i) < hex.endIndex {
                let j = hex.index(i, offsetBy: 2)
                if let b = UInt8(hex[i..<j], radix: 16) { bytes.append(b) }
                i = j
            }
        }
        return bytes
    }

    /// The video packets' bytes as the container stores them, in file order: `ffmpeg -map 0:v:0 -c copy -copyinkf
    /// -f data` with the file as its standard input.
    /// - Throws: `.data` naming the file when ffmpeg fails.
    static func packetData(path: String) throws -> [UInt8] {
        let ffmpeg = try Tools.require("ffmpeg", package: "ffmpeg")
        guard let input = FileHandle(forReadingAtPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        defer { try? input.close() }
        let spawned = try SpawnedProcess(ffmpeg, ["-nostdin", "-hide_banner", "-v", "level+error"] + FFmpegInput.inputRestrictions + [
            "-i", FFmpegInput.standardInputURL, "-map", "0:v:0", "-c", "copy", "-copyinkf", "-f", "data", "pipe:1"],
                                         standardInput: input)
        let output = spawned.stdout.readDataToEndOfFile()
        let (status, errors) = spawned.finish()
        guard status == 0 else {
            throw LabError.data("\(path): ffmpeg could not copy its video packets: \(FFmpegInput.problem(errors, path: path) ?? "exit status \(status)")")
        }
        return [UInt8](output)
    }

    // MARK: - Frames and times

    /// Frames, sizes and times from a parsed stream.
    /// - Parameters:
    ///   - storedBytes: NAL unit i's bytes as stored (its start code or length prefix included).
    ///   - packetOfFrame: for a container, the packet holding a frame's picture (given the frame's index and its
    ///     access units); each frame must be in its own packet, in order.
    static func assemble(parsed: ParsedStream, path: String, format: String, timecode: TimecodeV2?, container: Probe?,
                         storedBytes: (Int) -> Int, packetOfFrame: ((Int, [AccessUnit]) -> Int)?) throws -> ForeignStream {
        let units = parsed.accessUnits
        let coded = CodedFrame.frames(units)
        guard !coded.isEmpty else { throw LabError.data("\(path): holds no picture (no slice NAL unit)") }
        guard let firstSPS = parsed.parameterSets.sequenceParameterSets.first?.sps else {
            throw LabError.data("\(path): holds no SPS")
        }
        if let probe = container {
            guard coded.count == probe.packets.count else {
                throw LabError.data("\(path): \(probe.packets.count) video packets hold \(coded.count) frames: check needs one frame per packet")
            }
            for f in coded {
                let us = f.accessUnits.map { units[$0] }
                let k = packetOfFrame?(f.index, us) ?? f.index
                guard k == f.index else {
                    throw LabError.data("\(path): frame \(f.index) (decode order) is in packet \(k): check needs one frame per packet")
                }
            }
        }
        // The frame each access unit belongs to; one without a picture goes with the frame before it (the first
        // frame for those before any).
        var frameOf = [Int](repeating: 0, count: units.count)
        var current = 0
        var owner: [Int: Int] = [:]
        for f in coded { for k in f.accessUnits { owner[k] = f.index } }
        for k in units.indices {
            if let f = owner[k] { current = f }
            frameOf[k] = current
        }
        var sizes = [Int](repeating: 0, count: coded.count)
        var headers = [Int](repeating: 0, count: coded.count)
        var fillers = [Int](repeating: 0, count: coded.count)
        var payloads = [Int](repeating: 0, count: coded.count)
        var bSlices = [Bool](repeating: false, count: coded.count)
        for u in units {
            let f = frameOf[u.index]
            for (i, nal) in zip(u.nalUnitIndices, u.nalUnits) {
                let b = storedBytes(i)
                sizes[f] += b
                payloads[f] += nal.bytes.count
                if [6, 7, 8, 9].contains(nal.nalUnitType.rawValue) { headers[f] += b }
                if nal.nalUnitType == .fillerData { fillers[f] += b }
            }
            if u.sliceTypes.contains(.b) { bSlices[f] = true }
        }
        let names = coded.map { Bitstream.pictureName(units[$0.accessUnits[0]]) }
        let types = try names.enumerated().map { k, name in
            guard let t = FrameType(rawValue: name) else { throw LabError.data("\(path): frame \(k) has no picture type ('\(name)')") }
            return t
        }

        // The bitstream's output order: the picture order counts within IDR periods (derived at 1 fps: only the
        // order is used).
        let order = try Convert.derivedTicks(units, fps: (1, 1), path: path)
        let orderTicks = coded.map { f in f.accessUnits.map { order.pts[$0] }.min()! }
        let outputOrder = coded.indices.sorted { (orderTicks[$0], $0) < (orderTicks[$1], $1) }
        var outputRank = [Int](repeating: 0, count: coded.count)
        for (rank, f) in outputOrder.enumerated() { outputRank[f] = rank }

        var warnings = parsed.warnings.map(\.message)
        var pts: [Int64]
        var dts: [Int64]?
        var lastDuration: Int64?
        let timebase: Rational
        let source: TimeSource
        var frameRate: Rational?
        if let timecode {
            // Entry k times the k-th frame in output order.
            let times = try timecode.ptsMicroseconds(seek: 0, frames: coded.count)
            pts = [Int64](repeating: 0, count: coded.count)
            for (rank, f) in outputOrder.enumerated() { pts[f] = times[rank] }
            if timecode.times.count > coded.count, let next = try? timecode.ptsMicroseconds(seek: coded.count - 1, frames: 2) {
                lastDuration = next[1] - next[0]
            }
            timebase = try Rational(1, 1_000_000)
            source = .timecode(path: timecode.path)
            if container != nil { warnings.append("\(path): the container's times are not used: \(timecode.path) gives them") }
        } else if let probe = container, probe.packets.contains(where: { $0.pts != nil }) {
            if let k = probe.packets.firstIndex(where: { $0.pts == nil }) {
                throw LabError.data("\(path): packet \(k) has no PTS while others have one: the container's times are incomplete (give --tcfile-in FILE)")
            }
            pts = probe.packets.map { $0.pts! }
            if probe.packets.allSatisfy({ $0.dts != nil }) { dts = probe.packets.map { $0.dts! } }
            let last = pts.indices.max { (pts[$0], $0) < (pts[$1], $1) }!
            if let d = probe.packets[last].duration, d > 0 { lastDuration = d }
            timebase = probe.timebase
            source = .container(format: probe.formatName)
            frameRate = probe.averageFrameRate
        } else {
            let what = container == nil ? "a raw Annex B stream has no container times" : "its container gives no packet times"
            let spsList = parsed.parameterSets.sequenceParameterSets.compactMap(\.sps)
            // The SPS's fixed frame rate (num_units_in_tick, time_scale), or why there is none.
            func spsTiming() -> (n: Int, t: Int, untimed: String?) {
                guard let vui = firstSPS.vuiParameters, vui.timingInfoPresentFlag, let n = vui.numUnitsInTick, let t = vui.timeScale, n > 0, t > 0 else {
                    return (0, 0, "\(what), no --tcfile-in was given, and its SPS has no VUI timing (timing_info_present_flag 0)")
                }
                for sps in spsList {
                    guard let v = sps.vuiParameters, v.timingInfoPresentFlag, v.fixedFrameRateFlag == true else {
                        return (n, t, "\(what), no --tcfile-in was given, and its SPS has fixed_frame_rate_flag 0 (a variable-rate stream's num_units_in_tick \(n) / time_scale \(t) is not a frame duration)")
                    }
                    guard v.numUnitsInTick == n, v.timeScale == t else {
                        return (n, t, "\(what), no --tcfile-in was given, and its SPSs give different VUI timing (num_units_in_tick/time_scale \(n)/\(t) and \(v.numUnitsInTick ?? 0)/\(v.timeScale ?? 0))")
                    }
                }
                return (n, t, nil)
            }
            let (n, t, untimed) = spsTiming()
            if let untimed {
                // No times: the frames in output order, one tick each, for the rules that count frames; a rule that
                // needs times refuses the stream (RuleCheck.check).
                pts = coded.indices.map { Int64(outputRank[$0]) }
                dts = coded.indices.map { Int64($0) }
                lastDuration = 1
                timebase = Rational(1)
                source = .none(reason: untimed)
            } else {
                let derived: (pts: [Int], dts: [Int], tick: Rational, overflow: LabError)
                do { derived = try Convert.derivedTicks(units, fps: (t, 2 * n), path: path) } catch let e as LabError where e.kind == .usage {
                    throw LabError.data(e.message)
                }
                pts = coded.map { f in Int64(f.accessUnits.map { derived.pts[$0] }.min()!) }
                dts = coded.map { Int64(derived.dts[$0.accessUnits[0]]) }
                lastDuration = 2
                timebase = derived.tick
                let rate = try Rational(Int64(t), 2 * Int64(n))
                source = .sps(frameRate: rate)
                frameRate = rate
            }
        }
        // Display order: by PTS (ties by decode order: the rule checks refuse them where it matters).
        let display = coded.indices.sorted { (pts[$0], $0) < (pts[$1], $1) }
        var displayIndex = [Int](repeating: 0, count: coded.count)
        for (d, f) in display.enumerated() { displayIndex[f] = d }
        let sorted = display.map { pts[$0] }
        if dts == nil {
            // The PTS in increasing order, given to the frames in decode order, moved back so DTS <= PTS.
            var delay: Int64 = 0
            for i in coded.indices { delay = max(delay, sorted[i] &- pts[i]) }
            dts = sorted.map { $0 &- delay }
        }
        let lastPTS = sorted.last!
        let duration = lastDuration ?? (sorted.count > 1 ? sorted[sorted.count - 1] - sorted[sorted.count - 2] : 1)
        let (endPTS, overflow) = lastPTS.addingReportingOverflow(max(1, duration))
        guard !overflow else { throw LabError.data("\(path): the last PTS \(lastPTS) plus its duration does not fit 64 bits") }
        if frameRate == nil {
            let spanTicks = endPTS &- sorted[0]
            if spanTicks > 0, let span = try? timebase.times(spanTicks), let r = try? Rational(Int64(coded.count)) / span {
                frameRate = r
            }
        }
        var frames = coded.indices.map { k in
            Frame(codedIndex: k, displayIndex: displayIndex[k], type: types[k], pts: pts[k], dts: dts![k], sizeBytes: sizes[k],
                  headerBytes: headers[k], fillerBytes: fillers[k], payloadBytes: payloads[k], hasBSlices: bSlices[k],
                  outputRank: outputRank[k])
        }
        // An edit list that starts after the first packets (an MP4 cut by stream copy): those packets, ffprobe's
        // discard flag, are decoded but not shown. The frames are those shown, as ffprobe -show_frames and ffmpeg's
        // decode count them, numbered again among themselves.
        if let probe = container, probe.packets.contains(where: \.discard) {
            let shown = frames.filter { !probe.packets[$0.codedIndex].discard }
            guard !shown.isEmpty else {
                throw LabError.data("\(path): every one of its \(frames.count) video packets is before the start of its edit list (ffprobe's discard flag): no frame is shown")
            }
            warnings.append("\(path): \(frames.count - shown.count) of its \(frames.count) video packets are before the start of its edit list (ffprobe's discard flag): decoded, not shown, and not counted")
            func ranks(_ key: (Frame) -> Int) -> [Int] {
                var rank = [Int](repeating: 0, count: shown.count)
                for (r, k) in shown.indices.sorted(by: { key(shown[$0]) < key(shown[$1]) }).enumerated() { rank[k] = r }
                return rank
            }
            let display = ranks(\.displayIndex), output = ranks(\.outputRank)
            frames = shown.indices.map { k in
                var f = shown[k]
                f.codedIndex = k
                f.displayIndex = display[k]
                f.outputRank = output[k]
                return f
            }
        }
        return ForeignStream(path: path, format: format, timeSource: source, timebase: timebase, frames: frames, endPTS: endPTS,
                             width: firstSPS.width, height: firstSPS.height, frameRate: frameRate ?? Rational(1),
                             parameterSets: try storedParameterSets(parsed), warnings: warnings)
    }

    /// Every SPS and PPS occurrence as the store keeps them (``StreamCheck/parameterSets(_:)``'s shape), out-of-band
    /// ones first with no NAL unit index.
    static func storedParameterSets(_ parsed: ParsedStream) throws -> [StoredParameterSet] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try parsed.parameterSets.occurrences.map { o in
            if let sps = o.sps {
                return StoredParameterSet(kind: "sps", id: o.id, profileIdc: sps.profileIdc, levelIdc: sps.levelIdc, width: sps.width,
                                          height: sps.height, entropyCodingModeFlag: nil, maxNumReorderFrames: StreamCheck.reorderFrames(sps),
                                          fieldsJSON: String(decoding: try encoder.encode(sps), as: UTF8.self), nalUnitIndex: o.nalUnitIndex)
            }
            let pps = o.pps
            return StoredParameterSet(kind: o.kind == .sps ? "sps" : "pps", id: o.id, profileIdc: nil, levelIdc: nil, width: nil, height: nil,
                                      entropyCodingModeFlag: pps.map { $0.entropyCodingModeFlag ? 1 : 0 }, maxNumReorderFrames: nil,
                                      fieldsJSON: try pps.map { String(decoding: try encoder.encode($0), as: UTF8.self) } ?? "{}",
                                      nalUnitIndex: o.nalUnitIndex)
        }
    }
}
