import CAVCodec
import Foundation

/// The pictures the lab paired, streamed to libvmaf while the run goes on: the ffmpeg that scores (``VMAFFFmpeg``)
/// is started when the pairs are made and reads one y4m stream from a pipe on its standard input, no file in between.
/// Each frame of that stream is one pair: the decoded picture (display order) stacked above the source picture the
/// lab measured it against, a W x 2H yuv420p frame (luma rows 0 to H-1 decoded, H to 2H-1 source; each chroma plane
/// likewise with H/2 rows each, so both pictures' sizes must be even); the filter graph crops the two back apart
/// (``LibVMAF/filterGraph(_:threads:width:height:)``). So libvmaf pairs picture k with picture k by construction, whatever the clip's
/// timing, and scores while x264 encodes. Filled by the verify stage's decoder (``H264StreamDecoder``) as it measures
/// each picture, so nothing is decoded twice; `measure` fills it the same way from a stored stream. A picture the
/// encoder dropped (OpenH264's frame skip) is paired in its input place as a receiver shows it: the previous decoded
/// picture against the dropped picture's source; one dropped before any picture was decoded is not paired (nothing
/// is shown).
///
/// Each pair is copied row by row into one buffer kept for the run and written in one go; a full pipe makes the
/// writer wait for libvmaf (the verify stage's thread, or the pipeline's). ffmpeg's standard error goes to
/// `ffmpeg.log` in ``folder``, its logs to `vmaf.json` and `xpsnr.log` there. ``folder`` is made anew for each run
/// (mkdtemp(3), `.quality-XXXXXX`), so two measures of one run do not share it, and nothing of that name is followed
/// or removed but the folder made.
final class PairedPictures {
    let folder: String
    let width: Int, height: Int
    /// The metrics the ffmpeg was started for.
    let metrics: [QualityMetric]
    private let scorer: FedProcess
    /// "FRAME\n" and one stacked pair: reused for every pair.
    private var frame: [UInt8]
    /// Pairs written to the stream.
    private(set) var count = 0
    /// The ffmpeg and its role, for messages.
    var scorerName: String { scorer.name }
    /// A test hook (`ENCLAB_TEST_DROP_FIRST_DECODED=1`): the first decoded picture is not written and each later one is
    /// paired with the source picture before its own, a decode shifted by one, which the frame count of libvmaf's log
    /// must catch (the last source picture is left without a pair).
    private var dropNextDecoded = ProcessInfo.processInfo.environment["ENCLAB_TEST_DROP_FIRST_DECODED"] == "1"
    /// With the test hook: the source picture waiting for the next decoded picture.
    private var shiftedSource: Picture?

    /// The frame rate the stream claims (any one rate: the pairing is within each frame).
    static let rate = 25

    /// Where each plane of each picture starts in ``frame`` (after the FRAME line), and its row length and row count.
    private struct Plane { let decoded: Int, source: Int, packed: Int, width: Int, rows: Int }
    private let planes: [Plane]

