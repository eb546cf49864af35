import Foundation

/// A run's RTP stage drawn (docs/rtp.md, "A run's RTP stage"): `rtp.png/svg` with `rtp.dat` and `rtp.gp`, beside the
/// run's `frames.*`, when the run has `rtp_frames` rows.
///
/// `rtp.dat`: one row per coded frame in decode order: coded index, display index, RTP packets, packets lost (NaN
/// without a loss model), luma PSNR under loss and loss-free (NaN without a loss model or for no error), and the
/// state (0 intact, 1 broken, 2 frozen; NaN without). The chart: packets per frame (boxes) with the lost ones on top
/// (red), and with a loss model, on the right axis, the PSNR of each frame shown under loss against the loss-free
/// decode's, by display index.
extension Plots {
    static let rtpStates = ["intact", "broken", "frozen"]

    /// Writes the files and queues the chart on `queue`; does nothing without `frames`.
    static func writeRTPPlot(_ input: RunPlotInput, frames: [LabStore.StoredRTPFrame], dir: String, queue: PlotQueue) throws {
        try writeRTPPlot(title: input.title, frames: frames, dir: dir, queue: queue)
    }

    /// The same chart titled `title` (the report's run page, which has no ``RunPlotInput``).
    static func writeRTPPlot(title: String, frames: [LabStore.StoredRTPFrame], dir: String, queue: PlotQueue) throws {
        guard !frames.isEmpty else { return }
        func number(_ v: Double?) -> String { v.map { String($0) } ?? "NaN" }
        var data = "# coded_index display_index packets lost_packets psnr_y lossfree_psnr_y state_index\n"
        for f in frames {
            data += "\(f.codedIndex) \(f.displayIndex) \(f.packets) \(f.lostPackets.map(String.init) ?? "NaN") \(number(f.psnrY)) "
                + "\(number(f.lossFreePSNRY)) \(f.state.flatMap { rtpStates.firstIndex(of: $0) }.map(String.init) ?? "NaN")\n"
        }
        try write(data, to: "\(dir)/rtp.dat")
        let lossy = frames.contains { $0.lostPackets != nil }
        var body = """
        set title ARG1
        set xlabel 'frame (decode order for packets; display order for PSNR)'
        set ylabel 'RTP packets'
        set yrange [0:*]
        set style fill solid 0.6 noborder
        set boxwidth 0.8
        set key below horizontal
        set grid
        """
        if lossy {
            body += """

            set y2label 'luma PSNR (dB)'
            set y2tics
            plot 'rtp.dat' using 1:3 with boxes lc rgb '#1f77b4' title 'packets per frame', \\
                 'rtp.dat' using 1:4 with boxes lc rgb '#d62728' title 'packets lost', \\
                 'rtp.dat' using 2:6 axes x1y2 with points pt 7 ps 0.5 lc rgb 'black' title 'PSNR, loss-free decode', \\
                 'rtp.dat' using 2:5 axes x1y2 with points pt 6 ps 0.8 lc rgb '#ff7f0e' title 'PSNR under loss (frame shown)'
            """
        } else {
            body += "\nplot 'rtp.dat' using 1:3 with boxes lc rgb '#1f77b4' title 'packets per frame'"
        }
        try both(dir: dir, name: "rtp", body: body, arguments: [shown(title)], queue: queue)
    }
}
