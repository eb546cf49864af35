import Foundation
import Testing
@testable import EncoderLab
import H264

/// Two drawers of the same plots at once (`enclab plot` beside a sweep on the same `--out`, issue 17): each draws
/// into a folder of its own and moves whole pictures into place, so neither removes, truncates or checks the other's
/// files ("gnuplot did not write it: the disk may be full" on a disk with room).
@Suite("plots drawn by several drawers at once into one folder")
struct PlotConcurrencyTests {
    @Test("4 threads drawing one run's plots 4 times each into the same folder: no error, every picture whole")
    func sameFolderAtOnce() throws {
        let root = NSTemporaryDirectory() + "enclab-plot-concurrency-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let frames = (0..<30).map { k in
            LabStore.FrameRow(codedIndex: k, displayIndex: k, type: k == 0 ? "IDR" : "P", sizeBytes: 900 + 37 * k,
                              pts: Int64(k), dts: Int64(k) - 1, qp: 30, psnrY: 35 + Double(k % 3), psnrAvg: 36 + Double(k % 2), ssim: nil)
        }
        let input = RunPlotInput(title: "shared", fps: try Rational(25, 1), timebaseNum: 1, timebaseDen: 25,
                                 targetKbps: 300, maxrateKbps: nil, frames: frames)
        let dir = "\(root)/0123456789abcdef"
        let errors = LockedBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<4 {
                do {
                    // Even workers as a sweep draws (a queue, one process for the folder), odd ones as encode does.
                    if worker % 2 == 0 {
                        let queue = PlotQueue()
                        try Plots.writeRunPlots(input, dir: dir, queue: queue)
                        try queue.draw(in: root)
                    } else {
                        try Plots.writeRunPlots(input, dir: dir)
                    }
                } catch {
                    errors.update { $0.append("worker \(worker) round \(round): \(error)") }
                }
            }
        }
        #expect(errors.current == [])
        for name in ["frames.png", "frames.svg", "psnr.png", "psnr.svg"] {
            // PNG: signature and IEND chunk (PNG specification 5.2, 11.2.5); SVG: `</svg>`, then white space ending in a
            // newline (gnuplot ends it with two).
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name)")))
            let whole = name.hasSuffix(".png")
                ? bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                    && Array(bytes.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
                : bytes.last == 0x0A && String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("</svg>")
            #expect(whole, "\(name)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix(".") } == [])
    }
}
