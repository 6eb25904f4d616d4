import FluentKit
import Foundation
import Logging
import SQLKit
import YonaObservability
import YonaStore

/// An opened message with the facts its rendering needs.
package struct OpenedMessage: Sendable {
    package let record: Message
    package let payload: MessagePayload
    package var id: Int64 { record.id! }
}

/// Reading and acting on one's own inbox.
package struct MessageService: Sendable {
    package let db: any Database
    /// Counts listings whose envelopes could not be stored (`storeEnvelopes`).
    package var metrics: YonaMetrics? = nil

    package struct Page: Sendable {
        package let messages: [OpenedMessage]
        package let totalElements: Int
        package let number: Int
        package let size: Int
        package var totalPages: Int { totalElements == 0 ? 0 : (totalElements + size - 1) / size }
    }

    /// Newest first. Buddy requests withdrawn before they were answered vanish here (see `isWithdrawn`).
    package func page(of user: UnlockedUser, number: Int, size: Int, onlyUnread: Bool) async throws -> Page {
        let inbox = try user.anonymousInbox()
        let envelopeKey = MessageWriter.envelopeKey(of: inbox)
        while true {
            // Raw SQL, one round trip: the page is the app's inbox screen. A sender's own copy of a comment is listed
            // with its thread only, as Yona's; a copy of an expired announcement is not listed (it is purged soon).
            // The count is kept, not counted (`InboxCounts`): the same whether the inbox holds 100 messages or 100,000,
            // and cheap enough to read beside each row (both stores evaluate the uncorrelated expression once).
            let now = Date()
            let owner = user.privateData.userAnonymizedID
            let unread: SQLQueryString = onlyUnread ? "AND is_read = \(bind: false)" : ""
            let found = try await db.sql.raw(
                """
                SELECT \(unsafeRaw: Message.columns), \(InboxCounts.expression(in: owner, onlyUnread: onlyUnread, now: now)) AS total
                FROM \(unsafeRaw: Message.schema) WHERE user_anonymized_id = \(bind: owner) AND is_sent_item = \(bind: false) \(unread)
                AND (announcement_id IS NULL OR announcement_id NOT IN (
                    SELECT id FROM \(unsafeRaw: SystemAnnouncement.schema) WHERE expires_at <= \(bind: now)))
                ORDER BY creation_time DESC, id DESC LIMIT \(literal: size) OFFSET \(literal: number * size)
                """
            ).all()
            // A page past the end has no row to carry the count.
            let total: Int
            if let first = found.first {
                total = try first.decode(column: "total", as: Int.self)
            } else {
                total = try await InboxCounts.listed(in: owner, onlyUnread: onlyUnread, on: db, now: now)
            }
            let rows = try found.map(Message.init(row:))
            var envelopes: [(message: Message, envelope: Data)] = []
            let listed = try rows.map { row in
                let (payload, envelope) = try MessageWriter.open(row, with: inbox, envelopeKey: envelopeKey)
                if let envelope { envelopes.append((row, envelope)) }
                return OpenedMessage(record: row, payload: payload)
            }
            do {
                try await MessageWriter.storeEnvelopes(envelopes, on: db)
            } catch {
                // Nothing is lost: the messages stay sealed boxes and the next listing tries again.
                Self.logger.warning("inbox: envelopes not stored", metadata: ["error": .string(String(reflecting: type(of: error)))])
                metrics?.messageEnvelopesNotStored()
            }
            let opened = try await ActivityCommentService.namingVersionsInForce(listed, on: db)
            var withdrawn: [Int64] = []
            for message in opened where try await isWithdrawn(message.payload) { withdrawn.append(message.id) }
            guard !withdrawn.isEmpty else { return Page(messages: opened, totalElements: total, number: number, size: size) }
            try await MessageWriter.delete(on: db) { $0.filter(\.$id ~~ withdrawn) }
        }
    }

    /// A buddy request whose requester took it back (or left) before it was answered: the requester's half of the
    /// relation is gone. Yona deletes such a request from the invitee's inbox.
    package func isWithdrawn(_ payload: MessagePayload) async throws -> Bool {
        guard payload.kind == .buddyConnectRequest, payload.status == PrivateBuddy.Status.requested.rawValue,
            let half = payload.buddyAnonymizedID
        else { return false }
        return try await BuddyAnonymized.find(half, on: db) == nil
    }

    package func message(_ id: Int64, of user: UnlockedUser) async throws -> OpenedMessage {
        guard
            let row = try await visible(
                Message.query(on: db).filter(\.$id == id)
                    .filter(\.$userAnonymized.$id == user.privateData.userAnonymizedID)
            ).first()
        else {
            throw YonaError(.messageNotFound)
        }
        let opened = try await ActivityCommentService.namingVersionsInForce(
            [OpenedMessage(record: row, payload: try MessageWriter.open(row, with: try user.anonymousInbox()))], on: db)[0]
        if try await isWithdrawn(opened.payload) {
            try await MessageWriter.delete(on: db) { $0.filter(\.$id == id) }
            throw YonaError(.messageNotFound)
        }
        return opened
    }

    /// Hides copies of announcements that have expired (the purge deletes them soon after).
    private func visible(_ query: QueryBuilder<Message>) async throws -> QueryBuilder<Message> {
        let expired = try await AnnouncementService(db: db).expiredIDs()
        guard !expired.isEmpty else { return query }
        return query.group(.or) { $0.filter(\.$announcementID == nil).filter(\.$announcementID !~ expired) }
    }

    package func setRead(_ id: Int64, of user: UnlockedUser, to isRead: Bool) async throws -> OpenedMessage {
        let message = try await message(id, of: user)
        try await Message.query(on: db).filter(\.$id == id).set(\.$isRead, to: isRead).update()
        message.record.isRead = isRead
        return message
    }

    package func delete(_ id: Int64, of user: UnlockedUser) async throws {
        let message = try await message(id, of: user)
        guard message.payload.canBeDeleted else { throw YonaError(.cannotDeleteUnprocessedMessage) }
        if message.payload.kind == .activityComment {
            try await db.transaction { tx in try await MessageWriter.deleteCommentThread(from: id, on: tx) }
            return
        }
        // A user's own goal conflict takes its buddies' copies (and the disclosure messages about it) along, as Yona's.
        try await db.transaction { tx in try await MessageWriter.deleteWithCopies([id], on: tx) }
    }

    package init(db: any Database, metrics: YonaMetrics? = nil) {
        self.db = db
        self.metrics = metrics
    }

    private static let logger = Logger(label: "yona.messages")
}
