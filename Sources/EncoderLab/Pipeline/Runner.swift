import Foundation
import H264

/// What one run produced, as the command line prints it.
public struct RunOutcome: Sendable {
    public var runID: Int64
    /// The run key (nil only for runs migrated from a database of the previous version).
    public var runKey: String?
    public var clip: String
    public var label: String
    /// The grid label, or for a run without one (`enclab encode`) its x264 CLI equivalent.
    public var settingsText: String
    public var frames: Int
    public var bytes: Int
    /// bytes * 8 / duration / 1000.
    public var kbps: Double
    /// Mean of the per-frame `frames.psnr_avg` (the lab's, from its own decode; NULLs left out), nil without any.
    public var meanPSNR: Double?
    public var streamPath: String
    public var warnings: [String]
    /// True when the run was not encoded because a done run of its key was already in the database.
    public var alreadyDone: Bool = false
    /// Whether the run's encode writes the same bytes every time (`runs.repeatable`, ``Repeatability``); nil when
    /// not known (a run of an older enclab without x264's options stored).
    public var repeatable: Bool? = nil
    /// The done runs of this key in the database (repeats of a run that is not repeatable, from `enclab merge`); 1
    /// for a run that has none.
    public var repeats: Int = 1
}

/// The name the command line and the tests know the runner by.

/// The lab's runner: it checks runs (``check(_:experiment:)``), skips those whose key is already done, executes the
/// rest (``Pipeline/execute(_:in:matroska:quality:warn:)``) in a temporary folder, has the store's one writer record each
/// result in one transaction and move its folder into place (``RunWriter``), then draws its plots from the store.
/// It settles the temporary folders killed processes left (``settleTemporaryFolders()``).
public final class Runner {
    public let store: LabStore
    /// Folder for run outputs (`<first 16 hex digits of the run key>/stream.264` and its plots).
    public let outDirectory: String
    /// `--force`: encode runs whose key is already done again, replacing the stored run and its folder.
    public let force: Bool
    /// `--mkv`: each run also writes `stream.mkv`, its stream in Matroska with the recorded PTS
    /// (``Matroska/write(stream:ptsMicroseconds:to:knownFrames:)``); mkvmerge (Debian's mkvtoolnix) must be installed.
    public var matroska = false
    /// `--metrics`: each run's frames scored by libvmaf (``Pipeline/execute(_:in:matroska:quality:warn:)``); never part of a run key.
    public var quality: QualityRequest?
    /// When the per-run plots (`frames`, `psnr`) are drawn.
    public enum PlotMode: String, Sendable {
        /// The data file and the two scripts (`frames.dat`, `frames.gp`, `psnr.gp`) with each run, no pictures: no
        /// gnuplot on the run's path (`enclab encode` and `enclab run` by default). The pictures are drawn where they
        /// are looked at: `enclab plot --db` from the store, `enclab report` its own charts.
        case scripts
        /// After each run is recorded and its folder moved into place, both plots by one gnuplot process
        /// (`enclab encode --plots render`).
        case eachRun = "each-run"
        /// The data files and scripts with each run; the drawing once the experiment's runs are done, all in one
        /// gnuplot process (``PlotQueue``), into the runs' final folders (`enclab run --plots render`). A sweep stopped before
        /// then leaves runs whose folders have `frames.gp` but no pictures: `enclab plot --db` draws them.
        case batched
        /// No per-run plots at all (`--no-plots`: speed studies); `enclab plot --db` draws them later.
        case none
    }
    /// When the per-run plots are drawn (``PlotMode``); `.scripts` unless the command says otherwise.
    public var plotMode: PlotMode = .scripts
    /// The plots of recorded runs waiting to be drawn (`.batched`).
    public let plotQueue = PlotQueue()
    /// Where warnings are reported as they happen (stderr for the CLI).
    public var warn: (String) -> Void = { FileHandle.standardError.write(Data("warning: \($0)\n".utf8)) }
    /// The experiment file's `report` object while ``run(_:checked:jobs:progress:)`` runs its runs: stored in each
    /// recorded run's settings as `report` (``Experiment/Report/stored(in:)``), never in its key.
    var report: Experiment.Report?
    /// Clip digests already known to this process, by path.
    private var identities: [String: ClipIdentity] = [:]

