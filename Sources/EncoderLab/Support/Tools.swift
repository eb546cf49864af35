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
    }

    /// Runs `executable` with `arguments` (an argument vector: no shell sees them) to completion, collecting both
    /// outputs. SIGINT or SIGTERM to the lab ends the program (``ChildStopper``), so the call returns.
    /// - Parameter workingDirectory: the child's working directory (a relative path is taken from the lab's own),
    ///   or nil for the lab's own.
    /// - Parameter standardInput: the program's standard input (a file opened for reading), or nil for /dev/null.
    /// - Throws: `.software` when the program cannot be started.
    static func run(_ executable: String, _ arguments: [String], workingDirectory: String? = nil,
                    standardInput: FileHandle? = nil) throws -> Result {
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
        return Result(status: process.terminationStatus, stdout: outData, stderr: errBox.get(), signaled: process.terminationReason == .uncaughtSignal)
    }

    /// The first line of `ffmpeg -version` (e.g. "ffmpeg version 5.1.9-0+deb12u1"), or nil without ffmpeg.
    static func ffmpegVersion() -> String? {
        guard let ffmpeg = find("ffmpeg"), let result = try? run(ffmpeg, ["-hide_banner", "-version"]) else { return nil }
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init)
    }
}

/// Ends a child process when the lab is interrupted (``Interruption/register(_:)``): at the first SIGINT or SIGTERM,
/// SIGTERM and, if it still runs a second later, SIGKILL (ffmpeg blocked opening a named pipe restarts the call after
/// its SIGTERM handler and would wait on); at a second signal, SIGKILL at once, before the lab exits, so no child is
/// left running without its parent.
final class ChildStopper: @unchecked Sendable {
    private let process: Process
    private var token = 0

    /// Registers `process` (started) to be ended on an interruption.
    init(_ process: Process) {
        self.process = process
        token = Interruption.register { [self] final in stop(final: final) }
    }

    private func stop(final: Bool) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        if final { kill(pid, SIGKILL); return }
        kill(pid, SIGTERM)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [self] in
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
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

/// A lock-protected byte buffer filled by another thread.
final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func append(_ value: Data) { lock.lock(); data.append(value); lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
