import CSodium

/// Argon2id (`crypto_pwhash`, version 1.3) for low-entropy secrets such as one-time passwords.
/// It is slow and memory-hungry on purpose: callers run it off the event loop.
public enum PasswordHash {
    public static let saltLength = Int(crypto_pwhash_SALTBYTES)

    public struct Limits: Sendable, Equatable {
        public var opsLimit: UInt64
        public var memLimit: Int

        public init(opsLimit: UInt64, memLimit: Int) {
            self.opsLimit = opsLimit
            self.memLimit = memLimit
        }

        /// libsodium's INTERACTIVE limits (2 passes, 64 MiB).
        public static let interactive = Limits(
            opsLimit: UInt64(crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE),
            memLimit: Int(crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE))
        public static let minimumOpsLimit = UInt64(crypto_pwhash_argon2id_OPSLIMIT_MIN)
        public static let minimumMemLimit = Int(crypto_pwhash_argon2id_MEMLIMIT_MIN)
    }

    public static func deriveKey(password: [UInt8], salt: [UInt8], limits: Limits) throws -> SymmetricKey {
        Sodium.ensureInitialized()
        guard salt.count == saltLength else { throw CryptoError.invalidLength(expected: saltLength, actual: salt.count) }
        var out = [UInt8](repeating: 0, count: SymmetricKey.byteCount)
        defer { SecretMemory.wipe(&out) }
        // A zero-length password still needs a valid pointer.
        var input = password.isEmpty ? [0] : password
        defer { SecretMemory.wipe(&input) }
        let rc = input.withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { pc in
                crypto_pwhash(
                    &out, UInt64(out.count), pc.baseAddress!, UInt64(password.count), salt,
                    limits.opsLimit, limits.memLimit, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0 else { throw CryptoError.keyDerivationFailed }
        return try SymmetricKey(bytes: out)
    }
}
