internal import CX264

/// The x264 parameters that decide how many frames the encoder holds, and VideoToolbox's `MaxFrameDelayCount` mapped
/// onto them (docs/videotoolbox.md, "MaxFrameDelayCount").
///
/// x264 0.164's encoder.c, when the encoder opens (`x264_encoder_open` → `validate_parameters`, then "Init frames"):
/// `i_delay` = `max(bframes, 3) × 4` under b-adapt 2 (trellis; `bframes` when b-adapt is 1 or 0; b-adapt is 0 without
/// B-frames), raised to `rc-lookahead` when mb-tree or a VBV is on, plus `frame threads − 1` (1 under sliced threads),
/// plus `sync-lookahead` (`bframes + 1` when auto; 0 with one frame thread), plus 1 with `b_vfr_input`;
/// `x264_encoder_maximum_delayed_frames` returns it. Call `c` (from 0) returns coded frame `c − i_delay`, so a frame
/// comes out `i_delay` calls after the picture in its coded position; B-frames come out after the P frame they
/// precede in display order, x264's `i_bframe_delay` later still (1, or 2 with a B-pyramid: `bframes ≥ 2`). Apple:
/// with MaxFrameDelayCount M, "frame N − M must have been emitted before the call to encode frame N returns", so a
/// frame may be held at most M calls after its own: `i_delay + i_bframe_delay ≤ M`.
struct X264DelayParameters: Equatable, Sendable {
    var bframes: Int
    /// 0 none, 1 fast, 2 trellis (x264's `i_bframe_adaptive`).
    var bAdapt: Int
    /// 0 none, 1 strict, 2 normal (x264's `i_bframe_pyramid`).
    var bPyramid: Int
    var lookahead: Int
    var mbtree: Bool
    /// A VBV buffer is set (`vbv-bufsize` > 0): the lookahead counts without mb-tree too.
    var vbv: Bool
    /// `threads`, 0 for x264's automatic count.
    var threads: Int
    var slicedThreads: Bool
    /// `sync-lookahead`, -1 for auto (`bframes + 1`).
    var syncLookahead: Int
    /// `b_vfr_input` (the lab sets it for variable-rate timestamps).
    var vfrInput: Bool

    /// The frame threads x264 will have, nil when automatic (more than 1 on a machine of two cores or more).
    var frameThreads: Int? { slicedThreads || threads == 1 ? 1 : threads == 0 ? nil : threads }

    /// x264's `i_bframe_delay`: the calls a B-frame waits for the P frame coded before it.
    var reorderDelay: Int { bframes == 0 ? 0 : bframes >= 2 && bPyramid != 0 ? 2 : 1 }

    /// `x264_encoder_maximum_delayed_frames` with `frameThreads` frame threads (encoder.c, above).
    func maximumDelayedFrames(frameThreads t: Int) -> Int {
        var delay = bframes > 0 && bAdapt == 2 ? max(bframes, 3) * 4 : bframes
        if mbtree || vbv { delay = max(delay, lookahead) }
        let sync = t <= 1 ? 0 : syncLookahead < 0 ? bframes + 1 : min(syncLookahead, 250)
        return delay + (t - 1) + sync + (vfrInput ? 1 : 0)
    }

    /// The longest a frame is held, in encode calls after its own: `maximumDelayedFrames + reorderDelay`; nil when the
    /// frame threads are automatic.
    var longestHold: Int? { frameThreads.map { maximumDelayedFrames(frameThreads: $0) + reorderDelay } }

