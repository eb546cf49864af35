import Foundation

/// Where runs finished on worker threads wait for the writer: a queue that one thread takes from.
private final class Mailbox<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []

    func put(_ item: Item) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// The oldest item, waiting for one if there is none.
    func take() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty { condition.wait() }
        return items.removeFirst()
    }
}

/// A run's stages as a worker thread ran them, with the warnings they gave (replayed by the writer).
private struct Executed: Sendable {
    var index: Int
    var result: Result<RunResult, any Error>
    var warnings: [String]
}

extension Runner {
    /// Runs checked runs, up to `jobs` at once, and returns their outcomes in the runs' order.
    ///
    /// The calling thread is the store's only writer (the SQLite connection is used by it alone): it skips the runs
    /// whose key is done, makes each run's temporary folder, and has the store's writer record the results in the runs'
    /// order as they arrive, each in one transaction, and move each folder into place, then draws its plots
    /// (``record(_:_:)``); so
    /// run ids follow the experiment's order as with `jobs` 1. The runs' stages (``Pipeline/execute(_:in:matroska:quality:warn:)``:
    /// input, encode, output, verification) run on up to `jobs` worker threads, which touch no store; a run that
    /// ends before an earlier one waits to be recorded, and at most 4 × `jobs` runs are started ahead of the first
    /// one not yet recorded. Two runs of one key never go at once: the second waits, and is then found done.
    /// `progress` is called on the calling thread after each run, in the runs' order.
    ///
    /// After SIGINT/SIGTERM or a run's error no further run starts; the runs under way end and are recorded
    /// (interrupted ones `failed`, finished ones `done`), and the first error is thrown. `jobs` 1 runs each run's
    /// stages on the calling thread, one after another.
    /// - Parameter jobs: ≥ 1.
    /// - Throws: the first error a run ended with (see ``run(_:)``).
    public func run(_ runs: [CheckedRun], jobs: Int, progress: (RunOutcome) -> Void = { _ in }) throws -> [RunOutcome] {
        if jobs <= 1 {
            var outcomes: [RunOutcome] = []
            for run in runs {
                let outcome = try self.run(run)
                outcomes.append(outcome)
                progress(outcome)
            }
            return outcomes
        }
        /// A started run: found done, under way on a worker, or ended and waiting for its turn to be recorded.
        enum Slot {
            case done(RunOutcome)
            case underWay(PreparedRun)
            case ended(PreparedRun, Executed)
        }
        let mailbox = Mailbox<Executed>()
        var outcomes: [RunOutcome] = []
        var slots: [Int: Slot] = [:]
        var keysUnderWay: Set<String> = []
        var next = 0, nextToRecord = 0, working = 0
        var firstError: (any Error)?
        let matroska = self.matroska
        let quality = self.quality
        while true {
            // Start runs while a worker is free, nothing has failed, the window allows, and the next key is not under way.
            while firstError == nil && working < jobs && next < runs.count && next - nextToRecord < 4 * jobs {
                do {
                    let spec = try spec(of: runs[next])
                    if keysUnderWay.contains(spec.key) { break }
                    switch try prepare(runs[next], spec: spec) {
                    case .done(let outcome):
                        slots[next] = .done(outcome)
                    case .ready(let job):
                        slots[next] = .underWay(job)
                        keysUnderWay.insert(spec.key)
                        working += 1
                        let index = next, folder = job.temporary
                        let thread = Thread {
                            var warnings: [String] = []
                            let result = Runner.execute(spec, in: folder, matroska: matroska, quality: quality) { warnings.append($0) }
                            mailbox.put(Executed(index: index, result: result, warnings: warnings))
                        }
                        thread.name = "enclab run \(index)"
                        thread.start()
                    }
                    next += 1
                } catch {
                    firstError = error
                }
            }
            // Record, in the runs' order, every run whose turn has come and that has ended.
            while let slot = slots[nextToRecord] {
                switch slot {
                case .underWay:
                    break
                case .done(let outcome):
                    outcomes.append(outcome)
                    progress(outcome)
                case .ended(let job, let executed):
                    keysUnderWay.remove(job.spec.key)
                    executed.warnings.forEach(warn)
                    do {
                        let outcome = try record(job, executed.result)
                        outcomes.append(outcome)
                        progress(outcome)
                    } catch {
                        if firstError == nil { firstError = error }
                    }
                }
                if case .underWay = slot { break }
                slots[nextToRecord] = nil
                nextToRecord += 1
            }
            if working == 0 {
                if slots.isEmpty && (next == runs.count || firstError != nil) { break }
                continue
            }
            let ended = mailbox.take()
            guard case .underWay(let job) = slots[ended.index] else { preconditionFailure("a run that was not under way ended") }
            slots[ended.index] = .ended(job, ended)
            working -= 1
        }
        if let firstError { throw firstError }
        return outcomes
    }
}
