import Foundation
import Testing
@testable import EncoderLab

/// How the verify stage's thread (``SerialWorker``) ends when a run does not: a job's failure, an owner let go while
/// jobs wait, an owner whose last reference a job drops. Each path once deadlocked the thread (it then never ends,
/// holding the decoder, the pictures and the packet files); the semaphore waits below have a generous bound only so
/// that a deadlock fails the test instead of hanging the suite.
@Suite("the verify thread's teardown")
struct VerifyThreadTeardownTests {
    /// Signals `ended` from its deinit, after stopping the worker it owns (as ``VerifyStage``'s deinit does).
    final class Owner: @unchecked Sendable {
        let worker: SerialWorker
        let ended: DispatchSemaphore
        init(worker: SerialWorker, ended: DispatchSemaphore) { self.worker = worker; self.ended = ended }
        deinit {
            worker.stop()
            ended.signal()
        }
    }

    /// Signals `semaphore` from its deinit: tells the test when a job holding it was released.
    final class Sentinel: @unchecked Sendable {
        let semaphore: DispatchSemaphore
        init(_ semaphore: DispatchSemaphore) { self.semaphore = semaphore }
        deinit { semaphore.signal() }
    }


    struct Refused: Error, Equatable {}

    /// The bound on a wait that only a deadlock reaches.
    static let deadlock: DispatchTimeInterval = .seconds(60)

    @Test("a job that throws drops the waiting jobs; an owner they held last is released and stops the worker without deadlock")
    func failureReleasesOwner() throws {
        let worker = SerialWorker(name: "test", limit: 4)
        let gate = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let ran = LockedBox(false)
        do {
            let owner = Owner(worker: worker, ended: ended)
            try worker.submit { started.signal(); gate.wait(); throw Refused() }
            started.wait()
            // Waits behind the failing job and holds the owner's last reference once `owner` goes out of scope.
            try worker.submit { [owner] in _ = owner; ran.update { $0 = true } }
        }
        gate.signal()
        // The failure drops the waiting job: the owner's deinit runs on the worker's thread and calls stop().
        let stopped = ended.wait(timeout: .now() + Self.deadlock) == .success
        #expect(stopped, "the worker's thread deadlocked stopping itself")
        guard stopped else { return }        // drain would wait for the deadlocked thread
        #expect(!ran.current)
        #expect(throws: Refused()) { try worker.drain() }
    }

    @Test("stop() from a job (the owner's last reference dropped inside it) returns instead of waiting for itself")
    func stopFromOwnThread() throws {
        let worker = SerialWorker(name: "test", limit: 4)
        let ended = DispatchSemaphore(value: 0), after = DispatchSemaphore(value: 0)
        let holder = LockedBox<Owner?>(Owner(worker: worker, ended: ended))
        let ran = LockedBox<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        try worker.submit { gate.wait(); holder.update { $0 = nil }; ran.update { $0.append(0) }; after.signal() }
        try worker.submit { ran.update { $0.append(1) } }
        gate.signal()
        let stopped = ended.wait(timeout: .now() + Self.deadlock) == .success
        #expect(stopped, "stop() waited for the job that called it")
        guard stopped else { return }        // drain would wait for the deadlocked thread
        #expect(after.wait(timeout: .now() + Self.deadlock) == .success)
        // The job that stopped the worker finished; the one queued behind it was dropped by stop().
        try worker.drain()
        #expect(ran.current == [0])
    }

    @Test("the worker's thread carries its name (/proc/self/task/TID/comm, 15 bytes at most)")
    func threadName() throws {
        let worker = SerialWorker(name: "enclab verify", limit: 1)
        let tid = LockedBox<Int32>(0)
        try worker.submit { tid.update { $0 = currentThreadID() } }
        try worker.drain()
        let comm = try String(contentsOfFile: "/proc/self/task/\(tid.current)/comm", encoding: .utf8)
        worker.stop()
        #expect(comm == "enclab verify\n")
    }

    /// A verify stage on a thread of its own in `folder`, for a 16x16 stream (nothing is decoded: no job of it runs).
    static func stage(in folder: String) throws -> VerifyStage {
        try VerifyStage(folder: folder, width: 16, height: 16, timebaseNum: 1, timebaseDen: 25, mode: .full, background: true)
    }

    @Test("a verify stage let go with work waiting (a run that failed): freed at once on the letting thread, the waiting work dropped, its files closed")
    func stageLetGo() throws {
        let scratch = Scratch()
        var stage: VerifyStage? = try Self.stage(in: scratch.path)
        let worker = try #require(stage?.worker)
        let gate = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        // Holds the thread, so the stage's own work waits behind it.
        try worker.submit { started.signal(); gate.wait() }
        started.wait()
        let frame = EncodedFrame(codedIndex: 0, displayIndex: 0, type: .idr, pts: 0, dts: 0, sizeBytes: 4, headerBytes: 0, fillerBytes: 0)
        try stage?.source(Picture(width: 16, height: 16, bytes: [UInt8](repeating: 128, count: 384)))
        try stage?.written(frame, bytes: [0, 0, 0, 1, 0x65, 0x88])
        // Queued last: its release (the stage dropping its waiting work) opens the gate.
        try worker.submit { [sentinel = Sentinel(gate)] in _ = sentinel }
        weak let weakStage = stage
        stage = nil
        let freed = weakStage == nil
        #expect(freed, "the stage outlived the pipeline's reference: its waiting jobs hold it")
        guard freed else {
            // Let the held thread go on; stopping the worker here would release the stage inside stop().
            gate.signal()
            return
        }
        worker.stop()
        // The stage's work never ran: nothing reached packets.bin, and no descriptor of this process still has it open.
        let packets = scratch.path + "/packets.bin"
        #expect(try FileManager.default.attributesOfItem(atPath: packets)[.size] as? Int == 0)
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
        }
        #expect(!open.contains(packets))
    }
}
