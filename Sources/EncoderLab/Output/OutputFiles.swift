internal import CLinux
import Foundation

/// Creating the lab's output folders and files with errors that name the path, the reason (strerror) and the
/// right exit class: a folder or file that cannot be created is `.cantCreate` (73, EX_CANTCREAT), a write that
/// fails part-way (a full disk) is `.ioError` (74, EX_IOERR), and so is a creation that fails only for want of
/// space (ENOSPC, EDQUOT).
enum OutputFiles {
    /// strerror(3) text for an errno value.
    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// write(2) of all of `bytes` to `fd`, again after EINTR.
    /// - Throws: `.ioError` naming `name` and the reason (ENOSPC: "No space left on device").
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], name: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw LabError.ioError("\(name): write failed: \(reason(errno))")
            }
            offset += n
        }
    }

    /// The error for a file or folder that could not be made: `.ioError` when errno `code` says the disk or quota is
    /// full (ENOSPC, EDQUOT: the file system failed to store, the path itself is fine), else `.cantCreate`.
    static func creationError(_ message: String, _ code: Int32) -> LabError {
        code == ENOSPC || code == EDQUOT ? LabError.ioError(message) : LabError.cantCreate(message)
    }

    /// Creates `path` and its missing parents (mode 0777 less the umask); an existing folder is fine.
    /// - Throws: `.cantCreate` naming the path when it exists as a non-folder or cannot be made; `.ioError` when
    ///   the disk is full (``creationError(_:_:)``).
    static func makeDirectory(_ path: String) throws {
        var made: [String] = []
        try makeDirectory(path, made: &made)
    }

    /// ``makeDirectory(_:)``, appending each folder it created to `made`, outermost first (what a command that is
    /// then refused removes again: ``removeEmptyFolders(_:)``).
    static func makeDirectory(_ path: String, made: inout [String]) throws {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { throw LabError.cantCreate("\(path): exists and is not a folder") }
            return
        }
        let parent = Paths.parent(path)
        if !parent.isEmpty && parent != path { try makeDirectory(parent, made: &made) }
        if mkdir(path, 0o777) != 0 {
            guard errno == EEXIST else {
                let code = errno
                throw creationError("\(path): cannot create folder: \(reason(code))", code)
            }
        } else {
            made.append(path)
        }
    }

    /// Removes `folders` (as ``makeDirectory(_:made:)`` listed them, outermost first), innermost first, each only
    /// while it is empty (rmdir(2)): what another process put in one meanwhile stays, with the folders above it.
    static func removeEmptyFolders(_ folders: [String]) {
        for folder in folders.reversed() { _ = rmdir(folder) }
    }

    /// Creates the folder `path`, which must not exist (mkdir(2) is create-exclusive).
    /// - Throws: `.cantCreate` naming the path (EEXIST included); `.ioError` when the disk is full.
    static func makeNewDirectory(_ path: String) throws {
        if mkdir(path, 0o777) != 0 {
            let code = errno
            throw creationError("\(path): cannot create folder: \(reason(code))", code)
        }
    }

    /// Checks that files can be made in folder `path` by making and removing one (access(2) is not enough for
    /// root, for whom it reports read-only mounts only).
    /// - Throws: `.cantCreate` naming the folder and the reason; `.ioError` when the disk is full.
    static func checkWritable(_ path: String) throws {
        let probe = "\(path)/.enclab-write-test-\(getpid())"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        if fd < 0 {
            let code = errno
            throw creationError("\(path): cannot write in this folder: \(reason(code))", code)
        }
        close(fd)
        unlink(probe)
    }

    /// Writes `bytes` to a new or truncated file at `path`; when a write or the final flush fails, the partial file
    /// is removed when it is a regular file (a truncated file that starts like a valid one is worse than none).
    /// - Throws: `.cantCreate` when the file cannot be created (a folder of that name, no permission, a read-only
    ///   file system), `.ioError` when it cannot be created for want of space (ENOSPC, EDQUOT) or a write fails
    ///   (no space left).
    static func write(_ bytes: [UInt8], to path: String) throws {
        let file = try OutputFile(path)
        do {
            try file.write(bytes)
            try file.close()
        } catch {
            try? file.close()
            // Only a regular file: a device given as the output (/dev/full) is never unlinked.
            if file.isRegularFile { unlink(path) }
            throw error
        }
    }

    /// Writes `text` as UTF-8 (see the byte version).
    static func write(_ text: String, to path: String) throws {
        try write(Array(text.utf8), to: path)
    }

    /// Makes sure `path` is a folder the lab may write its own files into: made (with its missing parents) when it
    /// is not there; an existing folder is used as it is, but a symbolic link (to a folder or anything else) is
    /// refused, not followed, so a link planted as a run's or plot's folder never redirects the lab's writes.
    /// - Throws: `.cantCreate` naming `path` for a symbolic link or a non-folder there, or a folder that cannot be
    ///   made; `.ioError` when the disk is full.
    static func ownFolder(_ path: String) throws {
        for _ in 0..<2 {
            var st = stat()
            if lstat(path, &st) == 0 {
                switch st.st_mode & S_IFMT {
                case S_IFDIR: return
                case S_IFLNK:
                    throw LabError.cantCreate("\(path): is a symbolic link; the lab writes only into folders it made, never through a link (remove it)")
                default: throw LabError.cantCreate("\(path): exists and is not a folder")
                }
            }
            let parent = Paths.parent(path)
            if !parent.isEmpty && parent != path { try makeDirectory(parent) }
            if mkdir(path, 0o777) == 0 { return }
            let code = errno
            // Made by another process meanwhile: checked again as any existing entry.
            if code != EEXIST { throw creationError("\(path): cannot create folder: \(reason(code))", code) }
        }
        throw LabError.cantCreate("\(path): cannot create folder: it keeps changing")
    }

    /// Writes one of the lab's own files (a plot's data, script or picture, a report page) so that it never writes
    /// through what was at `path` before: the bytes go to a new file beside it (`.NAME.enclab-PID-RANDOM`, created
    /// with O_CREAT | O_EXCL | O_NOFOLLOW, so no planted file or link is opened), are flushed, and the file is then
    /// renamed over `path` (rename(2) replaces a symbolic link there, never its target). A reader, or another
    /// process writing the same file (`plot` beside a sweep), sees the old file or the new one, never half of one.
    /// On any failure the new file is removed and `path` is left as it was.
    /// - Parameter synced: whether the bytes are flushed to disk (fsync) before the rename; false for a file the
    ///   store can write again (a chart's data and script): after a power loss it may be empty or gone, never another
    ///   file's, and the next run of its key or `enclab plot` writes it again.
    /// - Throws: `.cantCreate` naming `path` when the file cannot be created or moved into place (a folder there,
    ///   no permission, a read-only file system); `.ioError` naming `path` when a write fails or the disk is full.
    static func replace(_ bytes: [UInt8], at path: String, synced: Bool = true) throws {
        let temporary = siblingTemporary(path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 {
            let code = errno
            throw creationError("\(path): cannot create: \(reason(code))", code)
        }
        let file = OutputFile(path: path, fd: fd)
        do {
            try file.write(bytes)
            try file.close(synced: synced)
            try moveFile(temporary, over: path)
        } catch {
            try? file.close()
            unlink(temporary)
            throw error
        }
    }

    /// Writes `text` as UTF-8 (see the byte version).
    static func replace(_ text: String, at path: String, synced: Bool = true) throws {
        try replace(Array(text.utf8), at: path, synced: synced)
    }

    /// A new name beside `path` for a file that will be renamed over it: `.NAME.enclab-PID-RANDOM` in its folder.
    static func siblingTemporary(_ path: String) -> String {
        let parent = Paths.parent(path)
        let name = ".\(Paths.fileName(path)).enclab-\(getpid())-\(UUID().uuidString.prefix(8))"
        return parent.isEmpty ? name : parent == "/" ? "/\(name)" : "\(parent)/\(name)"
    }

    /// Renames the file `from` (the lab's own, just written) over `to`: a file or symbolic link at `to` is replaced
    /// (the link itself, not its target); a folder at `to` is refused.
    /// - Throws: `.cantCreate` naming `to` (a folder there, a read-only file system); `.ioError` when the disk is full.
    static func moveFile(_ from: String, over to: String) throws {
        var st = stat()
        if lstat(to, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR {
            throw LabError.cantCreate("\(to): is a folder, not a file to write")
        }
        if rename(from, to) != 0 {
            let code = errno
            throw creationError("\(to): cannot move the new file into place: \(reason(code))", code)
        }
    }

    /// Renames `from` to `to` unless `to` exists (renameat2 with RENAME_NOREPLACE, which unlike rename(2)
    /// never replaces an existing folder).
    /// - Returns: false when `to` exists.
    /// - Throws: `.cantCreate` for any other failure, naming both paths.
    static func renameNoReplace(_ from: String, _ to: String) throws -> Bool {
        if enclab_rename_noreplace(from, to) == 0 { return true }
        let code = errno
        if code == EEXIST || code == ENOTEMPTY { return false }
        throw LabError.cantCreate("\(to): cannot move \(from) into place: \(reason(code))")
    }

    /// Swaps `a` and `b` atomically (renameat2 with RENAME_EXCHANGE): both must exist.
    /// - Throws: `.cantCreate` naming both paths.
    static func exchange(_ a: String, _ b: String) throws {
        if enclab_rename_exchange(a, b) != 0 {
            throw LabError.cantCreate("\(b): cannot exchange it with \(a): \(reason(errno))")
        }
    }

    /// Removes a folder and everything in it, ignoring errors (for the lab's own temporary folders).
    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A file being written with POSIX calls, so a failure keeps its errno: created (or truncated) on open.
final class OutputFile {
    let path: String
    private var fd: Int32
    /// Whether the opened file is a regular file (fstat(2) after the open), not a device or a pipe.
    let isRegularFile: Bool

    /// - Throws: `.cantCreate` naming the path and the reason; `.ioError` when the reason is a full disk or quota
    ///   (ENOSPC, EDQUOT: a write error of the file system, not a path that cannot be made).
    init(_ path: String) throws {
        self.path = path
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            throw LabError.cantCreate("\(path): is a folder, not a file to write")
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            let code = errno
            throw OutputFiles.creationError("\(path): cannot create: \(OutputFiles.reason(code))", code)
        }
        var st = stat()
        isRegularFile = fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// A file the caller opened: `path` names it in messages.
    init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
        var st = stat()
        isRegularFile = fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// Writes all of `bytes`.
    /// - Throws: `.ioError` naming the path and the reason (ENOSPC: "No space left on device").
    func write(_ bytes: [UInt8]) throws {
        try OutputFiles.writeAll(fd, bytes, name: path)
    }

    /// Flushes to disk (unless `synced` is false) and closes.
    /// - Throws: `.ioError` when the data cannot be flushed (a full disk can show only here).
    func close(synced sync: Bool = true) throws {
        guard fd >= 0 else { return }
        let synced = !sync || fsync(fd) == 0 ? 0 : errno
        let closed = Glibc.close(fd) == 0 ? 0 : errno
        fd = -1
        if synced != 0 && synced != EINVAL { throw LabError.ioError("\(path): write failed: \(OutputFiles.reason(synced))") }
        if closed != 0 { throw LabError.ioError("\(path): write failed: \(OutputFiles.reason(closed))") }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }
}
