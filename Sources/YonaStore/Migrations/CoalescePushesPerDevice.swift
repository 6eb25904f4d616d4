import Fluent
import Foundation
import SQLKit

/// A device has at most one push waiting (issue 34, docs/architecture.md "Pushes"): a push only says "there is
/// something new", so messages queued while one waits fold into it. The backlog an older build left is folded the
/// same way: of each device's waiting rows (open and not leased) the oldest stays, so the device's order and the
/// push's age hold, and it names the newest message of them; the others go.
package struct CoalescePushesPerDevice: AsyncMigration {
    package func prepare(on database: any Database) async throws {
        let sql = database.sql
        let rows = try await sql.raw(
            """
            SELECT id, device_anonymized_id, message_id FROM push_outbox WHERE state = 'pending' AND claimed_until IS NULL
            ORDER BY device_anonymized_id, created_at, id
            """
        ).all()
        var waiting: [UUID: [(id: UUID, messageID: Int64)]] = [:]
        for row in rows {
            waiting[try row.decode(column: "device_anonymized_id", as: UUID.self), default: []].append(
                (try row.decode(column: "id", as: UUID.self), try row.decode(column: "message_id", as: Int64.self)))
        }
        for rows in waiting.values where rows.count > 1 {
            // the newer rows go first: the oldest then takes the newest's message without meeting the (device, message) key
            for chunk in Array(rows.dropFirst()).chunked(1000) {
                try await sql.raw("DELETE FROM push_outbox WHERE id IN (\(binds: chunk.map(\.id)))").run()
            }
            try await sql.raw("UPDATE push_outbox SET message_id = \(bind: rows.last!.messageID) WHERE id = \(bind: rows[0].id)").run()
        }
    }

    package func revert(on database: any Database) async throws {}
}
