import Foundation

/// A YUV4MPEG2 stream header (the first line of a .y4m file), restricted to what the lab encodes:
/// 8-bit 4:2:0 progressive or interlaced pictures.
///
/// Source: the YUV4MPEG2 format as written by mjpegtools and read by x264's `input/y4m.c` and FFmpeg's
/// `yuv4mpegdec.c`. Tags: `W` width, `H` height, `F` frame rate as num:den, `I` interlacing (`p`, `t`, `b`,
/// `m`), `A` sample aspect ratio as num:den (`0:0` unknown), `C` chroma format, `X` comment tokens
/// (x264 and FFmpeg read `XCOLORRANGE=FULL|LIMITED`).
public struct Y4MHeader: Equatable, Sendable {
    /// Luma width in samples, as written in the file (before any crop to even).
    public var width: Int
    /// Luma height in samples, as written in the file (before any crop to even).
    public var height: Int
    /// Frame rate numerator (frames per `fpsDen` seconds). x264's default 25:1 when the header has no `F`.
    public var fpsNum: Int
    /// Frame rate denominator.
    public var fpsDen: Int
    /// Sample aspect ratio numerator; 0 with `sarHeight` 0 means unknown (`A0:0` or no `A` tag).
    public var sarWidth: Int
    /// Sample aspect ratio denominator.
    public var sarHeight: Int
    /// Interlacing from the `I` tag: `p` progressive (the default), `t` top field first, `b` bottom field first.
    public var interlacing: Character
    /// The `C` tag as written (`420jpeg`, `420mpeg2`, `420paldv`, `420`), or nil when absent (4:2:0 by default).
    public var chroma: String?
    /// True when an `XCOLORRANGE=FULL` comment token says the samples are full range (0-255).
    public var fullRange: Bool
    /// Every `X` comment token, without the leading `X`, in order.
    public var comments: [String]
    /// Bytes of the header line including its terminating newline.
    public var headerLength: Int

    /// Bytes of one picture's three planes: w*h luma plus two chroma planes of ceil(w/2) x ceil(h/2).
    public var pictureBytes: Int {
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        return width * height + 2 * cw * ch
    }

