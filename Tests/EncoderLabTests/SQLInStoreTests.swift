import Foundation
import Testing

/// Issue 18, "All SQL in Store": no SQL text and no `CSQLite3` in the library's sources outside `Store/`.
@Suite("Source layout: SQL only in Store")
struct SQLInStoreTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/EncoderLab").path

    /// A line of code (comments left out) that holds SQL: a statement's first words in a string, a PRAGMA, or an
    /// import of the SQLite module.
    static func holdsSQL(_ line: Substring) -> Bool {
        let code = line.trimmingCharacters(in: .whitespaces)
        if code.hasPrefix("//") { return false }
        let patterns = [#""\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|VACUUM|BEGIN|COMMIT|ROLLBACK)\b"#,
                        #"^\s*(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|UNIQUE))\b"#, #"\bCSQLite3\b"#]
        return patterns.contains { code.range(of: $0, options: .regularExpression) != nil }
    }

    @Test("the checker finds SQL where it is (Store's own files hold some) and not in comments")
    func checkerWorks() throws {
        #expect(Self.holdsSQL(#"        try db.rows("SELECT run_id FROM runs")"#))
        #expect(Self.holdsSQL("            SELECT coded_index, type FROM frames WHERE run_id = ?"))
        #expect(Self.holdsSQL("internal import CSQLite3"))
        #expect(!Self.holdsSQL("    /// Reads a `SELECT * FROM runs` row by column name."))
        #expect(!Self.holdsSQL(#"        throw LabError.data("run \(id): no frames are selected")"#))
        let store = try String(contentsOfFile: Self.library + "/Store/SQLite.swift", encoding: .utf8)
        #expect(store.split(separator: "\n").contains(where: Self.holdsSQL))
    }

    @Test("no file outside Store holds SQL text or imports CSQLite3")
    func noSQLOutsideStore() throws {
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: Self.library)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50)
        for file in files.sorted() where !file.hasPrefix("Store/") {
            let text = try String(contentsOfFile: Self.library + "/" + file, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where Self.holdsSQL(line) {
                found.append("\(file):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found == [])
    }
}
