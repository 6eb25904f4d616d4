import FluentKit
import Foundation

/// Lost-phone overwrite: the anonymized id sealed under the server's recovery key, and a pending overwrite
/// code (keyed hash), when it was requested and how often it was guessed wrong. One column per statement
/// (SQLite adds one column per `ALTER TABLE`).
package struct AddOverwriteToUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema).field("recovery_blob", .data).update()
        try await database.schema(User.schema).field("overwrite_code_hash", .data).update()
        try await database.schema(User.schema).field("overwrite_requested_at", .datetime).update()
        try await database.schema(User.schema).field("overwrite_failed_attempts", .int, .required, .sql(.default(0))).update()
    }

    package func revert(on database: any Database) async throws {
        for field: FieldKey in ["recovery_blob", "overwrite_code_hash", "overwrite_requested_at", "overwrite_failed_attempts"] {
            try await database.schema(User.schema).deleteField(field).update()
        }
    }
}
