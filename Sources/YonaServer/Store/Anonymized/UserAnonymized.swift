import Fluent
import Foundation

/// Anonymized side: what a person's devices do, with no column that points back to the identity side
/// (and no timestamp that would let one line the two up).
final class UserAnonymized: Model, @unchecked Sendable {
    static let schema = "users_anonymized"

    // managed
    @ID(key: .id) var id: UUID?

    // data
    /// Public key of the anonymous inbox: anyone may seal a message to it.
    @OptionalField(key: "anonymous_inbox_public_key") var anonymousInboxPublicKey: Data?

    // relationships
    @Children(for: \.$userAnonymized) var devices: [DeviceAnonymized]

    init() {}

    init(id: UUID, anonymousInboxPublicKey: Data?) {
        self.id = id
        self.anonymousInboxPublicKey = anonymousInboxPublicKey
    }
}
