import Foundation

/// Each schema version of the database as literal SQL, frozen: the text a new database of that version got, and the
/// statements its migration ran (``LabStore/migrations``). Nothing here is generated from today's table builders or
/// edited when the schema changes again: a new version adds its own constants and a migration, so what an old
/// migration does and what an old file is checked against (``LabStore/SchemaShape``) stay as they were. Checked by
/// SchemaVersionTests against databases the lab's earlier versions wrote (Tests/EncoderLabTests/Fixtures).
///
/// Whitespace is part of the text SQLite keeps in `sqlite_master` (a migrated file and a new one are compared by it):
/// `frames.input_pts` (versions 4 to 7) and `runs.repeatable` (version 7) are indented by 12 spaces, as the builders
/// of those versions wrote them.
extension LabStore {
    /// The schema of version 8: version 7 and ``version8Tables`` (`timestamp_analysis` as version 7 has it: the
    /// migration from version 7 rebuilds it in a file that still has the NOT NULL columns of version 4).
    static let schemaVersion8 = schemaVersion7 + "\n" + version8Tables

    /// The schema of version 9: version 8 with the tables ``version9Tables`` adds.
    static let schemaVersion9 = schemaVersion8 + "\n" + version9Tables

    /// The tables version 9 adds, each in a Schema9*.swift of its topic. Every statement `IF NOT EXISTS`.
    static let version9Tables = [version9RTPTables].joined(separator: "\n")

    /// The tables version 8 adds, each in a Schema8*.swift of its topic. Every statement `IF NOT EXISTS`.
    static let version8Tables = [version8DelayTables, version8QualityTables, version8RateChangesTables, version8OpenH264Tables].joined(separator: "\n")

