import Foundation
import H264

/// A seeded generator of small 8-bit 4:2:0 test clips written as y4m: a moving texture, a hard scene cut
/// to a different texture, and a static stretch at the end. The same parameters always give the same bytes.
public struct SyntheticClip: Sendable {
    public var width: Int
    public var height: Int
    /// Total frames; the cut falls at `frames / 2`, the last quarter is static.
    public var frames: Int
    public var fpsNum: Int
    public var fpsDen: Int
    public var seed: UInt64
    /// Extra header tokens written after the standard ones (e.g. `["A128:117"]`).
    public var extraTags: [String]
    /// The y4m `I` tag: `p` progressive, `t` top field first, `b` bottom field first.
    public var interlacing: Character = "p"

    public init(width: Int = 96, height: Int = 64, frames: Int = 30, fpsNum: Int = 25, fpsDen: Int = 1,
                seed: UInt64 = 1, extraTags: [String] = []) {
        self.width = width; self.height = height; self.frames = frames
        self.fpsNum = fpsNum; self.fpsDen = fpsDen; self.seed = seed; self.extraTags = extraTags
    }

    /// Frame index of the hard scene cut.
    public var cutFrame: Int { frames / 2 }
    /// First frame of the static stretch (it repeats its predecessor exactly).
    public var staticFrom: Int { frames - frames / 4 }

    /// The y4m header line, with its newline.
    public var headerLine: String {
        (["YUV4MPEG2", "W\(width)", "H\(height)", "F\(fpsNum):\(fpsDen)", "I\(interlacing)", "C420jpeg"] + extraTags)
            .joined(separator: " ") + "\n"
    }

    /// The planes of frame `index` (luma w*h, then two chroma planes of ceil(w/2)*ceil(h/2)).
    public func picture(_ index: Int) -> [UInt8] {
        let t = min(index, staticFrom - 1)
        let scene = index >= cutFrame ? 1 : 0
        var rng = SplitMix64(seed: seed &+ UInt64(scene) &* 0x9E37_79B9)
        // A random tile of texture, tiled and panned over time.
        let tile = 32
        var texture = [UInt8](repeating: 0, count: tile * tile)
        for i in texture.indices { texture[i] = UInt8(truncatingIfNeeded: rng.next() >> 56) }
        let dx = scene == 0 ? 2 * t : -t, dy = scene == 0 ? t : 2 * t
        let cw = (width + 1) / 2, ch = (height + 1) / 2
        var out = [UInt8](repeating: 0, count: width * height + 2 * cw * ch)
        for y in 0..<height {
            for x in 0..<width {
                let tx = ((x + dx) % tile + tile) % tile, ty = ((y + dy) % tile + tile) % tile
                // Smooth gradient plus texture, so both flat and detailed areas exist.
                let base = scene == 0 ? (x * 255 / max(width, 1)) : (y * 255 / max(height, 1))
                out[y * width + x] = UInt8((base + Int(texture[ty * tile + tx])) / 2)
            }
        }
        for plane in 0..<2 {
            let offset = width * height + plane * cw * ch
            for y in 0..<ch {
                for x in 0..<cw {
                    let v = plane == 0 ? 128 + ((x + dx / 2) % 16) * 3 - 24 : 128 - ((y + dy / 2) % 16) * 2 + 16 * scene
                    out[offset + y * cw + x] = UInt8(clamping: v)
                }
            }
        }
        return out
    }

    /// Writes the clip to `path` as y4m.
    /// - Throws: `.software` when the file cannot be written.
    public func write(to path: String) throws {
        var data = Data(headerLine.utf8)
        for i in 0..<frames {
            data.append(contentsOf: Array("FRAME\n".utf8))
            data.append(contentsOf: picture(i))
        }
        do { try data.write(to: Paths.fileURL(path)) } catch {
            throw LabError.software("\(path): cannot write synthetic clip: \(error.localizedDescription)")
        }
    }
}
