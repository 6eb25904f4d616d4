import FluentKit
import SQLKit

/// The inbox page leaves out copies of expired announcements in the same query that counts and lists the inbox
/// (no separate look-up of expired announcements first); with `announcement_id` in the inbox index the count stays
/// a read of the index alone, however large the inbox.
package struct AddAnnouncementToInboxIndex: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX messages_inbox").run()
        try await database.sql.raw(
            "CREATE INDEX messages_inbox ON messages (user_anonymized_id, is_sent_item, creation_time, id, is_read, announcement_id)"
        ).run()
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX messages_inbox").run()
        try await database.sql.raw(
            "CREATE INDEX messages_inbox ON messages (user_anonymized_id, is_sent_item, creation_time, id, is_read)"
        ).run()
    }
}
