import Foundation

/// Finds a key given twice in one JSON object, which JSONSerialization (and JSONDecoder) accept silently, keeping the
/// last (RFC 8259 4: names "SHOULD be unique"; the behaviour of a duplicate is unpredictable across readers).
///
/// A small tokenizer over the document's bytes, run after JSONSerialization has accepted them (so the text is well
/// formed): it follows strings (with their backslash escapes), objects and arrays, and collects each object's keys.
/// A key is compared once decoded (by JSONSerialization, as a one-string document), so `"a"` and `"\u0061"` are the
/// same key, and as Swift compares strings (canonically equivalent spellings are one key, as in the parsed object).
enum JSONDuplicateKeys {
    /// - Parameters:
    ///   - data: the document, UTF-8 (UTF-16 and UTF-32, which JSONSerialization also reads, are converted first).
    ///   - file: the file's name, for the message.
    /// - Throws: `.usage` "FILE: key 'K' is given twice in PLACE" naming the first key found twice, and where
    ///   (the keys leading to its object, "the top-level object" for the outermost).
    static func check(_ data: Data, file: String) throws {
        let bytes = utf8Bytes(data)
        // One entry per open container: an object's keys so far, the key whose value is being read, and its place.
        struct Container {
            var isObject: Bool
            var keys: Set<String> = []
            var expectingKey: Bool
            var lastKey: String?
            var place: String
        }
        var stack: [Container] = []
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                while i < n && bytes[i] != UInt8(ascii: "\"") {
                    i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1
                }
                let end = min(i, n - 1)
                if var top = stack.last, top.isObject, top.expectingKey {
                    let token = Data(bytes[start...end])
                    let key = (try? JSONSerialization.jsonObject(with: token, options: .fragmentsAllowed)) as? String
                        ?? String(decoding: token.dropFirst().dropLast(), as: UTF8.self)
                    if !top.keys.insert(key).inserted {
                        throw LabError.usage("\(file): key '\(EncodeSettings.visible(key))' is given twice in \(top.place) (a JSON reader would keep only the last)")
                    }
                    top.expectingKey = false
                    top.lastKey = key
                    stack[stack.count - 1] = top
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let place: String
                if let top = stack.last {
                    if top.isObject, let key = top.lastKey {
                        place = top.place == "the top-level object" ? "'\(EncodeSettings.visible(key))'" : "\(top.place).'\(EncodeSettings.visible(key))'"
                    } else {
                        place = "an entry of \(top.place)"
                    }
                } else {
                    place = "the top-level object"
                }
                stack.append(Container(isObject: b == UInt8(ascii: "{"), expectingKey: b == UInt8(ascii: "{"), place: place))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
            case UInt8(ascii: ","):
                if let top = stack.last, top.isObject { stack[stack.count - 1].expectingKey = true }
            default:
                break
            }
            i += 1
        }
    }

    /// The document as UTF-8 bytes: as it is, or converted from UTF-16 or UTF-32 (told apart as RFC 4627 3 does, by
    /// the NUL bytes among the first four, or by a byte order mark).
    static func utf8Bytes(_ data: Data) -> [UInt8] {
        let head = Array(data.prefix(4))
        guard head.count >= 2, head.contains(0) || (head[0] == 0xFE && head[1] == 0xFF) || (head[0] == 0xFF && head[1] == 0xFE) else {
            return Array(data)
        }
        let encoding: String.Encoding
        if head.count == 4 && (head[0] == 0 && head[1] == 0 || head[2] == 0 && head[3] == 0) {
            encoding = head[0] == 0 && head[1] == 0 ? .utf32BigEndian : .utf32LittleEndian
        } else if head[0] == 0xFE || head[0] == 0xFF {
            encoding = .utf16
        } else {
            encoding = head[0] == 0 ? .utf16BigEndian : .utf16LittleEndian
        }
        guard let text = String(data: data, encoding: encoding) else { return Array(data) }
        return Array(text.utf8)
    }
}
