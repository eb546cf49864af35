import Foundation
import H264

/// A run's metrics (docs/schema.md, `run_metrics` and `run_gops`), computed from the store only: the
/// `runs` row, its `frames` rows (sizes, types, PTS/DTS, QP, the lab's own `sse_*`, SSIM), `timestamp_analysis` and
/// the stored settings. The encoder is never needed, so runs recorded by `enclab check --db` (foreign streams) are
/// analysed too, with NULL where they carry no data (QP, PSNR, SSIM, target, VBV).
///
/// Definitions (each column's in the README):
/// - **Span**: largest PTS − smallest PTS + the last frame's duration, in seconds. The last frame's duration is, in
///   order of preference: `timestamp_analysis.span_ticks` minus the PTS range (the lab's own runs); the stream's end
///   from `settings.check.end_pts` (check runs); one nominal frame, (1 / fps) in ticks. `bitrate_kbps` is all bytes of
///   the stream (Σ `frames.size_bytes`) × 8 / span / 1000.
/// - **Peak 1 s**: the most bits in one full window of the lab's one window rule (``DecodeTimeWindows``, W = 1 s), in
///   kbit/s; NULL when no window is full (a stream shorter than 1 s).
/// - **GOPs**: in decode order, each keyframe (`frames.keyframe` 1) starts one; frames before the first keyframe (a
///   stream cut mid-GOP) form a leading GOP without one. A GOP's seconds run from its first PTS (its keyframe's, or the
///   leading GOP's smallest) to the next GOP's, the last one's to the stream's end (largest PTS + last duration).
/// - **Sizes per type**: I = IDR and I, P = P, B = B and Bref; mean, 95th percentile by the nearest-rank definition
///   (the ⌈0.95·n⌉-th smallest of n sizes) and maximum, in bytes.
/// - **PSNR and SSIM**: ``QualityPooling`` on the frames that carry the lab's `sse_*` (from its own decode, never
///   x264's report), weighted by each frame's duration in display order as x264 weights its statistics (next PTS −
///   this PTS, the last frame its last duration); by frame when a duration is not positive or does not fit.
/// - **VBV**: ``VBVReplay`` of the frame sizes over the arrivals (running maximum DTS) with the resolved
///   `vbv_maxrate_kbps`, `vbv_bufsize_kbit` and `vbv_init` (0.9 when absent), CBR mode when `nal_hrd` is `cbr` or the
///   lab's `rc` is `cbr`; NULL without a VBV.
public struct RunMetrics: Sendable, Equatable {
    /// One GOP of `run_gops`.
    public struct GOP: Sendable, Equatable {
        /// From 0, in decode order.
        public var index: Int
        /// Coded index of its first frame.
        public var firstFrame: Int
        /// Whether it starts with a keyframe (false only for a leading GOP of a stream cut mid-GOP).
        public var keyframe: Bool
        public var frames: Int
        /// Display time it covers, nil when the run's timebase is unknown.
        public var seconds: Double?
        public var bytes: Int64
        /// bytes × 8 / seconds / 1000; nil without positive seconds.
        public var kbps: Double?
    }

    public var runID: Int64
    /// `run_metrics`'s columns after `run_id`, by name (``LabStore/runMetricsColumns``): NULL where there is no value.
    public var columns: [String: SQLValue]
    public var gops: [GOP]

    /// A column as a number (integers as Double), nil for NULL or text.
    public subscript(_ name: String) -> Double? { columns[name]?.double }

    // MARK: - Computing

    /// The most bytes a run's frames may add up to (`run_metrics.stream_bytes`): 2^53, so that every integer the
    /// metrics hold (bytes, counts, frame indices) is in 0 ... 2^53, where a double holds each one exactly and no
    /// difference of two overflows. Each frame is at most 2^40 bytes (``FrameRanges/maximumFrameBytes``).
    public static let maximumStreamBytes: Int64 = 1 << 53

