import Foundation

/// Runs picked by what a user typed (`--run`, `compare`'s operands): a run id (`12`, `run-12`), a run key or its first
/// 8 or more hex digits. The store's: every reader (analysis, plots, export, `check --db`) picks runs here.
extension LabStore {
    /// `runs.run_key` by run_id for the rows that have one (``Database/runKeys()``).
    func runKeys() throws -> [Int64: String] { try database.runKeys() }

    /// Opens the lab's database at `databasePath` (it must exist) and picks the runs `selectors` name (all without
    /// any), each of which must be done, for a command that reads their rows (`analyze`, `measure`).
    /// - Parameter notDone: what a run that is not done lacks, for the message ("nothing to analyse").
    /// - Throws: `.noInput` for a missing database or a selector naming no run; `.usage` for a malformed or ambiguous
    ///   selector; `.data` for a file that is not the lab's or a selected run that is not done; the database's errors.
    static func openDoneRuns(databasePath: String, selectors: [String], notDone: String) throws -> (store: LabStore, runs: [RunRow]) {
        try requireDatabaseFile(databasePath)
        try requireLabDatabase(path: databasePath)
        let store = try LabStore(path: databasePath)
        let chosen = try select(selectors, rows: try store.runs(), keys: try store.runKeys(), databasePath: databasePath)
        if let failed = chosen.first(where: { $0.status != "done" }) {
            throw LabError.data("\(databasePath): run \(failed.runID) is \(failed.status), it has \(notDone)")
        }
        return (store, chosen)
    }

    /// The runs `selectors` name, in the order named, each once; every done run when `selectors` is empty.
    /// - Parameter label: how usage errors name a selector: `--run` (the flag, the default) or `run` (`compare`'s
    ///   operands).
    /// - Throws: `.usage` for a malformed or ambiguous selector (or one naming repeats of a key); `.noInput` for one
    ///   naming no run.
    static func select(_ selectors: [String], rows: [RunRow], keys: [Int64: String], databasePath: String,
                       label: String = "--run") throws -> [RunRow] {
        if selectors.isEmpty { return rows.filter { $0.status == "done" } }
        let byID = Dictionary(rows.map { ($0.runID, $0) }, uniquingKeysWith: { a, _ in a })
        var chosen: [RunRow] = []
        for selector in selectors {
            let shown = Shown.text(selector)
            func isDigits(_ text: some StringProtocol) -> Bool { !text.isEmpty && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
            func isHex(_ text: some StringProtocol) -> Bool {
                !text.isEmpty && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) || ("A"..."F").contains($0) }
            }
            let digits = isDigits(selector)
            var id: Int64?
            var prefix: String?
            if selector.hasPrefix("run-") && isDigits(selector.dropFirst(4)) {
                id = Int64(selector.dropFirst(4))
            } else if digits && selector.count < 8 {
                id = Int64(selector)
            } else if isHex(selector) && selector.count >= 8 {
                guard selector.count <= 64 else {
                    throw LabError.usage("\(label) '\(shown)': a run key has 64 hex digits, this has \(selector.count)")
                }
                prefix = selector.lowercased()
                if digits { id = Int64(selector) }
            } else {
                throw LabError.usage("\(label) '\(shown)': expected a run id (12 or run-12) or a run key or its first 8 or more hex digits")
            }
            let keyed = prefix.map { p in rows.filter { keys[$0.runID]?.lowercased().hasPrefix(p) ?? false } } ?? []
            if keyed.count > 1, Set(keyed.compactMap { keys[$0.runID] }).count == 1 {
                throw LabError.usage("\(label) '\(shown)': runs \(keyed.map { String($0.runID) }.joined(separator: ", ")) are repeats of this key (an encode that is not repeatable, merged from several databases); give a run id (run-\(keyed[0].runID))")
            }
            if keyed.count > 1 {
                throw LabError.usage("\(label) '\(shown)': ambiguous, the keys of runs \(keyed.map { String($0.runID) }.joined(separator: ", ")) start with it; give more digits")
            }
            let numbered = id.flatMap { byID[$0] }
            if let k = keyed.first, let n = numbered, k.runID != n.runID {
                throw LabError.usage("\(label) '\(shown)': ambiguous, it is run \(n.runID)'s id and the start of run \(k.runID)'s key; give run-\(n.runID) or more key digits")
            }
            guard let run = keyed.first ?? numbered else {
                throw LabError.noInput("\(databasePath): no run \(prefix != nil ? "whose key starts with" : "with id") '\(shown)'")
            }
            if !chosen.contains(where: { $0.runID == run.runID }) { chosen.append(run) }
        }
        return chosen
    }
}
