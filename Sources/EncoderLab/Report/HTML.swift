import Foundation

/// The report's HTML: escaping, the page frame (inline style and the one small inline script that sorts tables),
/// and gnuplot's SVG made fit to inline. Nothing is loaded from outside the report's folder.
enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` written as character references, so that any text from the database or
    /// any file name is shown as text, in an element or in a quoted attribute value.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A number as the tables show it: up to `digits` decimals, trailing zeros kept (so columns line up), "" for nil,
    /// and "n/a" for a value that is not finite. The text of C's `%.Nf` (``fixed(_:digits:)``).
    static func number(_ value: Double?, digits: Int = 2) -> String {
        guard let value else { return "" }
        guard value.isFinite else { return "n/a" }
        return fixed(value, digits: digits)
    }

    /// `value` (finite) as C's `printf("%.*f", digits, value)` writes it: the exact binary value rounded to `digits`
    /// decimals, ties to even, a minus sign for any negative value (also one that rounds to zero, and -0).
    /// `String(format:)` goes through CFString and costs ten times as much (a runs table has a cell per run and
    /// metric): for |value| < 2^53 and `digits` 0...3 the rounding is done here in integers (the value is m x 2^e
    /// exactly, so m x 10^digits fits 63 bits); anything else goes to `vsnprintf`.
    static func fixed(_ value: Double, digits: Int) -> String {
        precondition(value.isFinite && (0...17).contains(digits), "a finite value, digits 0...17")
        let magnitude = value.magnitude
        guard digits <= 3, magnitude < 9007199254740992 else {
            return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 352) { buffer in
                // 352 bytes hold any double in %.17f (at most 309 digits before the point).
                let written = withVaList([Int32(digits), value]) { vsnprintf(buffer.baseAddress!, buffer.count, "%.*f", $0) }
                precondition(written > 0 && Int(written) < buffer.count, "vsnprintf wrote \(written) bytes")
                return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: Int(written)), as: UTF8.self)
            }
        }
        // magnitude = m x 2^e exactly.
        var m: UInt64 = magnitude.significandBitPattern, e: Int
        if magnitude.isSubnormal || magnitude == 0 { e = -1074 } else { m |= 1 << 52; e = Int(magnitude.exponent) - 52 }
        let scale: UInt64 = [1, 10, 100, 1000][digits]
        var q: UInt64
        if e >= 0 {
            q = (m << UInt64(e)) * scale  // an integer below 2^53, times at most 1000
        } else {
            let n = m * scale  // below 2^63
            let shift = -e
            if shift >= 64 {
                q = 0  // n / 2^shift < 2^63 / 2^64: below one half
            } else {
                q = n >> UInt64(shift)
                let rest = n & ((1 << UInt64(shift)) - 1), half: UInt64 = 1 << UInt64(shift - 1)
                if rest > half || (rest == half && q & 1 == 1) { q += 1 }
            }
        }
        var text = String(q)
        if digits > 0 {
            if text.count <= digits { text = String(repeating: "0", count: digits + 1 - text.count) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -digits))
        }
        return value.sign == .minus ? "-" + text : text
    }

    /// The style of every page: readable at 1280 px, no web fonts.
    static let style = """
    body { font-family: sans-serif; margin: 1.5em auto; max-width: 1220px; color: #222; line-height: 1.4; }
    h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
    table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
    th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; white-space: nowrap; }
    th { background: #f0f0f0; position: sticky; top: 0; }
    table.sortable th { cursor: pointer; } table.sortable th:hover { background: #e0e8f0; }
    td.text, th.text { text-align: left; white-space: normal; }
    .note { color: #555; font-size: 0.9em; } .missing { color: #b00; } .refused { color: #8a5a00; white-space: normal; text-align: left; }
    .plot svg { width: 100%; height: auto; max-width: 1200px; } .plot { margin: 0.5em 0 1em 0; }
    .files { font-size: 0.8em; color: #555; } .pictures img { image-rendering: pixelated; border: 1px solid #ccc; margin-right: 8px; }
    .pictures figure { display: inline-block; margin: 0 12px 0 0; } .scroll { overflow-x: auto; }
    .unverified { color: #8a5a00; background: #fff1cc; border: 1px solid #e0c060; border-radius: 3px; padding: 0 4px; font-size: 0.85em; white-space: nowrap; }
    p.unverified-note { color: #6b4700; background: #fff8e1; border-left: 4px solid #e0a800; padding: 4px 8px; }
    .warnings { background: #fff8e1; border-left: 4px solid #e0a800; padding: 4px 12px; margin: 0.8em 0; }
    .warnings li { margin: 0.3em 0; } .warnings h2 { border: none; margin-top: 0.4em; }
    .pass { color: #fff; background: #2e7d32; border-radius: 3px; padding: 0 5px; white-space: nowrap; }
    .fail { color: #fff; background: #c62828; border-radius: 3px; padding: 0 5px; white-space: nowrap; }
    .untested { color: #444; background: #e0e0e0; border-radius: 3px; padding: 0 5px; white-space: nowrap; }
    .label { color: #555; } .label .flag { white-space: nowrap; } details.chooser { margin: 0.4em 0; font-size: 0.9em; }
    details.chooser label { display: inline-block; margin: 0 10px 2px 0; white-space: nowrap; }
    table.metrics td.name { text-align: left; color: #444; } table.metrics td.value { min-width: 5em; }
    table.metrics td.gap { border: none; width: 1.2em; }
    p.chart-origin { font-size: 0.9em; background: #eef4fb; border-left: 4px solid #1f77b4; padding: 2px 8px; }
    table#runs th { white-space: normal; vertical-align: bottom; } table#runs td.text:first-child { min-width: 11em; max-width: 20em; }
    """

    /// The inline script of every page: it sorts a `table.sortable` by the column whose header is clicked (numbers as
    /// numbers, a cell's `data-v` as its number when it has one, empty cells last; a second click reverses), and runs
    /// the column choosers (``chooser(table:headers:first:)``).
    static let sortScript = """
    document.querySelectorAll('table.sortable').forEach(function (table) {
      table.querySelectorAll('th').forEach(function (th, column) {
        th.addEventListener('click', function () {
          var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
          var down = th.getAttribute('data-dir') !== 'up';
          table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
          th.setAttribute('data-dir', down ? 'up' : 'down');
          function key(row) { var c = row.cells[column], v = c ? c.querySelector('[data-v]') : null;
            if (v) { var x = parseFloat(v.getAttribute('data-v')); return isNaN(x) ? null : x; }
            var t = c ? c.textContent.trim() : ''; var n = parseFloat(t);
            return t === '' ? null : (isNaN(n) || !/^[-+0-9.eE]+$/.test(t) ? t : n); }
          rows.sort(function (a, b) { var x = key(a), y = key(b);
            if (x === null) return 1; if (y === null) return -1;
            var c = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
            return down ? c : -c; });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
    // The column chooser: each checkbox shows or hides its column of the table it names.
    document.querySelectorAll('details.chooser').forEach(function (details) {
      var table = document.getElementById(details.getAttribute('data-table'));
      if (!table) return;
      function show(column, on) {
        Array.prototype.forEach.call(table.rows, function (row) { if (row.cells[column]) row.cells[column].hidden = !on; });
      }
      var boxes = details.querySelectorAll('input[data-col]');
      boxes.forEach(function (box) {
        box.addEventListener('change', function () { show(parseInt(box.getAttribute('data-col'), 10), box.checked); });
      });
      details.querySelectorAll('button[data-all]').forEach(function (button) {
        button.addEventListener('click', function () {
          var on = button.getAttribute('data-all') === '1';
          boxes.forEach(function (box) { box.checked = on; show(parseInt(box.getAttribute('data-col'), 10), on); });
        });
      });
    });
    """

    /// A whole page: `title` (plain text, escaped here) and `body` (HTML built by the report, every piece of user text
    /// in it already escaped).
    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        \(style)
        </style>
        </head>
        <body>
        \(body)
        <script>
        \(sortScript)
        </script>
        </body>
        </html>

        """
    }

    /// A table: `headers` (plain text; all empty: no header row) and rows of cells already in HTML; `textColumns` are
    /// left-aligned.
    /// - Parameter id: the table's `id` (a fixed word of the report), for a column chooser; nil: none.
    /// - Parameter optional: columns hidden at first (`hidden`), shown by the chooser (``chooser(table:headers:first:)``).
    static func table(headers: [String], rows: [[String]], sortable: Bool = false, textColumns: Set<Int> = [], id: String? = nil,
                      optional: Set<Int> = []) -> String {
        func attributes(_ i: Int) -> String { (textColumns.contains(i) ? " class=\"text\"" : "") + (optional.contains(i) ? " hidden" : "") }
        var html = "<div class=\"scroll\"><table\(id.map { " id=\"\(escape($0))\"" } ?? "")\(sortable ? " class=\"sortable\"" : "")>\n"
        // A table whose headers are all empty (name/value facts) has no header row: an empty grey row says nothing.
        if headers.contains(where: { !$0.isEmpty }) {
            html += "<thead><tr>"
            for (i, h) in headers.enumerated() { html += "<th\(attributes(i))>\(escape(h))</th>" }
            html += "</tr></thead>\n"
        }
        html += "<tbody>\n"
        for row in rows {
            html += "<tr>" + row.enumerated().map { "<td\(attributes($0.offset))>\($0.element)</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody></table></div>\n"
    }

    /// The column chooser of table `table`: a `<details>` with one checkbox per optional column (`headers`, plain
    /// text, the table's columns `first`, `first + 1`, ...), and buttons that show all or none of them.
    static func chooser(table: String, headers: [String], first: Int) -> String {
        guard !headers.isEmpty else { return "" }
        var html = "<details class=\"chooser\" data-table=\"\(escape(table))\"><summary>More columns (\(headers.count)): choose which to show</summary>\n"
        html += "<button type=\"button\" data-all=\"1\">all</button> <button type=\"button\" data-all=\"0\">none</button><br>\n"
        for (k, h) in headers.enumerated() {
            html += "<label><input type=\"checkbox\" data-col=\"\(first + k)\"> \(escape(h))</label>\n"
        }
        return html + "</details>\n"
    }

    /// gnuplot's SVG file ready to be placed inside a page: from its `<svg` on (the XML declaration and comments before
    /// it dropped). gnuplot's svg terminal writes text with `<` and `&` escaped and, without `mouse`, no script; a file
    /// that holds `<script`, `javascript:` or `<foreignObject` anyway is not inlined (nil: the page shows the PNG).
    static func inlineSVG(path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let start = text.range(of: "<svg") else { return nil }
        let svg = String(text[start.lowerBound...])
        let lower = svg.lowercased()
        if lower.contains("<script") || lower.contains("javascript:") || lower.contains("<foreignobject") { return nil }
        return svg
    }

    /// A plot of the report: the SVG inline (or the PNG when it cannot be inlined), then links to its PNG, SVG, script
    /// and data file, which lie in the same folder as the page (`name.*`, fixed names chosen by the report).
    /// - Parameter deferred: true when the plot is not drawn yet (queued, ``PlotQueue``): the picture is then a
    ///   placeholder, `<!--enclab-svg:NAME-->`, the PNG's `<img>`, `<!--/enclab-svg-->`, that ``fillPlots(_:dir:)``
    ///   replaces by the SVG once drawn.
    static func plot(dir: String, name: String, data: [String], alt: String, deferred: Bool = false) -> String {
        var html = "<div class=\"plot\">\n"
        let image = "<img src=\"\(escape(name)).png\" alt=\"\(escape(alt))\">\n"
        if deferred {
            precondition(name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0)) },
                         "a plot's name is the report's own word")
            html += "\(placeholderStart)\(name)-->\(image)\(placeholderEnd)"
        } else if let svg = inlineSVG(path: "\(dir)/\(name).svg") {
            html += svg
        } else {
            html += image
        }
        let files = ["\(name).png", "\(name).svg", "\(name).gp"] + data
        html += "<div class=\"files\">files: " + files.map { "<a href=\"\(escape($0))\">\(escape($0))</a>" }.joined(separator: " · ")
        html += " (redraw with <code>gnuplot -c \(escape(name)).gp</code> in this folder)</div>\n</div>\n"
        return html
    }

    static let placeholderStart = "<!--enclab-svg:", placeholderEnd = "<!--/enclab-svg-->"

    /// `html` with each deferred plot's placeholder (``plot(dir:name:data:alt:deferred:)``) replaced by its SVG from
    /// `dir` (``inlineSVG(path:)``), or by its PNG's `<img>` when the SVG cannot be inlined. Text from the database
    /// cannot hold a placeholder: it is escaped (``escape(_:)``), so it never holds `<`.
    static func fillPlots(_ html: String, dir: String) -> String {
        let bytes = Array(html.utf8)
        let start = Array(placeholderStart.utf8), end = Array(placeholderEnd.utf8), close = Array("-->".utf8)
        /// The index of `pattern` in `bytes` from `from`, or nil (a byte scan: Foundation's `range(of:)` is slow on a
        /// page of megabytes).
        func find(_ pattern: [UInt8], from: Int) -> Int? {
            guard pattern.count <= bytes.count else { return nil }
            var i = from
            while i <= bytes.count - pattern.count {
                if bytes[i] == pattern[0] && bytes[i..<(i + pattern.count)].elementsEqual(pattern) { return i }
                i += 1
            }
            return nil
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var at = 0
        while let s = find(start, from: at) {
            guard let nameEnd = find(close, from: s + start.count), let e = find(end, from: nameEnd) else { break }
            out += bytes[at..<s]
            let name = String(decoding: bytes[(s + start.count)..<nameEnd], as: UTF8.self)
            if let svg = inlineSVG(path: "\(dir)/\(name).svg") { out += svg.utf8 } else { out += bytes[(nameEnd + close.count)..<e] }
            at = e + end.count
        }
        out += bytes[at...]
        return String(decoding: out, as: UTF8.self)
    }
}
