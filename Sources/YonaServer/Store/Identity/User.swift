import Fluent
import Foundation

/// Identity side: who a person is. Everything personal beyond the mobile number is in `privateData`,
/// encrypted under the user's key; that ciphertext is also the only bridge to the anonymized side.
final class User: Model, @unchecked Sendable {
    static let schema = "users"

    // managed
    @ID(key: .id) var id: UUID?

    // data
    @Field(key: "mobile_number") var mobileNumber: String
    @Field(key: "mobile_number_confirmed") var mobileNumberConfirmed: Bool
    @Field(key: "key_salt") var keySalt: Data
    @Field(key: "private_data") var privateData: Data
    /// Raised on every write of `privateData`; a write that finds another version retries.
    @Field(key: "private_data_version") var privateDataVersion: Int
    @OptionalField(key: "confirmation_code") var confirmationCode: Data?
    @Field(key: "confirmation_failed_attempts") var confirmationFailedAttempts: Int
    /// Public key of the named inbox: identities (buddies) seal direct messages to it.
    @OptionalField(key: "named_inbox_public_key") var namedInboxPublicKey: Data?
    /// Invited by a buddy and not taken over yet.
    @Field(key: "created_on_buddy_request") var createdOnBuddyRequest: Bool
    /// Such an account's Yona password, sealed under Argon2id(temporary password, `invitationSalt`); cleared by the
    /// take-over. Nil on invitations made before it existed, whose `privateData` is sealed under the Argon2id key itself.
    @OptionalField(key: "invitation_password") var invitationPassword: Data?
    @OptionalField(key: "invitation_salt") var invitationSalt: Data?
    /// For such an account, the day (UTC midnight) it was made, for removing it when it is never taken over.
    /// A day, not an instant, so it cannot be matched with the times on the anonymized side.
    @OptionalField(key: "invited_on") var invitedOn: Date?
    /// The anonymized id sealed under the server's recovery key, so a lost-phone overwrite can delete it.
    @OptionalField(key: "recovery_blob") var recoveryBlob: Data?
    /// A pending lost-phone overwrite: keyed hash of the SMS code, when it was sent, wrong guesses so far.
    @OptionalField(key: "overwrite_code_hash") var overwriteCodeHash: Data?
    @OptionalField(key: "overwrite_requested_at") var overwriteRequestedAt: Date?
    @Field(key: "overwrite_failed_attempts") var overwriteFailedAttempts: Int
    /// A pin reset's code, sealed under the user's key like the confirmation code; its times are in `privateData`.
    @OptionalField(key: "pin_reset_code") var pinResetCode: Data?
    @Field(key: "pin_reset_failed_attempts") var pinResetFailedAttempts: Int

    init() {}

    init(id: UUID, mobileNumber: String, keySalt: Data, privateData: Data) {
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
