import FluentKit
import Foundation

/// A direct message between identities (buddy requests, responses, disconnects), sealed to the recipient's
/// named inbox. The recipient's next authenticated call moves it into the anonymous inbox.
package final class NamedMessage: Model, @unchecked Sendable {
    package static let schema = "named_messages"

    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "sealed_payload") package var sealedPayload: Data
    @Parent(key: "user_id") package var user: User

    package init() {}

    package init(id: UUID, userID: UUID, sealedPayload: Data, createdAt: Date) {
        self.id = id
        self.$user.id = userID
        self.sealedPayload = sealedPayload
        self.createdAt = createdAt
    }
}
