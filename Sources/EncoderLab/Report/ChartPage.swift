import Foundation

/// The interactive charts' place in a page and in the report's folder.
///
/// The report copies Debian's dygraphs 2.2.1 (package `libjs-dygraphs`: `dygraph.min.js`, `dygraph.min.css` and
/// `extras/synchronizer.js`, their source-map lines removed, and the package's copyright file) and the lab's own
/// `enclab-charts.js` and `enclab-charts.css` (``ChartScript``) into `assets/` at the report's top, so the folder
/// works offline and can be moved as a whole; pages link them by relative paths. Each chart group's data is JSON in
/// the page (``ChartGroup/json()``), read with `JSON.parse`: no data becomes code.
enum ChartPage {
    /// Where Debian installs dygraphs.
    static let dygraphsFolder = "/usr/share/javascript/dygraphs"
    static let copyrightFile = "/usr/share/doc/libjs-dygraphs/copyright"
    /// The assets folder's name at the report's top.
    static let assets = "assets"

    /// Writes `root/assets/` (see the type's documentation).
    /// - Throws: `.software` naming the package when dygraphs is not installed; `.cantCreate`/`.ioError` for the files.
    static func writeAssets(root: String) throws {
        let dir = "\(root)/\(assets)"
        try OutputFiles.makeDirectory(dir)
        for (source, name) in [("dygraph.min.js", "dygraph.min.js"), ("dygraph.min.css", "dygraph.min.css"),
                               ("extras/synchronizer.js", "synchronizer.js")] {
            let path = "\(dygraphsFolder)/\(source)"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw LabError.software("\(path): missing; the report's charts need dygraphs (install the Debian package libjs-dygraphs: apt-get install libjs-dygraphs)")
            }
            try OutputFiles.write(withoutSourceMap(String(decoding: data, as: UTF8.self)), to: "\(dir)/\(name)")
        }
        if let copyright = FileManager.default.contents(atPath: copyrightFile) {
            try OutputFiles.write([UInt8](copyright), to: "\(dir)/dygraphs-copyright.txt")
        }
        try OutputFiles.write(ChartScript.javaScript, to: "\(dir)/enclab-charts.js")
        try OutputFiles.write(ChartScript.style, to: "\(dir)/enclab-charts.css")
    }

    /// `text` without its source-map comment lines (`//# sourceMappingURL=...`, `/*# sourceMappingURL=... */`): the
    /// maps are not copied (the minified file's map is a file beside it; the synchronizer's is inline, 60 % of it).
    static func withoutSourceMap(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            let t = line.drop { $0 == " " }
            return !(t.hasPrefix("//# sourceMappingURL=") || t.hasPrefix("/*# sourceMappingURL="))
        }.joined(separator: "\n")
    }

    /// The HTML of one chart: its element (drawn by the script), its legend (the hovered frame's values), the gnuplot
    /// picture's PNG for a browser without scripts, and links to the gnuplot files beside the page (`name.png`,
    /// `.svg`, `.gp` and the data files; none when `gnuplot` is nil).
    static func chart(id: String, title: String, gnuplot: (name: String, data: [String])?, note: String? = nil) -> String {
        let e = HTML.escape
        var html = "<div class=\"chart-box\"><div class=\"chart-title\">\(e(title))</div>\n"
        html += "<div class=\"chart\" id=\"\(e(id))\"></div><div class=\"chart-legend\" id=\"\(e(id))-legend\"></div>\n"
        if let g = gnuplot {
            html += "<noscript><img src=\"\(e(g.name)).png\" alt=\"\(e(title))\"></noscript>\n"
            let files = ["\(g.name).png", "\(g.name).svg", "\(g.name).gp"] + g.data
            html += "<div class=\"files\">gnuplot files: " + files.map { "<a href=\"\(e($0))\">\(e($0))</a>" }.joined(separator: " · ")
            html += " (redraw with <code>gnuplot -c \(e(g.name)).gp</code> in this folder)</div>\n"
        }
        if let note { html += "<p class=\"note\">\(note)</p>\n" }
        return html + "</div>\n"
    }

    /// A gnuplot plot of a run page shown as its PNG (`<img>`, drawn later by the page's queue) with links to its
    /// files: the plots without an interactive chart (the keyframe timeline, the PTS/DTS steps). Not inlined as SVG:
    /// a run of 10,000 frames makes SVGs of megabytes (2.4 MB for the steps), more than the whole page may weigh.
    static func picture(name: String, data: [String], alt: String) -> String {
        let e = HTML.escape
        var html = "<div class=\"plot\">\n<img src=\"\(e(name)).png\" alt=\"\(e(alt))\" style=\"max-width: 100%\">\n"
        let files = ["\(name).png", "\(name).svg", "\(name).gp"] + data
        html += "<div class=\"files\">files: " + files.map { "<a href=\"\(e($0))\">\(e($0))</a>" }.joined(separator: " · ")
        html += " (redraw with <code>gnuplot -c \(e(name)).gp</code> in this folder)</div>\n</div>\n"
        return html
    }

    /// The line that says how to use the charts, and a reset button for the group `group`.
    static func help(group: String) -> String {
        "<p class=\"chart-help\">Charts: drag across to zoom in on time (every chart of this \(group == "run" ? "page" : "group") follows), shift-drag to pan, double-click or <button type=\"button\" class=\"chart-reset\" data-group=\"\(HTML.escape(group))\">reset zoom</button>; hover a point for that frame's stored values.</p>\n"
    }

    /// The one sentence saying where 0 s is on a group's time axes when a run's first PTS is not 0 (a stream whose
    /// PTS start at host uptime, `--pts-offset`): said once above the charts, as the gnuplot pictures say it in their
    /// titles (``ChartTime/title``), never in the tick labels. "" when every run starts at PTS 0.
    static func origin(_ origins: [String]) -> String {
        guard !origins.isEmpty else { return "" }
        return "<p class=\"chart-origin\">Times from the first PTS: \(origins.map(HTML.escape).joined(separator: "; ")).</p>\n"
    }

    /// A group's data block: `<script type="application/json">` with ``ChartGroup/json()``.
    static func dataBlock(_ group: ChartGroup, name: String) -> String {
        "<script type=\"application/json\" class=\"enclab-chart-data\" data-group=\"\(HTML.escape(name))\">\n\(group.json())\n</script>\n"
    }

    /// The stylesheet and scripts of the charts, for a page `depth` folders below the report's top.
    static func scripts(depth: Int) -> String {
        let up = String(repeating: "../", count: depth) + assets
        return """
        <link rel="stylesheet" href="\(up)/dygraph.min.css">
        <link rel="stylesheet" href="\(up)/enclab-charts.css">
        <script src="\(up)/dygraph.min.js"></script>
        <script src="\(up)/synchronizer.js"></script>
        <script src="\(up)/enclab-charts.js"></script>

        """
    }
}