    /// The schema of version 7 (commit 615fab9): version 6 with `runs.repeatable` and `runs_done_by_key` over the runs
    /// that are repeatable (or not known not to be): a key is done once among them, a run that is not repeatable may be
    /// done several times under one key. Every statement `IF NOT EXISTS`.
    static let schemaVersion7 = """
    CREATE TABLE IF NOT EXISTS runs (
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
        error           TEXT,
                repeatable      INTEGER CHECK (repeatable IN (0, 1))
    );
    CREATE TABLE IF NOT EXISTS frames (
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
        x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),
                input_pts         INTEGER,
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE TABLE IF NOT EXISTS parameter_sets (
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
    CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs (experiment, status);
    CREATE UNIQUE INDEX IF NOT EXISTS runs_done_by_key ON runs (run_key) WHERE status = 'done' AND run_key IS NOT NULL AND repeatable IS NOT 0;
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
    CREATE TABLE IF NOT EXISTS timestamp_analysis (
        run_id                   INTEGER PRIMARY KEY REFERENCES runs(run_id),
        source                   TEXT NOT NULL CHECK (source IN ('constant-rate', 'file', 'tcfile', 'schedule')),
        frames                   INTEGER NOT NULL,
        non_increasing_input_pts INTEGER NOT NULL,
        duplicate_dts            INTEGER NOT NULL,
        decreasing_dts           INTEGER NOT NULL,
        pts_before_dts           INTEGER NOT NULL,
        min_composition_offset   INTEGER NOT NULL,
        max_composition_offset   INTEGER NOT NULL,
        span_ticks               INTEGER,
        span_s                   REAL,
        achieved_kbps            REAL,
        target_kbps              REAL,
        bitrate_error_pct        REAL,
        x264_timestamp_warnings  INTEGER NOT NULL,
        x264_warnings            TEXT
    );
    CREATE TABLE IF NOT EXISTS frame_durations (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id),
        duration_ticks INTEGER NOT NULL,
        frames         INTEGER NOT NULL,
        PRIMARY KEY (run_id, duration_ticks)
    );
    CREATE TABLE IF NOT EXISTS keyframe_analysis (
        run_id              INTEGER PRIMARY KEY REFERENCES runs(run_id),
        max_frames          INTEGER NOT NULL,
        max_duration        TEXT NOT NULL,
        vt_compat           INTEGER NOT NULL CHECK (vt_compat IN (0, 1)),
        frame_limit         INTEGER,
        duration_limit      TEXT,
        expected            TEXT NOT NULL,
        actual              TEXT NOT NULL,
        forced              TEXT NOT NULL,
        largest_gop_frames  INTEGER NOT NULL,
        largest_gop_s       REAL NOT NULL,
        largest_gop_exact   TEXT NOT NULL,
        violations          INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS keyframe_violations (
        run_id       INTEGER NOT NULL REFERENCES runs(run_id),
        ordinal      INTEGER NOT NULL,
        kind         TEXT NOT NULL CHECK (kind IN ('frame-limit', 'duration-limit', 'stall')),
        start_frame  INTEGER NOT NULL,
        end_frame    INTEGER NOT NULL,
        frames       INTEGER NOT NULL,
        duration_s   REAL NOT NULL,
        duration     TEXT NOT NULL,
        PRIMARY KEY (run_id, ordinal)
    );
    CREATE TABLE IF NOT EXISTS data_rate_windows (
        run_id            INTEGER NOT NULL REFERENCES runs(run_id),
        pair              INTEGER NOT NULL,
        bytes             INTEGER NOT NULL,
        seconds           TEXT NOT NULL,
        honoured          INTEGER NOT NULL CHECK (honoured IN (0, 1)),
        windows           INTEGER NOT NULL,
        windows_over      INTEGER NOT NULL,
        worst_start_frame INTEGER,
        worst_end_frame   INTEGER,
        worst_bytes       INTEGER,
        worst_ratio       REAL,
        PRIMARY KEY (run_id, pair)
    );
    CREATE TABLE IF NOT EXISTS run_metrics (
        run_id INTEGER PRIMARY KEY REFERENCES runs(run_id),
        frames INTEGER NOT NULL,
        stream_bytes INTEGER NOT NULL,
        span_seconds REAL,
        bitrate_kbps REAL,
        target_kbps REAL,
        target_error_pct REAL,
        peak_1s_kbps REAL,
        peak_1s_start_frame INTEGER,
        full_1s_windows INTEGER NOT NULL,
        peak_gop_kbps REAL,
        peak_to_average REAL,
        i_frames INTEGER NOT NULL,
        p_frames INTEGER NOT NULL,
        b_frames INTEGER NOT NULL,
        i_mean_bytes REAL,
        i_p95_bytes INTEGER,
        i_max_bytes INTEGER,
        p_mean_bytes REAL,
        p_p95_bytes INTEGER,
        p_max_bytes INTEGER,
        b_mean_bytes REAL,
        b_p95_bytes INTEGER,
        b_max_bytes INTEGER,
        i_to_p_ratio REAL,
        b_to_p_ratio REAL,
        keyframes INTEGER NOT NULL,
        gops INTEGER NOT NULL,
        gop_min_frames INTEGER,
        gop_mean_frames REAL,
        gop_max_frames INTEGER,
        gop_mean_seconds REAL,
        gop_max_seconds REAL,
        psnr_frames INTEGER NOT NULL,
        psnr_weighting TEXT CHECK (psnr_weighting IN ('frame', 'duration')),
        psnr_y_mean_frame REAL,
        psnr_u_mean_frame REAL,
        psnr_v_mean_frame REAL,
        psnr_avg_mean_frame REAL,
        psnr_y_pooled REAL,
        psnr_u_pooled REAL,
        psnr_v_pooled REAL,
        psnr_global REAL,
        psnr_611 REAL,
        ssim_mean REAL,
        ssim_db REAL,
        qp_mean_i REAL,
        qp_mean_p REAL,
        qp_mean_b REAL,
        vbv_underflows INTEGER,
        vbv_overflows INTEGER,
        psnr_source TEXT CHECK (psnr_source IN ('lab', 'x264'))
    );
    CREATE TABLE IF NOT EXISTS run_gops (
        run_id      INTEGER NOT NULL REFERENCES runs(run_id),
        gop_index   INTEGER NOT NULL CHECK (gop_index >= 0),
        first_frame INTEGER NOT NULL,
        keyframe    INTEGER NOT NULL CHECK (keyframe IN (0, 1)),
        frames      INTEGER NOT NULL,
        seconds     REAL,
        bytes       INTEGER NOT NULL,
        kbps        REAL,
        PRIMARY KEY (run_id, gop_index)
    );
    """

