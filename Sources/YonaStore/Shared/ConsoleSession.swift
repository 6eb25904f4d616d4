import FluentKit
import Foundation

/// A signed-in operator's console session. Only a hash of the cookie's token is kept, so a dump opens no session;
/// sessions are about the operator, never a user.
package final class ConsoleSession: Model, @unchecked Sendable {
    package static let schema = "console_sessions"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") package var createdAt: Date

    // data
    @Field(key: "token_hash") package var tokenHash: Data
    @Field(key: "last_seen_at") package var lastSeenAt: Date

    package init() {}

    package init(tokenHash: Data, now: Date) {
        self.id = UUID()
        self.tokenHash = tokenHash
        self.createdAt = now
        self.lastSeenAt = now
    }
}
