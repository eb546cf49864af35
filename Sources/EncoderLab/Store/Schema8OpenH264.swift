extension LabStore {
    /// Schema version 8's table for the second encoder (docs/schema.md, "skipped_frames"): one row per picture the
    /// encoder took in and dropped (OpenH264's `videoFrameTypeSkip`, its rate control's frame skip): its input frame
    /// number (display order, after `--seek`) and the PTS it was handed in with, in the run's timebase; and, measured by
    /// the verify stage, what a receiver shows in its place, the previous decoded picture, against its source:
    /// `held_sse_*` and `held_psnr_*` (NULL without the decode; a PSNR NULL where its error is 0). x264 drops none.
    /// The encoder's name and version are in `runs.settings` (`$.encoder`).
    static let version8OpenH264Tables = """
    CREATE TABLE IF NOT EXISTS skipped_frames (
        run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        input_index INTEGER NOT NULL,
        pts INTEGER NOT NULL,
        held_sse_y INTEGER,
        held_sse_u INTEGER,
        held_sse_v INTEGER,
        held_psnr_y REAL,
        held_psnr_u REAL,
        held_psnr_v REAL,
        held_psnr_avg REAL,
        PRIMARY KEY (run_id, input_index)
    );
    """
}
