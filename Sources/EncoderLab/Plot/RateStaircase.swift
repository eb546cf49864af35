import Foundation
import H264

/// A run's rate schedule drawn (docs/rate-control-in-motion.md): `rate.png/svg` with `rate.dat`, `rate-steps.dat`,
/// `rate-changes.dat` and `rate.gp`, beside the run's `frames.*`, when the run has `rate_changes` rows.
///
/// - `rate.dat`: one row per frame in decode order: seconds of its DTS from the first frame's (the running maximum, as
///   the windows count it) and the 1-s windowed bitrate starting there (``WindowedBitrate``; NaN past the end).
/// - `rate-steps.dat`: the target in force as a staircase: the opened target (the run's resolved bitrate, absent
///   under CRF and CQP) at the first frame, then each change x264 applied (`status` applied) with a target, at the DTS
///   of the frame it landed on, and the last target again at the last frame.
/// - `rate-changes.dat`: every change that reached a frame, one row each: change index, seconds of its frame's DTS,
///   its target (NaN without one) and its status (applied 0, unchanged 1, ignored 2, refused 3); drawn as marks on
///   the staircase, ignored and refused ones crossed.
extension Plots {
    /// The status names, by their index in `rate-changes.dat`.
    static let rateStatuses = ["applied", "unchanged", "ignored", "refused"]

    /// Writes the files and queues the chart on `queue`; does nothing without `changes`.
    static func writeRateStaircase(_ input: RunPlotInput, changes: [LabStore.StoredRateChange], dir: String, queue: PlotQueue) throws {
        guard !changes.isEmpty, !input.frames.isEmpty else { return }
        let frames = input.frames
        let timebase = try Rational(Int64(input.timebaseNum), Int64(input.timebaseDen))
        let frameTicks = try input.fps.reciprocal / timebase
        var arrival: [Int64] = []
        for f in frames { arrival.append(max(arrival.last ?? f.dts, f.dts)) }
        let windows = WindowedBitrate.compute(sizes: frames.map(\.sizeBytes), dts: arrival, timebase: timebase, frameTicks: frameTicks)
        let first = arrival[0]
        func seconds(_ ticks: Int64) -> Double { Double(ticks - first) * timebase.approximateValue }
        var data = "# seconds window_kbps\n"
        for (a, w) in zip(arrival, windows) { data += "\(seconds(a)) \(w.full ? String(w.kbps) : "NaN")\n" }
        try write(data, to: "\(dir)/rate.dat")
        // The DTS (arrival) of each display index.
        var arrivalOf: [Int: Int64] = [:]
        for (f, a) in zip(frames, arrival) where arrivalOf[f.displayIndex] == nil { arrivalOf[f.displayIndex] = a }
        var steps = "# seconds target_kbps\n"
        var current = input.targetKbps
        if let t = current { steps += "0.0 \(t)\n" }
        var marks = "# change_index seconds target_kbps status_index\n"
        for c in changes {
            guard let frame = c.frame, let a = arrivalOf[frame], let s = rateStatuses.firstIndex(of: c.status) else { continue }
            marks += "\(c.changeIndex) \(seconds(a)) \(c.targetKbps.map { String($0) } ?? "NaN") \(s)\n"
            if c.status == "applied", let t = c.targetKbps {
                steps += "\(seconds(a)) \(t)\n"
                current = t
            }
        }
        if let t = current { steps += "\(seconds(arrival[arrival.count - 1])) \(t)\n" }
        try write(steps, to: "\(dir)/rate-steps.dat")
        try write(marks, to: "\(dir)/rate-changes.dat")
        let body = """
        set title ARG1
        set xlabel 'seconds (DTS, from the first frame)'
        set ylabel 'bitrate (kbit/s)'
        set yrange [0:*]
        set key below horizontal
        set grid
        plot 'rate.dat' using 1:2 with lines lw 2 lc rgb 'black' title 'bitrate, 1 s DTS window', \\
             'rate-steps.dat' using 1:2 with steps lw 2 dt 2 lc rgb '#1f77b4' title 'target in force', \\
             'rate-changes.dat' using 2:($4 <= 1 ? $3 : 1/0) with points pt 7 ps 1.2 lc rgb '#2ca02c' title 'change applied', \\
             'rate-changes.dat' using 2:($4 >= 2 ? $3 : 1/0) with points pt 2 ps 1.6 lw 2 lc rgb '#d62728' title 'change ignored or refused by x264'
        """
        try both(dir: dir, name: "rate", body: body, arguments: [shown(input.title)], queue: queue)
    }
}
