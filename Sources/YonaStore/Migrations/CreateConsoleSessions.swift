import FluentKit

/// The console's sessions, shared by every instance on one database (a sign-in holds behind a load balancer).
package struct CreateConsoleSessions: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(ConsoleSession.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("token_hash", .data, .required)
            .field("last_seen_at", .datetime, .required)
            .unique(on: "token_hash")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(ConsoleSession.schema).delete()
    }
}
