import Fluent
import Foundation
import SQLKit
import YonaCrypto

/// Creating, unlocking, confirming, changing and deleting users. Plain domain logic over the store;
/// it knows nothing of HTTP.
struct UserService: Sendable {
    static let maxConfirmationAttempts = 5
    static let privateDataField = "users.private_data"
    static let confirmationCodeField = "users.confirmation_code"

    let db: any Database
    let sms: any SMSSender
    let testServer: Bool

    /// Creates the identity row, its anonymized twin and the first device in one transaction,
    /// and sends the confirmation code. Returns the new password, which is never stored.
    func create(_ new: NewUser) async throws -> (UnlockedUser, YonaPassword) {
        let password = YonaPassword.generate()
        let userID = UUID()
        let salt = SecureRandom.bytes(UserKey.saltLength)
        let key = try UserKey(password: password, salt: salt, userID: userID)
        let device = UserDevice(id: UUID(), name: new.device.name, deviceAnonymizedID: UUID(), registrationTime: Date())
        let privateData = UserPrivateData(
            firstName: new.firstName, lastName: new.lastName, nickname: new.nickname, creationTime: Date(),
            userAnonymizedID: UUID(), devices: [device])
        let record = User(id: userID, mobileNumber: new.mobileNumber.value, keySalt: Data(salt),
                          privateData: try seal(privateData, key: key, userID: userID).data)
        let code = newConfirmationCode()
        record.confirmationCode = key.seal(Array(code.utf8), field: Self.confirmationCodeField, recordID: userID).data

        do {
            try await db.transaction { tx in
                try await record.create(on: tx)
                try await UserAnonymized(id: privateData.userAnonymizedID).create(on: tx)
                try await DeviceAnonymized(
                    id: device.deviceAnonymizedID, userAnonymizedID: privateData.userAnonymizedID, deviceIndex: 0,
                    operatingSystem: new.device.operatingSystem.rawValue, appVersion: new.device.appVersion,
                    appVersionCode: new.device.appVersionCode, firebaseInstanceID: new.device.firebaseInstanceID
                ).create(on: tx)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw YonaError(.userExists)
        }
        await sms.sendConfirmationCode(code, to: new.mobileNumber)
        return (UnlockedUser(record: record, key: key, privateData: privateData), password)
    }

    /// Loads a user and decrypts its private part. A password that does not open it is refused by the
    /// AEAD's authentication, not by any stored hash.
    func unlock(userID: UUID, passwordHeader: String?) async throws -> UnlockedUser {
        guard let passwordHeader else { throw YonaError(.missingPasswordHeader) }
        guard let record = try await User.find(userID, on: db) else { throw YonaError(.userNotFound) }
        guard let password = YonaPassword(header: passwordHeader) else { throw YonaError(.decryptingData) }
        let key = try UserKey(password: password, salt: Array(record.keySalt), userID: userID)
        do {
            let plaintext = try key.open(EncryptedBlob(bytes: Array(record.privateData)), field: Self.privateDataField, recordID: userID)
            let privateData = try JSONDecoder().decode(UserPrivateData.self, from: Data(plaintext))
            return UnlockedUser(record: record, key: key, privateData: privateData)
        } catch is CryptoError {
            throw YonaError(.decryptingData)
        }
    }

    /// Checks the code; five wrong codes lock it until a new one is sent. The failure count is raised
    /// atomically in the database, so parallel guesses cannot get more than five tries.
    func confirmMobileNumber(_ user: UnlockedUser, code: String) async throws -> UnlockedUser {
        guard !user.isConfirmed, let stored = user.record.confirmationCode else { throw YonaError(.confirmationCodeNotSet) }
        guard user.record.confirmationFailedAttempts < Self.maxConfirmationAttempts else {
            throw YonaError(.tooManyFailedConfirmationAttempts)
        }
        let expected = try user.key.open(EncryptedBlob(bytes: Array(stored)), field: Self.confirmationCodeField, recordID: user.id)
        guard SecretMemory.constantTimeEquals(expected, Array(code.utf8)) else {
            let failures = try await recordFailedConfirmation(userID: user.id)
            guard let failures else { throw YonaError(.tooManyFailedConfirmationAttempts) }
            throw YonaError(.confirmationCodeMismatch, remainingAttempts: Self.maxConfirmationAttempts - failures)
        }
        user.record.mobileNumberConfirmed = true
        user.record.confirmationCode = nil
        user.record.confirmationFailedAttempts = 0
        try await user.record.save(on: db)
        return user
    }

    /// Issues a new code and resets the failure count.
    func resendConfirmationCode(_ user: UnlockedUser) async throws {
        guard !user.isConfirmed else { throw YonaError(.confirmationCodeNotSet) }
        let code = newConfirmationCode()
        user.record.confirmationCode = user.key.seal(Array(code.utf8), field: Self.confirmationCodeField, recordID: user.id).data
        user.record.confirmationFailedAttempts = 0
        try await user.record.save(on: db)
        await sms.sendConfirmationCode(code, to: try MobileNumber(user.mobileNumber))
    }

    /// Changes names and number; a new number must be confirmed again.
    func update(_ user: UnlockedUser, firstName: String, lastName: String, nickname: String, mobileNumber: MobileNumber) async throws -> UnlockedUser {
        var user = user
        user.privateData.firstName = firstName
        user.privateData.lastName = lastName
        user.privateData.nickname = nickname
        user.record.privateData = try seal(user.privateData, key: user.key, userID: user.id).data
        var newCode: String?
        if mobileNumber.value != user.record.mobileNumber {
            let code = newConfirmationCode()
            user.record.mobileNumber = mobileNumber.value
            user.record.mobileNumberConfirmed = false
            user.record.confirmationCode = user.key.seal(Array(code.utf8), field: Self.confirmationCodeField, recordID: user.id).data
            user.record.confirmationFailedAttempts = 0
            newCode = code
        }
        do {
            try await user.record.save(on: db)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw YonaError(.userExists)
        }
        if let newCode { await sms.sendConfirmationCode(newCode, to: mobileNumber) }
        return user
    }

    /// Removes the user and, through the link only the user's key can read, the anonymized part.
    func delete(_ user: UnlockedUser) async throws {
        try await db.transaction { tx in
            try await DeviceAnonymized.query(on: tx).filter(\.$userAnonymized.$id == user.privateData.userAnonymizedID).delete()
            try await UserAnonymized.query(on: tx).filter(\.$id == user.privateData.userAnonymizedID).delete()
            try await User.query(on: tx).filter(\.$id == user.id).delete()
        }
    }

    /// The user's devices joined with what the anonymized side holds for them.
    func devices(of user: UnlockedUser) async throws -> [OwnDevice] {
        let ids = user.privateData.devices.map(\.deviceAnonymizedID)
        let rows = try await DeviceAnonymized.query(on: db).filter(\.$id ~~ ids).all()
        let byID = Dictionary(uniqueKeysWithValues: rows.compactMap { row in row.id.map { ($0, row) } })
        return user.privateData.devices.compactMap { device in
            guard let row = byID[device.deviceAnonymizedID] else { return nil }
            return OwnDevice(
                device: device, deviceIndex: row.deviceIndex,
                operatingSystem: OperatingSystem(rawValue: row.operatingSystem) ?? .unknown,
                appLastOpenedDate: row.appLastOpenedDate, firebaseInstanceID: row.firebaseInstanceID)
        }
    }

    // MARK: - helpers

    private func seal(_ privateData: UserPrivateData, key: UserKey, userID: UUID) throws -> EncryptedBlob {
        key.seal(Array(try JSONEncoder().encode(privateData)), field: Self.privateDataField, recordID: userID)
    }

    private func newConfirmationCode() -> String {
        testServer ? "1234" : String(format: "%04u", SecureRandom.uniform(10_000))
    }

    /// Adds one failure unless the code is already locked; returns the new count, or nil if it was locked.
    private func recordFailedConfirmation(userID: UUID) async throws -> Int? {
        guard let sql = db as? any SQLDatabase else { fatalError("Yona needs an SQL database") }
        let row = try await sql.raw("""
            UPDATE users SET confirmation_failed_attempts = confirmation_failed_attempts + 1
            WHERE id = \(bind: userID) AND confirmation_failed_attempts < \(bind: Self.maxConfirmationAttempts)
            RETURNING confirmation_failed_attempts
            """).first()
        return try row?.decode(column: "confirmation_failed_attempts", as: Int.self)
    }
}
