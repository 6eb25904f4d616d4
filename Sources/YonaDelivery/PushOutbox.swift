import FluentKit
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

    /// Queues a push for each (device, message), in the caller's transaction, due now, keeping one push waiting per
    /// device: a device that already has one waiting (open and not leased) gets that one retargeted to the newer
    /// message instead of a second row; one that has none (or only one being sent) gets a new row. The device is then
    /// told once, of its newest message, and a push being sent is followed by at most one more. `pushes` are in the
    /// order the messages were written: a device's last one is its newest (message ids are random, api.md).
    ///
    /// The retarget touches only a device's newest waiting row (two can exist only if two transactions on PostgreSQL
    /// both inserted one); a row the drain claims meanwhile is no longer waiting, and PostgreSQL re-checks that before
    /// updating it, so the message then goes out in a row of its own.
    package static func queue(_ pushes: [(device: UUID, messageID: Int64)], now: Date, on db: any Database) async throws {
        var newest: [UUID: Int64] = [:]
        var order: [UUID] = []
        for push in pushes {
            if newest.updateValue(push.messageID, forKey: push.device) == nil { order.append(push.device) }
        }
        let t = PendingPush.schema
        // 2 binds per device to retarget, 7 per new row; SQLite allows 32,766
        for chunk in order.chunked(2000) {
            let devices = Array(chunk)
            let values = devices.map { device -> SQLQueryString in "(\(bind: device), \(bind: newest[device]!))" }
            let retargeted = try await db.sql.raw(
                """
                WITH v (device, message) AS (VALUES \(values.joined(separator: ", ")))
                UPDATE \(unsafeRaw: t) SET message_id = v.message
                FROM v
                WHERE \(unsafeRaw: t).device_anonymized_id = v.device AND \(waiting(t))
                    AND NOT EXISTS (SELECT 1 FROM \(unsafeRaw: t) o WHERE o.device_anonymized_id = v.device AND \(waiting("o"))
                        AND (o.created_at > \(unsafeRaw: t).created_at OR (o.created_at = \(unsafeRaw: t).created_at AND o.id > \(unsafeRaw: t).id)))
                RETURNING \(unsafeRaw: t).device_anonymized_id
                """
            ).all()
            let done = Set(try retargeted.map { try $0.decode(column: "device_anonymized_id", as: UUID.self) })
            let rows = devices.filter { !done.contains($0) }.map { device -> SQLQueryString in
                "(\(bind: UUID()), \(bind: device), \(bind: newest[device]!), \(bind: PendingPush.State.pending.rawValue), 0, \(bind: now), \(bind: now))"
            }
            guard !rows.isEmpty else { continue }
            try await db.sql.raw(
                """
                INSERT INTO \(unsafeRaw: t) (id, device_anonymized_id, message_id, state, attempts, next_attempt_at, created_at)
                VALUES \(rows.joined(separator: ", "))
                """
            ).run()
        }
    }

    /// A row that waits to be sent: open and not leased (a row being sent, or whose sender died, holds a lease).
    private static func waiting(_ alias: String) -> SQLQueryString {
        "\(unsafeRaw: alias).state = 'pending' AND \(unsafeRaw: alias).claimed_until IS NULL"
    }

    /// Puts a claimed row off until `time` (the device was pushed a moment ago) without counting an attempt: it waits
    /// again, so what is queued meanwhile folds into it (or it folds into a row queued while it was claimed).
    package static func putOff(_ id: UUID, until time: Date, on db: any Database) async throws {
        try await db.transaction { tx in
            try await tx.sql.raw(
                "UPDATE \(unsafeRaw: PendingPush.schema) SET next_attempt_at = \(bind: time), claimed_until = NULL WHERE id = \(bind: id)"
            ).run()
            _ = try await fold(id, in: tx)
        }
    }

    /// After a claimed row (`id`) was set to wait again (its send failed, or it was put off): if its device has a push
    /// waiting (queued while this one was claimed), that one, naming a newer message, stands for both. It takes over
    /// this row's wait, attempts and age (the device's provider is failing, or was just used, whichever message is
    /// named), and this row goes. Returns whether it was folded.
    @discardableResult
    package static func foldIntoWaiting(_ id: UUID, on db: any Database) async throws -> Bool {
        // One transaction: between its two statements both rows wait with one `created_at`, and a message queued then
        // could go to the row about to be deleted (`scripts/bench deep` once found three phones told of an older one).
        try await db.transaction { tx in try await fold(id, in: tx) }
    }

    private static func fold(_ id: UUID, in db: any Database) async throws -> Bool {
        let t = PendingPush.schema
        func later(_ column: String) -> SQLQueryString {
            "CASE WHEN r.\(unsafeRaw: column) > \(unsafeRaw: t).\(unsafeRaw: column) THEN r.\(unsafeRaw: column) ELSE \(unsafeRaw: t).\(unsafeRaw: column) END"
        }
        let folded = try await db.sql.raw(
            """
            UPDATE \(unsafeRaw: t) SET next_attempt_at = \(later("next_attempt_at")), attempts = \(later("attempts")), last_error = r.last_error,
                created_at = CASE WHEN r.created_at < \(unsafeRaw: t).created_at THEN r.created_at ELSE \(unsafeRaw: t).created_at END
            FROM \(unsafeRaw: t) r
            WHERE r.id = \(bind: id) AND r.state = 'pending' AND \(unsafeRaw: t).device_anonymized_id = r.device_anonymized_id
                AND \(unsafeRaw: t).id <> r.id AND \(waiting(t))
            RETURNING \(unsafeRaw: t).id
            """
        ).all()
        guard !folded.isEmpty else { return false }
        try await db.sql.raw("DELETE FROM \(unsafeRaw: t) WHERE id = \(bind: id)").run()
        return true
    }

    /// Withdraws the pushes of messages that are going (`messageQuery`: their ids, or `SELECT id FROM messages WHERE …`).
    /// A waiting push is handed on to the newest message its device's user got since the push's first one that stays
    /// (the device has not been told of those yet); every other push naming a withdrawn message (sent, failed, or
    /// standing for nothing else) is deleted. Works before the messages are deleted as well as after.
    package static func withdraw(messagesIn messageQuery: SQLQueryString, on db: any Database) async throws {
        let t = PendingPush.schema
        let successor: SQLQueryString = """
            SELECT m.id FROM \(unsafeRaw: Message.schema) m
            WHERE m.user_anonymized_id = (SELECT d.user_anonymized_id FROM \(unsafeRaw: DeviceAnonymized.schema) d WHERE d.id = \(unsafeRaw: t).device_anonymized_id)
                AND m.creation_time >= \(unsafeRaw: t).created_at AND m.id NOT IN (\(messageQuery))
                AND NOT EXISTS (SELECT 1 FROM \(unsafeRaw: t) x WHERE x.device_anonymized_id = \(unsafeRaw: t).device_anonymized_id AND x.message_id = m.id)
            ORDER BY m.creation_time DESC LIMIT 1
            """
        try await db.sql.raw(
            """
            UPDATE \(unsafeRaw: t) SET message_id = (\(successor))
            WHERE message_id IN (\(messageQuery)) AND \(waiting(t)) AND EXISTS (\(successor))
            """
        ).run()
        try await db.sql.raw("DELETE FROM \(unsafeRaw: t) WHERE message_id IN (\(messageQuery))").run()
    }

    /// Withdraws the pushes of messages already deleted (`withdraw(messagesIn:)` for a list of ids).
    package static func withdraw(messageIDs: [Int64], on db: any Database) async throws {
        for chunk in messageIDs.chunked(1000) {
            try await withdraw(messagesIn: "\(binds: Array(chunk))", on: db)
        }
    }

    /// Unfinished pushes per provider (by the address the device holds: `FCM`, `APNs`, `Web Push`, or `none` for a
    /// device whose address was cleared meanwhile) and when the oldest of each was queued; counted by the database.
    package static func depthByProvider(on db: any Database) async throws -> [String: (count: Int, oldest: Date?)] {
        let rows = try await db.sql.raw(
            """
            SELECT p.provider AS provider, COUNT(*) AS depth, MIN(p.created_at) AS oldest FROM (
                SELECT CASE WHEN d.apns_token IS NOT NULL THEN 'APNs' WHEN d.web_push_subscription IS NOT NULL THEN 'Web Push'
                WHEN d.firebase_instance_id IS NOT NULL THEN 'FCM' ELSE 'none' END AS provider, o.created_at AS created_at
                FROM \(unsafeRaw: PendingPush.schema) o LEFT JOIN \(unsafeRaw: DeviceAnonymized.schema) d ON d.id = o.device_anonymized_id
                WHERE o.state = 'pending') p
            GROUP BY p.provider
            """
        ).all()
        var depths: [String: (count: Int, oldest: Date?)] = [:]
        for row in rows {
            depths[try row.decode(column: "provider", as: String.self)] = (
                try row.decode(column: "depth", as: Int.self), try row.decode(column: "oldest", as: Date.self)
            )
        }
        return depths
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
