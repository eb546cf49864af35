import Foundation

/// A clip identified by its bytes: the SHA-256 of the file as well as its path, so a run's key follows the content
/// (a renamed copy is the same clip; an edited file is another).
public struct ClipIdentity: Sendable, Equatable {
    /// The path as given (normalised by the experiment).
    public var path: String
    /// SHA-256 of the file's bytes, 64 lowercase hex digits.
    public var sha256: String

    /// Hashes `path`, or takes the digest from the store's cache when the file's device, inode, size and last change
    /// (the later of its modification and status-change times, ns) are those it was hashed with, so a large y4m is
    /// read for its digest once.
    /// - Throws: `.noInput` for a file that cannot be examined or read; the store's errors.
    public static func identify(_ path: String, cache store: LabStore?) throws -> ClipIdentity {
        var st = stat()
        guard stat(path, &st) == 0 else { throw LabError.noInput("\(path): cannot be examined: \(OutputFiles.reason(errno))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw LabError.noInput("\(path): not a regular file; enclab reads a clip twice, give it a file")
        }
        let device = UInt64(st.st_dev), inode = UInt64(st.st_ino), size = Int64(st.st_size)
        // The later of the modification and status-change times: a file's mtime can be set back (touch -d) after its
        // bytes changed, its ctime cannot, and every write moves both.
        let modified = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        let changed = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        let mtime = max(modified, changed)
        if let known = try store?.cachedClipHash(device: device, inode: inode, size: size, mtimeNs: mtime) {
            return ClipIdentity(path: path, sha256: known)
        }
        let digest = try SHA256.file(path)
        try store?.storeClipHash(device: device, inode: inode, size: size, mtimeNs: mtime, sha256: digest)
        return ClipIdentity(path: path, sha256: digest)
    }
}
