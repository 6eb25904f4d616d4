import FluentKit
import Foundation
import SQLKit

/// Lets concurrent changes of one user's private data detect each other instead of losing one.
package struct AddPrivateDataVersionToUsers: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(User.schema)
            .field("private_data_version", .int, .required, .sql(.default(0)))
            .update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(User.schema).deleteField("private_data_version").update()
    }
}
