import Foundation

/// The ffmpeg that scores `--metrics`: one built with libvmaf (and the `xpsnr` filter). Debian 12 has no libvmaf, so
/// it is the static ffmpeg of the `imageio-ffmpeg` PyPI wheel in the lab's venv (scripts/setup.sh); Debian's ffmpeg
/// stays the lab's decoder and prober. docs/quality-metrics.md.
public enum VMAFFFmpeg {
    /// What scripts/setup.sh installs, and how a user installs it alone.
    public static let package = "imageio-ffmpeg==0.8.1"
    /// The environment variable naming the binary.
    public static let environmentVariable = "ENCLAB_VMAF_FFMPEG"

    /// The venv's imageio_ffmpeg binaries: `$ENCLAB_VENV` (default /opt/enclab-venv)
    /// `/lib/python3*/site-packages/imageio_ffmpeg/binaries/ffmpeg-*`, the last by name when there are several.
    static func venvBinary(_ environment: [String: String]) -> String? {
        let venv = environment["ENCLAB_VENV"].flatMap { $0.isEmpty ? nil : $0 } ?? "/opt/enclab-venv"
        let fm = FileManager.default
        var found: [String] = []
        for python in ((try? fm.contentsOfDirectory(atPath: "\(venv)/lib")) ?? []).sorted() where python.hasPrefix("python3") {
            let binaries = "\(venv)/lib/\(python)/site-packages/imageio_ffmpeg/binaries"
            for name in ((try? fm.contentsOfDirectory(atPath: binaries)) ?? []).sorted() where name.hasPrefix("ffmpeg-") {
                if fm.isExecutableFile(atPath: "\(binaries)/\(name)") { found.append("\(binaries)/\(name)") }
            }
        }
        return found.last
    }

    /// How long the `-filters` check may take, in seconds (an ffmpeg answers it at once; a program that hangs, e.g. a
    /// wrapper script waiting on something, would block the lab for ever).
    public static let probeTimeLimit: Double = 30

    /// Finds the ffmpeg by the stated rule: `flag` (`--vmaf-ffmpeg PATH`), else `$ENCLAB_VMAF_FFMPEG`, else the
    /// venv's imageio_ffmpeg binary (``venvBinary(_:)``); then checks that its `-filters` lists `libvmaf` (and
    /// `xpsnr` when `needsXPSNR`).
    /// - Parameter timeLimit: how long the `-filters` check may take (``probeTimeLimit``; tests give less).
    /// - Throws: `.software` (70) naming where it looked, the package and the command that installs it;
    ///   `.unavailable` (69) naming the program and the command when it has not answered within `timeLimit` (it is
    ///   ended, with its process group).
    public static func find(flag: String?, needsXPSNR: Bool = false,
                            environment: [String: String] = ProcessInfo.processInfo.environment,
                            timeLimit: Double = probeTimeLimit) throws -> String {
        let venv = environment["ENCLAB_VENV"].flatMap { $0.isEmpty ? nil : $0 } ?? "/opt/enclab-venv"
        let install = "install it with 'bash scripts/setup.sh' or '\(venv)/bin/python -m pip install \(package)', or name an ffmpeg built with --enable-libvmaf by --vmaf-ffmpeg PATH or \(environmentVariable)"
        let path: String
        let source: String
        if let flag, !flag.isEmpty {
            path = flag; source = "--vmaf-ffmpeg"
        } else if let env = environment[environmentVariable], !env.isEmpty {
            path = env; source = environmentVariable
        } else if let venvPath = venvBinary(environment) {
            path = venvPath; source = "the venv \(venv)"
        } else {
            throw LabError.software("--metrics needs an ffmpeg with libvmaf: none in \(venv)/lib/python3*/site-packages/imageio_ffmpeg/binaries (the PyPI package \(package)); \(install)")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw LabError.software("\(path) (from \(source)) is a folder, not a program; --metrics needs an ffmpeg with libvmaf: \(install)")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw LabError.software("\(path) (from \(source)) is not an executable file; --metrics needs an ffmpeg with libvmaf: \(install)")
        }
        let listed: Tools.Result
        let check = ["-hide_banner", "-nostdin", "-filters"]
        do {
            listed = try Tools.run(path, check, timeLimit: timeLimit)
        } catch {
            // Foundation says only "NSCocoaErrorDomain error 256" for a file exec(2) refuses (ENOEXEC: a text file with no #! line).
            throw LabError.software("\(path) (from \(source)) could not be run as a program; --metrics needs an ffmpeg with libvmaf: \(install)")
        }
        if listed.timedOut {
            let seconds = timeLimit == timeLimit.rounded() ? String(Int(timeLimit)) : String(timeLimit)
            throw LabError.unavailable("\(path) (from \(source)) did not answer within \(seconds) s: '\(([path] + check).joined(separator: " "))' "
                                       + "(the check for its libvmaf filter) was still running and was ended; --metrics needs an ffmpeg with libvmaf that answers: \(install)")
        }
        let filters = Set(String(decoding: listed.stdout, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            return words.count >= 2 ? String(words[1]) : nil
        })
        guard listed.status == 0, filters.contains("libvmaf") else {
            throw LabError.software("\(path) (from \(source)) has no libvmaf filter ('-filters' does not list it); \(install)")
        }
        if needsXPSNR && !filters.contains("xpsnr") {
            throw LabError.software("\(path) (from \(source)) has no xpsnr filter (FFmpeg 7.1 or later has one); \(install)")
        }
        return path
    }
}
