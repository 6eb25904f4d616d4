import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// The one-time-password flow by which a new phone joins: the existing phone leaves the Yona password
/// encrypted under Argon2id(OTP); the new phone proves the OTP and gets the password back. Five wrong
/// OTPs destroy the request.
package struct NewDeviceRequestService: Sendable {
    package static let maxFailedAttempts = 5
    package static let passwordField = "new_device_requests.encrypted_password"

    package let db: any Database
    package let users: UserService
    package let argon2: Argon2Pool
    package let lifetime: TimeInterval

    /// What a lookup by number finds.
    package struct Found: Sendable {
        package let userID: UUID
        /// Only when the caller proved the OTP.
        package let password: YonaPassword?
    }

    /// Finds the user a request for the number would belong to, for the calls that carry the Yona password.
    /// An unknown number answers like a wrong password, so it reveals nothing.
    package func unlockByNumber(_ number: MobileNumber, passwordHeader: String?) async throws -> UnlockedUser {
        guard passwordHeader != nil else { throw YonaError(.missingPasswordHeader) }
        // An unknown number, an invited one and a wrong password answer alike (issue 13, attack 8).
        guard let record = try await User.query(on: db).filter(\.$mobileNumber == number.value).first(),
            !record.createdOnBuddyRequest
        else {
            throw YonaError(.decryptingData)
        }
        return try await users.unlock(userID: record.id!, passwordHeader: passwordHeader)
    }

    /// Stores (or replaces) the request of a confirmed user.
    package func set(for user: UnlockedUser, password: YonaPassword, oneTimePassword: String) async throws {
        guard user.isConfirmed else { throw YonaError(.mobileNumberNotConfirmed) }
        let id = UUID()
        let salt = SecureRandom.bytes(PasswordHash.saltLength)
        let key = try await argon2.deriveKey(password: Array(oneTimePassword.utf8), salt: salt, for: "account:\(user.id)")
        let sealed = AEAD.seal(password.bytes, key: key, associatedData: Self.associatedData(id))
        try await db.transaction { tx in
            try await NewDeviceRequest.query(on: tx).filter(\.$user.$id == user.id).delete()
            try await NewDeviceRequest(
                id: id, userID: user.id, createdAt: Date(), keySalt: Data(salt),
                encryptedPassword: Data(sealed)
            ).create(on: tx)
        }
    }

    /// Looks the request up by number; with an OTP, also opens it.
    package func find(number: MobileNumber, oneTimePassword: String?) async throws -> Found {
        let request = try await current(number: number)
        guard let oneTimePassword else { return Found(userID: request.$user.id, password: nil) }
        return Found(userID: request.$user.id, password: try await open(request, oneTimePassword: oneTimePassword))
    }

    /// Opens the request of a user (the register-device call names the user, not the number).
    package func open(userID: UUID, oneTimePassword: String?) async throws -> YonaPassword {
        guard let oneTimePassword else { throw YonaError(.deviceRequestInvalidPassword) }
        guard let request = try await NewDeviceRequest.query(on: db).filter(\.$user.$id == userID).first() else {
            throw YonaError(.noDeviceRequestPresent)
        }
        try checkNotExpired(request)
        return try await open(request, oneTimePassword: oneTimePassword)
    }

    /// Removes the request of the user; no request is fine too.
    package func delete(for user: UnlockedUser) async throws {
        try await NewDeviceRequest.query(on: db).filter(\.$user.$id == user.id).delete()
    }

    /// Deletes requests that expired a while ago; runs periodically in every instance (idempotent).
    /// The grace period (the lifetime, at least a minute and at most an hour) lets a late app still hear
    /// "expired" rather than "no request".
    package func purgeExpired(now: Date = Date()) async throws {
        let cutoff = now.addingTimeInterval(-lifetime - min(max(lifetime, 60), 3600))
        try await NewDeviceRequest.query(on: db).filter(\.$createdAt < cutoff).delete()
    }

    // MARK: - helpers

    private func current(number: MobileNumber) async throws -> NewDeviceRequest {
        guard let user = try await User.query(on: db).filter(\.$mobileNumber == number.value).first(),
            let request = try await NewDeviceRequest.query(on: db).filter(\.$user.$id == user.id!).first()
        else {
            throw YonaError(.noDeviceRequestPresent)
        }
        try checkNotExpired(request)
        return request
    }

    private func checkNotExpired(_ request: NewDeviceRequest) throws {
        if request.createdAt.addingTimeInterval(lifetime) < Date() { throw YonaError(.deviceRequestExpired) }
    }

    private func open(_ request: NewDeviceRequest, oneTimePassword: String) async throws -> YonaPassword {
        let id = request.id!
        let key = try await argon2.deriveKey(password: Array(oneTimePassword.utf8), salt: Array(request.keySalt), for: "account:\(request.$user.id)")
        do {
            let bytes = try AEAD.open(Array(request.encryptedPassword), key: key, associatedData: Self.associatedData(id))
            guard let password = YonaPassword(bytes: bytes) else { throw YonaError(.unexpected) }
            // Parallel wrong guesses may have destroyed the request while this one was hashing.
            guard try await stillOpen(requestID: id) else { throw YonaError(.noDeviceRequestPresent) }
            return password
        } catch is CryptoError {
            try await recordFailedAttempt(requestID: id)
            throw YonaError(.deviceRequestInvalidPassword)
        }
    }

    private func stillOpen(requestID: UUID) async throws -> Bool {
        try await db.sql.raw(
            """
            SELECT id FROM new_device_requests
            WHERE id = \(bind: requestID) AND failed_attempts < \(bind: Self.maxFailedAttempts)
            """
        ).first() != nil
    }

    /// Counts a wrong OTP atomically; the fifth destroys the request.
    private func recordFailedAttempt(requestID: UUID) async throws {
        let row = try await db.sql.raw(
            """
            UPDATE new_device_requests SET failed_attempts = failed_attempts + 1
            WHERE id = \(bind: requestID) RETURNING failed_attempts
            """
        ).first()
        guard let row else { throw YonaError(.noDeviceRequestPresent) }
        if try row.decode(column: "failed_attempts", as: Int.self) >= Self.maxFailedAttempts {
            try await NewDeviceRequest.query(on: db).filter(\.$id == requestID).delete()
        }
    }

    private static func associatedData(_ requestID: UUID) -> [UInt8] {
        Array(passwordField.utf8) + [0] + requestID.bytes
    }

    package init(db: any Database, users: UserService, argon2: Argon2Pool, lifetime: TimeInterval) {
        self.db = db
        self.users = users
        self.argon2 = argon2
        self.lifetime = lifetime
    }
}
