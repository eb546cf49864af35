import Foundation

/// Whether an x264 encode writes the same bytes every time it runs, decided from a run key's own fields
/// (`runs.repeatable`; docs/runs.md, "Repeatable runs").
///
/// x264 0.164 is not repeatable with VBV and more than one thread (frame or sliced threads): its rate control reads
/// the other threads' in-flight frame-size estimates (ratecontrol.c, `frame_size_estimated`, `update_vbv_plan`), so
/// the bytes depend on how the threads were scheduled, although x264.h calls threading deterministic by default. With
/// `--non-deterministic` x264 lets its threads use data it does not wait for (x264.h, `b_deterministic`). One thread,
/// or several without VBV, gives the same bytes every time (with the lab's AVX-512 switch, ``X264Session``).
public enum Repeatability {
    /// Why an encode with these settings is not repeatable, or nil when it is.
    /// - Parameter x264Options: the options string x264 writes in its version SEI (``ResolvedParameters/optionsString``,
    ///   a run key's `x264_options`): its `threads=N` is the resolved thread count (frame or sliced threads), and it
    ///   holds `vbv_bufsize=N` with N > 0 only when VBV is on (x264's `x264_param2string`).
    /// - Parameter options: x264's options as given, in order (a key's `settings.options`): the last
    ///   `non-deterministic` (a value read as x264's `atobool`: none, `1`, `true`, `yes` on; `0`, `false`, `no` off)
    ///   or `no-non-deterministic` decides.
    public static func reason(x264Options: String, options: [X264Option]) -> String? {
        var fields: [Substring: Substring] = [:]
        for token in x264Options.split(separator: " ") {
            guard let eq = token.firstIndex(of: "=") else { continue }
            fields[token[..<eq]] = token[token.index(after: eq)...]
        }
        var nonDeterministic = false
        for option in options {
            let name = option.name.replacingOccurrences(of: "_", with: "-")
            let on: Bool?
            switch option.value?.lowercased() {
            case nil, "1", "true", "yes": on = true
            case "0", "false", "no": on = false
            default: on = nil
            }
            if name == "non-deterministic", let on { nonDeterministic = on }
            if name == "no-non-deterministic", let on { nonDeterministic = !on }
        }
        if nonDeterministic { return "x264 --non-deterministic" }
        let threads = fields["threads"].flatMap { Int($0) } ?? 1
        let vbv = (fields["vbv_bufsize"].flatMap { Int($0) } ?? 0) > 0
        if threads > 1 && vbv {
            let sliced = fields["sliced_threads"] == "1"
            return "x264 with \(threads) \(sliced ? "sliced " : "")threads under VBV"
        }
        return nil
    }

    /// ``reason(x264Options:options:)`` is nil.
    public static func isRepeatable(x264Options: String, options: [X264Option]) -> Bool {
        reason(x264Options: x264Options, options: options) == nil
    }

    /// The same rule read from a stored run's settings (`runs.settings`: `x264_options` and `options`, as
    /// ``Pipeline/settingsJSON(_:resolved:plan:)`` writes them): nil when the settings hold no `x264_options` (a
    /// stream the lab did not encode, `enclab check --db`) or are not a JSON object.
    static func reason(settingsJSON: String) -> (repeatable: Bool, reason: String?)? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(settingsJSON.utf8))) as? [String: Any],
              let x264Options = object["x264_options"] as? String, !x264Options.isEmpty else { return nil }
        let options = (object["options"] as? [[Any]] ?? []).compactMap { pair -> X264Option? in
            guard let name = pair.first as? String else { return nil }
            return X264Option(name, pair.count > 1 ? pair[1] as? String : nil)
        }
        let why = reason(x264Options: x264Options, options: options)
        return (why == nil, why)
    }

    /// Why an OpenH264 encode is not repeatable, from its settled fields (`name=value` words), or nil when it is.
    public static func openH264Reason(settled: String) -> String? {
        var f: [Substring: Substring] = [:]
        for token in settled.split(separator: " ") {
            guard let eq = token.firstIndex(of: "=") else { continue }
            f[token[..<eq]] = token[token.index(after: eq)...]
        }
        let threads = f["iMultipleThreadIdc"].flatMap { Int($0) } ?? 1
        if f["bUseLoadBalancing"] == "1", threads != 1, ["1", "3"].contains(f["uiSliceMode"] ?? "0") {
            return "OpenH264 with bUseLoadBalancing on and \(threads == 0 ? "automatic" : String(threads)) threads"
        }
        return nil
    }

    /// What the README and messages say of a run that is not repeatable.
    public static let advice = "one thread (--threads 1) gives a repeatable encode"
}

extension RunSpec {
    /// Whether this run's encode writes the same bytes every time (``Repeatability``), from the key's own fields:
    /// x264's resolved options string and the options as given.
    /// For OpenH264: not repeatable with `bUseLoadBalancing` on, more than one thread (or auto, 0) and slice mode 1 or 3
    /// (codec_app_def.h: load balancing "will change slicing of a picture during the run-time of multi-thread
    /// encoding, so the result of each run may be different"); the lab turns it off unless given.
    public var repeatable: Bool {
        if settings.encoder == .openh264 { return Repeatability.openH264Reason(settled: resolved.optionsString) == nil }
        return Repeatability.isRepeatable(x264Options: resolved.optionsString, options: settings.options)
    }
}
