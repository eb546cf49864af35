import Foundation
import Testing
@testable import EncoderLab

/// Collects what a ``Progress`` writes, and supplies its clock.
private final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var texts: [String] = []
    private var t = 0.0
    func write(_ s: String) { lock.lock(); texts.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return texts }
    func set(_ v: Double) { lock.lock(); t = v; lock.unlock() }
    var time: Double { lock.lock(); defer { lock.unlock() }; return t }
}

@Suite struct ProgressTests {
    @Test func lineArithmetic() {
        // 10 of 40 in 5 s: 2 per second, 30 left take 15 s.
        #expect(Progress.line(label: "run", done: 10, total: 40, unit: "runs", elapsed: 5, bar: 8)
                == "run  [##------]  10/40 runs  2.00 runs/s  0:15 left")
        // 1 of 3 in 1000 s: 0.001/s, 2 left take 2000 s = 33 min 20 s.
        #expect(Progress.line(label: "a", done: 1, total: 3, unit: "x", elapsed: 1000, bar: 0)
                == "a  1/3 x  0.00 x/s  33:20 left")
        // Before the first step: no rate, no time left.
        #expect(Progress.line(label: "a", done: 0, total: 12, unit: "runs", elapsed: 3, bar: 0) == "a   0/12 runs")
        // Done: the time taken instead of the time left; 1500 per second shown without decimals.
        #expect(Progress.line(label: "a", done: 3000, total: 3000, unit: "rows", elapsed: 2, bar: 4)
                == "a  [####]  3000/3000 rows  1500 rows/s  0:02 taken")
        #expect(Progress.clock(seconds: 3725) == "1:02:05")
        #expect(Progress.clock(seconds: -4) == "0:00")
    }

    @Test func plainLinesEveryStepOrOncePerSecond() {
        let c = Capture()
        let every = Progress(label: "run", total: 3, unit: "runs", everyStep: true, terminal: false,
                             write: { c.write($0) }, now: { c.time })
        for i in 1...3 { c.set(Double(i)); every.advance(detail: "clip\(i)") }
        every.finish()
        #expect(c.all == ["run  1/3 runs  1.00 runs/s  0:02 left  clip1\n",
                          "run  2/3 runs  1.00 runs/s  0:01 left  clip2\n",
                          "run  3/3 runs  1.00 runs/s  0:03 taken  clip3\n"])

        let d = Capture()
        let throttled = Progress(label: "analyze", total: 100, unit: "runs", terminal: false,
                                 write: { d.write($0) }, now: { d.time })
        for i in 1...100 { d.set(Double(i) * 0.05); throttled.advance() }   // 5 s in all
        // The first step at 0.05 s, then one a second (1.05, 2.05, 3.05, 4.05) and the last.
        #expect(d.all.count == 6)
        #expect(d.all.last == "analyze  100/100 runs  20 runs/s  0:05 taken\n")
    }

    @Test func terminalRedrawsInPlaceAndEndsTheLine() {
        let c = Capture()
        let p = Progress(label: "report", total: 2, unit: "pages", terminal: true, write: { c.write($0) }, now: { c.time })
        c.set(1); p.advance()
        c.set(1.05); p.advance(by: 5)    // clamped to the total, and drawn although within 0.1 s: it is the last
        p.finish(); p.finish()
        #expect(c.all.count == 3)
        #expect(c.all[0].hasPrefix("\r\u{1B}[Kreport  [##########----------]  1/2 pages"))
        #expect(c.all[1].hasPrefix("\r\u{1B}[Kreport  [####################]  2/2 pages"))
        #expect(c.all[2] == "\n")
    }
}
