import FluentKit

/// Per-minute delivery counts for the console's charts (`DeliveryMinute`).
package struct CreateDeliveryMinutes: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(DeliveryMinute.schema)
            .id()
            .field("minute", .int64, .required)
            .field("series", .string, .required)
            .field("count", .int, .required)
            .unique(on: "minute", "series")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(DeliveryMinute.schema).delete()
    }
}
