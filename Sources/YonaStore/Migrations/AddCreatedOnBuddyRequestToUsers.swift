import FluentKit
import Foundation

/// Marks users that a buddy invited before they had an account: their private data is sealed under a key
/// from the temporary password (Argon2id) until the invitee's app takes the account over.
package struct AddCreatedOnBuddyRequestToUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema)
            .field("created_on_buddy_request", .bool, .required, .sql(.default(false)))
            .update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("created_on_buddy_request").update()
    }
}
