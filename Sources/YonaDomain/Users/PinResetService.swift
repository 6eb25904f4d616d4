import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// Yona's pin reset: a user who forgot the app's PIN asks for a reset; after a delay (a day in production, so whoever
/// holds the phone for a moment cannot do it) a code is texted to the number, and the app verifies it. The code is
/// sealed under the user's key (`users.pin_reset_code`), its times live in the encrypted private data, and every
/// guess is reserved atomically before it is compared (5 tries, then the request must be cleared).
package struct PinResetService: Sendable {
    package static let maxAttempts = 5
    /// Yona's `pinResetRequestExpirationTime`.
    package static let lifetime: TimeInterval = 7 * 86_400
    package static let codeField = "users.pin_reset_code"

    package let users: UserService
    package let delay: TimeInterval

    package enum State: Equatable {
        case none
        /// Requested, the code not usable yet.
        case waiting
        /// The code is usable (and may have been verified).
        case ready
    }

    package static func state(of user: UnlockedUser, now: Date = Date()) -> State {
        guard let reset = user.privateData.pinReset, user.record.pinResetCode != nil, reset.expiresAt > now else { return .none }
        return reset.availableFrom <= now ? .ready : .waiting
    }

    /// Starts (or restarts) a reset; returns the delay before the code comes.
    package func request(_ user: UnlockedUser, now: Date = Date()) async throws -> TimeInterval {
        guard user.isConfirmed else { throw YonaError(.mobileNumberNotConfirmed) }
        let code = users.newConfirmationCode()
        let availableFrom = now.addingTimeInterval(delay)
        let number = try MobileNumber(user.mobileNumber)
        // The reset, its code and the code's text commit together.
        let afterCommit = try await users.db.transaction { tx in
            _ = try await users.modifyPrivateData(user, on: tx) { data in
                data.pinReset = .init(availableFrom: availableFrom, expiresAt: now.addingTimeInterval(Self.lifetime), verified: false)
            }
            try await store(code, for: user, on: tx)
            let texts = users.sms.inTransaction(tx)
            try await texts.sender.sendPinResetCode(code, to: number, notBefore: availableFrom)
            return texts.afterCommit
        }
        await afterCommit()
        return delay
    }

    /// Checks a code. Before the delay is over no code matches (as Yona's); after five wrong ones none does.
    package func verify(_ user: UnlockedUser, code: String, now: Date = Date()) async throws {
        let state = Self.state(of: user, now: now)
        guard state != .none, let stored = user.record.pinResetCode else { throw YonaError(.pinResetCodeNotSet) }
        let tries: Int
        switch try await User.reserveAttempt(.pinReset, of: user.id, code: stored, limit: Self.maxAttempts, on: users.db) {
        case .reserved(let count): tries = count
        case .exhausted: throw YonaError(.tooManyFailedPinResetAttempts)
        case .codeGone: throw YonaError(.pinResetCodeNotSet)
        }
        let expected = try user.key.open(EncryptedBlob(bytes: Array(stored)), field: Self.codeField, recordID: user.id)
        guard state == .ready, SecretMemory.constantTimeEquals(expected, Array(code.utf8)) else {
            throw YonaError(.pinResetCodeMismatch, remainingAttempts: Self.maxAttempts - tries)
        }
        try await User.query(on: users.db).filter(\.$id == user.id).set(\.$pinResetFailedAttempts, to: 0).update()
        _ = try await users.modifyPrivateData(user) { $0.pinReset?.verified = true }
    }

    /// A new code, texted at once (only once the first one was due).
    package func resend(_ user: UnlockedUser, now: Date = Date()) async throws {
        guard Self.state(of: user, now: now) == .ready else { throw YonaError(.pinResetCodeNotSet) }
        let code = users.newConfirmationCode()
        let number = try MobileNumber(user.mobileNumber)
        let afterCommit = try await users.db.transaction { tx in
            try await store(code, for: user, on: tx)
            let texts = users.sms.inTransaction(tx)
            try await texts.sender.sendPinResetCode(code, to: number, notBefore: now)
            return texts.afterCommit
        }
        await afterCommit()
    }

    /// Ends the reset, verified or not.
    package func clear(_ user: UnlockedUser) async throws {
        try await User.query(on: users.db).filter(\.$id == user.id)
            .set(\.$pinResetCode, to: nil).set(\.$pinResetFailedAttempts, to: 0).update()
        if user.privateData.pinReset != nil { _ = try await users.modifyPrivateData(user) { $0.pinReset = nil } }
    }

    private func store(_ code: String, for user: UnlockedUser, on db: any Database) async throws {
        try await User.query(on: db).filter(\.$id == user.id)
            .set(\.$pinResetCode, to: user.key.seal(Array(code.utf8), field: Self.codeField, recordID: user.id).data)
            .set(\.$pinResetFailedAttempts, to: 0).update()
    }

    package init(users: UserService, delay: TimeInterval) {
        self.users = users
        self.delay = delay
    }
}
