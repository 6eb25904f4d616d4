import FluentKit
import Foundation
import SQLKit

/// The claim query looks for due rows and, per device, for older unfinished ones; without these indexes
/// each claim scans the whole outbox.
package struct AddPushOutboxIndexes: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.raw("CREATE INDEX push_outbox_device_created ON push_outbox (device_anonymized_id, created_at)").run()
        try await sql.raw("CREATE INDEX push_outbox_state_due ON push_outbox (state, next_attempt_at)").run()
    }

    package func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.raw("DROP INDEX push_outbox_device_created").run()
        try await sql.raw("DROP INDEX push_outbox_state_due").run()
    }
}
