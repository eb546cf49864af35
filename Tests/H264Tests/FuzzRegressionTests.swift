import Foundation
import Testing
@testable import H264

// Replays the inputs kept by scripts/fuzz.sh under fuzz/regressions/<target>/ through the same
// entry points the libFuzzer targets call (FuzzEntryPoints). A regression that crashes again
// crashes this test process; one that only throws is fine (rejecting bad input is the goal).

/// The fuzz targets and their entry points; the names are the files in fuzz/targets/.
let fuzzTargets: [String: @Sendable ([UInt8]) -> Void] = [
    "annexb": FuzzEntryPoints.annexB,
    "avcc": FuzzEntryPoints.avcc,
    "avcc_record": FuzzEntryPoints.avcCRecord,
    "parameter_sets": FuzzEntryPoints.parameterSets,
    "packets": FuzzEntryPoints.packets,
]

@Suite struct FuzzRegressionTests {
    @Test func everyTargetHasAnEntryPoint() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("fuzz/targets").path)
            .filter { $0.hasSuffix(".swift") }.map { String($0.dropLast(6)) }
        #expect(Set(targets) == Set(fuzzTargets.keys))
    }

    @Test(arguments: fuzzTargets.keys.sorted())
    func replayRegressions(target: String) throws {
        let entry = try #require(fuzzTargets[target])
        let dir = repositoryRoot.appendingPathComponent("fuzz/regressions/\(target)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        for file in files.sorted() where !file.hasPrefix(".") {
            entry([UInt8](try Data(contentsOf: dir.appendingPathComponent(file))))
        }
        // The fuzzer's seeds too.
        let seeds = repositoryRoot.appendingPathComponent("fuzz/seeds/\(target)")
        for file in ((try? FileManager.default.contentsOfDirectory(atPath: seeds.path)) ?? []).sorted() {
            entry([UInt8](try Data(contentsOf: seeds.appendingPathComponent(file))))
        }
        // The test vectors (the fuzzers' seeds) go through every entry point too, whole and cut.
        for name in try FileManager.default.contentsOfDirectory(atPath: vectorsDirectory.path) where name.hasSuffix(".264") {
            let data = try vector(name)
            entry(data)
            entry(Array(data.prefix(data.count / 2)))
            entry(Array(data.dropFirst(4)))
        }
    }
}

@Suite struct FuzzSeedTests {
    /// The seeds in fuzz/seeds/ were written by a Python script following PACKETS.md and
    /// ISO/IEC 14496-15 independently of this module: they must parse.
    func seeds(_ target: String) throws -> [(String, [UInt8])] {
        let dir = repositoryRoot.appendingPathComponent("fuzz/seeds/\(target)")
        return try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted().map {
            ($0, [UInt8](try Data(contentsOf: dir.appendingPathComponent($0))))
        }
    }

    @Test func avcCSeedsParse() throws {
        let all = try seeds("avcc_record")
        // One per vector with an SPS: the 11 vectors minus aud_slice and aud_slice_5zeros.
        #expect(all.count == 9)
        for (name, bytes) in all {
            let record = try AVCDecoderConfigurationRecord(bytes: bytes)
            // open_gop.264 repeats its SPS and PPS before each I picture: 3 of each.
            #expect(record.sequenceParameterSets.count == (name == "open_gop" ? 3 : 1), "\(name)")
            // Written back unchanged (reserved bits 1, extension present exactly for 100/110/122/144).
            #expect(try record.serialize() == bytes, "\(name)")
        }
    }

    @Test func packetSeedsParse() throws {
        // aud_slice_parameter_sets holds no slice, so its packet file is empty.
        for (name, bytes) in try seeds("packets") where name != "aud_slice_parameter_sets" {
            let packets = try Packet.deserializeAll(bytes)
            #expect(!packets.isEmpty, "\(name)")
            #expect(packets.first?.sequenceParameterSets.isEmpty == false, "\(name)")
            #expect(packets.map(\.decodeOrder) == (0..<UInt64(packets.count)).map { $0 }, "\(name)")
            #expect(packets.first?.dtsMicroseconds == -80_000, "\(name)")
        }
    }
}
