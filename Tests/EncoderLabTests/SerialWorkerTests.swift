import Foundation
import Testing
@testable import EncoderLab

/// The verify stage's thread (``SerialWorker``): jobs in order, errors passed on, a bounded queue, and the nice value
/// the kernel reports for the thread (`/proc/self/task/TID/stat`, field 19), not the one the code asked for.
@Suite("the verify stage's thread")
struct SerialWorkerTests {

    struct Refused: Error, Equatable { var job: Int }

    @Test("jobs run one at a time in the order submitted, on one thread other than the caller's")
    func order() throws {
        let worker = SerialWorker(name: "test", limit: 3)
        let seen = LockedBox<[Int]>([]), threads = LockedBox<Set<String>>([]), busy = LockedBox(0), overlap = LockedBox(false)
        let caller = "\(Thread.current)"
        for k in 0..<200 {
            try worker.submit {
                busy.update { $0 += 1; if $0 > 1 { overlap.update { $0 = true } } }
                seen.update { $0.append(k) }
                threads.update { $0.insert("\(Thread.current)") }
                if k % 17 == 0 { usleep(200) }
                busy.update { $0 -= 1 }
            }
        }
        try worker.drain()
        #expect(seen.current == Array(0..<200))
        #expect(threads.current.count == 1)
        #expect(!threads.current.contains(caller))
        #expect(!overlap.current)
        worker.stop()
    }

    @Test("the first job that throws: later jobs do not run, the next submit and drain throw its error")
    func failure() throws {
        let worker = SerialWorker(name: "test", limit: 2)
        let ran = LockedBox<[Int]>([])
        try worker.submit { ran.update { $0.append(0) } }
        try worker.submit { ran.update { $0.append(1) }; throw Refused(job: 1) }
        // Jobs queued behind the failing one are dropped; one of these submits may still be accepted before the
        // failure is known, none of them runs.
        var thrownBySubmit: (any Error)?
        for k in 2..<6 {
            do { try worker.submit { ran.update { $0.append(k) } } } catch { thrownBySubmit = error; break }
        }
        #expect(throws: Refused(job: 1)) { try worker.drain() }
        #expect(throws: Refused(job: 1)) { try worker.submit { ran.update { $0.append(99) } } }
        if let thrownBySubmit { #expect(thrownBySubmit as? Refused == Refused(job: 1)) }
        worker.stop()
        #expect(ran.current == [0, 1])
    }

    @Test("at most `limit` jobs wait: the next submit blocks until one starts")
    func bounded() throws {
        let worker = SerialWorker(name: "test", limit: 2)
        let gate = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        try worker.submit { started.signal(); gate.wait() }
        started.wait()                       // the first job runs and holds the thread
        try worker.submit {}                 // two wait
        try worker.submit {}
        let returned = LockedBox(false), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? worker.submit {}            // a third would exceed the limit: blocks
            returned.update { $0 = true }
            done.signal()
        }
        // Still blocked after 200 ms (it cannot return before the gate opens).
        #expect(done.wait(timeout: .now() + 0.2) == .timedOut)
        #expect(!returned.current)
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        try worker.drain()
        worker.stop()
    }

    @Test("stop drops the waiting jobs and returns only after the running one has", arguments: [0, 5])
    func stop(nice: Int32) throws {
        let worker = SerialWorker(name: "test", limit: 4, niceIncrement: nice)
        let ran = LockedBox<[Int]>([]), started = DispatchSemaphore(value: 0)
        try worker.submit { started.signal(); usleep(100_000); ran.update { $0.append(0) } }
        try worker.submit { ran.update { $0.append(1) } }
        started.wait()
        worker.stop()
        #expect(ran.current == [0])
        worker.stop()                        // idempotent
        try worker.submit { ran.update { $0.append(2) } }   // ignored once stopped
        usleep(50_000)
        #expect(ran.current == [0])
    }

    /// The nice value of thread `tid` of this process as the kernel reports it: field 19 of its stat line, counted
    /// after the command name's closing parenthesis (proc(5)).
    static func kernelNice(tid: Int32) throws -> Int {
        let line = try String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8)
        let after = line[line.index(after: line.lastIndex(of: ")")!)...].split(separator: " ")
        return Int(after[16])!              // fields 3, 4, ... start at index 0: field 19 is index 16
    }

    @Test("niceIncrement: the worker's thread runs 5 nice levels above the caller's, the caller's is unchanged")
    func nice() throws {
        let callerTid = currentThreadID()
        let before = try Self.kernelNice(tid: callerTid)
        let worker = SerialWorker(name: "test", limit: 1, niceIncrement: 5)
        let tid = LockedBox<Int32>(0)
        try worker.submit { tid.update { $0 = currentThreadID() } }
        try worker.drain()
        #expect(tid.current != callerTid)
        #expect(try Self.kernelNice(tid: tid.current) == min(19, before + 5))
        #expect(try Self.kernelNice(tid: callerTid) == before)
        worker.stop()
    }
}