    /// The schema of version 6 (commit 3c14866, last 3eff049): version 5 and ``version6Tables``.
    static let schemaVersion6 = schemaVersion5 + "\n" + version6Tables

    /// The schema of version 5 (commits c8967a4 and e88cd78, last e8c29d0), as a new database got it from e7c8bae on:
    /// version 4 with `timestamp_analysis.span_ticks`, `span_s` and `achieved_kbps` nullable (e7c8bae changed them without
    /// a migration: a file made by version 4, or by version 5 before e7c8bae, keeps them NOT NULL) and ``version5Tables``.
    /// Every statement `IF NOT EXISTS`.
    static let schemaVersion5 = """
    CREATE TABLE IF NOT EXISTS runs (
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
        error           TEXT
    );
    CREATE TABLE IF NOT EXISTS frames (
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
        x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),
                input_pts         INTEGER,
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE TABLE IF NOT EXISTS parameter_sets (
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
    CREATE TABLE IF NOT EXISTS timestamp_analysis (
        run_id                   INTEGER PRIMARY KEY REFERENCES runs(run_id),
        source                   TEXT NOT NULL CHECK (source IN ('constant-rate', 'file', 'tcfile', 'schedule')),
        frames                   INTEGER NOT NULL,
        non_increasing_input_pts INTEGER NOT NULL,
        duplicate_dts            INTEGER NOT NULL,
        decreasing_dts           INTEGER NOT NULL,
        pts_before_dts           INTEGER NOT NULL,
        min_composition_offset   INTEGER NOT NULL,
        max_composition_offset   INTEGER NOT NULL,
        span_ticks               INTEGER,
        span_s                   REAL,
        achieved_kbps            REAL,
        target_kbps              REAL,
        bitrate_error_pct        REAL,
        x264_timestamp_warnings  INTEGER NOT NULL,
        x264_warnings            TEXT
    );
    CREATE TABLE IF NOT EXISTS frame_durations (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id),
        duration_ticks INTEGER NOT NULL,
        frames         INTEGER NOT NULL,
        PRIMARY KEY (run_id, duration_ticks)
    );
    CREATE TABLE IF NOT EXISTS keyframe_analysis (
        run_id              INTEGER PRIMARY KEY REFERENCES runs(run_id),
        max_frames          INTEGER NOT NULL,
        max_duration        TEXT NOT NULL,
        vt_compat           INTEGER NOT NULL CHECK (vt_compat IN (0, 1)),
        frame_limit         INTEGER,
        duration_limit      TEXT,
        expected            TEXT NOT NULL,
        actual              TEXT NOT NULL,
        forced              TEXT NOT NULL,
        largest_gop_frames  INTEGER NOT NULL,
        largest_gop_s       REAL NOT NULL,
        largest_gop_exact   TEXT NOT NULL,
        violations          INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS keyframe_violations (
        run_id       INTEGER NOT NULL REFERENCES runs(run_id),
        ordinal      INTEGER NOT NULL,
        kind         TEXT NOT NULL CHECK (kind IN ('frame-limit', 'duration-limit', 'stall')),
        start_frame  INTEGER NOT NULL,
        end_frame    INTEGER NOT NULL,
        frames       INTEGER NOT NULL,
        duration_s   REAL NOT NULL,
        duration     TEXT NOT NULL,
        PRIMARY KEY (run_id, ordinal)
    );
    CREATE TABLE IF NOT EXISTS data_rate_windows (
        run_id            INTEGER NOT NULL REFERENCES runs(run_id),
        pair              INTEGER NOT NULL,
        bytes             INTEGER NOT NULL,
        seconds           TEXT NOT NULL,
        honoured          INTEGER NOT NULL CHECK (honoured IN (0, 1)),
        windows           INTEGER NOT NULL,
        windows_over      INTEGER NOT NULL,
        worst_start_frame INTEGER,
        worst_end_frame   INTEGER,
        worst_bytes       INTEGER,
        worst_ratio       REAL,
        PRIMARY KEY (run_id, pair)
    );
    """

