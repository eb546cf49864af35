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
    ///   without frames, a missing or non-positive rate or timebase, settings that are not a JSON object, or
    ///   settings without `resolved.rc_method` (or without `resolved.bitrate_kbps` for `abr`).
    public init(run: LabStore.RunRow, frames: [LabStore.FrameRow]) throws {
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
    }
}
