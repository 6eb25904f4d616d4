import FluentKit
import Foundation

/// What a message is from or about, in plain ids of the anonymized side, so deletions can cascade as Yona's do.
package struct AddMessageRelations: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        // One column at a time: SQLite adds one per ALTER TABLE.
        try await database.schema(Message.schema).field("sender_anonymized_id", .uuid).update()
        try await database.schema(Message.schema).field("origin_message_id", .int64).update()
        try await database.schema(Message.schema).field("goal_id", .uuid).update()
        try await database.sql.raw("CREATE INDEX messages_sender ON messages (user_anonymized_id, sender_anonymized_id)").run()
        try await database.sql.raw("CREATE INDEX messages_origin ON messages (origin_message_id)").run()
        try await database.sql.raw("CREATE INDEX messages_goal ON messages (goal_id)").run()
    }

    package func revert(on database: any Database) async throws {
        for field in ["sender_anonymized_id", "origin_message_id", "goal_id"] {
            try await database.schema(Message.schema).deleteField(.init(stringLiteral: field)).update()
        }
    }
}
