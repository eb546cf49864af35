import Foundation

/// The database's schema, by version (README, "Database schema"). The version is kept in `PRAGMA user_version`;
/// ``LabStore/migrations`` take a file of an older version to ``LabStore/schemaVersion``.
extension LabStore {
    /// The schema's version, kept in `PRAGMA user_version`: 7 is ``schema``. Version 6 is ``schemaVersion6``,
    /// version 5 ``schemaVersion5``,
    /// version 4 ``schemaVersion4``,
    /// version 3 ``schemaVersion3``,
    /// version 2 ``schemaVersion2``, version 1 ``schemaVersion1``; version 0 (no user_version, commit aef06d9 and
    /// before) has the tables of version 1.
    public static let schemaVersion: Int32 = 7

    /// The error a run that was `running` when an older enclab stopped is marked `failed` with, on migration.
    public static let interruptedRunError = "interrupted (found running when the database was opened)"

    /// The `runs` table of versions 2 and 3 named `name` (the migration to 2 builds it as `new_runs`, then renames it).
    /// `run_key` and `clip_sha256` are lowercase hex SHA-256 digests (64 digits) or NULL; `x264_version` may be
    /// NULL (a stream that x264 did not make). Version 7 adds `repeatable` (``migrateAddRepeatable(_:)``): `repeatable`
    /// false gives the table of versions 2 to 6.
    static func runsTable(_ name: String, ifNotExists: Bool, repeatable: Bool = false) -> String {
        """
        CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (
            run_id          INTEGER PRIMARY KEY AUTOINCREMENT,
            run_key         TEXT CHECK (run_key IS NULL OR (length(run_key) = 64 AND run_key NOT GLOB '*[^0-9a-f]*')),
            experiment      TEXT NOT NULL,
            clip            TEXT NOT NULL,
            clip_sha256     TEXT CHECK (clip_sha256 IS NULL OR (length(clip_sha256) = 64 AND clip_sha256 NOT GLOB '*[^0-9a-f]*')),
            settings        TEXT NOT NULL,
            status          TEXT NOT NULL CHECK (status IN ('done', 'failed')),
            frames          INTEGER,
            bytes           INTEGER,
            duration_s      REAL,
            timebase_num    INTEGER,
            timebase_den    INTEGER,
            stream_path     TEXT,
            crop            TEXT,
            x264_version    TEXT,
            lab_version     TEXT NOT NULL,
            ffmpeg_version  TEXT,
            machine         TEXT NOT NULL,
            created_at      TEXT NOT NULL,
            finished_at     TEXT,
            width           INTEGER,
            height          INTEGER,
            fps_num         INTEGER,
            fps_den         INTEGER,
            input_frames    INTEGER,
            truncated_bytes INTEGER,
            warnings        TEXT,
            error           TEXT\(repeatable ? ",\n            repeatable      INTEGER CHECK (repeatable IN (0, 1))" : "")
        );
        """
    }

    /// The `frames` table of version 2 named `name`: `qp` may be NULL (a stream that x264 did not make); `psnr_*`
    /// are x264's.
    static func framesTableVersion2(_ name: String, ifNotExists: Bool) -> String {
        """
        CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (
            run_id        INTEGER NOT NULL REFERENCES runs(run_id),
            coded_index   INTEGER NOT NULL,
            display_index INTEGER NOT NULL,
            type          TEXT NOT NULL CHECK (type IN ('IDR', 'I', 'P', 'Bref', 'B')),
            keyframe      INTEGER NOT NULL,
            size_bytes    INTEGER NOT NULL,
            header_bytes  INTEGER NOT NULL,
            filler_bytes  INTEGER NOT NULL,
            pts           INTEGER NOT NULL,
            dts           INTEGER NOT NULL,
            qp            REAL,
            psnr_y        REAL,
            psnr_u        REAL,
            psnr_v        REAL,
            psnr_avg      REAL,
            ssim          REAL,
            PRIMARY KEY (run_id, coded_index)
        );
        """
    }