    /// Parses a header line (without or with its newline).
    ///
    /// - Parameters:
    ///   - line: the bytes of the first line of the file.
    ///   - file: the file name, used only in error messages.
    /// - Throws: ``LabError`` of kind `.data` naming the file and the tag when the magic is not
    ///   `YUV4MPEG2`, `W` or `H` is missing or not an integer from 1 to 16384, `F` or `A` is not `num:den` (each
    ///   part at most 2147483647, x264's int; `F` parts at least 1), the picture is above 139,264 macroblocks, the chroma
    ///   format is not 8-bit 4:2:0, or interlacing is mixed (`Im`), which x264's CLI also cannot encode.
    public init(line: [UInt8], file: String) throws {
        var text = String(decoding: line, as: UTF8.self)
        // "\r\n" is one Character in Swift: drop either ending.
        while let last = text.unicodeScalars.last, last == "\n" || last == "\r" { text.unicodeScalars.removeLast() }
        let tokens = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard tokens.first == "YUV4MPEG2" else {
            throw LabError.data("\(file): not a YUV4MPEG2 file (header starts with \(String(reflecting: String(text.prefix(12)))))")
        }
        var width: Int?, height: Int?
        var fpsNum = 25, fpsDen = 1, sarW = 0, sarH = 0
        var interlacing: Character = "p"
        var chroma: String?
        var fullRange = false
        var comments: [String] = []
        func ratio(_ value: Substring, tag: Character) throws -> (Int, Int) {
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n >= 0, d >= 0 else {
                throw LabError.data("\(file): y4m header tag \(tag) must be num:den, got '\(value)'")
            }
            return (n, d)
        }
        // W and H are capped at 16384 before anything multiplies them: the picture's byte count (w*h*3/2, at most
        // 402,653,184 here) and x264's int fields stay far from overflow, and a header cannot make the lab allocate
        // gigabytes. H.264 itself allows at most sqrt(8 * MaxFS) = 1055 macroblocks (16880 samples) a side at level
        // 6.2 (A.3.1 items g and h), and at most 139,264 macroblocks a frame (checked below), so a legal stream
        // this cap refuses is at most 16880 samples wide or high.
        for token in tokens.dropFirst() {
            guard let tag = token.first else { continue }
            let value = token.dropFirst()
            switch tag {
            case "W":
                guard let w = Int(value), w > 0, w <= 16384 else {
                    throw LabError.data("\(file): y4m header W must be a width of 1 to 16384, got '\(value)'")
                }
                width = w
            case "H":
                guard let h = Int(value), h > 0, h <= 16384 else {
                    throw LabError.data("\(file): y4m header H must be a height of 1 to 16384, got '\(value)'")
                }
                height = h
            case "F":
                let (n, d) = try ratio(value, tag: "F")
                guard n > 0, d > 0, n <= Int(Int32.max), d <= Int(Int32.max) else {
                    throw LabError.data("\(file): y4m header frame rate F\(value) must be num:den with each from 1 to \(Int32.max)")
                }
                (fpsNum, fpsDen) = (n, d)
            case "A":
                (sarW, sarH) = try ratio(value, tag: "A")
                // x264's vui.i_sar_width and i_sar_height are C ints.
                guard sarW <= Int(Int32.max), sarH <= Int(Int32.max) else {
                    throw LabError.data("\(file): y4m header sample aspect ratio A\(value) must be num:den with each from 0 to \(Int32.max)")
                }
            case "I":
                guard let mode = value.first, "ptbm?".contains(mode) else {
                    throw LabError.data("\(file): y4m header interlacing I\(value) is not one of Ip, It, Ib, Im")
                }
                if mode == "m" {
                    throw LabError.data("\(file): y4m header Im (mixed interlacing per frame) is not supported; x264's CLI cannot encode it either")
                }
                interlacing = mode == "?" ? "p" : mode
            case "C":
                let allowed = ["420jpeg", "420mpeg2", "420paldv", "420"]
                guard allowed.contains(String(value)) else {
                    throw LabError.data("\(file): y4m chroma format C\(value) is not supported (8-bit 4:2:0 only: C420jpeg, C420mpeg2, C420paldv, C420)")
                }
                chroma = String(value)
            case "X":
                comments.append(String(value))
                if value.uppercased() == "COLORRANGE=FULL" { fullRange = true }
            default:
                // Unknown tags are ignored, as x264's and FFmpeg's readers do.
                continue
            }
        }
        guard let w = width else { throw LabError.data("\(file): y4m header has no width (W tag)") }
        guard let h = height else { throw LabError.data("\(file): y4m header has no height (H tag)") }
        // H.264's largest picture: 139,264 macroblocks (Table A-1, MaxFS of levels 6 to 6.2).
        let macroblocks = ((w + 15) / 16) * ((h + 15) / 16)
        guard macroblocks <= 139_264 else {
            throw LabError.data("\(file): y4m picture \(w)x\(h) is \(macroblocks) macroblocks, above H.264's largest frame size (139264, Table A-1)")
        }
        self.width = w
        self.height = h
        self.fpsNum = fpsNum
        self.fpsDen = fpsDen
        self.sarWidth = sarW
        self.sarHeight = sarH
        self.interlacing = interlacing
        self.chroma = chroma
        self.fullRange = fullRange
        self.comments = comments
        self.headerLength = line.count + (line.last == 0x0A ? 0 : 1)
    }
}

/// The bytes of one picture, on the heap, allocated once and refilled by ``Y4MReader`` while nothing else holds them
/// (a pool of a few such buffers serves a whole clip, so no fresh pages are zeroed per frame).
///
/// `@unchecked Sendable`: the bytes are written only by the reader that made the buffer, and only while it holds the
/// sole reference (`isKnownUniquelyReferenced`); once a ``Picture`` carries them they are only read.
final class PictureStorage: @unchecked Sendable {
    /// Bytes held: width*height*3/2.
    let count: Int
    let base: UnsafeMutablePointer<UInt8>

    init(count: Int) {
        self.count = count
        base = .allocate(capacity: max(count, 1))
    }

    convenience init(copying bytes: [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeBufferPointer { base.initialize(from: $0.baseAddress!, count: bytes.count) }
    }

    deinit { base.deallocate() }
}

/// One 8-bit 4:2:0 picture: three planes stored contiguously (Y, then Cb, then Cr), each row-major without padding.
public struct Picture: Sendable {
    /// Luma width in samples (even).
    public let width: Int
    /// Luma height in samples (even).
    public let height: Int
    /// Shared, read-only once the picture exists (see ``PictureStorage``).
    let storage: PictureStorage

    /// A picture holding a copy of `bytes`: width*height luma bytes, then two chroma planes of (width/2)*(height/2).
    public init(width: Int, height: Int, bytes: [UInt8]) {
        precondition(bytes.count == width * height * 3 / 2, "picture buffer size does not match its dimensions")
        self.init(width: width, height: height, storage: PictureStorage(copying: bytes))
    }

