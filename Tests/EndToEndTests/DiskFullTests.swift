import Foundation
import Testing
import EncoderLab

/// enclab writing onto a small tmpfs, in a private mount namespace (`unshare -m`, nothing leaks out): a full disk
/// is 74 naming the file, and no file that could pass for complete is left behind.
@Suite("a full disk: 74 naming the file, nothing truncated left, end to end", .serialized)
struct DiskFullTests {
    typealias CLI = CommandLineTests

    /// Whether a tmpfs can be mounted in a private mount namespace here (root with CAP_SYS_ADMIN).
    static let tmpfsMountsWork: Bool = {
        let dir = NSTemporaryDirectory() + "enclab-tmpfs-probe-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let r = try? CLI.process("/usr/bin/unshare", ["-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs \"$0\" && touch \"$0/x\"", dir], in: "/")
        return r?.status == 0
    }()

    /// Runs `script` with sh in a private mount namespace, in `dir`, where `mnt` is a tmpfs mounted with `options`;
    /// `$ENCLAB` is the built enclab. What the script copies out of `mnt` stays after the namespace ends.
    static func inNamespace(_ dir: String, tmpfs options: String, _ script: String) throws -> CLI.Result {
        try FileManager.default.createDirectory(atPath: "\(dir)/mnt", withIntermediateDirectories: true)
        return try CLI.process("/usr/bin/env", ["ENCLAB=\(CLI.binary)", "/usr/bin/unshare", "-m", "sh", "-c",
                                                "mount -t tmpfs -o \(options) tmpfs mnt || exit 99\n" + script], in: dir)
    }

    /// Fills the tmpfs, then frees exactly one 4 KiB page: the next file's first page fits, nothing more.
    static let fillButOnePage = "dd if=/dev/zero of=mnt/fill bs=4096 2>/dev/null; truncate -s -4096 mnt/fill\n"

    /// Whether a plot file is whole, checked on its bytes: a PNG starts with the signature and ends with the IEND
    /// chunk (PNG specification 5.2, 11.2.5); an SVG ends with `</svg>` and a newline.
    static func isComplete(_ path: String) throws -> Bool {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        if path.hasSuffix(".png") {
            return bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                && Array(bytes.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.hasSuffix("\n") && text.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("</svg>")
    }

    @Test("encode onto 260 KiB: gnuplot cannot write its plots in full; 74 naming the plot, no incomplete PNG or SVG left",
          .enabled(if: tmpfsMountsWork, "tmpfs mounts in a private namespace (unshare -m) are not permitted here"))
    func plotsOnFullDisk() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = "\(CLI.root)/fixtures/carphone_pristine.mp4"
        try #require(FileManager.default.fileExists(atPath: clip), "run scripts/fixtures.sh")
        let r = try Self.inNamespace(dir, tmpfs: "size=260k", """
            "$ENCLAB" encode "$0" --threads 1 --plots render --db db.sqlite --out mnt/O; status=$?
            mkdir copy && cp -a mnt/O copy/; exit $status
            """.replacingOccurrences(of: "\"$0\"", with: "'\(clip)'"))
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("enclab: mnt/O/"), "\(r.stderr)")
        #expect(r.stderr.hasSuffix(": the disk may be full\n") || r.stderr.hasSuffix(": No space left on device\n"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        let plots = (FileManager.default.enumerator(atPath: "\(dir)/copy")?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".svg") }
        for plot in plots { #expect(try Self.isComplete("\(dir)/copy/\(plot)"), "\(plot)") }
    }

    @Test("plot with room for its data file only: writing frames.gp fails, 74 (not 73) naming it, and no partial frames.gp left",
          .enabled(if: tmpfsMountsWork, "tmpfs mounts in a private namespace (unshare -m) are not permitted here"))
    func plotScriptOnFullDisk() throws {
        let dir = try PlotGuardTests.lab()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let key = try CLI().sqlite("\(dir)/lab.sqlite", "SELECT substr(run_key, 1, 16) FROM runs")[0]
        let r = try Self.inNamespace(dir, tmpfs: "size=64k", Self.fillButOnePage + """
            "$ENCLAB" plot --db lab.sqlite --out mnt/P; status=$?
            mkdir copy && cp -a mnt/P copy/; exit $status
            """)
        #expect(r.status == 74)
        #expect(r.stderr == "enclab: mnt/P/\(key)/frames.gp: write failed: No space left on device\n")
        // frames.dat (one page) was written in full; frames.gp is not there at all.
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/copy/P/\(key)") == ["frames.dat"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/copy/P/\(key)/frames.dat"))
                == Data(contentsOf: URL(fileURLWithPath: "\(dir)/out/\(key)/frames.dat")))
    }

    @Test("convert with one page free: the write fails, 74, and the partial output is removed",
          .enabled(if: tmpfsMountsWork, "tmpfs mounts in a private namespace (unshare -m) are not permitted here"))
    func convertOnFullDisk() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A stream of more than one page (4096 bytes).
        try SyntheticClip(width: 160, height: 96, frames: 20, seed: 4).write(to: "\(dir)/c.y4m")
        let e = try CLI.process(CLI.binary, ["encode", "c.y4m", "--threads", "1", "--qp", "10", "--db", "lab.sqlite", "--out", "out"], in: dir)
        #expect(e.status == 0, "\(e.stderr)")
        let stream = "\(dir)/\(try CLI.runFolder("\(dir)/lab.sqlite"))/stream.264"
        #expect(try Data(contentsOf: URL(fileURLWithPath: stream)).count > 3 * 4096)
        let r = try Self.inNamespace(dir, tmpfs: "size=64k", Self.fillButOnePage + """
            "$ENCLAB" convert --to avcc '\(stream)' mnt/out.avcc; status=$?
            ls mnt; exit $status
            """)
        #expect(r.status == 74)
        #expect(r.stderr == "enclab: mnt/out.avcc: write failed: No space left on device\n")
        #expect(r.stdout == "fill\n")
    }

    @Test("convert onto a tmpfs without a free inode: open fails with ENOSPC, 74 (not 73), naming the file",
          .enabled(if: tmpfsMountsWork, "tmpfs mounts in a private namespace (unshare -m) are not permitted here"))
    func convertWithoutInodes() throws {
        let dir = CLI().scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try SyntheticClip(width: 64, height: 48, frames: 3, seed: 4).write(to: "\(dir)/c.y4m")
        #expect(try CLI.process(CLI.binary, ["encode", "c.y4m", "--threads", "1", "--db", "lab.sqlite", "--out", "out"], in: dir).status == 0)
        let stream = "\(dir)/\(try CLI.runFolder("\(dir)/lab.sqlite"))/stream.264"
        // nr_inodes=2: the root folder and one file; the second file cannot be made.
        let r = try Self.inNamespace(dir, tmpfs: "size=64k,nr_inodes=2", """
            touch mnt/a; touch mnt/b 2>/dev/null && exit 98
            "$ENCLAB" convert --to avcc '\(stream)' mnt/out.avcc; status=$?
            ls mnt; exit $status
            """)
        #expect(r.status == 74)
        #expect(r.stderr == "enclab: mnt/out.avcc: cannot create: No space left on device\n")
        #expect(r.stdout == "a\n")
    }
}
