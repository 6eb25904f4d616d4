import FluentKit
import Foundation
import SQLKit
import YonaStore

/// The text outbox's one owner (`text_outbox`, `PendingText`): the domain queues sealed texts and mails through it,
/// its drain claims and finishes them through `lifecycle` (the shared `Outbox`), metrics and the console read the
/// depth here. What a row says and to whom is sealed by the caller; this module never opens it.
package enum TextQueue {
    /// The table's lifecycle: any due text, soonest first (each stands alone).
    package static func lifecycle(
        on db: any Database, skipLocked: Bool, leaseSeconds: TimeInterval, backoff: Backoff, maxAgeSeconds: TimeInterval
    ) -> Outbox<UUID> {
        Outbox(
            table: PendingText.schema, ordering: .none, db: db, skipLocked: skipLocked, leaseSeconds: leaseSeconds, backoff: backoff,
            maxAgeSeconds: maxAgeSeconds)
    }

    /// What a claim returns of each row (`Claimed` decodes it).
    package static let claimedColumns: SQLQueryString = "id, sealed, attempts, created_at"

    /// A claimed row: its id, its sealed payload, the attempts made before this one and when it was queued.
    package struct Claimed: Decodable, Sendable {
        package let id: UUID
        package let sealed: Data
        package let attempts: Int
        package let createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id, sealed, attempts
            case createdAt = "created_at"
        }
    }

    /// Empties a refused row's payload (`Outbox.settle`'s `clearing`): a failed text keeps only its channel and why.
    package static let clearingPayload: SQLQueryString = "sealed = \(bind: Data())"

    /// Queues a sealed text or mail on `db` (the caller's transaction, when it has one), due from `due` on. Its
    /// `created_at` is `due` to the minute: it only bounds how long delivery is tried, and that starts when it is due.
    package static func queue(id: UUID, channel: String, sealed: Data, due: Date, on db: any Database) async throws {
        try await PendingText(id: id, channel: channel, sealed: sealed, now: due).create(on: db)
    }

    /// Texts and mails not yet sent (waiting or being sent), per channel (`sms`, `email`), and when the oldest of each
    /// was queued; counted by the database (a scrape during a provider outage reads no rows).
    package static func depthByChannel(on db: any Database) async throws -> [String: (count: Int, oldest: Date?)] {
        let rows = try await db.sql.raw(
            """
            SELECT channel, COUNT(*) AS depth, MIN(created_at) AS oldest FROM \(unsafeRaw: PendingText.schema)
            WHERE state IN (\(bind: PendingText.State.pending.rawValue), \(bind: PendingText.State.claimed.rawValue))
            GROUP BY channel
            """
        ).all()
        var depths: [String: (count: Int, oldest: Date?)] = [:]
        for row in rows {
            depths[try row.decode(column: "channel", as: String.self)] = (
                try row.decode(column: "depth", as: Int.self), try row.decode(column: "oldest", as: Date.self)
            )
        }
        return depths
    }
}

/// The VPN directory queue's one owner (`vpn_account_outbox`, `PendingVPNAccountChange`): changes are queued sealed in
/// the transaction of the device change that causes them and applied strictly oldest first.
package enum VPNChangeQueue {
    /// The table's lifecycle: strictly the oldest change, never given up (an account must exist or go).
    package static func lifecycle(on db: any Database, leaseSeconds: TimeInterval, backoff: Backoff) -> Outbox<Int> {
        Outbox(
            table: PendingVPNAccountChange.schema, ordering: .oldestFirst, hasState: false, nullableNextAttempt: true, db: db, skipLocked: false,
            leaseSeconds: leaseSeconds, backoff: backoff, maxAgeSeconds: nil)
    }

    /// What a claim returns of the head (`Claimed` decodes it).
    package static let claimedColumns: SQLQueryString = "id, sealed, attempts"

    package struct Claimed: Decodable, Sendable {
        package let id: Int
        package let sealed: Data
        package let attempts: Int
    }

    /// Queues a sealed change on `db` (the device change's transaction).
    package static func queue(sealed: Data, on db: any Database) async throws {
        try await PendingVPNAccountChange(sealed: sealed).create(on: db)
    }

    /// Changes waiting, and how many of them failed at least once (a change that keeps failing holds up the ones
    /// behind it, so a depth that only grows with failed attempts is the signal).
    package static func depth(on db: any Database) async throws -> (count: Int, failing: Int) {
        (try await PendingVPNAccountChange.query(on: db).count(), try await PendingVPNAccountChange.query(on: db).filter(\.$attempts > 0).count())
    }
}
