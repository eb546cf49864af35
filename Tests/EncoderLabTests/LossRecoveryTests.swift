import Foundation
import Testing
import H264
@testable import EncoderLab

/// Frames under loss and recovery (issue 23, item 3) on hand-made lists with answers worked out by hand, and the
/// `--rtp`/`--loss` settings: their grammar, canonical form, and the run key (absent when not given).
@Suite("RTP stage: loss recovery arithmetic on hand-made lists; --rtp and --loss settings and run keys")
struct LossRecoveryTests {
    typealias F = LossRecovery.Frame

    @Test("states and events by hand: 0.5 dB below the loss-free decode is broken, not output is frozen, an event lasting to the end is unrecovered")
    func byHand() {
        // Loss-free 40 dB throughout; under loss: 40, 30 (broken), not output (frozen), 39.6 (within 0.5: intact),
        // 39.4 (broken), 40, 35 (broken), 34 (broken, to the end).
        let frames = [F(psnrY: 40, lossFreePSNRY: 40, output: true), F(psnrY: 30, lossFreePSNRY: 40, output: true),
                      F(psnrY: 25, lossFreePSNRY: 40, output: false), F(psnrY: 39.6, lossFreePSNRY: 40, output: true),
                      F(psnrY: 39.4, lossFreePSNRY: 40, output: true), F(psnrY: 40, lossFreePSNRY: 40, output: true),
                      F(psnrY: 35, lossFreePSNRY: 40, output: true), F(psnrY: 34, lossFreePSNRY: 40, output: true)]
        let s = LossRecovery.summarize(frames)
        #expect(s.states == [.intact, .broken, .frozen, .intact, .broken, .intact, .broken, .broken])
        #expect(s.events == [.init(first: 1, frames: 2, recovered: true), .init(first: 4, frames: 1, recovered: true),
                             .init(first: 6, frames: 2, recovered: false)])
        #expect(s.broken == 4 && s.frozen == 1 && s.unrecovered == 1)
        #expect(s.meanRecoveryFrames == 1.5)  // (2 + 1) / 2: the unrecovered event left out
        #expect(s.maxRecoveryFrames == 2)
    }

    @Test("no error (PSNR nil) counts as above every number; exactly 0.5 dB below is still intact; no loss, no event")
    func edges() {
        #expect(LossRecovery.state(F(psnrY: nil, lossFreePSNRY: nil, output: true)) == .intact)
        #expect(LossRecovery.state(F(psnrY: 50, lossFreePSNRY: nil, output: true)) == .broken)
        #expect(LossRecovery.state(F(psnrY: nil, lossFreePSNRY: 40, output: true)) == .intact)
        #expect(LossRecovery.state(F(psnrY: 39.5, lossFreePSNRY: 40, output: true)) == .intact)
        #expect(LossRecovery.state(F(psnrY: nil, lossFreePSNRY: nil, output: false)) == .frozen)
        let clean = LossRecovery.summarize((0..<5).map { _ in F(psnrY: 38, lossFreePSNRY: 38, output: true) })
        #expect(clean.events.isEmpty && clean.meanRecoveryFrames == nil && clean.maxRecoveryFrames == nil)
        // One event from the first frame to the last: unrecovered, no mean.
        let lost = LossRecovery.summarize((0..<3).map { _ in F(psnrY: nil, lossFreePSNRY: 38, output: false) })
        #expect(lost.events == [.init(first: 0, frames: 3, recovered: false)] && lost.meanRecoveryFrames == nil)
    }

    @Test("a slot the encoder skipped (coded false) takes the previous slot's state: held on both sides, not frozen by the network")
    func skippedSlots() {
        // No loss: coded 40 dB, then two skipped slots (not output, their held PSNR lower), coded again: no event.
        let clean = LossRecovery.summarize([F(psnrY: 40, lossFreePSNRY: 40, output: true),
                                            F(psnrY: 30, lossFreePSNRY: nil, output: false, coded: false),
                                            F(psnrY: 29, lossFreePSNRY: nil, output: false, coded: false),
                                            F(psnrY: 40, lossFreePSNRY: 40, output: true)])
        #expect(clean.states == [.intact, .intact, .intact, .intact] && clean.events.isEmpty)
        // A skipped first slot: both sides show the empty screen.
        #expect(LossRecovery.summarize([F(psnrY: 10, lossFreePSNRY: nil, output: false, coded: false)]).states == [.intact])
        // A broken picture held over a skipped slot stays broken; a frozen one stays frozen; the event runs on.
        let lossy = LossRecovery.summarize([F(psnrY: 30, lossFreePSNRY: 40, output: true),
                                            F(psnrY: 30, lossFreePSNRY: nil, output: false, coded: false),
                                            F(psnrY: 30, lossFreePSNRY: 40, output: false),
                                            F(psnrY: 30, lossFreePSNRY: nil, output: false, coded: false),
                                            F(psnrY: 40, lossFreePSNRY: 40, output: true)])
        #expect(lossy.states == [.broken, .broken, .frozen, .frozen, .intact])
        #expect(lossy.events == [.init(first: 0, frames: 4, recovered: true)])
    }

    @Test("--loss or --rtp given twice is refused with 64 naming the flag (not silently the last); once each is fine")
    func givenTwice() throws {
        for (flag, a, b) in [("loss", "bernoulli:p=0.01", "bernoulli:p=0.02"), ("rtp", "mtu=600", "mtu=700")] {
            do {
                _ = try EncodeSettings.parse(arguments: ["--\(flag)", a, "--\(flag)=\(b)", "c.y4m"])
                Issue.record("--\(flag) twice was accepted")
            } catch let e as LabError {
                #expect(e.kind.exitCode == 64 && e.message.contains("--\(flag)") && e.message.contains("twice"), "\(e.message)")
            }
        }
        let (once, _) = try EncodeSettings.parse(arguments: ["--loss", "bernoulli:p=0.01", "--rtp", "mtu=600", "c.y4m"])
        #expect(once.rtp?.mtu == 600 && once.rtp?.lossSpec == "bernoulli:p=0.01,seed=1")
    }

    @Test("--rtp and --loss: canonical forms, defaults (mtu 1400, non-interleaved, seed 1, gilbert k 1 h 0), --loss alone implies the RTP stage")
    func settings() throws {
        var s = EncodeSettings()
        try s.set("loss", "gilbert:p=0.01,r=0.5,seed=3")
        #expect(s.rtp?.rtpSpec == "mtu=1400,mode=non-interleaved")
        #expect(s.rtp?.lossSpec == "gilbert:p=0.01,r=0.5,k=1,h=0,seed=3")
        try s.set("rtp", "mode=single,mtu=1200")
        #expect(s.rtp?.rtpSpec == "mtu=1200,mode=single" && s.rtp?.channel?.seed == 3)
        var b = EncodeSettings()
        try b.set("loss", "bernoulli:p=0.05,jitter=10,reorder=0.01,duplicate=0.02")
        #expect(b.rtp?.lossSpec == "bernoulli:p=0.05,seed=1,duplicate=0.02,reorder=0.01,jitter=10")
        try b.set("loss", "none:reorder=0.5")
        #expect(b.rtp?.lossSpec == "none:seed=1,reorder=0.5")
        let (parsed, rest) = try EncodeSettings.parse(arguments: ["--rtp", "mtu=600", "--loss=bernoulli:p=0.01,seed=9", "c.y4m"])
        #expect(rest == ["c.y4m"] && parsed.rtp?.mtu == 600 && parsed.rtp?.channel == {
            var c = RTPChannel.Spec(); c.loss = .bernoulli(p: 0.01); c.seed = 9; return c
        }())
    }

    @Test("bad --rtp and --loss values are refused (64) naming the key and the value")
    func refused() {
        func usage(_ name: String, _ value: String, _ words: String) {
            var s = EncodeSettings()
            do {
                try s.set(name, value)
                Issue.record("\(name) \(value) accepted")
            } catch let e as LabError {
                #expect(e.kind == .usage && e.message.contains(words), "\(e.message)")
            } catch { Issue.record("\(error)") }
        }
        usage("rtp", "mtu=20", "mtu must be 28...65507")
        usage("rtp", "mode=interleaved", "mode must be non-interleaved or single, got 'interleaved'")
        usage("rtp", "size=3", "unknown key 'size'")
        usage("rtp", "mtu=1200,mtu=1300", "'mtu' is given twice")
        usage("loss", "bernoulli:p=2", "p must be a probability 0...1, a decimal number (e.g. 0.01), got '2'")
        usage("loss", "bernoulli", "bernoulli needs p")
        usage("loss", "gilbert:p=0.1", "gilbert needs p and r")
        usage("loss", "uniform:p=0.1", "unknown model 'uniform'")
        usage("loss", "bernoulli:p=0.1,seed=-1", "seed must be a whole number")
        usage("loss", "bernoulli:p=0.1,r=0.2", "unknown key 'r' for bernoulli")
        usage("loss", "bernoulli:p=0.1,jitter=nan", "jitter must be milliseconds 0...10000")
        // Decimal numbers only: Swift's Double("0x1") reads hex (1), Double("1e-2") an exponent, "+0.5" a sign.
        usage("loss", "bernoulli:p=0x1", "p must be a probability 0...1, a decimal number (e.g. 0.01), got '0x1'")
        usage("loss", "bernoulli:p=0x0.8p0", "got '0x0.8p0'")
        usage("loss", "bernoulli:p=1e-2", "got '1e-2'")
        usage("loss", "gilbert:p=0.1,r=+0.5", "r must be a probability 0...1, a decimal number (e.g. 0.01), got '+0.5'")
        usage("loss", "bernoulli:p=0.1,reorder=inf", "got 'inf'")
        usage("loss", "bernoulli:p=0.1,jitter=0x10", "jitter must be milliseconds 0...10000, a decimal number (e.g. 20), got '0x10'")
        // OpenH264's bitrate, which the lab reads itself (x264's --bitrate goes to x264's own parser).
        for v in ["0x10", "1e3"] {
            do {
                _ = try EncodeSettings.parse(arguments: ["--encoder", "openh264", "--bitrate", v]).0.resolved()
                Issue.record("openh264 bitrate \(v) accepted")
            } catch let e as LabError {
                #expect(e.kind == .usage && e.message.contains("bad value for setting 'bitrate': '\(v)' (kbit/s as a decimal number"), "\(e.message)")
            } catch { Issue.record("\(error)") }
        }
        // Plain decimals still read as before.
        var ok = EncodeSettings()
        #expect(throws: Never.self) { try ok.set("loss", "gilbert:p=0.01,r=.5,k=1,h=0,jitter=12.5") }
        #expect(ok.rtp?.lossSpec == "gilbert:p=0.01,r=0.5,k=1,h=0,seed=1,jitter=12.5")
    }

    @Test("the run key: unchanged without --rtp/--loss, changed by each, and the same for the same canonical spec")
    func runKeys() throws {
        let scratch = Scratch()
        try SyntheticClip(width: 64, height: 48, frames: 2, seed: 11).write(to: scratch.file("c.y4m"))
        func key(_ flags: [String]) throws -> String {
            let settings = try EncodeSettings.parse(arguments: flags).0
            let checked = try Runner.check([Experiment.Run(clip: scratch.file("c.y4m"), settings: settings, label: "")], experiment: "e")[0]
            return Pipeline.spec(checked, clip: ClipIdentity(path: "c.y4m", sha256: String(repeating: "ab", count: 32))).keyMaterial
        }
        let plain = try key(["--qp", "30"])
        #expect(!plain.contains("rtp"))
        let rtp = try key(["--qp", "30", "--rtp", "mtu=1200"])
        #expect(rtp.contains(#""rtp":{"packetizer":"mtu=1200,mode=non-interleaved"}"#), "\(rtp)")
        let loss = try key(["--qp", "30", "--rtp", "mtu=1200", "--loss", "bernoulli:p=0.01"])
        #expect(loss.contains(#""loss":"bernoulli:p=0.01,seed=1""#), "\(loss)")
        #expect(try key(["--qp", "30", "--loss", "bernoulli:seed=1,p=0.010", "--rtp", "mtu=1200,mode=non-interleaved"]) == loss)
        #expect(Set([plain, rtp, loss]).count == 3)
    }
}
