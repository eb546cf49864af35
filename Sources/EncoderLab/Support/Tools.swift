internal import CLinux
internal import CSignals
import Foundation

/// Finding and running the outside programs the lab relies on (ffmpeg, ffprobe, gnuplot, x264).
enum Tools {
    /// The absolute path of `name` on PATH, or nil.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The absolute path of `name`, or a `.software` error saying which Debian package provides it.
    static func require(_ name: String, package: String) throws -> String {
        guard let found = find(name) else {
            throw LabError.software("\(name) not found on PATH (install the Debian package \(package))")
        }
        return found
    }

    /// The output of a short command: exit status, stdout and stderr. Input is /dev/null unless given.
    struct Result {
        var status: Int32; var stdout: Data; var stderr: Data
        /// Whether the program died by a signal (`status` is then the signal's number, as Foundation reports it).
        var signaled = false
        /// Whether the program was still running at the time limit and was ended (``run(_:_:workingDirectory:standardInput:timeLimit:)``).
        var timedOut = false
    }

    /// Runs `executable` with `arguments` (an argument vector: no shell sees them) to completion, collecting both
    /// outputs. SIGINT or SIGTERM to the lab ends the program and its process group (``ChildStopper``), so the call
    /// returns.
    /// - Parameter workingDirectory: the child's working directory (a relative path is taken from the lab's own),
    ///   or nil for the lab's own.
    /// - Parameter standardInput: the program's standard input (a file opened for reading), or nil for /dev/null.
    /// - Parameter timeLimit: seconds after which a program that has not ended (or whose process group still holds
    ///   its outputs open) is ended as on an interruption, its group included, and the result says ``Result/timedOut``;
    ///   nil for no limit.
    /// - Throws: `.software` when the program cannot be started.
    static func run(_ executable: String, _ arguments: [String], workingDirectory: String? = nil,
                    standardInput: FileHandle? = nil, timeLimit: Double? = nil) throws -> Result {
        let process = Process()
        process.executableURL = Paths.fileURL(executable)
        process.arguments = arguments
        if let workingDirectory { process.currentDirectoryURL = Paths.fileURL(workingDirectory, isDirectory: true) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = standardInput ?? FileHandle.nullDevice
        do { try process.run() } catch {
            throw LabError.software("could not start \(executable): \(error.localizedDescription)")
        }
        let stopper = ChildStopper(process)
        defer { stopper.release() }
        // Past the limit: ended as on an interruption, which closes the outputs the reads below wait on.
        let expired = TimeLimitState()
        let limit = DispatchWorkItem {
            guard expired.setUnlessDone() else { return }
            stopper.stop(final: false)
        }
        if let timeLimit { DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: limit) }
        // Drain stderr on another thread so neither pipe can fill and block the child.
        let errBox = DataBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errBox.set(err.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        let timedOut = !expired.markDone()
        limit.cancel()
        return Result(status: process.terminationStatus, stdout: outData, stderr: errBox.get(),
                      signaled: process.terminationReason == .uncaughtSignal, timedOut: timedOut)
    }

    /// The first line of `ffmpeg -version` (e.g. "ffmpeg version 5.1.9-0+deb12u1"), or nil without ffmpeg.
    static func ffmpegVersion() -> String? {
        guard let ffmpeg = find("ffmpeg"), let result = try? run(ffmpeg, ["-hide_banner", "-version"]) else { return nil }
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init)
    }
}

/// Ends a child process and what it started when the lab is interrupted (``Interruption/register(_:)``): at the first
/// SIGINT or SIGTERM, SIGTERM and, a second later (``grace``), SIGKILL (ffmpeg blocked opening a named pipe restarts
/// the call after its SIGTERM handler and would wait on); at a second signal, SIGKILL at once, before the lab exits, so
/// no child is left running without its parent. The signals go to the child's process group, which the child leads
/// (``leadsOwnGroup(_:)``): a wrapper script that runs ffmpeg without `exec` is ended with its ffmpeg, which the
/// script's own death would leave running.
final class ChildStopper: @unchecked Sendable {
    /// How long a program has after SIGTERM before SIGKILL.
    static let grace: Double = 1
    private let process: Process
    private let pid: pid_t
    /// Whether the child leads a process group of its own, whose id is its pid (signalled as a whole).
    let ownGroup: Bool
    private var token = 0

