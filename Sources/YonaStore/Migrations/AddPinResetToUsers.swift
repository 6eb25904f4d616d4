import FluentKit
import SQLKit

/// Yona's pin reset: the code (sealed under the user's key) and the count of wrong guesses.
package struct AddPinResetToUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        // One column at a time: SQLite adds one per ALTER TABLE.
        try await database.schema(User.schema).field("pin_reset_code", .data).update()
        try await database.schema(User.schema).field("pin_reset_failed_attempts", .int, .required, .sql(.default(0))).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("pin_reset_failed_attempts").update()
        try await database.schema(User.schema).deleteField("pin_reset_code").update()
    }
}
