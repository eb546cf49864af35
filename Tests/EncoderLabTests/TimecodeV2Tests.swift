import Foundation
import Testing
import H264
@testable import EncoderLab

@Suite("timecode v2 files: exact times, headers, comments, and the errors that name a file and line")
struct TimecodeV2Tests {
    @Test("comments and blank lines anywhere after the header; times exact, then rounded to µs once")
    func commentsAndBlankLines() throws {
        let text = "\n# timecode format v2\n0\n33.367\n\n# a comment\n   # an indented comment\n66.733\n  100.1  \n"
        let tc = try TimecodeV2.parse(text, path: "tc.txt")
        // 33.367 ms = 33367/1,000,000 s exactly; 100.1 ms = 1001/10,000 s.
        #expect(tc.times == [Rational.zero, try Rational(33367, 1_000_000), try Rational(66733, 1_000_000), try Rational(1001, 10_000)])
        #expect(tc.lines == [3, 4, 8, 9])
        #expect(tc.lineCount == 9)
        #expect(try tc.ptsMicroseconds(seek: 0, frames: 4) == [0, 33367, 66733, 100100])
        // --seek 1 starts at entry 1; the entries after the run are ignored.
        #expect(try tc.ptsMicroseconds(seek: 1, frames: 2) == [33367, 66733])
        #expect(try tc.ptsMicroseconds(seek: 4, frames: 0) == [])
    }

    @Test("both headers (mkvmerge's and mkvextract's), in any case and spacing, with CRLF line ends")
    func headers() throws {
        let a = try TimecodeV2.parse("# timecode format v2\n0\n40\n", path: "a")
        let b = try TimecodeV2.parse("# timestamp format v2\n0\n40", path: "b")
        let c = try TimecodeV2.parse("\u{FEFF}#  Timecode\tFormat   V2\r\n0\r\n40\r\n", path: "c")
        let d = try TimecodeV2.parse("#timestamp format v2\n0\n40\n", path: "d")
        for tc in [a, b, c, d] {
            #expect(try tc.ptsMicroseconds(seek: 0, frames: 2) == [0, 40000])
        }
        #expect(a.lineCount == 3 && b.lineCount == 3)
    }