    /// The schema of version 4 (commit 3c8b8fa, last 18965e2) as that version wrote it: version 3 with `frames.input_pts`
    /// and the timestamps tables, `timestamp_analysis.span_ticks`, `span_s` and `achieved_kbps` NOT NULL (the migration from
    /// version 3 makes them nullable, ``version4Tables``; see ``schemaVersion5``). Every statement `IF NOT EXISTS`.
    static let schemaVersion4 = """
    CREATE TABLE IF NOT EXISTS runs (
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
        error           TEXT
    );
    CREATE TABLE IF NOT EXISTS frames (
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
        x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),
                input_pts         INTEGER,
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE TABLE IF NOT EXISTS parameter_sets (
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
    CREATE TABLE IF NOT EXISTS timestamp_analysis (
        run_id                   INTEGER PRIMARY KEY REFERENCES runs(run_id),
        source                   TEXT NOT NULL CHECK (source IN ('constant-rate', 'file', 'tcfile', 'schedule')),
        frames                   INTEGER NOT NULL,
        non_increasing_input_pts INTEGER NOT NULL,
        duplicate_dts            INTEGER NOT NULL,
        decreasing_dts           INTEGER NOT NULL,
        pts_before_dts           INTEGER NOT NULL,
        min_composition_offset   INTEGER NOT NULL,
        max_composition_offset   INTEGER NOT NULL,
        span_ticks               INTEGER NOT NULL,
        span_s                   REAL NOT NULL,
        achieved_kbps            REAL NOT NULL,
        target_kbps              REAL,
        bitrate_error_pct        REAL,
        x264_timestamp_warnings  INTEGER NOT NULL,
        x264_warnings            TEXT
    );
    CREATE TABLE IF NOT EXISTS frame_durations (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id),
        duration_ticks INTEGER NOT NULL,
        frames         INTEGER NOT NULL,
        PRIMARY KEY (run_id, duration_ticks)
    );
    """

    /// The schema of version 3 (commit e6c4661): `frames.sse_*`, the lab's `psnr_*`, x264's in `x264_psnr_*`,
    /// `parameter_sets` keyed by occurrence. Every statement `IF NOT EXISTS`.
    static let schemaVersion3 = """
    CREATE TABLE IF NOT EXISTS runs (
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
        error           TEXT
    );
    CREATE TABLE IF NOT EXISTS frames (
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
        x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE TABLE IF NOT EXISTS parameter_sets (
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

    /// The schema of version 2 (commit c4976c6, last ad1e90e): `runs.run_key`, `runs.clip_sha256`, nullable
    /// `x264_version` and `frames.qp`, `clip_hashes`. Every statement `IF NOT EXISTS`.
    static let schemaVersion2 = """
    CREATE TABLE IF NOT EXISTS runs (
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
        qp            REAL,
        psnr_y        REAL,
        psnr_u        REAL,
        psnr_v        REAL,
        psnr_avg      REAL,
        ssim          REAL,
        PRIMARY KEY (run_id, coded_index)
    );
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

    /// The schema of version 1 (commit 71d620a; version 0, commit aef06d9, has the same tables): the migrations
    /// start from it. pts/dts are in the run's timebase.
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

    // MARK: - The statements of the migrations, as each version wrote them

    /// Version 2's `runs`, built as `new_runs` by the migration from version 1, then renamed.
    static let version2Runs = """
    CREATE TABLE new_runs (
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
        error           TEXT
    );
    """

    /// Version 2's `frames` (`qp` nullable; `psnr_*` x264's), built as `new_frames` by the migration from version 1.
    static let version2Frames = """
    CREATE TABLE new_frames (
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

    /// Everything of version 2 but `runs` and `frames`, made after their rebuild. Every statement `IF NOT EXISTS`.
    static let version2Rest = """
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

    /// Version 3's `frames`, built as `new_frames` by the migration from version 2.
    static let version3Frames = """
    CREATE TABLE new_frames (
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
        x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),
        PRIMARY KEY (run_id, coded_index)
    );
    """

    /// Version 3's `parameter_sets`, built as `new_parameter_sets` by the migration from version 2.
    static let version3ParameterSets = """
    CREATE TABLE new_parameter_sets (
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

    /// Everything of version 3 but `runs`, `frames` and `parameter_sets`, made after the rebuilds of the migrations
    /// from versions 2 and 3. Every statement `IF NOT EXISTS`.
    static let version3Rest = """
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

