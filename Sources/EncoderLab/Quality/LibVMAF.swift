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
    /// - Throws: `.data` (65) naming both counts when the log holds another number of frames; `.software` when ffmpeg
    ///   fails or its log lacks a requested metric for a frame; `.interrupted` after SIGINT/SIGTERM.
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
            let log: (version: String?, frames: [[String: Double]])
            do { log = try parseJSONLog(path: "\(pairs.folder)/vmaf.json") } catch {
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
                    if v.isFinite { frames[k][m] = v }
                }
            }
        }
        if metrics.contains(.xpsnr) {
            let values = try parseXPSNR(path: "\(pairs.folder)/xpsnr.log")
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

    /// libvmaf's JSON log: its `version`, and each frame's metrics in `frameNum` order.
    /// - Throws: `.software` when the file is missing or not libvmaf's JSON.
    static func parseJSONLog(path: String) throws -> (version: String?, frames: [[String: Double]]) {
        guard let data = FileManager.default.contents(atPath: path),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = root["frames"] as? [[String: Any]] else {
            throw LabError.software("\(path): libvmaf wrote no JSON log with a frames list")
        }
        var frames: [(Int, [String: Double])] = []
        for (k, entry) in list.enumerated() {
            let number = (entry["frameNum"] as? NSNumber)?.intValue ?? k
            var values: [String: Double] = [:]
            for (key, value) in entry["metrics"] as? [String: Any] ?? [:] {
                // libvmaf writes null for a value that is not finite (CIEDE2000 of identical pictures): present, stored NULL.
                if let n = value as? NSNumber { values[key] = n.doubleValue } else if value is NSNull { values[key] = .infinity }
            }
            frames.append((number, values))
        }
        return (root["version"] as? String, frames.sorted { $0.0 < $1.0 }.map(\.1))
    }

    /// The xpsnr filter's stats file: per frame a line `n:    1  XPSNR y: 36.6779  XPSNR u: 38.5837  XPSNR v: 38.1923`
    /// (frames counted from 1); the lab keeps the luma value, `XPSNR y`.
    /// - Throws: `.software` when the file is missing or a frame line does not read.
    static func parseXPSNR(path: String) throws -> [Double] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LabError.software("\(path): the xpsnr filter wrote no stats file")
        }
        var values: [(Int, Double)] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("n:") {
            let words = line.split(separator: " ")
            guard words.count >= 2, let n = Int(words[1]), let y = words.firstIndex(of: "y:"), y + 1 < words.count,
                  let value = Double(words[y + 1]) else {
                throw LabError.software("\(path): a line the lab cannot read: \(line)")
            }
            values.append((n, value))
        }
        return values.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
