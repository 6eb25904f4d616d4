import FluentKit
import Foundation

/// A text message or e-mail on its way out (`text_outbox`). What it says and to whom is sealed under a key derived
/// from the server's recovery secret, so a dump holds neither numbers nor codes nor links; a row is deleted once
/// its text went out. `created_at` is to the minute: it only bounds how long delivery is tried.
package final class PendingText: Model, @unchecked Sendable {
    package static let schema = "text_outbox"

    package enum State: String {
        case pending
        case claimed
        case failed
    }

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") package var createdAt: Date

    // data
    /// `sms` or `email` (for metrics and the provider; not personal).
    @Field(key: "channel") package var channel: String
    @Field(key: "sealed") package var sealed: Data
    @Field(key: "state") package var state: String
    @Field(key: "attempts") package var attempts: Int
    @Field(key: "next_attempt_at") package var nextAttemptAt: Date
    @OptionalField(key: "claimed_until") package var claimedUntil: Date?
    @OptionalField(key: "last_error") package var lastError: String?

    package init() {}

    package init(id: UUID, channel: String, sealed: Data, now: Date) {
        self.id = id
        self.channel = channel
        self.sealed = sealed
        self.state = State.pending.rawValue
        self.attempts = 0
        self.nextAttemptAt = now
        self.createdAt = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 60).rounded(.down) * 60)
    }
}
