import Foundation

/// Path arithmetic on strings, without Foundation's NSString path methods: in the Foundation of Swift 6.3.1 on Linux,
/// `("r" as NSString).deletingLastPathComponent` traps (SIGILL) for any one-character relative path, so a database,
/// experiment file or output folder named with one letter crashed the lab.
///
/// Nor with `URL(fileURLWithPath:)` on a relative path: it expands a leading `~` to the home folder, so a folder
/// the user named `~` (or `~/sub`, `~root`) became `/root/...`. ``absolute(_:)`` and ``fileURL(_:isDirectory:)``
/// take every name as it is.
public enum Paths {
    /// `path` made absolute against the current directory: returned as it is when it starts with `/`, else the
    /// current directory, `/`, then `path`. No `~` is expanded and nothing else is normalized (`.`, `..` and
    /// symbolic links stay as they are). An empty path gives the current directory followed by `/`.
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        let cwd = FileManager.default.currentDirectoryPath
        return cwd.hasSuffix("/") ? cwd + path : cwd + "/" + path
    }

    /// A `file:` URL for `path` (made absolute with ``absolute(_:)`` first, so a leading `~` is a name like any
    /// other), for the Foundation calls that take only URLs (`Process.executableURL`, `Process.currentDirectoryURL`,
    /// `Data.write(to:)`).
    public static func fileURL(_ path: String, isDirectory: Bool = false) -> URL {
        URL(fileURLWithPath: absolute(path), isDirectory: isDirectory)
    }

    /// The folder part of `path`: "" for a bare name, "/" for a file in the root, trailing slashes ignored.
    /// `a/b/c` -> `a/b`, `c` -> ``, `/c` -> `/`, `a/b/` -> `a`.
    public static func parent(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        if slash == p.startIndex { return "/" }
        var head = p[..<slash]
        while head.count > 1 && head.hasSuffix("/") { head = head.dropLast() }
        return String(head)
    }

    /// The last component of `path`, trailing slashes ignored: `a/b.y4m` -> `b.y4m`, `b` -> `b`, `/` -> `/`.
    public static func fileName(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/"), p.count > 1 else { return String(p) }
        return String(p[p.index(after: slash)...])
    }

    /// `name` without its last extension: `q.sqlite` -> `q`, `a.b.c` -> `a.b`, `.hidden` -> `.hidden`, `x` -> `x`.
    public static func deletingExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex, !name[dot...].contains("/") else { return name }
        return String(name[..<dot])
    }

    /// The canonical absolute path of an existing file or folder (realpath(3): symbolic links, `.` and `..`
    /// resolved), or nil when it cannot be resolved (it does not exist, a folder on the way cannot be searched).
    public static func real(_ path: String) -> String? {
        guard let resolved = realpath(path.isEmpty ? "." : path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` with `.` components dropped and each `name/..` pair removed where `name` is a real folder, not a
    /// symbolic link (lstat(2), relative paths against the current folder), so the result names the file the
    /// system would open: `experiments/../fixtures/a.mp4` is recorded as `fixtures/a.mp4`, but with
    /// `link -> ../real/sub`, `link/../clip.y4m` (which the system reads as `real/clip.y4m`) is kept as it is.
    /// A `name` that does not exist is kept too (the system fails on it as it would). Relative paths stay relative.
    public static func normalized(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        func joined() -> String {
            let text = parts.joined(separator: "/")
            return absolute ? "/" + text : (text.isEmpty ? "." : text)
        }
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                var info = stat()
                if lstat(joined(), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                    parts.removeLast()
                    continue
                }
            }
            parts.append(part)
        }
        return joined()
    }
}
