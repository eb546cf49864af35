// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "enclab",
    products: [
        .executable(name: "enclab", targets: ["enclab"]),
        .library(name: "H264", targets: ["H264"]),
        .library(name: "EncoderLab", targets: ["EncoderLab"]),
    ],
    targets: [
        // System libraries, each behind its own shim header (see the shim for why each wrapper exists).
        .systemLibrary(name: "CX264", path: "Sources/CX264"),
        // Cisco's OpenH264 (Debian's libopenh264-dev), the second encoder: Encode/OpenH264Session.swift alone imports it.
        .systemLibrary(name: "COpenH264", path: "Sources/COpenH264", providers: [.apt(["libopenh264-dev"])]),
        .systemLibrary(name: "CSQLite3", path: "Sources/CSQLite3"),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto"),
        // libavcodec's H.264 decoder: the verify stage decodes each run's stream in-process as it is written.
        .systemLibrary(name: "CAVCodec", path: "Sources/CAVCodec", pkgConfig: "libavcodec",
                       providers: [.apt(["libavcodec-dev", "libavutil-dev"])]),
        // libpcap: `enclab rtp` writes and reads captures (Sources/EncoderLab/Network).
        .systemLibrary(name: "CPcap", path: "Sources/CPcap", providers: [.apt(["libpcap0.8-dev"])]),
        // SIGINT and SIGTERM caught by a C handler (async-signal-safe) that feeds a pipe (Support/Interruption.swift).
        .target(name: "CSignals", path: "Sources/CSignals"),
        // Pure Swift bitstream toolkit: imports no C module.
        .target(name: "H264", path: "Sources/H264", exclude: ["PACKETS.md"]),
        .target(name: "EncoderLab", dependencies: ["H264", "CX264", "COpenH264", "CSQLite3", "CLinux", "CCrypto", "CAVCodec", "CSignals", "CPcap"], path: "Sources/EncoderLab"),
        .executableTarget(name: "enclab", dependencies: ["EncoderLab"], path: "Sources/enclab"),
        // Vectors/ holds byte streams the tests read by path (and the script that made them).
        .testTarget(name: "H264Tests", dependencies: ["H264"], path: "Tests/H264Tests", exclude: ["Vectors"]),
        // What the test targets share: one way to run the built binary, make a clip and make a database.
        .target(name: "EnclabTestSupport", dependencies: ["EncoderLab"], path: "Tests/EnclabTestSupport"),
        .testTarget(name: "EncoderLabTests", dependencies: ["EncoderLab", "H264", "EnclabTestSupport"], path: "Tests/EncoderLabTests", exclude: ["Fixtures"]),
        // Witness/ holds the C programs the tests compile and run as witnesses (openh264_witness.c).
        .testTarget(name: "EndToEndTests", dependencies: ["EncoderLab", "EnclabTestSupport"], path: "Tests/EndToEndTests", exclude: ["Witness"]),
    ],
    swiftLanguageModes: [.v6]
)
