import Foundation
import Testing

/// The stages own their values (issue 18, item 2): no stage folder (Input, Timestamps, Encode, Verify, Analysis) names a
/// type the Store folder declares, Analysis names no Plot type, and only Encode touches libx264 (`CX264`). The source
/// files are read as text; comments and the text of string literals are left out (a comment may say where a value
/// goes), interpolations are code.
@Suite("stage boundaries: no Store type in a stage folder, no Plot type in Analysis, CX264 only in Encode")
struct StageBoundaryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let library = "\(root)/Sources/EncoderLab"
    static let stages = ["Input", "Timestamps", "Encode", "Verify", "Analysis"]

    /// The Swift files of a folder under `base`, by path relative to `base`.
    static func swiftFiles(_ folder: String, base: String = library) throws -> [String] {
        guard let e = FileManager.default.enumerator(atPath: "\(base)/\(folder)") else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { "\(folder)/\($0)" }.sorted()
    }

    /// The names of the types a folder declares at its top level (`struct`, `class`, `enum`, `protocol`, `actor`,
    /// `typealias`, whatever their access level).
    static func declaredTypes(_ folder: String) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: #"^(?:(?:public|internal|package|fileprivate|private|final)\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)"#,
                                              options: [.anchorsMatchLines])
        var names: Set<String> = []
        for file in try swiftFiles(folder) {
            let text = try String(contentsOfFile: "\(library)/\(file)", encoding: .utf8)
            for m in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert(String(text[Range(m.range(at: 1), in: text)!]))
            }
        }
        return names
    }

    /// Swift source with its comments removed and the text of its string literals blanked (interpolations kept):
    /// what the compiler reads as names.
    static func code(_ source: String) -> String {
        var out = ""
        let s = Array(source.unicodeScalars)
        var i = 0
        /// Open string literals, innermost last (multi-line or not, raw `#` count) and, per interpolation, its
        /// parenthesis depth.
        var strings: [(multiline: Bool, hashes: Int)] = []
        var parens: [Int] = []
        func at(_ k: Int, _ text: String) -> Bool {
            let t = Array(text.unicodeScalars)
            return k + t.count <= s.count && Array(s[k..<k + t.count]) == t
        }
        while i < s.count {
            if let top = strings.last, parens.count < strings.count {
                // Inside a string's text.
                let close = String(repeating: "\"", count: top.multiline ? 3 : 1) + String(repeating: "#", count: top.hashes)
                let interpolation = "\\" + String(repeating: "#", count: top.hashes) + "("
                if at(i, close) {
                    strings.removeLast(); out += " "; i += close.unicodeScalars.count
                } else if at(i, interpolation) {
                    parens.append(0); out += " "; i += interpolation.unicodeScalars.count
                } else if top.hashes == 0 && s[i] == "\\" {
                    i += 2
                } else {
                    if s[i] == "\n" { out += "\n" }
                    i += 1
                }
                continue
            }
            if at(i, "//") {
                while i < s.count && s[i] != "\n" { i += 1 }
            } else if at(i, "/*") {
                var depth = 0
                repeat {
                    if at(i, "/*") { depth += 1; i += 2 } else if at(i, "*/") { depth -= 1; i += 2 } else { i += 1 }
                } while depth > 0 && i < s.count
                out += " "
            } else if s[i] == "#" || s[i] == "\"" {
                var hashes = 0
                var k = i
                while k < s.count && s[k] == "#" { hashes += 1; k += 1 }
                if k < s.count && s[k] == "\"" {
                    let multiline = at(k, "\"\"\"")
                    strings.append((multiline, hashes))
                    out += " "
                    i = k + (multiline ? 3 : 1)
                } else {
                    out.unicodeScalars.append(s[i]); i += 1
                }
            } else {
                if !parens.isEmpty {
                    if s[i] == "(" { parens[parens.count - 1] += 1 }
                    if s[i] == ")" {
                        if parens[parens.count - 1] == 0 { parens.removeLast(); out += " "; i += 1; continue }
                        parens[parens.count - 1] -= 1
                    }
                }
                out.unicodeScalars.append(s[i]); i += 1
            }
        }
        return out
    }

    /// The names of `names` that `code` uses as whole words, by line: "FILE:LINE: NAME".
    static func uses(of names: Set<String>, in file: String, base: String = library) throws -> [String] {
        let text = code(try String(contentsOfFile: "\(base)/\(file)", encoding: .utf8))
        var found: [String] = []
        for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = line.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") })
            for w in words where names.contains(String(w)) { found.append("\(file):\(n + 1): \(w)") }
        }
        return found
    }

    @Test("the scanner sees names in code and interpolations, not in comments or string text")
    func scanner() {
        let sample = #"""
            let a: LabStore // LabStore
            /* LabStore /* nested */ LabStore */ let b = "LabStore \(Plots.x) \"LabStore" + #"LabStore \(no)"#
            let c = """
                LabStore \(RunPlotInput.y)
                """
            """#
        let words = Set(Self.code(sample).split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).map(String.init))
        #expect(words.isSuperset(of: ["a", "LabStore", "b", "Plots", "x", "c", "RunPlotInput", "y"]))
        #expect(!words.contains("no") && !words.contains("nested"))
        #expect(Self.code(sample).components(separatedBy: "LabStore").count - 1 == 1)
    }

    @Test("no stage folder names a Store type")
    func noStoreTypeInStages() throws {
        let store = try Self.declaredTypes("Store")
        // The folder is read: the store's own types are there.
        try #require(store.isSuperset(of: ["LabStore", "Database", "Row", "UserClipHashCache"]), "\(store.sorted())")
        var found: [String] = []
        for stage in Self.stages {
            for file in try Self.swiftFiles(stage) {
                found += try Self.uses(of: store, in: file)
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test("Analysis names no Plot type")
    func noPlotTypeInAnalysis() throws {
        let plot = try Self.declaredTypes("Plot")
        try #require(plot.isSuperset(of: ["Plots", "RunPlotInput", "PlotFromStore"]), "\(plot.sorted())")
        var found: [String] = []
        for file in try Self.swiftFiles("Analysis") {
            found += try Self.uses(of: plot, in: file)
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test("only Encode touches libx264: no CX264 in a Swift file of Sources outside Sources/EncoderLab/Encode")
    func cx264OnlyInEncode() throws {
        let sources = "\(Self.root)/Sources"
        var found: [String] = []
        var encodeUses = 0
        for target in try FileManager.default.contentsOfDirectory(atPath: sources).sorted() {
            for file in try Self.swiftFiles(target, base: sources) {
                let uses = try Self.uses(of: ["CX264"], in: file, base: sources)
                if file.hasPrefix("EncoderLab/Encode/") { encodeUses += uses.count } else { found += uses }
            }
        }
        // Encode does import it: the scan reads the files it should.
        #expect(encodeUses > 0)
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test("only OpenH264Session touches libopenh264: COpenH264 in no other Swift file of Sources")
    func openH264OnlyInItsSession() throws {
        let sources = "\(Self.root)/Sources"
        var found: [String] = []
        var sessionUses = 0
        for target in try FileManager.default.contentsOfDirectory(atPath: sources).sorted() {
            for file in try Self.swiftFiles(target, base: sources) {
                let uses = try Self.uses(of: ["COpenH264"], in: file, base: sources)
                if file == "EncoderLab/Encode/OpenH264Session.swift" { sessionUses += uses.count } else { found += uses }
            }
        }
        #expect(sessionUses > 0)
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