    /// Registers `process` (started) to be ended on an interruption.
    init(_ process: Process) {
        self.process = process
        pid = process.processIdentifier
        ownGroup = Self.leadsOwnGroup(pid)
        token = Interruption.register { [self] final in stop(final: final) }
    }

    /// Whether child `pid` leads a process group of its own, made so here if it does not yet. Foundation's Process
    /// on Linux starts each child so (seen: a child's process group id is its pid, POSIX_SPAWN_SETPGROUP);
    /// setpgid(2) covers a Foundation that would not, succeeding only before the child's exec(2).
    static func leadsOwnGroup(_ pid: pid_t) -> Bool {
        if getpgid(pid) == pid { return true }
        return setpgid(pid, pid) == 0 && getpgid(pid) == pid
    }

    /// Sends `signal` to the child's process group (the child and every process it started that stayed in the group,
    /// even after the child itself has gone), or to the child alone, while it runs, when it leads no group.
    func signal(_ signal: Int32) {
        if ownGroup { kill(-pid, signal) } else if process.isRunning { kill(pid, signal) }
    }

    /// Whether a process of the child's group still runs (the child alone when it leads no group). A zombie does not
    /// count: the child, ended, stays one until Foundation reaps it, and `kill(-pgid, 0)` would find it.
    var groupRuns: Bool {
        guard ownGroup else { return process.isRunning }
        guard kill(-pid, 0) == 0 else { return false }
        return Self.runningMembers(ofGroup: pid)
    }

    /// Whether a process other than a zombie has process group `pgid`, from each `/proc/PID/stat` (state and pgrp,
    /// the first and third fields after the command's closing parenthesis).
    static func runningMembers(ofGroup pgid: pid_t) -> Bool {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where entry.first?.isNumber == true {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, Int32(fields[2]) == pgid, fields[0] != "Z", fields[0] != "X" { return true }
        }
        return false
    }

    /// SIGKILL at once when `final`; else SIGTERM now and SIGKILL after ``grace`` (to what is left: none is an
    /// error, ESRCH).
    func stop(final: Bool) {
        if final { signal(SIGKILL); return }
        signal(SIGTERM)
        // Only to a group that still runs: a group id whose processes have all gone could name another's by then.
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.grace) { [self] in if groupRuns { signal(SIGKILL) } }
    }

    /// SIGTERM to the group, then waits up to ``grace`` for it to be gone, then SIGKILL to what is left.
    func stopAndWait() {
        signal(SIGTERM)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(Self.grace * 1e9)
        while groupRuns && DispatchTime.now().uptimeNanoseconds < deadline { usleep(20_000) }
        if groupRuns { signal(SIGKILL) }
    }

    /// Stops watching (the program has ended or is being waited for by its owner).
    func release() { Interruption.unregister(token) }
}

/// A program running with its stdout piped to the lab and its stderr collected on another thread (so neither
/// pipe can fill and block it); stdin is /dev/null or a file the lab opened. Terminated when released while still
/// running.
final class SpawnedProcess {
    private let process = Process()
    private let errors = DataBox()
    private let drained = DispatchGroup()
    private var stopper: ChildStopper?
    /// The program's standard output.
    let stdout: FileHandle