    @Test("a missing or wrong header is 65, naming the file and the line")
    func missingHeader() {
        #expect(throws: LabError(.data, "tc.txt: line 1: expected the header '# timecode format v2' (or '# timestamp format v2'), found '0'")) {
            try TimecodeV2.parse("0\n33.367\n", path: "tc.txt")
        }
        #expect(throws: LabError(.data, "tc.txt: line 2: expected the header '# timecode format v2' (or '# timestamp format v2'), found '# timecode format v1', a format other than v2 (only v2 is read)")) {
            try TimecodeV2.parse("\n# timecode format v1\nassume 25\n", path: "tc.txt")
        }
        #expect(throws: LabError(.data, "tc.txt: line 1: expected the header '# timecode format v2' (or '# timestamp format v2'), found '# a comment first'")) {
            try TimecodeV2.parse("# a comment first\n# timecode format v2\n0\n", path: "tc.txt")
        }
        #expect(throws: LabError(.data, "empty.txt: no header: a timecode v2 file starts with '# timecode format v2' (or '# timestamp format v2')")) {
            try TimecodeV2.parse("\n \n", path: "empty.txt")
        }
    }

    @Test("a line that is not a time is 65 with its line number")
    func badLine() throws {
        for (bad, line) in [("33,367", 4), ("-5", 4), ("1e3", 4), ("33.", 4), (".5", 4), ("33.3.3", 4), ("40 # note", 4), ("0x10", 4)] {
            #expect(throws: LabError(.data, "tc.txt: line \(line): '\(bad)' is not a time in milliseconds (digits with an optional fraction, e.g. 33.367)")) {
                try TimecodeV2.parse("# timecode format v2\n0\n# c\n\(bad)\n100\n", path: "tc.txt")
            }
        }
        // 19 significant digits do not fit a 64-bit numerator; trailing zeros of a fraction are dropped first.
        #expect(throws: LabError(.data, "tc.txt: line 2: '1234567890123456789' has more digits than an exact 64-bit time holds")) {
            try TimecodeV2.parse("# timecode format v2\n1234567890123456789\n", path: "tc.txt")
        }
        #expect(try TimecodeV2.parse("# timecode format v2\n0001.50000000000000000000\n", path: "t").times == [try Rational(3, 2000)])
    }

    @Test("non-increasing times within the run are 65 naming the line; outside the run they are ignored")
    func nonIncreasing() throws {
        let equal = try TimecodeV2.parse("# timecode format v2\n0\n40\n40\n", path: "tc.txt")
        #expect(throws: LabError(.data, "tc.txt: line 4: 40 ms is not after 40 ms on line 3 (times must increase)")) {
            try equal.ptsMicroseconds(seek: 0, frames: 3)
        }
        #expect(try equal.ptsMicroseconds(seek: 0, frames: 2) == [0, 40000])
        let back = try TimecodeV2.parse("# timecode format v2\n0\n40.5\n\n30.25\n", path: "tc.txt")
        #expect(throws: LabError(.data, "tc.txt: line 5: 30.25 ms is not after 40.5 ms on line 3 (times must increase)")) {
            try back.ptsMicroseconds(seek: 1, frames: 2)
        }
        // 0.0001 ms < 0.0004 ms exactly, but both round to 0 µs.
        let collide = try TimecodeV2.parse("# timecode format v2\n0.0001\n0.0004\n", path: "tc.txt")
        #expect(throws: LabError(.data, "tc.txt: line 3: 0.0004 ms and 0.0001 ms on line 2 round to the same microsecond, 0 µs")) {
            try collide.ptsMicroseconds(seek: 0, frames: 2)
        }
    }

    @Test("fewer entries than seek + frames is 65 naming the line where the first missing entry would be")
    func tooFew() throws {
        let tc = try TimecodeV2.parse("# timecode format v2\n0\n40\n80\n", path: "tc.txt")
        #expect(throws: LabError(.data, "tc.txt: line 5: entry 4 is missing: the file has 3 times, and --seek 1 with 3 frames needs 4")) {
            try tc.ptsMicroseconds(seek: 1, frames: 3)
        }
        let noNewline = try TimecodeV2.parse("# timecode format v2\n0\n# end", path: "t2")
        #expect(throws: LabError(.data, "t2: line 4: entry 2 is missing: the file has 1 times, and --seek 0 with 2 frames needs 2")) {
            try noNewline.ptsMicroseconds(seek: 0, frames: 2)
        }
        #expect(throws: LabError(.usage, "--seek: -1 is negative")) { try tc.ptsMicroseconds(seek: -1, frames: 1) }
    }

    @Test("µs values by hand: to nearest, ties away from zero")
    func microsecondsByHand() throws {
        // 33.3666 ms = 33,366.6 µs -> 33,367; 33.3665 ms = 33,366.5 µs (a tie) -> 33,367; 33.3664 ms -> 33,366;
        // 0.0005 ms = 0.5 µs -> 1; 1001/30 ms written to 12 decimals, 33.366666666667 ms -> 33,367;
        // 10^13 ms = 10^16 µs.
        let text = "# timestamp format v2\n0.0005\n33.3664\n33.3665\n33.3666\n33.366666666667\n10000000000000\n"
        let tc = try TimecodeV2.parse(text, path: "t")
        #expect(tc.times[3] == (try Rational(333_666, 10_000_000)))
        #expect(throws: LabError(.data, "t: line 5: 33.3666 ms and 33.3665 ms on line 4 round to the same microsecond, 33367 µs")) {
            try tc.ptsMicroseconds(seek: 0, frames: 4)
        }
        #expect(try tc.ptsMicroseconds(seek: 0, frames: 3) == [1, 33366, 33367])
        #expect(try tc.ptsMicroseconds(seek: 3, frames: 1) == [33367])
        #expect(try tc.ptsMicroseconds(seek: 4, frames: 2) == [33367, 10_000_000_000_000_000])
    }

    @Test("read: a missing file is 66, a directory 66, a real file parses as its text")
    func read() throws {
        let dir = NSTemporaryDirectory() + "enclab-tc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/tc.txt"
        #expect(throws: LabError(.noInput, "\(path): no such timecode file")) { try TimecodeV2.read(path: path) }
        #expect(throws: LabError(.noInput, "\(dir): cannot be read as a timecode file")) { try TimecodeV2.read(path: dir) }
        let text = "# timecode format v2\n0\n41.708\n83.417\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let tc = try TimecodeV2.read(path: path)
        #expect(tc.path == path)
        #expect(try tc.ptsMicroseconds(seek: 0, frames: 3) == [0, 41708, 83417])
        try Data([0x23, 0xff, 0xfe]).write(to: URL(fileURLWithPath: path))
        #expect(throws: LabError(.data, "\(path): not a timecode v2 file (not UTF-8 text)")) { try TimecodeV2.read(path: path) }
    }
}
