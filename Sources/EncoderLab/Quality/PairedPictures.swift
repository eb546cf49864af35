import CAVCodec
import Foundation

/// The pictures the lab paired, written for libvmaf: each decoded picture (display order) to `decoded.y4m` and the
/// source picture the lab measured it against to `source.y4m`, both with the same header (size, 25 frames/s,
/// progressive, 4:2:0), so that ffmpeg's framesync pairs them one to one whatever the clip's timing: picture k of one
/// file with picture k of the other. Filled by the verify stage's decoder (``H264StreamDecoder``) as it measures each
/// picture, so nothing is decoded twice; `measure` fills it the same way from a stored stream. A picture the encoder
/// dropped (OpenH264's frame skip) is paired in its input place as a receiver shows it: the previous decoded picture
/// against the dropped picture's source; one dropped before any picture was decoded is not paired (nothing is shown).
final class PairedPictures {
    let folder: String
    let width: Int, height: Int
    private let decodedFile: OutputFile
    private let sourceFile: OutputFile
    /// Pictures written to each file.
    private(set) var decodedCount = 0
    private(set) var sourceCount = 0
    /// A test hook (`ENCLAB_TEST_DROP_FIRST_DECODED=1`): the first decoded picture is not written, a decode shifted
    /// by one, which the frame count of libvmaf's log must catch.
    private var dropNextDecoded = ProcessInfo.processInfo.environment["ENCLAB_TEST_DROP_FIRST_DECODED"] == "1"

    var decodedPath: String { "\(folder)/decoded.y4m" }
    var sourcePath: String { "\(folder)/source.y4m" }

    /// The frame rate both files claim (any one rate: the pairing is by position, the rate only has to agree).
    static let rate = 25

    /// - Parameter folder: a folder of its own (made here), removed by ``remove()``.
    /// - Throws: `.cantCreate` when the folder or the files cannot be made.
    init(folder: String, width: Int, height: Int) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw LabError.cantCreate("\(folder): cannot create the folder of the paired pictures: \(error.localizedDescription)")
        }
        // Absolute: ffmpeg runs in this folder (its logs' fixed names), and reads the files by these paths.
        self.folder = folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
        self.width = width
        self.height = height
        decodedFile = try OutputFile("\(self.folder)/decoded.y4m")
        sourceFile = try OutputFile("\(self.folder)/source.y4m")
        let header = Array("YUV4MPEG2 W\(width) H\(height) F\(Self.rate):1 Ip A1:1 C420jpeg\n".utf8)
        try decodedFile.write(header)
        try sourceFile.write(header)
    }

    /// One pair: a decoded yuv420p frame (rows `linesize` apart) and its source picture (packed planes).
    func write(decoded frame: UnsafePointer<AVFrame>, source: Picture) throws {
        let frameLine = Array("FRAME\n".utf8)
        if dropNextDecoded {
            dropNextDecoded = false
        } else {
            var bytes = frameLine
            bytes.reserveCapacity(frameLine.count + width * height * 3 / 2)
            for (plane, w, h) in [(0, width, height), (1, width / 2, height / 2), (2, width / 2, height / 2)] {
                let base = enclab_frame_plane(frame, Int32(plane))!
                let stride = Int(enclab_frame_linesize(frame, Int32(plane)))
                for row in 0..<h { bytes.append(contentsOf: UnsafeBufferPointer(start: base + row * stride, count: w)) }
            }
            try decodedFile.write(bytes)
            decodedCount += 1
        }
        try sourceFile.write(frameLine + source.bytes)
        sourceCount += 1
    }

    /// One pair for a picture the encoder dropped: the decoded picture a receiver shows again in its place (packed
    /// 4:2:0, as ``H264StreamDecoder`` keeps it) and the dropped picture's source.
    func write(held: [UInt8], source: Picture) throws {
        let frameLine = Array("FRAME\n".utf8)
        try decodedFile.write(frameLine + held)
        decodedCount += 1
        try sourceFile.write(frameLine + source.bytes)
        sourceCount += 1
    }

    /// Closes both files.
    func close() throws {
        try decodedFile.close()
        try sourceFile.close()
    }

    /// Removes the folder and both files.
    func remove() { OutputFiles.removeTree(folder) }
}
