import Foundation
import Testing
@testable import EncoderLab

@Suite("experiment files")
struct ExperimentTests {
    func parse(_ json: String) throws -> Experiment {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        return try Experiment(object: object, file: "e.json", baseDirectory: "/base")
    }

    func message(_ json: String) -> String? {
        do { _ = try parse(json); return nil } catch let e as LabError { return e.message } catch { return "\(error)" }
    }

    @Test("the runs are clips x the cartesian product of the grid lists; object values apply together")
    func product() throws {
        let e = try parse("""
            {"name": "t", "clips": ["a.y4m", "/abs/b.y4m"], "base": {"preset": "fast", "no-cabac": true},
             "grid": {"bframes": [0, 2, 3], "mode": [{"rc": "crf", "crf": 20}, {"rc": "cbr", "bitrate": 500}]}}
            """)
        #expect(e.runs.count == 2 * 3 * 2)
        #expect(e.clips == ["/base/a.y4m", "/abs/b.y4m"])
        #expect(Paths.normalized("experiments/../fixtures/./a.mp4") == "fixtures/a.mp4")
        // `x/..` is removed only when x is a real folder (ExperimentPathTests): `../HERE` is the current folder.
        let here = Paths.fileName(FileManager.default.currentDirectoryPath)
        #expect(Paths.normalized("../\(here)/../../y") == "../../y")
        let last = e.runs.last!
        #expect(last.clip == "/abs/b.y4m")
        #expect(last.label == "bframes=3 bitrate=500 rc=cbr")
        #expect(try last.settings.resolved().x264Arguments == ["--preset", "fast", "--no-cabac", "--bframes", "3", "--bitrate", "500",
                                                              "--vbv-maxrate", "500", "--vbv-bufsize", "500", "--nal-hrd", "cbr"])
    }

    @Test("bad experiment files name the key")
    func refused() {
        #expect(message(#"{"clips": ["a"]}"#) == "e.json: key 'name' must be a non-empty string")
        #expect(message(#"{"name": "t", "clips": []}"#) == "e.json: key 'clips' must be a non-empty list of paths")
        #expect(message(#"{"name": "t", "clips": ["a"], "grid": {"crf": 20}}"#) == "e.json: grid key 'crf' must be a non-empty list")
        #expect(message(#"{"name": "t", "clips": ["a"], "gird": {}}"#) == "e.json: unknown key 'gird' (expected name, clips, base, grid, description, report, metrics)")
        #expect(message(#"{"name": "../x", "clips": ["a"]}"#)?.contains("key 'name' may hold only") == true)
        #expect(message(#"{"name": "t", "clips": ["a"], "base": {"rc": "slow"}}"#) == "e.json: base: setting 'rc' must be one of cqp, crf, abr, cbr, vbr, got 'slow'")
    }

    @Test("the shipped quickstart covers five modes at four rates on both real clips")
    func quickstart() throws {
        let e = try Experiment(path: "\(repositoryRoot)/experiments/quickstart.json")
        #expect(e.runs.count >= 40)
        let modes = Set(e.runs.compactMap { $0.settings.rc?.rawValue })
        #expect(modes == ["cqp", "crf", "abr", "cbr", "vbr"])
        #expect(Set(e.runs.map { ($0.clip as NSString).lastPathComponent }) == ["carphone_pristine.mp4", "bigbuckbunny.mp4"])
        for m in modes { #expect(e.runs.filter { $0.settings.rc?.rawValue == m }.count == 8) }
    }
}
