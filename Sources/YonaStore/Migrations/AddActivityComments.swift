import FluentKit
import SQLKit

/// Comments on a day or week of a goal (Yona's `ActivityCommentMessage`): which interval a message is about, the
/// message it replies to, and whether it is the sender's own copy (listed with its thread, not in the inbox).
package struct AddActivityComments: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        // One column at a time: SQLite adds one per ALTER TABLE.
        try await database.schema(Message.schema).field("activity_interval", .string).update()
        try await database.schema(Message.schema).field("replied_message_id", .int64).update()
        try await database.schema(Message.schema).field("is_sent_item", .bool, .required, .sql(.default(false))).update()
        try await database.sql.raw("CREATE INDEX messages_interval ON messages (user_anonymized_id, goal_id, activity_interval)").run()
        try await database.sql.raw("CREATE INDEX messages_replied ON messages (replied_message_id)").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX messages_replied").run()
        try await database.sql.raw("DROP INDEX messages_interval").run()
        for field in ["is_sent_item", "replied_message_id", "activity_interval"] {
            try await database.schema(Message.schema).deleteField(.string(field)).update()
        }
    }
}
