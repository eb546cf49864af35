import Foundation

/// SIGINT and SIGTERM turned into an error the running encode can fail with, so an interrupted run is marked
/// `failed` (with no frames). SIGKILL cannot be caught: a run killed that way leaves no row, only a temporary
/// folder that a later start removes.
public enum Interruption {
    private static let state = InterruptionState()

    /// Installs the handlers (once). After a signal, ``check()`` throws.
    public static func install() {
        state.install()
    }

    /// The signal that arrived ("SIGINT" or "SIGTERM"), or nil.
    public static var received: String? { state.signalName }

    /// Throws `.interrupted` "interrupted by SIGINT" (or SIGTERM) once a signal has arrived.
    public static func check() throws {
        if let name = state.signalName { throw LabError(.interrupted, "interrupted by \(name)") }
    }

    /// Registers `action`, run on the signal queue when SIGINT or SIGTERM arrives: with `final` false at the first
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
}

private final class InterruptionState: @unchecked Sendable {
    private let lock = NSLock()
    private var received: String?
    private var sources: [DispatchSourceSignal] = []
    private var actions: [Int: @Sendable (Bool) -> Void] = [:]
    private var nextToken = 0

    var signalName: String? { lock.lock(); defer { lock.unlock() }; return received }

    func register(_ action: @escaping @Sendable (Bool) -> Void) -> Int {
        lock.lock()
        nextToken += 1
        let token = nextToken
        actions[token] = action
        let signalled = received != nil
        lock.unlock()
        if signalled { action(false) }
        return token
    }

    func unregister(_ token: Int) { lock.lock(); actions[token] = nil; lock.unlock() }

    func install() {
        lock.lock(); defer { lock.unlock() }
        guard sources.isEmpty else { return }
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                self.lock.lock()
                let second = self.received != nil
                self.received = name
                let actions = self.actions.sorted { $0.key < $1.key }.map(\.value)
                self.lock.unlock()
                // Children are ended (their reads would otherwise keep the lab from checking); a second signal while
                // the run winds down ends the process at once, after the final actions.
                for action in actions { action(second) }
                if second { exit(130) }
            }
            source.resume()
            sources.append(source)
        }
    }
}
