import Fluent
import Foundation

/// An opened message with the facts its rendering needs.
struct OpenedMessage: Sendable {
    let record: Message
    let payload: MessagePayload
    var id: Int64 { record.id! }
}

/// Reading and acting on one's own inbox.
struct MessageService: Sendable {
    let db: any Database

    struct Page: Sendable {
        let messages: [OpenedMessage]
        let totalElements: Int
        let number: Int
        let size: Int
        var totalPages: Int { totalElements == 0 ? 0 : (totalElements + size - 1) / size }
    }

    /// Newest first.
    func page(of user: UnlockedUser, number: Int, size: Int, onlyUnread: Bool) async throws -> Page {
        var query = try await visible(Message.query(on: db).filter(\.$userAnonymized.$id == user.privateData.userAnonymizedID))
        if onlyUnread { query = query.filter(\.$isRead == false) }
        let total = try await query.count()
        let rows = try await query.sort(\.$creationTime, .descending).sort(\.$id, .descending)
            .range(number * size..<(number * size + size)).all()
        let inbox = try user.anonymousInbox()
        let opened = try rows.map { OpenedMessage(record: $0, payload: try MessageWriter.open($0, with: inbox)) }
        return Page(messages: opened, totalElements: total, number: number, size: size)
    }

    func message(_ id: Int64, of user: UnlockedUser) async throws -> OpenedMessage {
        guard let row = try await visible(Message.query(on: db).filter(\.$id == id)
            .filter(\.$userAnonymized.$id == user.privateData.userAnonymizedID)).first() else {
            throw YonaError(.messageNotFound)
        }
        return OpenedMessage(record: row, payload: try MessageWriter.open(row, with: try user.anonymousInbox()))
    }

    /// Hides copies of announcements that have expired (the purge deletes them soon after).
    private func visible(_ query: QueryBuilder<Message>) async throws -> QueryBuilder<Message> {
        let expired = try await AnnouncementService(db: db).expiredIDs()
        guard !expired.isEmpty else { return query }
        return query.group(.or) { $0.filter(\.$announcementID == nil).filter(\.$announcementID !~ expired) }
    }

    func setRead(_ id: Int64, of user: UnlockedUser, to isRead: Bool) async throws -> OpenedMessage {
        let message = try await message(id, of: user)
        try await Message.query(on: db).filter(\.$id == id).set(\.$isRead, to: isRead).update()
        message.record.isRead = isRead
        return message
    }

    func delete(_ id: Int64, of user: UnlockedUser) async throws {
        _ = try await message(id, of: user)
        try await Message.query(on: db).filter(\.$id == id).delete()
        try await PendingPush.query(on: db).filter(\.$messageID == id).filter(\.$state == PendingPush.State.pending.rawValue).delete()
    }
}
