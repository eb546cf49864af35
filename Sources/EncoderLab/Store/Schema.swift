import Foundation

/// The database's schema, by version (docs/schema.md). The version is kept in `PRAGMA user_version`;
/// ``LabStore/migrations`` take a file of an older version to ``LabStore/schemaVersion``. Each version's SQL is
/// literal and frozen, in SchemaVersions.swift.
extension LabStore {
    /// The schema's version, kept in `PRAGMA user_version`: 9 is ``schema``. Versions 1 to 9 are ``schemaVersion1``
    /// ... ``schemaVersion9``; version 0 (no user_version, commit aef06d9 and before) has the tables of version 1.
    public static let schemaVersion: Int32 = 9

    /// The error a run that was `running` when an older enclab stopped is marked `failed` with, on migration.
    public static let interruptedRunError = "interrupted (found running when the database was opened)"

    /// The schema of version ``schemaVersion``, as a new database gets it; every statement `IF NOT EXISTS`.
    static let schema = schemaVersion9

    /// What a schema holds, read from it in an in-memory database: each table's columns in order, and the
    /// names of its tables and indexes (SQLite's own `sqlite_*` objects left out).
    struct SchemaShape: Sendable {
        var columns: [String: [String]]
        var indexes: Set<String>
        var tables: Set<String> { Set(columns.keys) }

        init(_ sql: String) {
            do {
                let memory = try Database(path: ":memory:", busyTimeoutMilliseconds: 0)
                try memory.execute(sql)
                var columns: [String: [String]] = [:], indexes: Set<String> = []
                for row in try memory.rows("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'") {
                    let name = try row.text("name")
                    if try row.text("type") == "index" { indexes.insert(name); continue }
                    columns[name] = try memory.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(name)])
                        .map { try $0.text("name") }
                }
                self.columns = columns
                self.indexes = indexes
            } catch {
                preconditionFailure("the lab's own schema does not load: \(error)")
            }
        }
    }

    /// The tables, columns and indexes of version 9, 8, 7, 6, 5, 4, 3, 2 and 1 (which version 0 has too).
    static let shapeVersion9 = SchemaShape(schema)
    static let shapeVersion8 = SchemaShape(schemaVersion8)
    static let shapeVersion7 = SchemaShape(schemaVersion7)
    static let shapeVersion6 = SchemaShape(schemaVersion6)
    static let shapeVersion5 = SchemaShape(schemaVersion5)
    static let shapeVersion4 = SchemaShape(schemaVersion4)
    static let shapeVersion3 = SchemaShape(schemaVersion3)
    static let shapeVersion2 = SchemaShape(schemaVersion2)
    static let shapeVersion1 = SchemaShape(schemaVersion1)

    /// The shape a file of `version` (0 ... ``schemaVersion``) must have.
    static func shape(ofVersion version: Int64) -> SchemaShape {
        version >= 9 ? shapeVersion9 : version == 8 ? shapeVersion8 : version == 7 ? shapeVersion7 : version == 6 ? shapeVersion6 : version == 5 ? shapeVersion5 : version == 4 ? shapeVersion4 : version == 3 ? shapeVersion3
            : version == 2 ? shapeVersion2 : shapeVersion1
    }
}
