import Foundation
import Testing
@testable import EncoderLab

@Suite("SHA-256 through libcrypto, against sha256sum")
struct SHA256Tests {
    @Test("FIPS 180-4 vectors, and a file against coreutils' sha256sum")
    func vectors() throws {
        // FIPS 180-4 examples: "abc" and the empty string.
        #expect(SHA256.hex(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(of: "") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let path = NSTemporaryDirectory() + "sha-\(UUID().uuidString).bin"
        defer { try? FileManager.default.removeItem(atPath: path) }
        // 3 MiB + 5 bytes: several 1 MiB pieces and a short last one.
        let bytes = (0..<(3 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let witness = try CommandLineRunner.run("/usr/bin/sha256sum", [path])
        #expect(try SHA256.file(path) == String(witness.split(separator: " ")[0]))
    }
}

/// Runs a program and returns its standard output as text.
enum CommandLineRunner {
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
