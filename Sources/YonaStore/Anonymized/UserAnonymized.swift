import FluentKit
import Foundation

/// Anonymized side: what a person's devices do, with no column that points back to the identity side
/// (and no timestamp that would let one line the two up).
package final class UserAnonymized: Model, @unchecked Sendable {
    package static let schema = "users_anonymized"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    /// Public key of the anonymous inbox: anyone may seal a message to it.
    @OptionalField(key: "anonymous_inbox_public_key") package var anonymousInboxPublicKey: Data?

    // relationships
    @Children(for: \.$userAnonymized) package var devices: [DeviceAnonymized]

    package init() {}

    package init(id: UUID, anonymousInboxPublicKey: Data?) {
        self.id = id
        self.anonymousInboxPublicKey = anonymousInboxPublicKey
    }
}
