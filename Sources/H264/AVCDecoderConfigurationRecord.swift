/// `AVCDecoderConfigurationRecord` of ISO/IEC 14496-15 section 5.3.3.1 (the body of an `avcC`
/// box, and VideoToolbox's `avcC` sample description extension atom), field names as there.
///
/// Layout (big-endian):
/// ```
/// u8  configurationVersion = 1
/// u8  AVCProfileIndication            (profile_idc of the SPS)
/// u8  profile_compatibility           (the SPS byte holding constraint_set0..5_flag)
/// u8  AVCLevelIndication              (level_idc)
/// u8  '111111'b, lengthSizeMinusOne (2 bits: 0, 1 or 3)
/// u8  '111'b, numOfSequenceParameterSets (5 bits)
///     { u16 sequenceParameterSetLength; sequenceParameterSetNALUnit } × numOfSequenceParameterSets
/// u8  numOfPictureParameterSets
///     { u16 pictureParameterSetLength; pictureParameterSetNALUnit } × numOfPictureParameterSets
/// if AVCProfileIndication is 100, 110, 122 or 144, and bytes remain:
///   u8 '111111'b, chroma_format (2 bits)
///   u8 '11111'b, bit_depth_luma_minus8 (3 bits)
///   u8 '11111'b, bit_depth_chroma_minus8 (3 bits)
///   u8 numOfSequenceParameterSetExt
///      { u16 sequenceParameterSetExtLength; sequenceParameterSetExtNALUnit } × numOfSequenceParameterSetExt
/// ```
/// Parameter set NAL units are stored whole (header byte included, emulation prevention kept).
/// The extension block is optional on parse (many writers omit it) and written by
/// ``serialize()`` when ``chromaFormat`` is set and the profile is one of the four.
public struct AVCDecoderConfigurationRecord: Hashable, Sendable {
    public var configurationVersion: Int
    public var avcProfileIndication: Int
    public var profileCompatibility: Int
    public var avcLevelIndication: Int
    /// 0, 1 or 3: NAL unit length prefixes in samples take `lengthSizeMinusOne + 1` bytes.
    public var lengthSizeMinusOne: Int
    public var sequenceParameterSets: [NALUnit]
    public var pictureParameterSets: [NALUnit]
    /// `chroma_format` of the extension block; nil when the block is absent.
    public var chromaFormat: Int?
    public var bitDepthLumaMinus8: Int?
    public var bitDepthChromaMinus8: Int?
    /// SPS extension NAL units (type 13) of the extension block.
    public var sequenceParameterSetExt: [NALUnit]

    /// `lengthSizeMinusOne + 1`: 1, 2 or 4 bytes.
    public var lengthSize: Int { lengthSizeMinusOne + 1 }

    /// The profiles for which the extension block exists (ISO/IEC 14496-15 5.3.3.1.2).
    public static let profilesWithExtension: Set<Int> = [100, 110, 122, 144]

    /// Builds a record from parameter set NAL units, taking the profile, compatibility and level
    /// bytes from the first SPS and, for profiles 100, 110, 122 and 144, the extension fields from
    /// the parsed first SPS.
    /// - Parameters:
    ///   - sequenceParameterSets: 1...31 SPS NAL units (type 7), each at most 65,535 bytes.
    ///   - pictureParameterSets: 0...255 PPS NAL units (type 8), each at most 65,535 bytes.
    ///   - lengthSize: 1, 2 or 4.
    ///   - sequenceParameterSetExt: SPS extension NAL units (type 13), written in the extension block.
    /// - Throws: ``H264Error`` when there is no SPS, a NAL unit has the wrong type, the first SPS
    ///   does not parse, or `lengthSize` is not 1, 2 or 4.
    public init(sequenceParameterSets: [NALUnit], pictureParameterSets: [NALUnit], lengthSize: Int = 4, sequenceParameterSetExt: [NALUnit] = []) throws {
        try AVCC.checkLengthSize(lengthSize)
        guard let first = sequenceParameterSets.first else {
            throw H264Error.invalid(element: "numOfSequenceParameterSets", reason: "at least one SPS is needed", byteOffset: 0)
        }
        for (i, nal) in sequenceParameterSets.enumerated() where nal.nalUnitType != .sps {
            throw H264Error.invalid(element: "sequenceParameterSetNALUnit[\(i)]", reason: "nal_unit_type \(nal.nalUnitType.rawValue), expected 7", byteOffset: 0)
        }
        for (i, nal) in pictureParameterSets.enumerated() where nal.nalUnitType != .pps {
            throw H264Error.invalid(element: "pictureParameterSetNALUnit[\(i)]", reason: "nal_unit_type \(nal.nalUnitType.rawValue), expected 8", byteOffset: 0)
        }
        let sps = try SequenceParameterSet(rbsp: first.rbsp)
        let raw = first.rbsp
        configurationVersion = 1
        avcProfileIndication = sps.profileIdc
        profileCompatibility = raw.count > 1 ? Int(raw[1]) : 0
        avcLevelIndication = sps.levelIdc
        lengthSizeMinusOne = lengthSize - 1
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.sequenceParameterSetExt = sequenceParameterSetExt
        if Self.profilesWithExtension.contains(sps.profileIdc) {
            chromaFormat = sps.chromaFormatIdc
            bitDepthLumaMinus8 = sps.bitDepthLumaMinus8
            bitDepthChromaMinus8 = sps.bitDepthChromaMinus8
        }
    }

