/// Path arithmetic on strings, without Foundation's NSString path methods: in the Foundation of Swift 6.3.1 on Linux,
/// `("r" as NSString).deletingLastPathComponent` traps (SIGILL) for any one-character relative path, so a database,
/// experiment file or output folder named with one letter crashed the lab.
public enum Paths {
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
}
