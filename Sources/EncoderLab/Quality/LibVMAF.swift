import Foundation

/// The perceptual quality of a run's frames (`--metrics`): per display index, each requested metric's value, as
/// libvmaf's JSON log (and the xpsnr filter's stats file) gave it, and the libvmaf version. What the store records
/// as given (`frame_quality_metrics`, `run_quality_metrics`).
public struct QualityScores: Sendable {
    /// The metrics asked for, in the lab's order.
    public var metrics: [QualityMetric]
    /// One entry per displayed frame, by display index: each requested metric's value (absent only where the value
    /// is not a finite number: libvmaf's null, such as CIEDE2000 of identical pictures, or XPSNR's `inf`; stored NULL).
    public var frames: [[QualityMetric: Double]]
    /// libvmaf's `version` from its JSON log (a git revision such as `86da14d`), nil when only XPSNR was asked for.
    public var libvmafVersion: String?
    /// The frames not scored at all: pictures the encoder dropped before any picture was decoded (nothing is shown in
    /// their place, ``LibVMAF/scoreInputs(_:inputs:unscored:)``); their rows have no values, and
    /// ``LibVMAF/unscoredWarning(_:)`` says why, not ``missingWarning()``.
    public var unscored: [Int]

    public init(metrics: [QualityMetric], frames: [[QualityMetric: Double]], libvmafVersion: String?, unscored: [Int] = []) {
        self.metrics = metrics
        self.frames = frames
        self.libvmafVersion = libvmafVersion
        self.unscored = unscored
    }

    /// The run's warning when a requested metric has no finite value for some frames (stored NULL), else nil:
    /// which metric, how many frames, the first display indices, and why (libvmaf's null and xpsnr's `inf` stand for
    /// a picture identical to its source, as in a lossless encode), e.g. "--metrics: psnr_hvs has no finite value for
    /// 12 of 12 frames (display 0, 1, ...)...". Pooled values are over the frames that have one. The ``unscored``
    /// frames are not counted here: they have no value for another reason (nothing decoded yet), said by
    /// ``LibVMAF/unscoredWarning(_:)``.
    public func missingWarning() -> String? {
        var parts: [String] = []
        let skipped = Set(unscored)
        for m in metrics {
            let missing = frames.indices.filter { frames[$0][m] == nil && !skipped.contains($0) }
            guard !missing.isEmpty else { continue }
            let shown = missing.prefix(8).map(String.init).joined(separator: ", ") + (missing.count > 8 ? ", ..." : "")
            parts.append("\(m.column) has no finite value for \(missing.count) of \(frames.count - skipped.count) \(skipped.isEmpty ? "" : "scored ")frames (display \(shown))")
        }
        guard !parts.isEmpty else { return nil }
        return "--metrics: " + parts.joined(separator: "; ")
            + ": libvmaf writes null, and the xpsnr filter inf, for a picture identical to its source (a lossless encode); stored NULL, pooled over the other frames"
    }

    /// The pooled values of `metric` over the frames that have one, nil when none has.
    public func pool(_ metric: QualityMetric) -> QualityPool? {
        let values = frames.compactMap { $0[metric] }
        return values.isEmpty ? nil : QualityPool(values)
    }
}

/// Scores paired pictures with libvmaf (and FFmpeg's xpsnr filter) in the ffmpeg ``VMAFFFmpeg`` found.
enum LibVMAF {
    /// The filter graph: input 0 is the stream of stacked pairs (``PairedPictures``), each frame cropped into the
    /// decoded picture (its top `height` rows), libvmaf's `main` (distorted), and the source picture (the rows below),
    /// its `reference`. Both come from the same frame, so framesync pairs them one to one; `shortest=1` stays, ending
    /// at the shorter side. The logs go to fixed names in the working directory (nothing a user wrote enters the graph).
    static func filterGraph(_ metrics: [QualityMetric], threads: Int, width: Int, height: Int) -> (graph: String, outputs: [String]) {
        let libvmaf = metrics.contains { $0.libvmafKey != nil }
        let xpsnr = metrics.contains(.xpsnr)
        var options = ["log_fmt=json", "log_path=vmaf.json", "n_threads=\(max(1, threads))", "shortest=1"]
        let features = metrics.compactMap(\.feature)
        if !features.isEmpty { options.append("feature=" + features.map { "name=\($0)" }.joined(separator: "|")) }
        // Each model with its name, so the JSON's keys are the lab's columns (vmaf, vmaf_neg, vmaf_4k); the colon
        // inside an option value is escaped for the filter's option parser, then again for the graph's.
        let models = metrics.compactMap { m in m.model.map { "version=\($0)\\\\:name=\(m.column)" } }
        if !models.isEmpty { options.append("model=" + models.joined(separator: "|")) }
        let vmafFilter = "libvmaf=" + options.joined(separator: ":")
        let xpsnrFilter = "xpsnr=stats_file=xpsnr.log:shortest=1"
        let split = "[0:v]split[top][bottom];[top]crop=\(width):\(height):0:0"
        let source = "[bottom]crop=\(width):\(height):0:\(height)"
        switch (libvmaf, xpsnr) {
        case (true, true):
            return ("\(split),split[d0][d1];\(source),split[s0][s1];[d0][s0]\(vmafFilter)[q0];[d1][s1]\(xpsnrFilter)[q1]", ["[q0]", "[q1]"])
        case (true, false):
            return ("\(split)[d];\(source)[s];[d][s]\(vmafFilter)[q0]", ["[q0]"])
        default:
            return ("\(split)[d];\(source)[s];[d][s]\(xpsnrFilter)[q0]", ["[q0]"])
        }
    }

