import Foundation

extension LabStore {
    /// Checks that an existing database file is named, before anything opens it (opening would create it).
    /// Anything but a regular file (symbolic links followed) is refused too, before SQLite opens it: a device
    /// (`/dev/null`, `/dev/full`), a fifo (whose opening would wait for a writer) or a socket, which SQLite would
    /// read as an empty database.
    /// - Throws: `.noInput` "PATH: no such database", "PATH: is a folder, not a database" or "PATH: is a character
    ///   device, not a database file" (a block device, a fifo, a socket).
    public static func requireDatabaseFile(_ path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw LabError.noInput("\(path): no such database")
        }
        if isFolder.boolValue { throw LabError.noInput("\(path): is a folder, not a database") }
        if let kind = notRegularFile(path) { throw LabError.noInput("\(path): is \(kind), not a database file") }
    }

    /// What is at `path` (symbolic links followed) when it exists and is not a regular file ("a character device",
    /// "a block device", "a fifo", "a socket", "a folder"); nil for a regular file or nothing there.
    static func notRegularFile(_ path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a fifo"
        case S_IFSOCK: return "a socket"
        case S_IFDIR: return "a folder"
        default: return "not a regular file"
        }
    }

    /// Opens an existing database to read only (`plot`, `report`, `check --run`, `compare`, `export`, `rtp`): never
    /// written, wherever it is, and never migrated in place (an older enclab must still be able to open it). It is
    /// opened with ``Database/openForReading(_:shownPath:busyTimeoutMilliseconds:)`` and read as it is when it has this
    /// enclab's schema, or copied (`VACUUM INTO`) to a temporary file that is migrated, as `compare` reads an older
    /// database (the copy is removed when the store is released).
    /// - Throws: as ``init(path:busyTimeoutMilliseconds:)``, but never `.cantCreate` for a database that can be read;
    ///   `.noInput` for a path where there is no file (nothing is created).
    public static func reading(path: String) throws -> LabStore {
        try checkPath(path)
        guard FileManager.default.fileExists(atPath: path) else {
            throw LabError.noInput("\(path): no such database")
        }
        let source = try Database.openForReading(openingPath(path), shownPath: path)
        guard case .lab(let version, let complete) = try inspect(source) else {
            throw LabError.data("\(path): not an enclab database (no tables: an empty file or an empty SQLite database)")
        }
        if version == schemaVersion && complete {
            try source.execute("PRAGMA foreign_keys=ON;")
            return LabStore(database: source)
        }
        let copy = NSTemporaryDirectory() + "enclab-read-\(getpid())-\(UUID().uuidString.prefix(8)).sqlite"
        do {
            try source.prepare("VACUUM INTO ?").run([.text(copy)])
            let store = try LabStore(path: copy)
            store.scratch = copy
            return store
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(copy + suffix) }
            throw error
        }
    }

    /// Checks, by reading only, that the existing file at `path` is an enclab database (of any version this enclab
    /// knows), before anything opens it for writing: `enclab plot` reads a database and must not turn an empty
    /// file, or an SQLite file without tables, into one.
    ///
    /// The file is opened with `SQLITE_OPEN_READONLY` and inspected as ``init(path:busyTimeoutMilliseconds:)``
    /// inspects it; nothing is written to it or beside it.
    /// - Parameter busyTimeoutMilliseconds: as for ``init(path:busyTimeoutMilliseconds:)``.
    /// - Throws: `.data` "PATH: not an enclab database (...)" for an empty file, an SQLite file without tables or
    ///   with tables that are not the lab's, and for a file that is not SQLite or is damaged, or of a newer schema
    ///   version; `.cantCreate` when SQLite cannot open it (no read permission); `.tempFail` when it is locked past
    ///   the busy timeout; `.usage` for a bad `ENCLAB_DB_TIMEOUT_MS`.
    public static func requireLabDatabase(path: String, busyTimeoutMilliseconds: Int32? = nil) throws {
        let database = try Database.openForReading(path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        if try inspect(database) == .new {
            throw LabError.data("\(path): not an enclab database (no tables: an empty file or an empty SQLite database)")
        }
    }
}
