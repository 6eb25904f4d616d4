import Fluent
import Foundation

struct CreateUsersAnonymized: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(UserAnonymized.schema)
            .id()
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(UserAnonymized.schema).delete()
    }
}
