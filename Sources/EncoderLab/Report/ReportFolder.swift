import Foundation

/// Where the report is written: a new hidden folder beside `--out`, moved into place once every page is written, so
/// nothing is written through a file or folder that was already there (a planted symbolic link), nothing is merged
/// into older content, and an interrupted or failed report leaves no half-written tree (the old report stays).
extension Report {
    /// The file every report holds at its top (its text says what wrote it): a folder holding it may be replaced by
    /// the next report to the same `--out`.
    public static let marker = ".enclab-report"

    /// Whether `out` exists as a folder the report may replace: false when nothing is there; true for a previous
    /// report (a folder, not a symbolic link, holding ``marker`` as a regular file) or an empty folder.
    /// - Throws: `.usage` for an `--out` whose last component is `.`, `..` or `/` (no folder of its own to replace);
    ///   `.cantCreate` naming `out` for anything else there: a symbolic link, a file, a folder with other content.
    static func replaceable(_ out: String) throws -> Bool {
        let name = Paths.fileName(out)
        if name.isEmpty || name == "." || name == ".." || name == "/" {
            throw LabError.usage("--out '\(out)': names no folder of its own; give a folder name (rep, results/q-report)")
        }
        var st = stat()
        if lstat(out, &st) != 0 {
            let code = errno
            if code == ENOENT { return false }
            throw LabError.cantCreate("\(out): cannot be used for the report: \(OutputFiles.reason(code))")
        }
        let refusal = "is not a previous enclab report (no \(marker) file in it): give a new folder, or remove it first"
        switch st.st_mode & S_IFMT {
        case S_IFLNK: throw LabError.cantCreate("\(out): is a symbolic link, and \(refusal)")
        case S_IFDIR: break
        default: throw LabError.cantCreate("\(out): exists and is not a folder, and \(refusal)")
        }
        var markerStat = stat()
        if lstat("\(out)/\(marker)", &markerStat) == 0, markerStat.st_mode & S_IFMT == S_IFREG { return true }
        let content: [String]
        do { content = try FileManager.default.contentsOfDirectory(atPath: out) } catch {
            throw LabError.cantCreate("\(out): cannot be read: \(error.localizedDescription)")
        }
        if content.isEmpty { return true }
        throw LabError.cantCreate("\(out): exists, and \(refusal)")
    }

    /// Creates the report's temporary folder beside `out` (same parent, so the final move is a rename; the parent and
    /// its missing parents are created): `.NAME.enclab-tmp-PID-XXXXXXXX`, made exclusively (mkdir(2)), so nothing
    /// in it was there before.
    /// - Throws: `.cantCreate` naming the folder that cannot be made; `.ioError` for a full disk.
    static func makeStaging(for out: String) throws -> String {
        let parent = Paths.parent(out)
        if !parent.isEmpty { try OutputFiles.makeDirectory(parent) }
        let name = ".\(Paths.fileName(out)).enclab-tmp-\(getpid())-\(UUID().uuidString.prefix(8))"
        let staging = parent.isEmpty ? name : parent == "/" ? "/\(name)" : "\(parent)/\(name)"
        try OutputFiles.makeNewDirectory(staging)
        return staging
    }

    /// Moves the finished report `staging` to `out`: renamed into place when nothing is there, exchanged
    /// atomically (renameat2 RENAME_EXCHANGE) with a previous report or empty folder (``replaceable(_:)``, checked
    /// again now), whose content is then removed.
    /// - Throws: `.cantCreate` naming `out` when something that may not be replaced is there now, or the move fails.
    static func place(_ staging: String, at out: String) throws {
        if try replaceable(out) {
            try OutputFiles.exchange(staging, out)
            OutputFiles.removeTree(staging)
        } else if try !OutputFiles.renameNoReplace(staging, out) {
            throw LabError.cantCreate("\(out): appeared while the report was written; nothing was replaced")
        }
    }

    /// Each experiment's folder name, unique among them and safe: a name that is a safe folder name
    /// (``safeFolder(_:)``) as it is; any other its letters, digits, `.`, `_` and `-` (other characters as `_`, leading
    /// dots dropped, at most 40; `experiment` when none is left), `-`, and the first 8 hex digits of the SHA-256 of the
    /// exact name (UTF-8). A name already taken (by an experiment named so) gets `-2`, `-3`, ... after it. `assets`
    /// (the charts' scripts) and `index.html` are never an experiment's folder: they are mapped like unsafe names.
    static func folderNames(_ names: [String]) -> [String: String] {
        var result: [String: String] = [:]
        // The report's own names at its top: the front page and the charts' scripts (``ChartPage/assets``).
        var taken: Set<String> = ["index.html", ChartPage.assets]
        for name in names { if let safe = safeFolder(name), !taken.contains(safe) { result[name] = safe; taken.insert(safe) } }
        for name in names.sorted() where result[name] == nil {
            let mapped = String(String.UnicodeScalarView(name.unicodeScalars.map { s in
                s.isASCII && (CharacterSet.alphanumerics.contains(s) || "._-".unicodeScalars.contains(s)) ? s : "_"
            }))
            var kept = String(mapped.drop { $0 == "." }.prefix(40))
            if kept.isEmpty { kept = "experiment" }
            let base = "\(kept)-\(SHA256.hex(of: name).prefix(8))"
            var folder = base, n = 1
            while taken.contains(folder) { n += 1; folder = "\(base)-\(n)" }
            result[name] = folder
            taken.insert(folder)
        }
        return result
    }
}
