extension LabStore {
    /// Schema version 8's table for the second encoder (docs/schema.md, "skipped_frames"): one row per picture the
    /// encoder took in and dropped (OpenH264's `videoFrameTypeSkip`, its rate control's frame skip): its input frame
    /// number (display order, after `--seek`) and the PTS it was handed in with, in the run's timebase. x264 drops none.
    /// The encoder's name and version are in `runs.settings` (`$.encoder`).
    static let version8OpenH264Tables = """
    CREATE TABLE IF NOT EXISTS skipped_frames (
        run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        input_index INTEGER NOT NULL,
        pts INTEGER NOT NULL,
        PRIMARY KEY (run_id, input_index)
    );
    """
}
