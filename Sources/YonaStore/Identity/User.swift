import FluentKit
import Foundation
import SQLKit

/// Identity side: who a person is. Everything personal beyond the mobile number is in `privateData`,
/// encrypted under the user's key; that ciphertext is also the only bridge to the anonymized side.
package final class User: Model, @unchecked Sendable {
    package static let schema = "users"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    @Field(key: "mobile_number") package var mobileNumber: String
    @Field(key: "mobile_number_confirmed") package var mobileNumberConfirmed: Bool
    @Field(key: "key_salt") package var keySalt: Data
    @Field(key: "private_data") package var privateData: Data
    /// Raised on every write of `privateData`; a write that finds another version retries.
    @Field(key: "private_data_version") package var privateDataVersion: Int
    @OptionalField(key: "confirmation_code") package var confirmationCode: Data?
    @Field(key: "confirmation_failed_attempts") package var confirmationFailedAttempts: Int
    /// Public key of the named inbox: identities (buddies) seal direct messages to it.
    @OptionalField(key: "named_inbox_public_key") package var namedInboxPublicKey: Data?
    /// Invited by a buddy and not taken over yet.
    @Field(key: "created_on_buddy_request") package var createdOnBuddyRequest: Bool
    /// Such an account's Yona password, sealed under Argon2id(temporary password, `invitationSalt`); cleared by the
    /// take-over. Nil on invitations made before it existed, whose `privateData` is sealed under the Argon2id key itself.
    @OptionalField(key: "invitation_password") package var invitationPassword: Data?
    @OptionalField(key: "invitation_salt") package var invitationSalt: Data?
    /// For such an account, the day (UTC midnight) it was made, for removing it when it is never taken over.
    /// A day, not an instant, so it cannot be matched with the times on the anonymized side.
    @OptionalField(key: "invited_on") package var invitedOn: Date?
    /// The anonymized id sealed under the server's recovery key, so a lost-phone overwrite can delete it.
    @OptionalField(key: "recovery_blob") package var recoveryBlob: Data?
    /// A pending lost-phone overwrite: keyed hash of the SMS code, when it was sent, wrong guesses so far.
    @OptionalField(key: "overwrite_code_hash") package var overwriteCodeHash: Data?
    @OptionalField(key: "overwrite_requested_at") package var overwriteRequestedAt: Date?
    @Field(key: "overwrite_failed_attempts") package var overwriteFailedAttempts: Int
    /// A pin reset's code, sealed under the user's key like the confirmation code; its times are in `privateData`.
    @OptionalField(key: "pin_reset_code") package var pinResetCode: Data?
    @Field(key: "pin_reset_failed_attempts") package var pinResetFailedAttempts: Int

    package init() {}

    package init(id: UUID, mobileNumber: String, keySalt: Data, privateData: Data) {
        self.id = id
        self.mobileNumber = mobileNumber
        self.mobileNumberConfirmed = false
        self.keySalt = keySalt
        self.privateData = privateData
        self.privateDataVersion = 0
        self.confirmationFailedAttempts = 0
        self.createdOnBuddyRequest = false
        self.overwriteFailedAttempts = 0
        self.pinResetFailedAttempts = 0
    }
}

extension User {
    /// A user's row and whether messages wait in its named inbox, in one round trip: every authenticated call reads
    /// both, and the inbox is almost always empty (its messages are moved on the first call after they arrive).
    package static func findWithNamedInboxFlag(_ id: UUID, on db: any Database) async throws -> (user: User, namedInboxWaiting: Bool)? {
        guard
            let row = try await db.sql.raw(
                """
                SELECT u.*, EXISTS (SELECT 1 FROM \(unsafeRaw: NamedMessage.schema) n WHERE n.user_id = u.id) AS yona_named_waiting
                FROM \(unsafeRaw: User.schema) u WHERE u.id = \(bind: id)
                """
            ).first()
        else { return nil }
        return (try row.decode(fluentModel: User.self), try row.decode(column: "yona_named_waiting", as: Bool.self))
    }
}
