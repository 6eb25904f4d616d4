import FluentKit
import Foundation
import SQLKit
import YonaStore

/// How many messages an inbox lists, without counting them (`CountInboxesWithoutAHotRow`): the inbox's folded count,
/// plus its changes not folded yet, plus its copies of announcements that have not expired.
package enum InboxCounts {
    /// The number of messages the inbox page lists (`onlyUnread`: of those not read), as one statement, so it reads
    /// one state of the store even while a fold moves changes into the count.
    package static func listed(in userAnonymizedID: UUID, onlyUnread: Bool, on db: any Database, now: Date) async throws -> Int {
        let row = try await db.sql.raw("SELECT \(expression(in: userAnonymizedID, onlyUnread: onlyUnread, now: now)) AS total").first()
        return try row?.decode(column: "total", as: Int.self) ?? 0
    }

    /// `listed` as an expression, so a query can read the count beside its rows (the inbox page does).
    package static func expression(in userAnonymizedID: UUID, onlyUnread: Bool, now: Date) -> SQLQueryString {
        let column: SQLQueryString = onlyUnread ? "unread" : "listed"
        let unread: SQLQueryString = onlyUnread ? "AND is_read = \(bind: false)" : ""
        return """
            (COALESCE((SELECT \(column) FROM inbox_counts WHERE user_anonymized_id = \(bind: userAnonymizedID)), 0)
            + COALESCE((SELECT SUM(\(column)) FROM inbox_count_changes WHERE user_anonymized_id = \(bind: userAnonymizedID)), 0)
            + (SELECT COUNT(*) FROM \(unsafeRaw: Message.schema) WHERE announcement_id IN (
                  SELECT id FROM \(unsafeRaw: SystemAnnouncement.schema) WHERE expires_at IS NULL OR expires_at > \(bind: now))
              AND user_anonymized_id = \(bind: userAnonymizedID) AND is_sent_item = \(bind: false) \(unread)))
            """
    }

    /// A fold's batch: a few milliseconds of the one SQLite writer.
    package static let foldLimit = 5_000

    /// Moves up to `limit` of the oldest changes into their inboxes' counts, in one transaction; returns how many it
    /// moved. Concurrent folds (several worker processes) take disjoint changes on PostgreSQL (`SKIP LOCKED`); on
    /// SQLite write transactions run one at a time. A count that comes to nothing, or whose inbox is gone, is removed.
    @discardableResult
    package static func fold(on db: any Database, limit: Int = foldLimit) async throws -> Int {
        try await db.transaction { tx in
            let sql = tx.sql
            let skipLocked: SQLQueryString = sql.dialect.name == "sqlite" ? "" : " FOR UPDATE SKIP LOCKED"
            let rows = try await sql.raw(
                """
                DELETE FROM inbox_count_changes WHERE id IN (
                    SELECT id FROM inbox_count_changes ORDER BY id LIMIT \(literal: limit)\(skipLocked))
                RETURNING user_anonymized_id, listed, unread
                """
            ).all()
            guard !rows.isEmpty else { return 0 }
            var sums: [UUID: (listed: Int, unread: Int)] = [:]
            for row in rows {
                let inbox = try row.decode(column: "user_anonymized_id", as: UUID.self)
                let listed = try row.decode(column: "listed", as: Int.self)
                let unread = try row.decode(column: "unread", as: Int.self)
                sums[inbox, default: (0, 0)].listed += listed
                sums[inbox, default: (0, 0)].unread += unread
            }
            // In one order, so two folds on PostgreSQL lock the count rows they share in the same order.
            let inboxes = sums.keys.sorted { $0.uuidString < $1.uuidString }
            let values = inboxes.map { inbox -> SQLQueryString in
                let sum = sums[inbox]!
                return "(\(bind: inbox), \(bind: sum.listed), \(bind: sum.unread))"
            }
            try await sql.raw(
                """
                INSERT INTO inbox_counts (user_anonymized_id, listed, unread) VALUES \(values.joined(separator: ", "))
                ON CONFLICT (user_anonymized_id) DO UPDATE
                SET listed = inbox_counts.listed + excluded.listed, unread = inbox_counts.unread + excluded.unread
                """
            ).run()
            let list = inboxes.map { "\(bind: $0)" as SQLQueryString }.joined(separator: ", ")
            try await sql.raw(
                """
                DELETE FROM inbox_counts WHERE user_anonymized_id IN (\(list)) AND ((listed = 0 AND unread = 0)
                OR NOT EXISTS (SELECT 1 FROM \(unsafeRaw: UserAnonymized.schema) WHERE id = inbox_counts.user_anonymized_id))
                """
            ).run()
            return rows.count
        }
    }
}
