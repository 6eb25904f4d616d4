import Fluent
import Foundation

/// The push outbox: one row per (device, message) to announce, written in the message's transaction.
/// The push workers lease (`claimedUntil`), send and finish these rows: a delivered row is deleted, a failed one
/// kept an hour for its `lastError`.
final class PendingPush: Model, @unchecked Sendable {
    static let schema = "push_outbox"

    enum State: String, Codable, Sendable {
        /// Open: waiting, due, or leased by a worker until `claimedUntil`.
        case pending
        /// Given up (dead token, rejected, past the maximum age).
        case failed
    }

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // data
    @Field(key: "message_id") var messageID: Int64
    @Field(key: "state") var state: String
    @Field(key: "attempts") var attempts: Int
    @Field(key: "next_attempt_at") var nextAttemptAt: Date
    /// The lease of the worker sending the row: until then no other worker takes it.
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
