import Foundation

/// The RTP stage of a run (`--rtp`, `--loss`; docs/rtp.md) on the report's pages: the `rtp_runs` columns with human
/// names and units (the run page's table, the experiment page's column chooser), and the run page's charts.
enum RTPColumns {
    /// One `rtp_runs` column as the pages show it: its name with the unit, and the decimals of its number (nil: text).
    struct Column {
        var column: String
        var name: String
        var digits: Int?
    }

    /// The columns shown, in order. The RTP overhead as a percentage is not stored: it is computed here from
    /// `rtp_overhead_bytes` and `payload_bytes` (``overheadPercent(_:)``) and shown after the overhead's bytes.
    static let all: [Column] = [
        .init(column: "mtu", name: "MTU (bytes)", digits: 0),
        .init(column: "packetization_mode", name: "packetization-mode", digits: 0),
        .init(column: "packets", name: "RTP packets", digits: 0),
        .init(column: "max_packets_per_frame", name: "most packets in one frame", digits: 0),
        .init(column: "mean_packets_per_frame", name: "mean packets per frame", digits: 2),
        .init(column: "largest_burst_bytes", name: "largest burst (bytes of one frame's packets)", digits: 0),
        .init(column: "rtp_overhead_bytes", name: "RTP overhead (bytes)", digits: 0),
        .init(column: "payload_bytes", name: "NAL unit bytes carried", digits: 0),
        .init(column: "loss", name: "loss model", digits: nil),
        .init(column: "expected_loss_rate", name: "loss model's expected loss rate", digits: 4),
        .init(column: "packets_lost", name: "packets lost", digits: 0),
        .init(column: "packets_received", name: "packets received", digits: 0),
        .init(column: "frames_frozen", name: "frames frozen (the picture before shown again)", digits: 0),
        .init(column: "frames_broken", name: "frames broken (more than 0.5 dB under the loss-free decode)", digits: 0),
        .init(column: "frames_concealed", name: "frames concealed by libavcodec", digits: 0),
        .init(column: "loss_events", name: "loss events", digits: 0),
        .init(column: "mean_recovery_frames", name: "frames until recovery, mean", digits: 2),
        .init(column: "max_recovery_frames", name: "frames until recovery, max", digits: 0),
        .init(column: "unrecovered_events", name: "loss events not recovered by the end", digits: 0),
        .init(column: "mean_psnr_y", name: "mean luma PSNR under loss (dB)", digits: 3),
        .init(column: "lossfree_mean_psnr_y", name: "mean luma PSNR, loss-free decode (dB)", digits: 3),
    ]

    /// The name of the computed overhead percentage.
    static let overheadPercentName = "RTP overhead (% of the NAL unit bytes)"

    /// `rtp_overhead_bytes` / `payload_bytes` × 100, nil without payload.
    static func overheadPercent(_ row: [String: SQLValue]) -> Double? {
        guard let o = row["rtp_overhead_bytes"]?.double, let p = row["payload_bytes"]?.double, p > 0 else { return nil }
        return o / p * 100
    }

    /// The cells of `row` (nil: a run without the RTP stage: every cell empty), in the order of ``headers``.
    static func cells(_ row: [String: SQLValue]?) -> [String] {
        var out: [String] = []
        for c in all {
            out.append(cell(c, row))
            if c.column == "rtp_overhead_bytes" { out.append(row.map { HTML.number(overheadPercent($0), digits: 2) } ?? "") }
        }
        return out
    }

    /// The experiment page's headers: each name prefixed "RTP: ".
    static var headers: [String] {
        var out: [String] = []
        for c in all {
            out.append("RTP: " + c.name)
            if c.column == "rtp_overhead_bytes" { out.append("RTP: " + overheadPercentName) }
        }
        return out
    }

    static func cell(_ c: Column, _ row: [String: SQLValue]?) -> String {
        guard let value = row?[c.column] else { return "" }
        if let digits = c.digits { return HTML.number(value.double, digits: digits) }
        return HTML.escape(value.string ?? "")
    }

    /// The run page's table (id `rtp-run`): quantity, value, and the stored column it comes from. Without a loss
    /// model the loss columns (all NULL) are left out.
    static func table(_ row: [String: SQLValue]) -> String {
        let lossy = row["loss"]?.string != nil
        let lossColumns: Set<String> = ["loss", "expected_loss_rate", "packets_lost", "packets_received", "frames_frozen", "frames_broken",
                                        "frames_concealed", "loss_events", "mean_recovery_frames", "max_recovery_frames",
                                        "unrecovered_events", "mean_psnr_y", "lossfree_mean_psnr_y"]
        var rows: [[String]] = []
        for c in all where lossy || !lossColumns.contains(c.column) {
            rows.append([HTML.escape(c.name), cell(c, row), "<code>rtp_runs.\(c.column)</code>"])
            if c.column == "rtp_overhead_bytes" {
                rows.append([HTML.escape(overheadPercentName), HTML.number(overheadPercent(row), digits: 2),
                             "<code>rtp_overhead_bytes / payload_bytes × 100</code>"])
            }
        }
        return HTML.table(headers: ["", "value", "stored as"], rows: rows, textColumns: [0, 2], id: "rtp-run")
    }
}

extension ChartRunPage {
    static let lossColour = "#ff7f0e", frozenColour = "#d62728", brokenColour = "#9467bd"

