import Foundation
import Testing
import H264
@testable import EncoderLab
import EnclabTestSupport

/// The pipeline's stages and seams (issue 7): forced frame types from the timestamps stage, provenance of resolved
/// values, the run key, and the store's writer (skip, --force, folders settled on start).
@Suite("the pipeline: timestamps, provenance, run keys, the writer", .serialized)
struct PipelineTests {
    static let clip = SyntheticClip(width: 96, height: 64, frames: 12, seed: 11)

    @Test("a forced IDR lands where the timestamps stage's keyframe-forcing step put it: nal_unit_type 5 there, by trace_headers")
    func forcedIDR() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let settings = try EncodeSettings.parse(arguments: ["--threads", "1", "--bframes", "0", "--keyint", "250", "--no-scenecut"]).0.resolved()
        let clip = try Clip(path: scratch.file("c.y4m"))
        let input = try Pipeline.encoderInput(clip)
        let session: any VideoEncoder = try X264Session(settings: settings, input: input)
        let plan = try #require(input.timestamps)
        // A rule of at most 7 frames from one keyframe to the next, kept by IDRs the step forces (x264's keyint 250
        // places none in 12 frames): frame 7 is forced.
        let rule = try KeyframeRule(maxFrames: 7, maxDuration: .zero, timebase: plan.timebase, placement: .forced(x264Keyint: nil))
        var forcing = KeyframeForcing(rule: rule, nominalFrameTicks: 1)
        var stream: [UInt8] = []
        var index = 0
        var frames: [EncodedFrame] = []
        while let picture = try clip.next() {
            var timed = plan.stamp(picture, index: index)
            try forcing.force(&timed, nextPTS: index + 1 < 12 ? Int64(index + 1) : nil)
            if let f = try session.encode(timed) { frames.append(f); stream += f.nals.flatMap(\.bytes) }
            index += 1
        }
        #expect(forcing.forced == [7])
        while session.delayedFrames > 0 {
            if let f = try session.encode(nil) { frames.append(f); stream += f.nals.flatMap(\.bytes) }
        }
        try Data(stream).write(to: URL(fileURLWithPath: scratch.file("s.264")))
        // Without B-frames decode order is display order: packet k is frame k.
        let packets = try Witness.traceHeaders(scratch.file("s.264")).packets
        try #require(packets.count == 12)
        let idr = packets.indices.filter { k in packets[k].contains { $0.type == 5 } }
        #expect(idr == [0, 7])
        #expect(frames.map(\.type) == (0..<12).map { [0, 7].contains($0) ? FrameType.idr : .p })
        // Without the forced type, frame 7 is a P frame (keyint 250, no scenecut): the IDR is the plan's doing.
        let plain = try X264Session(settings: settings, input: try Pipeline.encoderInput(try Clip(path: scratch.file("c.y4m"))))
        let again = try Clip(path: scratch.file("c.y4m"))
        var types: [FrameType] = []
        var k = 0
        while let picture = try again.next() {
            if let f = try plain.encode(picture, pts: Int64(k), displayIndex: k) { types.append(f.type) }
            k += 1
        }
        while plain.delayedFrames > 0 { if let f = try plain.encode(nil) { types.append(f.type) } }
        #expect(types == [.idr] + Array(repeating: .p, count: 11))
    }

    @Test("an --rc mode x264 does not keep is refused: crf 0 is lossless CQP to x264")
    func rcModeKept() throws {
        let scratch = Scratch()
        try Self.clip.write(to: scratch.file("c.y4m"))
        let run = Experiment.Run(clip: scratch.file("c.y4m"), settings: try EncodeSettings.parse(arguments: ["--rc", "crf", "--crf", "0"]).0, label: "")
        #expect(throws: LabError(.usage, "rc crf but x264 settled on rate-control method cqp (settings: --crf 0)")) {
            try Runner.check([run], experiment: "t")
        }
        // crf 1 stays CRF.
        let kept = Experiment.Run(clip: scratch.file("c.y4m"), settings: try EncodeSettings.parse(arguments: ["--rc", "crf", "--crf", "1"]).0, label: "")
        #expect(try Runner.check([kept], experiment: "t")[0].resolved.rcMethod == "crf")
    }

    @Test("provenance: given, added by --rc, the preset's default, changed by x264 (a profile dropping CABAC and B-frames)")
    func provenance() throws {
        let settings = try EncodeSettings.parse(arguments: ["--rc", "cbr", "--bitrate", "500", "--bframes", "3",
                                                            "--profile", "baseline", "--threads", "1"]).0.resolved()
        let session = try X264Session(settings: settings, input: EncoderInput(width: 64, height: 48, fpsNum: 25, fpsDen: 1))
        let p = session.resolved.provenance
        #expect(p["bitrate_kbps"] == "given")
        #expect(p["vbv_maxrate_kbps"] == "rc" && p["vbv_bufsize_kbit"] == "rc" && p["nal_hrd"] == "rc")
        #expect(p["bframes"] == "x264" && p["cabac"] == "x264")
        #expect(session.resolved.bframes == 0 && !session.resolved.cabac)
        #expect(p["keyint"] == "preset" && p["scenecut"] == "preset")
        #expect(p["threads"] == "given")
        #expect(Set(p.keys) == Set(session.resolved.jsonObject.keys))
        // The SEI's options string: what x264 resolved, threads included.
        #expect(session.resolved.optionsString.hasPrefix("cabac=0 ref="))
        #expect(session.resolved.optionsString.contains(" threads=1 "))
        #expect(session.resolved.optionsString.contains(" bframes=0 "))
    }
}

