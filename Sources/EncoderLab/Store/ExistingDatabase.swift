import Foundation

extension LabStore {
    /// Checks that an existing database file is named, before anything opens it (opening would create it).
    /// - Throws: `.noInput` "PATH: no such database" or "PATH: is a folder, not a database".
    public static func requireDatabaseFile(_ path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw LabError.noInput("\(path): no such database")
        }
        if isFolder.boolValue { throw LabError.noInput("\(path): is a folder, not a database") }
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
        let database = try Database(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, readOnly: true)
        if try inspect(database) == .new {
            throw LabError.data("\(path): not an enclab database (no tables: an empty file or an empty SQLite database)")
        }
    }
}
