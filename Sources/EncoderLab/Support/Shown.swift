/// User text shown on one line, in messages and plots alike.
public enum Shown {
    /// The longest text shown whole, in Unicode scalars.
    public static let textLimit = 500

    /// User text as a message or a plot shows it, on one line: control characters are written as escapes (`\n`, `\r`, `\t`,
    /// else `\u{1b}`), and text longer than `limit` Unicode scalars is cut to `limit`, the last being "…".
    /// The plots' terminals are `noenhanced`, so every other character (`_`, `^`, `@`, `{`) is drawn as itself.
    public static func text(_ text: String, limit: Int = textLimit) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": out.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": out.append(contentsOf: #"\t"#.unicodeScalars)
            case _ where scalar.properties.generalCategory == .control:
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            default: out.append(scalar)
            }
        }
        if out.count > limit {
            out = String.UnicodeScalarView(out.prefix(max(0, limit - 1)))
            out.append("…")
        }
        return String(out)
    }
}