    /// The `frames` table of version 3 named `name` (the migration builds it as `new_frames`, then renames it):
    /// `sse_*` the lab's squared error per plane (NULL without an independent decode), `psnr_*` derived from it
    /// (NULL where it is 0 or NULL), x264's reported PSNRs in `x264_psnr_*`, `x264_psnr_differs` whether they
    /// stand for another error (NULL with `sse_*`). README, "Database schema".
    /// Version 4 adds `input_pts` (``migrateAddTimestamps(_:)``): `inputPTS` false gives the table of version 3.
    static func framesTable(_ name: String, ifNotExists: Bool, inputPTS: Bool = true) -> String {
        """
        CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (
            run_id            INTEGER NOT NULL REFERENCES runs(run_id),
            coded_index       INTEGER NOT NULL,
            display_index     INTEGER NOT NULL,
            type              TEXT NOT NULL CHECK (type IN ('IDR', 'I', 'P', 'Bref', 'B')),
            keyframe          INTEGER NOT NULL,
            size_bytes        INTEGER NOT NULL,
            header_bytes      INTEGER NOT NULL,
            filler_bytes      INTEGER NOT NULL,
            pts               INTEGER NOT NULL,
            dts               INTEGER NOT NULL,
            qp                REAL,
            sse_y             INTEGER CHECK (sse_y >= 0),
            sse_u             INTEGER CHECK (sse_u >= 0),
            sse_v             INTEGER CHECK (sse_v >= 0),
            psnr_y            REAL,
            psnr_u            REAL,
            psnr_v            REAL,
            psnr_avg          REAL,
            ssim              REAL,
            x264_psnr_y       REAL,
            x264_psnr_u       REAL,
            x264_psnr_v       REAL,
            x264_psnr_avg     REAL,
            x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),\(inputPTS ? "\n            input_pts         INTEGER," : "")
            PRIMARY KEY (run_id, coded_index)
        );
        """
    }

    /// The `parameter_sets` table of version 3 named `name`: one row per SPS or PPS NAL unit of the stream, keyed
    /// by its occurrence (from 0, in stream order, per kind), so an id given new content mid-stream keeps both.
    /// `nal_unit_index` is NULL for rows migrated from version 2 (which kept the last of each id only).
    static func parameterSetsTable(_ name: String, ifNotExists: Bool) -> String {
        """
        CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (
            run_id                   INTEGER NOT NULL REFERENCES runs(run_id),
            kind                     TEXT NOT NULL CHECK (kind IN ('sps', 'pps')),
            occurrence               INTEGER NOT NULL CHECK (occurrence >= 0),
            id                       INTEGER NOT NULL,
            nal_unit_index           INTEGER CHECK (nal_unit_index >= 0),
            new_content              INTEGER NOT NULL CHECK (new_content IN (0, 1)),
            profile_idc              INTEGER,
            level_idc                INTEGER,
            width                    INTEGER,
            height                   INTEGER,
            entropy_coding_mode_flag INTEGER,
            max_num_reorder_frames   INTEGER,
            fields                   TEXT NOT NULL,
            PRIMARY KEY (run_id, kind, occurrence)
        );
        """
    }

    /// Everything of version 3 but `runs`, `frames` and `parameter_sets`: the tables the lab writes beside them,
    /// the indexes, and the clip hash cache (as in version 2). Every statement is `IF NOT EXISTS`.
    static let schemaVersion3Rest = """
    CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, status);
    CREATE UNIQUE INDEX IF NOT EXISTS runs_done_by_key ON runs (run_key) WHERE status = 'done' AND run_key IS NOT NULL;
    CREATE TABLE IF NOT EXISTS bitstream_checks (
        run_id   INTEGER NOT NULL REFERENCES runs(run_id),
        name     TEXT NOT NULL,
        expected TEXT NOT NULL,
        actual   TEXT NOT NULL,
        passed   INTEGER NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE IF NOT EXISTS decoded_frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id),
        source        TEXT NOT NULL CHECK (source IN ('stream', 'packets')),
        display_index INTEGER NOT NULL,
        sse_y         INTEGER NOT NULL,
        sse_u         INTEGER NOT NULL,
        sse_v         INTEGER NOT NULL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        matches_x264  INTEGER NOT NULL,
        PRIMARY KEY (run_id, source, display_index)
    );
    CREATE TABLE IF NOT EXISTS clip_hashes (
        device   INTEGER NOT NULL,
        inode    INTEGER NOT NULL,
        size     INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256   TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
        PRIMARY KEY (device, inode, size, mtime_ns)
    );
    """

