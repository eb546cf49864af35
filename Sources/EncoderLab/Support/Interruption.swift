internal import CSignals
import Foundation

/// SIGINT and SIGTERM turned into an error the running encode can fail with, so an interrupted run is marked
/// `failed` (with no frames). SIGKILL cannot be caught: a run killed that way leaves no row, only a temporary
/// folder that a later start removes.
public enum Interruption {
    private static let state = InterruptionState()

    /// Installs the handlers (once), at once: a C handler (sigaction(2)) that notes the signal and hands it to a
    /// thread of this process through a pipe, so no signal after this call ends the process by its default action
    /// or is lost. After a signal, ``check()`` throws. Call it first thing in `main` (a signal before then, while the
    /// dynamic loader and the runtimes start, ends the process as it would any program).
    public static func install() {
        state.install()
    }

    /// The signal that arrived ("SIGINT" or "SIGTERM"), or nil.
    public static var received: String? { state.signalName }

    /// Throws `.interrupted` "interrupted by SIGINT" (or SIGTERM) once a signal has arrived.
    public static func check() throws {
        if let name = state.signalName { throw LabError(.interrupted, "interrupted by \(name)") }
    }

    /// Registers `action`, run on the signal reader thread when SIGINT or SIGTERM arrives: with `final` false at the first
    /// signal (the lab goes on to fail with `.interrupted`), true just before a second one ends the process
    /// (exit 130, no `defer` runs). Used to end child processes (``SpawnedProcess``, ``Tools/run``) and to remove
    /// temporary folders. Runs at once (with `final` false) when a signal has already arrived.
    /// - Returns: the token for ``unregister(_:)``.
    static func register(_ action: @escaping @Sendable (_ final: Bool) -> Void) -> Int {
        state.register(action)
    }

    /// Removes an action registered with ``register(_:)``.
    static func unregister(_ token: Int) {
        state.unregister(token)
    }

    /// Runs `body`, which reads `what` when it is not a regular file (a named pipe, a device): open(2) and read(2)
    /// wait there for a writer, no ``check()`` runs meanwhile, and SA_RESTART resumes them after a signal, so the
    /// first SIGINT or SIGTERM would otherwise go unheeded until a writer came. With such a file, that signal ends the
    /// process at once with 130 ("enclab: interrupted by SIGTERM while waiting for WHAT"): nothing has been written
    /// yet by the reads this wraps (actions registered before this one run first, as at any signal). A regular file
    /// is read as it is.
    static func endingAtOnce<T>(reading path: String, naming what: String, _ body: () throws -> T) throws -> T {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG, info.st_mode & S_IFMT != S_IFDIR else { return try body() }
        // Control characters of a file name shown as \u{..}, as the lab's other messages show them, not sent to the terminal.
        let shown = what.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
        let token = register { _ in
            let message = "enclab: interrupted by \(Interruption.received ?? "a signal") while waiting for \(shown)\n"
            message.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
            exit(130)
        }
        defer { unregister(token) }
        return try body()
    }
}

private final class InterruptionState: @unchecked Sendable {
    private let lock = NSLock()
    private var received: String?
    private var installed = false
    private var actions: [Int: @Sendable (Bool) -> Void] = [:]
    private var nextToken = 0

    /// The signal that arrived: the one the reader thread took from the pipe, or, before it has, the one the C
    /// handler noted (so a check right after a signal sees it).
    var signalName: String? {
        lock.lock(); defer { lock.unlock() }
        if let received { return received }
        return Self.name(enclab_signals_first())
    }

    static func name(_ signal: Int32) -> String? {
        switch signal {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        default: return nil
        }
    }

    func register(_ action: @escaping @Sendable (Bool) -> Void) -> Int {
        lock.lock()
        nextToken += 1
        let token = nextToken
        actions[token] = action
        let signalled = received != nil || enclab_signals_first() != 0
        lock.unlock()
        if signalled { action(false) }
        return token
    }

    func unregister(_ token: Int) { lock.lock(); actions[token] = nil; lock.unlock() }

    func install() {
        lock.lock(); defer { lock.unlock() }
        guard !installed else { return }
        guard enclab_signals_install() == 0 else {
            preconditionFailure("cannot install the SIGINT/SIGTERM handlers: \(String(cString: strerror(errno)))")
        }
        installed = true
        let fd = enclab_signals_fd()
        // The reader: one byte per signal, in order; the first signal fails the work, a second ends the process.
        let reader = Thread { [self] in
            var byte: UInt8 = 0
            while true {
                let n = read(fd, &byte, 1)
                if n == 1 {
                    if let name = Self.name(Int32(byte)) { arrived(name) }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        reader.name = "enclab-signals"
        reader.start()
    }

    private func arrived(_ name: String) {
        lock.lock()
        let second = received != nil
        if received == nil { received = name }
        let actions = self.actions.sorted { $0.key < $1.key }.map(\.value)
        lock.unlock()
        // Children are ended (their reads would otherwise keep the lab from checking); a second signal while
        // the run winds down ends the process at once, after the final actions.
        for action in actions { action(second) }
        if second { exit(130) }
    }
}