    /// Parses a record.
    /// - Parameter bytes: the record (the `avcC` box payload, without box size and type).
    /// - Throws: ``H264Error/truncated(element:byteOffset:needed:available:)`` naming the field and
    ///   byte offset; ``H264Error/invalid(element:reason:byteOffset:)`` for `configurationVersion`
    ///   other than 1, `lengthSizeMinusOne` 2, or a zero-length parameter set.
    public init(bytes: [UInt8]) throws {
        var p = 0
        func byte(_ name: String) throws -> Int {
            guard p < bytes.count else { throw H264Error.truncated(element: name, byteOffset: p, needed: 1, available: 0) }
            p += 1
            return Int(bytes[p - 1])
        }
        func nalUnits(_ count: Int, _ name: String) throws -> [NALUnit] {
            var out = [NALUnit]()
            for i in 0..<count {
                guard bytes.count - p >= 2 else {
                    throw H264Error.truncated(element: "\(name)Length[\(i)]", byteOffset: p, needed: 2, available: bytes.count - p)
                }
                let length = Int(bytes[p]) << 8 | Int(bytes[p + 1])
                p += 2
                guard length > 0 else {
                    throw H264Error.invalid(element: "\(name)Length[\(i)]", reason: "length 0", byteOffset: p - 2)
                }
                guard bytes.count - p >= length else {
                    throw H264Error.truncated(element: "\(name)NALUnit[\(i)]", byteOffset: p, needed: length, available: bytes.count - p)
                }
                out.append(try NALUnit(bytes: Array(bytes[p..<p + length])))
                p += length
            }
            return out
        }
        configurationVersion = try byte("configurationVersion")
        guard configurationVersion == 1 else {
            throw H264Error.invalid(element: "configurationVersion", reason: "must be 1: \(configurationVersion)", byteOffset: 0)
        }
        avcProfileIndication = try byte("AVCProfileIndication")
        profileCompatibility = try byte("profile_compatibility")
        avcLevelIndication = try byte("AVCLevelIndication")
        lengthSizeMinusOne = try byte("lengthSizeMinusOne") & 3
        guard lengthSizeMinusOne != 2 else {
            throw H264Error.invalid(element: "lengthSizeMinusOne", reason: "must be 0, 1 or 3: 2", byteOffset: 4)
        }
        let numSPS = try byte("numOfSequenceParameterSets") & 31
        sequenceParameterSets = try nalUnits(numSPS, "sequenceParameterSet")
        let numPPS = try byte("numOfPictureParameterSets")
        pictureParameterSets = try nalUnits(numPPS, "pictureParameterSet")
        sequenceParameterSetExt = []
        if Self.profilesWithExtension.contains(avcProfileIndication) && p < bytes.count {
            chromaFormat = try byte("chroma_format") & 3
            bitDepthLumaMinus8 = try byte("bit_depth_luma_minus8") & 7
            bitDepthChromaMinus8 = try byte("bit_depth_chroma_minus8") & 7
            let numExt = try byte("numOfSequenceParameterSetExt")
            sequenceParameterSetExt = try nalUnits(numExt, "sequenceParameterSetExt")
        }
    }

    /// Writes the record, reserved bits set to 1.
    /// - Returns: the record bytes.
    /// - Throws: ``H264Error/valueOutOfRange(element:value:range:)`` for more than 31 SPSs,
    ///   255 PPSs or SPS extensions, or a parameter set longer than 65,535 bytes.
    public func serialize() throws -> [UInt8] {
        var out: [UInt8] = [
            UInt8(truncatingIfNeeded: configurationVersion),
            UInt8(truncatingIfNeeded: avcProfileIndication),
            UInt8(truncatingIfNeeded: profileCompatibility),
            UInt8(truncatingIfNeeded: avcLevelIndication),
            0xFC | UInt8(lengthSizeMinusOne & 3),
        ]
        func append(_ nals: [NALUnit], _ name: String) throws {
            for (i, nal) in nals.enumerated() {
                guard nal.bytes.count <= 0xFFFF else {
                    throw H264Error.valueOutOfRange(element: "\(name)Length[\(i)]", value: Int64(nal.bytes.count), range: 1...0xFFFF)
                }
                out.append(UInt8(nal.bytes.count >> 8))
                out.append(UInt8(nal.bytes.count & 0xFF))
                out += nal.bytes
            }
        }
        guard sequenceParameterSets.count <= 31 else {
            throw H264Error.valueOutOfRange(element: "numOfSequenceParameterSets", value: Int64(sequenceParameterSets.count), range: 0...31)
        }
        out.append(0xE0 | UInt8(sequenceParameterSets.count))
        try append(sequenceParameterSets, "sequenceParameterSet")
        guard pictureParameterSets.count <= 255 else {
            throw H264Error.valueOutOfRange(element: "numOfPictureParameterSets", value: Int64(pictureParameterSets.count), range: 0...255)
        }
        out.append(UInt8(pictureParameterSets.count))
        try append(pictureParameterSets, "pictureParameterSet")
        if Self.profilesWithExtension.contains(avcProfileIndication), let chromaFormat {
            out.append(0xFC | UInt8(chromaFormat & 3))
            out.append(0xF8 | UInt8((bitDepthLumaMinus8 ?? 0) & 7))
            out.append(0xF8 | UInt8((bitDepthChromaMinus8 ?? 0) & 7))
            guard sequenceParameterSetExt.count <= 255 else {
                throw H264Error.valueOutOfRange(element: "numOfSequenceParameterSetExt", value: Int64(sequenceParameterSetExt.count), range: 0...255)
            }
            out.append(UInt8(sequenceParameterSetExt.count))
            try append(sequenceParameterSetExt, "sequenceParameterSetExt")
        }
        return out
    }
}
