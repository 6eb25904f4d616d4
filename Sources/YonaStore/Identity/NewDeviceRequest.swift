import FluentKit
import Foundation

/// Identity side: a pending new-device request. It holds the user's Yona password encrypted under a key
/// derived with Argon2id from the one-time password the app chose, and nothing else of the user.
package final class NewDeviceRequest: Model, @unchecked Sendable {
    package static let schema = "new_device_requests"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") package var createdAt: Date

    // data
    @Field(key: "key_salt") package var keySalt: Data
    @Field(key: "encrypted_password") package var encryptedPassword: Data
    @Field(key: "failed_attempts") package var failedAttempts: Int

    // relationships
    @Parent(key: "user_id") package var user: User

    package init() {}

    package init(id: UUID, userID: UUID, createdAt: Date, keySalt: Data, encryptedPassword: Data) {
        self.id = id
        self.$user.id = userID
        self.createdAt = createdAt
        self.keySalt = keySalt
        self.encryptedPassword = encryptedPassword
        self.failedAttempts = 0
    }
}
