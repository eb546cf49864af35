import Foundation

/// Progress of a long job (runs of a sweep, runs analysed, report pages) on standard error.
///
/// On a terminal it redraws one line in place, at most ten times a second:
/// `analyze [##########----------]  12/40 runs  3.1 runs/s  0:09 left`; when standard error is not a terminal
/// (a log file, CI) it writes plain lines instead, one per step when `everyStep` is set (a sweep's runs), otherwise at
/// most one a second plus the last (thousands of small steps). Safe to call from several threads.
///
/// The time left is the remaining count divided by the mean rate since the start (steps done / seconds elapsed);
/// it is shown once a step is done and a tenth of a second has passed.
public final class Progress: @unchecked Sendable {
    /// What the line starts with ("run", "analyze", "report").
    public let label: String
    /// The number of steps in the job (>= 0).
    public let total: Int
    /// The word for one step ("runs", "pages").
    public let unit: String
    private let terminal: Bool
    private let everyStep: Bool
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> Double
    private let lock = NSLock()
    private let start: Double
    private var done = 0
    private var lastDraw = -Double.infinity
    private var finished = false
    private var drewOnTerminal = false

    /// - Parameters:
    ///   - label: the line's first word.
    ///   - total: steps in the job.
    ///   - unit: the word for a step.
    ///   - everyStep: plain output writes a line for every step (otherwise at most one a second).
    ///   - terminal: draw a bar in place; nil asks `isatty(2)`.
    ///   - write: where text goes (standard error unless a test captures it).
    ///   - now: a clock in seconds (monotonic unless a test supplies one).
    public init(label: String, total: Int, unit: String, everyStep: Bool = false, terminal: Bool? = nil,
                write: (@Sendable (String) -> Void)? = nil, now: (@Sendable () -> Double)? = nil) {
        self.label = label
        self.total = max(0, total)
        self.unit = unit
        self.everyStep = everyStep
        self.terminal = terminal ?? (isatty(2) == 1)
        self.write = write ?? { text in FileHandle.standardError.write(Data(text.utf8)) }
        let clock = now ?? { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        self.now = clock
        self.start = clock()
    }

    /// Counts `steps` more done; `detail` (a run's label, say) is added to a plain line.
    public func advance(by steps: Int = 1, detail: String? = nil) {
        lock.lock(); defer { lock.unlock() }
        guard !finished else { return }
        done = min(total, done + max(0, steps))
        let t = now()
        if terminal {
            guard t - lastDraw >= 0.1 || done == total else { return }
            lastDraw = t
            drewOnTerminal = true
            write("\r\u{1B}[K" + Progress.line(label: label, done: done, total: total, unit: unit, elapsed: t - start, bar: 20))
        } else {
            guard everyStep || t - lastDraw >= 1 || done == total else { return }
            lastDraw = t
            var line = Progress.line(label: label, done: done, total: total, unit: unit, elapsed: t - start, bar: 0)
            if let detail, !detail.isEmpty { line += "  " + detail }
            write(line + "\n")
        }
    }

    /// Ends the bar's line on a terminal (so later messages start on a line of their own). Idempotent.
    public func finish() {
        lock.lock(); defer { lock.unlock() }
        guard !finished else { return }
        finished = true
        if terminal && drewOnTerminal { write("\n") }
    }

    /// One progress line: label, a bar of `bar` cells (none when 0), `done/total unit`, the rate and the time left.
    ///
    /// The rate is `done / elapsed` steps per second with two significant decimals below 10 and none above; the time
    /// left is `(total - done) / rate` rounded up to whole seconds, as `M:SS` or `H:MM:SS`. Both are left out before
    /// the first step or the first tenth of a second.
    public static func line(label: String, done: Int, total: Int, unit: String, elapsed: Double, bar: Int) -> String {
        var parts = [label]
        if bar > 0 {
            let filled = total > 0 ? min(bar, done * bar / total) : bar
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "-", count: bar - filled) + "]")
        }
        let width = String(total).count
        parts.append(String(repeating: " ", count: max(0, width - String(done).count)) + "\(done)/\(total) \(unit)")
        if done > 0 && elapsed >= 0.1 {
            let rate = Double(done) / elapsed
            parts.append((rate < 10 ? String(format: "%.2f", rate) : String(format: "%.0f", rate)) + " \(unit)/s")
            if done < total {
                parts.append(clock(seconds: Int((Double(total - done) / rate).rounded(.up))) + " left")
            } else {
                parts.append(clock(seconds: Int(elapsed.rounded())) + " taken")
            }
        }
        return parts.joined(separator: "  ")
    }

    /// `M:SS` below an hour, `H:MM:SS` from an hour on; negative values read as 0.
    public static func clock(seconds: Int) -> String {
        let s = max(0, seconds)
        let (h, m, r) = (s / 3600, s / 60 % 60, s % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, r) : String(format: "%d:%02d", m, r)
    }
}
