import FluentKit
import SQLKit

/// The durable outbox of texts and e-mails (issue 13): queued with the change that causes them, sent by the
/// request that made them and, when that fails or the process dies, by the `text-outbox` background job.
package struct CreateTextOutbox: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        try await database.schema(PendingText.schema)
            .id()
            .field("created_at", .datetime, .required)
            .field("channel", .string, .required)
            .field("sealed", .data, .required)
            .field("state", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .datetime, .required)
            .field("claimed_until", .datetime)
            .field("last_error", .string)
            .create()
        try await database.sql.raw("CREATE INDEX text_outbox_state_due ON text_outbox (state, next_attempt_at)").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(PendingText.schema).delete()
    }
}
