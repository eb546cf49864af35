/// What packet loss cost, frame by frame (docs/rtp.md, "Frames under loss and recovery"): each displayed frame of the
/// damaged decode against the loss-free decode of the same stream, both measured against the source picture.
///
/// **Affected**: a frame the decoder did not output (``State/frozen``: the receiver shows the previous picture again),
/// or one whose luma PSNR under loss is more than ``toleranceDecibels`` (0.5 dB) below the loss-free decode's
/// (``State/broken``). A PSNR of nil (no error at all) counts as above every number. Every other frame is
/// ``State/intact``.
///
/// **A picture the encoder skipped** (OpenH264's frame skip, `skipped_frames`; ``Frame/coded`` false) is not lost by
/// the network: the loss-free decode holds its previous picture there too, so the slot shows on both sides what the
/// slot before it showed, and takes that slot's state (intact when the first slot: both show the empty screen). With no
/// packet lost, a run with skipped pictures has no affected frame and no event.
///
/// **Loss event and recovery**: an event is a maximal run of affected frames in display order; its recovery time is
/// its length in frames, the frames from its first affected frame until the first frame within 0.5 dB again (that one
/// not counted). An event that lasts to the last frame has not recovered: it counts in ``Summary/unrecovered`` and
/// not in the recovery mean or largest.
public enum LossRecovery {
    /// 0.5 dB: how far below the loss-free decode a frame's luma PSNR may be and still count as recovered.
    public static let toleranceDecibels = 0.5

    public enum State: String, Sendable, Equatable {
        case intact, broken, frozen
    }

    /// One displayed frame: its luma PSNR under loss and in the loss-free decode (nil: no error), and whether the decoder
    /// output it.
    public struct Frame: Sendable, Equatable {
        public var psnrY: Double?
        public var lossFreePSNRY: Double?
        public var output: Bool
        /// The encoder coded a picture for this slot (false: it skipped it, and the loss-free decode holds the one before).
        public var coded: Bool
        public init(psnrY: Double?, lossFreePSNRY: Double?, output: Bool, coded: Bool = true) {
            self.psnrY = psnrY
            self.lossFreePSNRY = lossFreePSNRY
            self.output = output
            self.coded = coded
        }
    }

    /// One loss event: its first frame (display index) and its length; `recovered` false when it reaches the end.
    public struct Event: Sendable, Equatable {
        public var first: Int
        public var frames: Int
        public var recovered: Bool
        public init(first: Int, frames: Int, recovered: Bool) { self.first = first; self.frames = frames; self.recovered = recovered }
    }

    public struct Summary: Sendable, Equatable {
        public var states: [State]
        public var events: [Event]
        public var broken: Int { states.filter { $0 == .broken }.count }
        public var frozen: Int { states.filter { $0 == .frozen }.count }
        public var unrecovered: Int { events.filter { !$0.recovered }.count }
        /// Mean recovery time in frames over recovered events; nil without one.
        public var meanRecoveryFrames: Double? {
            let r = events.filter(\.recovered)
            return r.isEmpty ? nil : Double(r.reduce(0) { $0 + $1.frames }) / Double(r.count)
        }
        public var maxRecoveryFrames: Int? { events.filter(\.recovered).map(\.frames).max() }
    }

    /// The state of one coded frame (see the type's description; a skipped slot takes the previous slot's).
    public static func state(_ f: Frame) -> State {
        guard f.output else { return .frozen }
        let loss = f.psnrY ?? .infinity, clean = f.lossFreePSNRY ?? .infinity
        if clean == .infinity { return loss == .infinity ? .intact : .broken }
        return loss < clean - toleranceDecibels ? .broken : .intact
    }

    /// States and events of frames in display order.
    public static func summarize(_ frames: [Frame]) -> Summary {
        var states: [State] = []
        for f in frames { states.append(f.coded ? state(f) : states.last ?? .intact) }
        var events: [Event] = []
        var start: Int?
        for (i, s) in states.enumerated() {
            if s != .intact {
                if start == nil { start = i }
            } else if let f = start {
                events.append(Event(first: f, frames: i - f, recovered: true))
                start = nil
            }
        }
        if let f = start { events.append(Event(first: f, frames: states.count - f, recovered: false)) }
        return Summary(states: states, events: events)
    }
}