    /// Ends the stream of `pairs`, waits for libvmaf to score it, and checks that every displayed frame was scored.
    /// - Parameters:
    ///   - displayedFrames: the run's displayed frames: libvmaf's log must hold exactly this many.
    /// - Throws: `.data` (65) naming both counts when the log holds another number of frames, and naming the frame,
    ///   the metric and the value for a value that is not a number or is outside the metric's range
    ///   (``QualityMetric/validRange``) or a frame number repeated or missing; `.software` when ffmpeg fails, writes
    ///   no log or one that cannot be read (said apart), or its log lacks a requested metric for a frame;
    ///   `.interrupted` after SIGINT/SIGTERM.
    static func score(_ pairs: PairedPictures, displayedFrames: Int) throws -> QualityScores {
        let metrics = pairs.metrics
        let result = pairs.finish()
        try Interruption.check()
        guard result.status == 0 else {
            throw LabError.software("\(pairs.scorerName) failed (\(result.ending)) scoring the \(pairs.count) pairs it was sent (\(pairs.folder)): \(result.stderr)")
        }
        let counts = "\(pairs.count) pairs written"
        var frames = [[QualityMetric: Double]](repeating: [:], count: displayedFrames)
        var version: String?
        let vmafMetrics = metrics.filter { $0.libvmafKey != nil }
        if !vmafMetrics.isEmpty {
            let parsed: (version: String?, frames: [[String: Double]])?
            do { parsed = try parseJSONLog(path: "\(pairs.folder)/vmaf.json") } catch let e as LabError where e.kind == .software {
                // Written but not readable: said so, not taken for a missing log. The folder is removed on the way out.
                throw LabError.software("\(pairs.scorerName) ended (\(result.ending)) and wrote libvmaf's JSON log (vmaf.json), but \(e.message); the end of its stderr: \(result.stderr)")
            }
            guard let log = parsed else {
                // The folder is removed on the way out: the ffmpeg, how it ended and its words, not the path.
                throw LabError.software("\(pairs.scorerName) ended (\(result.ending)) without writing libvmaf's JSON log of frames; the end of its stderr: \(result.stderr); --metrics needs an ffmpeg with libvmaf")
            }
            version = log.version
            guard log.frames.count == displayedFrames else {
                throw LabError.data("libvmaf scored \(log.frames.count) frames, the run displayed \(displayedFrames) (\(counts)): the pairs do not line up, nothing scored")
            }
            for (k, values) in log.frames.enumerated() {
                for m in vmafMetrics {
                    guard let v = values[m.libvmafKey!] else {
                        throw LabError.software("libvmaf's log \(pairs.folder)/vmaf.json has no \(m.libvmafKey!) for frame \(k) (asked for \(m.rawValue))")
                    }
                    // NaN stands for libvmaf's null (no finite value): stored NULL.
                    if v.isNaN { continue }
                    guard m.validRange.contains(v) else {
                        throw LabError.data("libvmaf's log: frame \(k) has \(m.column) \(v), outside \(rangeText(m)): not a score libvmaf gives, nothing stored")
                    }
                    frames[k][m] = v
                }
            }
        }
        if metrics.contains(.xpsnr) {
            let read: [Double]?
            do { read = try parseXPSNR(path: "\(pairs.folder)/xpsnr.log") } catch let e as LabError where e.kind == .software {
                throw LabError.software("\(pairs.scorerName) ended (\(result.ending)) and wrote the xpsnr filter's stats file (xpsnr.log), but \(e.message); the end of its stderr: \(result.stderr)")
            }
            guard let values = read else {
                throw LabError.software("\(pairs.scorerName) ended (\(result.ending)) without writing the xpsnr filter's stats file; the end of its stderr: \(result.stderr)")
            }
            guard values.count == displayedFrames else {
                throw LabError.data("the xpsnr filter scored \(values.count) frames, the run displayed \(displayedFrames) (\(counts)): the pairs do not line up, nothing scored")
            }
            for (k, v) in values.enumerated() where v.isFinite { frames[k][.xpsnr] = v }
        }
        return QualityScores(metrics: metrics, frames: frames, libvmafVersion: version)
    }

