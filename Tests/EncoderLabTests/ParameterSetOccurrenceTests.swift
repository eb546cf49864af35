import Foundation
import H264
import Testing
@testable import EncoderLab

/// `parameter_sets` keyed by occurrence: every SPS and PPS NAL unit of a stream, in order, with its NAL unit index, so
/// an id given new content mid-stream (a resolution switch reusing SPS 0) keeps both. Read back with the sqlite3 CLI;
/// the NAL units are found by a start-code scan written here.
@Suite("SQLite store: parameter sets by occurrence")
struct ParameterSetOccurrenceTests {
    /// A store with one done run whose verification holds `sets` (stream order); returns the database path.
    static func record(_ sets: [StoredParameterSet], scratch: Scratch) throws -> String {
        let path = scratch.file("lab.db")
        let store = try LabStore(path: path, busyTimeoutMilliseconds: 0)
        var record = RecordRunTests.doneRecord()
        guard case .done(var finished) = record.outcome else { preconditionFailure("doneRecord is done") }
        finished.verification = StreamVerification(accessUnits: [], checks: [], parameterSets: sets)
        record.outcome = .done(finished)
        try store.recordRun(record, beforeCommit: { _ in })
        return path
    }

    static func set(_ kind: String, id: Int, nal: Int, fields: String) -> StoredParameterSet {
        StoredParameterSet(kind: kind, id: id, profileIdc: nil, levelIdc: nil, width: nil, height: nil, entropyCodingModeFlag: nil,
                           maxNumReorderFrames: nil, fieldsJSON: fields, nalUnitIndex: nal)
    }

    @Test("occurrences count per kind in stream order; new_content is 1 for an id's first set and for changed content only")
    func occurrencesAndNewContent() throws {
        let scratch = Scratch()
        let db = try Self.record([
            Self.set("sps", id: 0, nal: 0, fields: #"{"w":64}"#), Self.set("pps", id: 0, nal: 1, fields: "{}"),
            Self.set("sps", id: 0, nal: 4, fields: #"{"w":64}"#), Self.set("pps", id: 0, nal: 5, fields: "{}"),   // repeated
            Self.set("sps", id: 0, nal: 9, fields: #"{"w":96}"#), Self.set("pps", id: 0, nal: 10, fields: "{}"),  // SPS 0 changes
            Self.set("sps", id: 1, nal: 12, fields: #"{"w":96}"#),                                                // another id
        ], scratch: scratch)
        #expect(try StoreOpenTests.sqlite(db, "SELECT kind, occurrence, id, nal_unit_index, new_content, fields FROM parameter_sets ORDER BY kind DESC, occurrence") == [
            #"sps|0|0|0|1|{"w":64}"#, #"sps|1|0|4|0|{"w":64}"#, #"sps|2|0|9|1|{"w":96}"#, #"sps|3|1|12|1|{"w":96}"#,
            "pps|0|0|1|1|{}", "pps|1|0|5|0|{}", "pps|2|0|10|0|{}",
        ])
    }

    /// The NAL unit types of an Annex B stream in order, by a start-code scan (00 00 01; the header byte's low 5 bits).
    static func nalTypes(_ bytes: [UInt8]) -> [Int] {
        var types: [Int] = []
        var i = 0
        while i + 3 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 {
                types.append(Int(bytes[i + 3] & 0x1f))
                i += 3
            } else {
                i += 1
            }
        }
        return types
    }

    /// The NAL units' bytes between start codes (trailing zero bytes of a 4-byte start code dropped).
    static func nalBodies(_ bytes: [UInt8]) -> [[UInt8]] {
        var starts: [Int] = []
        var i = 0
        while i + 2 < bytes.count {
            if bytes[i] == 0, bytes[i + 1] == 0, bytes[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        return starts.enumerated().map { k, start in
            var end = k + 1 < starts.count ? starts[k + 1] - 3 : bytes.count
            while end > start, bytes[end - 1] == 0 { end -= 1 }
            return Array(bytes[start..<end])
        }
    }

    @Test("a resolution switch (two x264 CLI streams of 64x48 and 96x64, keyint 2, one after the other): every SPS and PPS stored with its NAL index; SPS 0's new content marked")
    func resolutionSwitch() throws {
        let scratch = Scratch()
        var stream: [UInt8] = []
        for (name, size) in [("a", "64x48"), ("b", "96x64")] {
            let clip = scratch.file("\(name).y4m")
            let f = try Witness.run("ffmpeg", ["-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=25", "-frames:v", "4",
                                               "-pix_fmt", "yuv420p", Witness.file(clip)])
            try #require(f.status == 0)
            let x = try Witness.x264(["--quiet", "--threads", "1", "--keyint", "2", "-o", scratch.file("\(name).264"), clip])
            try #require(x.status == 0)
            stream += [UInt8](try Data(contentsOf: URL(fileURLWithPath: scratch.file("\(name).264"))))
        }
        let sets = try StreamCheck.parameterSets(try AnnexB.split(stream).map(\.nal))
        let db = try Self.record(sets, scratch: scratch)
        // The witness: NAL unit indices of types 7 and 8 by the scan; x264 repeats SPS and PPS before each IDR (frames
        // 0 and 2 of each stream); new content where a set's bytes differ from the previous one of its kind (one id, 0).
        let types = Self.nalTypes(stream), bodies = Self.nalBodies(stream)
        try #require(types.count == bodies.count)
        var expected: [String] = []
        for (kind, type) in [("sps", 7), ("pps", 8)] {
            let indices = types.indices.filter { types[$0] == type }
            #expect(indices.count == 4)
            for (occurrence, index) in indices.enumerated() {
                let changed = occurrence == 0 || bodies[index] != bodies[indices[occurrence - 1]]
                let width = kind == "sps" ? (occurrence < 2 ? "64" : "96") : ""
                expected.append("\(kind)|\(occurrence)|0|\(index)|\(changed ? 1 : 0)|\(width)")
            }
        }
        #expect(try StoreOpenTests.sqlite(db, "SELECT kind, occurrence, id, nal_unit_index, new_content, width FROM parameter_sets ORDER BY kind DESC, occurrence") == expected)
        #expect(try StoreOpenTests.sqlite(db, "SELECT occurrence FROM parameter_sets WHERE kind = 'sps' AND new_content = 1") == ["0", "2"])
    }
}
