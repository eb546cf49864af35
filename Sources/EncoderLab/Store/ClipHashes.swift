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