    /// Scores every input picture of a run: the pairs hold one per input picture in input order (a coded picture
    /// against its source, a dropped one as the held previous picture against its source), except `unscored`, the
    /// dropped pictures before any decoded one (nothing shown in their place), which come first in input order and
    /// get a row with no values.
    /// - Throws: `.data` (65) naming both counts when the scores do not cover exactly `inputs` pictures; as ``score(_:displayedFrames:)``.
    static func scoreInputs(_ pairs: PairedPictures, inputs: Int, unscored: [Int]) throws -> QualityScores {
        guard unscored == Array(0..<unscored.count) else {
            throw LabError.data("--metrics: dropped pictures \(unscored) have no decoded picture before them, yet are not the first inputs: the pairs do not line up, nothing scored")
        }
        var scores = try score(pairs, displayedFrames: inputs - unscored.count)
        scores.frames.insert(contentsOf: repeatElement([:], count: unscored.count), at: 0)
        scores.unscored = unscored
        guard scores.frames.count == inputs else {
            throw LabError.data("--metrics: \(scores.frames.count) pictures scored, the run has \(inputs) input pictures: nothing scored")
        }
        return scores
    }

    /// The warning for dropped pictures before any decoded picture (input indexes `unscored`), nil for none.
    static func unscoredWarning(_ unscored: [Int]) -> String? {
        guard !unscored.isEmpty else { return nil }
        return "--metrics: input pictures \(unscored.map(String.init).joined(separator: ", ")) were dropped by the encoder before any picture was decoded (nothing is shown in their place): not scored, their frame_quality_metrics rows are NULL"
    }

    /// The range of `metric` as the refusal of a value outside it says it.
    static func rangeText(_ metric: QualityMetric) -> String {
        switch metric {
        case .vmaf, .vmafNeg, .vmaf4k: "0-100 (libvmaf clips its models' scores to score_clip 0-100)"
        case .ssim, .msSSIM: "-1 to 1"
        case .ciede2000: "0 and above (libvmaf's 45 - 20 log10 of the mean CIEDE2000)"
        case .psnrHVS, .xpsnr: "the finite numbers"
        }
    }

    /// The most of a scorer's log the lab reads (libvmaf's JSON log, the xpsnr stats file), 256 MiB: a larger file is
    /// refused, not read whole.
    static let logCap = 256 << 20

