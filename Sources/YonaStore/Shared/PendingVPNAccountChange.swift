import FluentKit
import Foundation

/// A VPN account to create in or delete from the directory (`vpn_account_outbox`), queued in the transaction of the
/// device change that causes it. The login (an anonymized id) and the password's hash are sealed under a key derived
/// from the recovery secret; the row is deleted once the directory took it. Rows are applied strictly in id order,
/// so a device's deletion never overtakes its creation. No creation time: `next_attempt_at` is set only after a
/// failed attempt.
package final class PendingVPNAccountChange: Model, @unchecked Sendable {
    package static let schema = "vpn_account_outbox"

    @ID(custom: "id", generatedBy: .database) package var id: Int?
    @Field(key: "sealed") package var sealed: Data
    @Field(key: "attempts") package var attempts: Int
    @OptionalField(key: "next_attempt_at") package var nextAttemptAt: Date?
    @OptionalField(key: "claimed_until") package var claimedUntil: Date?
    /// The directory's result code and text of the last failure (never a login or a password).
    @OptionalField(key: "last_error") package var lastError: String?

    package init() {}

    package init(sealed: Data) {
        self.sealed = sealed
        self.attempts = 0
    }
}
