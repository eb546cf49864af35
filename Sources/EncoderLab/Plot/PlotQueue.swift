import Foundation

/// Plots whose data files and scripts are written and whose drawing is deferred, so that many runs' plots are drawn
/// by one gnuplot process (a sweep's per-run plots, `enclab plot`'s redraw) instead of two processes a run.
///
/// The one process is safe with user text for the same reason one process a plot is: the driver script it runs
/// holds only the lab's own words and the plots' folder names (run folders, 16 hex digits, relative to the folder
/// gnuplot starts in), and each plot's arguments (its title with clip names and settings) reach the plot's script as
/// ARG1...ARG9 through gnuplot's `call`, written as single-quoted strings (`''` for a quote, gnuplot's only escape
/// there). Arguments come from ``Plots/shown(_:limit:)``, which writes control characters as escapes, so none can end
/// the string's line; a plot whose folder or arguments do not pass these checks is drawn by a process of its own
/// (`gnuplot -c`), as before. Before each plot the driver says `reset`, so no setting of one plot leaks into the
/// next; each script sets its own terminal and output.
public final class PlotQueue: @unchecked Sendable {
    /// One deferred plot: its script is `folder/name.gp`, drawn with `arguments` as ARG1...ARG9.
    public struct Plot: Sendable, Equatable {
        public var folder: String
        public var name: String
        public var arguments: [String]
    }

    private let lock = NSLock()
    private var plots: [Plot] = []

    public init() {}

    /// The plots waiting, in the order they were queued.
    public var pending: [Plot] { lock.lock(); defer { lock.unlock() }; return plots }

    func add(_ plot: Plot) { lock.lock(); plots.append(plot); lock.unlock() }

    /// Queues plots again under another folder: a run's plots written in its temporary folder and drawn after the
    /// folder has its final name.
    public func add(_ others: [Plot], movedFrom old: String, to new: String) {
        lock.lock(); defer { lock.unlock() }
        for var p in others {
            if p.folder == old { p.folder = new }
            plots.append(p)
        }
    }

    /// Empties the queue and returns what was in it.
    public func take() -> [Plot] { lock.lock(); defer { lock.unlock() }; let p = plots; plots = []; return p }

    /// The driver script's line that draws `plot` from the folder gnuplot runs in, its pictures into the folder
    /// `staging` inside the plot's folder (``Plots/makeStaging(in:)``), or nil when `plot` cannot be drawn so: its
    /// folder is not a direct subfolder of `directory` whose name is 1 to 64 letters, digits, `-`, `_` or `.` (not `.`
    /// or `..`), `staging` is not such a name, or an argument holds a control character.
    static func driverLines(_ plot: Plot, directory: String, staging: String) -> String? {
        let folder = URL(fileURLWithPath: plot.folder).standardizedFileURL
        let base = URL(fileURLWithPath: directory).standardizedFileURL
        guard folder.deletingLastPathComponent().path == base.path else { return nil }
        let name = folder.lastPathComponent
        func safe(_ s: String) -> Bool {
            (1...64).contains(s.utf8.count) && s != "." && s != ".."
                && s.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) })
        }
        guard safe(name), safe(staging),
              plot.name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0)) }),
              plot.arguments.allSatisfy({ $0.unicodeScalars.allSatisfy { !CharacterSet.controlCharacters.contains($0) } })
        else { return nil }
        func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        let call = (["call", quoted("\(plot.name).gp")] + plot.arguments.map(quoted)).joined(separator: " ")
        return "cd \(quoted(name))\nreset\n\(Plots.stagingVariable) = \(quoted(staging + "/"))\n\(call)\ncd '..'\n"
    }

    /// Draws every queued plot whose folder is a direct subfolder of `directory` in one gnuplot process started
    /// there, any other one in a process of its own; each plot's pictures are drawn into a new folder of its own
    /// (``Plots/makeStaging(in:)``), checked (``Plots/checkComplete(_:shownAs:)``) and only then moved over the
    /// plot's `NAME.png` and `NAME.svg` (``Plots/place(name:dir:staging:)``): nothing is written through a link
    /// planted there, and a process drawing the same plots meanwhile (`plot` beside a sweep) never removes or checks
    /// this one's files. A plot left incomplete by the shared process (gnuplot stops at the first error) is drawn
    /// again alone, so an error names its own script. The queue is emptied.
    /// - Throws: `.interrupted` after SIGINT/SIGTERM; else the first plot's error after all were tried: `.software`
    ///   when gnuplot is missing or fails,
    ///   `.ioError` for an incomplete file (a full disk), `.cantCreate` when the driver script or a staging folder
    ///   cannot be written. The driver reaches gnuplot as its standard input from a file without a name
    ///   (``unnamedFile(_:)``).
    public func draw(in directory: String) throws {
        let plots = take()
        guard !plots.isEmpty else { return }
        let gnuplot = try Tools.require("gnuplot", package: "gnuplot-nox")
        var driver = ""
        // The plots drawn by the shared process, by index: their staging folders. Any other is drawn alone below.
        var stagings: [Int: String] = [:]
        // Whatever happens, no staging folder is left behind.
        defer { for (i, staging) in stagings { OutputFiles.removeTree("\(plots[i].folder)/\(staging)") } }
        for (i, p) in plots.enumerated() {
            // A folder where none can be made: drawn alone, whose error names it.
            guard let staging = try? Plots.makeStaging(in: p.folder) else { continue }
            guard let lines = Self.driverLines(p, directory: directory, staging: staging) else {
                OutputFiles.removeTree("\(p.folder)/\(staging)")
                continue
            }
            stagings[i] = staging
            driver += lines
        }
        if !driver.isEmpty {
            // Its failure shows below as incomplete files, drawn again alone.
            _ = try Tools.run(gnuplot, [], workingDirectory: directory, standardInput: try Self.unnamedFile(driver))
        }
        // An interruption ended the shared process (``ChildStopper``): drawing each plot again alone would only start
        // processes to be ended in turn.
        try Interruption.check()
        var firstError: Error?
        for (i, p) in plots.enumerated() {
            if let staging = stagings.removeValue(forKey: i), Plots.place(name: p.name, dir: p.folder, staging: staging) == nil { continue }
            do { try Plots.run(gnuplot: gnuplot, name: p.name, dir: p.folder, arguments: p.arguments) } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }

    /// A temporary file holding `text`, opened for reading from its start, whose name is removed at once (before
    /// the text is written): gnuplot reads the driver from it as standard input, and no exit of the lab (a second
    /// signal exits at once, skipping any `defer`) can leave it behind.
    /// - Throws: `.cantCreate` when it cannot be made; `.ioError` when it cannot be written.
    static func unnamedFile(_ text: String) throws -> FileHandle {
        let path = NSTemporaryDirectory() + "enclab-plots-\(getpid())-\(UUID().uuidString).gp"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            let code = errno
            throw OutputFiles.creationError("\(path): cannot create: \(OutputFiles.reason(code))", code)
        }
        unlink(path)
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        try OutputFiles.writeAll(fd, Array(text.utf8), name: "\(path) (unnamed)")
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw LabError.ioError("\(path) (unnamed): cannot seek: \(OutputFiles.reason(errno))") }
        return handle
    }
}
