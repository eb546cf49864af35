import Foundation
import Testing
import EncoderLab

/// `enclab bd-rate` through the built binary: its two lines against the library's values, and its refusals with
/// their exit statuses and messages.
@Suite("enclab bd-rate, end to end")
struct BDRateCommandTests {
    typealias CLI = CommandLineTests
    let cli = CommandLineTests()

    let anchor = "1000:34.1,1800:36.4,3500:38.9,7000:41.0"
    let test = "900:34.4, 1500:36.2, 2600:38.1, 4800:40.2, 8000:41.6"
    let anchorPoints: [Bjontegaard.Point] = [(1000, 34.1), (1800, 36.4), (3500, 38.9), (7000, 41.0)]
    let testPoints: [Bjontegaard.Point] = [(900, 34.4), (1500, 36.2), (2600, 38.1), (4800, 40.2), (8000, 41.6)]

    @Test("prints BD-rate in % and BD-PSNR in dB, naming the method, as the library computes them", arguments: [nil, "pchip", "cubic"])
    func matchesTheLibrary(method: String?) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["bd-rate", "--anchor", anchor, "--test=\(test)"] + (method.map { ["--method", $0] } ?? []), in: dir)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        let m = Bjontegaard.Method(rawValue: method ?? "pchip")!
        let rate = try Bjontegaard.bdRate(anchor: anchorPoints, test: testPoints, method: m)
        let psnr = try Bjontegaard.bdPSNR(anchor: anchorPoints, test: testPoints, method: m)
        #expect(r.stdout == String(format: "BD-rate (%@): %.6f %%\nBD-PSNR (%@): %.6f dB\n", m.rawValue, rate, m.rawValue, psnr))
        // The values by hand for pchip, from the bjontegaard package 1.3.0 (BjontegaardPackageTests runs it):
        // -10.27821134189394 % and 0.3683886463613197 dB.
        if m == .pchip { #expect(r.stdout == "BD-rate (pchip): -10.278211 %\nBD-PSNR (pchip): 0.368389 dB\n") }
        if m == .cubic { #expect(r.stdout == "BD-rate (cubic): -10.151142 %\nBD-PSNR (cubic): 0.361735 dB\n") }
    }

    @Test("bad numbers and flags are usage errors (64); curves the method refuses are data errors (65)", arguments: [
        (["--anchor", "1000:34.1,1800;36.4,3500:38.9,7000:41", "--test", "900:34.4,1500:36.2,2600:38.1,4800:40.2"], Int32(64),
         "--anchor: point 2 '1800;36.4' is not RATE:PSNR with decimal numbers (e.g. 1800:36.4) (see 'enclab bd-rate --help')"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41", "--test", "900:34.4,1500:36.2,2600:x,4800:40.2"], 64,
         "--test: point 3 '2600:x' is not RATE:PSNR with decimal numbers (e.g. 1800:36.4) (see 'enclab bd-rate --help')"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:nan", "--test", "900:34.4,1500:36.2,2600:38.1,4800:40.2"], 64,
         "--anchor: point 4 '7000:nan' is not RATE:PSNR with decimal numbers (e.g. 1800:36.4) (see 'enclab bd-rate --help')"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41,", "--test", "900:34.4,1500:36.2,2600:38.1,4800:40.2"], 64,
         "--anchor: point 5 '' is not RATE:PSNR with decimal numbers (e.g. 1800:36.4) (see 'enclab bd-rate --help')"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41", "--test", "900:34.4,1500:36.2,2600:38.1,4800:40.2", "--method", "akima"], 64,
         "--method must be pchip or cubic, got 'akima' (see 'enclab bd-rate --help')"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41"], 64, "bd-rate needs --test RATE:PSNR,... (see 'enclab bd-rate --help')"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9", "--test", "900:34.4,1500:36.2,2600:38.1,4800:40.2"], 65,
         "Bjontegaard: the anchor curve has 3 points; at least 4 (rate, PSNR) points are needed"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41", "--test", "900:34.4,1500:36.2,2600:36.1,4800:40.2"], 65,
         "Bjontegaard: the test curve is not monotonic: PSNR 36.1 dB at 2600 kbit/s is not above 36.2 dB at 1500 kbit/s"),
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41", "--test", "-900:34.4,1500:36.2,2600:38.1,4800:40.2"], 65,
         "Bjontegaard: the test curve has rate -900 kbit/s; rates must be positive and finite"),
        // PSNR 34.1...41 against 39...45: 2 dB of the joint 10.9 dB.
        (["--anchor", "1000:34.1,1800:36.4,3500:38.9,7000:41", "--test", "1000:39,2000:41,3000:43,4000:45", "--method", "cubic"], 65,
         "Bjontegaard: the curves' PSNR ranges overlap by 2 dB, 18.3486 % of their joint range (10.9 dB); at least 75 % is needed"),
        // A VMAF outside its 0-100 scale (libvmaf clips its models' scores there): both printed deltas, exit 0, before.
        (["--metric", "vmaf", "--anchor", "150:61.2,300:74.5,600:85.1,1200:100.4", "--test", "140:63.0,280:76.1,560:86.0,1100:100.9"], 65,
         "--anchor: point 4 has VMAF 100.4, outside its scale 0-100"),
        (["--metric", "vmaf-neg", "--anchor", "150:1.5,300:48,600:79,1200:92.3", "--test", "140:-0.5,280:50,560:80,1100:92.9"], 65,
         "--test: point 1 has VMAF NEG -0.5, outside its scale 0-100"),
        // An SSIM or MS-SSIM over 1 (the index of identical pictures) or under -1: both printed deltas, exit 0, before.
        (["--metric", "ssim", "--anchor", "100:0.90,200:0.95,400:0.99,800:1.2", "--test", "100:0.91,200:0.96,400:0.995,800:0.999"], 65,
         "--anchor: point 4 has SSIM 1.2, outside its scale -1 to 1"),
        (["--metric", "ms-ssim", "--anchor", "100:0.90,200:0.95,400:0.99,800:0.999", "--test", "100:-1.5,200:0.96,400:0.995,800:1.0"], 65,
         "--test: point 1 has MS-SSIM -1.5, outside its scale -1 to 1"),
        (["--metric", "ms-ssim", "--anchor", "100:0.90,200:0.95,400:0.99,800:0.999", "--test", "100:0.91,200:0.96,400:0.995,800:1.0001"], 65,
         "--test: point 4 has MS-SSIM 1.0001, outside its scale -1 to 1"),
    ])
    func refusals(arguments: [String], status: Int32, message: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["bd-rate"] + arguments, in: dir)
        #expect(r.status == status, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "enclab: \(message)\n")
    }

    @Test("an SSIM or MS-SSIM curve within -1...1, its bounds included, is taken: both deltas printed, exit 0", arguments: ["ssim", "ms-ssim"])
    func ssimWithinScale(metric: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["bd-rate", "--metric", metric, "--anchor", "100:-1,200:0.5,400:0.9,800:0.99", "--test", "100:-0.9,200:0.6,400:0.95,800:1"], in: dir)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("BD-rate (pchip): ") && r.stdout.contains("\nBD-\(metric == "ssim" ? "SSIM" : "MS-SSIM") (pchip): "), "\(r.stdout)")
    }

    /// PSNR near a double's limits: 1e300 to 1e308 dB (the powers of the pieces overflow to inf) and 0 to 3e-300 dB
    /// (the pieces' 1/h² overflows): each curve valid by itself, the deltas not finite. They printed "-nan %", exit 0.
    static let huge = "1000:1e300,1800:1e301,3500:1e302,7000:1e308"
    static let tiny = "1000:0,1800:1e-300,3500:2e-300,7000:3e-300"

    @Test("curves whose deltas are not finite: 65 with one line saying so, never nan or inf printed", arguments: [
        (huge, "pchip"), (tiny, "pchip"), (huge, "cubic"),
    ])
    func notFinite(curve: String, method: String) throws {
        let dir = cli.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.enclab(["bd-rate", "--anchor", curve, "--test", curve, "--method", method], in: dir)
        #expect(r.status == 65 && r.stdout.isEmpty, "\(r.status) \(r.stdout) \(r.stderr)")
        #expect(r.stderr.hasPrefix("enclab: Bjontegaard (\(method)): ") && r.stderr.contains("not a finite number"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
    }
}
