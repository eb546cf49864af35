import Foundation
import Testing
@testable import EncoderLab

/// `--jobs` never changes a run: the effective x264 thread count is resolved when the run is checked and named in
/// its key, and the default number of jobs divides the cores by it.
@Suite struct SweepKeyTests {
    /// x264's automatic thread count for a picture `height` rows tall on `cores` processors (encoder.c,
    /// validate_parameters, X264_THREADS_AUTO): cores * 3 / 2, at most one thread per two macroblock rows, at least 1.
    static func x264AutoThreads(cores: Int, height: Int) -> Int {
        min(cores * 3 / 2, max(1, (height + 15) / 16 / 2))
    }

    @Test("threads absent: x264's automatic count, resolved at the check and written in the run key; threads 1: 1")
    func threadsInKey() throws {
        let scratch = Scratch()
        // 176x144 (QCIF): 9 macroblock rows, so the row cap is 4 threads and the core count decides up to 2 cores.
        try SyntheticClip(width: 176, height: 144, frames: 2, seed: 3).write(to: scratch.file("c.y4m"))
        let identity = ClipIdentity(path: scratch.file("c.y4m"), sha256: String(repeating: "0", count: 64))
        let auto = Experiment.Run(clip: scratch.file("c.y4m"), settings: try EncodeSettings.parse(arguments: ["--crf", "30"]).0, label: "")
        let one = Experiment.Run(clip: scratch.file("c.y4m"), settings: try EncodeSettings.parse(arguments: ["--crf", "30", "--threads", "1"]).0, label: "")
        let checked = try Runner.check([auto, one], experiment: "t")
        let expected = Self.x264AutoThreads(cores: Sweep.cores, height: 144)
        #expect(checked[0].resolved.threads == expected)
        #expect(checked[1].resolved.threads == 1)
        let keys = checked.map { Pipeline.spec($0, clip: identity) }
        // The key's material holds x264's options string, whose threads= is the effective count.
        #expect(keys[0].keyMaterial.contains(" threads=\(expected) "), "\(keys[0].keyMaterial)")
        #expect(keys[1].keyMaterial.contains(" threads=1 "))
        // Another thread count is another key, on any number of cores (threads 1 against the automatic count passed
        // trivially on one core, where the automatic count is 1).
        // 2 threads under the row cap of 4, 1 whatever the cores.
        let otherThreads = expected == 1 ? 2 : 1
        let other = Experiment.Run(clip: scratch.file("c.y4m"),
                                   settings: try EncodeSettings.parse(arguments: ["--crf", "30", "--threads", String(otherThreads)]).0, label: "")
        let otherKey = Pipeline.spec(try Runner.check([other], experiment: "t")[0], clip: identity)
        #expect(otherKey.keyMaterial.contains(" threads=\(otherThreads) "), "\(otherKey.keyMaterial)")
        #expect(keys[0].key != otherKey.key)
        // Sweep.cores is what x264 counts: sched_getaffinity's CPUs, as nproc prints them.
        let nproc = try Witness.run("nproc", []).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(String(Sweep.cores) == nproc)
    }

    @Test("default --jobs: cores divided by the largest thread count of the runs, at least 1")
    func defaultJobs() {
        #expect(Sweep.defaultJobs(threadsPerRun: [1, 1], cores: 2) == 2)
        #expect(Sweep.defaultJobs(threadsPerRun: [3], cores: 2) == 1)      // 2 / 3 rounds down to 0, raised to 1
        #expect(Sweep.defaultJobs(threadsPerRun: [1, 3], cores: 8) == 2)   // 8 / 3 = 2.67
        #expect(Sweep.defaultJobs(threadsPerRun: [2], cores: 16) == 8)
        #expect(Sweep.defaultJobs(threadsPerRun: [], cores: 4) == 4)
    }

    @Test("shards partition the runs exactly: every index in one shard, shares of floor(R/N) or ceil(R/N)")
    func shardPartition() throws {
        for n in 1...7 {
            for total in 0...23 {
                let runs = Array(0..<total)
                let shares = try (1...n).map { try Sweep.Shard(k: $0, n: n).share(of: runs) }
                #expect(shares.flatMap { $0 }.sorted() == runs, "\(n) shards of \(total)")
                #expect(Set(shares.flatMap { $0 }).count == total)
                for share in shares { #expect(share.count == total / n || share.count == (total + n - 1) / n) }
            }
        }
        // Shard 2 of 3 of 8 runs: indices 1, 4, 7 (index mod 3 == 1).
        #expect(try Sweep.Shard(parsing: "2/3").share(of: Array(0..<8)) == [1, 4, 7])
        for bad in ["0/3", "4/3", "1/0", "a/b", "1/2/3", "", "+1/2", "-1/2", "1 /2", "1/", "/2"] {
            #expect(throws: LabError.self, "\(bad)") { try Sweep.Shard(parsing: bad) }
        }
        #expect(throws: LabError(.usage, "--shard needs K/N with 1 <= K <= N, got 4/3")) { try Sweep.Shard(parsing: "4/3") }
        #expect(throws: LabError(.usage, "--shard needs K/N (whole numbers, 1 <= K <= N, e.g. 2/8), got 'x'")) { try Sweep.Shard(parsing: "x") }
    }
}
