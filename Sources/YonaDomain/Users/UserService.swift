import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// Creating, unlocking, confirming, changing and deleting users. Plain domain logic over the store;
/// it knows nothing of HTTP. A user row is never `save`d after creation: each change writes only its
/// own columns, and the private data only through `modifyPrivateData`'s version check.
package struct UserService: Sendable {
    package static let maxConfirmationAttempts = 5
    package static let privateDataField = "users.private_data"
    package static let confirmationCodeField = "users.confirmation_code"

    package let db: any Database
    package let sms: any SMSSender
    package let recovery: RecoveryKey
    package let testServer: Bool
    /// Where device changes queue their VPN accounts (nil without a directory).
    package var vpnAccounts: VPNAccountQueue? = nil
    /// Who may get an account (the cap and the white list); invitations pass it too (`InvitationService`).
    package var signUp = SignUpGate()

    /// Creates the identity row, its anonymized twin and the first device in one transaction,
    /// and sends the confirmation code. Returns the new password, which is never stored.
    /// With `confirmed` (a lost-phone overwrite, whose SMS code already proved the number) no code is sent;
    /// `replacing` runs first in the same transaction (it deletes the old account of the number).
    package func create(
        _ new: NewUser, confirmed: Bool = false,
        replacing: (@Sendable (any Database) async throws -> Void)? = nil
    ) async throws -> (UnlockedUser, YonaPassword) {
        let password = YonaPassword.generate()
        let userID = UUID()
        let salt = SecureRandom.bytes(UserKey.saltLength)
        let key = try UserKey(password: password, salt: salt, userID: userID)
        let device = UserDevice.registered(name: new.device.name)
        let namedInbox = BoxKeyPair.generate()
        let anonymousInbox = BoxKeyPair.generate()
        let privateData = UserPrivateData(
            firstName: new.firstName, lastName: new.lastName, nickname: new.nickname, creationTime: Date(),
            userAnonymizedID: UUID(), devices: [device],
            namedInboxSecretKey: namedInbox.secretKey.data, anonymousInboxSecretKey: anonymousInbox.secretKey.data)
        let record = User(
            id: userID, mobileNumber: new.mobileNumber.value, keySalt: Data(salt),
            privateData: try seal(privateData, key: key, userID: userID).data)
        let code = newConfirmationCode()
        if confirmed {
            record.mobileNumberConfirmed = true
        } else {
            record.confirmationCode = key.seal(Array(code.utf8), field: Self.confirmationCodeField, recordID: userID).data
        }
        record.namedInboxPublicKey = Data(namedInbox.publicKey)
        record.recoveryBlob = recovery.seal(userAnonymizedID: privateData.userAnonymizedID, userID: userID)

        let afterCommit: @Sendable () async -> Void
        do {
            afterCommit = try await db.transaction { tx in
                try await replacing?(tx)
                try await record.create(on: tx)
                // an overwrite replaces an account: it passes the gate, as Yona's does
                if replacing == nil { try await signUp.admit(new.mobileNumber, as: .free, on: tx) }
                try await UserAnonymized(id: privateData.userAnonymizedID, anonymousInboxPublicKey: Data(anonymousInbox.publicKey)).create(on: tx)
                for goal in try await GoalService.mandatoryGoals(for: privateData.userAnonymizedID, on: tx) {
                    try await goal.create(on: tx)
                }
                try await DeviceAnonymized(
                    new.device, id: device.deviceAnonymizedID, userAnonymizedID: privateData.userAnonymizedID,
                    deviceIndex: 0
                ).create(on: tx)
                try await vpnAccounts?.create(
                    login: VPNLogin.id(privateData.userAnonymizedID, deviceIndex: 0), password: device.vpnPassword ?? "", on: tx)
                try await AnnouncementService(db: tx).deliverActive(to: privateData.userAnonymizedID, on: tx)
                // The code is queued with the account: both exist, or neither.
                let texts = sms.inTransaction(tx)
                if !confirmed { try await texts.sender.sendConfirmationCode(code, to: new.mobileNumber) }
                return texts.afterCommit
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            let existing = try await User.query(on: db).filter(\.$mobileNumber == new.mobileNumber.value).first()
            throw YonaError(existing?.createdOnBuddyRequest == true ? .userExistsCreatedOnBuddyRequest : .userExists)
        }
        await afterCommit()
        return (UnlockedUser(record: record, key: key, privateData: privateData), password)
    }

    /// Loads a user and decrypts its private part. A password that does not open it is refused by the
    /// AEAD's authentication, not by any stored hash.
    package func unlock(userID: UUID, passwordHeader: String?) async throws -> UnlockedUser {
        guard let passwordHeader else { throw YonaError(.missingPasswordHeader) }
        guard let (record, namedInboxWaiting) = try await User.findWithNamedInboxFlag(userID, on: db) else { throw YonaError(.userNotFound) }
        guard !record.createdOnBuddyRequest else { throw YonaError(.userCreatedOnBuddyRequest) }
        guard let password = YonaPassword(header: passwordHeader) else { throw YonaError(.decryptingData) }
        let user = try await withVPNPasswords(try await withRecoveryBlob(try await withInboxes(try open(record, password: password))))
        let buddies = BuddyService(db: db, users: self)
        // The named inbox is processed once, by the first call after something arrived, not looked at on every call.
        let processed = namedInboxWaiting ? try await buddies.processNamedInbox(user) : user
        return try await buddies.dropVanishedBuddies(processed)
    }

    /// Decrypts a loaded record with a Yona password; one that does not open it is a wrong password.
    package func open(_ record: User, password: YonaPassword) throws -> UnlockedUser {
        try open(record, key: try UserKey(password: password, salt: Array(record.keySalt), userID: record.id!))
    }

    /// Decrypts a loaded record; a key that does not open it is a wrong password.
    package func open(_ record: User, key: UserKey) throws -> UnlockedUser {
        do {
            let plaintext = try key.open(EncryptedBlob(bytes: Array(record.privateData)), field: Self.privateDataField, recordID: record.id!)
            let privateData = try CompactJSONDecoder.decode(UserPrivateData.self, from: plaintext)
            return UnlockedUser(record: record, key: key, privateData: privateData)
        } catch is CryptoError {
            throw YonaError(.decryptingData)
        }
    }

    /// Unlocks with a password the server recovered itself (the new-device flow).
    package func unlock(userID: UUID, password: YonaPassword) async throws -> UnlockedUser {
        guard let record = try await User.find(userID, on: db) else { throw YonaError(.userNotFound) }
        return try await withInboxes(try open(record, password: password))
    }

    /// Gives a user made before lost-phone overwrites existed its sealed anonymized id, once.
    private func withRecoveryBlob(_ user: UnlockedUser) async throws -> UnlockedUser {
        guard user.record.recoveryBlob == nil else { return user }
        let blob = recovery.seal(userAnonymizedID: user.privateData.userAnonymizedID, userID: user.id)
        try await User.query(on: db).filter(\.$id == user.id).set(\.$recoveryBlob, to: blob).update()
        user.record.recoveryBlob = blob
        return user
    }

    /// Gives devices registered before VPN passwords existed one each, once.
    private func withVPNPasswords(_ user: UnlockedUser) async throws -> UnlockedUser {
        guard user.privateData.devices.contains(where: { $0.vpnPassword == nil }) else { return user }
        return try await db.transaction { tx in
            let updated = try await modifyPrivateData(user, on: tx) { data in
                for index in data.devices.indices where data.devices[index].vpnPassword == nil {
                    data.devices[index].vpnPassword = VPNPassword.generate()
                }
            }
            // Their accounts exist from now on.
            if let vpnAccounts {
                let given = Set(user.privateData.devices.filter { $0.vpnPassword == nil }.map(\.id))
                let rows = try await DeviceAnonymized.query(on: tx).filter(\.$userAnonymized.$id == user.privateData.userAnonymizedID).all()
                for device in updated.privateData.devices where given.contains(device.id) {
                    guard let row = rows.first(where: { $0.id == device.deviceAnonymizedID }) else { continue }
                    try await vpnAccounts.create(
                        login: VPNLogin.id(user.privateData.userAnonymizedID, deviceIndex: row.deviceIndex),
                        password: device.vpnPassword ?? "", on: tx)
                }
            }
            return updated
        }
    }

    /// Gives a user made before inboxes existed its two key pairs, once.
    private func withInboxes(_ user: UnlockedUser) async throws -> UnlockedUser {
        guard user.privateData.namedInboxSecretKey == nil || user.privateData.anonymousInboxSecretKey == nil else { return user }
        let named = BoxKeyPair.generate()
        let anonymous = BoxKeyPair.generate()
        return try await db.transaction { tx in
            let updated = try await modifyPrivateData(user, on: tx) { data in
                data.namedInboxSecretKey = named.secretKey.data
                data.anonymousInboxSecretKey = anonymous.secretKey.data
            }
            try await User.query(on: tx).filter(\.$id == user.id).set(\.$namedInboxPublicKey, to: Data(named.publicKey)).update()
            try await UserAnonymized.query(on: tx).filter(\.$id == user.privateData.userAnonymizedID)
                .set(\.$anonymousInboxPublicKey, to: Data(anonymous.publicKey)).update()
            return updated
        }
    }

    /// Checks the code; five wrong codes lock it until a new one is sent. The failure count is raised
    /// atomically in the database, so parallel guesses cannot get more than five tries.
    package func confirmMobileNumber(_ user: UnlockedUser, code: String) async throws -> UnlockedUser {
        guard !user.isConfirmed, let stored = user.record.confirmationCode else { throw YonaError(.confirmationCodeNotSet) }
        // The try is counted before the code is compared, so a right code cannot slip in after the lockout.
        let tries: Int
        switch try await User.reserveAttempt(.confirmation, of: user.id, code: stored, limit: Self.maxConfirmationAttempts, on: db) {
        case .reserved(let count): tries = count
        case .exhausted: throw YonaError(.tooManyFailedConfirmationAttempts)
        case .codeGone: throw YonaError(.confirmationCodeNotSet)
        }
        let expected = try user.key.open(EncryptedBlob(bytes: Array(stored)), field: Self.confirmationCodeField, recordID: user.id)
        guard SecretMemory.constantTimeEquals(expected, Array(code.utf8)) else {
            throw YonaError(.confirmationCodeMismatch, remainingAttempts: Self.maxConfirmationAttempts - tries)
        }
        // Only the code that was stored when the try was reserved confirms (a parallel resend replaces it).
        let confirmed = try await db.sql.raw(
            """
            UPDATE users SET mobile_number_confirmed = \(bind: true), confirmation_code = NULL, confirmation_failed_attempts = 0
            WHERE id = \(bind: user.id) AND confirmation_code = \(bind: stored) RETURNING id
            """
        ).first()
        guard confirmed != nil else { throw YonaError(.confirmationCodeNotSet) }
        user.record.mobileNumberConfirmed = true
        user.record.confirmationCode = nil
        return user
    }

    /// Issues a new code and resets the failure count.
    package func resendConfirmationCode(_ user: UnlockedUser) async throws {
        guard !user.isConfirmed else { throw YonaError(.confirmationCodeNotSet) }
        let code = newConfirmationCode()
        let number = try MobileNumber(user.mobileNumber)
        let afterCommit = try await db.transaction { tx in
            try await User.query(on: tx).filter(\.$id == user.id)
                .set(\.$confirmationCode, to: user.key.seal(Array(code.utf8), field: Self.confirmationCodeField, recordID: user.id).data)
                .set(\.$confirmationFailedAttempts, to: 0)
                .update()
            let texts = sms.inTransaction(tx)
            try await texts.sender.sendConfirmationCode(code, to: number)
            return texts.afterCommit
        }
        await afterCommit()
    }

    /// Changes names and number; a new number must be confirmed again.
    package func update(_ original: UnlockedUser, firstName: String, lastName: String, nickname: String, mobileNumber: MobileNumber) async throws
        -> UnlockedUser
    {
        var user = original
        let data = original.privateData
        if data.firstName != firstName || data.lastName != lastName || data.nickname != nickname {
            // Accepted buddies hear of it (Yona's BuddyInfoChangeMessage) in the same transaction.
            user = try await db.transaction { tx in
                let changed = try await modifyPrivateData(original, on: tx) { data in
                    data.firstName = firstName
                    data.lastName = lastName
                    data.nickname = nickname
                }
                try await BuddyService.announceInfoChange(changed, on: tx)
                return changed
            }
        }
        guard mobileNumber.value != user.record.mobileNumber else { return user }
        let code = newConfirmationCode()
        let sealedCode = user.key.seal(Array(code.utf8), field: Self.confirmationCodeField, recordID: user.id).data
        let userID = user.id
        let afterCommit: @Sendable () async -> Void
        do {
            // The new number and the text of its code commit together: a number is never switched without its code.
            afterCommit = try await db.transaction { tx in
                try await User.query(on: tx).filter(\.$id == userID)
                    .set(\.$mobileNumber, to: mobileNumber.value)
                    .set(\.$mobileNumberConfirmed, to: false)
                    .set(\.$confirmationCode, to: sealedCode)
                    .update() // the try count stays: switching numbers back and forth must not buy guesses
                let texts = sms.inTransaction(tx)
                try await texts.sender.sendConfirmationCode(code, to: mobileNumber)
                return texts.afterCommit
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw YonaError(.userExists)
        }
        await afterCommit()
        user.record.mobileNumber = mobileNumber.value
        user.record.mobileNumberConfirmed = false
        return user
    }

    /// Applies `change` to the private data and stores it, re-reading and re-applying when another request
    /// changed it meanwhile (optimistic locking on `private_data_version`), so no change is lost.
    package func modifyPrivateData(
        _ user: UnlockedUser, on database: (any Database)? = nil,
        _ change: (inout UserPrivateData) throws -> Void
    ) async throws -> UnlockedUser {
        let database = database ?? db
        var current = user
        for _ in 0..<8 {
            var data = current.privateData
            try change(&data)
            let sealed = try seal(data, key: current.key, userID: current.id).data
            let version = current.record.privateDataVersion
            let row = try await database.sql.raw(
                """
                UPDATE users SET private_data = \(bind: sealed), private_data_version = private_data_version + 1
                WHERE id = \(bind: current.id) AND private_data_version = \(bind: version)
                RETURNING private_data_version
                """
            ).first()
            if let row {
                current.record.privateData = sealed
                current.record.privateDataVersion = try row.decode(column: "private_data_version", as: Int.self)
                current.privateData = data
                return current
            }
            guard let fresh = try await User.find(current.id, on: database) else { throw YonaError(.userNotFound) }
            current = try open(fresh, key: current.key)
        }
        throw YonaError(.unexpected)
    }
    /// Removes the user and, through the link only the user's key can read, the anonymized part.
    package func delete(_ user: UnlockedUser, text: String? = nil) async throws {
        try await db.transaction { tx in
            try await BuddyService(db: tx, users: self).disconnectAll(of: user, text: text, on: tx)
            if let photo = user.privateData.photoID { try await UserPhotoService.retire(photo, on: tx) }
            try await vpnAccounts?.deleteAll(of: user.privateData.userAnonymizedID, on: tx)
            try await Self.deleteAnonymizedPart(user.privateData.userAnonymizedID, on: tx)
            try await User.query(on: tx).filter(\.$id == user.id).delete()
        }
        await MessageNotices(db: db, sms: sms, rateLimitKey: recovery.rateLimitKey).send(to: user.privateData.buddies.map(\.userID))
    }

    /// Deletes everything of an anonymized user, including the halves of buddy relations that point at it
    /// (so no buddy's conflicts flow to it and none of its own flow anywhere).
    package static func deleteAnonymizedPart(_ userAnonymizedID: UUID, on tx: any Database) async throws {
        try await BuddyAnonymized.query(on: tx).filter(\.$owner.$id == userAnonymizedID).delete()
        try await BuddyAnonymized.query(on: tx).filter(\.$buddyUserAnonymizedID == userAnonymizedID).delete()
        try await DeviceAnonymized.query(on: tx).filter(\.$userAnonymized.$id == userAnonymizedID).delete()
        let goalIDs = try await Goal.query(on: tx).filter(\.$userAnonymized.$id == userAnonymizedID).all(\.$id)
        try await GoalHistoryItem.query(on: tx).filter(\.$goal.$id ~~ goalIDs).delete()
        try await Goal.query(on: tx).filter(\.$userAnonymized.$id == userAnonymizedID).delete()
        try await Message.query(on: tx).filter(\.$userAnonymized.$id == userAnonymizedID).delete()
        try await UserAnonymized.query(on: tx).filter(\.$id == userAnonymizedID).delete()
    }

    /// The latest day any device of each anonymized user opened the app (buddies' `appLastOpenedDate`).
    package func lastOpenedDays(ofAnonymizedUsers ids: [UUID]) async throws -> [UUID: String] {
        try await lastDays(ofAnonymizedUsers: ids).mapValues(\.opened).compactMapValues { $0 }
    }

    /// Per anonymized user, the latest day any of its devices opened the app and the latest day of monitored activity.
    package func lastDays(ofAnonymizedUsers ids: [UUID]) async throws -> [UUID: DeviceFacts] {
        guard !ids.isEmpty else { return [:] }
        var days: [UUID: DeviceFacts] = [:]
        // Raw SQL: read on every profile and buddy view, and Fluent's model decoding cost more than the query.
        for row in try await db.sql.raw(
            """
            SELECT id, user_anonymized_id, app_last_opened_date, last_monitored_activity_date, vpn_connected
            FROM \(unsafeRaw: DeviceAnonymized.schema) WHERE user_anonymized_id IN (\(binds: ids))
            """
        ).all() {
            try Self.addFacts(of: row, to: &days)
        }
        return days
    }

    private static func addFacts(of row: any SQLRow, to days: inout [UUID: DeviceFacts]) throws {
        let owner = try row.decode(column: "user_anonymized_id", as: UUID.self)
        var entry = days[owner] ?? DeviceFacts()
        if let day = try row.decode(column: "app_last_opened_date", as: String?.self) { entry.opened = max(entry.opened ?? day, day) }
        if let day = try row.decode(column: "last_monitored_activity_date", as: String?.self) {
            entry.monitored = max(entry.monitored ?? day, day)
        }
        if try row.decode(column: "vpn_connected", as: Bool.self) { entry.vpnConnected.insert(try row.decode(column: "id", as: UUID.self)) }
        days[owner] = entry
    }

    /// What the anonymized side shows of one user's devices together: the latest day an app was opened and
    /// activity was seen, and which devices have their VPN up.
    package struct DeviceFacts: Sendable {
        package var opened: String?
        package var monitored: String?
        package var vpnConnected: Set<UUID> = []
    }

    /// The user's devices joined with what the anonymized side holds for them.
    package func devices(of user: UnlockedUser) async throws -> [OwnDevice] {
        try await devices(of: user, withFactsOf: []).devices
    }

    /// The user's devices and, in the same round trip (a profile read needs both), the device facts of other
    /// anonymized users (the sharing buddies'), as `lastDays` gives them. Only the user's own Instance IDs are read.
    package func devices(of user: UnlockedUser, withFactsOf others: [UUID]) async throws -> (devices: [OwnDevice], facts: [UUID: DeviceFacts]) {
        let ids = user.privateData.devices.map(\.deviceAnonymizedID)
        guard !ids.isEmpty || !others.isEmpty else { return ([], [:]) }
        let me = user.privateData.userAnonymizedID
        var byID: [UUID: any SQLRow] = [:]
        var facts: [UUID: DeviceFacts] = [:]
        let others = others.filter { $0 != me }
        for row in try await db.sql.raw(
            """
            SELECT id, user_anonymized_id, device_index, operating_system, app_last_opened_date, last_monitored_activity_date,
            CASE WHEN user_anonymized_id = \(bind: me) THEN firebase_instance_id END AS firebase_instance_id,
            notifications_enabled, vpn_connected FROM \(unsafeRaw: DeviceAnonymized.schema)
            WHERE id IN (\(binds: ids.isEmpty ? [UUID()] : ids)) OR user_anonymized_id IN (\(binds: others.isEmpty ? [UUID()] : others))
            """ // a fresh random id stands in for an empty list, which SQL cannot write: it matches no row
        ).all() {
            if try row.decode(column: "user_anonymized_id", as: UUID.self) == me {
                byID[try row.decode(column: "id", as: UUID.self)] = row
            } else {
                try Self.addFacts(of: row, to: &facts)
            }
        }
        let devices = try user.privateData.devices.compactMap { device -> OwnDevice? in
            guard let row = byID[device.deviceAnonymizedID] else { return nil }
            return OwnDevice(
                device: device, deviceIndex: try row.decode(column: "device_index", as: Int.self),
                operatingSystem: OperatingSystem(rawValue: try row.decode(column: "operating_system", as: String.self)) ?? .unknown,
                appLastOpenedDate: try row.decode(column: "app_last_opened_date", as: String?.self),
                lastMonitoredActivityDate: try row.decode(column: "last_monitored_activity_date", as: String?.self),
                firebaseInstanceID: try row.decode(column: "firebase_instance_id", as: String?.self),
                notificationsEnabled: try row.decode(column: "notifications_enabled", as: Bool.self),
                vpnConnected: try row.decode(column: "vpn_connected", as: Bool.self))
        }
        return (devices, facts)
    }

    // MARK: - helpers

    package func seal(_ privateData: UserPrivateData, key: UserKey, userID: UUID) throws -> EncryptedBlob {
        key.seal(Array(try CompactJSONEncoder.data(privateData)), field: Self.privateDataField, recordID: userID)
    }

    package func newConfirmationCode() -> String {
        testServer ? "1234" : String(format: "%04u", SecureRandom.uniform(10_000))
    }

    package init(
        db: any Database, sms: any SMSSender, recovery: RecoveryKey, testServer: Bool, vpnAccounts: VPNAccountQueue? = nil,
        signUp: SignUpGate = SignUpGate()
    ) {
        self.db = db
        self.sms = sms
        self.recovery = recovery
        self.testServer = testServer
        self.vpnAccounts = vpnAccounts
        self.signUp = signUp
    }
}
