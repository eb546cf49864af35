import Foundation

/// A value shared between a test and the threads it starts (a ``SerialWorker``'s jobs), read and changed under a lock.
final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func update(_ body: (inout T) -> Void) { lock.lock(); body(&value); lock.unlock() }
    var current: T { lock.lock(); defer { lock.unlock() }; return value }
}