    /// Opens the output folder and the database, in that order, after checking that the outside programs every
    /// run needs are there (nothing is created when one is missing); then settles what killed processes left in
    /// the output folder (see ``settleTemporaryFolders()``).
    /// - Throws: `.software` when ffmpeg is missing; `.cantCreate` (73) when the output folder cannot
    ///   be created or written; the store's errors for the database (65, 73, 75).
    public init(databasePath: String, outDirectory: String, force: Bool = false) throws {
        try LabStore.checkPath(databasePath)
        // gnuplot is the commands' to require, by their plot mode (``requireTools(gnuplot:)``): scripts need none.
        try Self.requireTools(gnuplot: false)
        var made: [String] = []
        var info = stat()
        let databaseIsNew = lstat(databasePath, &info) != 0 && errno == ENOENT
        do {
            try OutputFiles.makeDirectory(outDirectory, made: &made)
            try OutputFiles.checkWritable(outDirectory)
            store = try LabStore(path: databasePath)
        } catch {
            // A refused database or folder leaves nothing behind: not the folders made for it, nor a new file.
            if databaseIsNew { Self.removeDatabaseFiles(databasePath) }
            OutputFiles.removeEmptyFolders(made)
            throw error
        }
        self.outDirectory = outDirectory
        self.force = force
        madeFolders = made
        madeDatabase = databaseIsNew
        try settleTemporaryFolders()
    }

    /// The output folders this runner created (outermost first) and whether it created the database file: what
    /// ``discardIfUnused()`` may remove.
    private let madeFolders: [String]
    private let madeDatabase: Bool

    /// After a command failed: removes the database file when this runner created it and it holds no run (with its
    /// `-wal`, `-shm` and `-journal` files), and the output folders it created that are still empty. A refused run
    /// (settings, a clip, a folder of another database) thus leaves neither a database without runs nor empty
    /// folders; a run recorded (done or failed) keeps both.
    public func discardIfUnused() {
        if madeDatabase, let runs = try? store.runCount(), runs == 0 {
            Self.removeDatabaseFiles(store.database.path)
        }
        OutputFiles.removeEmptyFolders(madeFolders)
    }

