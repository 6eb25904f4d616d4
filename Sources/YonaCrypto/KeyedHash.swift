import CSodium

/// Keyed BLAKE2b (`crypto_generichash`).
public enum KeyedHash {
    public static func hash(_ message: [UInt8], key: [UInt8], outputLength: Int = 32) -> [UInt8] {
        Sodium.ensureInitialized()
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(outputLength))
        precondition(key.count <= Int(crypto_generichash_KEYBYTES_MAX))
        var out = [UInt8](repeating: 0, count: outputLength)
        let rc = crypto_generichash(&out, outputLength, message, UInt64(message.count), key.isEmpty ? nil : key, key.count)
        precondition(rc == 0)
        return out
    }

    /// Derives a subkey from a full-entropy secret: BLAKE2b keyed with the secret over a labelled context.
    public static func deriveKey(fromSecret secret: [UInt8], context: [UInt8]) throws -> SymmetricKey {
        guard secret.count >= 16, secret.count <= Int(crypto_generichash_KEYBYTES_MAX) else {
            throw CryptoError.invalidLength(expected: 32, actual: secret.count)
        }
        var bytes = hash(context, key: secret, outputLength: SymmetricKey.byteCount)
        defer { SecretMemory.wipe(&bytes) }
        return try SymmetricKey(bytes: bytes)
    }
}
