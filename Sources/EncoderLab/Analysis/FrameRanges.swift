/// The ranges every reader of stored frames holds a frame's values to (the run metrics, the plots, the report,
/// `check --db`, `merge`): `size_bytes` in 0 ... 2^40, pts and dts in -2^60 ... 2^60 ticks, so that no sum or
/// difference of them overflows 64 bits. Analysis owns the check; the plots and the store call it.
public enum FrameRanges {
    /// The largest `size_bytes` a frame may have: 2^40 bytes (1 TiB), far above any frame and far below what a sum
    /// over frames could overflow.
    public static let maximumFrameBytes = 1 << 40

    /// The largest magnitude of a frame's pts and dts, in ticks: 2^60.
    public static let maximumTimestampTicks: Int64 = 1 << 60

    /// Checks one stored frame: `size_bytes` in 0 ... 2^40 (``maximumFrameBytes``), pts and dts in -2^60 ... 2^60
    /// (``maximumTimestampTicks``).
    /// - Parameter database: the database named at the start of the message (nil: none, the caller names its input).
    /// - Parameter use: what the frame size is refused for, ending the message: "plotted", "analysed".
    /// - Throws: `.data` "DATABASE: run N: frame coded_index C: size_bytes V is outside 0...1099511627776 (2^40), not a frame
    ///   size that can be USE", or "... pts V is outside -2^60...2^60 (2^60 ticks)" (the limits written out).
    public static func check(codedIndex: Int64, sizeBytes: Int64, pts: Int64, dts: Int64, runID id: Int64, database: String?,
                             use: String = "plotted") throws {
        // Named here, so that every reader's message names the database (merge, naming its input itself, gives nil).
        let at = "\(database.map { "\($0): " } ?? "")run \(id): frame coded_index \(codedIndex)"
        guard (0...Int64(maximumFrameBytes)).contains(sizeBytes) else {
            throw LabError.data("\(at): size_bytes \(sizeBytes) is outside 0...\(maximumFrameBytes) (2^40), not a frame size that can be \(use)")
        }
        let limit = maximumTimestampTicks
        for (name, value) in [("pts", pts), ("dts", dts)] where !(-limit...limit).contains(value) {
            throw LabError.data("\(at): \(name) \(value) is outside -\(limit)...\(limit) (2^60 ticks)")
        }
    }
}