    /// Unlinks a database file this process created, and SQLite's files beside it; a file that is not a regular
    /// file (a device) is never unlinked.
    private static func removeDatabaseFiles(_ path: String) {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            var info = stat()
            if lstat(file, &info) == 0 && info.st_mode & S_IFMT == S_IFREG { unlink(file) }
        }
    }

    /// The outside programs the runs need: ffmpeg (the input decode and every run's verification) and, when
    /// `gnuplot` (pictures drawn during the command), gnuplot; looked up on PATH before anything is recorded.
    /// - Throws: `.software` naming the program and its Debian package.
    public static func requireTools(gnuplot: Bool = true) throws {
        _ = try Tools.require("ffmpeg", package: "ffmpeg")
        if gnuplot { _ = try Tools.require("gnuplot", package: "gnuplot-nox") }
    }

    /// The program `--mkv` needs: mkvmerge, looked up on PATH before anything is recorded.
    /// - Throws: `.software` naming it and its Debian package, mkvtoolnix.
    public static func requireMatroska() throws {
        _ = try Tools.require("mkvmerge", package: "mkvtoolnix")
    }

    /// Checks runs before anything is written: each clip opened and read to its first frame after `--seek` (once
    /// per clip and seek), each run's settings resolved and opened by x264.
    /// - Throws: the first problem found, naming the clip or setting; `.interrupted` at once after SIGINT/SIGTERM.
    public static func check(_ runs: [Experiment.Run], experiment: String) throws -> [CheckedRun] {
        var inputs: [String: EncoderInput] = [:]
        var decodedByFFmpeg: [String: Bool] = [:]
        /// Frames in the clip: the y4m size's count, or ffprobe's packets for a clip decoded by ffmpeg.
        var frameCounts: [String: Int] = [:]
        var firstFrames: Set<String> = []
        var checked: [CheckedRun] = []
        for run in runs {
            try Interruption.check()
            // The clip first (a missing file is named before any setting), then the settings, resolved once.
            let seek = run.settings.seek ?? 0
            var input: EncoderInput
            if let known = inputs[run.clip], firstFrames.contains("\(seek) \(run.clip)") {
                input = known
            } else {
                let clip = try Clip(path: run.clip)
                try Pipeline.checkSupported(clip)
                input = try Pipeline.encoderInput(clip)
                _ = try Pipeline.firstPicture(clip, seek: seek)
                let ffmpeg = clip.info.ffmpegVersion != nil
                decodedByFFmpeg[run.clip] = ffmpeg
                if ffmpeg {
                    let packets = try SourceTimes.packets(path: run.clip)
                    frameCounts[run.clip] = packets.ticks.count
                    input.timingWarning = SourceTimes.constantRateWarning(
                        path: run.clip, microseconds: try packets.microseconds(path: run.clip),
                        nominalRate: try Rational(Int64(input.fpsNum), Int64(input.fpsDen)))
                } else if let hint = clip.info.frameCountHint {
                    frameCounts[run.clip] = hint
                }
                inputs[run.clip] = input
                firstFrames.insert("\(seek) \(run.clip)")
            }
            let t = run.settings.timestamps
            if !t.isDefault {
                // The file's own times replace the nominal rate: no warning about it then.
                if t.fromFile || t.tcfile != nil || t.schedule != nil { input.timingWarning = nil }
                let available = frameCounts[run.clip].map { max(0, $0 - seek) }
                let count = available.map { a in run.settings.frames.map { min($0, a) } ?? a }
                do {
                    input.timestamps = try TimestampPlan.make(t, fpsNum: input.fpsNum, fpsDen: input.fpsDen, clipPath: run.clip,
                                                                  decodedByFFmpeg: decodedByFFmpeg[run.clip] ?? false,
                                                                  seek: seek, frames: run.settings.frames, frameCount: count)
                } catch let e as LabError where !run.label.isEmpty {
                    throw LabError(e.kind, "run '\(run.label)': \(e.message)")
                }
            }
            // DataRateLimits become one x264 VBV for the clip's frame rate (``DataRateLimits/vbv(frameRate:vtCompat:)``).
            let rate = try Rational(Int64(input.fpsNum), Int64(input.fpsDen))
            let settings: EncodeSettings
            do {
                let timing = try KeyframeForcing.timing(plan: input.timestamps, nominalRate: rate)
                settings = try run.settings.resolved(dataRateLimitsVBV: { text, compat in
                    guard let v = try DataRateLimits(parsing: text).vbv(frameRate: rate, vtCompat: compat) else { return nil }
                    return VTDataRateVBV(maxrateKbps: v.maxrateKbps, bufsizeKbit: v.bufsizeKbit, targetKbps: DataRateLimits.abrTargetKbps(for: v))
                }, keyframeTiming: timing)
            } catch let e as LabError where !run.label.isEmpty {
                throw LabError(e.kind, "run '\(run.label)': \(e.message)")
            }
            // DataRateLimits are checked after the encode (``DataRateLimits/given(in:)``): refused here when they do not parse.
            _ = try DataRateLimits.given(in: settings)
            let session: any VideoEncoder
            do { session = try makeEncoder(settings, input: input) } catch let e as LabError where !run.label.isEmpty {
                throw LabError(e.kind, "run '\(run.label)': \(e.message)")
            }
            // The keyframe rule of the timestamps stage's keyframe-forcing step, kept by x264's keyint or by IDRs it forces.
            let keyframeRule = try KeyframeRule.forRun(settings.resolvedKeyframeRule, plan: input.timestamps, nominalRate: rate,
                                                       encoderKeyint: session.resolved.keyint, openGOP: session.resolved.openGop,
                                                       intraRefresh: session.resolved.intraRefresh, label: run.label)
            // The lab's mode must be the method x264 settled on (a value x264 reads differently, e.g. a crf it
            // took as 0, would otherwise record a cqp run under 'crf').
            if let mode = settings.rc, settings.encoder == .x264 {
                let expected: String
                switch mode {
                case .cqp: expected = "cqp"
                case .crf: expected = "crf"
                case .abr, .cbr: expected = "abr"
                case .vbr: expected = settings.value(of: "crf") != nil ? "crf" : "abr"
                }
                let method = session.resolved.rcMethod
                if method != expected || (mode != .cqp && method == "cqp") {
                    let prefix = run.label.isEmpty ? "" : "run '\(run.label)': "
                    throw LabError.usage("\(prefix)rc \(mode.rawValue) but x264 settled on rate-control method \(method) (settings: \(settings.x264Arguments.joined(separator: " ")))")
                }
            }
            checked.append(CheckedRun(experiment: experiment, label: run.label, axesJSON: run.axesJSON, clipPath: run.clip,
                                      settings: settings, input: input, resolved: session.resolved, keyframeRule: keyframeRule))
        }
        return checked
    }

    /// The prefix of a run's folder while it is being written: `.tmp-KEY-HOST-PID-RANDOM`.
    static let temporaryPrefix = ".tmp-"

    /// This host's name as it appears in temporary folder names (no `-`, which separates the name's parts).
    static var hostTag: String { ProcessInfo.processInfo.hostName.replacingOccurrences(of: "-", with: "_") }

    /// A temporary folder name for a run of `key` made by this process for this database:
    /// `.tmp-KEY-DATABASE-HOST-PID-RANDOM`, DATABASE the first 8 hex digits of the SHA-256 of the database's real path,
    /// so a start settles only its own database's folders.
    func temporaryName(key: String) -> String {
        "\(Self.temporaryPrefix)\(key)-\(databaseTag)-\(Self.hostTag)-\(getpid())-\(UUID().uuidString.prefix(8))"
    }

    /// The first 8 hex digits of the SHA-256 of the database file's real path.
    var databaseTag: String {
        String(SHA256.hex(of: Paths.real(store.database.path) ?? Paths.absolute(store.database.path)).prefix(8))
    }

    /// Settles the temporary run folders that processes of this host left behind for this database, once the
    /// process that made one (its database, host and id are in the name) is gone: a folder whose key is done in
    /// this database and whose final folder is missing is moved into place (the process died between the commit and
    /// the rename) and its plots drawn when they are missing; one whose key was replaced (`--force` killed after its
    /// commit: the row's bytes are the temporary stream's, not the final folder's) is exchanged with the final
    /// folder; any other is removed. Folders of live processes, of other hosts and of other databases are left alone.
    public func settleTemporaryFolders() throws {
        let host = Self.hostTag, database = databaseTag
        for name in (try? FileManager.default.contentsOfDirectory(atPath: outDirectory)) ?? [] where name.hasPrefix(Self.temporaryPrefix) {
            let parts = name.dropFirst(Self.temporaryPrefix.count).split(separator: "-", maxSplits: 4)
            guard parts.count == 5, parts[0].count == 64, parts[1] == database, parts[2] == host,
                  let pid = Int32(parts[3]), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = "\(outDirectory)/\(name)"
            let final = "\(outDirectory)/\(parts[0].prefix(16))"
            // Only folders are settled: a symbolic link (or anything else) named like one is never moved, followed or
            // written through.
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { continue }
            func streamBytes(_ folder: String) -> Int? {
                (try? FileManager.default.attributesOfItem(atPath: "\(folder)/stream.264")[.size] as? Int) ?? nil
            }
            guard let row = try store.doneRun(key: String(parts[0])) else {
                OutputFiles.removeTree(path)
                continue
            }
            if !FileManager.default.fileExists(atPath: final) {
                guard (try? OutputFiles.renameNoReplace(path, final)) == true else { continue }
            } else if streamBytes(path) == row.bytes && streamBytes(final) != row.bytes {
                guard (try? OutputFiles.exchange(path, final)) != nil else { continue }
                OutputFiles.removeTree(path)
            } else {
                OutputFiles.removeTree(path)
                continue
            }
            if !Plots.runPlotsComplete(final, pictures: plotMode != .scripts) {
                // (writeRunPlots refuses a final folder that is a symbolic link.)
                if let input = try? RunPlotInput(run: row, frames: try store.frames(run: row.runID), database: store.database.path) {
                    if plotMode == .scripts { _ = try? Plots.writeScriptAndData(input, dir: final) } else { try? Plots.writeRunPlots(input, dir: final) }
                }
            }
        }
    }

    /// Checks and runs one encode (as `enclab encode` does).
    public func run(experiment: String, clipPath: String, settings: EncodeSettings, label: String = "") throws -> RunOutcome {
        let checked = try Self.check([Experiment.Run(clip: clipPath, settings: settings, label: label)], experiment: experiment)
        return try run(checked[0])
    }

    /// Runs one checked run: its key from the clip's digest and the settings; the stored run when the key is done
    /// already (unless `force`); else the pipeline's stages in a temporary folder, one transaction recording the
    /// result, the folder moved to `OUT/<first 16 hex digits of the key>`, and the plots drawn from the store there.
    /// A run that fails in a stage is recorded `failed` with its error and no frames; output that cannot be
    /// written (73, 74), a locked database (75) or a folder that is another database's (64) records nothing.
    public func run(_ checked: CheckedRun) throws -> RunOutcome {
        switch try prepare(checked, spec: try spec(of: checked)) {
        case .done(let outcome):
            return outcome
        case .ready(let job):
            return try record(job, Self.execute(job.spec, in: job.temporary, matroska: matroska, quality: quality, warn: warn))
        }
    }

    /// The run spec of a checked run, its clip's digest computed once per clip and process (and cached in the store).
    func spec(of checked: CheckedRun) throws -> RunSpec {
        let identity = try identities[checked.clipPath] ?? ClipIdentity.identify(checked.clipPath, cache: store)
        identities[checked.clipPath] = identity
        return Pipeline.spec(checked, clip: identity)
    }

    /// A run whose stages can start: its temporary folder made, and what the writer needs to record it (``written``).
    struct PreparedRun {
        var checked: CheckedRun
        var spec: RunSpec
        /// The done run of its key already stored (replaced by `--force`, or re-encoded when its folder is gone).
        var existing: LabStore.RunRow?
        /// `OUT/<first 16 hex digits of the key>`.
        var final: String
        var replacing: Bool
        /// `OUT/.tmp-KEY-...`, where the stages write.
        var temporary: String
        var start: LabStore.RunStart

        /// The run as the store's writer records it.
        var written: RunWriter.Run {
            RunWriter.Run(start: start, runKey: spec.key, clipSHA256: spec.clip.sha256, repeatable: spec.repeatable,
                          temporary: temporary, final: final, replacing: replacing, replacesFolder: existing != nil)
        }
    }

    /// What ``prepare(_:spec:)`` decided: the run is done already, or it is ready for its stages.
    enum Preparation {
        case done(RunOutcome)
        case ready(PreparedRun)
    }

    /// The runner's part before a run's stages: the stored run when its key is done already (unless `force`), else
    /// a new temporary folder for it.
    /// - Throws: `.interrupted` after SIGINT/SIGTERM (nothing recorded for the run); `.usage` when its final folder
    ///   is another database's; the store's and the file system's errors.
    func prepare(_ checked: CheckedRun, spec: RunSpec) throws -> Preparation {
        // A signal between runs stops the sweep before the next run starts (nothing recorded for it).
        try Interruption.check()
        let key = spec.key
        let existing = try store.doneRun(key: key)
        let final = "\(outDirectory)/\(spec.folderName)"
        // The run's folder is the lab's own: a symbolic link there is never followed (read, written or replaced).
        var finalStat = stat()
        if lstat(final, &finalStat) == 0 && finalStat.st_mode & S_IFMT == S_IFLNK {
            throw LabError.cantCreate("\(final): is a symbolic link, not a run folder this lab made; the lab writes only into folders it made, never through a link (remove it)")
        }
        // A done run is skipped while its stream is there and its frames are stored; one whose folder is gone, or
        // whose frames are not all in the database (a damaged or hand-edited database), is encoded again in its place.
        let streamThere = existing.map { row in
            FileManager.default.fileExists(atPath: "\(final)/stream.264") || row.streamPath.map { FileManager.default.fileExists(atPath: $0) } ?? false
        } ?? false
        if let existing, !force, streamThere, try framesStored(existing) {
            // `--mkv` on a run done before without it: its stream.mkv is written from the stored PTS.
            if matroska && !FileManager.default.fileExists(atPath: "\(final)/stream.mkv")
                && FileManager.default.fileExists(atPath: "\(final)/stream.264") {
                try writeMatroska(of: existing, folder: final)
            }
            // Done, but its pictures missing or incomplete (the process was interrupted, or the disk filled, after the
            // run was recorded): drawn again from the store, now or with the sweep's plots.
            if plotMode != .none && FileManager.default.fileExists(atPath: "\(final)/stream.264")
                && !Plots.runPlotsComplete(final, pictures: plotMode != .scripts) {
                let input = try RunPlotInput(run: existing, frames: try store.frames(run: existing.runID), database: store.database.path)
                if plotMode == .scripts {
                    _ = try Plots.writeScriptAndData(input, dir: final)
                } else {
                    try Plots.writeRunPlots(input, dir: final, queue: plotMode == .batched ? plotQueue : nil)
                }
            }
            return .done(try outcome(of: existing, alreadyDone: true))
        }
        let replacing = force || existing != nil
        if existing == nil && FileManager.default.fileExists(atPath: final) { throw RunWriter.folderTaken(final) }
        let temporary = "\(outDirectory)/\(temporaryName(key: key))"
        try OutputFiles.makeNewDirectory(temporary)
        let start = LabStore.RunStart(experiment: checked.experiment, clip: checked.clipPath,
                                      settingsJSON: withReport(Pipeline.settingsJSON(spec, resolved: spec.resolved, plan: spec.input.timestamps, encoder: (spec.settings.encoder, spec.settings.encoder == .x264 ? x264Version : openH264Version))),
                                      crop: nil, ffmpegVersion: nil, width: spec.input.width, height: spec.input.height,
                                      fpsNum: spec.input.fpsNum, fpsDen: spec.input.fpsDen)
        return .ready(PreparedRun(checked: checked, spec: spec, existing: existing, final: final, replacing: replacing,
                                  temporary: temporary, start: start))
    }

    /// Whether a done run's frames are all stored: at least one `frames` row, as many as `runs.frames` says. A done run
    /// without them (a damaged or hand-edited database) is not done: it is encoded again and replaces the row.
    func framesStored(_ row: LabStore.RunRow) throws -> Bool {
        let count = try store.frameCount(run: row.runID)
        return count > 0 && count == row.frames ?? -1
    }

    /// A run's stages (``Pipeline/execute(_:in:matroska:quality:warn:)``) into `folder`; no store access, so any thread may
    /// call it. A signal that arrived meanwhile fails the run (before anything is recorded as done).
    static func execute(_ spec: RunSpec, in folder: String, matroska: Bool, quality: QualityRequest? = nil,
                        warn: (String) -> Void) -> Result<RunResult, any Error> {
        Result {
            let result = try Pipeline.execute(spec, in: folder, matroska: matroska, quality: quality, warn: warn)
            // A signal during verification fails the run here, before anything is recorded as done.
            try Interruption.check()
            return result
        }
    }

    /// After a run's stages: the store's writer records what they ended with in one call and moves the folder into
    /// place (``RunWriter/record(_:_:)``; a failure is recorded `failed` and thrown), then the run's plots are drawn
    /// from the store there (``drawPlots(runID:key:folder:)``).
    func record(_ job: PreparedRun, _ executed: Result<RunResult, any Error>) throws -> RunOutcome {
        let checked = job.checked, key = job.spec.key
        // The experiment's `report` object goes into the settings recorded, never into the key.
        let executed = executed.map { result in
            var result = result
            result.measured.settingsJSON = withReport(result.measured.settingsJSON)
            return result
        }
        let runID: Int64
        switch try RunWriter(store: store).record(job.written, executed) {
        case .alreadyDone(let row):
            return try outcome(of: row, alreadyDone: true)
        case .recorded(let id):
            runID = id
        }
        try drawPlots(runID: runID, key: key, folder: job.final)
        // A signal during the plots: the run is done and in place; the command still ends as interrupted.
        try Interruption.check()
        let result = try executed.get(), measured = result.measured
        let bytes = measured.frames.reduce(0) { $0 + $1.sizeBytes }
        let text = checked.label.isEmpty ? checked.settings.x264Arguments.joined(separator: " ") : checked.label
        return RunOutcome(runID: runID, runKey: key, clip: checked.clipPath, label: checked.label, settingsText: text,
                          frames: measured.frames.count,
                          bytes: bytes, kbps: Double(bytes) * 8 / 1000 / measured.durationSeconds,
                          meanPSNR: Self.mean(measured.quality.compactMap { $0?.psnr.avg }),
                          streamPath: "\(job.final)/stream.264",
                          warnings: result.warnings)
    }

    /// A recorded run's plots (`frames`, `psnr`), drawn from the store once its folder is in place, as ``plotMode``
    /// says: their data and scripts only (`.scripts`), both drawn now by one gnuplot process (`.eachRun`), queued for
    /// the sweep's one process (`.batched`), or none.
    /// A failure leaves the run done and in place: the next `encode` or `run` of its key draws its missing pictures.
    /// - Throws: `.interrupted` after SIGINT/SIGTERM; the plots' errors, naming the files in the run's folder.
    func drawPlots(runID: Int64, key: String, folder: String) throws {
        guard plotMode != .none else { return }
        do {
            // The run just recorded, read back by its key (not every row of the database).
            guard let row = try store.doneRun(key: key), row.runID == runID else {
                throw LabError.software("\(store.database.path): run \(runID) is not there after its commit")
            }
            let input = try RunPlotInput(run: row, frames: try store.frames(run: runID), database: store.database.path)
            let rateChanges = try store.rateChanges(run: runID)
            let rtp = try store.rtpFrames(run: runID)
            switch plotMode {
            case .scripts:
                _ = try Plots.writeScriptAndData(input, dir: folder)
                // The staircase's and RTP chart's data and scripts only: a queue never drawn (`enclab plot` draws them).
                try Plots.writeRateStaircase(input, changes: rateChanges, dir: folder, queue: PlotQueue())
                try Plots.writeRTPPlot(input, frames: rtp, dir: folder, queue: PlotQueue())
            case .batched:
                try Plots.writeRunPlots(input, dir: folder, queue: plotQueue)
                try Plots.writeRateStaircase(input, changes: rateChanges, dir: folder, queue: plotQueue)
                try Plots.writeRTPPlot(input, frames: rtp, dir: folder, queue: plotQueue)
            case .eachRun, .none:
                let runQueue = PlotQueue()
                try Plots.writeRunPlots(input, dir: folder, queue: runQueue)
                try Plots.writeRateStaircase(input, changes: rateChanges, dir: folder, queue: runQueue)
                try Plots.writeRTPPlot(input, frames: rtp, dir: folder, queue: runQueue)
                try runQueue.draw(in: outDirectory)
            }
        } catch {
            if let signal = Interruption.received { throw LabError(.interrupted, "interrupted by \(signal)") }
            throw error
        }
    }

    /// Writes `folder/stream.mkv` for a stored run from its frames' PTS (display order, in µs); times a container
    /// cannot hold leave it out with a warning, as for a new run.
    /// - Throws: ``Matroska/write(stream:ptsMicroseconds:to:knownFrames:)``'s errors other than `.data`.
    func writeMatroska(of row: LabStore.RunRow, folder: String) throws {
        guard let n = row.timebaseNum, let d = row.timebaseDen, let timebase = try? Rational(Int64(n), Int64(d)) else { return }
        let frames = try store.frames(run: row.runID).sorted { $0.displayIndex < $1.displayIndex }
        do {
            try Matroska.write(stream: "\(folder)/stream.264", ptsMicroseconds: try frames.map { try timebase.microseconds(ticks: $0.pts) },
                               to: "\(folder)/stream.mkv")
        } catch let e as LabError where e.kind == .data {
            warn("run \(row.runID): \(Matroska.notWrittenWarning(e))")
        }
    }

    /// The printed outcome of a stored run.
    func outcome(of row: LabStore.RunRow, alreadyDone: Bool) throws -> RunOutcome {
        let psnr = try store.meanPSNR(run: row.runID)
        let settings = (try? JSONSerialization.jsonObject(with: Data(row.settingsJSON.utf8))) as? [String: Any] ?? [:]
        let seconds = row.durationSeconds ?? 0
        let label = settings["label"] as? String ?? ""
        return RunOutcome(runID: row.runID, runKey: row.runKey, clip: row.clip, label: label,
                          settingsText: label.isEmpty ? settings["x264_args"] as? String ?? "" : label,
                          frames: row.frames ?? 0, bytes: row.bytes ?? 0,
                          kbps: seconds > 0 ? Double(row.bytes ?? 0) * 8 / 1000 / seconds : 0, meanPSNR: psnr,
                          streamPath: row.streamPath ?? "", warnings: [],
                          alreadyDone: alreadyDone, repeatable: row.repeatable,
                          repeats: row.runKey.map { try? store.doneRuns(key: $0).count } .flatMap { $0 } ?? 1)
    }

    /// `settingsJSON` with the experiment's `report` object, if any (``report``).
    func withReport(_ settingsJSON: String) -> String { report.map { $0.stored(in: settingsJSON) } ?? settingsJSON }

    static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// Runs every run of an experiment, after checking them all (unless the caller passes its own
    /// checks: `enclab run` checks before it opens the database), then draws the experiment's rate-distortion plot
    /// (`rd.png/svg` in the output folder) from the store: every done run of the experiment in the database.
    /// - Parameter progress: called after each run.
    /// - Parameter jobs: how many runs' stages go at once (``run(_:jobs:progress:)``); it never changes a run.
    public func run(_ experiment: Experiment, checked: [CheckedRun]? = nil, jobs: Int = 1,
                    progress: (RunOutcome) -> Void = { _ in }) throws -> [RunOutcome] {
        let runs = try checked ?? Self.check(experiment.runs, experiment: experiment.name)
        report = experiment.report
        defer { report = nil }
        // However the sweep ends, its write-ahead log is folded back into the database file.
        defer { try? store.checkpoint() }
        let outcomes = try run(runs, jobs: jobs, progress: progress)
        try plotQueue.draw(in: outDirectory)
        try Plots.writeExperimentPlot(experiment: experiment.name, runs: try store.runs(), store: store, dir: outDirectory)
        return outcomes
    }
}