    /// Version 4's `frames` (with `input_pts`, 12 spaces in), built as `new_frames` by the migration from version 3.
    static let version4Frames = """
    CREATE TABLE new_frames (
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
        x264_psnr_differs INTEGER CHECK (x264_psnr_differs IN (0, 1)),
                input_pts         INTEGER,
        PRIMARY KEY (run_id, coded_index)
    );
    """

    /// The timestamps tables the migration from version 3 adds, as it has made them since e7c8bae (`span_ticks`,
    /// `span_s`, `achieved_kbps` nullable, as in ``schemaVersion5``); times in ticks of the run's timebase. Every
    /// statement `IF NOT EXISTS`.
    static let version4Tables = """
    CREATE TABLE IF NOT EXISTS timestamp_analysis (
        run_id                   INTEGER PRIMARY KEY REFERENCES runs(run_id),
        source                   TEXT NOT NULL CHECK (source IN ('constant-rate', 'file', 'tcfile', 'schedule')),
        frames                   INTEGER NOT NULL,
        non_increasing_input_pts INTEGER NOT NULL,
        duplicate_dts            INTEGER NOT NULL,
        decreasing_dts           INTEGER NOT NULL,
        pts_before_dts           INTEGER NOT NULL,
        min_composition_offset   INTEGER NOT NULL,
        max_composition_offset   INTEGER NOT NULL,
        span_ticks               INTEGER,
        span_s                   REAL,
        achieved_kbps            REAL,
        target_kbps              REAL,
        bitrate_error_pct        REAL,
        x264_timestamp_warnings  INTEGER NOT NULL,
        x264_warnings            TEXT
    );
    CREATE TABLE IF NOT EXISTS frame_durations (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id),
        duration_ticks INTEGER NOT NULL,
        frames         INTEGER NOT NULL,
        PRIMARY KEY (run_id, duration_ticks)
    );
    """

    /// The VideoToolbox tables version 5 adds (keyframe limits, data-rate windows). Every statement `IF NOT EXISTS`.
    static let version5Tables = """
    CREATE TABLE IF NOT EXISTS keyframe_analysis (
        run_id              INTEGER PRIMARY KEY REFERENCES runs(run_id),
        max_frames          INTEGER NOT NULL,
        max_duration        TEXT NOT NULL,
        vt_compat           INTEGER NOT NULL CHECK (vt_compat IN (0, 1)),
        frame_limit         INTEGER,
        duration_limit      TEXT,
        expected            TEXT NOT NULL,
        actual              TEXT NOT NULL,
        forced              TEXT NOT NULL,
        largest_gop_frames  INTEGER NOT NULL,
        largest_gop_s       REAL NOT NULL,
        largest_gop_exact   TEXT NOT NULL,
        violations          INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS keyframe_violations (
        run_id       INTEGER NOT NULL REFERENCES runs(run_id),
        ordinal      INTEGER NOT NULL,
        kind         TEXT NOT NULL CHECK (kind IN ('frame-limit', 'duration-limit', 'stall')),
        start_frame  INTEGER NOT NULL,
        end_frame    INTEGER NOT NULL,
        frames       INTEGER NOT NULL,
        duration_s   REAL NOT NULL,
        duration     TEXT NOT NULL,
        PRIMARY KEY (run_id, ordinal)
    );
    CREATE TABLE IF NOT EXISTS data_rate_windows (
        run_id            INTEGER NOT NULL REFERENCES runs(run_id),
        pair              INTEGER NOT NULL,
        bytes             INTEGER NOT NULL,
        seconds           TEXT NOT NULL,
        honoured          INTEGER NOT NULL CHECK (honoured IN (0, 1)),
        windows           INTEGER NOT NULL,
        windows_over      INTEGER NOT NULL,
        worst_start_frame INTEGER,
        worst_end_frame   INTEGER,
        worst_bytes       INTEGER,
        worst_ratio       REAL,
        PRIMARY KEY (run_id, pair)
    );
    """

