import Foundation
import Testing
@testable import EncoderLab

/// Values that C reads differently from what they look like: non-finite numbers (x264's atof takes `nan`), integers
/// past x264's C int (its atoi wraps them), NUL characters (C stops there); grids of very many axes; clip paths
/// through symbolic links; database paths that name folders or look like SQLite URIs.
@Suite("hostile values: non-finite numbers, wrapping integers, NULs, wide grids, symlinked paths, database paths")
struct HostileValueTests {
    func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let e as LabError { return e.kind == .usage ? e.message : "\(e.kind): \(e.message)" } catch { return "\(error)" }
    }

    func setting(_ name: String, _ value: String) -> String? {
        message { var s = EncodeSettings(); try s.set(name, value) }
    }

    @Test("a value strtod reads as a number that is not finite is refused (x264's atof would take NaN as QP 0)")
    func nonFinite() {
        for v in ["nan", "-nan", "NaN", "NAN", "inf", "-inf", "+inf", "Infinity", " nan", "\tinf", "1e400", "-1e400", "0x1p99999", "nan(1)"] {
            #expect(setting("crf", v) == "bad value for setting 'crf': '\(v)' (not a finite number)", "\(v.debugDescription)")
        }
        #expect(setting("qcomp", "nan") == "bad value for setting 'qcomp': 'nan' (not a finite number)")
        // Finite values, however small, and words that merely start like numbers are left to x264.
        for v in ["23", "23.5", "1e-320", "0x1p-3", "-0"] { #expect(setting("crf", v) == nil, "\(v)") }
        #expect(setting("keyint", "infinite") == nil)   // x264's own word for no keyframe limit
        // x264 reads any ratetol starting with "inf" as 1e9 (common/base.c), before atof.
        #expect(setting("ratetol", "inf") == nil)
        #expect(setting("ratetol", "nan") == "bad value for setting 'ratetol': 'nan' (not a finite number)")
        #expect(setting("ratetol", "-inf") == "bad value for setting 'ratetol': '-inf' (not a finite number)")
    }

    @Test("an integer strtol reads whole but x264's C int cannot hold is refused (x264's atoi would wrap it)")
    func wrappingIntegers() {
        // What the C cast would have made of them: 2^31 -> -2^31, 2^32 + 1 -> 1, 2^32 + 2 -> 2.
        #expect(Int32(truncatingIfNeeded: 2_147_483_648 as Int64) == -2_147_483_648)
        #expect(Int32(truncatingIfNeeded: 4_294_967_297 as Int64) == 1)
        for (name, v) in [("keyint", "2147483648"), ("keyint", "4294967297"), ("keyint", "99999999999999999999"),
                          ("bframes", "4294967298"), ("keyint", "-2147483649"), ("keyint", "+2147483648"),
                          ("keyint", "0x80000000"), ("keyint", " 2147483648"), ("keyint", "040000000000"),
                          ("bitrate", "-99999999999999999999"), ("crf", "4294967296")] {
            #expect(setting(name, v) == "bad value for setting '\(name)': '\(v)' (outside x264's int range)", "\(name) \(v)")
        }
        for v in ["2147483647", "-2147483648", "0x7fffffff", "017777777777", "250"] { #expect(setting("keyint", v) == nil, "\(v)") }
        // Not integer literals: left to x264's own parsing.
        #expect(setting("deblock", "1:1") == nil)
        #expect(setting("zones", "0,99999999999,q=20") == nil)
        // frames and seek keep their own messages.
        #expect(setting("frames", "2147483648") == "setting 'frames' must be at most 2147483647 frames (x264 counts frames in a C int), got '2147483648'")
    }

    @Test("a NUL in a setting's name or value is refused (C would cut the value there)")
    func nulInSettings() {
        #expect(setting("keyint", "5\u{0}garbage") == "bad value for setting 'keyint': '5\\0garbage' (holds a NUL character)")
        #expect(setting("preset", "fast\u{0}") == "bad value for setting 'preset': 'fast\\0' (holds a NUL character)")
        #expect(setting("key\u{0}int", "5") == "setting name 'key\\0int' holds a NUL character")
        #expect(message { _ = try EncodeSettings.parse(arguments: ["--crf", "nan"]) } == "bad value for setting 'crf': 'nan' (not a finite number)")
        #expect(message { _ = try EncodeSettings.parse(arguments: ["-I", "2147483648"]) } == "bad value for setting 'keyint': '2147483648' (outside x264's int range)")
    }

    func experiment(_ object: [String: Any], maxRuns: Int = Experiment.defaultMaxRuns) throws -> Experiment {
        try Experiment(object: object, file: "e.json", baseDirectory: "/base", maxRuns: maxRuns)
    }

    @Test("experiments: NULs in clips, setting names and values, base and grid, are refused naming the key")
    func nulInExperiments() throws {
        // The JSON text carries \u0000 escapes, as an attacker's file would.
        func parsed(_ json: String) -> String? {
            message { _ = try experiment(try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]) }
        }
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m", "tiny.y4m\u0000.mp4"]}"#) == "e.json: key 'clips': path 2 'tiny.y4m\\0.mp4' holds a NUL character")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "base": {"keyint": "5\u0000garbage"}}"#) == "e.json: base: bad value for setting 'keyint': '5\\0garbage' (holds a NUL character)")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "base": {"key\u0000int": 5}}"#) == "e.json: base: setting name 'key\\0int' holds a NUL character")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "grid": {"crf": ["2\u00003"]}}"#) == "e.json: grid: bad value for setting 'crf': '2\\03' (holds a NUL character)")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "grid": {"m\u0000": [{"crf": 3}]}}"#) == "e.json: key 'grid': axis 'm\\0' holds a NUL character")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "grid": {"m": [{"c\u0000rf": 3}]}}"#) == "e.json: grid 'm': setting name 'c\\0rf' holds a NUL character")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "grid": {"crf": ["nan"]}}"#) == "e.json: grid: bad value for setting 'crf': 'nan' (not a finite number)")
        #expect(parsed(#"{"name": "t", "clips": ["a.y4m"], "base": {"keyint": 4294967297}}"#) == "e.json: base: bad value for setting 'keyint': '4294967297' (outside x264's int range)")
    }

    @Test("a grid of more than 1,000 axes is refused before expanding; 1,000 expand in order, each run built once")
    func wideGrids() throws {
        func grid(_ keys: Int, values: Int = 1) -> [String: Any] {
            var g: [String: Any] = [:]
            for k in 0..<keys { g[String(format: "k%04d", k)] = (0..<values).map { $0 } }
            return g
        }
        #expect(message { _ = try experiment(["name": "w", "clips": ["a.y4m"], "grid": grid(1001)]) }
                == "e.json: key 'grid' has 1001 keys, over the limit of 1000 axes")
        // Refused before any setting is applied: a bad value on the 1,001st axis is not what is reported.
        var bad = grid(1001)
        bad["k0000"] = ["nan"]
        #expect(message { _ = try experiment(["name": "w", "clips": ["a.y4m"], "grid": bad]) }
                == "e.json: key 'grid' has 1001 keys, over the limit of 1000 axes")
        let wide = try experiment(["name": "w", "clips": ["a.y4m"], "grid": grid(1000)])
        #expect(wide.runs.count == 1)
        let run = try #require(wide.runs.first)
        #expect(run.settings.options.count == 1000)
        #expect(run.settings.options.first == X264Option("k0000", "0") && run.settings.options.last == X264Option("k0999", "0"))
        #expect(run.label.split(separator: " ").count == 1000)
        let axes = try #require(try JSONSerialization.jsonObject(with: Data(run.axesJSON.utf8)) as? [String: Int])
        #expect(axes.count == 1000 && axes.values.allSatisfy { $0 == 0 })
        // Several axes of several values: the cartesian product, the last key varying fastest, written out.
        let e = try experiment(["name": "p", "clips": ["a.y4m", "b.y4m"], "base": ["preset": "fast"],
                                "grid": ["bframes": [0, 3], "crf": [20, 30, 40], "mode": [["rc": "cqp", "qp": 22], ["rc": "crf"]]]])
        var expected: [String] = []
        for clip in ["/base/a.y4m", "/base/b.y4m"] {
            for b in ["0", "3"] { for c in ["20", "30", "40"] { for m in ["qp=22 rc=cqp", "rc=crf"] {
                expected.append("\(clip) bframes=\(b) crf=\(c) \(m)")
            } } }
        }
        #expect(e.runs.map { "\($0.clip) \($0.label)" } == expected)
        #expect(e.runs[1].axesJSON == #"{"bframes":0,"crf":20,"mode":{"rc":"crf"}}"#)
        #expect(e.runs[1].settings.preset == "fast" && e.runs[1].settings.rc == .crf)
        #expect(e.runs[1].settings.options == [X264Option("bframes", "0"), X264Option("crf", "20")])
        #expect(e.runs[0].settings.options == [X264Option("bframes", "0"), X264Option("crf", "20"), X264Option("qp", "22")])
        // seek + frames is checked at each point with that point's own values: an earlier axis may lower the seek.
        let lowered = try experiment(["name": "f", "clips": ["a.y4m"], "base": ["seek": 2_000_000_000],
                                      "grid": ["a": [["seek": 0]], "frames": [500_000_000]]])
        #expect(lowered.runs.map { [$0.settings.seek, $0.settings.frames] } == [[0, 500_000_000]])
        #expect(message { _ = try experiment(["name": "f", "clips": ["a.y4m"], "base": ["seek": 2_000_000_000], "grid": ["frames": [500_000_000]]]) }
                == "e.json: grid: settings 'seek' (2000000000) plus 'frames' (500000000) must be at most 2147483647 frames (x264 counts frames in a C int)")
    }

    @Test("clip paths: x/.. is removed only when x is a real folder, so the path means what the system opens")
    func symlinkedClipPaths() throws {
        let scratch = Scratch()
        let fm = FileManager.default
        try fm.createDirectory(atPath: scratch.file("exp/dir"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: scratch.file("real/sub"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: scratch.file("exp/link"), withDestinationPath: "../real/sub")
        try "real".write(toFile: scratch.file("real/clip.y4m"), atomically: true, encoding: .utf8)
        try "exp".write(toFile: scratch.file("exp/clip.y4m"), atomically: true, encoding: .utf8)
        let linked = Paths.normalized(scratch.file("exp/link/../clip.y4m"))
        #expect(linked == scratch.file("exp/link/../clip.y4m"))
        // The file system's own answer: what open(2) reads through the unnormalised and the normalised path.
        #expect(try String(contentsOfFile: linked, encoding: .utf8) == "real")
        #expect(try String(contentsOfFile: scratch.file("exp/link/../clip.y4m"), encoding: .utf8) == "real")
        // A real folder collapses; "." goes; a folder reached through the link collapses to the link.
        #expect(Paths.normalized(scratch.file("exp/./dir/../clip.y4m")) == scratch.file("exp/clip.y4m"))
        #expect(Paths.normalized(scratch.file("exp/link/./x/../../clip.y4m")) == scratch.file("exp/link/x/../../clip.y4m"))
        try fm.createDirectory(atPath: scratch.file("real/sub/x"), withIntermediateDirectories: true)
        #expect(Paths.normalized(scratch.file("exp/link/./x/../../clip.y4m")) == scratch.file("exp/link/../clip.y4m"))
        // A name that does not exist is kept: the system fails on it too.
        #expect(Paths.normalized(scratch.file("exp/none/../clip.y4m")) == scratch.file("exp/none/../clip.y4m"))
        #expect(!fm.fileExists(atPath: scratch.file("exp/none/../clip.y4m")))
        // Through an experiment: the clip recorded is the one the system reads.
        let e = try Experiment(object: ["name": "s", "clips": ["link/../clip.y4m", "dir/../clip.y4m"]], file: "e.json",
                               baseDirectory: scratch.file("exp"))
        #expect(try e.clips.map { try String(contentsOfFile: $0, encoding: .utf8) } == ["real", "exp"])
    }

    @Test("database paths: folders and :memory: are refused without creating anything; file: names are plain names")
    func databasePaths() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("folder"), withIntermediateDirectories: true)
        for p in ["dir/", scratch.file("dir/"), scratch.file("d/."), scratch.file("d/.."), ".", "..", scratch.file("folder"), "/"] {
            #expect(message { try LabStore.checkPath(p) } == "--db needs a database file path, got '\(p)' (a folder)", "\(p)")
        }
        #expect(message { try LabStore.checkPath(":memory:") } == "--db needs a database file path, got ':memory:' (SQLite would keep nothing there)")
        #expect(message { try LabStore.checkPath("") } == "--db needs a database file path, got '' (SQLite would keep nothing there)")
        #expect(message { try LabStore.checkPath("a\u{0}b") } == "--db needs a database file path, got 'a\\0b' (holds a NUL character)")
        for p in ["file:y.sqlite", ":x.sqlite", scratch.file("file:y.sqlite"), scratch.file("new/sub/lab.sqlite")] {
            #expect(message { try LabStore.checkPath(p) } == nil, "\(p)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["folder"])
        // LabStore itself refuses the same paths, and makes no file named like the folder.
        #expect(message { _ = try LabStore(path: scratch.file("dir/")) } == "--db needs a database file path, got '\(scratch.file("dir/"))' (a folder)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["folder"])
        #expect(LabStore.openingPath("file:y.sqlite") == FileManager.default.currentDirectoryPath + "/file:y.sqlite")
        #expect(LabStore.openingPath("./file:y.sqlite") == "./file:y.sqlite")
    }

    @Test("convert: an output or avcC path naming the input or each other (links, dots, hard links) is the same file")
    func sameFile() throws {
        let scratch = Scratch()
        let fm = FileManager.default
        try fm.createDirectory(atPath: scratch.file("d"), withIntermediateDirectories: true)
        try Data([1]).write(to: URL(fileURLWithPath: scratch.file("a.264")))
        try fm.createSymbolicLink(atPath: scratch.file("sym.264"), withDestinationPath: "a.264")
        try fm.linkItem(atPath: scratch.file("a.264"), toPath: scratch.file("hard.264"))
        try fm.createSymbolicLink(atPath: scratch.file("dl"), withDestinationPath: "d")
        #expect(Convert.sameFile(scratch.file("a.264"), scratch.file("a.264")))
        #expect(Convert.sameFile(scratch.file("a.264"), scratch.file("d/../a.264")))
        #expect(Convert.sameFile(scratch.file("a.264"), scratch.file("sym.264")))
        #expect(Convert.sameFile(scratch.file("a.264"), scratch.file("hard.264")))
        #expect(!Convert.sameFile(scratch.file("a.264"), scratch.file("b.264")))
        // Files that do not exist yet: the same folder (through a link too) and name.
        #expect(Convert.sameFile(scratch.file("d/n.avcc"), scratch.file("dl/n.avcc")))
        #expect(Convert.sameFile(scratch.file("n.avcc"), scratch.file("./n.avcc")))
        #expect(!Convert.sameFile(scratch.file("d/n.avcc"), scratch.file("d/m.avcc")))
        #expect(!Convert.sameFile(scratch.file("n.avcc"), scratch.file("d/n.avcc")))
    }
}