    /// Everything of version 2 but `runs` and `frames`: the tables the lab writes beside them, the indexes, and
    /// the clip hash cache. Every statement is `IF NOT EXISTS`.
    static let schemaVersion2Rest = """
    CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, status);
    CREATE UNIQUE INDEX IF NOT EXISTS runs_done_by_key ON runs (run_key) WHERE status = 'done' AND run_key IS NOT NULL;
    CREATE TABLE IF NOT EXISTS parameter_sets (
        run_id                   INTEGER NOT NULL REFERENCES runs(run_id),
        kind                     TEXT NOT NULL CHECK (kind IN ('sps', 'pps')),
        id                       INTEGER NOT NULL,
        profile_idc              INTEGER,
        level_idc                INTEGER,
        width                    INTEGER,
        height                   INTEGER,
        entropy_coding_mode_flag INTEGER,
        max_num_reorder_frames   INTEGER,
        fields                   TEXT NOT NULL,
        PRIMARY KEY (run_id, kind, id)
    );
    CREATE TABLE IF NOT EXISTS bitstream_checks (
        run_id   INTEGER NOT NULL REFERENCES runs(run_id),
        name     TEXT NOT NULL,
        expected TEXT NOT NULL,
        actual   TEXT NOT NULL,
        passed   INTEGER NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE IF NOT EXISTS decoded_frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id),
        source        TEXT NOT NULL CHECK (source IN ('stream', 'packets')),
        display_index INTEGER NOT NULL,
        sse_y         INTEGER NOT NULL,
        sse_u         INTEGER NOT NULL,
        sse_v         INTEGER NOT NULL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        matches_x264  INTEGER NOT NULL,
        PRIMARY KEY (run_id, source, display_index)
    );
    CREATE TABLE IF NOT EXISTS clip_hashes (
        device   INTEGER NOT NULL,
        inode    INTEGER NOT NULL,
        size     INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256   TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
        PRIMARY KEY (device, inode, size, mtime_ns)
    );
    """

    /// The schema of version 7 (``schemaVersion``), as a new database gets it; every statement `IF NOT EXISTS`:
    /// version 6 with `runs.repeatable` and ``doneByKeyIndexVersion7``.
    static let schema: String = {
        let old = "CREATE UNIQUE INDEX IF NOT EXISTS runs_done_by_key ON runs (run_key) WHERE status = 'done' AND run_key IS NOT NULL;"
        precondition(schemaVersion6.contains(old), "version 6 has the index version 7 redefines")
        return schemaVersion6.replacingOccurrences(of: runsTable("runs", ifNotExists: true), with: runsTable("runs", ifNotExists: true, repeatable: true))
            .replacingOccurrences(of: old, with: doneByKeyIndexVersion7)
    }()

    /// Version 7's `runs_done_by_key`: a key is done once among the runs that are repeatable (or not known to be
    /// not: NULL); a run that is not repeatable (``Repeatability``) may be done several times under one key, each a
    /// repeat (`enclab merge` keeps them).
    static let doneByKeyIndexVersion7 = "CREATE UNIQUE INDEX IF NOT EXISTS runs_done_by_key ON runs (run_key) WHERE status = 'done' AND run_key IS NOT NULL AND repeatable IS NOT 0;"

    /// The schema of version 6, kept as it was: the migration to version 7 starts from it.
    static let schemaVersion6 = schemaVersion5 + "\n" + metricsTables

    /// The schema of version 5, kept as it was: the migration to version 6 starts from it.
    static let schemaVersion5 = schemaVersion4 + "\n" + keyframeTables

    /// The schema of version 4, kept as it was: the migration to version 5 starts from it.
    static let schemaVersion4 = runsTable("runs", ifNotExists: true) + "\n" + framesTable("frames", ifNotExists: true) + "\n"
        + parameterSetsTable("parameter_sets", ifNotExists: true) + "\n" + schemaVersion3Rest + "\n" + timestampTables

    /// The schema of version 3, kept as it was: the migration to version 4 starts from it.
    static let schemaVersion3 = runsTable("runs", ifNotExists: true) + "\n" + framesTable("frames", ifNotExists: true, inputPTS: false) + "\n"
        + parameterSetsTable("parameter_sets", ifNotExists: true) + "\n" + schemaVersion3Rest

    /// The schema of version 2 (commit ad1e90e), kept as it was: the migration to version 3 starts from it.
    static let schemaVersion2 = runsTable("runs", ifNotExists: true) + "\n" + framesTableVersion2("frames", ifNotExists: true) + "\n"
        + schemaVersion2Rest

