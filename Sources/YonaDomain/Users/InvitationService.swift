import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaStore

/// Users "created on buddy request". A buddy names a number that has no account; the server makes the
/// account with its Yona password (as Yona does), keeps that password sealed under Argon2id(temporary password),
/// and sends the number a link that carries the temporary password. The invitee's app opens the link
/// (`GET ?tempPassword=`, which shows the Yona password) and takes the account over (`PUT ?tempPassword=`, or `PUT`
/// with the Yona password), after which the temporary password opens nothing.
package struct InvitationService: Sendable {
    package static let temporaryPasswordBytes = 12
    package static let invitationPasswordField = "users.invitation_password"
    /// A test server's temporary password is fixed, as Yona's (like its fixed SMS code), so tests can build the link.
    package static let testServerTemporaryPassword = "ab&cd"

    /// An invited account opened by its temporary password: the user and its Yona password (nil on an invitation
    /// made before invited accounts had one; its private data is sealed under the Argon2id key itself).
    package struct Opened: Sendable {
        package let user: UnlockedUser
        package let password: YonaPassword?
    }
    /// An invitation not taken over within this time is withdrawn: the account, its anonymized part and the
    /// request are removed, and the inviter is told on their next call (`dropVanishedBuddies`).
    package static let lifetime: TimeInterval = 30 * 86_400

    package let db: any Database
    package let users: UserService
    package let argon2: Argon2Pool
    package let sms: any SMSSender
    package let email: any EmailSender

    /// An invitee account built in memory (the slow key derivation done), ready to insert in the buddy
    /// request's transaction.
    package struct Invitee: Sendable {
        package let record: User
        package let anonymized: UserAnonymized
        package let temporaryPassword: String
        /// The number's sign-up gate (invited users count toward the cap and may be limited to the white list).
        package let signUp: SignUpGate
        package let number: MobileNumber
        package var userID: UUID { record.id! }

        /// Inserts the identity row, its anonymized twin and the mandatory goals.
        package func insert(on tx: any Database) async throws {
            try await record.create(on: tx)
            try await signUp.admit(number, as: .invited, on: tx)
            try await anonymized.create(on: tx)
            for goal in try await GoalService.mandatoryGoals(for: anonymized.id!, on: tx) {
                try await goal.create(on: tx)
            }
            try await AnnouncementService(db: tx).deliverActive(to: anonymized.id!, on: tx)
        }
    }

    /// Makes the account of an invitee; the inviter's names for it stand until the invitee changes them.
    /// `inviter` is whose Argon2id turn it takes (one at a time per account).
    package func prepare(firstName: String, lastName: String, mobileNumber: MobileNumber, inviter: UUID) async throws -> Invitee {
        // refused before the slow key derivation; counted again (with the cap) in the transaction
        try await users.signUp.checkWhiteList(mobileNumber, as: .invited, on: db)
        let temporaryPassword =
            users.testServer
            ? Self.testServerTemporaryPassword
            : Base64URL.encode(SecureRandom.bytes(Self.temporaryPasswordBytes))
        let userID = UUID()
        let password = YonaPassword.generate()
        let salt = SecureRandom.bytes(UserKey.saltLength)
        let key = try UserKey(password: password, salt: salt, userID: userID)
        let invitationSalt = SecureRandom.bytes(PasswordHash.saltLength)
        let temporaryKey = UserKey(
            temporaryPasswordKey: try await argon2.deriveKey(password: Array(temporaryPassword.utf8), salt: invitationSalt, for: "account:\(inviter)")
        )
        let namedInbox = BoxKeyPair.generate()
        let anonymousInbox = BoxKeyPair.generate()
        let privateData = UserPrivateData(
            firstName: firstName, lastName: lastName, nickname: firstName, creationTime: Date(), userAnonymizedID: UUID(),
            devices: [], namedInboxSecretKey: namedInbox.secretKey.data, anonymousInboxSecretKey: anonymousInbox.secretKey.data)
        let record = User(
            id: userID, mobileNumber: mobileNumber.value, keySalt: Data(salt),
            privateData: try users.seal(privateData, key: key, userID: userID).data)
        record.namedInboxPublicKey = Data(namedInbox.publicKey)
        record.createdOnBuddyRequest = true
        record.invitationSalt = Data(invitationSalt)
        record.invitationPassword = temporaryKey.seal(password.bytes, field: Self.invitationPasswordField, recordID: userID).data
        record.invitedOn = Self.day(of: Date())
        record.recoveryBlob = users.recovery.seal(userAnonymizedID: privateData.userAnonymizedID, userID: userID)
        return Invitee(
            record: record,
            anonymized: UserAnonymized(id: privateData.userAnonymizedID, anonymousInboxPublicKey: Data(anonymousInbox.publicKey)),
            temporaryPassword: temporaryPassword, signUp: users.signUp, number: mobileNumber)
    }

    /// Queues the invitation by SMS, and by e-mail when the inviter gave an address, in the transaction that makes
    /// the invited account (both exist, or neither); the returned closure tries them once it committed.
    package func queue(
        _ invitation: BuddyInvitation, to number: MobileNumber, emailAddress: String?, in tx: any Database
    ) async throws -> @Sendable () async -> Void {
        let texts = sms.inTransaction(tx)
        try await texts.sender.sendBuddyInvitation(invitation, to: number)
        var mail: (@Sendable () async -> Void)?
        if let emailAddress { mail = try await email.queueInvitation(invitation, to: emailAddress, in: tx) }
        let queuedMail = mail
        return {
            await texts.afterCommit()
            await queuedMail?()
        }
    }

    /// Opens an invited account with the temporary password from the link. As Yona, a temporary password that opens
    /// nothing (a wrong one, or any after the take-over) is a wrong password.
    package func unlock(userID: UUID, temporaryPassword: String) async throws -> Opened {
        guard let record = try await User.find(userID, on: db) else { throw YonaError(.userNotFound) }
        guard record.createdOnBuddyRequest else {
            // As Yona: a normal account is named as such only to whoever holds its password.
            if let password = YonaPassword(header: temporaryPassword),
                (try? users.open(record, password: password)) != nil
            {
                throw YonaError(.userNotCreatedOnBuddyRequest)
            }
            throw YonaError(.decryptingData)
        }
        guard let sealed = record.invitationPassword, let salt = record.invitationSalt else {
            let key = UserKey(
                temporaryPasswordKey: try await argon2.deriveKey(
                    password: Array(temporaryPassword.utf8),
                    salt: Array(record.keySalt), for: "account:\(userID)"))
            return Opened(user: try users.open(record, key: key), password: nil)
        }
        let temporaryKey = UserKey(
            temporaryPasswordKey: try await argon2.deriveKey(password: Array(temporaryPassword.utf8), salt: Array(salt), for: "account:\(userID)"))
        guard let bytes = try? temporaryKey.open(EncryptedBlob(bytes: Array(sealed)), field: Self.invitationPasswordField, recordID: userID),
            let password = YonaPassword(bytes: bytes)
        else {
            throw YonaError(.decryptingData)
        }
        return Opened(user: try users.open(record, password: password), password: password)
    }

    /// Opens an invited account with its Yona password (shown by the invitation link), for a take-over through the
    /// account's plain `edit` link; nil when the account is not an invited one.
    package func unlock(userID: UUID, passwordHeader: String?) async throws -> Opened? {
        guard let record = try await User.find(userID, on: db), record.createdOnBuddyRequest, record.invitationPassword != nil else { return nil }
        guard let passwordHeader else { throw YonaError(.missingPasswordHeader) }
        guard let password = YonaPassword(header: passwordHeader) else { throw YonaError(.decryptingData) }
        return Opened(user: try users.open(record, password: password), password: password)
    }

    /// The invitee's app takes the account over: its names, number and first device replace the inviter's
    /// guesses, under the Yona password the account has had since the invitation (an invitation from before that
    /// gets a fresh one), and the temporary password stops working. The number must then be confirmed like any new
    /// account's. Only one take-over can win (compare-and-set on the version).
    package func takeOver(_ opened: Opened, as new: NewUser) async throws -> (UnlockedUser, YonaPassword) {
        let invited = opened.user
        let password = opened.password ?? YonaPassword.generate()
        let salt = opened.password == nil ? SecureRandom.bytes(UserKey.saltLength) : Array(invited.record.keySalt)
        let key = try UserKey(password: password, salt: salt, userID: invited.id)
        let device = UserDevice.registered(name: new.device.name)
        var changed = invited.privateData
        changed.firstName = new.firstName
        changed.lastName = new.lastName
        changed.nickname = new.nickname
        changed.devices = [device]
        let privateData = changed
        let sealed = try users.seal(privateData, key: key, userID: invited.id).data
        let code = users.newConfirmationCode()
        let sealedCode = key.seal(Array(code.utf8), field: UserService.confirmationCodeField, recordID: invited.id).data

        let version: Int
        let afterCommit: @Sendable () async -> Void
        do {
            (version, afterCommit) = try await db.transaction { tx in
                let row = try await tx.sql.raw(
                    """
                    UPDATE users SET private_data = \(bind: sealed), private_data_version = private_data_version + 1,
                        key_salt = \(bind: Data(salt)), created_on_buddy_request = \(bind: false), invited_on = NULL,
                        invitation_password = NULL, invitation_salt = NULL,
                        mobile_number = \(bind: new.mobileNumber.value), mobile_number_confirmed = \(bind: false),
                        confirmation_code = \(bind: sealedCode), confirmation_failed_attempts = 0
                    WHERE id = \(bind: invited.id) AND created_on_buddy_request = \(bind: true)
                        AND private_data_version = \(bind: invited.record.privateDataVersion)
                    RETURNING private_data_version
                    """
                ).first()
                guard let row else { throw YonaError(.decryptingData) }
                try await DeviceAnonymized(
                    new.device, id: device.deviceAnonymizedID, userAnonymizedID: privateData.userAnonymizedID,
                    deviceIndex: 0
                ).create(on: tx)
                try await users.vpnAccounts?.create(
                    login: VPNLogin.id(privateData.userAnonymizedID, deviceIndex: 0), password: device.vpnPassword ?? "", on: tx)
                let texts = sms.inTransaction(tx)
                try await texts.sender.sendConfirmationCode(code, to: new.mobileNumber)
                return (try row.decode(column: "private_data_version", as: Int.self), texts.afterCommit)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw YonaError(.userExists)
        }
        await afterCommit()
        let record = invited.record
        record.privateData = sealed
        record.privateDataVersion = version
        record.keySalt = Data(salt)
        record.createdOnBuddyRequest = false
        record.invitedOn = nil
        record.invitationPassword = nil
        record.invitationSalt = nil
        record.mobileNumber = new.mobileNumber.value
        record.mobileNumberConfirmed = false
        record.confirmationCode = sealedCode
        record.confirmationFailedAttempts = 0
        return (UnlockedUser(record: record, key: key, privateData: privateData), password)
    }

    /// Removes invited accounts older than `lifetime` that were never taken over, with their anonymized part
    /// (found through the recovery blob). Every instance runs it now and then; a take-over racing it wins or
    /// loses as a whole. Returns how many went.
    @discardableResult
    package static func purgeUnclaimed(on db: any Database, recovery: RecoveryKey, now: Date = Date()) async throws -> Int {
        let stale = try await User.query(on: db).filter(\.$createdOnBuddyRequest == true)
            .filter(\.$invitedOn < now.addingTimeInterval(-lifetime)).all()
        var removed = 0
        for user in stale {
            let userID = try user.requireID()
            let anonymizedID = user.recoveryBlob.flatMap { recovery.open($0, userID: userID) }
            removed += try await db.transaction { tx in
                let claimed = try await tx.sql.raw(
                    """
                    DELETE FROM users WHERE id = \(bind: userID) AND created_on_buddy_request = \(bind: true) RETURNING id
                    """
                ).first()
                guard claimed != nil else { return 0 }
                if let anonymizedID { try await UserService.deleteAnonymizedPart(anonymizedID, on: tx) }
                return 1
            }
        }
        return removed
    }

    /// UTC midnight of `date`'s day.
    package static func day(of date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
    }

    package init(db: any Database, users: UserService, argon2: Argon2Pool, sms: any SMSSender, email: any EmailSender) {
        self.db = db
        self.users = users
        self.argon2 = argon2
        self.sms = sms
        self.email = email
    }
}
