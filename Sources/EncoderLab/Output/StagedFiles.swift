import Foundation

/// Files written whole or not at all: each under a temporary name beside its final path (`.NAME.enclab-PID-N`,
/// created exclusively), renamed into place (rename(2)) only when every one of them is written and flushed. A
/// failure part-way leaves no file at any final path, neither an empty one nor a truncated one, and the earlier
/// file at that path (if any) as it was.
///
/// A final path that exists and is not a regular file (a device such as /dev/null, a pipe) is written directly
/// instead, after the others are staged: renaming over it would replace the device with a file.
enum StagedFiles {
    /// Writes every `(bytes, path)`.
    /// - Throws: as ``OutputFiles/write(_:to:)``: `.cantCreate` (73) when a file cannot be created (a folder of that
    ///   name, no permission, a read-only file system) or moved into place, `.ioError` (74) when a write fails or the
    ///   disk is full; the message names the final path. The temporary files are removed.
    static func write(_ files: [(bytes: [UInt8], path: String)]) throws {
        var staged: [(temporary: String, path: String)] = []
        var direct: [(bytes: [UInt8], path: String)] = []
        defer { for s in staged { unlink(s.temporary) } }
        for (k, file) in files.enumerated() {
            var info = stat()
            if stat(file.path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
                // A folder is refused by OutputFiles.write with its own message; a device or pipe is written to.
                direct.append(file)
                continue
            }
            staged.append((try stage(file.bytes, for: file.path, number: k), file.path))
        }
        for file in direct { try OutputFiles.write(file.bytes, to: file.path) }
        while let s = staged.first {
            if rename(s.temporary, s.path) != 0 {
                let code = errno
                throw OutputFiles.creationError("\(s.path): cannot move the written file into place: \(OutputFiles.reason(code))", code)
            }
            staged.removeFirst()
        }
    }

    /// Writes `bytes` to a new temporary file beside `path` and flushes it.
    /// - Returns: the temporary file's path.
    private static func stage(_ bytes: [UInt8], for path: String, number: Int) throws -> String {
        let parent = Paths.parent(path)
        let folder = parent.isEmpty ? "." : parent
        let temporary = "\(folder)/.\(Paths.fileName(path)).enclab-\(getpid())-\(number)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 {
            let code = errno
            throw OutputFiles.creationError("\(path): cannot create: \(OutputFiles.reason(code))", code)
        }
        var failure: Int32 = 0
        var offset = 0
        while offset < bytes.count && failure == 0 {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno != EINTR { failure = errno }
            } else {
                offset += n
            }
        }
        if failure == 0 && fsync(fd) != 0 && errno != EINVAL { failure = errno }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw LabError.ioError("\(path): write failed: \(OutputFiles.reason(failure))")
        }
        return temporary
    }
}
