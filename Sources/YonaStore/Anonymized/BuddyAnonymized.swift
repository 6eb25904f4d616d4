import FluentKit
import Foundation

/// The anonymized half of a buddy relation: the owner shares with the buddy while `sendingStatus` is
/// ACCEPTED. It links two anonymized users and nothing else, so the analyzer (which knows no identity and
/// holds no secret) can send confidential copies.
package final class BuddyAnonymized: Model, @unchecked Sendable {
    package static let schema = "buddies_anonymized"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    /// Unknown to the requester until the buddy accepts.
    @OptionalField(key: "buddy_user_anonymized_id") package var buddyUserAnonymizedID: UUID?
    @Field(key: "sending_status") package var sendingStatus: String
    @Field(key: "receiving_status") package var receivingStatus: String

    // relationships
    @Parent(key: "owner_user_anonymized_id") package var owner: UserAnonymized

    package init() {}

    package init(id: UUID, ownerID: UUID, buddyUserAnonymizedID: UUID?, sendingStatus: String, receivingStatus: String) {
        self.id = id
        self.$owner.id = ownerID
        self.buddyUserAnonymizedID = buddyUserAnonymizedID
        self.sendingStatus = sendingStatus
        self.receivingStatus = receivingStatus
    }
}
