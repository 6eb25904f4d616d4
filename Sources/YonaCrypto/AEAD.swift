import CSodium

/// XChaCha20-Poly1305 (IETF). Every value gets a fresh random 24-byte nonce, stored in front of the
/// ciphertext; the associated data binds a ciphertext to its place (for instance a record id).
public enum AEAD {
    public static let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    public static let tagLength = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Returns `nonce || ciphertext || tag`.
    public static func seal(_ plaintext: [UInt8], key: SymmetricKey, associatedData: [UInt8]) -> [UInt8] {
        seal(plaintext, key: key, nonce: SecureRandom.bytes(nonceLength), associatedData: associatedData)
    }

    /// Deterministic form for known-answer tests only; production code uses `seal(_:key:associatedData:)`.
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], associatedData: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        precondition(nonce.count == nonceLength)
        var out = [UInt8](repeating: 0, count: nonceLength + plaintext.count + tagLength)
        out.replaceSubrange(0..<nonceLength, with: nonce)
        var written: UInt64 = 0
        let rc = out.withUnsafeMutableBufferPointer { o in
            key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress! + nonceLength, &written,
                    plaintext, UInt64(plaintext.count),
                    associatedData, UInt64(associatedData.count),
                    nil, nonce, k)
            }
        }
        precondition(rc == 0 && Int(written) == plaintext.count + tagLength)
        return out
    }

    /// Opens `nonce || ciphertext || tag`; throws `authenticationFailed` on a wrong key, wrong associated
    /// data or any alteration.
    public static func open(_ sealed: [UInt8], key: SymmetricKey, associatedData: [UInt8]) throws -> [UInt8] {
        Sodium.ensureInitialized()
        guard sealed.count >= nonceLength + tagLength else { throw CryptoError.authenticationFailed }
        var out = [UInt8](repeating: 0, count: sealed.count - nonceLength - tagLength)
        var written: UInt64 = 0
        let rc = sealed.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { o in
                key.withUnsafeBytes { k in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        o.baseAddress, &written, nil,
                        s.baseAddress! + nonceLength, UInt64(sealed.count - nonceLength),
                        associatedData, UInt64(associatedData.count),
                        s.baseAddress!, k)
                }
            }
        }
        guard rc == 0 else { throw CryptoError.authenticationFailed }
        return out
    }
}
