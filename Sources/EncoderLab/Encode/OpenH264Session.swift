internal import COpenH264
import Foundation
import H264

/// libopenh264's version as `WelsGetCodecVersion` reports it, e.g. "2.3.1".
public let openH264Version: String = {
    let v = WelsGetCodecVersion()
    return "\(v.uMajor).\(v.uMinor).\(v.uRevision)"
}()

/// Collects what libopenh264 logs through `ENCODER_OPTION_TRACE_CALLBACK` at `WELS_LOG_WARNING` and above. OpenH264
/// may log from its own threads (iMultipleThreadIdc above 1).
final class OpenH264Log: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func receive(level: Int32, line: String) {
        // OpenH264 prefixes each line with "[OpenH264] this = 0x0x<address>, " (welsCodecTrace.cpp prints "0x%p"): the
        // address changes from run to run, so the lab keeps the text after it ("Warning:[Rc] ...").
        var text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if let r = text.range(of: #"^\[OpenH264\] this = (0x)+[0-9a-fA-F]+, "#, options: .regularExpression) {
            text = String(text[r.upperBound...])
        }
        guard level <= Int32(WELS_LOG_WARNING), !text.isEmpty else { return }
        lock.lock(); defer { lock.unlock() }
        lines.append(text)
    }

    func take() -> [String] {
        lock.lock(); defer { lock.unlock() }
        let l = lines
        lines.removeAll()
        return l
    }

    func last() -> String? {
        lock.lock(); defer { lock.unlock() }
        return lines.last
    }
}

/// One OpenH264 encoder (Cisco's libopenh264 through its C interface, codec_api.h), the only place the lab touches
/// libopenh264: the lab's second ``VideoEncoder``.
///
/// The call order is codec_api.h's: `WelsCreateSVCEncoder`, the trace callback (`ENCODER_OPTION_TRACE_CALLBACK`,
/// its context, `ENCODER_OPTION_TRACE_LEVEL` warning), `GetDefaultParams`, then the lab's fields over the defaults:
/// picture size, `fMaxFrameRate` and layer 0's `fFrameRate` from the clip's nominal rate, one spatial and one temporal
/// layer, `bUseLoadBalancing` false (codec_app_def.h: with it "the result of each run may be different"), then the
/// settings' fields in order (``OpenH264Settings/applied``), layer 0's bit rates from `iTargetBitrate` and
/// `iMaxBitrate`, then `InitializeExt`. Each picture goes to `EncodeFrame` with `uiTimeStamp` = its PTS in
/// milliseconds (truncated, as GStreamer's `openh264enc` and C integer division do), after `ForceIntraFrame(true)` when the
/// timestamps stage forces an IDR. A picture whose `SFrameBSInfo.eFrameType` is `videoFrameTypeSkip` was dropped by the
/// rate control: no coded frame, recorded as skipped (``takeSkipped()``). OpenH264 has no look-ahead and no B-frames:
/// each call returns its picture's frame or none, and DTS = PTS.
public final class OpenH264Session {
    private let encoder: UnsafeMutablePointer<ISVCEncoder?>
    private let log: OpenH264Log
    private let logBox: Unmanaged<OpenH264Log>
    public let resolved: ResolvedParameters
    /// `SEncParamExt` as OpenH264 settled it (read back with `ENCODER_OPTION_SVC_ENCODE_PARAM_EXT`), by field name.
    public let settled: [(name: String, value: String)]
    private let width: Int
    private let height: Int
    private let timebase: Rational
    private var codedCount = 0
    private var skipped: [SkippedFrame] = []
    /// A test hook: with the environment variable `ENCLAB_TEST_OPENH264_TIMESTAMPS` set to a file path, each
    /// `EncodeFrame` call appends a line "INPUT_INDEX UITIMESTAMP" to it, the timestamp as OpenH264 reports it back
    /// (`SFrameBSInfo.uiTimeStamp`, skipped pictures too: the one its rate control used, which is the one given unless
    /// that is not after the last one used, or is 0 after the first picture; then the last + (int)(1000 / fFrameRate):
    /// GetTimestampForRc, ratectl.cpp), so that tests see what reached the library
    /// (Tests/EndToEndTests/OpenH264TimestampTests.swift).
    private let timestampLog: FileHandle? = ProcessInfo.processInfo.environment["ENCLAB_TEST_OPENH264_TIMESTAMPS"].flatMap { path in
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = FileHandle(forWritingAtPath: path)
        _ = try? handle?.seekToEnd()
        return handle
    }