    /// The bytes of a log the scorer wrote in its folder, nil when there is none.
    /// - Throws: `.software` with the reason (beginning "it is"/"it cannot") for a symlink (not followed), a file
    ///   that is not a regular file (a FIFO: not opened for reading to wait on), one over ``logCap``, one that cannot
    ///   be read.
    static func readLog(_ path: String) throws -> Data? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw LabError.software("it is a symbolic link, not followed") }
            throw LabError.software("it cannot be opened: \(String(cString: strerror(code)))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            throw LabError.software("it is not a regular file (a FIFO, a folder or a device), not read")
        }
        let over = "it is over \(logCap >> 20) MiB, the most the lab reads of a scorer's log, not read"
        guard st.st_size <= logCap else { throw LabError.software(over) }
        let data: Data
        do { data = try handle.read(upToCount: logCap + 1) ?? Data() } catch {
            throw LabError.software("it cannot be read: \(error.localizedDescription)")
        }
        // Grown since fstat (a child of the scorer still writing): read no further.
        guard data.count <= logCap else { throw LabError.software(over) }
        return data
    }

    /// A logged value as a message shows it: a number, true/false, a string quoted (control characters as ?,
    /// 40 characters at most), or the kind of a list or object.
    static func shown(_ value: Any) -> String {
        if let n = value as? NSNumber { return String(cString: n.objCType) == "c" ? (n.boolValue ? "true" : "false") : "\(n.doubleValue)" }
        if let text = value as? String {
            let clean = String(String.UnicodeScalarView(text.unicodeScalars.prefix(40).map {
                $0.value < 0x20 || (0x7f...0x9f).contains($0.value) ? "?" : $0
            }))
            return "\"\(clean)\"" + (text.unicodeScalars.count > 40 ? "..." : "")
        }
        if value is [Any] { return "a list" }
        if value is [String: Any] { return "an object" }
        return "a value of another kind"
    }

    /// libvmaf's JSON log: its `version`, and each frame's metrics in `frameNum` order (NaN standing for libvmaf's
    /// null, a value that is not finite); nil when there is no log.
    /// - Throws: `.software` (the reason) when the log cannot be read (``readLog(_:)``) or is not JSON with a frames
    ///   list; `.data` (65) naming the frame, the key and the value for a value that is not a finite number (true, a
    ///   string), or a frame number that is not one, repeated, or missing from 0 up.
    static func parseJSONLog(path: String) throws -> (version: String?, frames: [[String: Double]])? {
        guard let data = try readLog(path) else { return nil }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LabError.software("it is not JSON the lab can read (\(data.count) bytes)")
        }
        guard let list = root["frames"] as? [[String: Any]] else {
            throw LabError.software("it has no frames list")
        }
        var frames: [(Int, [String: Double])] = []
        for (k, entry) in list.enumerated() {
            var number = k
            if let given = entry["frameNum"] {
                guard let n = given as? NSNumber, String(cString: n.objCType) != "c", n.doubleValue >= 0,
                      n.doubleValue == n.doubleValue.rounded(), n.doubleValue < 1e15 else {
                    throw LabError.data("libvmaf's log: entry \(k) of its frames has frameNum \(shown(given)), not a frame number: nothing stored")
                }
                number = n.intValue
            }
            var values: [String: Double] = [:]
            for (key, value) in entry["metrics"] as? [String: Any] ?? [:] {
                // libvmaf writes null for a value that is not finite (CIEDE2000 of identical pictures): present, stored NULL.
                if value is NSNull { values[key] = .nan; continue }
                guard let n = value as? NSNumber, String(cString: n.objCType) != "c" else {
                    throw LabError.data("libvmaf's log: frame \(number) has \(key) \(shown(value)), not a number: nothing stored")
                }
                guard n.doubleValue.isFinite else {
                    throw LabError.data("libvmaf's log: frame \(number) has \(key) \(n.doubleValue), not a finite number: nothing stored")
                }
                values[key] = n.doubleValue
            }
            frames.append((number, values))
        }
        frames.sort { $0.0 < $1.0 }
        try checkNumbering(frames.map(\.0), from: 0, log: "libvmaf's log")
        return (root["version"] as? String, frames.map(\.1))
    }

    /// Refuses frame numbers (sorted) that are not `from`, `from` + 1, ... each once.
    /// - Throws: `.data` naming the frame logged twice or the first missing.
    static func checkNumbering(_ sorted: [Int], from first: Int, log: String) throws {
        for (i, n) in sorted.enumerated() {
            if i > 0 && n == sorted[i - 1] {
                throw LabError.data("\(log): frame \(n) is logged twice (\(sorted.count) frames logged): nothing stored")
            }
            if n != first + i {
                throw LabError.data("\(log): frame \(first + i) is missing (\(sorted.count) frames logged, numbered from \(first)): nothing stored")
            }
        }
    }

    /// The xpsnr filter's stats file: per frame a line `n:    1  XPSNR y: 36.6779  XPSNR u: 38.5837  XPSNR v: 38.1923`
    /// (frames counted from 1); the lab keeps the luma value, `XPSNR y` (`inf` for a picture identical to its
    /// source: no finite value, stored NULL); nil when there is no file.
    /// - Throws: `.software` when the file cannot be read (``readLog(_:)``) or a frame line does not read; `.data`
    ///   (65) for a value that is not a number or is NaN, -inf or a finite number's overflow, or a frame number
    ///   repeated or missing from 1 up.
    static func parseXPSNR(path: String) throws -> [Double]? {
        guard let data = try readLog(path) else { return nil }
        var values: [(Int, Double)] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("n:") {
            let words = line.split(separator: " ")
            guard words.count >= 2, let n = Int(words[1]), let y = words.firstIndex(of: "y:"), y + 1 < words.count else {
                throw LabError.software("a line the lab cannot read: \(shown(String(line)))")
            }
            let word = words[y + 1]
            guard let value = Double(word), !value.isNaN, value.isFinite || word == "inf" else {
                throw LabError.data("the xpsnr filter's stats: frame \(n) has xpsnr \(shown(String(word))), not a number of dB: nothing stored")
            }
            values.append((n, value))
        }
        values.sort { $0.0 < $1.0 }
        try checkNumbering(values.map(\.0), from: 1, log: "the xpsnr filter's stats")
        return values.map(\.1)
    }
}