    /// The parameters capped so that no frame is held more than `limit` calls (``longestHold`` ≤ `limit`), each
    /// parameter named in `given` (x264 option names the user gave) left alone, and what changed, in x264's names.
    /// In order: frame threads become sliced threads, whose `threads − 1` and `sync-lookahead` terms are 0 (unless
    /// `sliced-threads`/`no-sliced-threads` was given, or a known count fits); b-adapt 2 becomes 1 when its `max(bframes, 3) × 4` does not fit; `bframes` is lowered until
    /// `bframes + reorderDelay` fits; `rc-lookahead` becomes `limit − vfr − reorderDelay` when larger (at 0, mb-tree
    /// off, as x264 would turn it off with a warning).
    func capped(to limit: Int, given: Set<String>) -> (parameters: X264DelayParameters, changes: [String]) {
        var q = self
        var changes: [String] = []
        let budget = limit - (vfrInput ? 1 : 0)
        // The thread count stays (sliced threads use it too); only an explicit choice of sliced or frame threads wins.
        let threadsGiven = !given.isDisjoint(with: ["sliced-threads", "no-sliced-threads", "nosliced-threads"])
        if !threadsGiven, q.frameThreads != 1, q.longestHold.map({ $0 > limit }) ?? true {
            q.slicedThreads = true
            changes.append("sliced-threads")
        }
        if !given.contains("b-adapt"), q.bframes > 0, q.bAdapt == 2, max(q.bframes, 3) * 4 + q.reorderDelay > budget {
            q.bAdapt = 1
            changes.append("b-adapt 2 -> 1")
        }
        if !given.contains("bframes") {
            let before = q.bframes
            while q.bframes > 0 && q.bframes + q.reorderDelay > budget { q.bframes -= 1 }
            if q.bframes != before { changes.append("bframes \(before) -> \(q.bframes)") }
        }
        if !given.contains("rc-lookahead"), q.mbtree || q.vbv, q.lookahead + q.reorderDelay > budget {
            let before = q.lookahead
            q.lookahead = max(0, budget - q.reorderDelay)
            changes.append("rc-lookahead \(before) -> \(q.lookahead)")
            if q.lookahead == 0 && q.mbtree && given.isDisjoint(with: ["mbtree", "no-mbtree", "nombtree"]) {
                q.mbtree = false
                changes.append("no-mbtree")
            }
        }
        return (q, changes)
    }
}

extension X264DelayParameters {
    /// The delay parameters of an x264_param_t before the encoder opens.
    init(_ p: x264_param_t) {
        self.init(bframes: Int(p.i_bframe), bAdapt: Int(p.i_bframe_adaptive), bPyramid: Int(p.i_bframe_pyramid),
                  lookahead: Int(p.rc.i_lookahead), mbtree: p.rc.b_mb_tree != 0, vbv: p.rc.i_vbv_buffer_size > 0,
                  threads: Int(p.i_threads), slicedThreads: p.b_sliced_threads != 0, syncLookahead: Int(p.i_sync_lookahead),
                  vfrInput: p.b_vfr_input != 0)
    }

    /// Writes the capped parameters back into `p`.
    func apply(to p: inout x264_param_t) {
        p.i_bframe = Int32(bframes)
        p.i_bframe_adaptive = Int32(bAdapt)
        p.rc.i_lookahead = Int32(lookahead)
        p.rc.b_mb_tree = mbtree ? 1 : 0
        p.b_sliced_threads = slicedThreads ? 1 : 0
    }

    /// MaxFrameDelayCount `limit` applied to `p` (after every option, the profile and the input's `b_vfr_input`):
    /// the note said once per run, nil when nothing changed and the limit is met.
    static func limit(_ p: inout x264_param_t, to limit: Int, given: Set<String>) -> String? {
        let before = X264DelayParameters(p)
        let (after, changes) = before.capped(to: limit, given: given)
        after.apply(to: &p)
        let hold = after.longestHold
        let unmet = hold.map { $0 > limit } ?? false
        guard !changes.isEmpty || unmet else { return nil }
        var text = "MaxFrameDelayCount=\(limit)"
        if !changes.isEmpty { text += ": x264 gets \(changes.joined(separator: ", "))" }
        if let hold {
            let d = after.maximumDelayedFrames(frameThreads: after.frameThreads ?? 1)
            text += " (x264_encoder_maximum_delayed_frames \(d) + B-frame reordering \(after.reorderDelay) = \(hold) calls at most"
            let why = after.vfrInput && limit == 0 ? "variable-rate timestamps add 1 (b_vfr_input)" : "the x264 options given keep it"
            text += unmet ? ", more than \(limit): \(why))" : ")"
        }
        return text
    }
}