    /// Makes a folder of its own in `parent` and starts the ffmpeg that scores, reading the stream's header at once.
    /// - Parameters:
    ///   - parent: an existing folder (the run's) in which ``folder``, `.quality-XXXXXX`, is made by mkdtemp(3) (a new
    ///     name, mode 0700, never an existing file or symlink), removed by ``remove()``: ffmpeg's working directory.
    ///   - width, height: the picture size, both even (the lab's pictures are: odd sizes are cropped on input).
    ///   - metrics: what libvmaf (and the xpsnr filter) score.
    ///   - ffmpeg: the ffmpeg with libvmaf.
    ///   - threads: libvmaf's `n_threads`.
    /// - Throws: `.data` for a size that is not even; `.cantCreate` when the folder cannot be made; `.software` when
    ///   ffmpeg cannot be started or stops reading at once.
    init(inside parent: String, width: Int, height: Int, metrics: [QualityMetric], ffmpeg: String, threads: Int) throws {
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw LabError.data("\(parent): pictures of \(width)x\(height) cannot be paired for libvmaf: both sides must be even (4:2:0, each pair stacked in one frame)")
        }
        var template = Array("\(parent)/.quality-XXXXXX".utf8CString)
        // The name mkdtemp(3) made, read while the buffer it wrote into is still lent.
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            let code = errno
            throw LabError.cantCreate("\(parent)/.quality-XXXXXX: cannot create the folder of the paired pictures: \(String(cString: strerror(code)))")
        }
        let relative = made
        // Absolute: ffmpeg runs in this folder (its logs' fixed names).
        let folder = relative.hasPrefix("/") ? relative : FileManager.default.currentDirectoryPath + "/" + relative
        self.folder = folder
        self.width = width
        self.height = height
        self.metrics = metrics
        let luma = width * height, chroma = luma / 4, line = Self.frameLine.count
        planes = [Plane(decoded: line, source: line + luma, packed: 0, width: width, rows: height),
                  Plane(decoded: line + 2 * luma, source: line + 2 * luma + chroma, packed: luma, width: width / 2, rows: height / 2),
                  Plane(decoded: line + 2 * luma + 2 * chroma, source: line + 2 * luma + 3 * chroma, packed: luma + chroma,
                        width: width / 2, rows: height / 2)]
        frame = Self.frameLine + [UInt8](repeating: 0, count: 3 * luma)
        let (graph, outputs) = LibVMAF.filterGraph(metrics, threads: threads, width: width, height: height)
        var args = ["-hide_banner", "-nostdin", "-v", "error", "-f", "yuv4mpegpipe", "-i", "pipe:0", "-filter_complex", graph]
        for o in outputs { args += ["-map", o, "-f", "null", "-"] }
        // nostdin: ffmpeg's interactive keys; its input is still the pipe (pipe:0).
        // 1 MiB of pipe: fewer waits for both sides than 64 KiB, a pair being 3 bytes per luma sample.
        do {
            scorer = try FedProcess(ffmpeg, args, role: "libvmaf", workingDirectory: folder,
                                    stderrPath: "\(folder)/ffmpeg.log", pipeSize: 1 << 20)
        } catch {
            OutputFiles.removeTree(folder)
            throw error
        }
        let header = Array("YUV4MPEG2 W\(width) H\(2 * height) F\(Self.rate):1 Ip A1:1 C420jpeg\n".utf8)
        do { try header.withUnsafeBytes { try scorer.write($0) } } catch {
            remove()
            throw error
        }
    }

    private static let frameLine = Array("FRAME\n".utf8)

    /// One pair: a decoded yuv420p frame (rows `linesize` apart) and its source picture (packed planes).
    func write(decoded picture: UnsafePointer<AVFrame>, source: Picture) throws {
        try pair(source) { out in
            for (k, p) in planes.enumerated() {
                let base = enclab_frame_plane(picture, Int32(k))!
                let stride = Int(enclab_frame_linesize(picture, Int32(k)))
                for row in 0..<p.rows { (out + p.decoded + row * p.width).update(from: base + row * stride, count: p.width) }
            }
        }
    }

    /// One pair for a picture the encoder dropped: the decoded picture a receiver shows again in its place (packed
    /// 4:2:0, as ``H264StreamDecoder`` keeps it) and the dropped picture's source.
    func write(held: [UInt8], source: Picture) throws {
        precondition(held.count == width * height * 3 / 2, "held picture size does not match the pairs'")
        try pair(source) { out in
            held.withUnsafeBufferPointer { h in
                for p in planes { (out + p.decoded).update(from: h.baseAddress! + p.packed, count: p.width * p.rows) }
            }
        }
    }

    /// Fills the decoded half of ``frame`` with `decoded` and the source half with `source`, and writes the frame.
    private func pair(_ source: Picture, decoded: (UnsafeMutablePointer<UInt8>) -> Void) throws {
        precondition(source.width == width && source.height == height, "source picture size does not match the pairs'")
        var source = source
        if dropNextDecoded {
            dropNextDecoded = false
            shiftedSource = source
            return
        }
        if let earlier = shiftedSource {
            shiftedSource = source
            source = earlier
        }
        try frame.withUnsafeMutableBufferPointer { buffer in
            let out = buffer.baseAddress!
            decoded(out)
            source.withUnsafeBytes { s in
                for p in planes { (out + p.source).update(from: s.baseAddress! + p.packed, count: p.width * p.rows) }
            }
            try scorer.write(UnsafeRawBufferPointer(buffer))
        }
        count += 1
    }

    /// Ends the stream (closes the pipe) and waits for ffmpeg to finish scoring.
    /// - Returns: ffmpeg's exit status (the signal's number when `signaled`), and how it ended and the end of its
    ///   standard error, for messages.
    func finish() -> (status: Int32, signaled: Bool, ending: String, stderr: String) {
        let (status, signaled) = scorer.finish()
        return (status, signaled, scorer.ending(), scorer.stderrTail())
    }

    /// Ends ffmpeg if it still runs (a run that failed) and removes the folder made for it (with what ffmpeg wrote
    /// there; a symlink in it is removed, not followed).
    func remove() {
        scorer.stop()
        OutputFiles.removeTree(folder)
    }
}
