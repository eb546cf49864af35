import Foundation

/// The store's one writer of the lab's runs. A run's stages write its files into a temporary folder that the runner
/// made (`OUT/.tmp-KEY-...`); ``record(_:_:)`` then records whatever the stages ended with in one call: a
/// ``RunResult`` whole, in one transaction (its `runs` row, frames, analyses, checks, decoded pictures and metrics,
/// ``LabStore/recordRun(_:replacing:beforeCommit:)``), after which it moves the folder into place; or a failure as a
/// `failed` row. Plots are no part of it: the runner draws them from the store once the folder is in place.
public struct RunWriter {
    public let store: LabStore

    public init(store: LabStore) { self.store = store }

    /// One run as the writer knows it before its stages end: its `runs` row's start, its identity, and its folders.
    public struct Run: Sendable {
        /// What was known when the run started (the settings as checked; a done run's row takes its result's).
        public var start: LabStore.RunStart
        public var runKey: String
        public var clipSHA256: String
        /// ``RunSpec/repeatable``.
        public var repeatable: Bool
        /// `OUT/.tmp-KEY-...`, where the stages wrote.
        public var temporary: String
        /// `OUT/<first 16 hex digits of the key>`: `runs.stream_path` is `final/stream.264`.
        public var final: String
        /// Whether the done runs of the key already stored are replaced (`--force`, or a done run whose folder or
        /// frames are gone); without it a done run of the key refuses the record.
        public var replacing: Bool
        /// Whether a done run of the key was stored when the run was prepared: its folder, when there, is exchanged
        /// with this one; without one, a folder at `final` is another database's and refuses the run.
        public var replacesFolder: Bool

        public init(start: LabStore.RunStart, runKey: String, clipSHA256: String, repeatable: Bool, temporary: String,
                    final: String, replacing: Bool, replacesFolder: Bool) {
            self.start = start
            self.runKey = runKey
            self.clipSHA256 = clipSHA256
            self.repeatable = repeatable
            self.temporary = temporary
            self.final = final
            self.replacing = replacing
            self.replacesFolder = replacesFolder
        }
    }

    /// What ``record(_:_:)`` did with a run that ended well.
    public enum Written: Sendable {
        /// Recorded done with this run id, its folder in place.
        case recorded(runID: Int64)
        /// Another process of this database recorded the same key meanwhile (two sweeps sharing it): that run stands
        /// and this one's folder is removed.
        case alreadyDone(LabStore.RunRow)
    }

    /// Records what a run's stages ended with, in one call:
    /// - a result: its row and everything it measured in one transaction (the run's metrics in it too, so no run is
    ///   stored half-analysed; the final folder checked again just before the commit), then its folder moved into
    ///   place: `renameat2(RENAME_NOREPLACE)`, or, replacing a run's folder, `RENAME_EXCHANGE` and the old folder
    ///   removed. A folder that another database's process made at `final` meanwhile gives the run up again (its
    ///   rows deleted), so no row claims a folder it did not write. A failure after the commit leaves the folder
    ///   under its temporary name, which the next start moves into place (``Runner/settleTemporaryFolders()``).
    /// - a failure: recorded `failed` with its message (an interruption as "interrupted by SIGINT"), unless it is an
    ///   output that cannot be written (73, 74), a locked database (75), a refusal (64) or the database is damaged:
    ///   those record nothing.
    /// The temporary folder is removed unless the run was recorded done.
    /// - Throws: the stages' error (as a ``LabError``); `.usage` when `final` is another database's folder; the
    ///   store's and the file system's errors.
    public func record(_ run: Run, _ executed: Result<RunResult, any Error>) throws -> Written {
        var keepTemporary = false
        defer { if !keepTemporary { OutputFiles.removeTree(run.temporary) } }
        let result: RunResult
        do {
            result = try executed.get()
        } catch {
            throw recordFailure(run, error)
        }
        var start = run.start
        start.settingsJSON = result.measured.settingsJSON
        start.crop = result.crop
        start.ffmpegVersion = result.ffmpegVersion
        var record = LabStore.RunRecord(start: start, createdAt: result.createdAt, warnings: result.warnings,
                                        outcome: .done(result.measured), runKey: run.runKey, clipSHA256: run.clipSHA256)
        let streamPath = "\(run.final)/stream.264"
        record.streamPath = { _ in streamPath }
        record.repeatable = run.repeatable
        let store = self.store
        let runID: Int64
        do {
            runID = try store.recordRun(record, replacing: run.replacing) { recorded in
                if !run.replacesFolder && FileManager.default.fileExists(atPath: run.final) {
                    throw Self.folderTaken(run.final)
                }
                try RunMetrics.record(store: store, runID: recorded)
                try StepResponse.record(store: store, runID: recorded)
            }
        } catch let e as LabError where e.kind == .usage && !run.replacing {
            if let done = try store.doneRun(key: run.runKey) { return .alreadyDone(done) }
            throw e
        }
        // Recorded: from here the folder is the run's.
        keepTemporary = true
        do {
            if run.replacesFolder && FileManager.default.fileExists(atPath: run.final) {
                try OutputFiles.exchange(run.temporary, run.final)
                OutputFiles.removeTree(run.temporary)
            } else if try !OutputFiles.renameNoReplace(run.temporary, run.final) {
                throw Self.folderTaken(run.final)
            }
        } catch let e as LabError where e.kind == .usage {
            keepTemporary = false
            try? store.removeRun(runID)
            throw e
        }
        return .recorded(runID: runID)
    }

    /// A run's failure as the error to throw, recorded `failed` when it is the run's own (see ``record(_:_:)``).
    private func recordFailure(_ run: Run, _ error: any Error) -> LabError {
        var failure = error as? LabError ?? LabError.software(error.localizedDescription)
        if let signal = Interruption.received { failure = LabError(.interrupted, "interrupted by \(signal)") }
        if ![.cantCreate, .ioError, .tempFail, .usage].contains(failure.kind) && store.database.damage == nil {
            var failed = LabStore.RunRecord(start: run.start, createdAt: Date(), warnings: [],
                                            outcome: .failed(error: failure.message), runKey: run.runKey, clipSHA256: run.clipSHA256)
            failed.repeatable = run.repeatable
            _ = try? store.recordRun(failed) { _ in }
        }
        return failure
    }

    /// The refusal of a run whose final folder another database made.
    static func folderTaken(_ final: String) -> LabError {
        LabError.usage("\(final) already exists (from another database?): give this database its own --out")
    }
}
