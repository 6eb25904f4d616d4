import CSodium

/// An X25519 key pair for an inbox. The public key is published; the secret key is only ever stored
/// encrypted in its owner's private data.
public struct BoxKeyPair: Sendable {
    public let publicKey: [UInt8]
    public let secretKey: SymmetricKey

    public static func generate() -> BoxKeyPair {
        Sodium.ensureInitialized()
        var pk = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var sk = [UInt8](repeating: 0, count: Int(crypto_box_SECRETKEYBYTES))
        defer { SecretMemory.wipe(&sk) }
        precondition(crypto_box_keypair(&pk, &sk) == 0)
        return BoxKeyPair(publicKey: pk, secretKey: try! SymmetricKey(bytes: sk))
    }

    /// Rebuilds the pair from a stored secret key (the public key is derived from it).
    public init(secretKey: SymmetricKey) {
        Sodium.ensureInitialized()
        var pk = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        let rc = secretKey.withUnsafeBytes { crypto_scalarmult_base(&pk, $0) }
        precondition(rc == 0)
        self.init(publicKey: pk, secretKey: secretKey)
    }

    private init(publicKey: [UInt8], secretKey: SymmetricKey) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

/// Anonymous public-key encryption (`crypto_box_seal`): anyone can seal to a public key, only the
/// holder of the secret key can open, and the sender stays anonymous.
public enum SealedBox {
    public static let overhead = Int(crypto_box_sealbytes())

    public static func seal(_ plaintext: [UInt8], to publicKey: [UInt8]) throws -> [UInt8] {
        Sodium.ensureInitialized()
        guard publicKey.count == Int(crypto_box_PUBLICKEYBYTES) else {
            throw CryptoError.invalidLength(expected: Int(crypto_box_PUBLICKEYBYTES), actual: publicKey.count)
        }
        var out = [UInt8](repeating: 0, count: plaintext.count + overhead)
        precondition(crypto_box_seal(&out, plaintext, UInt64(plaintext.count), publicKey) == 0)
        return out
    }

    public static func open(_ sealed: [UInt8], keyPair: BoxKeyPair) throws -> [UInt8] {
        Sodium.ensureInitialized()
        guard sealed.count >= overhead else { throw CryptoError.authenticationFailed }
        var out = [UInt8](repeating: 0, count: sealed.count - overhead)
        let rc = keyPair.secretKey.withUnsafeBytes { sk in
            crypto_box_seal_open(&out, sealed, UInt64(sealed.count), keyPair.publicKey, sk)
        }
        guard rc == 0 else { throw CryptoError.authenticationFailed }
        return out
    }
}

extension BoxKeyPair {
    /// A symmetric key derived from the secret key for `context` (BLAKE2b keyed with the secret): whoever can open
    /// the pair's sealed boxes can derive it, and nobody else.
    public func derivedKey(context: [UInt8]) -> SymmetricKey {
        Sodium.ensureInitialized()
        var bytes = [UInt8](repeating: 0, count: SymmetricKey.byteCount)
        defer { SecretMemory.wipe(&bytes) }
        secretKey.withUnsafeBytes { secret in
            precondition(crypto_generichash(&bytes, bytes.count, context, UInt64(context.count), secret, SymmetricKey.byteCount) == 0)
        }
        return try! SymmetricKey(bytes: bytes)
    }
}
