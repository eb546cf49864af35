import Foundation
import H264

/// `enclab measure --db FILE [--run ID ...] --metrics LIST`: the perceptual quality of runs already stored, from
/// each run's stream and its clip (nothing encoded again). The stream is decoded by libavcodec in the process, as the
/// verify stage decodes it (``H264StreamDecoder``), each decoded picture paired with the source picture of its
/// display index (the clip read from the run's `--seek` on), each picture the encoder dropped (`skipped_frames`) as
/// the previous decoded picture against its source (as `encode --metrics` scores it), then scored by libvmaf (``LibVMAF``) and recorded in
/// one transaction per run (``LabStore/recordQuality(runID:_:)``). A run recorded with `--verify none` is decoded
/// here all the same.
public enum Measure {
    /// Measures the runs `selectors` name (every done run when empty), in order; `measured` is called after each
    /// run's commit with its id and its scores.
    /// - Throws: `.usage` for a bad selector or MS-SSIM on pictures under 176 px; `.noInput` for a missing database,
    ///   run, stream or clip; `.data` for a run that is not done, a clip whose digest is not the run's, a stream
    ///   of another size than the run's `bytes`, a stream with another number of pictures than the run's frames, libvmaf scoring another count; `.software` for
    ///   ffmpeg's failures. The runs measured before stay measured.
    ///
    /// A check run (a stream stored by `enclab check --db`, ``CheckRuns``) has no source clip, only the stream
    /// itself: it is never scored. With no selector the check runs are left out and `skipped` is called once with
    /// their ids (none: not called); a `--run` naming one is refused with `.data` before any run is scored.
    public static func run(databasePath: String, runs selectors: [String], request: QualityRequest,
                           skipped: ([Int64]) -> Void = { _ in },
                           measured: (Int64, QualityScores) -> Void = { _, _ in }) throws {
        let (store, selected) = try LabStore.openDoneRuns(databasePath: databasePath, selectors: selectors, notDone: "no stream to measure")
        let checks = selected.filter(isCheck)
        if !selectors.isEmpty, let check = checks.first {
            throw LabError.data("\(databasePath): run \(check.runID) is a check run (enclab check --db of \(check.clip)): it has no source clip to score against")
        }
        if !checks.isEmpty { skipped(checks.map(\.runID)) }
        let chosen = selected.filter { !isCheck($0) }
        // Every run's size checked before any is scored.
        for run in chosen {
            try QualityMetric.check(request.metrics, width: run.width ?? 0, height: run.height ?? 0, clip: "\(databasePath): run \(run.runID) (\(run.clip))")
        }
        let bar = Progress(label: "measure", total: chosen.count, unit: "runs")
        defer { bar.finish() }
        for run in chosen {
            try Interruption.check()
            let scores = try score(run, store: store, databasePath: databasePath, request: request)
            try store.recordQuality(runID: run.runID, scores)
            measured(run.runID, scores)
            bar.advance(detail: "run \(run.runID)")
        }
    }

    /// Whether a stored run is a check run: experiment `check` (``CheckRuns/experiment``) and no run key, as the
    /// report tells them apart.
    static func isCheck(_ run: LabStore.RunRow) -> Bool { run.experiment == CheckRuns.experiment && run.runKey == nil }

