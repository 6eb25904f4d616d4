import Fluent
import Foundation
import SQLKit
import YonaCrypto

/// Turns announcement snapshots into messages and pushes, one batch per transaction. A batch's recipients
/// are removed in the same transaction that writes their messages, so a crash loses or repeats nothing; on
/// PostgreSQL `SKIP LOCKED` lets several instances share the work.
struct AnnouncementFanOut: Sendable {
    static let recipientsTable = "system_announcement_recipients"

    let db: any Database
    let skipLocked: Bool

    /// Delivers up to `limit` copies; returns how many recipients it took from the snapshot.
    @discardableResult
    func runOnce(limit: Int = 500, now: Date = Date()) async throws -> Int {
        // A cheap read first: the workers call this all the time, and most of the time there is nothing to do.
        guard try await db.sql.raw("SELECT 1 AS one FROM \(unsafeRaw: Self.recipientsTable) LIMIT 1").first() != nil else { return 0 }
        return try await db.transaction { tx in
            let claimed = try await claim(limit: limit, on: tx)
            guard !claimed.isEmpty else { return 0 }
            let announcementIDs = Set(claimed.map(\.announcementID))
            let announcements = try await SystemAnnouncement.query(on: tx).filter(\.$id ~~ announcementIDs).all()
                .reduce(into: [UUID: SystemAnnouncement]()) { $0[$1.id!] = $1 }
            let userIDs = Set(claimed.map(\.userAnonymizedID))
            let inboxes = try await UserAnonymized.query(on: tx).filter(\.$id ~~ userIDs).all()
                .reduce(into: [UUID: Data]()) { map, user in if let key = user.anonymousInboxPublicKey { map[user.id!] = key } }
            let devices = try await DeviceAnonymized.query(on: tx).filter(\.$userAnonymized.$id ~~ userIDs)
                .filter(\.$firebaseInstanceID != nil).filter(\.$notificationsEnabled == true).all()
            let devicesByUser = Dictionary(grouping: devices, by: { $0.$userAnonymized.id })

            var messages: [Message] = []
            var pushes: [PendingPush] = []
            for recipient in claimed {
                // A user deleted since the snapshot, or an announcement taken back, gets nothing.
                guard let announcement = announcements[recipient.announcementID], let inbox = inboxes[recipient.userAnonymizedID],
                    announcement.expiresAt.map({ $0 > now }) ?? true
                else { continue }
                let id = MessageWriter.newMessageID()
                let payload = AnnouncementService.payload(announcement, messageID: id, recipient: recipient.userAnonymizedID)
                let sealed = try SealedBox.seal(Array(try JSONEncoder().encode(payload)), to: Array(inbox))
                let message = Message(id: id, userAnonymizedID: recipient.userAnonymizedID, sealedPayload: Data(sealed), creationTime: now)
                message.announcementID = announcement.id
                messages.append(message)
                for device in devicesByUser[recipient.userAnonymizedID] ?? [] {
                    pushes.append(PendingPush(id: UUID(), deviceID: device.id!, messageID: id, now: now))
                }
            }
            for chunk in messages.chunked(100) { try await chunk.create(on: tx) }
            for chunk in pushes.chunked(100) { try await chunk.create(on: tx) }
            return claimed.count
        }
    }

    /// How many recipients the stored announcements still have to reach.
    func pending() async throws -> Int {
        let row = try await db.sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: Self.recipientsTable)").first()
        return try row?.decode(column: "n", as: Int.self) ?? 0
    }

    private struct Recipient: Decodable {
        let announcementID: UUID
        let userAnonymizedID: UUID
        enum CodingKeys: String, CodingKey {
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
}

extension Array {
    /// Consecutive slices of at most `size` elements (bulk inserts stay under the drivers' bind limits).
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
