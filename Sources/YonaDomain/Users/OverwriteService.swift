import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// Lost-phone recovery (api.md "Admin API", Yona's overwrite): an SMS code to the number, then a fresh,
/// confirmed account in place of the old one. The old password is gone, so the old account is removed
/// through what the server can still reach: the identity row, and the anonymized part through the id
/// sealed under the server's recovery key. Its buddies learn it on their next call (`dropVanishedBuddies`).
package struct OverwriteService: Sendable {
    package static let maxFailedAttempts = 5
    /// How long an overwrite code stays usable.
    package static let codeLifetime: TimeInterval = 3600
    /// Within this time of a code, a new request sends nothing and keeps that code and its failed tries (Yona's
    /// `overwriteUserConfirmationCodeNonResendInterval`): requests in parallel text one code, a repeated request
    /// buys no fresh guesses, and texts cannot arrive out of order with the older one the valid one.
    package static let resendInterval: TimeInterval = 30

    package let db: any Database
    package let users: UserService

    /// Sends a code when the number has an account; an unknown number gets the same silence, and so does a
    /// request within `resendInterval` of the last code.
    package func requestCode(for number: MobileNumber, now: Date = Date()) async throws {
        guard let user = try await User.query(on: db).filter(\.$mobileNumber == number.value).first() else { return }
        let code = users.newConfirmationCode()
        let userID = try user.requireID()
        let afterCommit = try await db.transaction { tx -> @Sendable () async -> Void in
            // Decided in the update itself, so of parallel requests exactly one stores a code and texts it.
            let stored = try await tx.sql.raw(
                """
                UPDATE users SET overwrite_code_hash = \(bind: users.recovery.hashOverwriteCode(code, userID: userID)),
                overwrite_requested_at = \(bind: now), overwrite_failed_attempts = 0
                WHERE id = \(bind: userID)
                AND (overwrite_requested_at IS NULL OR overwrite_requested_at <= \(bind: now.addingTimeInterval(-Self.resendInterval)))
                RETURNING id
                """
            ).first()
            guard stored != nil else { return {} }
            let texts = users.sms.inTransaction(tx)
            try await texts.sender.sendOverwriteCode(code, to: number)
            return texts.afterCommit
        }
        await afterCommit()
    }

    /// Checks the code and replaces the number's account by a new, confirmed one. After five wrong codes
    /// no code matches (counted atomically, so parallel guesses get no more) until a new one is requested.
    package func overwrite(with new: NewUser, code: String, now: Date = Date()) async throws -> (UnlockedUser, YonaPassword) {
        guard let old = try await User.query(on: db).filter(\.$mobileNumber == new.mobileNumber.value).first(),
            let stored = old.overwriteCodeHash, let requestedAt = old.overwriteRequestedAt,
            now.timeIntervalSince(requestedAt) <= Self.codeLifetime
        else {
            throw YonaError(.overwriteCodeNotSet)
        }
        let oldID = old.id!
        // The try is counted before the code is compared, so a right code cannot slip in after the lockout.
        let tries: Int
        switch try await User.reserveAttempt(.overwrite, of: oldID, code: stored, limit: Self.maxFailedAttempts, on: db) {
        case .reserved(let count): tries = count
        case .exhausted: throw YonaError(.tooManyFailedOverwriteAttempts)
        case .codeGone: throw YonaError(.overwriteCodeNotSet)
        }
        guard SecretMemory.constantTimeEquals(Array(users.recovery.hashOverwriteCode(code, userID: oldID)), Array(stored)) else {
            throw YonaError(.overwriteCodeMismatch, remainingAttempts: Self.maxFailedAttempts - tries)
        }
        let oldAnonymizedID = old.recoveryBlob.flatMap { users.recovery.open($0, userID: oldID) }
        return try await users.create(new, confirmed: true) { tx in
            // Only the holder of this very code may replace the row (a second, parallel overwrite finds nothing).
            let claimed = try await tx.sql.raw(
                """
                DELETE FROM users WHERE id = \(bind: oldID) AND overwrite_code_hash = \(bind: stored) RETURNING id
                """
            ).first()
            guard claimed != nil else { throw YonaError(.overwriteCodeNotSet) }
            if let oldAnonymizedID {
                // The lost phone's VPN accounts go with the account it held.
                try await users.vpnAccounts?.deleteAll(of: oldAnonymizedID, on: tx)
                try await UserService.deleteAnonymizedPart(oldAnonymizedID, on: tx)
            }
        }
    }

    package init(db: any Database, users: UserService) {
        self.db = db
        self.users = users
    }
}
