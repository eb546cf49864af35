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
    /// Two done runs of one run key whose per-frame rows differ although the key's encode is repeatable (or its
    /// repeatability is not recorded): the first stays `done`; the other is kept too, as a `failed` run whose error
    /// says so. Runs that are not repeatable are ``Repeat``s instead.
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

    /// A done run of one run key stored beside another done run of that key with other per-frame rows, both done:
    /// the key's encode is not repeatable (`runs.repeatable` 0, ``Repeatability``), so the two are repeats.
    public struct Repeat: Sendable, Equatable {
        public var runKey: String
        /// The input and its run id of the run stored first.
        public var firstInput: String
        public var firstRunID: Int64
        /// The input and its run id of this repeat.
        public var input: String
        public var runID: Int64
        /// The repeat's id in the merged database.
        public var storedRunID: Int64
    }

    /// A run of an input that the merged database stores as `failed` because its rows are damaged: a done run
    /// with no frames, a frame whose size, PTS or DTS is not an integer in the range every reader holds them to, a
    /// `runs` column not of its kind, a BLOB, or a row the schema refuses. Its rows are not copied; a done run of its key found elsewhere stays done.
    public struct Damaged: Sendable, Equatable {
        public var input: String
        public var runID: Int64
        /// What is wrong, naming the row and column.
        public var reason: String
        /// The run's id in the merged database (a `failed` run whose error says why).
        public var storedRunID: Int64
    }

    /// Per input, in the order given: runs read, runs copied.
    public var inputs: [(path: String, runs: Int, copied: Int)] = []
    /// Done runs kept beside another done run of their key as repeats (not conflicts).
    public var repeats: [Repeat] = []
    /// Runs stored as failed because their rows are damaged.
    public var damaged: [Damaged] = []
    /// Temporary files of earlier merges that were killed, removed before this one (``Merge/removeStale(in:)``).
    public var staleRemoved: [String] = []
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
    /// otherwise, when the key's encode is not repeatable (`runs.repeatable` 0, ``Repeatability``), it is stored
    /// done too, a repeat (``MergeReport/repeats``); else it is a conflict: it is stored too, with its rows, as a
    /// `failed` run whose `error` names both runs (``MergeReport/conflicts``). Any other run (failed, or without a
    /// key) is left out only when a run with the same columns (but `run_id`) is there already. Stream paths are
    /// copied as they are: the run folders stay where the shards wrote them (they are named by run key, so the
    /// shards' output folders can be copied into one; repeats of one key name the same folder of their shards).
    ///
    /// Each run's `repeatable` is worked out again from its `settings` (``Repeatability/reason(settingsJSON:)``, as
    /// the migration to schema 7 does), never taken as stored. A done run is checked before it counts as done: a
    /// `runs` row with a column not of its kind (``runRowDamage(_:storageClasses:columns:declared:)``), no frames,
    /// or a frame whose `size_bytes`, `pts` or `dts` is not an integer within the ranges every reader holds them to
    /// (``RunPlotInput/checkFrame(codedIndex:sizeBytes:pts:dts:runID:database:use:)``), a BLOB in a row of any of its tables
    /// (``damage(of:in:runFrames:tables:columns:)``), or whose rows the merged database's
    /// schema refuses (a CHECK or NOT NULL broken), is stored as a `failed` run whose error names the input, its run
    /// and what is wrong, without its rows (``MergeReport/damaged``); it never makes a done copy of its key elsewhere
    /// a conflict.
    ///
    /// The database is built under a temporary name beside `output` (`.NAME.merge-PID-RANDOM`), checkpointed, closed
    /// and renamed into place (`renameat2` with `RENAME_NOREPLACE`): `output` is either absent or whole. The temporary
    /// files of an earlier merge that was killed are removed first (``removeStale(in:)``).
    /// - Throws: `.usage` for no inputs or an `output` that exists; `.noInput` for a missing input or one that is not
    ///   a regular file; `.data` for an input that is not the lab's database or is of a newer schema version;
    ///   `.data` for an input run whose `runs` row the schema refuses (naming the input and run);
    ///   `.cantCreate`, `.ioError`, `.tempFail` from the databases (an input's errors name the input, never the
    ///   temporary copy); `.interrupted` after SIGINT/SIGTERM (nothing left behind).
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
        let stale = removeStale(in: dir)
        let tag = "\(getpid())-\(UUID().uuidString.prefix(8))"
        let temporary = "\(dir)/.\(base).merge-\(tag)"
        var scratch: [String] = [temporary]
        defer {
            for path in scratch { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        }
        // What an error of the temporary files names instead: the output being written, or the input copied.
        var names: [(temporary: String, shown: String)] = [(temporary, output)]
        func named(_ error: Error) -> Error {
            guard let e = error as? LabError else { return error }
            var message = e.message
            // The longest name first: an input's copy `.NAME.merge-TAG-in0` begins with the output's temporary name.
            for (path, shown) in names.sorted(by: { $0.temporary.count > $1.temporary.count }) {
                message = message.replacingOccurrences(of: path, with: shown)
            }
            return LabError(e.kind, message)
        }
        let report: MergeReport
        do {
            report = try {
                let store = try LabStore(path: temporary)
                let out = store.database
                let children = try LabStore.childTables(of: out)
                precondition(Set(children).isSuperset(of: LabStore.runChildTables), "every table of a run has a run_id column")
                let runColumns = try LabStore.columns(of: "runs", in: out).filter { $0 != "run_id" }
                let runTypes = Dictionary(uniqueKeysWithValues: try out.rows("SELECT name, type FROM pragma_table_info('runs')").map {
                    (try $0.text("name"), try $0.text("type").uppercased())
                })
                var childColumns: [String: [String]] = [:]
                for table in children { childColumns[table] = try LabStore.columns(of: table, in: out) }
                var report = MergeReport()
                report.staleRemoved = stale
                // Done runs by key: the per-frame digests stored (several for the repeats of a run that is not
                // repeatable) and where the first came from; other runs by their columns.
                var doneByKey: [String: (digests: Set<String>, input: String, runID: Int64)] = [:]
                var others: Set<String> = []
                try out.transaction {
                    for (n, input) in inputs.enumerated() {
                        let copy = "\(dir)/.\(base).merge-\(tag)-in\(n)"
                        names.append((copy, input))
                        let source = try openForMerge(input, scratch: copy, made: &scratch)
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
                        /// Inserts a runs row, returning its new id.
                        func insert(_ values: [SQLValue]) throws -> Int64 {
                            try insertRun.bind(values)
                            guard try insertRun.step(), let newID = insertRun.row().first?.int else {
                                throw LabError.software("\(temporary): INSERT INTO runs returned no run_id")
                            }
                            while try insertRun.step() {}
                            return newID
                        }
                        let status = runColumns.firstIndex(of: "status")!, errorColumn = runColumns.firstIndex(of: "error")!
                        /// Stores a damaged run as failed, without its rows; false when it is there already.
                        func storeDamaged(_ values: [SQLValue], oldID: Int64, reason: String) throws -> Bool {
                            var values = values
                            values[status] = .text("failed")
                            values[errorColumn] = .text(damagedError(input: input, runID: oldID, reason: reason))
                            // The same damaged run given twice (one input named twice) is stored once.
                            let identity = JSON.string(values.map(jsonValue))
                            if others.contains(identity) { report.duplicates += 1; return false }
                            others.insert(identity)
                            report.damaged.append(.init(input: input, runID: oldID, reason: reason, storedRunID: try insert(values)))
                            return true
                        }
                        var read = 0, copied = 0
                        let storageClasses = runColumns.map { "typeof(\(LabStore.quoted($0)))" }.joined(separator: ", ")
                        for run in try source.rows("SELECT run_id, \(selectRun) FROM runs ORDER BY run_id") {
                            try Interruption.check()
                            read += 1
                            let oldID = try run.integer("run_id")
                            var values = runColumns.map { run[$0] }
                            // Never the stored value: worked out again from the run's settings, as the migration does.
                            if let repeatable = runColumns.firstIndex(of: "repeatable") {
                                let found = run["settings"].string.flatMap { Repeatability.reason(settingsJSON: $0) }
                                values[repeatable] = found.map { .integer($0.repeatable ? 1 : 0) } ?? .null
                            }
                            let key = run["run_key"].string
                            if run["status"].string == "done" {
                                let classes = try source.query("SELECT \(storageClasses) FROM runs WHERE run_id = ?", [.integer(oldID)]).first?
                                    .map { $0.string ?? "null" } ?? []
                                if let reason = try runRowDamage(values, storageClasses: classes, columns: runColumns, declared: runTypes)
                                    ?? damage(of: oldID, in: source, runFrames: run["frames"], tables: children.filter(sourceTables.contains), columns: childColumns) {
                                    if try storeDamaged(values, oldID: oldID, reason: reason) { copied += 1 }
                                    continue
                                }
                            }
                            var conflict: (key: String, kept: (digests: Set<String>, input: String, runID: Int64))?
                            var repeatOf: (digests: Set<String>, input: String, runID: Int64)?
                            var digest: String?
                            if run["status"].string == "done", let key {
                                let d = try framesDigest(of: oldID, in: source, columns: childColumns["frames"]!)
                                if let kept = doneByKey[key] {
                                    if kept.digests.contains(d) { report.duplicates += 1; continue }
                                    if values[runColumns.firstIndex(of: "repeatable")!] == .integer(0) {
                                        repeatOf = kept
                                        digest = d
                                    } else {
                                        conflict = (key, kept)
                                        values[status] = .text("failed")
                                        values[errorColumn] = .text(conflictError(
                                            key: key, keptInput: kept.input, keptRunID: kept.runID, input: input, runID: oldID))
                                    }
                                } else {
                                    digest = d
                                }
                            } else {
                                let identity = JSON.string(values.map(jsonValue))
                                if others.contains(identity) { report.duplicates += 1; continue }
                                others.insert(identity)
                            }
                            // One savepoint per run: rows the merged database's schema refuses undo the run's copy,
                            // and the run is stored as damaged instead.
                            try out.execute("SAVEPOINT merge_run")
                            let newID: Int64
                            do {
                                do {
                                    newID = try insert(values)
                                } catch let e as LabError where e.kind == .software || e.kind == .data {
                                    // The runs row itself is refused: the run cannot even be stored as failed.
                                    throw LabError.data("\(input): run \(oldID): its runs row is refused by the schema (damaged): \(refusal(e, temporary: temporary))")
                                }
                                for table in children where sourceTables.contains(table) {
                                    let columns = childColumns[table]!
                                    let select = try source.prepare("SELECT \(columns.map(LabStore.quoted).joined(separator: ", ")) FROM \(LabStore.quoted(table)) WHERE run_id = ?")
                                    try select.bind([.integer(oldID)])
                                    let runIDColumn = columns.firstIndex(of: "run_id")!
                                    while try select.step() {
                                        var row = select.row()
                                        row[runIDColumn] = .integer(newID)
                                        do {
                                            try inserts[table]!.run(row)
                                        } catch let e as LabError where e.kind == .software || e.kind == .data {
                                            throw Refused(reason: "a row of \(table) is refused by the schema: " + refusal(e, temporary: temporary))
                                        }
                                    }
                                }
                                try out.execute("RELEASE merge_run")
                            } catch let refused as Refused {
                                try out.execute("ROLLBACK TO merge_run")
                                try out.execute("RELEASE merge_run")
                                if try storeDamaged(runColumns.map { run[$0] }, oldID: oldID, reason: refused.reason) { copied += 1 }
                                continue
                            }
                            if let key, let digest {
                                if doneByKey[key] == nil { doneByKey[key] = ([digest], input, oldID) } else { doneByKey[key]!.digests.insert(digest) }
                            }
                            if let conflict {
                                report.conflicts.append(.init(runKey: conflict.key, keptInput: conflict.kept.input, keptRunID: conflict.kept.runID,
                                                              otherInput: input, otherRunID: oldID, storedRunID: newID))
                            }
                            if let repeatOf, let key {
                                report.repeats.append(.init(runKey: key, firstInput: repeatOf.input, firstRunID: repeatOf.runID,
                                                            input: input, runID: oldID, storedRunID: newID))
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
        } catch {
            throw named(error)
        }
        if try !OutputFiles.renameNoReplace(temporary, output) {
            throw LabError.usage("\(output): exists; merge writes a new database (name another or remove it)")
        }
        scratch.removeFirst()
        return report
    }

    /// A run's rows that the merged database's schema refused (``merge(inputs:into:)`` stores the run as damaged).
    private struct Refused: Error { var reason: String }

    /// SQLite's reason in a refusal of the temporary database, without its path, result code and statement.
    private static func refusal(_ error: LabError, temporary: String) -> String {
        var reason = Substring(error.message)
        if reason.hasPrefix(temporary + ": ") { reason = reason.dropFirst(temporary.count + 2) }
        if let code = reason.range(of: " (SQLite code ") { reason = reason[..<code.lowerBound] }
        return String(reason)
    }

    /// The text stored as the `error` of a damaged input run.
    static func damagedError(input: String, runID: Int64, reason: String) -> String {
        "damaged: run \(runID) of \(input) is done there, but \(reason); stored here as failed, without its rows"
    }

    /// The columns of a done run's `runs` row that its readers need (``LabStore/insertRun``'s `.done` always
    /// writes them).
    static let requiredOfDone: Set<String> = ["frames", "bytes", "duration_s", "timebase_num", "timebase_den"]

    /// The `runs` columns holding JSON, and what each holds: `settings` and `machine` an object, `warnings` an array.
    static let jsonColumns: [String: String] = ["settings": "object", "machine": "object", "warnings": "array"]

    /// What is wrong with a done run's `runs` row, or nil: one check per kind of column, by its declared type in the
    /// merged database's schema. No column holds a BLOB (the lab stores none; SQLite's storage class, `typeof`); an
    /// INTEGER column holds a non-negative integer, a REAL one a finite non-negative number, a JSON column
    /// (``jsonColumns``) JSON of its kind; each may be NULL but ``requiredOfDone``. (The run key's format, 64
    /// lowercase hex digits, is the schema's CHECK: a runs row that breaks it is refused.)
    /// - Parameter storageClasses: `typeof` of each column, in `columns`' order.
    static func runRowDamage(_ values: [SQLValue], storageClasses: [String], columns: [String], declared: [String: String]) -> String? {
        for (n, column) in columns.enumerated() {
            let value = values[n], storage = n < storageClasses.count ? storageClasses[n] : "null"
            if storage == "blob" { return "runs.\(column) is a BLOB, not \(kind(of: column, declared: declared))" }
            if value == .null {
                if requiredOfDone.contains(column) { return "runs.\(column) is NULL, not \(kind(of: column, declared: declared))" }
                continue
            }
            switch declared[column] {
            case "INTEGER":
                guard case .integer(let v) = value else { return "runs.\(column) is \(shown(value)), not an integer" }
                if v < 0 { return "runs.\(column) is \(v), not a non-negative integer" }
            case "REAL":
                guard let v = value.double else { return "runs.\(column) is \(shown(value)), not a number" }
                if !v.isFinite || v < 0 { return "runs.\(column) is \(v), not a finite non-negative number" }
            default:
                guard let kind = jsonColumns[column] else { continue }
                let parsed = value.string.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
                let fits = kind == "object" ? parsed is [String: Any] : parsed is [Any]
                if !fits { return "runs.\(column) is \(shown(value)), not a JSON \(kind)" }
            }
        }
        return nil
    }

    /// What a `runs` column holds, as ``runRowDamage(_:storageClasses:columns:declared:)`` says it.
    private static func kind(of column: String, declared: [String: String]) -> String {
        if let json = jsonColumns[column] { return "a JSON \(json)" }
        switch declared[column] {
        case "INTEGER": return "an integer"
        case "REAL": return "a number"
        default: return "text"
        }
    }

    /// What is wrong with a done run's rows in an input, or nil when they can be trusted: no frames, a `runs.frames`
    /// that is not the number of its frames rows, a frame whose `size_bytes`, `pts` or `dts` is not an integer
    /// within ``RunPlotInput/checkFrame(codedIndex:sizeBytes:pts:dts:runID:database:use:)``'s ranges (0 ... 2^40 bytes;
    /// ±2^60 ticks), or a BLOB in any column of a row of `tables` (the lab stores none).
    /// Frames rows are read one at a time.
    /// - Throws: the database's errors (a damaged file).
    static func damage(of runID: Int64, in database: Database, runFrames: SQLValue, tables: [String] = [], columns: [String: [String]] = [:]) throws -> String? {
        let select = try database.prepare("""
            SELECT coded_index, size_bytes, pts, dts, typeof(coded_index), typeof(size_bytes), typeof(pts), typeof(dts)
              FROM frames WHERE run_id = ? ORDER BY coded_index
            """)
        try select.bind([.integer(runID)])
        var count: Int64 = 0
        while try select.step() {
            let row = select.row()
            count += 1
            let storage = row[4...].map { $0.string ?? "null" }
            guard case .integer(let index) = row[0] else { return "a frame's coded_index is \(shown(row[0], storage: storage[0])), not an integer" }
            for (n, column) in ["size_bytes", "pts", "dts"].enumerated() {
                guard case .integer = row[1 + n] else { return "frame coded_index \(index): \(column) is \(shown(row[1 + n], storage: storage[1 + n])), not an integer" }
            }
            guard case .integer(let size) = row[1], case .integer(let pts) = row[2], case .integer(let dts) = row[3] else { continue }
            do {
                try FrameRanges.check(codedIndex: index, sizeBytes: size, pts: pts, dts: dts, runID: runID, database: nil, use: "merged")
            } catch let e as LabError {
                // "run N: frame coded_index C: ..." without the run, which the stored error names with its input.
                return e.message.hasPrefix("run \(runID): ") ? String(e.message.dropFirst("run \(runID): ".count)) : e.message
            }
        }
        if count == 0 { return "it has no frames" }
        if runFrames != .integer(count) { return "runs.frames is \(shown(runFrames)) where \(count) frames rows are stored" }
        for table in tables {
            let names = (columns[table] ?? []).filter { $0 != "run_id" }
            guard !names.isEmpty else { continue }
            let found = try database.query("SELECT \(names.map { "max(typeof(\(LabStore.quoted($0))) = 'blob')" }.joined(separator: ", ")) FROM \(LabStore.quoted(table)) WHERE run_id = ?",
                                           [.integer(runID)]).first ?? []
            if let n = found.firstIndex(of: .integer(1)) { return "a row of \(table) holds a BLOB in \(names[n]), which the lab never stores" }
        }
        return nil
    }

    /// A stored value as a message shows it: text quoted and cut at 40 characters; `storage` is its SQLite storage
    /// class (`typeof`), which names a BLOB.
    private static func shown(_ value: SQLValue, storage: String? = nil) -> String {
        if storage == "blob" { return "a BLOB" }
        switch value {
        case .null: return "NULL"
        case .integer(let v): return "\(v)"
        case .real(let v): return "the real \(v)"
        case .text(let v): return "the text '\(v.count > 40 ? String(v.prefix(40)) + "..." : v)'"
        case .blob(let v): return "a BLOB of \(v.count) bytes"
        }
    }

    /// Removes the temporary files of merges that were killed from `dir`: only regular files whose whole name is
    /// one ``merge(inputs:into:)`` gives (`.NAME.merge-PID-XXXXXXXX`, with `-inN` for an input's copy, and SQLite's
    /// `-wal`, `-shm` or `-journal` beside it; XXXXXXXX eight uppercase hex digits) and whose PID is no running
    /// process (`kill(PID, 0)` fails with ESRCH). Nothing else is touched; what cannot be removed stays.
    /// - Returns: the paths removed.
    static func removeStale(in dir: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        var removed: [String] = []
        for name in names.sorted() {
            guard let pid = stalePID(name), kill(pid, 0) != 0, errno == ESRCH else { continue }
            let path = "\(dir)/\(name)"
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            if unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }

    /// The PID in a name of merge's temporary files (``removeStale(in:)``), or nil for any other name.
    static func stalePID(_ name: String) -> pid_t? {
        var rest = Substring(name)
        for suffix in ["-wal", "-shm", "-journal"] where rest.hasSuffix(suffix) { rest = rest.dropLast(suffix.count); break }
        // An input's copy: -inN.
        if let r = rest.range(of: "-in", options: .backwards), !rest[r.upperBound...].isEmpty, rest[r.upperBound...].allSatisfy(\.isASCII),
           rest[r.upperBound...].allSatisfy(\.isNumber) {
            rest = rest[..<r.lowerBound]
        }
        guard rest.hasPrefix("."), let marker = rest.range(of: ".merge-", options: .backwards), marker.lowerBound > rest.index(after: rest.startIndex) else {
            return nil
        }
        let parts = rest[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 8, parts[1].allSatisfy({ $0.isASCII && $0.isHexDigit && !$0.isLowercase }),
              !parts[0].isEmpty, parts[0].count <= 10, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }),
              let pid = Int32(parts[0]), pid > 0 else { return nil }
        return pid
    }

    /// An input opened for reading: as it is when it has this enclab's schema version; migrated in a copy at
    /// `scratch` (`VACUUM INTO`, then ``LabStore/init(path:busyTimeoutMilliseconds:)``) when it is older.
    /// - Throws: `.data` for a file that is not the lab's or is newer, or one whose rows its migration refuses; the
    ///   database's errors.
    private static func openForMerge(_ input: String, scratch: String, made: inout [String]) throws -> Database {
        let source = try Database.openForReading(LabStore.openingPath(input))
        guard case .lab(let version, _) = try LabStore.inspect(source) else {
            throw LabError.data("\(input): holds no enclab runs (an empty database)")
        }
        if version == LabStore.schemaVersion { return source }
        made.append(scratch)
        try source.prepare("VACUUM INTO ?").run([.text(scratch)])
        do {
            return try LabStore(path: scratch).database
        } catch let e as LabError where e.kind == .software {
            // A row the migration's copy refuses: the input is damaged (the caller names it instead of the copy).
            throw LabError.data("\(scratch): cannot be migrated to schema version \(LabStore.schemaVersion) (damaged): " + e.message.replacingOccurrences(of: scratch + ": ", with: ""))
        }
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
        case .blob(let v): return ["blob": v.map { String(format: "%02x", $0) }.joined()]
        }
    }
}
