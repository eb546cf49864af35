import Foundation
import H264

/// What the lab stores for a run changes only when this number does: it is part of every run key, so a new release
/// of the lab that measures the same things keeps its keys (resume and merge go on working), and one that measures
/// differently starts new ones.
public let measurementVersion = 1

/// One run, fully described before it starts: a `Sendable` value (the run spec). Its ``key`` names it in the store
/// (`runs.run_key`) and on disk (`OUT/<first 16 hex digits>/`).
public struct RunSpec: Sendable {
    /// `encode`, or the experiment's name.
    public var experiment: String
    /// The grid point, for display (`bitrate=500 rc=cbr`); empty for `enclab encode`.
    public var label: String
    /// The experiment's grid axes and the values this run took, as canonical JSON text (`{}` for `encode`).
    public var axesJSON: String
    /// The clip: its path and the SHA-256 of its bytes.
    public var clip: ClipIdentity
    /// The settings, resolved once (``EncodeSettings/resolved()``): x264's options with the `--rc` expansion.
    public var settings: EncodeSettings
    /// What the clip looks like to the encoder (size, rate, aspect ratio, interlacing, frame count) and the
    /// timestamps stage's plan.
    public var input: EncoderInput
    /// The keyframe rule the timestamps stage keeps (``KeyframeForcing``), nil without one.
    public var keyframeRule: KeyframeRule?
    /// What x264 settled on when the settings were checked (its SEI options string included).
    public var resolved: ResolvedParameters
    /// libx264's `X264_POINTVER`, e.g. "0.164.3095 baee400".
    public var x264Build: String
    /// ``measurementVersion`` when the spec was made.
    public var measurementVersion: Int

    /// The run key: hex SHA-256 over the canonical JSON of the clip's digest, the settings as given (preset, tune
    /// and profile in canonical form, x264's options in order, the lab's keys) and as x264 resolved them (the SEI
    /// options string, which names the effective thread count), the timestamps source, seek and frames, the
    /// timestamps stage's parameters when it is not the CLI's constant rate (the timecode file by the SHA-256 of
    /// its bytes, the schedule in canonical form, offset, rebase, precision, clamp), the verify mode when it is not
    /// `full` (a run stored with x264's PSNR is another result), the VideoToolbox properties as
    /// given (canonical) and vt-compat when there are any (``EncodeSettings/videoToolboxKeyObject``), how the keyframe
    /// rule is kept when the run has it (``KeyframeRule/Placement``: `keyint` or `forced`), the x264
    /// build and the measurement version. The same clip bytes and settings give the same key in any database;
    /// one changed setting or byte gives another. With several threads x264 is not repeatable under VBV, so a
    /// key names a specification, not a byte sequence.
    public var key: String { SHA256.hex(of: keyMaterial) }

    /// The text the key hashes (canonical JSON with sorted keys).
    public var keyMaterial: String {
        let s = settings
        var object: [String: Any] = [
            "clip_sha256": clip.sha256,
            "x264_options": resolved.optionsString,
            "settings": [
                "preset": ((try? X264Names.preset(s.preset)) ?? s.preset).map { $0 as Any } ?? NSNull(),
                "tune": ((try? X264Names.tune(s.tune).value) ?? s.tune).map { $0 as Any } ?? NSNull(),
                "profile": s.profile?.lowercased() ?? NSNull(),
                "rc": s.rc?.rawValue ?? NSNull(),
                "options": s.options.map { [$0.name, $0.value ?? NSNull()] as [Any] },
            ] as [String: Any],
            "lab": [
                "timestamps": (input.timestamps?.source ?? .constantRate).rawValue,
                // Always empty: the types the keyframe-forcing step forces are decided during the encode and never
                // hashed; the empty list stays so that no key changed when the plan's unused map went (issue 18).
                "forced_types": [Any](),
                "seek": s.seek ?? 0,
                "frames": s.frames ?? NSNull(),
            ] as [String: Any],
            "x264_build": x264Build,
            "measurement_version": measurementVersion,
        ]
        // The verify mode when not the default (absent for `full`, so those keys never changed).
        if s.verify != .full { object["verify"] = s.verify.rawValue }
        // The encoder when not x264 (absent for x264, so those keys never changed): its name, library version and the
        // fields the settings applied; its settled parameters are in `x264_options`' place (the resolved options string).
        if s.encoder != .x264 {
            object["encoder"] = ["name": s.encoder.rawValue, "version": openH264Version,
                                 "fields": s.openh264.applied.map { [$0.name, $0.value] }] as [String: Any]
        }
        // How the keyframe rule is kept, x264's keyint or IDRs the lab forces (absent without the rule, so those keys
        // never changed; runs with it changed keys when x264's keyint came to carry the rule, issue 17).
        if let placement = keyframeRule?.placement { object["keyframe_rule"] = ["placement": placement.name] }
        // VideoToolbox's properties as given and vt-compat (absent without them, so those keys never changed).
        if let vt = s.videoToolboxKeyObject { object["videotoolbox"] = vt }
        // The rate schedule and the step response's tolerance (absent without them, so those keys never changed).
        if let r = s.rateSchedule { object["rate_schedule"] = r.spec }
        if let t = s.settleTolerancePercent { object["settle_tolerance_pct"] = RateSchedule.format(t) }
        // The RTP stage and its channel (absent without --rtp/--loss, so those keys never changed).
        if let r = s.rtp {
            var o: [String: Any] = ["packetizer": r.rtpSpec]
            if let l = r.lossSpec { o["loss"] = l }
            object["rtp"] = o
        }
        // The timestamps stage beyond the CLI's constant rate (absent for it, so those keys never changed).
        if let plan = input.timestamps, let stages = plan.stages {
            var t: [String: Any] = ["source": plan.source.rawValue]
            if let sha = stages.tcfileSHA256 { t["tcfile_sha256"] = sha }
            if case .schedule(let schedule, let clock) = stages.times { t["schedule"] = schedule.spec; t["clock"] = clock.rawValue }
            if let o = stages.offset { t["offset_us"] = o.microseconds }
            if stages.rebase { t["rebase"] = true }
            if let p = stages.precision { t["precision"] = p.description }
            if stages.clamp { t["clamp"] = true }
            object["timestamps"] = t
        }
        return JSON.string(object)
    }

    /// The folder name of the run: the first 16 hex digits of its key.
    public var folderName: String { String(key.prefix(16)) }
}
