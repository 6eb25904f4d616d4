import Crypto
import Foundation
import YonaDomain

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188): only the subscriber,
/// holding the private half of `p256dh` and the `auth` secret, can read the body; the push service relays bytes.
package enum WebPushEncryption {
    package struct InvalidKeys: Error {}

    /// The record size announced in the header; one record carries the whole (small) message.
    package static let recordSize: UInt32 = 4096

    /// The receiver's keys from a subscription: `p256dh` an uncompressed P-256 point, `auth` 16 bytes (both base64url).
    package struct ReceiverKeys: Sendable {
        package let publicKey: P256.KeyAgreement.PublicKey
        package let publicKeyBytes: Data
        package let authSecret: Data

        package init(p256dh: String, auth: String) throws(InvalidKeys) {
            func bytes(_ text: String) -> [UInt8]? { Base64URL.decode(String(text.prefix { $0 != "=" })) }
            guard let point = bytes(p256dh), point.count == 65, point.first == 0x04,
                let key = try? P256.KeyAgreement.PublicKey(x963Representation: point),
                let secret = bytes(auth), secret.count == 16
            else { throw InvalidKeys() }
            publicKey = key
            publicKeyBytes = Data(point)
            authSecret = Data(secret)
        }
    }

    /// The request body: `salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid(65, the sender's ephemeral public key) ‖ ciphertext`.
    /// The ephemeral key and the salt are fresh for every message unless a test fixes them (RFC 8291's example).
    package static func encrypt(
        _ plaintext: some DataProtocol, to receiver: ReceiverKeys, senderKey: P256.KeyAgreement.PrivateKey = ephemeralKey(),
        salt: Data = randomSalt()
    ) throws -> Data {
        let shared = try senderKey.sharedSecretFromKeyAgreement(with: receiver.publicKey)
        let senderPublic = senderKey.publicKey.x963Representation
        // RFC 8291 §3.4: the input keying material binds the auth secret and both public keys.
        let keyInfo = Data("WebPush: info".utf8) + [0] + receiver.publicKeyBytes + senderPublic
        let ikm = shared.withUnsafeBytes { secret in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: secret), salt: receiver.authSecret, info: keyInfo, outputByteCount: 32)
        }
        // RFC 8188 §2.2-2.3: content-encryption key and nonce from the salt.
        let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // the last (and only) record ends with the delimiter 0x02, no padding
        let sealed = try AES.GCM.seal(
            Data(plaintext) + [2], using: cek, nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }))
        var body = Data(capacity: 86 + plaintext.count + 17)
        body.append(salt)
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(senderPublic.count))
        body.append(senderPublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }

    /// 16 random bytes from BoringSSL's generator (one call, no system call per byte).
    package static func randomSalt() -> Data {
        SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
    }

    /// A fresh P-256 key for one message: a random scalar and its public point. `P256.KeyAgreement.PrivateKey()` also
    /// runs BoringSSL's FIPS pairwise test (an ECDSA signature and its check) and retries until the point is "compact
    /// representable" (half the keys): three to six scalar multiplications instead of one, the largest part of a Web
    /// Push's CPU (docs/performance.md, direct pushes). A scalar outside 1..<n (odds about 2⁻³²) is drawn again.
    package static func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: SymmetricKey(size: .bits256)) { return key }
        }
    }
}
