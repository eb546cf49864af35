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
    /// and "n/a" for a value that is not finite.
    static func number(_ value: Double?, digits: Int = 2) -> String {
        guard let value else { return "" }
        guard value.isFinite else { return "n/a" }
        return String(format: "%.\(digits)f", value)
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
    """

    /// The inline script that sorts a `table.sortable` by the column whose header is clicked (numbers as numbers,
    /// empty cells last; a second click reverses).
    static let sortScript = """
    document.querySelectorAll('table.sortable').forEach(function (table) {
      table.querySelectorAll('th').forEach(function (th, column) {
        th.addEventListener('click', function () {
          var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
          var down = th.getAttribute('data-dir') !== 'up';
          table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
          th.setAttribute('data-dir', down ? 'up' : 'down');
          function key(row) { var t = row.cells[column] ? row.cells[column].textContent.trim() : ''; var n = parseFloat(t);
            return t === '' ? null : (isNaN(n) || !/^[-+0-9.eE]+$/.test(t) ? t : n); }
          rows.sort(function (a, b) { var x = key(a), y = key(b);
            if (x === null) return 1; if (y === null) return -1;
            var c = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
            return down ? c : -c; });
          rows.forEach(function (r) { body.appendChild(r); });
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

    /// A table: `headers` (plain text) and rows of cells already in HTML; `textColumns` are left-aligned.
    static func table(headers: [String], rows: [[String]], sortable: Bool = false, textColumns: Set<Int> = []) -> String {
        var html = "<div class=\"scroll\"><table\(sortable ? " class=\"sortable\"" : "")>\n<thead><tr>"
        for (i, h) in headers.enumerated() { html += "<th\(textColumns.contains(i) ? " class=\"text\"" : "")>\(escape(h))</th>" }
        html += "</tr></thead>\n<tbody>\n"
        for row in rows {
            html += "<tr>" + row.enumerated().map { "<td\(textColumns.contains($0.offset) ? " class=\"text\"" : "")>\($0.element)</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody></table></div>\n"
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
    static func plot(dir: String, name: String, data: [String], alt: String) -> String {
        var html = "<div class=\"plot\">\n"
        if let svg = inlineSVG(path: "\(dir)/\(name).svg") {
            html += svg
        } else {
            html += "<img src=\"\(escape(name)).png\" alt=\"\(escape(alt))\">\n"
        }
        let files = ["\(name).png", "\(name).svg", "\(name).gp"] + data
        html += "<div class=\"files\">files: " + files.map { "<a href=\"\(escape($0))\">\(escape($0))</a>" }.joined(separator: " · ")
        html += " (redraw with <code>gnuplot -c \(escape(name)).gp</code> in this folder)</div>\n</div>\n"
        return html
    }
}
