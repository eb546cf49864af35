import Foundation
@testable import EncoderLab
import EnclabTestSupport

/// Independent witnesses for the lab's numbers: ffprobe, ffmpeg (trace_headers, ssim and psnr filters) and
/// the x264 CLI, run as separate processes on the written stream.
enum Witness {
    struct Output { var status: Int32; var stdout: String; var stderr: String }

    static func run(_ tool: String, _ arguments: [String]) throws -> Output {
        guard let path = Tools.find(tool) else { throw LabError.software("\(tool) is not installed (scripts/setup.sh installs it)") }
        let r = try Tools.run(path, arguments)
        return Output(status: r.status, stdout: String(decoding: r.stdout, as: UTF8.self),
                      stderr: String(decoding: r.stderr, as: UTF8.self))
    }

    /// The x264 CLI as the witness of the lab's bytes: `x264 --asm CAPS ARGUMENTS`, CAPS the CPU capabilities the
    /// CLI detects here minus every AVX-512 one (``x264AsmWithoutAVX512``). The lab turns x264's AVX-512 path off
    /// (``X264Session``): with it, the CLI's own bytes depend on memory x264 never set, so a byte-identity comparison
    /// with the CLI holds only without it. Every comparison with the CLI goes through here.
    static func x264(_ arguments: [String]) throws -> Output {
        try run("x264", ["--asm", try x264AsmWithoutAVX512.get()] + arguments)
    }

