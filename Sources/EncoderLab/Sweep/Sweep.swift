import Foundation

/// A sweep's share of the machine and of the work: how many runs go at once (`--jobs`), which runs a shard takes
/// (`--shard K/N`). Neither changes a run: a run's settings, its threads included, and so its key, are the same
/// whatever `--jobs` and `--shard` say.
public enum Sweep {
    /// One share of a sweep: shard `k` of `n` (1 ≤ k ≤ n, as GNU parallel's `{#}` and a Slurm array `--array=1-N`
    /// count). Shard k takes the runs whose index in the expanded experiment (clips × grid, from 0) is ≡ k − 1
    /// (mod n): the n shards partition the runs exactly, each holds ⌊R/n⌋ or ⌈R/n⌉ of R runs, and which shard
    /// takes a run depends only on the experiment file.
    public struct Shard: Sendable, Equatable, CustomStringConvertible {
        /// 1 ... `n`.
        public let k: Int
        /// ≥ 1.
        public let n: Int

        /// - Throws: `.usage` unless 1 ≤ k ≤ n.
        public init(k: Int, n: Int) throws {
            guard n >= 1, k >= 1, k <= n else {
                throw LabError.usage("--shard needs K/N with 1 <= K <= N, got \(k)/\(n)")
            }
            self.k = k
            self.n = n
        }

        /// Reads `K/N` (decimal digits only, e.g. `3/8`).
        /// - Throws: `.usage` naming the text for anything else, or for K outside 1 ... N.
        public init(parsing text: String) throws {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            func number(_ s: Substring) -> Int? {
                guard !s.isEmpty, s.count <= 9, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                return Int(s)
            }
            guard parts.count == 2, let k = number(parts[0]), let n = number(parts[1]) else {
                throw LabError.usage("--shard needs K/N (whole numbers, 1 <= K <= N, e.g. 2/8), got '\(EncodeSettings.visible(text))'")
            }
            try self.init(k: k, n: n)
        }

        /// Whether the run at `index` (from 0) of the expanded experiment is this shard's.
        public func contains(index: Int) -> Bool { index % n == k - 1 }

        /// This shard's runs, in their order.
        public func share<T>(of runs: [T]) -> [T] {
            runs.enumerated().filter { contains(index: $0.offset) }.map(\.element)
        }

        public var description: String { "\(k)/\(n)" }
    }

    /// The processors this process may run on (`sched_getaffinity`, as x264's `x264_cpu_num_processors` counts
    /// them on Linux), at least 1.
    public static var cores: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// The default `--jobs`: as many runs at once as fill the cores without oversubscribing them, `cores / threads`
    /// rounded down and at least 1, where `threads` is the largest effective x264 thread count among the runs
    /// (``ResolvedParameters/threads``: x264's own count when the settings leave it automatic, 1.5 × the cores
    /// capped at one thread per two macroblock rows; x264's encoder.c).
    public static func defaultJobs(threadsPerRun: [Int], cores: Int = Sweep.cores) -> Int {
        max(1, cores / max(1, threadsPerRun.max() ?? 1))
    }
}
