import FluentKit
import Foundation

/// Claims with a lease (a crashed worker's rows are claimed again) and the outcome of the last attempt.
package struct AddClaimToPushOutbox: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        // One column per statement: SQLite adds one column per ALTER TABLE.
        try await database.schema(PendingPush.schema).field("claimed_until", .datetime).update()
        try await database.schema(PendingPush.schema).field("last_error", .string).update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(PendingPush.schema).deleteField("claimed_until").update()
        try await database.schema(PendingPush.schema).deleteField("last_error").update()
    }
}

package struct CreatePushDeliveries: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(PushDelivery.schema)
            .id()
            .field("token_hash", .string, .required)
            .field("data", .dictionary(of: .string), .required)
            .field("delivered_at", .datetime, .required)
            .unique(on: "token_hash")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(PushDelivery.schema).delete()
    }
}
