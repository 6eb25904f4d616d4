import Foundation
import JWTKit
import NIOConcurrencyHelpers

/// The provider authentication token APNs wants on every request: an ES256 JWT (`kid` the key id, `iss` the team,
/// `iat`) signed with the `.p8` key. Apple refuses a token older than an hour and one renewed more often than every
/// 20 minutes (`TooManyProviderTokenUpdates`), so one token is shared by every request and renewed after 50 minutes,
/// or earlier when Apple calls it expired, but never within 20 minutes of the last.
package actor APNsProviderToken {
    private struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    package static let renewAfter: TimeInterval = 50 * 60
    package static let minimumAge: TimeInterval = 20 * 60

    private let keys = JWTKeyCollection()
    private let keyID: String
    private let teamID: String
    private var cached: (token: String, issued: Date)?
    private var signing: Task<String, any Error>?
    /// How many tokens were made (tests read it: one per 50 minutes, not one per push).
    package private(set) var issued = 0

    /// Fails when `keyPEM` is not a P-256 private key.
    package init(keyPEM: String, keyID: String, teamID: String) async throws {
        self.keyID = keyID
        self.teamID = teamID
        await keys.add(ecdsa: try ES256PrivateKey(pem: keyPEM), kid: JWKIdentifier(string: keyID))
    }

    /// The shared token, read behind a lock (no hop onto the actor for every push) while it is fresh.
    private nonisolated let current = NIOLockedValueBox<(token: String, issued: Date)?>(nil)

    package nonisolated func token(now: Date = Date()) async throws -> String {
        if let current = current.withLockedValue({ $0 }), now.timeIntervalSince(current.issued) < Self.renewAfter { return current.token }
        return try await renew(now: now)
    }

    private func renew(now: Date) async throws -> String {
        if let cached, now.timeIntervalSince(cached.issued) < Self.renewAfter { return cached.token }
        // one signing in flight: requests arriving meanwhile wait for it rather than making tokens of their own
        if let signing { return try await signing.value }
        let (keys, claims, kid) = (keys, Claims(iss: .init(value: teamID), iat: .init(value: now)), JWKIdentifier(string: keyID))
        let task = Task { try await keys.sign(claims, kid: kid) }
        signing = task
        defer { signing = nil }
        let token = try await task.value
        cached = (token, now)
        current.withLockedValue { $0 = (token, now) }
        issued += 1
        return token
    }

    /// Apple called `token` expired: forget it, unless it was replaced meanwhile or is too young to be replaced
    /// (then the push waits and tries again). Returns whether a new token may be made now.
    package func expired(_ token: String, now: Date = Date()) -> Bool {
        guard let cached, cached.token == token else { return true }
        guard now.timeIntervalSince(cached.issued) >= Self.minimumAge else { return false }
        self.cached = nil
        current.withLockedValue { $0 = nil }
        return true
    }
}
