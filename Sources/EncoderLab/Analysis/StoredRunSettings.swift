import Foundation

/// The parts of a run's stored settings (`runs.settings`, JSON) that analysis and plots read back, from either
/// format the store holds: the previous version's (no `axes`: the grid point is known only from `label`) and
/// version 2's (with `axes`, the grid keys and the values this run took, exactly as in the experiment file).
struct StoredRunSettings {
    /// `rc`: the lab's rate-control mode as given (`cqp`...`vbr`), nil when x264 inferred its method.
    var rc: String?
    /// `label`: the grid point as text ("bitrate=500 rc=cbr"); "" for `enclab encode` or when absent.
    var label: String
    /// `x264_args`: the x264 CLI flags equivalent to the settings; "" when absent.
    var x264Arguments: String
    /// `axes`: grid key to value (a string, a number, `true`, or an object of settings); nil in the previous
    /// version's rows, `{}` for `enclab encode`.
    var axes: [String: Any]?
    /// `resolved`: what x264 settled on (`rc_method`, `bitrate_kbps`, `vbv_maxrate_kbps`, ...); nil for a run
    /// that failed before x264 resolved anything.
    var resolved: [String: Any]?
    /// `encoder.name`: the encoder when not x264 (`openh264`); nil for x264's runs, which store no encoder.
    var encoder: String?
    /// `openh264_params`: the `SEncParamExt` fields an OpenH264 run gave the library, as `name=value` words
    /// (`iRCMode=1 ...`); nil for other encoders' runs.
    var openh264Params: String?

    /// Parses `runs.settings` of run `runID`.
    /// - Throws: `.data` "run N: settings are not a JSON object" (the caller adds the database's path).
    init(json: String, runID: Int64) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw LabError.data("run \(runID): settings are not a JSON object")
        }
        rc = object["rc"] as? String
        label = object["label"] as? String ?? ""
        x264Arguments = object["x264_args"] as? String ?? ""
        axes = object["axes"] as? [String: Any]
        resolved = object["resolved"] as? [String: Any]
        encoder = (object["encoder"] as? [String: Any])?["name"] as? String
        openh264Params = object["openh264_params"] as? String
    }

    /// `resolved.NAME` as a number (x264's integers are exact in a Double), nil when absent, not a number or a
    /// boolean (a JSON `true` parses as an NSNumber whose type is `c`).
    func resolvedNumber(_ name: String) -> Double? {
        guard let n = resolved?[name] as? NSNumber, String(cString: n.objCType) != "c" else { return nil }
        return n.doubleValue
    }

    /// An OpenH264 run's rate-control mode in OpenH264's terms, the lab's name of the `iRCMode` it gave the library
    /// (`openh264_params`' `iRCMode=N`: quality 0, bitrate 1, bufferbased 2, timestamp 3, off -1, codec_app_def.h's
    /// RC_MODES); nil for another encoder's run or when not stored.
    var openh264RCMode: String? {
        guard encoder == EncoderName.openh264.rawValue, let params = openh264Params else { return nil }
        for word in params.split(separator: " ") where word.hasPrefix("iRCMode=") {
            return try? OpenH264Names.canonical("iRCMode", String(word.dropFirst("iRCMode=".count)))
        }
        return nil
    }

    /// `resolved.rc_method`: `cqp`, `crf` or `abr` (x264.h `X264_RC_*`), nil when absent.
    var rcMethod: String? { resolved?["rc_method"] as? String }
}