    /// The run's `--seek` from its stored settings (`seek`, null or absent: 0).
    static func seek(_ settingsJSON: String) -> Int {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(settingsJSON.utf8))) as? [String: Any],
              let n = object["seek"] as? NSNumber, String(cString: n.objCType) != "c" else { return 0 }
        return max(0, n.intValue)
    }

    /// Decodes one stored run's stream against its clip and scores the pairs.
    static func score(_ run: LabStore.RunRow, store: LabStore, databasePath: String, request: QualityRequest) throws -> QualityScores {
        let what = "\(databasePath): run \(run.runID)"
        guard let streamPath = run.streamPath, let frames = run.frames, frames > 0, let width = run.width, let height = run.height else {
            throw LabError.data("\(what) has no stream path, frame count or picture size")
        }
        guard let bytes = FileManager.default.contents(atPath: streamPath) else {
            throw LabError.noInput("\(streamPath): the stream of \(what) cannot be read (measure runs from the folder the runs were made in)")
        }
        // The store holds the stream's size (`runs.bytes`, the sum of its frames' sizes), not a digest of it: a file of
        // another size is not the run's stream (overwritten, or another run's), and is not scored.
        if let stored = run.bytes, bytes.count != stored {
            throw LabError.data("\(streamPath): \(bytes.count) bytes, the stream of \(what) had \(stored) (runs.bytes): not the run's stream, nothing measured")
        }
        guard FileManager.default.fileExists(atPath: run.clip) else {
            throw LabError.noInput("\(run.clip): the clip of \(what) is missing")
        }
        if let digest = run.clipSHA256 {
            let identity = try ClipIdentity.identify(run.clip, cache: store)
            guard identity.sha256 == digest else {
                throw LabError.data("\(run.clip): its SHA-256 is \(identity.sha256), \(what) encoded \(digest): not the clip the run encoded")
            }
        }
        let units: [AccessUnit]
        do {
            units = try AccessUnit.split(try AnnexB.split(Array(bytes)).map(\.nal))
        } catch {
            throw LabError.data("\(streamPath): not an H.264 stream the lab can split (\(error))")
        }
        guard units.count == frames else {
            throw LabError.data("\(streamPath): \(units.count) access units, \(what) has \(frames) frames")
        }
        let clip = try Clip(path: run.clip)
        guard clip.info.width == width, clip.info.height == height else {
            throw LabError.data("\(run.clip): \(clip.info.width)x\(clip.info.height), \(what) encoded \(width)x\(height)")
        }
        // The pictures the encoder dropped (OpenH264's frame skip): each scored as the previous decoded picture against
        // its source, as the encode scored it.
        let dropped = try store.skippedInputIndexes(run: run.runID)
        let inputs = frames + dropped.count
        if let bad = dropped.first(where: { $0 < 0 || $0 >= inputs }) {
            throw LabError.data("\(what): skipped_frames holds input index \(bad), the run has \(inputs) input pictures")
        }
        let droppedSet = Set(dropped)
        let pairs = try PairedPictures(inside: Paths.parent(streamPath), width: width, height: height,
                                       metrics: request.metrics, ffmpeg: request.ffmpeg, threads: ProcessInfo.processInfo.activeProcessorCount)
        defer { pairs.remove() }
        let decoder = try H264StreamDecoder(width: width, height: height, name: streamPath)
        decoder.pairs = pairs
        decoder.measuresSkipped = !dropped.isEmpty
        func decode(_ unit: AccessUnit) throws {
            var au: [UInt8] = []
            for nal in unit.nalUnits { au += [0, 0, 0, 1] + nal.bytes }
            try decoder.decode(au)
        }
        // Source picture k is handed over before the access unit of the k-th coded picture (decode order): a picture
        // of display index d is output only after d + 1 access units, so its source picture is always there; a
        // dropped input is handed over in its place among them, with no access unit.
        var next: Picture? = try Pipeline.firstPicture(clip, seek: seek(run.settingsJSON))
        var handed = 0, decoded = 0
        while let picture = next {
            try Interruption.check()
            let k = handed
            handed += 1
            next = handed < inputs ? try clip.next() : nil
            if droppedSet.contains(k) {
                decoder.skipped(picture, inputIndex: k)
                continue
            }
            decoder.source(picture)
            if decoded < units.count {
                try decode(units[decoded])
                decoded += 1
            }
        }
        while decoded < units.count {
            try decode(units[decoded])
            decoded += 1
        }
        guard handed == inputs else {
            throw LabError.data("\(run.clip): \(handed) pictures from frame \(seek(run.settingsJSON)) on, \(what) has \(inputs) input pictures (\(frames) coded, \(dropped.count) dropped)")
        }
        _ = try decoder.finish()
        let unscored = decoder.skippedErrors.filter { $0.errors == nil }.map(\.inputIndex)
        if let w = LibVMAF.unscoredWarning(unscored) { FileHandle.standardError.write(Data("warning: \(what): \(w)\n".utf8)) }
        return try LibVMAF.scoreInputs(pairs, inputs: inputs, unscored: unscored)
    }
}
