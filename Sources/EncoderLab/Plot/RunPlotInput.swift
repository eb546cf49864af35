import Foundation
import H264

/// Everything a run's two plots (`frames.*`, `psnr.*`) are drawn from, so that a run drawn while it is recorded
/// and a run redrawn from the database alone give byte-identical data files.
public struct RunPlotInput: Sendable {
    /// The plot title: the clip's file name, a space, then the run's grid label, or its x264 flags when it has no
    /// label (`enclab encode`). Reaches gnuplot as an argument only.
    public var title: String
    /// The frame rate in frames per second (`runs.fps_num` / `runs.fps_den`), reduced.
    public var fps: Rational
    /// One tick of pts/dts is `timebaseNum / timebaseDen` seconds (`runs.timebase_num`, `runs.timebase_den`).
    public var timebaseNum: Int
    public var timebaseDen: Int
    /// The rate-control target in kbit/s (x264's ABR method: `--rc abr`, `cbr`, `vbr` with a bitrate), or nil
    /// (CQP, CRF), when the plot draws the run's mean rate instead.
    public var targetKbps: Double?
    /// The VBV maximum rate in kbit/s when there is one and it differs from the target (drawn as its own line),
    /// else nil.
    public var maxrateKbps: Double?
    /// The run's frames in decode order (`frames` rows by coded_index).
    public var frames: [LabStore.FrameRow]
    /// Whether the run is a check run (a stream stored by `enclab check --db`: experiment `check`, no run key): it
    /// has no source clip, so no PSNR, and its PSNR chart says so.
    public var isCheck = false

    public init(title: String, fps: Rational, timebaseNum: Int, timebaseDen: Int, targetKbps: Double?,
                maxrateKbps: Double?, frames: [LabStore.FrameRow]) {
        self.title = title; self.fps = fps; self.timebaseNum = timebaseNum; self.timebaseDen = timebaseDen
        self.targetKbps = targetKbps; self.maxrateKbps = maxrateKbps; self.frames = frames
    }

    /// Derives the plots' input from a stored `runs` row and its frames, as the lab derives it when the run is
    /// recorded:
    /// - title: the file name of `runs.clip`, a space, then `settings.label`, or `settings.x264_args` when the
    ///   label is empty or absent;
    /// - fps: `fps_num`/`fps_den`; timebase: `timebase_num`/`timebase_den`;
    /// - target: `settings.resolved.bitrate_kbps` when `settings.resolved.rc_method` is `abr`, else nil;
    /// - maxrate: `settings.resolved.vbv_maxrate_kbps` when it is above 0 and differs from the target, else nil.
    /// - Throws: `.data` starting "run N:" (the caller names the database) for a run that is not `done`, a done run
    ///   without frames, a missing or non-positive rate or timebase, a rate and timebase whose frame duration in
    ///   ticks does not fit 64 bits, settings that are not a JSON object, settings without `resolved.rc_method`
    ///   (or without `resolved.bitrate_kbps` for `abr`), or a frame the plots cannot be drawn from (see
    ///   ``checkFrames(_:runID:database:)``, whose message names `database`).
    public init(run: LabStore.RunRow, frames: [LabStore.FrameRow], database: String? = nil) throws {
        let id = run.runID
        guard run.status == "done" else { throw LabError.data("run \(id): status \(run.status), it has no frames to plot") }
        guard !frames.isEmpty else { throw LabError.data("run \(id): done, but no frames are stored") }
        guard let tbNum = run.timebaseNum, let tbDen = run.timebaseDen, tbNum > 0, tbDen > 0 else {
            throw LabError.data("run \(id): timebase_num/timebase_den are \(run.timebaseNum.map(String.init) ?? "NULL")/\(run.timebaseDen.map(String.init) ?? "NULL"), expected two numbers above 0")
        }
        guard let fpsNum = run.fpsNum, let fpsDen = run.fpsDen, fpsNum > 0, fpsDen > 0,
              let fps = try? Rational(Int64(fpsNum), Int64(fpsDen)) else {
            throw LabError.data("run \(id): fps_num/fps_den are \(run.fpsNum.map(String.init) ?? "NULL")/\(run.fpsDen.map(String.init) ?? "NULL"), expected two numbers above 0")
        }
        guard let timebase = try? Rational(Int64(tbNum), Int64(tbDen)), (try? fps.reciprocal / timebase) != nil,
              (try? fps.reciprocal.times(Int64(frames.count))) != nil else {
            throw LabError.data("run \(id): a frame of \(fpsDen)/\(fpsNum) s in ticks of \(tbNum)/\(tbDen) s does not fit 64 bits")
        }
        try Self.checkFrames(frames, runID: id, database: database)
        let settings = try StoredRunSettings(json: run.settingsJSON, runID: id)
        guard let method = settings.rcMethod else { throw LabError.data("run \(id): settings hold no resolved.rc_method") }
        var target: Double?
        if method == "abr" {
            guard let bitrate = settings.resolvedNumber("bitrate_kbps") else {
                throw LabError.data("run \(id): settings hold rc_method abr but no resolved.bitrate_kbps")
            }
            target = bitrate
        }
        let vbv = settings.resolvedNumber("vbv_maxrate_kbps") ?? 0
        let label = settings.label.isEmpty ? settings.x264Arguments : settings.label
        self.init(title: "\((run.clip as NSString).lastPathComponent) \(label)", fps: fps, timebaseNum: tbNum,
                  timebaseDen: tbDen, targetKbps: target, maxrateKbps: vbv > 0 && vbv != target ? vbv : nil, frames: frames)
        isCheck = run.experiment == CheckRuns.experiment && run.runKey == nil
    }

    /// The largest `size_bytes` a plotted frame may have (``FrameRanges/maximumFrameBytes``).
    public static let maximumFrameBytes = FrameRanges.maximumFrameBytes

    /// The largest magnitude of a plotted frame's pts and dts, in ticks (``FrameRanges/maximumTimestampTicks``).
    public static let maximumTimestampTicks = FrameRanges.maximumTimestampTicks

    /// Checks that stored frames (in decode order) can be drawn: each `size_bytes` in 0 ... 2^40
    /// (``maximumFrameBytes``), each pts and dts in -2^60 ... 2^60 (``maximumTimestampTicks``). A DTS below the
    /// one before it is drawn (x264 writes one when it is given PTS that go back): the window bitrate counts
    /// such a frame at the largest DTS before it.
    /// - Throws: `.data` "DATABASE: run N: frame coded_index C: ..." naming the column, its value and the allowed range.
    public static func checkFrames(_ frames: [LabStore.FrameRow], runID id: Int64, database: String?) throws {
        for f in frames {
            try checkFrame(codedIndex: Int64(f.codedIndex), sizeBytes: Int64(f.sizeBytes), pts: f.pts, dts: f.dts, runID: id, database: database)
        }
    }

    /// Checks one stored frame against the ranges every reader of stored frames holds them to (``FrameRanges``).
    public static func checkFrame(codedIndex: Int64, sizeBytes: Int64, pts: Int64, dts: Int64, runID id: Int64, database: String?,
                                  use: String = "plotted") throws {
        try FrameRanges.check(codedIndex: codedIndex, sizeBytes: sizeBytes, pts: pts, dts: dts, runID: id, database: database, use: use)
    }
}
