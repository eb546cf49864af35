import Foundation
import H264

/// A clip's own presentation times as ffprobe reads them from its container, for inputs decoded by ffmpeg.
///
/// Two readings, both through ``FFmpegInput/standardInputURL`` with ``FFmpegInput/inputRestrictions`` (the clip's
/// name never reaches ffprobe):
/// - ``frames(path:)``: `best_effort_timestamp` of every decoded frame of the first video stream, in output order:
///   the times ffmpeg's `-fps_mode passthrough` decode (``Clip``) gives its frames, one for one. This decodes the
///   clip (`--pts-source file`).
/// - ``packets(path:)``: the `pts` of every packet of that stream, sorted: no decode, for the check that a clip is
///   at a constant rate and for counting its frames.
public struct SourceTimes: Sendable, Equatable {
    /// The stream's time base (seconds per tick), from ffprobe's `stream=time_base`.
    public var timebase: Rational
    /// Each frame's (or packet's) time in ticks of ``timebase``.
    public var ticks: [Int64]
    /// The last frame's `pkt_duration` in ticks when ffprobe gives one (frames only), else nil.
    public var lastDuration: Int64?

    /// The times in microseconds, each rounded to nearest, ties away from zero (``Rational/microseconds(ticks:)``).
    /// - Throws: `.data` when a time does not fit in 64-bit microseconds.
    public func microseconds(path: String) throws -> [Int64] {
        try ticks.enumerated().map { k, t in
            do { return try timebase.microseconds(ticks: t) } catch {
                throw LabError.data("\(path): frame \(k)'s time \(t) x \(timebase) s does not fit in 64-bit microseconds")
            }
        }
    }

    /// Every decoded frame's `best_effort_timestamp`, in the order ffmpeg outputs the frames.
    /// - Throws: `.data` naming the file when ffprobe fails or a frame has no timestamp; `.software` without ffprobe.
    public static func frames(path: String) throws -> SourceTimes {
        try read(path: path, entries: "frame=best_effort_timestamp,pkt_duration", field: "best_effort_timestamp", sorted: false)
    }

    /// Every packet's `pts`, sorted (display order); packets without a pts are left out.
    /// - Throws: `.data` naming the file when ffprobe fails; `.software` without ffprobe.
    public static func packets(path: String) throws -> SourceTimes {
        try read(path: path, entries: "packet=pts", field: "pts", sorted: true)
    }

    static func read(path: String, entries: String, field: String, sorted: Bool) throws -> SourceTimes {
        let (status, output, errors) = try FFmpegInput.ffprobe(path, [
            "-select_streams", "v:0", "-show_entries", "stream=time_base:\(entries)", "-of", "default=noprint_wrappers=1"])
        guard status == 0 else {
            throw LabError.data("\(path): ffprobe could not read its timestamps: \(FFmpegInput.problem(errors, path: path) ?? "exit status \(status)")")
        }
        var timebase: Rational?
        var ticks: [Int64] = []
        var durations: [Int: Int64] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq], value = line[line.index(after: eq)...]
            if key == "time_base" {
                let parts = value.split(separator: "/")
                guard parts.count == 2, let n = Int64(parts[0]), let d = Int64(parts[1]), n > 0, d > 0,
                      let tb = try? Rational(n, d) else {
                    throw LabError.data("\(path): ffprobe gave the stream an unusable time base '\(value)'")
                }
                timebase = tb
            } else if key == "pkt_duration", let d = Int64(value), d > 0, !ticks.isEmpty {
                durations[ticks.count - 1] = d
            } else if key == field {
                if let t = Int64(value) {
                    ticks.append(t)
                } else if !sorted {
                    throw LabError.data("\(path): frame \(ticks.count) has no timestamp (ffprobe: \(field)=\(value)); --pts-source file needs one per frame")
                }
            }
        }
        guard let timebase else { throw LabError.data("\(path): ffprobe found no video stream") }
        return SourceTimes(timebase: timebase, ticks: sorted ? ticks.sorted() : ticks,
                           lastDuration: sorted ? nil : durations[ticks.count - 1])
    }

    /// What the constant-rate plan hides: the real span and largest gap when the times are not at the nominal
    /// rate, as one warning line; nil when every gap between consecutive times is within a quarter of a frame of
    /// the nominal frame duration (container rounding stays far inside that).
    /// - Parameters:
    ///   - microseconds: the times in display order (sorted).
    ///   - nominalRate: the rate the clip is encoded at without `--pts-source file`, frames per second.
    public static func constantRateWarning(path: String, microseconds times: [Int64], nominalRate: Rational) -> String? {
        guard times.count > 1, let frameUs = try? nominalRate.reciprocal.microseconds(ticks: 1), frameUs > 0 else { return nil }
        var largest: (gap: Int64, at: Int) = (0, 0)
        var uneven = false
        for k in 1..<times.count {
            let gap = times[k] - times[k - 1]
            if gap > largest.gap { largest = (gap, k) }
            if abs(gap - frameUs) * 4 > frameUs { uneven = true }
        }
        guard uneven else { return nil }
        let real = Double(times[times.count - 1] - times[0] + frameUs) / 1e6
        let nominal = Double(Int64(times.count) * frameUs) / 1e6
        return "\(path): its timestamps are not at a constant rate: the file spans \(String(format: "%.3f", real)) s "
            + "(first to last frame plus one frame), largest gap \(String(format: "%.3f", Double(largest.gap) / 1e6)) s before frame \(largest.at); "
            + "encoded at the nominal \(nominalRate) fps the \(times.count) frames span \(String(format: "%.3f", nominal)) s; --pts-source file uses the file's times"
    }
}
