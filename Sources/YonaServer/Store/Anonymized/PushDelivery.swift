import Fluent
import Foundation

/// The last push delivered to each token (keyed by the token's hash), for the test server's
/// `/test/firebase/messages/last/{instanceId}`. Holds only the content-free data map.
final class PushDelivery: Model, @unchecked Sendable {
    static let schema = "push_deliveries"

    @ID(key: .id) var id: UUID?
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "data") var data: [String: String]
    @Field(key: "delivered_at") var deliveredAt: Date

    init() {}

    init(id: UUID, tokenHash: String, data: [String: String], deliveredAt: Date) {
        self.id = id
        self.tokenHash = tokenHash
        self.data = data
        self.deliveredAt = deliveredAt
    }
}
