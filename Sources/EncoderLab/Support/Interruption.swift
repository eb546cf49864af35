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
}

private final class InterruptionState: @unchecked Sendable {
    private let lock = NSLock()
    private var received: String?
    private var sources: [DispatchSourceSignal] = []

    var signalName: String? { lock.lock(); defer { lock.unlock() }; return received }

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
                self.lock.unlock()
                // A second signal while the run winds down ends the process at once.
                if second { exit(130) }
            }
            source.resume()
            sources.append(source)
        }
    }
}