    /// A stored value as an error message shows it: NULL, an integer, a real, or text (quoted, shortened).
    static func described(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return "the real \(v)"
        case .text(let t): return "the text '\(Shown.text(t, limit: 40))'"
        case .blob(let b): return "a BLOB of \(b.count) bytes"
        }
    }

    /// Computes run `runID`'s metrics from what the store holds of it: its `runs` row (`run`), its `frames` rows in
    /// coded order (`frames`) and `timestamp_analysis.span_ticks` (`spanTicks`, nil without one). Messages name
    /// `shownPath` (the database). Store reads these (``compute(database:runID:shownPath:)``).
    /// - Throws: `.data` as ``compute(store:runID:)`` says.
    static func compute(run: StoredRun, frames rows: [StoredFrame], spanTicks: Int64?, runID: Int64,
                        shownPath: String) throws -> RunMetrics {
        let name = "\(shownPath): run \(runID)"
        guard let status = run.status.string else { throw LabError.data("\(name): status holds \(described(run.status)), expected text") }
        guard status == "done" else { throw LabError.data("\(name): status \(status), nothing to analyse") }
        guard !rows.isEmpty else { throw LabError.data("\(name): done, but no frames are stored") }
        guard let settingsText = run.settings.string else {
            throw LabError.data("\(name): settings holds \(described(run.settings)), expected JSON text")
        }
        let settings = try StoredRunSettings(json: settingsText, runID: runID)
        let check = ((try? JSONSerialization.jsonObject(with: Data(settingsText.utf8))) as? [String: Any])?["check"] as? [String: Any]

        struct F { var coded: Int; var type: String; var key: Bool; var size: Int64; var pts: Int64; var dts: Int64
                   var qp: Double?; var sse: (Int64, Int64, Int64)?; var ssim: Double? }
        var frames: [F] = []
        var streamBytes: Int64 = 0
        for (k, r) in rows.enumerated() {
            guard let coded = r.codedIndex.int else {
                throw LabError.data("\(name): frame \(k) in coded order: coded_index holds \(described(r.codedIndex)), expected an integer")
            }
            let at = "\(name): frame coded_index \(coded)"
            func integer(_ column: String, _ value: SQLValue) throws -> Int64 {
                guard let v = value.int else { throw LabError.data("\(at): \(column) holds \(described(value)), expected an integer") }
                return v
            }
            /// NULL as nil; anything but a finite number refused (``SQLValue/measurement``).
            func number(_ column: String, _ value: SQLValue) throws -> Double? {
                guard let v = value.measurement else {
                    throw LabError.data("\(at): \(column) holds \(described(value)), expected a finite number or NULL")
                }
                return v
            }
            /// NULL as nil; anything but an integer refused.
            func optionalInteger(_ column: String, _ value: SQLValue) throws -> Int64? {
                if case .null = value { return nil }
                return try integer(column, value)
            }
            guard let type = r.type.string else { throw LabError.data("\(at): type holds \(described(r.type)), expected text") }
            let size = try integer("size_bytes", r.sizeBytes), pts = try integer("pts", r.pts), dts = try integer("dts", r.dts)
            try FrameRanges.check(codedIndex: coded, sizeBytes: size, pts: pts, dts: dts, runID: runID, database: shownPath, use: "analysed")
            let sum = streamBytes.addingReportingOverflow(size)
            guard !sum.overflow, sum.partialValue <= maximumStreamBytes else {
                throw LabError.data("\(at): size_bytes \(size) takes the run's bytes past \(maximumStreamBytes) (2^53), more than the metrics hold")
            }
            streamBytes = sum.partialValue
            let sse: (Int64, Int64, Int64)?
            if let y = try optionalInteger("sse_y", r.sseY), let u = try optionalInteger("sse_u", r.sseU),
               let v = try optionalInteger("sse_v", r.sseV) { sse = (y, u, v) } else { sse = nil }
            frames.append(F(coded: Int(coded), type: type, key: try integer("keyframe", r.keyframe) != 0, size: size, pts: pts, dts: dts,
                            qp: try number("qp", r.qp), sse: sse, ssim: try number("ssim", r.ssim)))
        }
        var c: [String: SQLValue] = [:]
        func set(_ key: String, _ v: Double?) { c[key] = v.flatMap { $0.isFinite ? SQLValue.real($0) : nil } ?? .null }
        func set(_ key: String, _ v: Int?) { c[key] = v.map { .integer(Int64($0)) } ?? .null }
        func set(_ key: String, _ v: Int64?) { c[key] = v.map { .integer($0) } ?? .null }

        let n = frames.count
        set("frames", n)
        set("stream_bytes", streamBytes)

        // Time: the timebase, the PTS range and the last frame's duration (exact, in ticks).
        let timebase: Rational? = {
            guard let a = run.timebaseNum.int, let b = run.timebaseDen.int, a > 0, b > 0 else { return nil }
            return try? Rational(a, b)
        }()
        let fps: Rational? = {
            guard let a = run.fpsNum.int, let b = run.fpsDen.int, a > 0, b > 0 else { return nil }
            return try? Rational(a, b)
        }()
        let byDisplay = frames.sorted { ($0.pts, $0.coded) < ($1.pts, $1.coded) }
        let minPTS = byDisplay[0].pts, maxPTS = byDisplay[n - 1].pts
        let range = maxPTS.subtractingReportingOverflow(minPTS)
        var lastTicks: Rational?
        if let tb = timebase, !range.overflow {
            if let span = spanTicks, span > range.partialValue {
                lastTicks = Rational(span - range.partialValue)
            } else if let end = (check?["end_pts"] as? NSNumber).flatMap({ $0.doubleValue.magnitude < 9e18 ? $0.int64Value : nil }),
                      end > maxPTS, case let (d, false) = end.subtractingReportingOverflow(maxPTS) {
                lastTicks = Rational(d)
            } else if let fps {
                lastTicks = try? fps.reciprocal / tb
            }
        }
        var spanSeconds: Double?
        if let tb = timebase, let last = lastTicks, let s = try? (Rational(range.partialValue) + last) * tb, s > .zero {
            spanSeconds = s.approximateValue
        }
        set("span_seconds", spanSeconds)
        let bitrate = spanSeconds.map { Double(streamBytes) * 8 / $0 / 1000 }
        set("bitrate_kbps", bitrate)
        var target: Double?
        if settings.rcMethod == "abr", let b = settings.resolvedNumber("bitrate_kbps"), b > 0 { target = b }
        set("target_kbps", target)
        set("target_error_pct", bitrate.flatMap { b in target.map { (b - $0) / $0 * 100 } })

        // Peak 1 s over full windows.
        var peak: Double?
        if let tb = timebase {
            let windows = DecodeTimeWindows.windows(dtsTicks: frames.map(\.dts), sizesBytes: frames.map { Int($0.size) }, timebase: tb,
                                                    window: .one, lastFrameTicks: lastTicks ?? .zero)
            var best: DecodeTimeWindows.Window?
            var full = 0
            for (i, w) in windows.enumerated() where w.firstIndex == i && w.full {
                full += 1
                if best == nil || w.bytes > best!.bytes { best = w }
            }
            peak = best.map { Double($0.bytes) * 8 / 1000 }
            set("peak_1s_start_frame", best.map { frames[$0.firstIndex].coded })
            set("full_1s_windows", full)
        } else {
            set("peak_1s_start_frame", nil as Int?)
            set("full_1s_windows", 0)
        }
        set("peak_1s_kbps", peak)
        set("peak_to_average", peak.flatMap { p in bitrate.flatMap { $0 > 0 ? p / $0 : nil } })

        // Sizes and QP per type.
        func group(_ types: Set<String>) -> [F] { frames.filter { types.contains($0.type) } }
        let groups = [("i", group(["IDR", "I"])), ("p", group(["P"])), ("b", group(["B", "Bref"]))]
        var means: [String: Double] = [:]
        for (prefix, g) in groups {
            set("\(prefix)_frames", g.count)
            let sizes = g.map(\.size).sorted()
            let mean = sizes.isEmpty ? nil : Double(sizes.reduce(Int128(0)) { $0 + Int128($1) }) / Double(sizes.count)
            means[prefix] = mean
            set("\(prefix)_mean_bytes", mean)
            set("\(prefix)_p95_bytes", Self.nearestRank(sizes, percent: 95))
            set("\(prefix)_max_bytes", sizes.last)
            let qps = g.compactMap(\.qp)
            set("qp_mean_\(prefix)", qps.isEmpty || qps.count < g.count ? nil : qps.reduce(0, +) / Double(qps.count))
        }
        func ratio(_ a: String, _ b: String) -> Double? {
            guard let x = means[a], let y = means[b], y > 0 else { return nil }
            return x / y
        }
        set("i_to_p_ratio", ratio("i", "p"))
        set("b_to_p_ratio", ratio("b", "p"))

        // GOPs, decode order.
        var starts: [Int] = frames.indices.filter { frames[$0].key }
        if starts.first != 0 { starts.insert(0, at: 0) }
        let endTicks: Rational? = lastTicks.flatMap { try? Rational(maxPTS) + $0 }
        var gops: [GOP] = []
        for (g, s) in starts.enumerated() {
            let e = g + 1 < starts.count ? starts[g + 1] : n
            let members = frames[s..<e]
            let first = members[s].key ? members[s].pts : members.map(\.pts).min()!
            var seconds: Double?
            if let tb = timebase {
                let next: Rational? = g + 1 < starts.count ? Rational(frames[starts[g + 1]].pts) : endTicks
                if let next, let d = try? (next - Rational(first)) * tb { seconds = d.approximateValue }
            }
            let bytes = members.reduce(Int64(0)) { $0 + $1.size }  // at most streamBytes
            gops.append(GOP(index: g, firstFrame: frames[s].coded, keyframe: frames[s].key, frames: e - s, seconds: seconds,
                            bytes: bytes, kbps: seconds.flatMap { $0 > 0 ? Double(bytes) * 8 / $0 / 1000 : nil }))
        }
        set("keyframes", frames.filter(\.key).count)
        set("gops", gops.count)
        set("gop_min_frames", gops.map(\.frames).min())
        set("gop_max_frames", gops.map(\.frames).max())
        set("gop_mean_frames", Double(n) / Double(gops.count))
        let gopSeconds = gops.compactMap(\.seconds)
        set("gop_mean_seconds", gopSeconds.count == gops.count ? gopSeconds.reduce(0, +) / Double(gopSeconds.count) : nil)
        set("gop_max_seconds", gopSeconds.count == gops.count ? gopSeconds.max() : nil)
        set("peak_gop_kbps", gops.compactMap(\.kbps).max())

        // Quality from the lab's own squared errors.
        let measured = byDisplay.enumerated().compactMap { i, f -> (F, Int)? in f.sse == nil ? nil : (f, i) }
        var pooled: QualityPooling.Result?
        if let w = run.width.int, let h = run.height.int, !measured.isEmpty {
            // Durations in display order, scaled to whole numbers by the last duration's denominator.
            var durations: [Int64]? = nil
            if let last = lastTicks {
                var d: [Int64] = []
                for i in 0..<n {
                    if i + 1 < n {
                        let (step, o1) = byDisplay[i + 1].pts.subtractingReportingOverflow(byDisplay[i].pts)
                        let (scaled, o2) = step.multipliedReportingOverflow(by: last.denominator)
                        guard !o1, !o2, scaled > 0 else { d = []; break }
                        d.append(scaled)
                    } else if last.numerator > 0 { d.append(last.numerator) } else { d = [] }
                }
                if d.count == n { durations = d }
            }
            let weighting: QualityPooling.Weighting = durations == nil ? .frame : .duration
            let input = measured.map { f, i in
                QualityPooling.Frame(sseY: f.sse!.0, sseU: f.sse!.1, sseV: f.sse!.2, ssim: f.ssim, duration: durations?[i])
            }
            pooled = try? QualityPooling.pool(input, width: Int(w), height: Int(h), weighting: weighting)
        }
        set("psnr_frames", pooled?.frames ?? 0)
        c["psnr_weighting"] = pooled.map { .text($0.weighting.rawValue) } ?? .null
        set("psnr_y_mean_frame", pooled?.meanOfFrames.y)
        set("psnr_u_mean_frame", pooled?.meanOfFrames.u)
        set("psnr_v_mean_frame", pooled?.meanOfFrames.v)
        set("psnr_avg_mean_frame", pooled?.meanOfFrames.all)
        set("psnr_y_pooled", pooled?.pooled.y)
        set("psnr_u_pooled", pooled?.pooled.u)
        set("psnr_v_pooled", pooled?.pooled.v)
        set("psnr_global", pooled?.pooled.all)
        set("psnr_611", pooled?.pooled.weighted611)
        // A run encoded with `--verify none` has no decode of its own: its squared errors stand for x264's PSNR.
        let unverified = (settings.resolved?["verify"] as? String) == "none"
        c["psnr_source"] = pooled == nil ? .null : .text(unverified ? "x264" : "lab")
        // SSIM: x264's per-frame luma SSIM where stored (the lab measures none of its own).
        let ssims = byDisplay.compactMap(\.ssim)
        let ssimMean = ssims.isEmpty ? nil : ssims.reduce(0, +) / Double(ssims.count)
        set("ssim_mean", ssimMean)
        set("ssim_db", ssimMean.flatMap(QualityPooling.ssimDecibels))

        // VBV.
        var underflows: Int?, overflows: Int?
        if let tb = timebase, let maxrate = settings.resolvedNumber("vbv_maxrate_kbps"), maxrate > 0,
           let bufsize = settings.resolvedNumber("vbv_bufsize_kbit"), bufsize > 0,
           let m = Int64(exactly: maxrate.rounded()), let b = Int64(exactly: bufsize.rounded()) {
            let initial = settings.resolvedNumber("vbv_init").flatMap { v -> Rational? in
                guard v > 0, v < 1e9 else { return nil }
                return try? Rational(Int64((v * 1_000_000).rounded()), 1_000_000)
            } ?? VBVReplay.Parameters.defaultInit
            let cbr = (settings.resolved?["nal_hrd"] as? String) == "cbr" || settings.rc == "cbr"
            let parameters = VBVReplay.Parameters(maxrateKbps: m, bufsizeKbit: b, vbvInit: initial, mode: cbr ? .cbr : .vbr, frameRate: fps)
            let arrivals = DecodeTimeWindows.arrivals(frames.map(\.dts)).map { Int64($0) }
            if let r = try? VBVReplay.replay(bits: frames.map { $0.size &* 8 }, dts: arrivals, timebase: tb, parameters: parameters) {
                underflows = r.events.filter { if case .underflow = $0 { return true }; return false }.count
                overflows = r.events.filter { if case .overflow = $0 { return true }; return false }.count
            }
        }
        set("vbv_underflows", underflows)
        set("vbv_overflows", overflows)

        return RunMetrics(runID: runID, columns: c, gops: gops)
    }

    /// The nearest-rank percentile of ascending `sorted` values: the ⌈percent/100 · n⌉-th smallest (1-based), nil for
    /// no values. For 95 and 20 values that is the 19th; for 1 value the value itself.
    public static func nearestRank(_ sorted: [Int64], percent: Int) -> Int64? {
        guard !sorted.isEmpty, percent > 0, percent <= 100 else { return nil }
        let rank = (percent * sorted.count + 99) / 100
        return sorted[rank - 1]
    }
}

extension RunMetrics {
    /// The columns of a `runs` row that the metrics read, each as stored (a damaged database may hold the wrong kind,
    /// which ``compute(run:frames:spanTicks:runID:shownPath:)`` names).
    struct StoredRun {
        var status: SQLValue
        var settings: SQLValue
        var timebaseNum: SQLValue
        var timebaseDen: SQLValue
        var fpsNum: SQLValue
        var fpsDen: SQLValue
        var width: SQLValue
        var height: SQLValue
    }

    /// One `frames` row as the metrics read it, each column as stored.
    struct StoredFrame {
        var codedIndex: SQLValue
        var type: SQLValue
        var keyframe: SQLValue
        var sizeBytes: SQLValue
        var pts: SQLValue
        var dts: SQLValue
        var qp: SQLValue
        var sseY: SQLValue
        var sseU: SQLValue
        var sseV: SQLValue
        var ssim: SQLValue
    }
}