/// Run keys and the store's writer through the built binary and the sqlite3 CLI.
@Suite("run keys, resume and --force, end to end", .serialized)
struct RunKeyTests {
    static func enclab(_ arguments: [String], in dir: String) throws -> Witness.Output {
        try Witness.enclab(arguments, in: dir)
    }

    static func sqlite(_ db: String, _ sql: String) throws -> [String] {
        try Witness.run("sqlite3", [db, sql]).stdout.split(separator: "\n").map(String.init)
    }

    @Test("the same clip bytes and settings give the same key in two databases; one setting or one byte gives another")
    func keys() throws {
        let scratch = Scratch()
        let dir = scratch.path
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        try FileManager.default.copyItem(atPath: scratch.file("c.y4m"), toPath: scratch.file("copy.y4m"))
        func key(_ clip: String, _ flags: [String], db: String) throws -> String {
            let r = try Self.enclab(["encode", clip, "--threads", "1", "--db", db, "--out", "out-\(db)"] + flags, in: dir)
            try #require(r.status == 0, "\(r.stderr)")
            return try Self.sqlite(scratch.file(db), "SELECT run_key FROM runs ORDER BY run_id DESC LIMIT 1")[0]
        }
        let a = try key("c.y4m", ["--crf", "30"], db: "a.sqlite")
        #expect(a.count == 64 && a.allSatisfy(\.isHexDigit))
        // Another database, and a copy of the clip under another name: the same bytes, the same key.
        #expect(try key("copy.y4m", ["--crf", "30"], db: "b.sqlite") == a)
        // The clip's digest is the file's SHA-256, as sha256sum computes it.
        let digest = try Witness.run("sha256sum", [scratch.file("c.y4m")]).stdout.prefix(64)
        #expect(try Self.sqlite(scratch.file("a.sqlite"), "SELECT clip_sha256 FROM runs") == [String(digest)])
        // One setting differs.
        #expect(try key("c.y4m", ["--crf", "31"], db: "b.sqlite") != a)
        // The thread count x264 resolves is part of the key (it changes x264's bytes).
        #expect(try key("c.y4m", ["--crf", "30", "--threads", "2"], db: "b.sqlite") != a)
        // One byte of the clip differs (the last sample of the last frame).
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file("copy.y4m"))))
        bytes[bytes.count - 1] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.file("copy.y4m")))
        #expect(try key("copy.y4m", ["--crf", "30"], db: "b.sqlite") != a)
        // The folder is the key's first 16 hex digits.
        #expect(FileManager.default.fileExists(atPath: scratch.file("out-a.sqlite/\(a.prefix(16))/stream.264")))
    }

    @Test("a done key is not encoded again (its line marked already done); --force encodes it again and replaces the run")
    func resumeAndForce() throws {
        let scratch = Scratch()
        let dir = scratch.path
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        let first = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: dir)
        try #require(first.status == 0, "\(first.stderr)")
        let key = try Self.sqlite(scratch.file("l.sqlite"), "SELECT run_key FROM runs")[0]
        let stream = scratch.file("results/encode/\(key.prefix(16))/stream.264")
        let modified = try FileManager.default.attributesOfItem(atPath: stream)[.modificationDate] as! Date
        let again = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: dir)
        #expect(again.status == 0)
        // The run line marked, the answers line (read from the store) the same.
        let firstLines = first.stdout.split(separator: "\n").map(String.init), againLines = again.stdout.split(separator: "\n").map(String.init)
        #expect(firstLines.count == 2 && againLines == [firstLines[0] + "  (already done)", firstLines[1]], "\(again.stdout)")
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT count(*) FROM runs") == ["1"])
        #expect(try FileManager.default.attributesOfItem(atPath: stream)[.modificationDate] as! Date == modified)
        // --force: encoded again; the old row and its frames replaced by the new ones; one folder, the new stream.
        let forced = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite", "--force"], in: dir)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT run_id, status, run_key FROM runs") == ["2|done|\(key)"])
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT DISTINCT run_id FROM frames") == ["2"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("results/encode")) == [String(key.prefix(16))])
        #expect(try Data(contentsOf: URL(fileURLWithPath: stream)).count
                == Int(try Self.sqlite(scratch.file("l.sqlite"), "SELECT bytes FROM runs")[0]))
    }

    @Test("the clip digest cache is not fooled by a file whose bytes changed and whose mtime was set back")
    func hashCacheAndTouch() throws {
        let scratch = Scratch()
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        let path = scratch.file("c.y4m")
        let first = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: scratch.path)
        try #require(first.status == 0, "\(first.stderr)")
        // A reference with the clip's exact times (cp -p keeps them to the nanosecond).
        try #require(try Witness.run("cp", ["-p", path, scratch.file("ref")]).status == 0)
        // The same size, other bytes (the last sample), written in place (same inode), the mtime set back as touch -d does.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 1)
        let last = try handle.read(upToCount: 1)![0]
        try handle.seek(toOffset: size - 1)
        try handle.write(contentsOf: Data([last ^ 0xFF]))
        try handle.close()
        try #require(try Witness.run("touch", ["-r", scratch.file("ref"), path]).status == 0)
        // The clip's mtime is the original's to the nanosecond (stat's %y prints nanoseconds).
        #expect(try Witness.run("stat", ["-c", "%y", path]).stdout == Witness.run("stat", ["-c", "%y", scratch.file("ref")]).stdout)
        let second = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: scratch.path)
        #expect(second.status == 0 && !second.stdout.contains("already done"), "\(second.stdout)")
        let digests = try Self.sqlite(scratch.file("l.sqlite"), "SELECT clip_sha256 FROM runs ORDER BY run_id")
        try #require(digests.count == 2)
        #expect(digests[0] != digests[1])
        #expect(digests[1] == String(try Witness.run("sha256sum", [path]).stdout.prefix(64)))
    }

    @Test("on start, a temporary folder whose key is done is moved into place; one of a live process is left alone")
    func settle() throws {
        let scratch = Scratch()
        let dir = scratch.path
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        try #require(try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: dir).status == 0)
        let key = try Self.sqlite(scratch.file("l.sqlite"), "SELECT run_key FROM runs")[0]
        let out = scratch.file("results/encode")
        // As if the process had died between the commit and the rename (pid 2^22 + 1 is above Linux's pid_max).
        // Temporary names carry the database (the first 8 hex digits of the SHA-256 of its real path).
        let database = String(SHA256.hex(of: Paths.real(scratch.file("l.sqlite"))!).prefix(8))
        let dead = ".tmp-\(key)-\(database)-\(Runner.hostTag)-4194305-deadbeef"
        try FileManager.default.moveItem(atPath: "\(out)/\(key.prefix(16))", toPath: "\(out)/\(dead)")
        // A live process's folder (this test's) of a key that is not done stays.
        let live = ".tmp-\(String(repeating: "a", count: 64))-\(database)-\(Runner.hostTag)-\(getpid())-cafef00d"
        try FileManager.default.createDirectory(atPath: "\(out)/\(live)", withIntermediateDirectories: true)
        // And a dead process's folder of a key that is not done is removed.
        let lost = ".tmp-\(String(repeating: "b", count: 64))-\(database)-\(Runner.hostTag)-4194305-0badf00d"
        // Another database's folder, its process gone, is left alone: only its own database may settle it.
        let foreign = ".tmp-\(String(repeating: "c", count: 64))-0123abcd-\(Runner.hostTag)-4194305-f00dcafe"
        try FileManager.default.createDirectory(atPath: "\(out)/\(foreign)", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(out)/\(lost)", withIntermediateDirectories: true)
        let r = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: dir)
        #expect(r.status == 0 && r.stdout.split(separator: "\n").first?.hasSuffix("(already done)") == true, "\(r.stdout) \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == [live, foreign, String(key.prefix(16))].sorted())
        #expect(FileManager.default.fileExists(atPath: "\(out)/\(key.prefix(16))/frames.gp"))
    }

    @Test("settling: a live process's folder of a done key stays; a killed --force's newer stream is exchanged into place; a done run whose folder is gone is encoded again")
    func settleForceAndLostFolder() throws {
        let scratch = Scratch()
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        try #require(try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: scratch.path).status == 0)
        let key = try Self.sqlite(scratch.file("l.sqlite"), "SELECT run_key FROM runs")[0]
        let bytes = Int(try Self.sqlite(scratch.file("l.sqlite"), "SELECT bytes FROM runs")[0])!
        let out = scratch.file("results/encode"), final = "\(out)/\(key.prefix(16))"
        let database = String(SHA256.hex(of: Paths.real(scratch.file("l.sqlite"))!).prefix(8))
        // A live process (this test) still plotting a run whose key is done: never moved by another start.
        let live = ".tmp-\(key)-\(database)-\(Runner.hostTag)-\(getpid())-11111111"
        try FileManager.default.copyItem(atPath: final, toPath: "\(out)/\(live)")
        // A --force killed after its commit: the row's bytes are in the temporary folder, the final folder has others.
        let forced = ".tmp-\(key)-\(database)-\(Runner.hostTag)-4194305-22222222"
        try FileManager.default.copyItem(atPath: final, toPath: "\(out)/\(forced)")
        let stale = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(final)/stream.264"))
        try stale.seekToEnd()
        try stale.write(contentsOf: Data([0, 0, 0, 1, 0x0c]))
        try stale.close()
        let r = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: scratch.path)
        #expect(r.status == 0 && r.stdout.split(separator: "\n").first?.hasSuffix("(already done)") == true, "\(r.stdout) \(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == [live, String(key.prefix(16))].sorted())
        #expect(try FileManager.default.attributesOfItem(atPath: "\(final)/stream.264")[.size] as? Int == bytes)
        // The run's folder removed by hand: the next encode of the key makes it again (one row, the same key).
        try FileManager.default.removeItem(atPath: final)
        try FileManager.default.removeItem(atPath: "\(out)/\(live)")
        let again = try Self.enclab(["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"], in: scratch.path)
        #expect(again.status == 0 && !again.stdout.contains("already done"), "\(again.stdout) \(again.stderr)")
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT count(*), run_key FROM runs") == ["1|\(key)"])
        #expect(FileManager.default.fileExists(atPath: "\(final)/stream.264"))
    }

    @Test("two processes encoding the same key into one database at once: both succeed, one run is recorded")
    func sameKeyAtOnce() throws {
        let scratch = Scratch()
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        let binary = TestSupport.binary
        let processes = try (0..<2).map { _ -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = ["encode", "c.y4m", "--threads", "1", "--db", "l.sqlite"]
            p.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        processes.forEach { $0.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0])
        #expect(try Self.sqlite(scratch.file("l.sqlite"), "SELECT count(*) FROM runs") == ["1"])
        let entries = try FileManager.default.contentsOfDirectory(atPath: scratch.file("results/encode"))
        #expect(entries.count == 1 && !entries[0].hasPrefix("."), "\(entries)")
    }

    @Test("an experiment's runs store their grid axes as JSON; the settings carry what x264 resolved and from where")
    func structuredSettings() throws {
        let scratch = Scratch()
        try PipelineTests.clip.write(to: scratch.file("c.y4m"))
        let json = #"{"name": "axes", "clips": ["c.y4m"], "base": {"threads": 1}, "grid": {"mode": [{"rc": "cqp", "qp": 30}], "bframes": [0, 2]}}"#
        try json.write(toFile: scratch.file("axes.json"), atomically: true, encoding: .utf8)
        let r = try Self.enclab(["run", "axes.json"], in: scratch.path)
        #expect(r.status == 0, "\(r.stderr)")
        let db = scratch.file("results/axes.sqlite")
        #expect(try Self.sqlite(db, "SELECT json_extract(settings, '$.axes') FROM runs ORDER BY run_id")
                == [#"{"bframes":0,"mode":{"qp":30,"rc":"cqp"}}"#, #"{"bframes":2,"mode":{"qp":30,"rc":"cqp"}}"#])
        #expect(try Self.sqlite(db, "SELECT json_extract(settings, '$.provenance.qp'), json_extract(settings, '$.resolved.qp'), json_extract(settings, '$.timestamps.timebase') FROM runs ORDER BY run_id")
                == ["given|30|1/25", "given|30|1/25"])
    }
}
