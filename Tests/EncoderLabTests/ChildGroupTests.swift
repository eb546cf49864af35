import Foundation
import Testing
@testable import EncoderLab

/// Outside programs ended with their process group (``ChildStopper``), and the time limit of the libvmaf ffmpeg's
/// `-filters` check (``VMAFFFmpeg/find(flag:needsXPSNR:environment:timeLimit:)``), with stand-in shell scripts whose
/// own child (`sleep`, started without `exec`) writes nothing and holds what it inherited.
@Suite("child processes ended with their process group; the libvmaf ffmpeg's check under a time limit", .serialized)
struct ChildGroupTests {
    static func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "enclab-group-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Whether process `pid` runs: its /proc/PID/stat is there and its state (after the command's ')') is not Z or X.
    static func runs(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return state != "Z" && state != "X"
    }

    /// The pid a script wrote to `path`, waited for up to 10 s.
    static func pid(at path: String) -> Int32? {
        for _ in 0..<100 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return pid }
            usleep(100_000)
        }
        return nil
    }

    /// Whether `pid` stops running within `seconds`.
    static func ends(_ pid: Int32, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while runs(pid) && Date() < deadline { usleep(20_000) }
        return !runs(pid)
    }

    /// A script that starts `sleep` in the background (its standard output, and input when `input`, inherited), writes
    /// the sleep's pid to `child.pid` and waits for it: no `exec`, so ending the script alone leaves the sleep.
    static func wrapper(in dir: String, input: Bool = false) throws -> String {
        let path = "\(dir)/wrapper"
        try "#!/bin/sh\nsleep 600 \(input ? "<&0 " : "")&\necho $! > '\(dir)/child.pid'\nwait\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return path
    }

    /// Before, a probe that hung blocked the lab for ever (`Tools.run` had no limit; the 30 s limit ending the script
    /// alone would still wait for the sleep, which holds the script's standard output).
    @Test("a --vmaf-ffmpeg whose -filters never answers: 69 after the limit, naming the program and the command; the script and its child are ended")
    func probeTimeLimit() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try Self.wrapper(in: dir)
        let outcome = LockedBox<Error?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let started = Date()
        DispatchQueue.global().async {
            do { _ = try VMAFFFmpeg.find(flag: path, environment: [:], timeLimit: 1) } catch { outcome.update { $0 = error } }
            answered.signal()
        }
        let child = Self.pid(at: "\(dir)/child.pid")
        let inTime = answered.wait(timeout: .now() + 20) == .success
        let elapsed = Date().timeIntervalSince(started)
        if !inTime {
            // Let the call return (the script ends with its child) so the test does not hang with it.
            if let child { kill(child, SIGKILL) }
            _ = answered.wait(timeout: .now() + 20)
        }
        #expect(inTime, "VMAFFFmpeg.find did not return within 20 s of a 1 s limit")
        #expect(elapsed < 10, "\(elapsed) s")
        let error = try #require(outcome.current as? LabError, "\(String(describing: outcome.current))")
        #expect(error.kind == .unavailable && error.kind.exitCode == 69, "\(error)")
        #expect(error.message.hasPrefix("\(path) (from --vmaf-ffmpeg) did not answer within 1 s: '\(path) -hide_banner -nostdin -filters' "
                                        + "(the check for its libvmaf filter) was still running and was ended; --metrics needs an ffmpeg with libvmaf"), "\(error.message)")
        let sleeper = try #require(child, "the script never started its child")
        #expect(Self.ends(sleeper, within: 3), "the script's child \(sleeper) still runs")
        if Self.runs(sleeper) { kill(sleeper, SIGKILL) }
    }

    /// Before, stop() sent SIGKILL to the script alone: its sleep, holding the pipe, ran on.
    @Test("FedProcess.stop ends the program's process group: a wrapper script's child, holding the pipe, is gone")
    func fedProcessStopEndsGroup() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try Self.wrapper(in: dir, input: true)
        let fed = try FedProcess(path, [], role: "test", workingDirectory: dir, stderrPath: "\(dir)/err.log", pipeSize: 1 << 16)
        let sleeper = try #require(Self.pid(at: "\(dir)/child.pid"), "the script never started its child")
        fed.stop()
        #expect(Self.ends(sleeper, within: 3), "the script's child \(sleeper) still runs")
        if Self.runs(sleeper) { kill(sleeper, SIGKILL) }
    }
}
