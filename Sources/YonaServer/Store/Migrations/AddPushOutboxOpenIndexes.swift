import Fluent
import SQLKit

/// The drain reads only open rows: due pending rows in due order, per device whether an older row is still open, and
/// claims whose lease lapsed. Partial indexes hold just those rows, so a claim costs the same whether the outbox has
/// sent ten rows or ten million (before, the per-device check walked every sent row of the device and due rows were
/// sorted on every claim: the drain slowed round after round; docs/performance.md). A finished row is in no index but
/// the primary key and the (device, message) unique one, so marking rows sent writes little; the two general indexes
/// this replaces are dropped (the unique index serves the device's foreign key).
struct AddPushOutboxOpenIndexes: AsyncMigration {
    static let created = [
        "CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at) WHERE state = 'pending'",
        "CREATE INDEX push_outbox_open_device ON push_outbox (device_anonymized_id, created_at) WHERE state IN ('pending', 'claimed')",
        "CREATE INDEX push_outbox_claimed ON push_outbox (claimed_until) WHERE state = 'claimed'",
        "CREATE INDEX push_outbox_open_message ON push_outbox (message_id) WHERE state IN ('pending', 'claimed')",
    ]

    func prepare(on database: any Database) async throws {
        for statement in Self.created { try await database.sql.raw("\(unsafeRaw: statement)").run() }
        try await database.sql.raw("DROP INDEX push_outbox_device_created").run()
        try await database.sql.raw("DROP INDEX push_outbox_state_due").run()
    }

    func revert(on database: any Database) async throws {
        for index in ["push_outbox_due", "push_outbox_open_device", "push_outbox_claimed", "push_outbox_open_message"] {
            try await database.sql.raw("DROP INDEX \(unsafeRaw: index)").run()
        }
        try await AddPushOutboxIndexes().prepare(on: database)
    }
}
