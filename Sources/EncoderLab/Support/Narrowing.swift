/// Checked narrowing of the lab's integers to the C types of x264's fields: a value that does not fit is an
/// error naming it, never a trap.

/// `value` as a C `int`, or `error` when it is out of range.
func int32(_ value: Int, or error: @autoclosure () -> LabError) throws -> Int32 {
    guard let v = Int32(exactly: value) else { throw error() }
    return v
}

/// `value` as a C `uint32_t`, or `error` when it is negative or out of range.
func uint32(_ value: Int, or error: @autoclosure () -> LabError) throws -> UInt32 {
    guard let v = UInt32(exactly: value) else { throw error() }
    return v
}
