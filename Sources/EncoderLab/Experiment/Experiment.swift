import Foundation

/// An experiment file: JSON with `name`, `clips` (paths, relative to the file's folder unless absolute),
/// `base` (settings by x264 CLI name without dashes, plus the lab's `rc`) and `grid` (setting name to a list
/// of values; the runs are the cartesian product of the lists, clips outermost). A grid value may itself be
/// an object of settings, applied together (so one list can pair `rc` with the rate key each mode needs).
///
/// Values: strings and numbers are an option's argument; `true` is a flag without argument (`"no-cabac": true`)
/// or the value "true"; `false` is passed to x264 as "false".
public struct Experiment: Sendable {
    public var name: String
    public var clips: [String]
    /// The runs, in order: each a clip, its settings and a label naming the grid point.
    public var runs: [Run]

    public struct Run: Sendable {
        public var clip: String
        public var settings: EncodeSettings
        /// The grid point, e.g. "bitrate=500 rc=cbr" (for display).
        public var label: String
        /// The grid's axes and the value this run took on each, as canonical JSON text: `{"bframes": 3, "mode":
        /// {"qp": 22, "rc": "cqp"}}` (values exactly as in the experiment file); `{}` without a grid.
        public var axesJSON: String

        public init(clip: String, settings: EncodeSettings, label: String, axesJSON: String = "{}") {
            self.clip = clip; self.settings = settings; self.label = label; self.axesJSON = axesJSON
        }
    }

    /// Runs an experiment may expand to unless the caller raises the limit (`enclab run --max-runs N`): a grid
    /// of a million points took 711 MiB and 5 s to expand and would spend 40 minutes on checks before its first run.
    public static let defaultMaxRuns = 100_000

    /// Reads and expands an experiment file.
    /// - Parameter maxRuns: the most runs the file may expand to (clips x grid points).
    /// - Throws: `.noInput` for a missing file, `.data` for JSON that does not parse, `.usage` naming the key
    ///   for a missing or mistyped key, an unknown setting shape, an empty grid list, or more than `maxRuns` runs.
    public init(path: String, maxRuns: Int = Experiment.defaultMaxRuns) throws {
        guard FileManager.default.fileExists(atPath: path) else { throw LabError.noInput("\(path): no such experiment file") }
        guard let data = FileManager.default.contents(atPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw LabError.data("\(path): not valid JSON (\(error.localizedDescription))")
        }
        try self.init(object: object, file: path, baseDirectory: Paths.parent(path), maxRuns: maxRuns)
    }

    /// Expands an already parsed experiment object (see ``init(path:)``).
    public init(object: Any, file: String, baseDirectory: String, maxRuns: Int = Experiment.defaultMaxRuns) throws {
        guard let root = object as? [String: Any] else { throw LabError.usage("\(file): the experiment must be a JSON object") }
        let known: Set<String> = ["name", "clips", "base", "grid", "description"]
        if let extra = root.keys.sorted().first(where: { !known.contains($0) }) {
            throw LabError.usage("\(file): unknown key '\(extra)' (expected name, clips, base, grid, description)")
        }
        guard let name = root["name"] as? String, !name.isEmpty else {
            throw LabError.usage("\(file): key 'name' must be a non-empty string")
        }
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }), !name.hasPrefix(".") else {
            throw LabError.usage("\(file): key 'name' may hold only letters, digits, '.', '_' and '-' (it names files), got '\(name)'")
        }
        guard let clips = root["clips"] as? [String], !clips.isEmpty else {
            throw LabError.usage("\(file): key 'clips' must be a non-empty list of paths")
        }
        let base = root["base"] ?? [String: Any]()
        guard let baseObject = base as? [String: Any] else { throw LabError.usage("\(file): key 'base' must be an object of settings") }
        let grid = root["grid"] ?? [String: Any]()
        guard let gridObject = grid as? [String: Any] else { throw LabError.usage("\(file): key 'grid' must be an object of lists") }

        self.name = name
        self.clips = clips.map { Self.normalized($0.hasPrefix("/") || baseDirectory.isEmpty ? $0 : "\(baseDirectory)/\($0)") }

        var baseSettings = EncodeSettings()
        for key in baseObject.keys.sorted() {
            try Self.apply(key, baseObject[key]!, to: &baseSettings, file: file, context: "base")
        }
        // The number of runs, counted before any is built (a product that overflows is over any limit).
        var count = clips.count
        for key in gridObject.keys.sorted() {
            let n = (gridObject[key] as? [Any])?.count ?? 1
            let (product, overflow) = count.multipliedReportingOverflow(by: max(n, 1))
            count = overflow ? Int.max : product
        }
        if count > maxRuns {
            throw LabError.usage("\(file): expands to \(count == Int.max ? "more than \(Int.max)" : String(count)) runs (clips x grid points), over the limit of \(maxRuns); raise it with --max-runs N")
        }
        // Cartesian product of the grid lists, keys in sorted order.
        var points: [(EncodeSettings, [String], [String: Any])] = [(baseSettings, [], [:])]
        for key in gridObject.keys.sorted() {
            guard let values = gridObject[key] as? [Any], !values.isEmpty else {
                throw LabError.usage("\(file): grid key '\(key)' must be a non-empty list")
            }
            var next: [(EncodeSettings, [String], [String: Any])] = []
            for (settings, label, axes) in points {
                try Interruption.check()
                for value in values {
                    var s = settings
                    var l = label
                    var a = axes
                    a[key] = value
                    if let group = value as? [String: Any] {
                        for k in group.keys.sorted() {
                            try Self.apply(k, group[k]!, to: &s, file: file, context: "grid '\(key)'")
                            l.append("\(k)=\(Self.text(group[k]!) ?? "")")
                        }
                    } else {
                        try Self.apply(key, value, to: &s, file: file, context: "grid")
                        l.append("\(key)=\(Self.text(value) ?? "")")
                    }
                    next.append((s, l, a))
                }
            }
            points = next
        }
        var runs: [Run] = []
        for clip in self.clips {
            for (settings, label, axes) in points {
                runs.append(Run(clip: clip, settings: settings, label: label.joined(separator: " "), axesJSON: JSON.string(axes)))
            }
        }
        self.runs = runs
    }

    /// `path` with `.` components dropped and each `name/..` pair removed (relative paths stay relative), so
    /// `experiments/../fixtures/a.mp4` is recorded as `fixtures/a.mp4`.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    /// A JSON scalar as an option argument; nil for `true` (a flag).
    static func text(_ value: Any) -> String? {
        if let n = value as? NSNumber {
            if String(cString: n.objCType) == "c" { return n.boolValue ? nil : "false" }
            let d = n.doubleValue
            return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        }
        return value as? String
    }

    private static func apply(_ key: String, _ value: Any, to settings: inout EncodeSettings, file: String, context: String) throws {
        guard value is String || value is NSNumber else {
            throw LabError.usage("\(file): \(context) setting '\(key)' must be a string, number or boolean")
        }
        var v = text(value)
        let flag = EncodeSettings.takesNoArgument(key.replacingOccurrences(of: "_", with: "-"))
        if v == nil && !flag { v = "true" }
        if flag && v != nil {
            throw LabError.usage("\(file): \(context) setting '\(key)' is a flag without argument: give true, or leave it out")
        }
        do { try settings.set(key, v) } catch let error as LabError {
            throw LabError(error.kind, "\(file): \(context): \(error.message)")
        }
    }
}
