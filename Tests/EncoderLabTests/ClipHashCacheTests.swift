import Foundation
import Testing
@testable import EncoderLab

@Suite("the per-user clip hash cache beside the store's clip_hashes")
struct ClipHashCacheTests {
    static func sha256sum(_ path: String) throws -> String {
        String(try CommandLineRunner.run("/usr/bin/sha256sum", [path]).split(separator: " ")[0])
    }

    static func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try CommandLineRunner.run("/usr/bin/sqlite3", [db, sql]).split(separator: "\n").map(String.init)
    }

    @Test("XDG_CACHE_HOME when absolute, else HOME/.cache, else none")
    func location() {
        #expect(UserClipHashCache.defaultPath(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/c/enclab/clip-hashes.sqlite")
        #expect(UserClipHashCache.defaultPath(environment: ["XDG_CACHE_HOME": "rel", "HOME": "/h"]) == "/h/.cache/enclab/clip-hashes.sqlite")
        #expect(UserClipHashCache.defaultPath(environment: ["HOME": "/h"]) == "/h/.cache/enclab/clip-hashes.sqlite")
        #expect(UserClipHashCache.defaultPath(environment: [:]) == nil)
    }

    @Test("a digest is stored under the file's key, read back by a later process's lookup, and never for a changed file")
    func storedAndNotStale() throws {
        let scratch = Scratch()
        let clip = scratch.file("c.bin")
        try Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: clip))
        let cachePath = scratch.file("cache/enclab/clip-hashes.sqlite")
        let cache = try #require(UserClipHashCache(path: cachePath))
        let first = try ClipIdentity.identify(clip, cache: nil, userCache: cache, settleSeconds: 0)
        #expect(first.sha256 == (try Self.sha256sum(clip)))
        let key = try ClipIdentity.fileKey(clip)
        #expect(try Self.sqlite(cachePath, "SELECT size, mtime_ns, sha256 FROM clip_hashes")
                == ["100000|\(key.changeNs)|\(first.sha256)"])
        // The folder is the user's alone.
        let mode = try FileManager.default.attributesOfItem(atPath: scratch.file("cache/enclab"))[.posixPermissions] as? Int
        #expect(mode == 0o700)
        // The digest comes from the cache: one planted there under the file's key is what identify returns.
        let planted = String(repeating: "ab", count: 32)
        _ = try Self.sqlite(cachePath, "UPDATE clip_hashes SET sha256 = '\(planted)'")
        #expect(try ClipIdentity.identify(clip, cache: nil, userCache: UserClipHashCache(path: cachePath)).sha256 == planted)
        // Rewritten at the same size: a new change time, so a new key and the true digest.
        try Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: URL(fileURLWithPath: clip))
        let rewritten = try ClipIdentity.identify(clip, cache: nil, userCache: cache, settleSeconds: 0)
        #expect(rewritten.sha256 == (try Self.sha256sum(clip)) && rewritten.sha256 != planted)
    }

    @Test("a file changed within the settle time is hashed but not cached, in the store or the user cache")
    func racyNotCached() throws {
        let scratch = Scratch()
        let clip = scratch.file("c.bin")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: clip))
        let cachePath = scratch.file("cache.sqlite")
        let store = try LabStore(path: scratch.file("lab.sqlite"))
        let identity = try ClipIdentity.identify(clip, cache: store, userCache: UserClipHashCache(path: cachePath))
        #expect(identity.sha256 == (try Self.sha256sum(clip)))
        #expect(try Self.sqlite(cachePath, "SELECT count(*) FROM clip_hashes") == ["0"])
        #expect(try Self.sqlite(scratch.file("lab.sqlite"), "SELECT count(*) FROM clip_hashes") == ["0"])
    }

    @Test("a digest in the store's cache is copied to the user cache and the other way round")
    func copiedBetweenCaches() throws {
        let scratch = Scratch()
        let clip = scratch.file("c.bin")
        try Data([9, 8, 7]).write(to: URL(fileURLWithPath: clip))
        let digest = try Self.sha256sum(clip)
        let key = try ClipIdentity.fileKey(clip)
        let store = try LabStore(path: scratch.file("a.sqlite"))
        try store.storeClipHash(device: key.device, inode: key.inode, size: key.size, mtimeNs: key.changeNs, sha256: digest)
        let cachePath = scratch.file("cache.sqlite")
        _ = try ClipIdentity.identify(clip, cache: store, userCache: UserClipHashCache(path: cachePath))
        #expect(try Self.sqlite(cachePath, "SELECT sha256 FROM clip_hashes") == [digest])
        let other = try LabStore(path: scratch.file("b.sqlite"))
        _ = try ClipIdentity.identify(clip, cache: other, userCache: UserClipHashCache(path: cachePath))
        #expect(try Self.sqlite(scratch.file("b.sqlite"), "SELECT sha256 FROM clip_hashes") == [digest])
    }

    @Test("a cache that cannot be made (its folder under a regular file) or is not the cache's kind is skipped; the clip is hashed")
    func unusableCache() throws {
        let scratch = Scratch()
        let clip = scratch.file("c.bin")
        try Data([4, 5, 6]).write(to: URL(fileURLWithPath: clip))
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: scratch.file("file")))
        #expect(UserClipHashCache(path: scratch.file("file/enclab/clip-hashes.sqlite")) == nil)
        #expect(UserClipHashCache.user(environment: ["XDG_CACHE_HOME": scratch.file("file")]) == nil)
        let junk = scratch.file("junk.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: junk))
        #expect(UserClipHashCache(path: junk) == nil)
        let later = scratch.file("later.sqlite")
        _ = try Self.sqlite(later, "PRAGMA user_version = 8")
        #expect(UserClipHashCache(path: later) == nil)
        #expect(try ClipIdentity.identify(clip, cache: nil, userCache: nil, settleSeconds: 0).sha256 == (try Self.sha256sum(clip)))
    }
}
