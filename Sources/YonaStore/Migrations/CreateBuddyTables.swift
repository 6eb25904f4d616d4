import FluentKit
import Foundation

package struct CreateBuddiesAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(BuddyAnonymized.schema)
            .id()
            .field("owner_user_anonymized_id", .uuid, .required, .references(UserAnonymized.schema, "id", onDelete: .cascade))
            .field("buddy_user_anonymized_id", .uuid)
            .field("sending_status", .string, .required)
            .field("receiving_status", .string, .required)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(BuddyAnonymized.schema).delete()
    }
}

package struct CreateNamedMessages: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(NamedMessage.schema)
            .id()
            .field("user_id", .uuid, .required, .references(User.schema, "id", onDelete: .cascade))
            .field("created_at", .datetime, .required)
            .field("sealed_payload", .data, .required)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(NamedMessage.schema).delete()
    }
}
