import Foundation

/// A clip identified by its bytes: the SHA-256 of the file as well as its path, so a run's key follows the content
/// (a renamed copy is the same clip; an edited file is another).
public struct ClipIdentity: Sendable, Equatable {
    /// The path as given (normalised by the experiment).
    public var path: String
    /// SHA-256 of the file's bytes, 64 lowercase hex digits.
    public var sha256: String
    /// The file's device, inode, size and last change when it was identified (before hashing), which a run checks
    /// again when it has read the clip (``requireUnchanged()``); nil for an identity made without the file.
    var state: FileKey?

    /// A clip identified: its identity, and whether its digest may be cached under the file's state.
    struct Identification {
        var identity: ClipIdentity
        /// Whether the digest came from `known` (a cache) rather than from reading the file.
        var known: Bool
        /// Whether a digest read from the file may be cached under ``ClipIdentity/state``: the file's state was the
        /// same before and after hashing and its last change was at least `settleSeconds` before hashing began.
        var cacheable: Bool
    }

    /// Identifies `path` by its bytes: the digest `known` gives for the file's present device, inode, size and last
    /// change (the later of its modification and status-change times, ns), else the SHA-256 of the file read whole.
    /// The input stage writes no cache: the caller keeps the caches (the store's `clip_hashes`, the per-user cache)
    /// and decides what to store (``identify(_:cache:userCache:settleSeconds:)``).
    ///
    /// A digest read from the file is cacheable only when the file's state was the same before and after hashing and
    /// its last change was at least `settleSeconds` before hashing began: a file's times have a coarse granularity (a
    /// kernel tick, or seconds on some file systems), so a file rewritten at the same size within the tick it was
    /// hashed in could otherwise keep its key and get its old digest (git's "racy clean" entries).
    /// - Throws: `.noInput` for a file that cannot be examined or read; what `known` throws.
    static func identify(_ path: String, known: (FileKey) throws -> String?,
                         settleSeconds: Int64 = racyChangeSeconds) throws -> Identification {
        let key = try fileKey(path)
        if let digest = try known(key) {
            return Identification(identity: ClipIdentity(path: path, sha256: digest, state: key), known: true, cacheable: true)
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let startedNs = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        let digest = try SHA256.file(path)
        let settled = key.changeNs <= startedNs - settleSeconds * 1_000_000_000
        return Identification(identity: ClipIdentity(path: path, sha256: digest, state: key), known: false,
                              cacheable: try settled && fileKey(path) == key)
    }

    /// Checks, once a run has read its clip, that the file is still the one identified: the same device, inode, size
    /// and last change (the later of its modification and status-change times, ns). A clip truncated, rewritten or
    /// replaced while it was read (or since it was hashed) would otherwise be recorded as done under the digest of
    /// bytes that were not all encoded, and the intact file would then be "already done".
    /// - Throws: `.data` "PATH: changed while the run read it (WHAT): ..." naming what changed; `.data` too when the
    ///   file is gone or no longer a regular file.
    public func requireUnchanged() throws {
        guard let state else { return }
        let now: FileKey
        do { now = try Self.fileKey(path) } catch let error as LabError {
            throw LabError.data("\(path): changed while the run read it (\(error.message)): the run is not recorded done; run it again")
        }
        guard now != state else { return }
        var what: [String] = []
        if now.device != state.device || now.inode != state.inode { what.append("another file now has its name") }
        if now.size != state.size { what.append("its size went from \(state.size) to \(now.size) bytes") }
        if what.isEmpty { what.append("it was modified") }
        throw LabError.data("\(path): changed while the run read it (\(what.joined(separator: ", "))): its SHA-256 \(sha256.prefix(16))... "
                            + "no longer names what was encoded, so the run is not recorded done; run it again on a file that stays put")
    }

    /// A file changed less than this long before it is hashed is not cached (see ``identify(_:known:settleSeconds:)``):
    /// 2 s, FAT's granularity, far above a kernel tick.
    public static let racyChangeSeconds: Int64 = 2

    /// What a cached digest is keyed by, from stat(2).
    struct FileKey: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        /// The later of `st_mtim` and `st_ctim`, ns since the epoch: a file's mtime can be set back (touch -d) after
        /// its bytes changed, its ctime cannot, and every write moves both.
        var changeNs: Int64
    }

    /// - Throws: `.noInput` when `path` cannot be examined or is not a regular file.
    static func fileKey(_ path: String) throws -> FileKey {
        var st = stat()
        guard stat(path, &st) == 0 else { throw LabError.noInput("\(path): cannot be examined: \(OutputFiles.reason(errno))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw LabError.noInput("\(path): not a regular file; enclab reads a clip twice, give it a file")
        }
        let modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        let changed = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        return FileKey(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size), changeNs: max(modified, changed))
    }
}