    /// Opens an encoder for `input` with `settings` (resolved: ``EncodeSettings/resolved()`` with `encoder` openh264).
    /// - Throws: `.usage` when InitializeExt refuses the parameters, with OpenH264's own message; `.software` when no
    ///   encoder can be made; `.data` for a picture size or rate OpenH264's int and float fields cannot hold.
    public init(settings: EncodeSettings, input: EncoderInput) throws {
        guard let e = enclab_openh264_create() else { throw LabError.software("WelsCreateSVCEncoder failed: no OpenH264 encoder") }
        encoder = e
        let log = OpenH264Log()
        self.log = log
        logBox = Unmanaged.passRetained(log)
        var initialized = false
        do {
            let callback: WelsTraceCallback = { context, level, text in
                guard let context, let text else { return }
                Unmanaged<OpenH264Log>.fromOpaque(context).takeUnretainedValue().receive(level: level, line: String(cString: text))
            }
            guard enclab_openh264_set_trace(e, callback, logBox.toOpaque(), Int32(WELS_LOG_WARNING)) == 0 else {
                throw LabError.software("OpenH264 refused its trace callback (ENCODER_OPTION_TRACE_CALLBACK)")
            }
            var p = SEncParamExt()
            guard enclab_openh264_default_params(e, &p) == 0 else { throw LabError.software("OpenH264's GetDefaultParams failed") }
            try Self.apply(settings.openh264.applied, input: input, to: &p)
            let status = enclab_openh264_initialize(e, &p)
            guard status == 0 else {
                throw LabError.usage("OpenH264 refused the settings \(settings.openh264.applied.map { "\($0.name)=\($0.value)" }.joined(separator: " ")) (InitializeExt returned \(status)): \(log.last() ?? "no reason given")")
            }
            initialized = true
            var format = Int32(videoFormatI420.rawValue)
            _ = enclab_openh264_set_option(e, ENCODER_OPTION_DATAFORMAT, &format)
            var q = SEncParamExt()
            _ = enclab_openh264_get_option(e, ENCODER_OPTION_SVC_ENCODE_PARAM_EXT, &q)
            settled = Self.fields(of: q)
            let plan = try input.timestamps ?? TimestampPlan.constantRate(fpsNum: input.fpsNum, fpsDen: input.fpsDen)
            timebase = plan.timebase
            let given = Set(settings.openh264.applied.map(\.name))
            resolved = Self.resolved(q, timebase: plan.timebase, fps: try Rational(Int64(input.fpsNum), Int64(input.fpsDen)),
                                     settled: settled, given: given)
        } catch {
            enclab_openh264_destroy(e, initialized)
            logBox.release()
            throw error
        }
        width = input.width
        height = input.height
    }

    deinit {
        try? timestampLog?.close()
        enclab_openh264_destroy(encoder, true)
        logBox.release()
    }

    /// Checks settings completely without encoding: opens (then closes) an encoder. - Throws: as ``init(settings:input:)``.
    public static func validate(_ settings: EncodeSettings, input: EncoderInput) throws {
        _ = try OpenH264Session(settings: settings, input: input)
    }

