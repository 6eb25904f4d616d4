import Fluent
import Foundation
import SQLKit
import YonaStore

/// The push outbox's one owner (`push_outbox`, `PendingPush`): the domain queues and withdraws pushes through it, the
/// drain claims and finishes them through `lifecycle` (the shared `Outbox`), the metrics read its depth here.
package enum PushOutbox {
    /// The table's lifecycle: per device, in the order the messages were created.
    package static func lifecycle(
        on db: any Database, skipLocked: Bool, leaseSeconds: TimeInterval, backoff: Backoff, maxAgeSeconds: TimeInterval
    ) -> Outbox<UUID> {
        Outbox(
            table: PendingPush.schema, ordering: .perKey("device_anonymized_id"), db: db, skipLocked: skipLocked, leaseSeconds: leaseSeconds,
            backoff: backoff, maxAgeSeconds: maxAgeSeconds)
    }

    /// What a claim returns of each row: the row, and its device's push address as it is now (`address`, nil once
    /// cleared), written by `addressExpression` over the device row `d`.
    package static func claimedColumns(addressExpression: String) -> SQLQueryString {
        """
        id, device_anonymized_id, message_id, attempts, created_at,
            (SELECT \(unsafeRaw: addressExpression) FROM \(unsafeRaw: DeviceAnonymized.schema) d WHERE d.id = \(unsafeRaw: PendingPush.schema).device_anonymized_id) AS address
        """
    }

    /// Queues one push per (device, message), in the caller's transaction, due now; in chunks that stay under the
    /// drivers' bind limits (7 per row; SQLite allows 32,766).
    package static func queue(_ pushes: [(device: UUID, messageID: Int64)], now: Date, on db: any Database) async throws {
        let rows = pushes.map { push -> SQLQueryString in
            "(\(bind: UUID()), \(bind: push.device), \(bind: push.messageID), \(bind: PendingPush.State.pending.rawValue), 0, \(bind: now), \(bind: now))"
        }
        for chunk in rows.chunked(2000) {
            try await db.sql.raw(
                """
                INSERT INTO \(unsafeRaw: PendingPush.schema) (id, device_anonymized_id, message_id, state, attempts, next_attempt_at, created_at)
                VALUES \(Array(chunk).joined(separator: ", "))
                """
            ).run()
        }
    }

    /// Withdraws the unsent pushes of messages that are gone.
    package static func withdraw(messageIDs: [Int64], on db: any Database) async throws {
        guard !messageIDs.isEmpty else { return }
        try await PendingPush.query(on: db).filter(\.$messageID ~~ messageIDs).filter(\.$state == PendingPush.State.pending.rawValue).delete()
    }

    /// Withdraws every push, sent or not, whose message `messageQuery` selects (`SELECT id FROM messages WHERE …`).
    package static func withdraw(messagesIn messageQuery: SQLQueryString, on db: any Database) async throws {
        try await db.sql.raw("DELETE FROM \(unsafeRaw: PendingPush.schema) WHERE message_id IN (\(messageQuery))").run()
    }

    /// Unfinished pushes and when the oldest was queued.
    package static func depth(on db: any Database) async throws -> (count: Int, oldest: Date?) {
        let open = PendingPush.query(on: db).filter(\.$state == PendingPush.State.pending.rawValue)
        return (try await open.count(), try await open.sort(\.$createdAt).first()?.createdAt)
    }

    /// Whether a push to the device holding `token` is due (by `dueBy`) and not yet sent (the test server's wait).
    package static func isWaiting(forToken token: String, dueBy: Date, on db: any Database) async throws -> Bool {
        try await db.sql.raw(
            """
            SELECT o.id FROM \(unsafeRaw: PendingPush.schema) o JOIN \(unsafeRaw: DeviceAnonymized.schema) d ON d.id = o.device_anonymized_id
            WHERE d.firebase_instance_id = \(bind: token) AND o.state = 'pending' AND o.next_attempt_at <= \(bind: dueBy)
            LIMIT 1
            """
        ).first() != nil
    }
}
