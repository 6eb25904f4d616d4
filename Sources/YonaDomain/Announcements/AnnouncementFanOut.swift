import FluentKit
import Foundation
import NIOCore
import SQLKit
import YonaCrypto
import YonaStore

/// Turns announcements into messages and pushes. A new announcement's recipient snapshot (every anonymized user
/// at that moment) is taken here, not in the `POST`. The snapshot is then delivered one batch per transaction: a
/// batch's recipients are removed in the transaction that writes their messages and pushes (raw multi-row inserts,
/// `MessageWriter.write`), so a crash loses or repeats nothing; on PostgreSQL `SKIP LOCKED` lets several instances
/// share the work. A batch's payloads are sealed on a thread of `threadPool`, off the threads that answer requests.
package struct AnnouncementFanOut: Sendable {
    package static let recipientsTable = SystemAnnouncement.recipientsTable

    package let db: any Database
    package let skipLocked: Bool
    /// Where sealing runs; nil seals on the calling task.
    package var threadPool: NIOThreadPool? = nil

    /// Takes any snapshot still to be taken, then delivers up to `limit` copies; returns how many recipients it took
    /// from the snapshot.
    @discardableResult
    package func runOnce(limit: Int = 1000, now: Date = Date()) async throws -> Int {
        try await takeSnapshots()
        // A cheap read first: the workers call this all the time, and most of the time there is nothing to do.
        guard try await db.sql.raw("SELECT 1 AS one FROM \(unsafeRaw: Self.recipientsTable) LIMIT 1").first() != nil else { return 0 }
        return try await db.transaction { tx in
            let claimed = try await claim(limit: limit, on: tx)
            guard !claimed.isEmpty else { return 0 }
            let announcements = try await SystemAnnouncement.query(on: tx).filter(\.$id ~~ Set(claimed.map(\.announcementID))).all()
                .reduce(into: [UUID: SystemAnnouncement]()) { $0[$1.id!] = $1 }
            let keys = try await MessageWriter.inboxKeys(of: claimed.map(\.userAnonymizedID), on: tx)
            var deliveries: [MessageWriter.Delivery] = []
            for recipient in claimed {
                // A user deleted since the snapshot, or an announcement taken back, gets nothing.
                guard let announcement = announcements[recipient.announcementID], keys[recipient.userAnonymizedID] != nil,
                    announcement.expiresAt.map({ $0 > now }) ?? true
                else { continue }
                let id = MessageWriter.newMessageID()
                let announcementID = announcement.id
                deliveries.append(
                    MessageWriter.Delivery(
                        recipient: recipient.userAnonymizedID, id: id,
                        payload: AnnouncementService.payload(announcement, messageID: id, recipient: recipient.userAnonymizedID),
                        relate: { $0.announcementID = announcementID }))
            }
            let sealed = try await seal(deliveries.map { ($0.recipient, $0.payload) }, keys: keys)
            _ = try await MessageWriter.write(deliveries, sealed: sealed, on: tx, now: now)
            return claimed.count
        }
    }

    /// Copies every anonymized user that exists now into the snapshot of each announcement still without one. One
    /// instance takes each (the flag flips once); `AnnouncementService.deliverActive` covers users created meanwhile.
    package func takeSnapshots() async throws {
        for id in try await SystemAnnouncement.query(on: db).filter(\.$snapshotTaken == false).all(\.$id) {
            try await db.transaction { tx in
                let taken = try await tx.sql.raw(
                    """
                    UPDATE \(unsafeRaw: SystemAnnouncement.schema) SET snapshot_taken = \(bind: true)
                    WHERE id = \(bind: id) AND snapshot_taken = \(bind: false) RETURNING id
                    """
                ).first()
                guard taken != nil else { return }
                try await tx.sql.raw(
                    """
                    INSERT INTO \(unsafeRaw: Self.recipientsTable) (announcement_id, user_anonymized_id)
                    SELECT \(bind: id), id FROM \(unsafeRaw: UserAnonymized.schema)
                    """
                ).run()
            }
        }
    }

    /// Sealing a batch is CPU only (about 70 ms for 1,000 copies). On the cooperative pool it held a thread that
    /// request handlers were waiting for (`scripts/bench announce`: the profile read's p95 went from 5 ms to 260 ms);
    /// on a pool thread the kernel shares the cores between it and the requests, and one batch seals at a time.
    private func seal(_ items: [(recipient: UUID, payload: MessagePayload)], keys: [UUID: [UInt8]]) async throws -> [Data] {
        guard let threadPool else { return try MessageWriter.seal(items, keys: keys) }
        return try await threadPool.runIfActive { try MessageWriter.seal(items, keys: keys) }
    }

    /// How many recipients the stored announcements still have to reach.
    package func pending() async throws -> Int {
        let row = try await db.sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: Self.recipientsTable)").first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    /// Users one announcement still has to reach.
    package func pending(of announcementID: UUID) async throws -> Int {
        let row = try await db.sql.raw(
            "SELECT COUNT(*) AS n FROM \(unsafeRaw: Self.recipientsTable) WHERE announcement_id = \(bind: announcementID)"
        ).first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    private struct Recipient: Decodable {
        package let announcementID: UUID
        package let userAnonymizedID: UUID
        package enum CodingKeys: String, CodingKey {
            case announcementID = "announcement_id"
            case userAnonymizedID = "user_anonymized_id"
        }
    }

    /// Removes a batch from the snapshot and returns it (rolled back with the batch if anything fails).
    private func claim(limit: Int, on tx: any Database) async throws -> [Recipient] {
        let table = Self.recipientsTable
        let query: SQLQueryString =
            skipLocked
            ? """
            DELETE FROM \(unsafeRaw: table) WHERE ctid IN (
                SELECT ctid FROM \(unsafeRaw: table) LIMIT \(bind: limit) FOR UPDATE SKIP LOCKED)
            RETURNING announcement_id, user_anonymized_id
            """
            : """
            DELETE FROM \(unsafeRaw: table) WHERE rowid IN (SELECT rowid FROM \(unsafeRaw: table) LIMIT \(bind: limit))
            RETURNING announcement_id, user_anonymized_id
            """
        return try await tx.sql.raw(query).all(decoding: Recipient.self)
    }

    package init(db: any Database, skipLocked: Bool, threadPool: NIOThreadPool? = nil) {
        self.db = db
        self.skipLocked = skipLocked
        self.threadPool = threadPool
    }
}