    /// The lab's fields over OpenH264's defaults (see the type's documentation).
    static func apply(_ fields: [OpenH264Field], input: EncoderInput, to p: inout SEncParamExt) throws {
        guard let w = Int32(exactly: input.width), let h = Int32(exactly: input.height) else {
            throw LabError.data("picture size \(input.width)x\(input.height) does not fit OpenH264's int fields")
        }
        let fps = Float(Double(input.fpsNum) / Double(max(1, input.fpsDen)))
        p.iPicWidth = w
        p.iPicHeight = h
        p.fMaxFrameRate = fps
        p.iSpatialLayerNum = 1
        p.iTemporalLayerNum = 1
        p.bUseLoadBalancing = false
        p.sSpatialLayers.0.iVideoWidth = w
        p.sSpatialLayers.0.iVideoHeight = h
        p.sSpatialLayers.0.fFrameRate = fps
        for f in fields {
            let n = OpenH264Names.number(f.name, f.value)
            let i32 = Int32(clamping: n)
            switch f.name {
            case "iUsageType": p.iUsageType = EUsageType(rawValue: UInt32(n))
            case "iRCMode": p.iRCMode = RC_MODES(rawValue: i32)
            case "iTargetBitrate": p.iTargetBitrate = i32
            case "iMaxBitrate": p.iMaxBitrate = i32
            case "uiIntraPeriod": p.uiIntraPeriod = UInt32(n)
            case "bEnableFrameSkip": p.bEnableFrameSkip = n != 0
            case "iEntropyCodingModeFlag": p.iEntropyCodingModeFlag = i32
            case "iComplexityMode": p.iComplexityMode = ECOMPLEXITY_MODE(rawValue: UInt32(n))
            case "bEnableSceneChangeDetect": p.bEnableSceneChangeDetect = n != 0
            case "iMultipleThreadIdc": p.iMultipleThreadIdc = UInt16(n)
            case "bUseLoadBalancing": p.bUseLoadBalancing = n != 0
            case "uiSliceMode": p.sSpatialLayers.0.sSliceArgument.uiSliceMode = SliceModeEnum(rawValue: UInt32(n))
            case "uiSliceNum": p.sSpatialLayers.0.sSliceArgument.uiSliceNum = UInt32(n)
            case "uiSliceSizeConstraint": p.sSpatialLayers.0.sSliceArgument.uiSliceSizeConstraint = UInt32(n)
            case "iNumRefFrame": p.iNumRefFrame = i32
            case "iMinQp": p.iMinQp = i32
            case "iMaxQp": p.iMaxQp = i32
            case "iDLayerQp": p.sSpatialLayers.0.iDLayerQp = i32
            case "eSpsPpsIdStrategy": p.eSpsPpsIdStrategy = EParameterSetStrategy(rawValue: UInt32(n))
            case "bEnableAdaptiveQuant": p.bEnableAdaptiveQuant = n != 0
            case "bEnableBackgroundDetection": p.bEnableBackgroundDetection = n != 0
            case "bEnableDenoise": p.bEnableDenoise = n != 0
            case "bEnableLongTermReference": p.bEnableLongTermReference = n != 0
            case "iLoopFilterDisableIdc": p.iLoopFilterDisableIdc = i32
            case "bFixRCOverShoot": p.bFixRCOverShoot = n != 0
            case "iIdrBitrateRatio": p.iIdrBitrateRatio = i32
            case "iPaddingFlag": p.iPaddingFlag = i32
            case "bPrefixNalAddingCtrl": p.bPrefixNalAddingCtrl = n != 0
            case "iLtrMarkPeriod": p.iLtrMarkPeriod = UInt32(n)
            case "uiProfileIdc": p.sSpatialLayers.0.uiProfileIdc = EProfileIdc(rawValue: UInt32(n))
            default: preconditionFailure("OpenH264 field \(f.name) has no assignment")
            }
        }
        p.sSpatialLayers.0.iSpatialBitrate = p.iTargetBitrate
        p.sSpatialLayers.0.iMaxSpatialBitrate = p.iMaxBitrate
    }

    /// The settled parameters by field name (codec_app_def.h's), in the header's order; the options string of the run.
    /// `uiSliceSizeConstraint` is listed only in slice mode sizelimited (SM_SIZELIMITED_SLICE), where it applies, so
    /// the options string (and the run key) of every other run is what it was before the field existed.
    static func fields(of q: SEncParamExt) -> [(name: String, value: String)] {
        let l = q.sSpatialLayers.0
        let sizeLimit: [(name: String, value: String)] = l.sSliceArgument.uiSliceMode == SM_SIZELIMITED_SLICE
            ? [("uiSliceSizeConstraint", "\(l.sSliceArgument.uiSliceSizeConstraint)")] : []
        return [("iUsageType", "\(q.iUsageType.rawValue)"), ("iPicWidth", "\(q.iPicWidth)"), ("iPicHeight", "\(q.iPicHeight)"),
                ("iTargetBitrate", "\(q.iTargetBitrate)"), ("iRCMode", "\(q.iRCMode.rawValue)"), ("fMaxFrameRate", "\(q.fMaxFrameRate)"),
                ("iTemporalLayerNum", "\(q.iTemporalLayerNum)"), ("iSpatialLayerNum", "\(q.iSpatialLayerNum)"),
                ("uiProfileIdc", "\(l.uiProfileIdc.rawValue)"), ("uiLevelIdc", "\(l.uiLevelIdc.rawValue)"), ("iDLayerQp", "\(l.iDLayerQp)"),
                ("uiSliceMode", "\(l.sSliceArgument.uiSliceMode.rawValue)"), ("uiSliceNum", "\(l.sSliceArgument.uiSliceNum)"),
                ("iComplexityMode", "\(q.iComplexityMode.rawValue)"), ("uiIntraPeriod", "\(q.uiIntraPeriod)"),
                ("iNumRefFrame", "\(q.iNumRefFrame)"), ("eSpsPpsIdStrategy", "\(q.eSpsPpsIdStrategy.rawValue)"),
                ("bPrefixNalAddingCtrl", "\(q.bPrefixNalAddingCtrl ? 1 : 0)"), ("iPaddingFlag", "\(q.iPaddingFlag)"),
                ("iEntropyCodingModeFlag", "\(q.iEntropyCodingModeFlag)"), ("bEnableFrameSkip", "\(q.bEnableFrameSkip ? 1 : 0)"),
                ("iMaxBitrate", "\(q.iMaxBitrate)"), ("iMaxQp", "\(q.iMaxQp)"), ("iMinQp", "\(q.iMinQp)"),
                ("bEnableLongTermReference", "\(q.bEnableLongTermReference ? 1 : 0)"), ("iLtrMarkPeriod", "\(q.iLtrMarkPeriod)"),
                ("iMultipleThreadIdc", "\(q.iMultipleThreadIdc)"), ("bUseLoadBalancing", "\(q.bUseLoadBalancing ? 1 : 0)"),
                ("iLoopFilterDisableIdc", "\(q.iLoopFilterDisableIdc)"), ("bEnableDenoise", "\(q.bEnableDenoise ? 1 : 0)"),
                ("bEnableBackgroundDetection", "\(q.bEnableBackgroundDetection ? 1 : 0)"),
                ("bEnableAdaptiveQuant", "\(q.bEnableAdaptiveQuant ? 1 : 0)"), ("bEnableSceneChangeDetect", "\(q.bEnableSceneChangeDetect ? 1 : 0)"),
                ("bFixRCOverShoot", "\(q.bFixRCOverShoot ? 1 : 0)"), ("iIdrBitrateRatio", "\(q.iIdrBitrateRatio)")] + sizeLimit
    }

