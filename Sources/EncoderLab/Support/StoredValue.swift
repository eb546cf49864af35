import Foundation

/// A dynamically typed stored value: what a database column holds (bound to or read from an SQLite statement by
/// Store; read by Analysis as the values it checks and computes). Declared here, outside Store, so that the stages may
/// name it (issue 18: no stage names a Store type).
public enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// A BLOB's bytes (the lab writes none; one in a damaged database is reported, never read as NULL).
    case blob([UInt8])

    public var int: Int64? { if case .integer(let v) = self { return v }; return nil }
    public var double: Double? {
        switch self { case .real(let v): return v; case .integer(let v): return Double(v); default: return nil }
    }
    public var string: String? { if case .text(let v) = self { return v }; return nil }
}

extension SQLValue {
    /// A stored number as every reader of the lab's REAL columns takes it (qp, psnr_*, ssim of a frame; checked here
    /// by kind, in one place): NULL is `.some(nil)`, an integer or a finite real its Double; text, a BLOB and a real
    /// that is not finite are nil, refused. SQLite keeps a REAL overflowing a double as ±Inf (1e999 reads back as
    /// +Inf), which a mean would carry and a plot could not draw; it stores no NaN (a NaN bound as REAL is NULL).
    public var measurement: Double?? {
        switch self {
        case .null: return .some(nil)
        case .integer(let v): return .some(Double(v))
        // Spelled out: `v.isFinite ? v : nil` would be a Double? wrapped again, reading an Inf as NULL.
        case .real(let v): return v.isFinite ? .some(v) : .none
        case .text, .blob: return .none
        }
    }
}
