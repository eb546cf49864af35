import Foundation
import EncoderLab
import EnclabTestSupport
import Testing

/// The lab of the report suites (``ReportFinishTests``, ``ReportReviewTests``), made the same way for both.
enum ReportLab {
    typealias CLI = CommandLineTests

    /// In `dir`: `clip` written as c.y4m; `enclab encode c.y4m FLAGS COMMON --db lab.sqlite --out out` once per entry of
    /// `runs` (runs 1 ... n); a keyint-25 stream of the clip (IDR at 0, 25, 50: encoded apart into k.sqlite and kout/)
    /// copied to keyint25.264 and checked with `check --db lab.sqlite` against each of `expect` (run n + 1; the check
    /// must find violations: exit 1); then `enclab report --db lab.sqlite --out rep --runs 1,...,n+1` with `report`.
    static func make(in dir: String, clip: SyntheticClip, runs: [[String]], common: [String], expect: [String],
                     report: [String] = []) throws {
        try clip.write(to: "\(dir)/c.y4m")
        for flags in runs {
            let r = try CLI.process(CLI.binary, ["encode", "c.y4m"] + flags + common + ["--db", "lab.sqlite", "--out", "out"], in: dir)
            try #require(r.status == 0, "\(r.stderr)")
        }
        let k = try CLI.process(CLI.binary, ["encode", "c.y4m", "--threads", "1", "--keyint", "25", "--min-keyint", "25", "--scenecut", "0",
                                             "--bframes", "0", "--db", "k.sqlite", "--out", "kout"], in: dir)
        try #require(k.status == 0, "\(k.stderr)")
        let stream = try CLI.process("/usr/bin/sqlite3", ["k.sqlite", "SELECT stream_path FROM runs"], in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(try CLI.process("/bin/cp", [stream, "keyint25.264"], in: dir).status == 0)
        let check = try CLI.process(CLI.binary, ["check"] + expect.flatMap { ["--expect", $0] } + ["--db", "lab.sqlite", "keyint25.264"], in: dir)
        try #require(check.status == 1, "the check finds violations: \(check.stdout)\(check.stderr)")
        let ids = (1...(runs.count + 1)).map(String.init).joined(separator: ",")
        let r = try CLI.process(CLI.binary, ["report", "--db", "lab.sqlite", "--out", "rep", "--runs", ids] + report, in: dir)
        try #require(r.status == 0, "\(r.stderr)")
    }
}
