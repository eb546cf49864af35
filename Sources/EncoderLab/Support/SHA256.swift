internal import CCrypto
import Foundation

/// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto (`EVP_sha256`), fed in pieces as bytes are read, so a clip is
/// hashed while it streams by. The lab identifies clips and runs by these digests (``hex``: 64 lowercase hex digits).
final class SHA256 {
    private let context: OpaquePointer

    init() {
        guard let ctx = EVP_MD_CTX_new(), EVP_DigestInit_ex(ctx, EVP_sha256(), nil) == 1 else {
            preconditionFailure("libcrypto could not start a SHA-256 digest")
        }
        context = ctx
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }
    func update(_ data: Data) { data.withUnsafeBytes { update($0) } }
    func update(_ text: String) { update(Array(text.utf8)) }

    /// Ends the digest: 32 bytes as 64 lowercase hex digits. The hasher cannot be used afterwards.
    func hex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// The digest of a whole file, read with read(2) in 1 MiB pieces into one buffer (no fresh pages per piece).
    /// - Throws: `.noInput` naming the file when it cannot be opened or read.
    static func file(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LabError.noInput("\(path): cannot be read") }
        defer { close(fd) }
        let hasher = SHA256()
        let size = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw LabError.noInput("\(path): read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(start: buffer, count: n))
        }
        return hasher.hex()
    }

    /// The digest of a string's UTF-8 bytes.
    static func hex(of text: String) -> String {
        let hasher = SHA256()
        hasher.update(text)
        return hasher.hex()
    }
}
