import FluentKit
import Foundation

package struct CreateNewDeviceRequests: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(NewDeviceRequest.schema)
            .id()
            .field("user_id", .uuid, .required, .references(User.schema, "id", onDelete: .cascade))
            .field("created_at", .datetime, .required)
            .field("key_salt", .data, .required)
            .field("encrypted_password", .data, .required)
            .field("failed_attempts", .int, .required)
            .unique(on: "user_id")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(NewDeviceRequest.schema).delete()
    }
}