    /// The lab's record of the settled parameters in the names every run has (``ResolvedParameters``): `rc_method` abr
    /// for OpenH264's bitrate, timestamp and bufferbased modes (each holds `iTargetBitrate`), cqp for off, quality for
    /// quality; `bitrate_kbps` = `iTargetBitrate` ÷ 1000; `keyint` = `uiIntraPeriod`; `scenecut` 1 or 0 for
    /// `bEnableSceneChangeDetect`; no B-frames; `cabac` from `iEntropyCodingModeFlag`; `threads` = `iMultipleThreadIdc`.
    /// The options string is every settled field as `name=value`, space-separated.
    static func resolved(_ q: SEncParamExt, timebase: Rational, fps: Rational, settled: [(name: String, value: String)],
                         given: Set<String>) -> ResolvedParameters {
        let method: String
        switch q.iRCMode {
        case RC_BITRATE_MODE, RC_TIMESTAMP_MODE, RC_BUFFERBASED_MODE, RC_BITRATE_MODE_POST_SKIP: method = "abr"
        case RC_OFF_MODE: method = "cqp"
        default: method = "quality"
        }
        var r = ResolvedParameters(
            rcMethod: method, qp: Int(q.sSpatialLayers.0.iDLayerQp), crf: 0, bitrateKbps: Int(q.iTargetBitrate) / 1000,
            vbvMaxrateKbps: q.iMaxBitrate > 0 ? Int(q.iMaxBitrate) / 1000 : 0, vbvBufsizeKbit: 0, vbvInit: 0, nalHrd: 0, filler: false,
            keyint: Int(q.uiIntraPeriod), minKeyint: 0, scenecut: q.bEnableSceneChangeDetect ? 1 : 0, bframes: 0, bPyramid: 0,
            openGop: false, intraRefresh: false, cabac: q.iEntropyCodingModeFlag != 0, ref: Int(q.iNumRefFrame),
            threads: Int(q.iMultipleThreadIdc), levelIdc: Int(q.sSpatialLayers.0.uiLevelIdc.rawValue), timebase: timebase,
            frameRate: fps, psnr: false, ssim: false,
            optionsString: settled.map { "\($0.name)=\($0.value)" }.joined(separator: " "), provenance: [:])
        let from: [String: String] = ["rc_method": "iRCMode", "bitrate_kbps": "iTargetBitrate", "vbv_maxrate_kbps": "iMaxBitrate",
                                      "keyint": "uiIntraPeriod", "scenecut": "bEnableSceneChangeDetect", "cabac": "iEntropyCodingModeFlag",
                                      "ref": "iNumRefFrame", "threads": "iMultipleThreadIdc", "qp": "iDLayerQp"]
        for name in ResolvedParameters.fields(of: r).keys {
            r.provenance[name] = from[name].map { given.contains($0) ? "given" : "openh264" } ?? "openh264"
        }
        return r
    }

    /// OpenH264's warnings and errors logged since the last call.
    public func takeWarnings() -> [String] { log.take() }

