import Foundation

/// The clip hash cache (`clip_hashes`): a clip's SHA-256 stored under the file's identity and state as `stat(2)`
/// reports them, so a large clip is hashed once across runs and processes. A file that changes gets a new size or
/// modification time, so its old digest is never found for it.
extension LabStore {
    /// The digest stored for a file in this state, or nil.
    /// - Parameters:
    ///   - device: `st_dev`; inode: `st_ino` (both stored as their 64-bit patterns in SQLite's signed INTEGER);
    ///   - size: `st_size` in bytes; mtimeNs: `st_mtim` in nanoseconds since the epoch.
    /// - Returns: 64 lowercase hex digits, or nil when none is stored.
    /// - Throws: the database's errors (``Database/kind(ofResultCode:)``).
    public func cachedClipHash(device: UInt64, inode: UInt64, size: Int64, mtimeNs: Int64) throws -> String? {
        try database.rows("SELECT sha256 FROM clip_hashes WHERE device = ? AND inode = ? AND size = ? AND mtime_ns = ?",
                          Self.clipHashKey(device, inode, size, mtimeNs)).first?["sha256"].string
    }

    /// Stores (or replaces) the digest of a file in this state; the parameters as in
    /// ``cachedClipHash(device:inode:size:mtimeNs:)``. Committed at once, outside any run's transaction.
    /// - Throws: `.software` when `sha256` is not 64 lowercase hex digits (the table's CHECK); the database's errors.
    public func storeClipHash(device: UInt64, inode: UInt64, size: Int64, mtimeNs: Int64, sha256: String) throws {
        try database.prepare("INSERT OR REPLACE INTO clip_hashes (device, inode, size, mtime_ns, sha256) VALUES (?, ?, ?, ?, ?)")
            .run(Self.clipHashKey(device, inode, size, mtimeNs) + [.text(sha256)])
    }

    private static func clipHashKey(_ device: UInt64, _ inode: UInt64, _ size: Int64, _ mtimeNs: Int64) -> [SQLValue] {
        [.integer(Int64(bitPattern: device)), .integer(Int64(bitPattern: inode)), .integer(size), .integer(mtimeNs)]
    }
}

extension ClipIdentity {
    /// Identifies `path` (``identify(_:known:settleSeconds:)``, the input stage's), with the digest taken from a
    /// cache when the file's device, inode, size and last change (the later of its modification and status-change
    /// times, ns) are those it was hashed with, so a large y4m is read for its digest once: first the store's
    /// `clip_hashes`, then the per-user cache (``UserClipHashCache``); a digest found in one is copied to the other,
    /// and a digest read from the file is stored in both when the input stage says it is cacheable.
    /// - Parameters:
    ///   - store: the database whose `clip_hashes` to read and fill, or nil.
    ///   - userCache: the per-user cache, or nil for none (the default opens ``UserClipHashCache/user(environment:)``).
    ///   - settleSeconds: how long before hashing the file must have last changed for its digest to be cached.
    /// - Throws: `.noInput` for a file that cannot be examined or read; the store's errors.
    public static func identify(_ path: String, cache store: LabStore?,
                                userCache: UserClipHashCache? = UserClipHashCache.user(),
                                settleSeconds: Int64 = racyChangeSeconds) throws -> ClipIdentity {
        var inStore = false
        let found = try identify(path, known: { key in
            if let digest = try store?.cachedClipHash(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs) {
                inStore = true
                return digest
            }
            return userCache?.digest(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs)
        }, settleSeconds: settleSeconds)
        let identity = found.identity
        guard let key = identity.state, found.cacheable else { return identity }
        if found.known && inStore {
            // Found in the store: copied to the per-user cache when that lacks it.
            if let userCache, userCache.digest(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs) == nil {
                userCache.store(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs, sha256: identity.sha256)
            }
        } else if found.known {
            // Found in the per-user cache: copied to the store.
            try store?.storeClipHash(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs, sha256: identity.sha256)
        } else {
            try store?.storeClipHash(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs, sha256: identity.sha256)
            userCache?.store(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs, sha256: identity.sha256)
        }
        return identity
    }
}
