import Foundation

/// An error the lab reports to its user: one line naming the file, key or value and what is wrong.
///
/// `kind` decides the command line's exit status, as sysexits.h names them (see ``LabError/Kind``).
public struct LabError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What sort of failure this is; each maps to one exit status.
    public enum Kind: String, Sendable {
        /// A bad command line, experiment key or setting value (EX_USAGE, 64).
        case usage
        /// Input that exists but is malformed: a bad y4m header, an undecodable clip (EX_DATAERR, 65).
        case data
        /// A missing or unreadable input file (EX_NOINPUT, 66).
        case noInput
        /// An outside program the lab needs that does not answer: the ffmpeg with libvmaf hanging on its `-filters`
        /// check (EX_UNAVAILABLE, 69).
        case unavailable
        /// The lab's or an outside tool's own failure: x264 refused to open, SQLite failed (EX_SOFTWARE, 70).
        case software
        /// An output that cannot be created: a folder that cannot be made or written, a database on a
        /// read-only file system (EX_CANTCREAT, 73).
        case cantCreate
        /// A write that failed part-way: a full disk, an I/O error (EX_IOERR, 74).
        case ioError
        /// A temporary failure worth retrying: a database locked by another process (EX_TEMPFAIL, 75).
        case tempFail
        /// Stopped by SIGINT or SIGTERM (130, as shells report a SIGINT).
        case interrupted

        /// The exit status this kind maps to (sysexits.h).
        public var exitCode: Int32 {
            switch self {
            case .usage: return 64
            case .data: return 65
            case .noInput: return 66
            case .unavailable: return 69
            case .software: return 70
            case .cantCreate: return 73
            case .ioError: return 74
            case .tempFail: return 75
            case .interrupted: return 130
            }
        }
    }

    public let kind: Kind
    /// The one-line message, without the program name.
    public let message: String
    /// What SQLite said when the error came from the database (``DatabaseError``: result code, extended result code,
    /// SQLite's message and the statement); nil for every other error.
    public internal(set) var sqlite: DatabaseError?

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// Two errors are equal when they say the same: the same kind and message (``sqlite`` is detail, not compared).
    public static func == (a: LabError, b: LabError) -> Bool { a.kind == b.kind && a.message == b.message }

    static func usage(_ message: String) -> LabError { LabError(.usage, message) }
    static func data(_ message: String) -> LabError { LabError(.data, message) }
    static func noInput(_ message: String) -> LabError { LabError(.noInput, message) }
    static func unavailable(_ message: String) -> LabError { LabError(.unavailable, message) }
    static func software(_ message: String) -> LabError { LabError(.software, message) }
    static func cantCreate(_ message: String) -> LabError { LabError(.cantCreate, message) }
    static func ioError(_ message: String) -> LabError { LabError(.ioError, message) }
    static func tempFail(_ message: String) -> LabError { LabError(.tempFail, message) }
}
