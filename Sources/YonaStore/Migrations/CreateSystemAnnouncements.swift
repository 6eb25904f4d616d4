import FluentKit
import Foundation
import SQLKit

/// Announcements, the snapshot of who still has to get each one (drained in batches by the push workers),
/// and the link from a message to the announcement it copies (so an expired one can be taken back).
package struct CreateSystemAnnouncements: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(SystemAnnouncement.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("translations", .dictionary(of: .string), .required)
            .field("expires_at", .datetime)
            .create()
        try await database.schema(SystemAnnouncement.recipientsTable)
            .field("announcement_id", .uuid, .required, .references(SystemAnnouncement.schema, "id", onDelete: .cascade))
            .field("user_anonymized_id", .uuid, .required)
            .unique(on: "announcement_id", "user_anonymized_id")
            .create()
        try await database.schema(Message.schema)
            .field("announcement_id", .uuid)
            .update()
        try await database.sql.raw("CREATE INDEX messages_announcement ON messages (announcement_id)").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX messages_announcement").run()
        try await database.schema(Message.schema).deleteField("announcement_id").update()
        try await database.schema(SystemAnnouncement.recipientsTable).delete()
        try await database.schema(SystemAnnouncement.schema).delete()
    }
}
