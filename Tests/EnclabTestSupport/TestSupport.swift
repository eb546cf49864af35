import EncoderLab
import Foundation

/// What every test target shares: one way to run the built `enclab` (and any other program), one way to make a
/// clip, one way to make a database of runs. The test targets' older helpers (`CommandLineTests.enclab`,
/// `Witness.enclab`, `LabFaultTests.enclab` ...) forward here.
public enum TestSupport {
    /// A finished process: its exit status, both outputs, and whether the watchdog killed it.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var killed: Bool

        public init(status: Int32, stdout: String, stderr: String, killed: Bool = false) {
            self.status = status; self.stdout = stdout; self.stderr = stderr; self.killed = killed
        }

        /// stdout's lines, without their line ends.
        public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The repository's root: three folders above this file (Tests/EnclabTestSupport/TestSupport.swift).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The `enclab` binary next to the test bundle (`swift build` puts both in the same folder), else
    /// `.build/debug/enclab` under the repository.
    public static var binary: String {
        let candidates = [Bundle.main.bundlePath, Bundle(for: Marker.self).bundlePath]
            .map { ($0 as NSString).deletingLastPathComponent + "/enclab" } + ["\(repositoryRoot)/.build/debug/enclab"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }
    final class Marker {}

    /// The built `enclab` with `arguments`, run in `dir` as a user runs it (``process(_:_:in:environment:limit:)``).
    public static func enclab(_ arguments: [String], in dir: String, environment: [String: String] = [:], limit: Int = 600) throws -> Result {
        try process(binary, arguments, in: dir, environment: environment, limit: limit)
    }

    /// The one process runner of the tests: runs `executable` in `dir` with no standard input and `environment`
    /// added to this one's, reading stdout and stderr at once (neither pipe can fill and block it). A program still
    /// running after `limit` seconds is killed with SIGKILL and `killed` set, so a hang fails its test instead of
    /// stalling the suite (SIGKILL: enclab takes SIGTERM as an interruption it handles, which a process blocked in
    /// open(2) never reaches).
    public static func process(_ executable: String, _ arguments: [String], in dir: String, environment: [String: String] = [:],
                               limit: Int = 600) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        p.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let killed = KilledFlag()
        let pid = p.processIdentifier
        let watchdog = DispatchWorkItem { if p.isRunning { killed.set(); kill(pid, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit), execute: watchdog)
        nonisolated(unsafe) var errBytes = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errBytes = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let outBytes = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        watchdog.cancel()
        return Result(status: p.terminationStatus, stdout: String(decoding: outBytes, as: UTF8.self),
                      stderr: String(decoding: errBytes, as: UTF8.self), killed: killed.get())
    }

    /// A program found on PATH (as the lab finds its tools), run as ``process(_:_:in:environment:limit:)`` does.
    /// - Throws: `.software` when it is not installed.
    public static func tool(_ name: String, _ arguments: [String], in dir: String = "/") throws -> Result {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        guard let path = folders.map({ "\($0)/\(name)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw LabError(.software, "\(name) is not installed (scripts/setup.sh installs it)")
        }
        return try process(path, arguments, in: dir)
    }

    /// A set-once flag shared with a watchdog's thread.
    public final class KilledFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        public init() {}
        public func set() { lock.lock(); value = true; lock.unlock() }
        public func get() -> Bool { lock.lock(); defer { lock.unlock() }; return value }
    }

    /// A new empty folder under the temporary folder, named `prefix-UUID`; the caller removes it.
    public static func scratchFolder(_ prefix: String = "enclab-test") -> String {
        let dir = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The one way to make a clip: `clip` (``SyntheticClip``: a moving pattern with a scene cut and a still end)
    /// written as `name` in `dir`.
    /// - Returns: its path.
    @discardableResult
    public static func makeClip(in dir: String, named name: String = "c.y4m",
                                _ clip: SyntheticClip = SyntheticClip(width: 64, height: 48, frames: 4, seed: 3)) throws -> String {
        let path = "\(dir)/\(name)"
        try clip.write(to: path)
        return path
    }

    /// A clip of one of FFmpeg's lavfi sources, `source` (`testsrc2=size=160x96:rate=25`, filters may follow after a
    /// comma): `ffmpeg -hide_banner -v error -f lavfi -i SOURCE -frames:v FRAMES -pix_fmt yuv420p -y file:PATH`, PATH
    /// `name` in `dir`.
    /// - Returns: its path.
    /// - Throws: `.software` with ffmpeg's stderr when ffmpeg fails, or when it is not installed.
    @discardableResult
    public static func lavfiClip(in dir: String, named name: String, _ source: String, frames: Int) throws -> String {
        let path = "\(dir)/\(name)"
        let r = try tool("ffmpeg", ["-hide_banner", "-v", "error", "-f", "lavfi", "-i", source, "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", "-y", "file:" + path])
        guard r.status == 0 else { throw LabError(.software, "ffmpeg -f lavfi -i \(source): \(r.status) \(r.stderr)") }
        return path
    }

    /// The one way to make a database of runs: `enclab encode CLIP FLAGS --db NAME` once per entry of `runs`, each
    /// with `common` flags, in `dir` (the clip is made with ``makeClip(in:named:_:)`` when it is not there).
    /// - Returns: the database's path.
    /// - Throws: `.software` naming the command when an encode fails.
    @discardableResult
    public static func makeDatabase(in dir: String, named name: String = "lab.sqlite", clip: String = "c.y4m",
                                    runs: [[String]] = [["--crf", "23"]],
                                    common: [String] = ["--preset", "ultrafast", "--threads", "1", "--no-plots"]) throws -> String {
        if !FileManager.default.fileExists(atPath: "\(dir)/\(clip)") { try makeClip(in: dir, named: clip) }
        for flags in runs {
            let arguments = ["encode", clip] + common + flags + ["--db", name]
            let r = try enclab(arguments, in: dir)
            guard r.status == 0 else { throw LabError(.software, "enclab \(arguments.joined(separator: " ")): \(r.status) \(r.stderr)") }
        }
        return "\(dir)/\(name)"
    }

    /// sqlite3 (an independent reader) on `db`: its output lines.
    public static func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try process("/usr/bin/sqlite3", [db, sql], in: "/").stdout.split(separator: "\n").map(String.init)
    }
}