    /// The run page's RTP section: the `rtp_runs` table, the interactive charts `chart-rtp-packets` (RTP packets per
    /// frame, and with a loss model the packets lost), `chart-rtp-bytes` (the bytes of each frame's packets: the burst
    /// it sends) and, with a loss model, `chart-rtp-loss` (luma PSNR of the frame shown under loss beside the loss-free
    /// decode's, frozen and broken frames marked), with the gnuplot `rtp.*` (``Plots/writeRTPPlot(title:frames:dir:queue:)``).
    /// Fields: `pk` packets, `pb` RTP bytes, `pl` packets lost, `ly` `lf` luma PSNR under loss and loss-free, `ls` the
    /// state (0 intact, 1 broken, 2 frozen), `lm` the marks' height (`ly`, or `lf` where the frame shown has no error).
    /// Every field is per coded frame of the page's `frames`; the loss fields are the `rtp_loss_frames` row of the
    /// frame's display index (a frame is drawn at its decode time, its PSNR is that of its display slot).
    /// Empty for a run without the RTP stage.
    mutating func rtpSection(_ rtp: [LabStore.StoredRTPFrame], run: [String: SQLValue]?, title: String, dir: String, queue: PlotQueue) throws -> String {
        guard !rtp.isEmpty || run != nil else { return "" }
        var html = "<h2>RTP stage</h2>\n"
        html += "<p class=\"note\">The stream packetized into RTP (RFC 6184) and, with a loss model, sent through a seeded loss channel and decoded damaged (docs/rtp.md). A frame that is frozen was not output (the picture before it is shown again); a broken one was shown more than 0.5 dB under the loss-free decode.</p>\n"
        if let run { html += RTPColumns.table(run) }
        guard !rtp.isEmpty else { return html }
        try Plots.writeRTPPlot(title: title, frames: rtp, dir: dir, queue: queue)
        var byCoded: [Int: LabStore.StoredRTPFrame] = [:]
        for f in rtp { byCoded[f.codedIndex] = f }
        let at = frames.map { byCoded[$0.codedIndex] }
        func ints(_ v: [Int?]) -> String { "[" + v.map { $0.map(String.init) ?? "null" }.joined(separator: ",") + "]" }
        let lossy = rtp.contains { $0.lostPackets != nil }
        var fields: [(name: String, json: String)] = [("pk", ints(at.map { $0?.packets })), ("pb", ints(at.map { $0?.rtpBytes }))]
        var packetSeries: [ChartGroup.Series] = [.init(name: "RTP packets of the frame", colour: Self.runColour, run: 0, field: "pk", style: "impulses")]
        if lossy {
            fields.append(("pl", ints(at.map { $0?.lostPackets })))
            packetSeries.append(.init(name: "packets lost", colour: Self.frozenColour, run: 0, field: "pl", above: 0, style: "marks"))
            let states = at.map { f in f?.state.flatMap { Plots.rtpStates.firstIndex(of: $0) } }
            fields += [("ly", ChartGroup.fixed(at.map { $0?.psnrY }, digits: 3)), ("lf", ChartGroup.fixed(at.map { $0?.lossFreePSNRY }, digits: 3)),
                       ("ls", ints(states)), ("lm", ChartGroup.fixed(at.map { $0.flatMap { $0.psnrY ?? $0.lossFreePSNRY } }, digits: 3))]
        }
        group.runs[0].fields += fields
        group.charts.append(.init(id: "chart-rtp-packets", yLabel: "RTP packets", series: packetSeries))
        html += self.html("chart-rtp-packets", title: "RTP packets per frame (rtp_frames.packets\(lossy ? "; lost: rtp_frames.lost_packets" : ""))", gnuplot: nil)
        group.charts.append(.init(id: "chart-rtp-bytes", yLabel: "bytes", series: [
            .init(name: "bytes of the frame's RTP packets (headers included)", colour: "#000000", run: 0, field: "pb", style: "impulses"),
        ]))
        html += self.html("chart-rtp-bytes", title: "Burst per frame: the bytes of each frame's RTP packets (rtp_frames.rtp_bytes)", gnuplot: lossy ? nil : (name: "rtp", data: ["rtp.dat"]))
        if lossy {
            let frozen = at.filter { $0?.state == "frozen" }.count, broken = at.filter { $0?.state == "broken" }.count
            group.charts.append(.init(id: "chart-rtp-loss", yLabel: "luma PSNR (dB)", series: [
                .init(name: "PSNR Y, loss-free decode", colour: "#000000", run: 0, field: "lf"),
                .init(name: "PSNR Y under loss (the picture shown)", colour: Self.lossColour, run: 0, field: "ly"),
                .init(name: "frozen (the picture before shown again)", colour: Self.frozenColour, run: 0, field: "lm", whereField: "ls", whereValue: 2, style: "points"),
                .init(name: "broken (over 0.5 dB under the loss-free decode)", colour: Self.brokenColour, run: 0, field: "lm", whereField: "ls", whereValue: 1, style: "points"),
            ], fromZero: false))
            html += self.html("chart-rtp-loss", title: "Luma PSNR per frame under loss beside the loss-free decode (rtp_loss_frames), dB",
                              gnuplot: (name: "rtp", data: ["rtp.dat"]),
                              note: "\(frozen) frozen frame\(frozen == 1 ? "" : "s") (red) and \(broken) broken (purple); each frame at its decode time with the PSNR of its display slot. The gnuplot picture draws packets by decode order and PSNR by display order.")
        }
        return html
    }
}
