import FluentKit
import Foundation

/// Fixed-window counters shared by every instance on one database. `bucket` is a hash, never a number or address.
package struct CreateRateLimitCounters: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema("rate_limit_counters")
            .id()
            .field("bucket", .string, .required)
            .field("window_start", .int64, .required)
            .field("count", .int, .required)
            .unique(on: "bucket", "window_start")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema("rate_limit_counters").delete()
    }
}