    /// The pictures the encoder dropped since the last call (``SkippedFrame``).
    public func takeSkipped() -> [SkippedFrame] {
        let s = skipped
        skipped.removeAll()
        return s
    }

    /// OpenH264 holds no frames: each picture's frame comes out of its own `EncodeFrame` call.
    public var delayedFrames: Int { 0 }

    /// A PTS in ticks of `timebase` as OpenH264's `uiTimeStamp`: milliseconds, truncated toward zero (C's division;
    /// GStreamer's `pts / GST_MSECOND`).
    static func milliseconds(ticks: Int64, timebase: Rational) -> Int64 {
        Int64(clamping: Int128(ticks) * Int128(timebase.numerator) * 1000 / Int128(timebase.denominator))
    }

    /// Encodes a picture from the timestamps stage; nil (flush) returns nil, as OpenH264 holds none.
    /// - Returns: the coded frame, or nil when OpenH264 skipped the picture (then in ``takeSkipped()``).
    /// - Throws: `.software` when EncodeFrame fails or reports a frame type the lab does not know.
    public func encode(_ timed: TimedPicture?) throws -> EncodedFrame? {
        guard let timed else { return nil }
        let picture = timed.picture
        precondition(picture.width == width && picture.height == height, "picture size differs from the session's")
        if timed.forcedType == .idr || timed.forcedType == .i {
            _ = enclab_openh264_force_idr(encoder)
        }
        let ms = Self.milliseconds(ticks: timed.pts, timebase: timebase)
        var info = SFrameBSInfo()
        let status = picture.withUnsafeBytes { buf -> Int32 in
            var source = SSourcePicture()
            source.iColorFormat = Int32(videoFormatI420.rawValue)
            let w = Int32(width)
            source.iStride = (w, w / 2, w / 2, 0)
            let base = UnsafeMutablePointer(mutating: buf.baseAddress!)
            let luma = width * height
            source.pData = (base, base + luma, base + luma + luma / 4, nil)
            source.iPicWidth = w
            source.iPicHeight = Int32(height)
            source.uiTimeStamp = ms
            return enclab_openh264_encode(encoder, &source, &info)
        }
        guard status == 0 else {
            throw LabError.software("OpenH264's EncodeFrame failed with \(status) at input frame \(timed.index): \(log.last() ?? "no reason given")")
        }
        if let timestampLog { try? timestampLog.write(contentsOf: Data("\(timed.index) \(info.uiTimeStamp)\n".utf8)) }
        let type: FrameType
        switch info.eFrameType {
        case videoFrameTypeSkip:
            skipped.append(SkippedFrame(inputIndex: timed.index, pts: timed.pts))
            return nil
        case videoFrameTypeIDR: type = .idr
        case videoFrameTypeI: type = .i
        case videoFrameTypeP: type = .p
        default:
            throw LabError.software("OpenH264 returned frame type \(info.eFrameType.rawValue) (EVideoFrameType) for input frame \(timed.index)")
        }
        var written: [WrittenNAL] = []
        withUnsafeBytes(of: &info.sLayerInfo) { layers in
            let layerInfo = layers.bindMemory(to: SLayerBSInfo.self)
            for l in 0..<Int(info.iLayerNum) {
                let layer = layerInfo[l]
                guard let buffer = layer.pBsBuf, let lengths = layer.pNalLengthInByte else { continue }
                var offset = 0
                for k in 0..<Int(layer.iNalCount) {
                    let length = Int(lengths[k])
                    let bytes = Array(UnsafeBufferPointer(start: buffer + offset, count: length))
                    offset += length
                    let header = Pipeline.startCodeLength(bytes)
                    let first = bytes.count > header ? bytes[header] : 0
                    written.append(WrittenNAL(type: Int(first & 0x1F), refIdc: Int((first >> 5) & 3), bytes: bytes))
                }
            }
        }
        // No QP from the encoder: OpenH264's only per-frame QP is SEncoderStatistics.uiAverageFrameQP, and 2.3.1's
        // ENCODER_OPTION_GET_STATISTICS left it 0 after every frame when tried. The pipeline fills in the decoded mean
        // macroblock QP after the verify stage's decode (NULL without it).
        let qp = 0.0
        let frame = EncodedFrame(codedIndex: codedCount, displayIndex: timed.index, type: type, keyframe: type == .idr,
                                 pts: timed.pts, dts: timed.pts, qp: qp, psnrY: nil, psnrU: nil, psnrV: nil, psnrAvg: nil,
                                 ssim: nil, nals: written)
        codedCount += 1
        return frame
    }
}
