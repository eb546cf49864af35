internal import CLinux
import Foundation

/// Jobs run one after another, in the order given, on a thread of their own: the verify stage's parse-back, packet
/// round trip and decode overlap with x264's encode this way (DESIGN.md: "Verify works as the stream is written").
///
/// At most `limit` jobs wait at once: ``submit(_:)`` blocks the caller beyond that, so what the jobs hold (source
/// pictures, a frame's bytes) stays bounded whatever the clip's length. The first job that throws stops the others:
/// later submissions and ``drain()`` throw its error. ``stop()`` drops the jobs not yet started and ends the thread
/// once the running one returns.
final class SerialWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() throws -> Void] = []
    private var running = false
    private var stopped = false
    private var failure: (any Error)?
    private let limit: Int

    /// Starts the thread.
    /// - Parameters:
    ///   - name: the thread's name (for debuggers and `top -H`).
    ///   - limit: how many jobs may wait (≥ 1).
    ///   - niceIncrement: how much the thread's nice value is raised above the caller's (0 to 19; at most to 19),
    ///     so that it yields to the encoder's threads while they have work (setpriority(2) on the thread's id).
    ///     A thread that cannot lower its priority runs at the caller's: nothing else changes.
    init(name: String, limit: Int, niceIncrement: Int32 = 0) {
        self.limit = max(1, limit)
        let thread = Thread { [self] in
            if niceIncrement > 0 { _ = enclab_lower_thread_priority(niceIncrement) }
            loop()
        }
        thread.name = name
        thread.start()
    }

    /// Queues `job`, waiting while `limit` jobs wait already.
    /// - Throws: the error an earlier job threw (the job is then not queued).
    func submit(_ job: @escaping () throws -> Void) throws {
        condition.lock(); defer { condition.unlock() }
        while jobs.count >= limit && failure == nil && !stopped { condition.wait() }
        if let failure { throw failure }
        guard !stopped else { return }
        jobs.append(job)
        condition.broadcast()
    }

    /// Waits until every queued job has run.
    /// - Throws: the first error a job threw.
    func drain() throws {
        condition.lock(); defer { condition.unlock() }
        while (!jobs.isEmpty || running) && failure == nil { condition.wait() }
        if let failure { throw failure }
    }

    /// Drops the waiting jobs, waits for the running one to return, and lets the thread end. Idempotent; not to be
    /// called from a job.
    func stop() {
        condition.lock(); defer { condition.unlock() }
        stopped = true
        jobs.removeAll()
        condition.broadcast()
        while running { condition.wait() }
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty { condition.unlock(); return }
            let job = jobs.removeFirst()
            running = true
            condition.broadcast()
            condition.unlock()
            var error: (any Error)?
            do { try job() } catch let e { error = e }
            condition.lock()
            running = false
            if let error, failure == nil {
                failure = error
                jobs.removeAll()
            }
            condition.broadcast()
            condition.unlock()
        }
    }
}

/// The calling thread's id (gettid(2)), as `/proc/self/task/` names it.
func currentThreadID() -> Int32 { enclab_thread_id() }
