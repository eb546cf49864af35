import Foundation

extension LabStore {
    /// Folds the write-ahead log into the database file and empties it (`PRAGMA wal_checkpoint(TRUNCATE)`), as a
    /// sweep does when it ends. Readers of other processes may keep it from completing; that is not an error.
    /// - Throws: the database's errors.
    public func checkpoint() throws {
        _ = try database.query("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// The tables whose rows belong to one run: every table of the open database with a `run_id` column, `runs`
    /// aside, in the order the schema made them (``runChildTables`` and any a later schema adds).
    /// - Throws: the database's errors.
    static func childTables(of database: Database) throws -> [String] {
        try database.rows("""
            SELECT m.name AS name FROM sqlite_master m WHERE m.type = 'table' AND m.name != 'runs'
              AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'run_id') ORDER BY m.rowid
            """).map { try $0.text("name") }
    }

    /// A table or column name as an SQL identifier: in double quotes, a double quote doubled.
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The columns of a table of the open database, in their order.
    static func columns(of table: String, in database: Database) throws -> [String] {
        try database.rows("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table)]).map { try $0.text("name") }
    }
}

/// What ``Merge/merge(inputs:into:)`` did.
public struct MergeReport: Sendable {
    /// Two done runs of one run key whose per-frame rows differ (x264 with several threads under VBV is not
    /// repeatable): the first stays `done`; the other is kept too, as a `failed` run whose error says so.
    public struct Conflict: Sendable, Equatable {
        public var runKey: String
        /// The input and its run id of the run kept `done`.
        public var keptInput: String
        public var keptRunID: Int64
        /// The input and its run id of the other run.
        public var otherInput: String
        public var otherRunID: Int64
        /// The other run's id in the merged database.
        public var storedRunID: Int64
    }

    /// Per input, in the order given: runs read, runs copied.
    public var inputs: [(path: String, runs: Int, copied: Int)] = []
    /// Runs left out because the merged database holds the same run already (a done run of the same key with the
    /// same per-frame rows, or another run whose every column but `run_id` is the same).
    public var duplicates = 0
    public var conflicts: [Conflict] = []
    /// Runs in the merged database.
    public var runs = 0
}

/// Combining the databases of a sweep's shards (or of any sweeps) into one, by run key.
public enum Merge {
    /// The text stored as the `error` of a done run kept as `failed` because its key was done already with other
    /// per-frame rows.
    static func conflictError(key: String, keptInput: String, keptRunID: Int64, input: String, runID: Int64) -> String {
        "merge conflict: run key \(key) is done in \(keptInput) (run \(keptRunID)) with other per-frame rows; this is run \(runID) of \(input), kept here as failed"
    }

    /// Writes a new database at `output` holding every run of `inputs` once.
    ///
    /// Inputs are read, never written (one of an older schema version is migrated in a temporary copy; a newer one
    /// is refused), in the order given, each run in `run_id` order. A run is copied with the rows of every table that
    /// has a `run_id` column (``LabStore/childTables(of:)``: those of today's schema and any a later one adds), under
    /// a new `run_id`; `clip_hashes` (a cache of this machine's files) is not copied. A done run whose key is done
    /// already in the merged database is left out when its `frames` rows (every column but `run_id`) are the same;
    /// otherwise it is a conflict: it is stored too, with its rows, as a `failed` run whose `error` names both runs
    /// (``MergeReport/conflicts``). Any other run (failed, or without a key) is left out only when a run with the same
    /// columns (but `run_id`) is there already. Stream paths are copied as they are: the run folders stay where the
    /// shards wrote them (they are named by run key, so the shards' output folders can be copied into one).
    ///
    /// The database is built under a temporary name beside `output` (`.NAME.merge-PID-RANDOM`), checkpointed, closed
    /// and renamed into place (`renameat2` with `RENAME_NOREPLACE`): `output` is either absent or whole.
    /// - Throws: `.usage` for no inputs or an `output` that exists; `.noInput` for a missing input or one that is not
    ///   a regular file; `.data` for an input that is not the lab's database or is of a newer schema version;
    ///   `.cantCreate`, `.ioError`, `.tempFail` from the databases; `.interrupted` after SIGINT/SIGTERM (nothing
    ///   left behind).
    public static func merge(inputs: [String], into output: String) throws -> MergeReport {
        guard !inputs.isEmpty else { throw LabError.usage("merge needs OUT.sqlite and at least one IN.sqlite") }
        try LabStore.checkPath(output, operand: "merge OUT.sqlite")
        if FileManager.default.fileExists(atPath: output) || (try? FileManager.default.destinationOfSymbolicLink(atPath: output)) != nil {
            throw LabError.usage("\(output): exists; merge writes a new database (name another or remove it)")
        }
        for input in inputs {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else { throw LabError(.noInput, "\(input): no such file") }
            guard !isFolder.boolValue, (try? FileManager.default.attributesOfItem(atPath: input)[.type] as? FileAttributeType) == .typeRegular else {
                throw LabError(.noInput, "\(input): not a regular file")
            }
        }
        let dir = Paths.parent(output).isEmpty ? "." : Paths.parent(output)
        let base = output.split(separator: "/").last.map(String.init) ?? output
        let tag = "\(getpid())-\(UUID().uuidString.prefix(8))"
        let temporary = "\(dir)/.\(base).merge-\(tag)"
        var scratch: [String] = [temporary]
        defer {
            for path in scratch { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        }
        let report: MergeReport = try {
            let store = try LabStore(path: temporary)
            let out = store.database
            let children = try LabStore.childTables(of: out)
            precondition(Set(children).isSuperset(of: LabStore.runChildTables), "every table of a run has a run_id column")
            let runColumns = try LabStore.columns(of: "runs", in: out).filter { $0 != "run_id" }
            var childColumns: [String: [String]] = [:]
            for table in children { childColumns[table] = try LabStore.columns(of: table, in: out) }
            var report = MergeReport()
            // Done runs by key: the per-frame digest and where the run came from; other runs by their columns.
            var doneByKey: [String: (digest: String, input: String, runID: Int64)] = [:]
            var others: Set<String> = []
            try out.transaction {
                for (n, input) in inputs.enumerated() {
                    let source = try openForMerge(input, scratch: "\(dir)/.\(base).merge-\(tag)-in\(n)", made: &scratch)
                    let sourceTables = Set(try source.rows("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0.text("name") })
                    let selectRun = runColumns.map(LabStore.quoted).joined(separator: ", ")
                    let insertRun = try out.prepare("""
                        INSERT INTO runs (\(selectRun)) VALUES (\(runColumns.map { _ in "?" }.joined(separator: ", "))) RETURNING run_id
                        """)
                    var inserts: [String: Statement] = [:]
                    for table in children where sourceTables.contains(table) {
                        let columns = childColumns[table]!
                        inserts[table] = try out.prepare("INSERT INTO \(LabStore.quoted(table)) (\(columns.map(LabStore.quoted).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))")
                    }
                    var read = 0, copied = 0
                    for run in try source.rows("SELECT run_id, \(selectRun) FROM runs ORDER BY run_id") {
                        try Interruption.check()
                        read += 1
                        let oldID = try run.integer("run_id")
                        var values = runColumns.map { run[$0] }
                        let key = run["run_key"].string
                        var conflict: (key: String, kept: (digest: String, input: String, runID: Int64))?
                        if run["status"].string == "done", let key {
                            let digest = try framesDigest(of: oldID, in: source, columns: childColumns["frames"]!)
                            if let kept = doneByKey[key] {
                                if kept.digest == digest { report.duplicates += 1; continue }
                                conflict = (key, kept)
                                values[runColumns.firstIndex(of: "status")!] = .text("failed")
                                values[runColumns.firstIndex(of: "error")!] = .text(conflictError(
                                    key: key, keptInput: kept.input, keptRunID: kept.runID, input: input, runID: oldID))
                            } else {
                                doneByKey[key] = (digest, input, oldID)
                            }
                        } else {
                            let identity = JSON.string(values.map(jsonValue))
                            if others.contains(identity) { report.duplicates += 1; continue }
                            others.insert(identity)
                        }
                        try insertRun.bind(values)
                        guard try insertRun.step(), let newID = insertRun.row().first?.int else {
                            throw LabError.software("\(temporary): INSERT INTO runs returned no run_id")
                        }
                        while try insertRun.step() {}
                        for table in children where sourceTables.contains(table) {
                            let columns = childColumns[table]!
                            let select = try source.prepare("SELECT \(columns.map(LabStore.quoted).joined(separator: ", ")) FROM \(LabStore.quoted(table)) WHERE run_id = ?")
                            try select.bind([.integer(oldID)])
                            let runIDColumn = columns.firstIndex(of: "run_id")!
                            while try select.step() {
                                var row = select.row()
                                row[runIDColumn] = .integer(newID)
                                try inserts[table]!.run(row)
                            }
                        }
                        if let conflict {
                            report.conflicts.append(.init(runKey: conflict.key, keptInput: conflict.kept.input, keptRunID: conflict.kept.runID,
                                                          otherInput: input, otherRunID: oldID, storedRunID: newID))
                        }
                        copied += 1
                    }
                    report.inputs.append((input, read, copied))
                }
                report.runs = Int(try out.query("SELECT count(*) FROM runs").first?.first?.int ?? 0)
            }
            try store.checkpoint()
            return report
        }()
        if try !OutputFiles.renameNoReplace(temporary, output) {
            throw LabError.usage("\(output): exists; merge writes a new database (name another or remove it)")
        }
        scratch.removeFirst()
        return report
    }

    /// An input opened for reading: as it is when it has this enclab's schema version; migrated in a copy at
    /// `scratch` (`VACUUM INTO`, then ``LabStore/init(path:busyTimeoutMilliseconds:)``) when it is older.
    /// - Throws: `.data` for a file that is not the lab's or is newer; the database's errors.
    private static func openForMerge(_ input: String, scratch: String, made: inout [String]) throws -> Database {
        let source = try Database.openForReading(LabStore.openingPath(input))
        guard case .lab(let version, _) = try LabStore.inspect(source) else {
            throw LabError.data("\(input): holds no enclab runs (an empty database)")
        }
        if version == LabStore.schemaVersion { return source }
        made.append(scratch)
        try source.prepare("VACUUM INTO ?").run([.text(scratch)])
        return try LabStore(path: scratch).database
    }

    /// The SHA-256 of a run's `frames` rows in coded order, every column but `run_id`: two done runs of one key
    /// with the same digest are the same run.
    private static func framesDigest(of runID: Int64, in database: Database, columns: [String]) throws -> String {
        let kept = columns.filter { $0 != "run_id" }
        let rows = try database.query("SELECT \(kept.map(LabStore.quoted).joined(separator: ", ")) FROM frames WHERE run_id = ? ORDER BY coded_index",
                                      [.integer(runID)])
        return SHA256.hex(of: JSON.string(rows.map { $0.map(jsonValue) }))
    }

    /// A stored value as JSON (NULL as null; a real as a JSON number, which keeps its 17 significant digits).
    private static func jsonValue(_ value: SQLValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .integer(let v): return v
        case .real(let v): return v.isFinite ? v as Any : "\(v)"
        case .text(let v): return v
        }
    }
}
