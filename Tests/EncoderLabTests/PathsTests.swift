import Testing
@testable import EncoderLab

@Suite("path arithmetic without NSString (which traps on one-character names)")
struct PathsTests {
    @Test("parent, file name and extension, by hand")
    func paths() {
        #expect(Paths.parent("r") == "")
        #expect(Paths.parent("a/b/c") == "a/b")
        #expect(Paths.parent("/c") == "/")
        #expect(Paths.parent("a/b/") == "a")
        #expect(Paths.parent("a//b") == "a")
        #expect(Paths.parent("/") == "/")
        #expect(Paths.fileName("a/b.y4m") == "b.y4m")
        #expect(Paths.fileName("r") == "r")
        #expect(Paths.fileName("a/b/") == "b")
        #expect(Paths.deletingExtension("q.sqlite") == "q")
        #expect(Paths.deletingExtension("a.b.c") == "a.b")
        #expect(Paths.deletingExtension(".hidden") == ".hidden")
        #expect(Paths.deletingExtension("x") == "x")
    }
}
