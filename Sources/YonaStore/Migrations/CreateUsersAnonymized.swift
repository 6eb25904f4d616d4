import FluentKit
import Foundation

package struct CreateUsersAnonymized: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(UserAnonymized.schema)
            .id()
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(UserAnonymized.schema).delete()
    }
}
