import FluentKit
import Foundation
import SQLKit
import YonaStore

/// The one lifecycle of every outbox (pushes, texts and mails, VPN directory changes): rows are queued in the
/// transaction of the change that causes them, claimed with a lease (`claimed_until`; `FOR UPDATE SKIP LOCKED` on
/// PostgreSQL, so instances share the work and never take one row twice), handed to a transport, and finished by the
/// transport's `DeliveryOutcome`: delivered rows are deleted, transient failures wait by the one `Backoff` rule,
/// refusals are marked failed (keeping only why) and purged later. A row whose worker died is claimed again once its
/// lease lapses. What differs between outboxes is only the order rows go out in (`Ordering`) and what a row holds.
///
/// Every table has `id`, `attempts`, `next_attempt_at`, `claimed_until` and `last_error`; those that can give a row up
/// (`hasState`) also `state` (`pending`, `failed`) and `created_at`.
package struct Outbox<ID: Codable & Sendable>: Sendable {
    package enum Ordering: Sendable {
        /// Any due row, soonest due first (texts and mails: each stands alone).
        case none
        /// Only the oldest row, strictly: a later one never overtakes a failing one (VPN directory changes).
        case oldestFirst
        /// A row waits while an older open row has the same value in this column (pushes, per device).
        case perKey(String)
    }

    package let table: String
    package let ordering: Ordering
    package let hasState: Bool
    /// Whether `next_attempt_at` may be NULL (due at once); where it never is, the due test stays one index range.
    package let nullableNextAttempt: Bool
    package let db: any Database
    package let skipLocked: Bool
    package var leaseSeconds: TimeInterval
    package var backoff: Backoff
    /// After this long from `created_at` a row that still fails is given up; nil: never (VPN changes must happen).
    package var maxAgeSeconds: TimeInterval?

    package init(
        table: String, ordering: Ordering, hasState: Bool = true, nullableNextAttempt: Bool = false, db: any Database, skipLocked: Bool,
        leaseSeconds: TimeInterval, backoff: Backoff, maxAgeSeconds: TimeInterval?
    ) {
        self.table = table
        self.ordering = ordering
        self.hasState = hasState
        self.nullableNextAttempt = nullableNextAttempt
        self.db = db
        self.skipLocked = skipLocked
        self.leaseSeconds = leaseSeconds
        self.backoff = backoff
        self.maxAgeSeconds = maxAgeSeconds
    }

    private var name: SQLQueryString { "\(unsafeRaw: table)" }
    private func due(_ alias: String, _ now: Date) -> SQLQueryString {
        let open: SQLQueryString = hasState ? "\(unsafeRaw: alias).state = 'pending' AND " : ""
        let soon: SQLQueryString =
            nullableNextAttempt
            ? "(\(unsafeRaw: alias).next_attempt_at IS NULL OR \(unsafeRaw: alias).next_attempt_at <= \(bind: now))"
            : "\(unsafeRaw: alias).next_attempt_at <= \(bind: now)"
        return "\(open)\(soon) AND (\(unsafeRaw: alias).claimed_until IS NULL OR \(unsafeRaw: alias).claimed_until < \(bind: now))"
    }

    /// Whether any row is due and not leased (a cheap read first, so an idle worker takes no write lock).
    package func anythingDue(at now: Date) async throws -> Bool {
        try await db.sql.raw("SELECT 1 AS due FROM \(name) t WHERE \(due("t", now)) LIMIT 1").first() != nil
    }

    /// Claims up to `limit` due rows in the outbox's order (or only `only`), leasing them; returns the `returning`
    /// columns of each (the row as it stands: `attempts` before this attempt).
    package func claim(now: Date, limit: Int, only id: ID? = nil, returning: SQLQueryString) async throws -> [any SQLRow] {
        let lock: SQLQueryString = skipLocked ? "FOR UPDATE SKIP LOCKED" : ""
        let one: SQLQueryString = id.map { "AND t.id = \(bind: $0)" } ?? ""
        let turn: SQLQueryString
        switch ordering {
        case .none:
            turn = ""
        case .oldestFirst:
            let open: SQLQueryString = hasState ? "WHERE o.state = 'pending'" : ""
            turn = "AND t.id = (SELECT MIN(o.id) FROM \(name) o \(open))"
        case .perKey(let column):
            turn =
                "AND NOT EXISTS (SELECT 1 FROM \(name) o WHERE o.\(unsafeRaw: column) = t.\(unsafeRaw: column) AND o.state = 'pending' AND o.created_at < t.created_at)"
        }
        return try await db.sql.raw(
            """
            UPDATE \(name) SET claimed_until = \(bind: now.addingTimeInterval(leaseSeconds))
            WHERE id IN (
                SELECT t.id FROM \(name) t
                WHERE \(due("t", now)) \(turn) \(one)
                ORDER BY t.next_attempt_at
                LIMIT \(bind: limit)
                \(lock)
            )
            RETURNING \(returning)
            """
        ).all()
    }

    /// What became of a row once its outcome was recorded, for the caller's metrics and logs.
    package enum Settled: Sendable, Equatable {
        case delivered
        case retrying(after: TimeInterval)
        /// Failed again past its maximum age.
        case gaveUp
        case refused
    }

    /// Records one attempt's outcome for a claimed row that had made `attempts` before and was created at `createdAt`:
    /// delivered → deleted; retry → later by the backoff (never before the provider's Retry-After), or given up past
    /// the maximum age; misconfigured → later by the longest backoff (no hot loop while nothing can get through);
    /// rejected and dead address → failed, with `clearing` columns emptied (a sealed payload outlives no refusal).
    @discardableResult
    package func settle(
        _ id: ID, attempts: Int, createdAt: Date?, outcome: DeliveryOutcome, now: Date, clearing: SQLQueryString? = nil
    ) async throws -> Settled {
        switch outcome {
        case .delivered:
            try await delete([id])
            return .delivered
        case .retry(let code, let after):
            return try await later(
                id, attempts: attempts, createdAt: createdAt, code: code, delay: backoff.delay(afterAttempts: attempts, retryAfter: after), now: now,
                clearing: clearing)
        case .misconfigured(let code):
            return try await later(id, attempts: attempts, createdAt: createdAt, code: code, delay: backoff.cap, now: now, clearing: clearing)
        case .rejected(let code), .deadAddress(let code):
            try await fail(id, attempts: attempts, code: code, clearing: clearing)
            return .refused
        }
    }

    private func later(
        _ id: ID, attempts: Int, createdAt: Date?, code: String, delay: TimeInterval, now: Date, clearing: SQLQueryString?
    ) async throws -> Settled {
        if let maxAgeSeconds, let createdAt, now.addingTimeInterval(delay).timeIntervalSince(createdAt) > maxAgeSeconds {
            try await fail(id, attempts: attempts, code: code, clearing: clearing)
            return .gaveUp
        }
        try await db.sql.raw(
            """
            UPDATE \(name) SET attempts = \(bind: attempts + 1), next_attempt_at = \(bind: now.addingTimeInterval(delay)),
                claimed_until = NULL, last_error = \(bind: code)
            WHERE id = \(bind: id)
            """
        ).run()
        return .retrying(after: delay)
    }

    /// Marks a row failed (only why is kept), or deletes it where the table keeps no failures.
    private func fail(_ id: ID, attempts: Int, code: String, clearing: SQLQueryString?) async throws {
        guard hasState else { return try await delete([id]) }
        let clear: SQLQueryString = clearing.map { ", \($0)" } ?? ""
        try await db.sql.raw(
            """
            UPDATE \(name) SET state = 'failed', attempts = \(bind: attempts + 1), claimed_until = NULL, last_error = \(bind: code)\(clear)
            WHERE id = \(bind: id)
            """
        ).run()
    }

    /// Deletes finished rows (delivered ones, many in one statement: a delete writes no index entries).
    package func delete(_ ids: [ID]) async throws {
        for chunk in ids.chunked(1000) {
            try await db.sql.raw("DELETE FROM \(name) WHERE id IN (\(binds: Array(chunk)))").run()
        }
    }

    /// Deletes failed rows created before `cutoff`, in chunks (short statements beside the drain).
    @discardableResult
    package func purgeFailed(before cutoff: Date, chunk: Int = 10_000) async throws -> Int {
        guard hasState else { return 0 }
        var purged = 0
        while true {
            let rows = try await db.sql.raw(
                """
                DELETE FROM \(name) WHERE id IN (
                    SELECT id FROM \(name) WHERE state = 'failed' AND created_at < \(bind: cutoff) LIMIT \(bind: chunk))
                RETURNING id
                """
            ).all()
            purged += rows.count
            if rows.count < chunk { return purged }
        }
    }
}
