import FluentKit
import Foundation
import YonaCrypto
import YonaStore

/// The console's sign-ins: a random token in an HttpOnly cookie, its hash in `console_sessions`. A session ends on
/// sign-out, after `idleTimeout` without a request, and at the latest `maximumAge` after sign-in. Each form carries
/// the session's CSRF token, derived from the session token (so it needs no column and dies with the session).
package struct ConsoleSessions: Sendable {
    package static let maximumAge: TimeInterval = 12 * 3600

    package let db: any Database
    package let idleTimeout: TimeInterval

    package init(db: any Database, idleTimeout: TimeInterval) {
        self.db = db
        self.idleTimeout = idleTimeout
    }

    /// Starts a session and returns its token (for the cookie only; never stored or logged).
    package func open(now: Date = Date()) async throws -> String {
        try await purge(now: now)
        let token = Base64URL.encode(SecureRandom.bytes(32))
        try await ConsoleSession(tokenHash: Self.hash(token), now: now).create(on: db)
        return token
    }

    /// Whether `token` names a live session; a live one counts this request as activity, an ended one is removed.
    package func resume(_ token: String, now: Date = Date()) async throws -> Bool {
        guard let session = try await ConsoleSession.query(on: db).filter(\.$tokenHash == Self.hash(token)).first() else {
            return false
        }
        guard now.timeIntervalSince(session.lastSeenAt) < idleTimeout, now.timeIntervalSince(session.createdAt) < Self.maximumAge else {
            try await session.delete(on: db)
            return false
        }
        session.lastSeenAt = now
        try await session.save(on: db)
        return true
    }

    /// Ends the session of `token` (sign-out).
    package func close(_ token: String) async throws {
        try await ConsoleSession.query(on: db).filter(\.$tokenHash == Self.hash(token)).delete()
    }

    /// The CSRF token of the session `token` opens.
    package static func csrfToken(for token: String) -> String {
        Hex.lowercase(KeyedHash.hash(Array(token.utf8), key: Array("yona console csrf".utf8), outputLength: 16))
    }

    /// Whether a form's CSRF token is the session's, in constant time.
    package static func isValid(csrf presented: String?, for token: String) -> Bool {
        guard let presented else { return false }
        return SecretMemory.constantTimeEquals(Array(presented.utf8), Array(csrfToken(for: token).utf8))
    }

    private func purge(now: Date) async throws {
        try await ConsoleSession.query(on: db)
            .group(.or) {
                $0.filter(\.$lastSeenAt < now.addingTimeInterval(-idleTimeout))
                    .filter(\.$createdAt < now.addingTimeInterval(-Self.maximumAge))
            }
            .delete()
    }

    private static func hash(_ token: String) -> Data {
        Data(KeyedHash.hash(Array(token.utf8), key: Array("yona console session".utf8)))
    }
}
