import Foundation

/// Compact JSON text with sorted keys, for values stored in the database (settings, grid labels):
/// a plain value, outside Store so that the stages may write it too.
enum JSON {
    static func string(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
            preconditionFailure("value is not JSON-serialisable")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
