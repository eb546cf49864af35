import Foundation
import Testing
@testable import EncoderLab

/// BD-rate and BD-PSNR against the `bjontegaard` PyPI package 1.3.0 (FAU-LMS; scipy's PchipInterpolator for
/// 'pchip', numpy's polyfit for 'cubic'), run from the venv that `scripts/setup.sh` makes: the values agree to 1e-6
/// on valid curves of 4 to 6 points, and the lab refuses a short overlap exactly where the package warns.
/// Without the venv the test fails, saying to run `scripts/setup.sh`.
struct BjontegaardPackageTests {
    typealias Curve = [(rate: Double, psnr: Double)]

    /// Where `scripts/setup.sh` puts the venv: `$ENCLAB_VENV`, default /opt/enclab-venv.
    static var venvPython: String {
        (ProcessInfo.processInfo.environment["ENCLAB_VENV"] ?? "/opt/enclab-venv") + "/bin/python"
    }

    /// Reads a JSON list of cases [anchor, test] (each a list of [rate, psnr], given to the package sorted by rate,
    /// lengths free) and prints, per case, [bd_rate pchip, bd_psnr pchip, bd_rate cubic, bd_psnr cubic,
    /// whether bd_rate warned, whether bd_psnr warned]; a value is null where the package returned NaN.
    static let script = """
    import sys, json, math, warnings
    import bjontegaard as bd
    assert bd.__version__ == "1.3.0", bd.__version__
    out = []
    for a, t in json.loads(sys.stdin.read()):
        a, t = sorted(a), sorted(t)
        args = ([p[0] for p in a], [p[1] for p in a], [p[0] for p in t], [p[1] for p in t])
        row, warned = [], [False, False]
        for method in ("pchip", "cubic"):
            for k, f in enumerate((bd.bd_rate, bd.bd_psnr)):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    v = float(f(*args, method=method, require_matching_points=False))
                warned[k] = warned[k] or any("overlap" in str(x.message) for x in w)
                row.append(None if math.isnan(v) else v)
        out.append(row + warned)
    print(json.dumps(out))
    """