    /// The schema of version 1 (commit 71d620a; version 0, commit aef06d9, has the same tables), kept as it was:
    /// the migrations start from it. pts/dts are in the run's timebase.
    static let schemaVersion1 = """
    CREATE TABLE IF NOT EXISTS runs (
        run_id          INTEGER PRIMARY KEY AUTOINCREMENT,
        experiment      TEXT NOT NULL,
        clip            TEXT NOT NULL,
        settings        TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        frames          INTEGER,
        bytes           INTEGER,
        duration_s      REAL,
        timebase_num    INTEGER,
        timebase_den    INTEGER,
        stream_path     TEXT,
        crop            TEXT,
        x264_version    TEXT NOT NULL,
        lab_version     TEXT NOT NULL,
        ffmpeg_version  TEXT,
        machine         TEXT NOT NULL,
        created_at      TEXT NOT NULL,
        finished_at     TEXT,
        width           INTEGER,
        height          INTEGER,
        fps_num         INTEGER,
        fps_den         INTEGER,
        input_frames    INTEGER,
        truncated_bytes INTEGER,
        warnings        TEXT,
        error           TEXT
    );
    CREATE TABLE IF NOT EXISTS frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id),
        coded_index   INTEGER NOT NULL,
        display_index INTEGER NOT NULL,
        type          TEXT NOT NULL CHECK (type IN ('IDR', 'I', 'P', 'Bref', 'B')),
        keyframe      INTEGER NOT NULL,
        size_bytes    INTEGER NOT NULL,
        header_bytes  INTEGER NOT NULL,
        filler_bytes  INTEGER NOT NULL,
        pts           INTEGER NOT NULL,
        dts           INTEGER NOT NULL,
        qp            REAL NOT NULL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        psnr_avg      REAL,
        ssim          REAL,
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, status);
    CREATE TABLE IF NOT EXISTS parameter_sets (
        run_id                   INTEGER NOT NULL REFERENCES runs(run_id),
        kind                     TEXT NOT NULL CHECK (kind IN ('sps', 'pps')),
        id                       INTEGER NOT NULL,
        profile_idc              INTEGER,
        level_idc                INTEGER,
        width                    INTEGER,
        height                   INTEGER,
        entropy_coding_mode_flag INTEGER,
        max_num_reorder_frames   INTEGER,
        fields                   TEXT NOT NULL,
        PRIMARY KEY (run_id, kind, id)
    );
    CREATE TABLE IF NOT EXISTS bitstream_checks (
        run_id   INTEGER NOT NULL REFERENCES runs(run_id),
        name     TEXT NOT NULL,
        expected TEXT NOT NULL,
        actual   TEXT NOT NULL,
        passed   INTEGER NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE IF NOT EXISTS decoded_frames (
        run_id        INTEGER NOT NULL REFERENCES runs(run_id),
        source        TEXT NOT NULL CHECK (source IN ('stream', 'packets')),
        display_index INTEGER NOT NULL,
        sse_y         INTEGER NOT NULL,
        sse_u         INTEGER NOT NULL,
        sse_v         INTEGER NOT NULL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        matches_x264  INTEGER NOT NULL,
        PRIMARY KEY (run_id, source, display_index)
    );
    """

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

    /// The tables, columns and indexes of version 7, 6, 5, 4, 3, 2 and 1 (which version 0 has too).
    static let shapeVersion7 = SchemaShape(schema)
    static let shapeVersion6 = SchemaShape(schemaVersion6)
    static let shapeVersion5 = SchemaShape(schemaVersion5)
    static let shapeVersion4 = SchemaShape(schemaVersion4)
    static let shapeVersion3 = SchemaShape(schemaVersion3)
    static let shapeVersion2 = SchemaShape(schemaVersion2)
    static let shapeVersion1 = SchemaShape(schemaVersion1)

    /// The shape a file of `version` (0 ... ``schemaVersion``) must have.
    static func shape(ofVersion version: Int64) -> SchemaShape {
        version >= 7 ? shapeVersion7 : version == 6 ? shapeVersion6 : version == 5 ? shapeVersion5 : version == 4 ? shapeVersion4 : version == 3 ? shapeVersion3
            : version == 2 ? shapeVersion2 : shapeVersion1
    }
}
