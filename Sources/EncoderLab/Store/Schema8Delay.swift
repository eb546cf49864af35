import Foundation

/// Schema version 8's encoder-delay tables (issue 21, item 3; docs/schema.md "Encoder delay"), literal and frozen.
extension LabStore {
    /// `frame_delays`: for every coded frame, its input (display) index, the encode call that returned it (calls
    /// counted from 0, one per picture handed in, then one per flush call) and the frames the encoder held after that
    /// call (`x264_encoder_delayed_frames`). `run_delay`: per run the largest of those, the first output's call
    /// (the calls that returned nothing before it), the largest `output_call - input_index`, x264's
    /// `x264_encoder_maximum_delayed_frames` read when the encoder opened, and VideoToolbox's `MaxFrameDelayCount`
    /// with the frames held longer than it allows. Every statement `IF NOT EXISTS`.
    static let version8DelayTables = """
    CREATE TABLE IF NOT EXISTS frame_delays (
        run_id         INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
        coded_index    INTEGER NOT NULL CHECK (coded_index >= 0),
        input_index    INTEGER NOT NULL CHECK (input_index >= 0),
        output_call    INTEGER NOT NULL CHECK (output_call >= 0),
        delayed_frames INTEGER NOT NULL CHECK (delayed_frames >= 0),
        PRIMARY KEY (run_id, coded_index)
    );
    CREATE TABLE IF NOT EXISTS run_delay (
        run_id                    INTEGER PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
        max_delay_frames          INTEGER NOT NULL CHECK (max_delay_frames >= 0),
        first_output_delay_frames INTEGER NOT NULL CHECK (first_output_delay_frames >= 0),
        max_held_frames           INTEGER NOT NULL,
        maximum_delayed_frames    INTEGER CHECK (maximum_delayed_frames >= 0),
        frame_delay_limit         INTEGER CHECK (frame_delay_limit >= 0),
        frames_over_limit         INTEGER CHECK ((frames_over_limit IS NULL) = (frame_delay_limit IS NULL) AND frames_over_limit >= 0)
    );
    """

    /// Writes a run's `frame_delays` and `run_delay` rows, as given.
    func insertEncoderDelay(_ runID: Int64, _ d: EncoderDelay) throws {
        let insert = try database.prepare("""
            INSERT INTO frame_delays (run_id, coded_index, input_index, output_call, delayed_frames) VALUES (?, ?, ?, ?, ?)
            """)
        for f in d.frames {
            try insert.run([.integer(runID), .integer(Int64(f.codedIndex)), .integer(Int64(f.inputIndex)),
                            .integer(Int64(f.outputCall)), .integer(Int64(f.delayedFrames))])
        }
        func int(_ v: Int?) -> SQLValue { v.map { .integer(Int64($0)) } ?? .null }
        try database.prepare("""
            INSERT INTO run_delay (run_id, max_delay_frames, first_output_delay_frames, max_held_frames, maximum_delayed_frames,
                frame_delay_limit, frames_over_limit) VALUES (?, ?, ?, ?, ?, ?, ?)
            """).run([.integer(runID), int(d.maxDelayFrames), int(d.firstOutputDelayFrames), int(d.maxHeldFrames),
                      int(d.maximumDelayedFrames), int(d.frameDelayLimit), int(d.framesOverLimit)])
    }
}
