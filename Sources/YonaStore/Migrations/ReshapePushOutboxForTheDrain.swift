import FluentKit
import SQLKit

/// The outbox as the pipelined drain uses it (docs/architecture.md "Pushes"):
/// - a row is open while `state = 'pending'`; a worker's claim only sets the lease `claimed_until` (a row whose lease
///   lapsed is simply claimable again), so a claim changes no indexed column and PostgreSQL updates it in place (HOT,
///   helped by a fill factor that leaves room on each page);
/// - a delivered row is deleted (no index entries are written for it), a failed one kept an hour for its `last_error`;
/// - the drain reads only partial indexes of open rows: due rows in due order, per device whether an older row is still
///   open, and a message's open rows. A claim costs the same after ten million sends as after ten (before, the
///   per-device check walked every sent row of the device and due rows were sorted on every claim; docs/performance.md).
/// The two general indexes this replaces are dropped (the (device, message) unique index serves the foreign key).
package struct ReshapePushOutboxForTheDrain: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        let sql = database.sql
        try await sql.raw("UPDATE push_outbox SET state = 'pending' WHERE state = 'claimed'").run()
        try await sql.raw("DELETE FROM push_outbox WHERE state = 'sent'").run()
        try await sql.raw("CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at) WHERE state = 'pending'").run()
        try await sql.raw("CREATE INDEX push_outbox_open_device ON push_outbox (device_anonymized_id, created_at) WHERE state = 'pending'").run()
        try await sql.raw("CREATE INDEX push_outbox_open_message ON push_outbox (message_id) WHERE state = 'pending'").run()
        try await sql.raw("DROP INDEX push_outbox_device_created").run()
        try await sql.raw("DROP INDEX push_outbox_state_due").run()
        if sql.dialect.name != "sqlite" {
            try await sql.raw("ALTER TABLE push_outbox SET (fillfactor = 70)").run()
        }
    }

    package func revert(on database: any Database) async throws {
        for index in ["push_outbox_due", "push_outbox_open_device", "push_outbox_open_message"] {
            try await database.sql.raw("DROP INDEX \(unsafeRaw: index)").run()
        }
        try await AddPushOutboxIndexes().prepare(on: database)
    }
}
