internal import CLinux
import Foundation

/// Jobs run one after another, in the order given, on a thread of their own: the verify stage's parse-back, packet
/// round trip and decode overlap with x264's encode this way (DESIGN.md: "Verify works as the stream is written").
///
/// At most `limit` jobs wait at once: ``submit(_:)`` blocks the caller beyond that, so what the jobs hold (source
/// pictures, a frame's bytes) stays bounded whatever the clip's length. The first job that throws stops the others:
/// later submissions and ``drain()`` throw its error. ``stop()`` drops the jobs not yet started and ends the thread
/// once the running one returns.
///
/// Dropping a job releases what it captured, which may run an owner's `deinit` that calls ``stop()``: jobs are
/// dropped with the lock not held, and ``stop()`` on the worker's own thread does not wait for itself, so neither a
/// job's failure nor an owner let go by a job deadlocks the thread.
final class SerialWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() throws -> Void] = []
    private var running = false
    private var stopped = false
    private var failure: (any Error)?
    private let limit: Int
    /// The worker thread's id (gettid(2)), set before it takes its first job; 0 until then.
    private var threadID: Int32 = 0

    /// Starts the thread.
    /// - Parameters:
    ///   - name: the thread's name (for debuggers and `top -H`; `/proc/PID/task/TID/comm` shows its first 15 bytes).
    ///   - limit: how many jobs may wait (≥ 1).
    ///   - niceIncrement: how much the thread's nice value is raised above the caller's (0 to 19; at most to 19),
    ///     so that it yields to the encoder's threads while they have work (setpriority(2) on the thread's id).
    ///     A thread that cannot lower its priority runs at the caller's: nothing else changes.
    init(name: String, limit: Int, niceIncrement: Int32 = 0) {
        self.limit = max(1, limit)
        let thread = Thread { [self] in
            // Set on the thread itself: Foundation on Linux names the system thread only then (else it keeps the
            // name of the thread that started it).
            Thread.current.name = name
            // And on the system thread itself (Linux keeps 15 bytes): under load Foundation's setter was seen to
            // leave the name the thread inherited from its creator (a Dispatch worker's, "com.apple.root...").
            // (pthread_setname_np is declared only under _GNU_SOURCE: the thread's comm file is written instead.)
            try? String(decoding: name.utf8.prefix(15), as: UTF8.self)
                .write(toFile: "/proc/self/task/\(currentThreadID())/comm", atomically: false, encoding: .utf8)
            if niceIncrement > 0 { _ = Self.lowerCurrentThreadPriority(by: niceIncrement) }
            condition.lock()
            threadID = currentThreadID()
            condition.unlock()
            loop()
        }
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

    /// Drops the waiting jobs, waits for the running one to return, and lets the thread end. Idempotent. On the
    /// worker's own thread (a job that lets go of the worker's owner) it returns without waiting: the thread ends
    /// once that job has returned.
    func stop() {
        condition.lock()
        stopped = true
        let dropped = jobs
        jobs.removeAll()
        condition.broadcast()
        let onWorkerThread = threadID != 0 && threadID == currentThreadID()
        condition.unlock()
        // Released before the wait: a dropped job may hold what lets the running one return.
        _ = consume dropped
        guard !onWorkerThread else { return }
        condition.lock()
        while running { condition.wait() }
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty { condition.unlock(); return }
            var job: (() throws -> Void)? = jobs.removeFirst()
            running = true
            condition.broadcast()
            condition.unlock()
            var error: (any Error)?
            do { try job?() } catch let e { error = e }
            // What the job captured is released here: on this thread, without the lock.
            job = nil
            condition.lock()
            running = false
            var dropped: [() throws -> Void] = []
            if let error, failure == nil {
                failure = error
                dropped = jobs
                jobs.removeAll()
            }
            condition.broadcast()
            condition.unlock()
            // Released here, without the lock.
            _ = consume dropped
        }
    }

    /// Raises the calling thread's nice value by `by` (at most to 19) with getpriority(2) and setpriority(2) given
    /// the thread's own id (on Linux a nice value belongs to a thread, not the whole process). Relative, so a process
    /// started with `nice -n 10` keeps its worker below its other threads.
    /// - Returns: whether the kernel took the new value (false with errno set otherwise).
    static func lowerCurrentThreadPriority(by: Int32) -> Bool {
        // Glibc's own declarations: the CLinux shim cannot include <sys/resource.h> (see Sources/CLinux/shim.h).
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let tid = id_t(currentThreadID())
        errno = 0
        let now = getpriority(which, tid)
        if now == -1 && errno != 0 { return false }
        return setpriority(which, tid, min(19, now + by)) == 0
    }
}

/// The calling thread's id (gettid(2)), as `/proc/self/task/` names it.
func currentThreadID() -> Int32 { enclab_thread_id() }
