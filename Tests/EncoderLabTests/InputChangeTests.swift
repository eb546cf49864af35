import Foundation
import Testing
@testable import EncoderLab

/// A clip truncated, rewritten or replaced while a run reads it: the run fails (65) and is recorded `failed`, never
/// `done` under the digest of bytes it did not encode, and a later encode of the intact file is encoded, not
/// "already done".
@Suite("a clip that changes while a run reads it", .serialized)
struct InputChangeTests {
    /// The file's SHA-256 by sha256sum(1), the independent witness.
    static func sha256sum(_ path: String) throws -> String {
        String(try Witness.run("sha256sum", [path]).stdout.prefix(64))
    }

    @Test("truncated, rewritten in place at the same size, or replaced under its name: 65, recorded failed; the intact file is then encoded",
          arguments: ["truncate", "rewrite", "replace"])
    func changedWhileRead(how: String) throws {
        let scratch = Scratch()
        let clip = scratch.file("c.y4m")
        // 30 frames of 160x120 (28,800 bytes each): far more than the reader holds ahead.
        try SyntheticClip(width: 160, height: 120, frames: 30, seed: 7).write(to: clip)
        let original = try Data(contentsOf: URL(fileURLWithPath: clip))
        let digest = try Self.sha256sum(clip)
        let header = original.firstIndex(of: 0x0A)! + 1
        let frameBytes = 6 + 160 * 120 * 3 / 2
        let lab = try Runner(databasePath: scratch.file("lab.sqlite"), outDirectory: scratch.file("out"))
        // The hook: a run says its warnings once its clip is open and before it reads the first frame
        // (Pipeline.execute); two psy tunes make one ("only 1 psy tuning can be used"). The clip changes there.
        nonisolated(unsafe) var changed = false
        lab.warn = { _ in
            guard !changed else { return }
            changed = true
            switch how {
            case "truncate":
                _ = truncate(clip, off_t(header + 5 * frameBytes))
            case "rewrite":
                // The pictures of frames 10 to 29 become grey, in place (their FRAME lines kept): the same size, other bytes.
                let fd = open(clip, O_WRONLY)
                let grey = [UInt8](repeating: 128, count: frameBytes - 6)
                for frame in 10..<30 { _ = pwrite(fd, grey, grey.count, off_t(header + frame * frameBytes + 6)) }
                close(fd)
            default:
                // Another file under the clip's name (a rename over it, as editors and downloads do).
                try? original.prefix(header + 8 * frameBytes).write(to: URL(fileURLWithPath: clip + ".new"))
                _ = rename(clip + ".new", clip)
            }
        }
        let (settings, _) = try EncodeSettings.parse(arguments: ["--preset", "ultrafast", "--threads", "1", "--tune", "film,grain"])
        let checked = try Runner.check([Experiment.Run(clip: clip, settings: settings, label: "")], experiment: "encode")
        var thrown: LabError?
        do { _ = try lab.run(checked[0]) } catch let error as LabError { thrown = error }
        #expect(changed)
        #expect(thrown?.kind == .data, "\(String(describing: thrown))")
        #expect(thrown?.message.hasPrefix("\(clip): changed while the run read it (") == true, "\(String(describing: thrown))")
        #expect(try Witness.run("sqlite3", [scratch.file("lab.sqlite"), "SELECT status || ' ' || clip_sha256 FROM runs"]).stdout
                == "failed \(digest)\n")
        // The intact file again: encoded (not "already done"), all 30 frames, under its own digest.
        try original.write(to: URL(fileURLWithPath: clip))
        let again = try Runner(databasePath: scratch.file("lab.sqlite"), outDirectory: scratch.file("out"))
        again.warn = { _ in }
        let outcome = try again.run(try Runner.check([Experiment.Run(clip: clip, settings: settings, label: "")], experiment: "encode")[0])
        #expect(!outcome.alreadyDone && outcome.frames == 30)
        #expect(try Witness.run("sqlite3", [scratch.file("lab.sqlite"), "SELECT clip_sha256 FROM runs WHERE status = 'done'"]).stdout
                == "\(digest)\n")
    }
}
