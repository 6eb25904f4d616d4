import FluentKit
import Foundation
import SQLKit

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

extension Message {
    /// Every column, for reads that build messages from raw rows (`Message(row:)`).
    package static let columns = """
        id, creation_time, sealed_payload, is_read, announcement_id, sender_anonymized_id, origin_message_id, goal_id, \
        activity_interval, replied_message_id, is_sent_item, user_anonymized_id
        """

    /// A message from a row holding `columns`, without Fluent's reflection over the model (the inbox page reads 20).
    package convenience init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: Int64.self), userAnonymizedID: try row.decode(column: "user_anonymized_id", as: UUID.self),
            sealedPayload: try row.decode(column: "sealed_payload", as: Data.self),
            creationTime: try row.decode(column: "creation_time", as: Date.self))
        $id.exists = true
        isRead = try row.decode(column: "is_read", as: Bool.self)
        isSentItem = try row.decode(column: "is_sent_item", as: Bool.self)
        announcementID = try row.decode(column: "announcement_id", as: UUID?.self)
        senderAnonymizedID = try row.decode(column: "sender_anonymized_id", as: UUID?.self)
        originMessageID = try row.decode(column: "origin_message_id", as: Int64?.self)
        goalID = try row.decode(column: "goal_id", as: UUID?.self)
        activityInterval = try row.decode(column: "activity_interval", as: String?.self)
        repliedMessageID = try row.decode(column: "replied_message_id", as: Int64?.self)
    }
}
