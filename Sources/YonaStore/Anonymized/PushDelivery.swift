import FluentKit
import Foundation

/// The last push delivered to each token (keyed by the token's hash), for the test server's
/// `/test/firebase/messages/last/{instanceId}`. Holds only the content-free data map.
package final class PushDelivery: Model, @unchecked Sendable {
    package static let schema = "push_deliveries"

    @ID(key: .id) package var id: UUID?
    @Field(key: "token_hash") package var tokenHash: String
    @Field(key: "data") package var data: [String: String]
    @Field(key: "delivered_at") package var deliveredAt: Date

    package init() {}

    package init(id: UUID, tokenHash: String, data: [String: String], deliveredAt: Date) {
        self.id = id
        self.tokenHash = tokenHash
        self.data = data
        self.deliveredAt = deliveredAt
    }
}
