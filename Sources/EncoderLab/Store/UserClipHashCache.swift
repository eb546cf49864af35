import Foundation

/// The per-user clip hash cache: `$XDG_CACHE_HOME/enclab/clip-hashes.sqlite` (`~/.cache/enclab/...` when
/// `XDG_CACHE_HOME` is unset or not an absolute path, as the XDG Base Directory specification says), one table keyed
/// as the store's `clip_hashes` (device, inode, size, last change in ns), so a clip's SHA-256 is computed once per
/// machine and user rather than once per database (a sweep sharded into many databases, a benchmark that starts a
/// fresh database each time).
///
/// Best effort: a cache that cannot be made, opened, read or written (an unwritable folder, a locked or damaged
/// file, another version's) is not used and the clip is simply hashed; nothing it does fails a run. It stores no
/// path, only the key and the digest.
public final class UserClipHashCache {
    private let database: Database
    /// The cache file's path.
    public let path: String
    /// `PRAGMA user_version` of the cache file this build reads and writes.
    static let version: Int64 = 1

    /// The cache file's path for this environment, or nil when neither `XDG_CACHE_HOME` (absolute) nor `HOME` is set.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return "\(xdg)/enclab/clip-hashes.sqlite" }
        if let home = environment["HOME"], home.hasPrefix("/") { return "\(home)/.cache/enclab/clip-hashes.sqlite" }
        return nil
    }

    /// Opens (making its folder, mode 0700, and file when missing) the cache at `path`; nil when that fails.
    public init?(path: String) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        // A short busy timeout: another process writing its digest holds the lock for milliseconds, and a cache
        // that stays locked is skipped rather than waited for.
        guard let db = try? Database(path: path, busyTimeoutMilliseconds: 2000) else { return nil }
        do {
            let version = try db.query("PRAGMA user_version").first?.first?.int ?? -1
            if version == 0 {
                try db.transaction {
                    try db.execute("""
                        CREATE TABLE IF NOT EXISTS clip_hashes (
                            device INTEGER NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                            sha256 TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
                            PRIMARY KEY (device, inode, size, mtime_ns)) WITHOUT ROWID;
                        PRAGMA user_version = \(Self.version);
                        """)
                }
            } else if version != Self.version {
                return nil
            }
        } catch {
            return nil
        }
        database = db
    }

    /// The cache at ``defaultPath(environment:)``, or nil when there is none or it cannot be used.
    public static func user(environment: [String: String] = ProcessInfo.processInfo.environment) -> UserClipHashCache? {
        defaultPath(environment: environment).flatMap { UserClipHashCache(path: $0) }
    }

    /// The digest stored for a file in this state (parameters as ``LabStore/cachedClipHash(device:inode:size:mtimeNs:)``),
    /// or nil when none is stored or the cache cannot be read.
    public func digest(device: UInt64, inode: UInt64, size: Int64, mtimeNs: Int64) -> String? {
        guard let value = try? database.query(
            "SELECT sha256 FROM clip_hashes WHERE device = ? AND inode = ? AND size = ? AND mtime_ns = ?",
            Self.key(device, inode, size, mtimeNs)).first?.first?.string,
              value.utf8.count == 64, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return value
    }

    /// Stores a digest; a failure (a read-only or locked cache) is ignored.
    public func store(device: UInt64, inode: UInt64, size: Int64, mtimeNs: Int64, sha256: String) {
        _ = try? database.prepare("INSERT OR REPLACE INTO clip_hashes (device, inode, size, mtime_ns, sha256) VALUES (?, ?, ?, ?, ?)")
            .run(Self.key(device, inode, size, mtimeNs) + [.text(sha256)])
    }

    private static func key(_ device: UInt64, _ inode: UInt64, _ size: Int64, _ mtimeNs: Int64) -> [SQLValue] {
        [.integer(Int64(bitPattern: device)), .integer(Int64(bitPattern: inode)), .integer(size), .integer(mtimeNs)]
    }
}
