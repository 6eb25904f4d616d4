import CSodium
import Foundation

/// A 32-byte secret key. Its bytes are wiped when the last reference goes, and it never prints them.
public final class SymmetricKey: @unchecked Sendable, CustomStringConvertible {
    public static let byteCount = 32
    private let storage: UnsafeMutableRawBufferPointer

    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.byteCount else {
            throw CryptoError.invalidLength(expected: Self.byteCount, actual: bytes.count)
        }
        storage = .allocate(byteCount: Self.byteCount, alignment: 16)
        storage.copyBytes(from: bytes)
    }

    /// A fresh random key.
    public static func random() -> SymmetricKey {
        var bytes = SecureRandom.bytes(byteCount)
        defer { SecretMemory.wipe(&bytes) }
        return try! SymmetricKey(bytes: bytes)
    }

    deinit {
        sodium_memzero(storage.baseAddress!, storage.count)
        storage.deallocate()
    }

    func withUnsafeBytes<R>(_ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        try body(storage.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    public var description: String { "SymmetricKey(redacted)" }

    /// The raw bytes, for storing the key encrypted (an inbox secret key inside private data).
    public var data: Data { withUnsafeBytes { Data(bytes: $0, count: Self.byteCount) } }
}
