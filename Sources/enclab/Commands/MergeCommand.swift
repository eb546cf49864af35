import EncoderLab
import Foundation

/// `enclab merge OUT.sqlite IN.sqlite...`: the databases of a sweep's shards (or any of the lab's databases) as one.
struct MergeCommand: Command {
    let name = "merge"
    let summary = "combine databases (a sweep's shards) into a new one, each run once, by run key"
    let operands = "OUT.sqlite IN.sqlite..."
    let flags: [Flag] = []
    let about = """
        Writes a new database OUT holding every run of the inputs once, with its rows in every table of the run
        (frames, parameter sets, checks, decodes, analyses) under new run ids. Inputs are only read; one of an older
        schema version is migrated in a temporary copy. A done run whose key OUT holds done already is left out when
        its per-frame rows are the same (a shard merged twice, a run done in two shards). When they differ and the
        run is not repeatable (runs.repeatable 0: x264 with several threads under VBV, or --non-deterministic) both
        stay done, as repeats of one key, and stderr says so; when a repeatable run differs, the first stays done,
        the other is stored as a failed run whose error begins 'merge conflict', and a warning on stderr names both.
        A done run whose rows are damaged (no frames; a frame size, PTS or DTS that is not an integer in range; a
        row the schema refuses) is stored as a failed run whose error begins 'damaged', without its rows, and a
        warning names the input and run; a done copy of its key elsewhere stays done. Failed runs and runs
        without a key are kept unless an identical one is there. OUT is built under a temporary name beside it and
        renamed into place when whole; the temporary files of a merge that was killed are removed by the next
        merge into the same folder. Stream paths are kept as the inputs have them: copy the shards' output
        folders (named by run key) into one if the streams and plots should live together.
        stdout gets one line per input, then a summary.
        """
    let exitStatuses: [(status: Int32, meaning: String)] = [
        (0, "merged (conflicts, if any, are warned about on stderr and kept as failed runs)"),
        (64, "usage: fewer than two operands, or OUT exists"),
        (65, "bad data: an input that is not the lab's database, damaged, or of a newer schema version"),
        (66, "an input is missing or not a regular file"),
        (70, "the lab failed"),
        (73, "OUT cannot be created"),
        (74, "a write failed part-way (a full disk)"),
        (75, "an input is locked by another process (see ENCLAB_DB_TIMEOUT_MS)"),
        (130, "interrupted by SIGINT or SIGTERM (nothing written)"),
    ]
    let example = "enclab merge results/sweep.sqlite /tmp/shard1.sqlite /tmp/shard2.sqlite"

    /// `merge`'s options: the database written and those read.
    struct Options {
        var output: String
        var inputs: [String]
    }

    func options(_ parsed: ParsedArguments) throws -> Options {
        let operands = parsed.rest
        guard operands.count >= 2 else {
            throw LabError(.usage, operands.isEmpty ? "merge needs OUT.sqlite and at least one IN.sqlite"
                                                    : "merge needs at least one IN.sqlite after \(operands[0])")
        }
        return Options(output: operands[0], inputs: Array(operands.dropFirst()))
    }

    func run(_ o: Options) throws -> Int32 {
        let out = o.output
        let report = try Merge.merge(inputs: o.inputs, into: out)
        for c in report.conflicts {
            let text = "run key \(c.runKey): run \(c.otherRunID) of \(c.otherInput) has other per-frame rows than run \(c.keptRunID) of \(c.keptInput); the latter stays done, the former is run \(c.storedRunID) of \(out), status failed (merge conflict)"
            FileHandle.standardError.write(Data("warning: \(oneLine(text))\n".utf8))
        }
        for r in report.repeats {
            let text = "run key \(r.runKey): run \(r.runID) of \(r.input) is a repeat of run \(r.firstRunID) of \(r.firstInput) with other per-frame rows (the run is not repeatable); both stay done, the repeat as run \(r.storedRunID) of \(out)"
            FileHandle.standardError.write(Data("note: \(oneLine(text))\n".utf8))
        }
        for d in report.damaged {
            let text = "\(d.input): run \(d.runID) is done there, but \(d.reason): stored as failed (run \(d.storedRunID) of \(out)), without its rows"
            FileHandle.standardError.write(Data("warning: \(oneLine(text))\n".utf8))
        }
        for path in report.staleRemoved {
            FileHandle.standardError.write(Data("note: removed \(oneLine(path)), left by a merge that was killed\n".utf8))
        }
        for input in report.inputs {
            print("\(oneLine(input.path)): \(input.runs) runs, \(input.copied) copied")
        }
        let conflicts = report.conflicts.count
        let repeats = report.repeats.count, damaged = report.damaged.count
        print("\(oneLine(out)): \(report.runs) runs from \(report.inputs.count) databases (\(report.duplicates) already there left out, \(conflicts) conflict\(conflicts == 1 ? "" : "s")\(repeats > 0 ? ", \(repeats) repeat\(repeats == 1 ? "" : "s") of runs that are not repeatable" : "")\(damaged > 0 ? ", \(damaged) damaged stored as failed" : ""))")
        return 0
    }
}
