import FluentKit
import SQLKit

/// The inbox page (newest first, sent items left out) and its count read a user's messages through this index:
/// the page takes its 20 rows in order from the index's end instead of sorting the whole inbox, and the count
/// reads only the index. Without it a 100,000-message inbox sorted every message on every page (docs/performance.md).
package struct AddInboxIndex: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.sql.raw(
            "CREATE INDEX messages_inbox ON messages (user_anonymized_id, is_sent_item, creation_time, id, is_read)"
        ).run()
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX messages_inbox").run()
    }
}