    /// - Parameter standardInput: the program's standard input (a file opened for reading), or nil for /dev/null.
    /// - Throws: `.software` when the program cannot be started.
    init(_ executable: String, _ arguments: [String], standardInput: FileHandle? = nil) throws {
        process.executableURL = Paths.fileURL(executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = standardInput ?? FileHandle.nullDevice
        do { try process.run() } catch {
            throw LabError.software("could not start \(executable): \(error.localizedDescription)")
        }
        stdout = out.fileHandleForReading
        stopper = ChildStopper(process)
        let box = errors
        drained.enter()
        let group = drained
        DispatchQueue.global().async {
            box.set(err.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
    }

    /// Waits for the program to end (terminating it first when `terminate`) and returns its exit status and stderr.
    func finish(terminate: Bool = false) -> (status: Int32, stderr: String) {
        if terminate && process.isRunning { process.terminate() }
        drained.wait()
        process.waitUntilExit()
        stopper?.release()
        return (process.terminationStatus, String(decoding: errors.get(), as: UTF8.self))
    }

    deinit {
        stopper?.release()
        if process.isRunning { process.terminate() }
    }
}

/// A program reading a stream the lab writes to its standard input through a pipe (``write(_:)``) while the lab goes
/// on with its own work: its standard output discarded and its standard error written to a file, so it never waits
/// on a pipe the lab would have to drain. Both ends of the pipe are close-on-exec (no other child holds the write end
/// open, so the program sees the end of its input when ``finish()`` closes it). A full pipe makes ``write(_:)`` wait
/// for the program to read (back-pressure), never for ever; a program that has gone makes it throw, naming the program and the end
/// of its standard error, never SIGPIPE ending the lab. Ended with its process group (a wrapper script's ffmpeg
/// too) on an interruption (``ChildStopper``: SIGTERM, then SIGKILL), by ``stop()`` (work that failed), and when
/// released still running.
final class FedProcess: @unchecked Sendable {
    /// The program and its role, for messages: e.g. "/path/ffmpeg (libvmaf)".
    let name: String
    /// Where the program's standard error goes.
    let stderrPath: String
    private let process = Process()
    private var stopper: ChildStopper?
    /// Guards `input`: ``stop()`` closes it from another thread than the writer's, after ending the program (which
    /// makes a write blocked on the full pipe return), so the descriptor is never closed under a write.
    private let lock = NSLock()
    /// The pipe's write end; -1 once closed.
    private var input: Int32 = -1
    /// Whether the program was started (a failed start has nothing to end or wait for).
    private var started = false
    /// Whether ``stop()`` has signalled the program's group (guarded by `lock`).
    private var stopped = false

    /// Starts `executable` with `arguments` (an argument vector: no shell sees them).
    /// - Parameters:
    ///   - role: what the program does, for messages ("libvmaf").
    ///   - workingDirectory: the program's working directory.
    ///   - stderrPath: the file its standard error is written to (created or truncated).
    ///   - pipeSize: the pipe's capacity asked for, in bytes (Linux caps it at /proc/sys/fs/pipe-max-size).
    /// - Throws: `.software` when the pipe cannot be made or the program cannot be started; `.cantCreate` for the
    ///   standard error file.
    init(_ executable: String, _ arguments: [String], role: String, workingDirectory: String, stderrPath: String,
         pipeSize: Int) throws {
        name = "\(executable) (\(role))"
        self.stderrPath = stderrPath
        let errFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard errFD >= 0 else {
            let code = errno
            throw OutputFiles.creationError("\(stderrPath): cannot create: \(OutputFiles.reason(code))", code)
        }
        let errors = FileHandle(fileDescriptor: errFD, closeOnDealloc: true)
        defer { try? errors.close() }
        var fds: [Int32] = [-1, -1]
        guard enclab_pipe_cloexec(&fds, Int32(clamping: pipeSize)) == 0 else {
            throw LabError.software("could not start \(executable): no pipe for its input: \(String(cString: strerror(errno)))")
        }
        let reading = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        // The lab's end only (the child's read end is another open file description, left blocking): see write(_:).
        guard fcntl(fds[1], F_SETFL, O_NONBLOCK) == 0 else {
            let code = errno
            Glibc.close(fds[1])
            throw LabError.software("could not start \(executable): its input pipe: \(String(cString: strerror(code)))")
        }
        // The child's copy is its standard input (dup2 clears close-on-exec there); the lab keeps only the write end.
        defer { try? reading.close() }
        process.executableURL = Paths.fileURL(executable)
        process.arguments = arguments
        process.currentDirectoryURL = Paths.fileURL(workingDirectory, isDirectory: true)
        process.standardInput = reading
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        do { try process.run() } catch {
            Glibc.close(fds[1])
            throw LabError.software("could not start \(executable): \(error.localizedDescription)")
        }
        input = fds[1]
        started = true
        stopper = ChildStopper(process)
    }

    /// Writes all of `bytes` to the program's standard input, waiting while the pipe is full: never for ever, the pipe
    /// being non-blocking and waited on 0.1 s at a time, between which an interruption and the program's exit are
    /// looked for (a wrapper script that started the real program without `exec` may have gone, or been ended by
    /// ``ChildStopper``, while its own child holds the pipe open and reads no more).
    /// - Throws: `.interrupted` after SIGINT/SIGTERM (the program is being ended); `.software` naming the program,
    ///   how it ended and the last lines of its standard error when it stopped reading (EPIPE, or it exited with the
    ///   pipe still full), or the write's error.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while true {
            var done = 0
            lock.lock()
            let failure = input < 0 ? EBADF
                : enclab_write_within(input, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, 100, &done)
            lock.unlock()
            offset += done
            guard failure != 0 else { return }
            try Interruption.check()
            if failure == EAGAIN {
                if ended() == nil { continue }
                // It exited and the pipe stays full: another process holds its read end and reads nothing.
                stop()
                throw LabError.software("\(name) stopped reading its input (\(ending())): \(stderrTail())")
            }
            guard failure == EPIPE else {
                throw LabError.software("\(name): writing its input failed: \(String(cString: strerror(failure)))")
            }
            // It closed its input: it is ending (an error it wrote to stderr). Its own exit status, unless it lingers.
            for _ in 0..<250 where ended() == nil { usleep(20_000) }
            stop()
            throw LabError.software("\(name) stopped reading its input (\(ending())): \(stderrTail())")
        }
    }

    /// Closes the program's standard input (the end of its stream) and waits for it to exit.
    /// - Returns: its exit status (the signal's number when ``signaled``) and whether a signal ended it.
    func finish() -> (status: Int32, signaled: Bool) {
        precondition(started)
        closeInput()
        let end = waitForExit()
        stopper?.release()
        return end
    }

    /// How the program ended, e.g. "exit status 1" or "killed by signal 9"; after ``finish()`` or ``stop()``.
    func ending() -> String {
        guard let (status, signaled) = ended() else { return "still running" }
        return signaled
            ? "killed by signal \(status)\(status == SIGSEGV ? " (SIGSEGV)" : "")" : "exit status \(status)"
    }

    /// The last `lines` non-empty lines of its standard error, joined by "; " ("no message" when there are none).
    func stderrTail(lines: Int = 3) -> String {
        let text = String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
        let tail = text.split(separator: "\n").suffix(lines).joined(separator: "; ")
        return tail.isEmpty ? "no message" : tail
    }

    /// Ends the program and every process it started in its process group (a wrapper script's ffmpeg, which outlives
    /// the script otherwise): closes the pipe, then SIGTERM to the group and SIGKILL to what still runs after
    /// ``ChildStopper/grace`` (one blocked reading its input, or ignoring SIGTERM, could not be waited for), and waits
    /// for the program. Idempotent: the group is signalled once.
    func stop() {
        guard started else { return }
        closeInput()
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        if first { stopper?.stopAndWait() }
        _ = waitForExit()
        stopper?.release()
    }

    /// Its exit status (the signal's number when `signaled`), or nil while it runs: Foundation's, or, before
    /// Foundation has reported the exit (a wrapper script's child still holding what the script inherited, seen to
    /// delay that for as long as the grandchild runs), waitid(2)'s without reaping it (``enclab_child_ended``).
    private func ended() -> (status: Int32, signaled: Bool)? {
        if !process.isRunning { return (process.terminationStatus, process.terminationReason == .uncaughtSignal) }
        var signaled: Int32 = 0, status: Int32 = 0
        return enclab_child_ended(process.processIdentifier, &signaled, &status) == 1 ? (status, signaled != 0) : nil
    }

    /// Blocks until the program has exited (checking every 20 ms); returns at once after that.
    private func waitForExit() -> (status: Int32, signaled: Bool) {
        while true {
            if let end = ended() { return end }
            usleep(20_000)
        }
    }

    private func closeInput() {
        lock.lock()
        if input >= 0 { Glibc.close(input); input = -1 }
        lock.unlock()
    }

    deinit { stop() }
}

/// A time limit's state, shared by the limit's timer and the call it limits: whichever comes first, the timer
/// (``setUnlessDone()``) or the call's end (``markDone()``), wins.
final class TimeLimitState: @unchecked Sendable {
    private let lock = NSLock()
    private var expired = false, done = false
    /// Marks the limit expired unless the call has ended; whether it did.
    func setUnlessDone() -> Bool { lock.lock(); defer { lock.unlock() }; if !done { expired = true }; return expired }
    /// Marks the call ended; whether the limit had not expired before.
    func markDone() -> Bool { lock.lock(); defer { lock.unlock() }; done = true; return !expired }
}

/// A lock-protected byte buffer filled by another thread.
final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func append(_ value: Data) { lock.lock(); data.append(value); lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
