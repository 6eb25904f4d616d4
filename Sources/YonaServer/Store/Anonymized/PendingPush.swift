import Fluent
import Foundation

/// The push outbox: one row per (device, message) to announce, written in the message's transaction.
/// The push workers claim, send and finish these rows.
final class PendingPush: Model, @unchecked Sendable {
    static let schema = "push_outbox"

    enum State: String, Codable, Sendable {
        case pending, claimed, sent, failed
    }

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // data
    @Field(key: "message_id") var messageID: Int64
    @Field(key: "state") var state: String
    @Field(key: "attempts") var attempts: Int
    @Field(key: "next_attempt_at") var nextAttemptAt: Date
    /// While claimed: when the claim lapses and another worker may take the row.
    @OptionalField(key: "claimed_until") var claimedUntil: Date?
    /// The provider's code of the last failed attempt (no personal data).
    @OptionalField(key: "last_error") var lastError: String?

    // relationships
    @Parent(key: "device_anonymized_id") var device: DeviceAnonymized

    init() {}

    init(id: UUID, deviceID: UUID, messageID: Int64, now: Date) {
        self.id = id
        self.$device.id = deviceID
        self.messageID = messageID
        self.state = State.pending.rawValue
        self.attempts = 0
        self.nextAttemptAt = now
        self.createdAt = now
    }
}
