import FluentKit
import Foundation

/// The push outbox: per device at most one push waiting (naming its newest message) and the one being sent, written in
/// the message's transaction.
/// The push workers lease (`claimedUntil`), send and finish these rows: a delivered row is deleted, a failed one
/// kept an hour for its `lastError`.
package final class PendingPush: Model, @unchecked Sendable {
    package static let schema = "push_outbox"

    package enum State: String, Codable, Sendable {
        /// Open: waiting, due, or leased by a worker until `claimedUntil`.
        case pending
        /// Given up (dead token, rejected, past the maximum age).
        case failed
    }

    // managed
    @ID(key: .id) package var id: UUID?
    /// When the first message this push stands for was written (messages folded in later keep it): the device's
    /// order, the maximum age, and which messages a withdrawn one can hand the push on to.
    @Field(key: "created_at") package var createdAt: Date

    // data
    /// The newest message the push announces.
    @Field(key: "message_id") package var messageID: Int64
    @Field(key: "state") package var state: String
    @Field(key: "attempts") package var attempts: Int
    @Field(key: "next_attempt_at") package var nextAttemptAt: Date
    /// The lease of the worker sending the row: until then no other worker takes it.
    @OptionalField(key: "claimed_until") package var claimedUntil: Date?
    /// The provider's code of the last failed attempt (no personal data).
    @OptionalField(key: "last_error") package var lastError: String?

    // relationships
    @Parent(key: "device_anonymized_id") package var device: DeviceAnonymized

    package init() {}

    package init(id: UUID, deviceID: UUID, messageID: Int64, now: Date) {
        self.id = id
        self.$device.id = deviceID
        self.messageID = messageID
        self.state = State.pending.rawValue
        self.attempts = 0
        self.nextAttemptAt = now
        self.createdAt = now
    }
}
