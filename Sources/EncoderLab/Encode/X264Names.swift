internal import CX264
import Foundation

/// x264's presets, tunes and profiles, checked the way libx264 parses them (common/base.c in x264 0.164:
/// `param_apply_preset`, `param_apply_tune`, `x264_param_apply_profile`) before libx264 sees them, so that
/// libx264 never has to print an error of its own and an absurd value (70,000 characters) is refused at once.
///
/// The lists are x264.h's `x264_preset_names`, `x264_tune_names` and `x264_profile_names`.
enum X264Names {
    /// x264.h `x264_preset_names`, fastest first; a preset may also be given by its index 0-9.
    static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
    /// x264.h `x264_tune_names`.
    static let tunes = ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]
    /// The tunes that set psy options: x264 applies only the first of them ("only 1 psy tuning can be used").
    static let psyTunes: Set<String> = ["film", "animation", "grain", "stillimage", "psnr", "ssim"]
    /// x264.h `x264_profile_names`.
    static let profiles = ["baseline", "main", "high", "high10", "high422", "high444"]
    /// Characters that separate tunes (`strspn(tune, ",./-+")` in param_apply_tune).
    static let tuneSeparators: Set<Character> = [",", ".", "/", "-", "+"]

    /// Whether libx264's `x264_param_parse` knows the option `name` (x264.h: it returns `X264_PARAM_BAD_NAME` for a
    /// name it does not know; `no-` prefixes and `_` for `-` as it reads them). Asked on a scratch parameter set with
    /// no value (which x264 reads as "true"), freed with `x264_param_cleanup`.
    static func isParameterName(_ name: String) -> Bool {
        guard !name.isEmpty, !name.utf8.contains(0) else { return false }
        var p = x264_param_t()
        x264_param_default(&p)
        defer { x264_param_cleanup(&p) }
        return x264_param_parse(&p, name, nil) != X264_PARAM_BAD_NAME
    }

    /// The preset's canonical name: a name in any case, or an index 0-9.
    /// - Throws: `.usage` "unknown preset 'X' (x264 presets: ...)".
    static func preset(_ given: String?) throws -> String? {
        guard let given else { return nil }
        if given.count <= 2, given.allSatisfy(\.isASCII), let i = Int(given), presets.indices.contains(i) { return presets[i] }
        if let name = presets.first(where: { $0.caseInsensitiveCompare(given) == .orderedSame }) { return name }
        throw LabError.usage("unknown preset '\(given)' (x264 presets: \(presets.joined(separator: ", ")))")
    }

    /// The tunes as libx264 will apply them, comma-separated canonical names, with a warning for every psy tune
    /// after the first (libx264 ignores those, with the same warning).
    /// - Throws: `.usage` "bad tune 'X': invalid tune 'Y' (x264 tunes: ...)".
    static func tune(_ given: String?) throws -> (value: String?, warnings: [String]) {
        guard let given else { return (nil, []) }
        var kept: [String] = [], warnings: [String] = []
        var psyUsed = false
        for part in given.split(whereSeparator: { tuneSeparators.contains($0) }) {
            guard let name = tunes.first(where: { $0.caseInsensitiveCompare(part) == .orderedSame }) else {
                throw LabError.usage("bad tune '\(given)': invalid tune '\(part)' (x264 tunes: \(tunes.joined(separator: ", ")))")
            }
            if psyTunes.contains(name) {
                if psyUsed {
                    warnings.append("only 1 psy tuning can be used: ignoring tune \(part)")
                    continue
                }
                psyUsed = true
            }
            kept.append(name)
        }
        return (kept.joined(separator: ","), warnings)
    }

    /// Checks what `x264_param_apply_profile` would refuse for 8-bit 4:2:0 input.
    /// - Throws: `.usage` "setting 'profile': x264 cannot apply profile 'P' to these settings (REASON)".
    static func checkProfile(_ profile: String, lossless: Bool, interlaced: Bool, fakeInterlaced: Bool) throws {
        func refuse(_ reason: String) -> LabError {
            LabError.usage("setting 'profile': x264 cannot apply profile '\(profile)' to these settings (\(reason))")
        }
        guard let index = profiles.firstIndex(where: { $0.caseInsensitiveCompare(profile) == .orderedSame }) else {
            throw refuse("invalid profile: \(profile); x264 profiles: \(profiles.joined(separator: ", "))")
        }
        if index < 5 && lossless { throw refuse("\(profile) profile doesn't support lossless") }
        if index == 0 && interlaced { throw refuse("baseline profile doesn't support interlacing") }
        if index == 0 && fakeInterlaced { throw refuse("baseline profile doesn't support fake interlacing") }
    }
}
