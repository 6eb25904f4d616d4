import Fluent
import Foundation

/// A message in an anonymized user's inbox. Its content is sealed to the inbox's public key, so whoever
/// writes it (the analyzer, a buddy, the admin) needs no secret and the database holds no plaintext.
package final class Message: Model, @unchecked Sendable {
    package static let schema = "messages"

    // managed
    /// Random, positive, below 2^53: unique across the server without revealing how many exist.
    @ID(custom: "id", generatedBy: .user) package var id: Int64?
    @Field(key: "creation_time") package var creationTime: Date

    // data
    @Field(key: "sealed_payload") package var sealedPayload: Data
    @Field(key: "is_read") package var isRead: Bool
    /// Set on a copy of a system announcement, so an expired announcement can be taken back.
    @OptionalField(key: "announcement_id") package var announcementID: UUID?
    /// The anonymized user the message is from or about, when that is not the recipient and the two are accepted
    /// buddies: what goes when they stop being buddies. It joins nothing that `buddies_anonymized` does not join
    /// already, on the same side (requests, refusals and disconnects carry none).
    @OptionalField(key: "sender_anonymized_id") package var senderAnonymizedID: UUID?
    /// A buddy's copy of a goal conflict, and the disclosure messages about one: the subject's own conflict message,
    /// so deleting that one takes them along.
    @OptionalField(key: "origin_message_id") package var originMessageID: Int64?
    /// The user's own goal conflict: the goal it broke; a comment: the goal whose day or week it is about. Removing
    /// the goal removes them.
    @OptionalField(key: "goal_id") package var goalID: UUID?
    /// A comment: the day (`day:2016-03-15`) or week (`week:2016-W11`) of `goalID` it is about.
    @OptionalField(key: "activity_interval") package var activityInterval: String?
    /// A comment that replies to another: that message, in the same inbox.
    @OptionalField(key: "replied_message_id") package var repliedMessageID: Int64?
    /// The sender's own copy of a comment: listed with its thread, not in the inbox.
    @Field(key: "is_sent_item") package var isSentItem: Bool

    // relationships
    @Parent(key: "user_anonymized_id") package var userAnonymized: UserAnonymized

    package init() {}

    package init(id: Int64, userAnonymizedID: UUID, sealedPayload: Data, creationTime: Date) {
        self.id = id
        self.$userAnonymized.id = userAnonymizedID
        self.sealedPayload = sealedPayload
        self.creationTime = creationTime
        self.isRead = false
        self.isSentItem = false
    }
}
