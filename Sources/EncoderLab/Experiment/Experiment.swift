import Foundation

/// An experiment file: JSON with `name`, `clips` (paths, relative to the file's folder unless absolute; so is a
/// `tcfile-in` setting's),
/// `base` (settings by x264 CLI name without dashes, plus the lab's `rc`) and `grid` (setting name to a list
/// of values; the runs are the cartesian product of the lists, clips outermost). A grid value may itself be
/// an object of settings, applied together (so one list can pair `rc` with the rate key each mode needs).
///
/// Values: strings and numbers are an option's argument; `true` is a flag without argument (`"no-cabac": true`)
/// or the value "true"; `false` is passed to x264 as "false". VideoToolbox's properties are keys too, in Apple's
/// names (`"MaxKeyFrameIntervalDuration": 3.5`, `"kVTCompressionPropertyKey_AllowFrameReordering": false`), with
/// `"vt-compat": true`; a DataRateLimits value is a list of `[bytes, seconds]` pairs (`[[250000, 1], [50000, 0.1]]`;
/// in a grid, a list of such lists).
///
/// An optional `report` object holds what `enclab report` uses for this experiment unless its command line says
/// otherwise: `{"anchor": "CONFIG"}`, the BD-rate anchor configuration as the report names it (``Report``).
public struct Experiment: Sendable {
    public var name: String
    /// The file's `metrics` (`--metrics` over it): what libvmaf scores in every run; empty without the key.
    public var metrics: [QualityMetric] = []
    public var clips: [String]
    /// The file's `report` object; nil without one. Stored in each run's settings (`runs.settings` `$.report`),
    /// never in its key.
    public var report: Report?

    /// An experiment file's `report` object.
    public struct Report: Sendable, Equatable {
        /// `report.anchor`: the configuration the BD-rate tables compare against ("crf", "abr bframes=0"); checked
        /// against the experiment's configurations when the report is made (`enclab report --anchor` wins over it).
        public var anchor: String?

        public init(anchor: String? = nil) { self.anchor = anchor }
    }
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

    /// Runs an experiment may expand to unless the caller raises the limit (`enclab run --max-runs N`): a grid of a
    /// million points costs memory and minutes of checks before its first run (results/experiment-expansion.md).
    public static let defaultMaxRuns = 100_000

    /// Grid axes (keys) an experiment may have: each run carries a setting per axis, so a grid of 200,000 keys
    /// would be checked and stored 200,000 settings at a time.
    public static let maxGridAxes = 1_000