    /// The `--asm` value: the names x264 prints after "using cpu capabilities: " when it encodes one frame here,
    /// those starting with AVX512 left out, joined by commas (as bench/harness.sh does).
    static let x264AsmWithoutAVX512: Result<String, LabError> = {
        let dir = NSTemporaryDirectory() + "enclab-asm-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            // One grey 16x16 I420 frame: the header line, the FRAME line, 256 + 2 x 64 bytes.
            var y4m = Data("YUV4MPEG2 W16 H16 F25:1 Ip A1:1 C420jpeg\nFRAME\n".utf8)
            y4m.append(Data(repeating: 128, count: 16 * 16 + 2 * 8 * 8))
            try y4m.write(to: URL(fileURLWithPath: dir + "/grey.y4m"))
            let probe = try run("x264", ["--frames", "1", "-o", "/dev/null", dir + "/grey.y4m"])
            guard let line = probe.stderr.split(separator: "\n").first(where: { $0.contains("using cpu capabilities: ") }),
                  let at = line.range(of: "using cpu capabilities: ") else {
                return .failure(LabError.software("x264 printed no 'using cpu capabilities' line: \(probe.stderr)"))
            }
            let names = line[at.upperBound...].split(separator: " ").map(String.init).filter { !$0.hasPrefix("AVX512") }
            return names.isEmpty ? .failure(LabError.software("x264 detected no CPU capability: \(line)")) : .success(names.joined(separator: ","))
        } catch {
            return .failure(error as? LabError ?? LabError.software("\(error)"))
        }
    }()

    /// Runs the built `enclab` in `dir`, as a user runs it (``TestSupport/enclab(_:in:environment:limit:)``).
    static func enclab(_ arguments: [String], in dir: String, environment: [String: String] = [:]) throws -> Output {
        let r = try TestSupport.enclab(arguments, in: dir, environment: environment)
        return Output(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    /// A path as ffmpeg and ffprobe must be given it: `file:` and the absolute path, so that no part of a name
    /// is read as a protocol (written here apart from the lab's own helper).
    static func file(_ path: String) -> String {
        "file:" + (path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
    }

    /// Frames in a file's first video stream as ffprobe counts them by decoding it (`-count_frames`).
    static func frameCount(_ path: String) throws -> Int? {
        let out = try run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                      "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file(path)])
        return Int(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// Packet sizes in decode order, as ffprobe's h264 parser splits the raw stream.
    static func packetSizes(_ stream: String) throws -> [Int] {
        let out = try run("ffprobe", ["-v", "error", "-show_packets", "-show_entries", "packet=size", "-of", "json", file(stream)])
        let packets = json(out.stdout)["packets"] as? [[String: Any]] ?? []
        return packets.compactMap { ($0["size"] as? String).flatMap(Int.init) ?? ($0["size"] as? Int) }
    }

    /// Picture types (I, P, B) of the decoded frames, in display order.
    static func pictureTypes(_ stream: String) throws -> [String] {
        let out = try run("ffprobe", ["-v", "error", "-show_frames", "-show_entries", "frame=pict_type", "-of", "json", file(stream)])
        let frames = json(out.stdout)["frames"] as? [[String: Any]] ?? []
        return frames.compactMap { $0["pict_type"] as? String }
    }

    /// One NAL unit as `ffmpeg -bsf:v trace_headers` prints it.
    struct TracedNAL { var type: Int; var refIdc: Int; var values: [String: Int] }

    /// NAL units per packet (decode order) from trace_headers, plus the PPS's pic_init_qp_minus26.
    static func traceHeaders(_ stream: String) throws -> (packets: [[TracedNAL]], picInitQPMinus26: Int?) {
        let out = try run("ffmpeg", ["-hide_banner", "-nostats", "-i", file(stream), "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        var packets: [[TracedNAL]] = []
        var current: [TracedNAL]?
        var picInit: Int?
        for raw in out.stderr.split(separator: "\n") {
            guard let bracket = raw.range(of: "] ") else { continue }
            let line = raw[bracket.upperBound...]
            if line.hasPrefix("Packet:") {
                if let c = current { packets.append(c) }
                current = []
                continue
            }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4, fields[fields.count - 2] == "=", let value = Int(fields[fields.count - 1]) else { continue }
            let name = String(fields[1])
            if name == "nal_ref_idc" {
                // nal_ref_idc comes before nal_unit_type: start a new NAL unit.
                if current != nil { current!.append(TracedNAL(type: -1, refIdc: value, values: [:])) }
            } else if current != nil, !current!.isEmpty {
                if name == "nal_unit_type" { current![current!.count - 1].type = value }
                current![current!.count - 1].values[name] = current![current!.count - 1].values[name] ?? value
            }
            if name == "pic_init_qp_minus26" { picInit = value }
        }
        if let c = current { packets.append(c) }
        return (packets, picInit)
    }

    /// Per-frame statistics of an ffmpeg comparison filter (`ssim` or `psnr`) between a stream and its source,
    /// in display order: each line's `key:value` pairs.
    static func filterStats(_ filter: String, stream: String, source: String) throws -> [[String: Double]] {
        let stats = NSTemporaryDirectory() + "/enclab-\(filter)-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: stats) }
        let out = try run("ffmpeg", ["-hide_banner", "-nostats", "-v", "error", "-i", file(stream), "-i", file(source),
                                     "-lavfi", "[0:v][1:v]\(filter)=stats_file=\(stats)", "-f", "null", "-"])
        guard out.status == 0 else { throw LabError.software("ffmpeg \(filter) failed: \(out.stderr)") }
        let text = (try? String(contentsOfFile: stats, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            var values: [String: Double] = [:]
            for token in line.split(separator: " ") {
                let kv = token.split(separator: ":", maxSplits: 1)
                if kv.count == 2, let v = Double(kv[1]) { values[String(kv[0])] = v }
            }
            return values
        }
    }
}

/// A scratch folder per test, removed when the value is released.
final class Scratch {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "enclab-test-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { "\(path)/\(name)" }
}

/// Encodes a clip through the lab as a user does (`enclab encode`, the built binary, in a process of its own) and
/// returns the run's outcome as stored and the store.
///
/// A process of its own, as users run it. (libx264's AVX-512 mbtree code once made encodes after other encodes in
/// one process give other bytes; the lab now turns AVX-512 off, see docs/verification.md, "How the numbers are checked" and
/// `RepeatabilityTests`.)
func labEncode(_ clip: String, _ flags: [String], in scratch: Scratch) throws -> (RunOutcome, LabStore) {
    let r = try Witness.enclab(["encode", clip, "--db", scratch.file("lab.sqlite"), "--out", scratch.file("out")] + flags, in: scratch.path)
    guard r.status == 0 else {
        throw LabError(.software, "enclab encode \(flags.joined(separator: " ")) exited \(r.status): \(r.stderr)")
    }
    let lab = try Runner(databasePath: scratch.file("lab.sqlite"), outDirectory: scratch.file("out"))
    guard let row = try lab.store.runs().last else { throw LabError(.software, "enclab encode recorded no run") }
    return (try lab.outcome(of: row, alreadyDone: false), lab.store)
}

/// The repository root (for fixtures/).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