    init(width: Int, height: Int, storage: PictureStorage) {
        precondition(storage.count == width * height * 3 / 2, "picture buffer size does not match its dimensions")
        self.width = width
        self.height = height
        self.storage = storage
    }

    /// A copy of the picture's width*height*3/2 bytes (luma, then Cb, then Cr). Per-frame code reads them in place
    /// with ``withUnsafeBytes(_:)`` instead.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Calls `body` with the picture's bytes in place (luma, then Cb, then Cr), valid only during the call.
    public func withUnsafeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(start: storage.base, count: storage.count)) }
    }
}

/// Reads YUV4MPEG2 frames one at a time from a file or pipe, so memory stays flat in the clip's length.
///
/// Each picture's bytes go from `read(2)` straight into a buffer of a small pool that the reader refills once the
/// pictures it handed out are released (x264 copies what it is given; the verify stage holds a window of them), so
/// a clip costs one kernel copy per frame and no per-frame allocation.
///
/// Odd widths or heights are cropped to even (the last column or row dropped, and the chroma planes,
/// which are ceil(w/2) x ceil(h/2) in the file, cut to w/2 x h/2); ``crop`` says what was removed.
public final class Y4MReader {
    /// The parsed stream header.
    public let header: Y4MHeader
    /// Width and height of the pictures handed out (even).
    public let width: Int
    public let height: Int
    /// Columns and rows cropped from the right and bottom to make the dimensions even (0 or 1 each).
    public let crop: (right: Int, bottom: Int)
    /// Set when the input ended inside a frame: the bytes after the last whole frame (FRAME line included).
    public private(set) var truncatedBytes: Int?
    /// Frames handed out so far.
    public private(set) var framesRead = 0

    private let handle: FileHandle
    private let name: String
    /// Bytes read but not yet taken: the header and FRAME lines and the first bytes after them.
    private var staged = LineBuffer()
    /// Buffers for pictures (see ``PictureStorage``), reused once only the pool holds them.
    private var pool: [PictureStorage] = []
    /// A whole picture as stored in the file when its size is odd, before the crop copies its even part.
    private var uncropped: PictureStorage?

    /// At most this many buffers are kept for reuse: more than the pictures in flight in a run (the current and the
    /// next, plus the verify stage's window, x264's delay: its look-ahead and B-frames).
    static let poolLimit = 96
    /// Longest header or FRAME line accepted.
    static let lineLimit = 4096

    /// Opens a y4m stream and parses its header.
    ///
    /// - Parameters:
    ///   - handle: the stream, positioned at its first byte; the reader does not close it.
    ///   - name: the file name used in errors.
    /// - Throws: ``LabError`` `.data` for an empty input or a bad header (see ``Y4MHeader/init(line:file:)``);
    ///   `.ioError` when reading fails.
    public init(handle: FileHandle, name: String) throws {
        self.handle = handle
        self.name = name
        var staged = LineBuffer()
        guard let line = try staged.readLine(fd: handle.fileDescriptor, name: name, limit: Self.lineLimit) else {
            throw LabError.data("\(name): empty input, no YUV4MPEG2 header")
        }
        self.header = try Y4MHeader(line: line, file: name)
        self.width = header.width & ~1
        self.height = header.height & ~1
        self.crop = (header.width & 1, header.height & 1)
        self.staged = staged
        guard width > 0, height > 0 else {
            throw LabError.data("\(name): y4m picture \(header.width)x\(header.height) is empty after cropping to even dimensions")
        }
    }

    /// Reads the next picture, or returns nil at the end of the stream.
    ///
    /// A last frame cut short is not an error (x264's CLI encodes the whole frames too): the reader returns
    /// nil and records the partial frame's byte count in ``truncatedBytes``.
    /// - Throws: ``LabError`` `.data` when a frame does not start with `FRAME`; `.ioError` when reading fails.
    public func next() throws -> Picture? {
        guard let line = try staged.readLine(fd: handle.fileDescriptor, name: name, limit: Self.lineLimit) else {
            return nil
        }
        if line.last != 0x0A {
            // The input ended inside a FRAME line: a truncated last frame, not an error.
            truncatedBytes = line.count
            return nil
        }
        let lineLength = line.count
        guard line.starts(with: Array("FRAME".utf8)) else {
            let offset = framesRead
            throw LabError.data("\(name): frame \(offset) does not start with FRAME (y4m stream damaged)")
        }
        let need = header.pictureBytes
        let storage = freeStorage()
        let target: PictureStorage
        if crop == (0, 0) {
            target = storage
        } else {
            if uncropped == nil { uncropped = PictureStorage(count: need) }
            target = uncropped!
        }
        let got = try staged.read(into: target.base, count: need, fd: handle.fileDescriptor, name: name)
        if got < need {
            truncatedBytes = lineLength + got
            return nil
        }
        framesRead += 1
        if crop != (0, 0) { Self.cropToEven(target.base, into: storage.base, width: header.width, height: header.height) }
        return Picture(width: width, height: height, storage: storage)
    }