    /// Reads and expands an experiment file.
    /// - Parameter maxRuns: the most runs the file may expand to (clips x grid points).
    /// - Throws: `.noInput` for a missing file, `.data` for JSON that does not parse, `.usage` naming the key
    ///   for a missing or mistyped key, an unknown setting shape, an empty grid list, a string holding a NUL
    ///   character (a clip, a setting name or value, a grid axis), more than ``maxGridAxes`` grid keys, or more
    ///   than `maxRuns` runs.
    public init(path: String, maxRuns: Int = Experiment.defaultMaxRuns) throws {
        guard FileManager.default.fileExists(atPath: path) else { throw LabError.noInput("\(path): no such experiment file") }
        guard let data = FileManager.default.contents(atPath: path) else { throw LabError.noInput("\(path): cannot be read") }
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data) } catch {
            throw LabError.data("\(path): not valid JSON (\(error.localizedDescription))")
        }
        // JSONSerialization keeps the last of two equal keys without a word: found here, over the file's own bytes.
        try JSONDuplicateKeys.check(data, file: path)
        try self.init(object: object, file: path, baseDirectory: Paths.parent(path), maxRuns: maxRuns)
    }

    /// Expands an already parsed experiment object (see ``init(path:)``).
    public init(object: Any, file: String, baseDirectory: String, maxRuns: Int = Experiment.defaultMaxRuns) throws {
        guard let root = object as? [String: Any] else { throw LabError.usage("\(file): the experiment must be a JSON object") }
        let known: Set<String> = ["name", "clips", "base", "grid", "description", "report", "metrics"]
        if let extra = root.keys.sorted().first(where: { !known.contains($0) }) {
            throw LabError.usage("\(file): unknown key '\(extra)' (expected name, clips, base, grid, description, report, metrics)")
        }
        if let value = root["metrics"] {
            // A comma-separated string or a list of names; what every run measures, never part of a run key.
            let text = (value as? String) ?? (value as? [String])?.joined(separator: ",")
            guard let text, !text.isEmpty else {
                throw LabError.usage("\(file): key 'metrics' must be a list of metric names or a comma-separated string (\"vmaf,psnr-hvs\")")
            }
            metrics = try QualityMetric.list(text, flag: "\(file): key 'metrics'")
        }
        if let value = root["report"] {
            guard let object = value as? [String: Any] else { throw LabError.usage("\(file): key 'report' must be an object ({\"anchor\": \"CONFIG\"})") }
            if let extra = object.keys.sorted().first(where: { $0 != "anchor" }) {
                throw LabError.usage("\(file): key 'report': unknown key '\(EncodeSettings.visible(extra))' (expected anchor)")
            }
            guard let anchor = object["anchor"] as? String, !anchor.isEmpty, !anchor.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw LabError.usage("\(file): key 'report.anchor' must be a configuration name, a non-empty string without control characters (\"crf\", \"abr bframes=0\")")
            }
            report = Report(anchor: anchor)
        }
        if let description = root["description"], !(description is String) {
            throw LabError.usage("\(file): key 'description' must be a string, got \(Self.jsonKind(description))")
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
        if gridObject.count > Self.maxGridAxes {
            throw LabError.usage("\(file): key 'grid' has \(gridObject.count) keys, over the limit of \(Self.maxGridAxes) axes")
        }
        if let k = clips.firstIndex(where: { $0.isEmpty }) {
            throw LabError.usage("\(file): key 'clips': path \(k + 1) is empty (\"\"), not a clip")
        }
        // C and the file system stop a string at its first NUL: "a.y4m\u0000.mp4" would read a.y4m.
        if let k = clips.firstIndex(where: { $0.utf8.contains(0) }) {
            throw LabError.usage("\(file): key 'clips': path \(k + 1) '\(EncodeSettings.visible(clips[k]))' holds a NUL character")
        }
        if let axis = gridObject.keys.sorted().first(where: { $0.utf8.contains(0) }) {
            throw LabError.usage("\(file): key 'grid': axis '\(EncodeSettings.visible(axis))' holds a NUL character")
        }

        self.name = name
        self.clips = clips.map { Paths.normalized($0.hasPrefix("/") || baseDirectory.isEmpty ? $0 : "\(baseDirectory)/\($0)") }

        var baseSettings = EncodeSettings()
        try Self.checkDistinctProperties(Array(baseObject.keys), file: file, context: "base")
        try Self.checkDistinctProperties(Array(gridObject.keys), file: file, context: "grid")
        for value in gridObject.values {
            for entry in value as? [Any] ?? [] {
                if let group = entry as? [String: Any] { try Self.checkDistinctProperties(Array(group.keys), file: file, context: "grid") }
            }
        }
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
        // Cartesian product of the grid lists, keys in sorted order, the last key varying fastest. Each grid value
        // is checked once (in key order, on its own), then each point is built once from the base: expansion
        // costs keys x points, with nothing copied per key per point.
        let keys = gridObject.keys.sorted()
        var lists: [[Any]] = []
        var choices: [[(steps: [Step], label: [String])]] = []
        lists.reserveCapacity(keys.count)
        choices.reserveCapacity(keys.count)
        for key in keys {
            guard let values = gridObject[key] as? [Any], !values.isEmpty else {
                throw LabError.usage("\(file): grid key '\(key)' must be a non-empty list")
            }
            lists.append(values)
            var options: [(steps: [Step], label: [String])] = []
            for value in values {
                var steps: [Step] = []
                var label: [String] = []
                if let group = value as? [String: Any] {
                    for k in group.keys.sorted() {
                        steps.append(try Self.step(k, group[k]!, file: file, context: "grid '\(key)'"))
                        label.append(Self.labelWord(k, group[k]!))
                    }
                } else {
                    steps.append(try Self.step(key, value, file: file, context: "grid"))
                    label.append(Self.labelWord(key, value))
                }
                // Without the base's frames and seek: their sum is checked at each point, with the point's own.
                var scratch = baseSettings
                (scratch.frames, scratch.seek) = (nil, nil)
                for step in steps { try step.apply(to: &scratch, file: file) }
                options.append((steps, label))
            }
            choices.append(options)
        }
        var pointCount = 1
        for list in lists {
            let (product, overflow) = pointCount.multipliedReportingOverflow(by: list.count)
            guard !overflow else { throw LabError.usage("\(file): the grid has more than \(Int.max) points") }
            pointCount = product
        }
        var points: [(settings: EncodeSettings, label: String, axesJSON: String)] = []
        points.reserveCapacity(pointCount)
        var choice = [Int](repeating: 0, count: keys.count)
        for _ in 0..<pointCount {
            try Interruption.check()
            var settings = baseSettings
            settings.options.reserveCapacity(baseSettings.options.count + keys.count)
            var label: [String] = []
            label.reserveCapacity(keys.count)
            var axes: [String: Any] = [:]
            axes.reserveCapacity(keys.count)
            for (i, key) in keys.enumerated() {
                axes[key] = lists[i][choice[i]]
                let chosen = choices[i][choice[i]]
                for step in chosen.steps { try step.apply(to: &settings, file: file) }
                label.append(contentsOf: chosen.label)
            }
            points.append((settings, label.joined(separator: " "), JSON.string(axes)))
            // The next point: an odometer over the lists, last key fastest.
            var i = keys.count - 1
            while i >= 0 {
                choice[i] += 1
                if choice[i] < lists[i].count { break }
                choice[i] = 0
                i -= 1
            }
        }
        var runs: [Run] = []
        runs.reserveCapacity(self.clips.count * points.count)
        for clip in self.clips {
            for point in points {
                var settings = point.settings
                // A timecode file, like a clip, is named relative to the experiment file's folder.
                if let t = settings.timestamps.tcfile, !t.hasPrefix("/"), !baseDirectory.isEmpty {
                    settings.timestamps.tcfile = Paths.normalized("\(baseDirectory)/\(t)")
                }
                runs.append(Run(clip: clip, settings: settings, label: point.label, axesJSON: point.axesJSON))
            }
        }
        self.runs = runs
    }

    /// Refuses two keys of one object that name the same VideoToolbox property in different spellings
    /// (`AverageBitRate` and `kVTCompressionPropertyKey_AverageBitRate`): one would silently win.
    /// - Throws: `.usage` naming the file, the place and both keys.
    static func checkDistinctProperties(_ keys: [String], file: String, context: String) throws {
        var seen: [String: String] = [:]
        for key in keys.sorted() where VideoToolboxSettings.isPropertyKey(key) {
            guard let property = try? VideoToolboxSettings.property(named: key).rawValue else { continue }
            if let other = seen[property] {
                throw LabError.usage("\(file): \(context): '\(other)' and '\(key)' both give the VideoToolbox property \(property); give it once")
            }
            seen[property] = key
        }
    }

    /// What a parsed JSON value is, for messages: "a number", "a boolean", "a list", "an object", "null", "a string".
    static func jsonKind(_ value: Any) -> String {
        if value is NSNull { return "null" }
        if value is String { return "a string" }
        if value is [Any] { return "a list" }
        if value is [String: Any] { return "an object" }
        if let n = value as? NSNumber { return String(cString: n.objCType) == "c" ? "a boolean (\(n.boolValue))" : "a number (\(n))" }
        return "\(type(of: value))"
    }

    /// A grid point's word in a run's label: `key=value`, or the key alone for a flag given `true`
    /// (`pts-clamp`, `no-cabac`).
    static func labelWord(_ key: String, _ value: Any) -> String {
        if value is [Any], let flat = try? VideoToolboxSettings.dataRateLimitsText(value) { return "\(key)=\(flat)" }
        return text(value).map { "\(key)=\($0)" } ?? key
    }

    /// A JSON scalar as an option argument; nil for `true` (a flag).
    static func text(_ value: Any) -> String? {
        if let n = value as? NSNumber {
            let type = String(cString: n.objCType)
            if type == "c" { return n.boolValue ? nil : "false" }
            // A JSON integer is kept exactly (JSONSerialization reads one that fits 64 bits as an integer).
            if type == "q" || type == "l" || type == "i" || type == "s" { return String(n.int64Value) }
            if type == "Q" || type == "L" || type == "I" || type == "S" { return String(n.uint64Value) }
            let d = n.doubleValue
            return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        }
        return value as? String
    }

    /// One setting of an experiment, its value checked and turned into an option argument (nil for a flag).
    struct Step {
        var name: String
        var argument: String?
        /// Where the setting is, for messages: "base", "grid", "grid 'mode'".
        var context: String

        /// - Throws: the `.usage` of ``EncodeSettings/set(_:_:)``, prefixed with the file and context.
        func apply(to settings: inout EncodeSettings, file: String) throws {
            do { try settings.set(name, argument) } catch let error as LabError {
                throw LabError(error.kind, "\(file): \(context): \(error.message)")
            }
        }
    }

    /// - Throws: `.usage` naming the setting for a value that is not a string, number or boolean, or a value
    ///   other than `true` for a flag without argument (`false` too for the lab's switches `pts-rebase`,
    ///   `pts-clamp`).
    private static func step(_ key: String, _ value: Any, file: String, context: String) throws -> Step {
        // DataRateLimits as a list of [bytes, seconds] pairs: the command line's flat text.
        if value is [Any], VideoToolboxSettings.isPropertyKey(key),
           (try? VideoToolboxSettings.property(named: key)) == .dataRateLimits {
            do {
                return Step(name: key, argument: try VideoToolboxSettings.dataRateLimitsText(value), context: context)
            } catch let e as LabError {
                throw LabError(e.kind, "\(file): \(context) setting '\(key)': \(e.message)")
            }
        }
        guard value is String || value is NSNumber else {
            throw LabError.usage("\(file): \(context) setting '\(key)' must be a string, number or boolean")
        }
        var v = text(value)
        let name = key.replacingOccurrences(of: "_", with: "-")
        let flag = EncodeSettings.takesNoArgument(name)
        if v == nil && !flag { v = "true" }
        // The lab's own switches (`pts-rebase`, `pts-clamp`, `vt-compat`) take false too, so a grid can turn them off.
        if flag && v != nil && !(v == "false" && (TimestampSettings.switches.contains(name) || name == "vt-compat")) {
            throw LabError.usage("\(file): \(context) setting '\(key)' is a flag without argument: give true, or leave it out")
        }
        return Step(name: key, argument: v, context: context)
    }

    private static func apply(_ key: String, _ value: Any, to settings: inout EncodeSettings, file: String, context: String) throws {
        try step(key, value, file: file, context: context).apply(to: &settings, file: file)
    }
}