    /// Runs the package on `cases`; fails the test (not a skip) when the venv is missing.
    static func package(_ cases: [(Curve, Curve)]) throws -> [[Any]] {
        guard FileManager.default.isExecutableFile(atPath: venvPython) else {
            throw LabError.software("\(venvPython) is missing: run 'bash scripts/setup.sh', which makes the venv with the bjontegaard package 1.3.0")
        }
        func json(_ c: Curve) -> String { "[" + c.map { "[\($0.rate), \($0.psnr)]" }.joined(separator: ",") + "]" }
        let input = "[" + cases.map { "[\(json($0.0)), \(json($0.1))]" }.joined(separator: ",") + "]"
        let scratch = NSTemporaryDirectory() + "enclab-bjontegaard-\(UUID().uuidString).json"
        try input.write(toFile: scratch, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let r = try Tools.run("/bin/sh", ["-c", "exec \"$0\" -c \"$1\" < \"$2\"", venvPython, script, scratch])
        guard r.status == 0 else {
            throw LabError.software("the bjontegaard package failed (status \(r.status)): \(String(decoding: r.stderr, as: UTF8.self)); run 'bash scripts/setup.sh'")
        }
        guard let rows = try JSONSerialization.jsonObject(with: r.stdout) as? [[Any]], rows.count == cases.count else {
            throw LabError.software("the package's script printed \(String(decoding: r.stdout, as: UTF8.self))")
        }
        return rows
    }

    /// Real-looking rate-quality curves (kbit/s, dB), 4 to 6 points, each pair a comparison someone would make.
    static let valid: [(String, Curve, Curve)] = [
        // x264 medium against veryfast, 1080p at CRF 22/27/32/37 (4 points each): the test needs more bits.
        ("1080p medium vs veryfast",
         [(8200, 41.2), (3900, 39.0), (1900, 36.6), (950, 34.1)],
         [(9400, 41.0), (4500, 38.9), (2200, 36.5), (1100, 34.0)]),
        // CIF, 6 points each, a test that saves bits at low rates and loses them at high ones.
        ("CIF 6 points",
         [(180, 31.2), (260, 32.6), (390, 34.1), (600, 35.7), (930, 37.3), (1450, 38.9)],
         [(160, 31.0), (240, 32.7), (350, 34.0), (540, 35.8), (860, 37.2), (1300, 38.6)]),
        // 4 against 5 points (lengths differ), unevenly spaced: the unit tests' pair.
        ("4 vs 5 points",
         [(1000, 34.1), (1800, 36.4), (3500, 38.9), (7000, 41.0)],
         [(900, 34.4), (1500, 36.2), (2600, 38.1), (4800, 40.2), (8000, 41.6)]),
        // 720p, 5 against 6 points, a test curve that flattens at the top (PCHIP and the cubic part ways).
        ("720p 5 vs 6 points",
         [(600, 33.0), (1100, 35.6), (2000, 37.9), (3600, 39.7), (6500, 41.1)],
         [(550, 33.3), (950, 35.5), (1700, 37.8), (3000, 39.5), (5200, 40.4), (9000, 40.9)]),
        // QCIF at low rates, 5 points each, a test ahead by about 0.6 dB.
        ("QCIF low rates",
         [(48, 28.9), (72, 30.4), (110, 31.9), (170, 33.5), (260, 35.0)],
         [(45, 29.4), (70, 31.0), (105, 32.5), (165, 34.1), (250, 35.6)]),
    ]

    @Test func agreesWithThePackageOnValidCurves() throws {
        // The lab is given each curve shuffled (it sorts by rate); the package gets it sorted (it does not sort).
        let rows: [[Any]]
        do { rows = try Self.package(Self.valid.map { ($0.1, $0.2) }) } catch {
            Issue.record("\(error)")
            return
        }
        for ((name, anchor, test), row) in zip(Self.valid, rows) {
            let numbers = row.prefix(4).map { $0 as? Double }
            #expect(row[4] as? Bool == false && row[5] as? Bool == false, "\(name): the package warned")
            let shuffledAnchor = anchor.enumerated().sorted { ($0.offset * 7) % anchor.count < ($1.offset * 7) % anchor.count }.map(\.element)
            let reversedTest = Array(test.reversed())
            for (k, method) in [Bjontegaard.Method.pchip, .cubic].enumerated() {
                let rate = try Bjontegaard.bdRate(anchor: shuffledAnchor, test: reversedTest, method: method)
                let psnr = try Bjontegaard.bdPSNR(anchor: shuffledAnchor, test: reversedTest, method: method)
                let packageRate = try #require(numbers[2 * k]), packagePSNR = try #require(numbers[2 * k + 1])
                #expect(abs(rate - packageRate) < 1e-6, "\(name), \(method): BD-rate \(rate) %, package \(packageRate) %")
                #expect(abs(psnr - packagePSNR) < 1e-6, "\(name), \(method): BD-PSNR \(psnr) dB, package \(packagePSNR) dB")
            }
            // The methods differ on every pair by more than the tolerance, so the comparison tells them apart.
            #expect(abs(numbers[0]! - numbers[2]!) > 1e-4, "\(name): pchip and cubic BD-rate agree")
        }
    }

    @Test func refusesExactlyWhereThePackageWarnsOfAShortOverlap() throws {
        // PSNR 30...34 against the same shifted up by s dB: overlap (4 − s) / (4 + s), which is 75 % at s = 4/7
        // (0.5714...); the rates are the same, so the log10-rate ranges overlap whole and BD-PSNR is always taken.
        let anchor: Curve = [(1000, 30), (1700, 31.5), (2600, 32.8), (4000, 34)]
        let shifts = [0.3, 0.5, 0.57, 0.5714, 0.572, 0.58, 0.7, 1, 2, 5]
        let cases = shifts.map { s in (anchor, anchor.map { (rate: $0.rate, psnr: $0.psnr + s) }) }
        let rows: [[Any]]
        do { rows = try Self.package(cases) } catch {
            Issue.record("\(error)")
            return
        }
        var refused = 0
        for ((s, pair), row) in zip(zip(shifts, cases), rows) {
            let warned = try #require(row[4] as? Bool)
            #expect(row[5] as? Bool == false, "shift \(s): BD-PSNR warned")
            for method in Bjontegaard.Method.allCases {
                do {
                    _ = try Bjontegaard.bdRate(anchor: pair.0, test: pair.1, method: method)
                    #expect(!warned, "shift \(s) dB, \(method): the package warned, the lab accepted")
                } catch let e as LabError {
                    #expect(warned, "shift \(s) dB, \(method): the lab refused (\(e.message)), the package did not warn")
                    refused += 1
                }
            }
        }
        // 0.58 and above are refused (6 shifts, 2 methods); below 4/7 accepted.
        #expect(refused == 12)
    }
}