    /// A buffer for the next picture: one of the pool's that no picture holds any more, else a new one (kept in the
    /// pool while it has room).
    private func freeStorage() -> PictureStorage {
        for k in pool.indices where isKnownUniquelyReferenced(&pool[k]) { return pool[k] }
        let storage = PictureStorage(count: width * height * 3 / 2)
        if pool.count < Self.poolLimit { pool.append(storage) }
        return storage
    }

    /// Copies the even top-left part of a picture with odd dimensions (luma w x h, chroma ceil(w/2) x ceil(h/2)) from
    /// a buffer of the file's picture size into one of the even picture's size.
    static func cropToEven(_ src: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, width w: Int, height h: Int) {
        let ew = w & ~1, eh = h & ~1
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var o = 0
        for y in 0..<eh {
            (out + o).update(from: src + y * w, count: ew)
            o += ew
        }
        for plane in 0..<2 {
            let base = w * h + plane * cw * ch
            for y in 0..<(eh / 2) {
                (out + o).update(from: src + base + y * cw, count: ew / 2)
                o += ew / 2
            }
        }
    }
}

/// The bytes read ahead of a y4m stream's lines: lines are found here, a picture's first bytes are copied out, the
/// rest of a picture is read straight into its buffer.
private struct LineBuffer {
    /// Small reads for lines: a FRAME line is 6 bytes, so little of a picture passes through this buffer.
    static let chunk = 4096
    var bytes: [UInt8] = []
    var start = 0
    var atEnd = false

    /// read(2) on `fd`, retried after EINTR; 0 at the end of input.
    /// - Throws: `.ioError` naming the file when the read fails.
    static func read(fd: Int32, _ into: UnsafeMutableRawPointer, _ count: Int, name: String) throws -> Int {
        while true {
            let n = Glibc.read(fd, into, count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw LabError.ioError("\(name): read failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Reads one line (through its newline); nil at a clean end of input; a line without its newline when the input
    /// ends inside it; throws past `limit` bytes.
    mutating func readLine(fd: Int32, name: String, limit: Int) throws -> [UInt8]? {
        var searchFrom = start
        while true {
            if let nl = bytes[searchFrom...].firstIndex(of: 0x0A) {
                let line = Array(bytes[start...nl])
                start = nl + 1
                return line
            }
            searchFrom = bytes.count
            if bytes.count - start > limit {
                throw LabError.data("\(name): y4m header or FRAME line longer than \(limit) bytes without a newline")
            }
            if atEnd {
                if start < bytes.count {
                    // Bytes after the last frame without a newline: a truncated FRAME line.
                    let line = Array(bytes[start...])
                    start = bytes.count
                    return line
                }
                return nil
            }
            if start > 0 {
                bytes.removeFirst(start)
                searchFrom -= start
                start = 0
            }
            let old = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: Self.chunk))
            let n = try bytes.withUnsafeMutableBytes { try Self.read(fd: fd, $0.baseAddress! + old, Self.chunk, name: name) }
            bytes.removeLast(Self.chunk - n)
            if n == 0 { atEnd = true }
        }
    }

    /// Fills `count` bytes at `target`: first the bytes read ahead, then straight from `fd`.
    /// - Returns: the bytes filled, fewer than `count` only at the end of input.
    mutating func read(into target: UnsafeMutablePointer<UInt8>, count: Int, fd: Int32, name: String) throws -> Int {
        let ahead = min(count, bytes.count - start)
        if ahead > 0 {
            bytes.withUnsafeBufferPointer { target.update(from: $0.baseAddress! + start, count: ahead) }
            start += ahead
        }
        var filled = ahead
        while filled < count && !atEnd {
            let n = try Self.read(fd: fd, target + filled, count - filled, name: name)
            if n == 0 { atEnd = true } else { filled += n }
        }
        return filled
    }
}
