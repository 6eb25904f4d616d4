import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import YonaDomain

/// The server's VAPID identity (RFC 8292): a P-256 key whose public half browsers and distributors bind a
/// subscription to (`GET /webPush/vapidPublicKey`), and the signed claim each push carries to its push service.
package actor VAPID {
    private struct Claims: JWTPayload {
        let aud: AudienceClaim
        let exp: ExpirationClaim
        let sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// The public key as subscriptions name it (`applicationServerKey`): the uncompressed point, base64url.
    package nonisolated let publicKey: String
    private let subject: String
    private let keys = JWTKeyCollection()
    /// Signed headers by origin, behind a lock so that a push reads its header without a hop onto the actor.
    private nonisolated let cached = NIOLockedValueBox([String: (header: String, expires: Date)]())

    /// A claim is valid for 12 hours (RFC 8292 allows at most 24) and reused per push service until an hour is left.
    package static let lifetime: TimeInterval = 12 * 3600

    /// `pem` a PKCS#8 or SEC1 P-256 private key; `subject` a `mailto:` or `https:` contact for the push services.
    package init(pem: String, subject: String) async throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        publicKey = Base64URL.encode(Array(key.publicKey.x963Representation))
        self.subject = subject
        await keys.add(ecdsa: try ES256PrivateKey(pem: key.pemRepresentation))
    }

    /// A fresh key pair in PEM (`yona-server vapid generate`, and the data directory's key).
    package static func generatePEM() -> String {
        P256.Signing.PrivateKey().pemRepresentation
    }

    package static func isValidPEM(_ pem: String) -> Bool {
        (try? P256.Signing.PrivateKey(pemRepresentation: pem)) != nil
    }

    /// `Authorization: vapid t=<JWT>, k=<public key>` for a push service's origin (`https://host[:port]`).
    package nonisolated func authorization(origin: String, now: Date = Date()) async throws -> String {
        if let hit = cached.withLockedValue({ $0[origin] }), hit.expires.timeIntervalSince(now) > 3600 { return hit.header }
        return try await sign(origin: origin, now: now)
    }

    private func sign(origin: String, now: Date) async throws -> String {
        let expires = now.addingTimeInterval(Self.lifetime)
        let token = try await keys.sign(Claims(aud: .init(value: origin), exp: .init(value: expires), sub: .init(value: subject)))
        let header = "vapid t=\(token), k=\(publicKey)"
        cached.withLockedValue {
            if $0.count > 10_000 { $0.removeAll() }
            $0[origin] = (header, expires)
        }
        return header
    }

    /// The key from the operator (`YONA_VAPID_PRIVATE_KEY`, or its `_FILE`; checked when the configuration is read)
    /// or the data directory's, made there once.
    package static func resolvePEM(configured: String?, dataDirectory: URL, keep: Bool = true) throws -> String {
        if let configured { return configured }
        return try DataDirectorySecret.loadOrCreate(
            file: "vapid-private-key.pem", in: dataDirectory, variable: "YONA_VAPID_PRIVATE_KEY", keep: keep, isValid: isValidPEM,
            generate: generatePEM
        ).value
    }
}
