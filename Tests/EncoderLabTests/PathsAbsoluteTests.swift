import Foundation
import Testing
@testable import EncoderLab

@Suite("absolute paths and file URLs without ~ expansion")
struct PathsAbsoluteTests {
    @Test("a relative path is the current folder, '/', then the path as given; ~ stays a name")
    func absolute() {
        let cwd = FileManager.default.currentDirectoryPath
        let base = cwd.hasSuffix("/") ? cwd : cwd + "/"
        for path in ["~", "~/sub", "~root", "a/~", "x.y4m", "./a/../b", ""] {
            #expect(Paths.absolute(path) == base + path, "\(path)")
            #expect(Paths.fileURL(path).path.hasPrefix(cwd), "\(path)")
        }
        #expect(Paths.absolute("/t/~") == "/t/~")
        #expect(Paths.fileURL("~").path == base + "~")
        #expect(Paths.fileURL("~/x").path == base + "~/x")
        #expect(Paths.fileURL("~root", isDirectory: true).path == base + "~root")
        #expect(!Paths.fileURL("~").path.hasPrefix(NSHomeDirectory() + "/") || cwd.hasPrefix(NSHomeDirectory()))
    }

    @Test("the real path of a folder, of a symbolic link to it, and nil for a missing one")
    func real() throws {
        let dir = NSTemporaryDirectory() + "enclab-real-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: "\(dir)/a/~", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: "\(dir)/a")
        let resolved = try #require(Paths.real("\(dir)/a/~"))
        #expect(resolved.hasSuffix("/a/~"))
        #expect(Paths.real("\(dir)/link/~") == resolved)
        #expect(Paths.real("\(dir)/link/./../a/~") == resolved)
        #expect(Paths.real("\(dir)/missing") == nil)
    }
}
