import FluentKit

/// The outbox of VPN account changes for the directory (`PendingVPNAccountChange`).
package struct CreateVPNAccountOutbox: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(PendingVPNAccountChange.schema)
            .field("id", .int64, .identifier(auto: true))
            .field("sealed", .data, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime)
            .field("claimed_until", .datetime)
            .field("last_error", .string)
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(PendingVPNAccountChange.schema).delete()
    }
}
