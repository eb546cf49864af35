import Foundation

/// The experiment file's `report` object as stored in each run's settings (`runs.settings` `$.report`, README,
/// "Experiment files"): added by the lab's writer after the settings JSON is made, so it never reaches the run key
/// (``RunSpec/keyMaterial`` hashes the settings as given to x264 and the lab, not this text).
extension Experiment.Report {
    /// The JSON object stored: `{"anchor": "..."}` (keys of nil values left out).
    var jsonObject: [String: Any] { anchor.map { ["anchor": $0] } ?? [:] }

    /// `settingsJSON` (a JSON object as the store writes it: compact, keys sorted) with `"report": {...}` inserted
    /// among its top-level keys in sorted place; every other byte unchanged. Unchanged when the text is not such an
    /// object or already has a top-level `report` key.
    func stored(in settingsJSON: String) -> String {
        let bytes = Array(settingsJSON.utf8)
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return settingsJSON }
        let member = Array("\"report\":\(JSON.string(jsonObject))".utf8)
        // Scan the top level: depth 1 outside strings; a key starts at a quote right after `{` or `,`.
        var depth = 0, inString = false, escaped = false, expectKey = false
        var keyStart = 0
        var insertAt: Int?
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 1 && expectKey {
                        expectKey = false
                        let key = String(decoding: bytes[(keyStart + 1)..<i], as: UTF8.self)
                        if key == "report" { return settingsJSON }
                        if key > "report" && insertAt == nil { insertAt = keyStart }
                    }
                }
            } else {
                switch b {
                case UInt8(ascii: "\""):
                    inString = true
                    if depth == 1 && expectKey { keyStart = i } else { expectKey = false }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    expectKey = depth == 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                case UInt8(ascii: ","):
                    expectKey = depth == 1
                default:
                    break
                }
            }
            i += 1
        }
        guard depth == 0, !inString else { return settingsJSON }
        var out = bytes
        if let at = insertAt {
            out.insert(contentsOf: member + [UInt8(ascii: ",")], at: at)
        } else {
            let end = out.count - 1
            out.insert(contentsOf: (bytes.count > 2 ? [UInt8(ascii: ",")] : []) + member, at: end)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The `report` object of a run's stored settings (`$.report`), nil when it has none.
    init?(settingsObject object: [String: Any]) {
        guard let report = object["report"] as? [String: Any] else { return nil }
        self.init(anchor: report["anchor"] as? String)
    }
}
