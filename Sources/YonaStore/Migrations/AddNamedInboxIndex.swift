import FluentKit
import SQLKit

/// Every authenticated call asks whether messages wait in the user's named inbox (`User.findWithNamedInboxFlag`),
/// and processing reads them oldest first: both through this index, whatever the table holds for users who have not
/// called since their messages arrived.
package struct AddNamedInboxIndex: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.sql.raw("CREATE INDEX named_messages_user ON named_messages (user_id, created_at)").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.sql.raw("DROP INDEX named_messages_user").run()
    }
}