    /// The metrics tables version 6 adds (`run_metrics`, `run_gops`; ``runMetricsColumns`` names the columns of
    /// `run_metrics`, checked against this text by SchemaVersionTests). Every statement `IF NOT EXISTS`.
    static let version6Tables = """
    CREATE TABLE IF NOT EXISTS run_metrics (
        run_id INTEGER PRIMARY KEY REFERENCES runs(run_id),
        frames INTEGER NOT NULL,
        stream_bytes INTEGER NOT NULL,
        span_seconds REAL,
        bitrate_kbps REAL,
        target_kbps REAL,
        target_error_pct REAL,
        peak_1s_kbps REAL,
        peak_1s_start_frame INTEGER,
        full_1s_windows INTEGER NOT NULL,
        peak_gop_kbps REAL,
        peak_to_average REAL,
        i_frames INTEGER NOT NULL,
        p_frames INTEGER NOT NULL,
        b_frames INTEGER NOT NULL,
        i_mean_bytes REAL,
        i_p95_bytes INTEGER,
        i_max_bytes INTEGER,
        p_mean_bytes REAL,
        p_p95_bytes INTEGER,
        p_max_bytes INTEGER,
        b_mean_bytes REAL,
        b_p95_bytes INTEGER,
        b_max_bytes INTEGER,
        i_to_p_ratio REAL,
        b_to_p_ratio REAL,
        keyframes INTEGER NOT NULL,
        gops INTEGER NOT NULL,
        gop_min_frames INTEGER,
        gop_mean_frames REAL,
        gop_max_frames INTEGER,
        gop_mean_seconds REAL,
        gop_max_seconds REAL,
        psnr_frames INTEGER NOT NULL,
        psnr_weighting TEXT CHECK (psnr_weighting IN ('frame', 'duration')),
        psnr_y_mean_frame REAL,
        psnr_u_mean_frame REAL,
        psnr_v_mean_frame REAL,
        psnr_avg_mean_frame REAL,
        psnr_y_pooled REAL,
        psnr_u_pooled REAL,
        psnr_v_pooled REAL,
        psnr_global REAL,
        psnr_611 REAL,
        ssim_mean REAL,
        ssim_db REAL,
        qp_mean_i REAL,
        qp_mean_p REAL,
        qp_mean_b REAL,
        vbv_underflows INTEGER,
        vbv_overflows INTEGER,
        psnr_source TEXT CHECK (psnr_source IN ('lab', 'x264'))
    );
    CREATE TABLE IF NOT EXISTS run_gops (
        run_id      INTEGER NOT NULL REFERENCES runs(run_id),
        gop_index   INTEGER NOT NULL CHECK (gop_index >= 0),
        first_frame INTEGER NOT NULL,
        keyframe    INTEGER NOT NULL CHECK (keyframe IN (0, 1)),
        frames      INTEGER NOT NULL,
        seconds     REAL,
        bytes       INTEGER NOT NULL,
        kbps        REAL,
        PRIMARY KEY (run_id, gop_index)
    );
    """

    /// Version 7's `runs` (with `repeatable`, 12 spaces in), built as `new_runs` by the migration from version 6.
    static let version7Runs = """
    CREATE TABLE new_runs (
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
        error           TEXT,
                repeatable      INTEGER CHECK (repeatable IN (0, 1))
    );
    """

    /// Version 8's `timestamp_analysis` (`span_ticks`, `span_s`, `achieved_kbps` nullable, the text of version 7),
    /// built as `new_timestamp_analysis` by the migration from version 7 in a file version 4 made.
    static let version8TimestampAnalysis = """
    CREATE TABLE new_timestamp_analysis (
        run_id                   INTEGER PRIMARY KEY REFERENCES runs(run_id),
        source                   TEXT NOT NULL CHECK (source IN ('constant-rate', 'file', 'tcfile', 'schedule')),
        frames                   INTEGER NOT NULL,
        non_increasing_input_pts INTEGER NOT NULL,
        duplicate_dts            INTEGER NOT NULL,
        decreasing_dts           INTEGER NOT NULL,
        pts_before_dts           INTEGER NOT NULL,
        min_composition_offset   INTEGER NOT NULL,
        max_composition_offset   INTEGER NOT NULL,
        span_ticks               INTEGER,
        span_s                   REAL,
        achieved_kbps            REAL,
        target_kbps              REAL,
        bitrate_error_pct        REAL,
        x264_timestamp_warnings  INTEGER NOT NULL,
        x264_warnings            TEXT
    );
    """
}
