/// Slice data partitioning (H.264 7.3.2.9, 7.3.2.10): NAL unit types 2, 3 and 4 (partitions A, B and C) carry one
/// slice split in three. Only the Extended profile (`profile_idc` 88, A.2.3) has them; Baseline, Main, High and the
/// profiles built on them forbid them (A.2.1, A.2.2, A.2.4...: "nal_unit_type in the range of 2 to 4, inclusive"
/// shall not be present). In such a stream a type 2 to 4 is most often a damaged header: an RTP depacketizer that
/// masks the FU-A header with the wrong bits gives a slice (1) or IDR slice (5) another type.
public enum DataPartitioning {
    /// The `profile_idc` of the Extended profile, the one profile with data partitioning.
    public static let extendedProfileIdc = 88

    /// Checks the NAL units of an access unit against the profile of the SPS its slices use.
    ///
    /// A partition (type 2, 3, 4) in a stream whose SPS is not of the Extended profile is tolerated
    /// (``ParsePolicy``): it is listed but ignored, as FFmpeg's decoder skips such NAL units ("data partitioning is
    /// not implemented"): ``AccessUnitSplitter`` puts it in the access unit before it, reads no slice header from it
    /// and starts no picture with it. It gets a ``ParseWarning`` (element `nal_unit_type`, the value, the NAL unit's
    /// index), or is refused with the strict policy. Without an SPS (`sps` nil) nothing is checked.
    /// - Parameters:
    ///   - unit: the access unit.
    ///   - sps: the SPS in force for its slices.
    ///   - policy: lenient (warn) or strict (refuse).
    ///   - warnings: gets one warning per such NAL unit.
    /// - Throws: with the strict policy, ``H264Error/invalid(element:reason:byteOffset:)`` naming the NAL unit's
    ///   index (element `nal_unit_type of NAL unit N`, byte offset 0: the NAL unit header).
    public static func check(_ unit: AccessUnit, sps: SequenceParameterSet?, policy: ParsePolicy, warnings: inout [ParseWarning]) throws {
        guard let sps, sps.profileIdc != extendedProfileIdc else { return }
        for (k, nal) in unit.nalUnits.enumerated() where (2...4).contains(nal.nalUnitType.rawValue) {
            let index = unit.nalUnitIndices.lowerBound + k
            let problem = "\(nal.nalUnitType) in a stream of profile_idc \(sps.profileIdc): only the Extended profile (88) has "
                + "data partitioning (H.264 A.2); a damaged NAL unit header (an FU-A type masked wrongly) gives this"
            if policy == .strict {
                throw H264Error.invalid(element: "nal_unit_type of NAL unit \(index)", reason: "\(nal.nalUnitType.rawValue): \(problem)", byteOffset: 0)
            }
            warnings.append(ParseWarning(element: "nal_unit_type", value: Int64(nal.nalUnitType.rawValue), problem: problem,
                                         reason: "listed but ignored, as FFmpeg's decoder ignores it: no slice header read, no picture", nalUnitIndex: index))
        }
    }
}
