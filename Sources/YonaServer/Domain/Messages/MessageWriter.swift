import Fluent
import Foundation
import SQLKit
import YonaCrypto

/// The one way a message comes to exist: sealed to the recipient's anonymous inbox and, in the same
/// transaction, a push queued for each of the recipient's devices that has an Instance ID.
enum MessageWriter {
    /// Random positive ids below 2^53 (api.md): unique in practice, and they reveal no count.
    static func newMessageID() -> Int64 {
        let bytes = SecureRandom.bytes(8)
        let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & ((1 << 53) - 1)
        return value == 0 ? 1 : Int64(value)
    }

    @discardableResult
    static func deliver(
        to recipient: UUID, on db: any Database, now: Date, announcementID: UUID? = nil,
        _ makePayload: (Int64) -> MessagePayload
    ) async throws -> Int64? {
        let id = newMessageID()
        return try await deliver(to: recipient, id: id, on: db, now: now, payload: makePayload(id)) { message in
            message.announcementID = announcementID
        }
    }

    /// Writes message `id`; `relate` may set the plain relations a kind needs beyond the ones derived from the
    /// payload. `push: false` for a copy nobody needs to be told about (the sender's own copy of a comment).
    @discardableResult
    static func deliver(
        to recipient: UUID, id: Int64, on db: any Database, now: Date, push: Bool = true, payload: MessagePayload,
        relate: (Message) -> Void = { _ in }
    ) async throws -> Int64? {
        guard let inbox = try await UserAnonymized.find(recipient, on: db), let publicKey = inbox.anonymousInboxPublicKey else {
            return nil
        }
        let sealed = try SealedBox.seal(Array(try JSONEncoder().encode(payload)), to: Array(publicKey))
        let message = Message(id: id, userAnonymizedID: recipient, sealedPayload: Data(sealed), creationTime: now)
        if payload.relatesAcceptedBuddies, payload.subjectUserAnonymizedID != recipient {
            message.senderAnonymizedID = payload.subjectUserAnonymizedID
        }
        message.originMessageID = payload.originalMessageID
        if payload.kind == .goalConflict, payload.subjectUserAnonymizedID == recipient { message.goalID = payload.goalID }
        relate(message)
        try await message.create(on: db)
        if push { try await OutboxWriter.queuePushes(messageID: id, recipient: recipient, on: db, now: now) }
        return id
    }

    /// Seals a direct message from one identity to another's named inbox; it gets its message id when the
    /// recipient's next call moves it into the anonymous inbox (and only then is it pushed).
    static func deliverNamed(to userID: UUID, on db: any Database, now: Date, _ payload: MessagePayload) async throws {
        guard let recipient = try await User.find(userID, on: db), let publicKey = recipient.namedInboxPublicKey else { return }
        let sealed = try SealedBox.seal(Array(try JSONEncoder().encode(payload)), to: Array(publicKey))
        try await NamedMessage(id: UUID(), userID: userID, sealedPayload: Data(sealed), createdAt: now).create(on: db)
    }

    /// Deletes messages (and the pushes still queued for them) matched by their plain relations; returns their ids.
    @discardableResult
    static func delete(on db: any Database, _ filter: (QueryBuilder<Message>) -> QueryBuilder<Message>) async throws -> [Int64] {
        let ids = try await filter(Message.query(on: db)).all(\.$id)
        guard !ids.isEmpty else { return [] }
        try await Message.query(on: db).filter(\.$id ~~ ids).delete()
        try await PendingPush.query(on: db).filter(\.$messageID ~~ ids).filter(\.$state == PendingPush.State.pending.rawValue).delete()
        return ids
    }

    /// What leaves `recipient`'s inbox when it stops being `sender`'s buddy: everything from or about the sender.
    static func deleteAll(from sender: UUID, in recipient: UUID, on db: any Database) async throws {
        try await delete(on: db) { $0.filter(\.$userAnonymized.$id == recipient).filter(\.$senderAnonymizedID == sender) }
    }

    /// A comment and what goes with it, in both inboxes: its counterpart, and every reply to either, and so on.
    static func deleteCommentThread(from id: Int64, on db: any Database) async throws {
        var ids: Set<Int64> = [id]
        while true {
            let rows = try await Message.query(on: db).filter(\.$activityInterval != nil)
                .group(.or) { $0.filter(\.$id ~~ ids).filter(\.$originMessageID ~~ ids).filter(\.$repliedMessageID ~~ ids) }.all()
            let found = Set(rows.compactMap(\.id) + rows.compactMap(\.originMessageID))
            guard !found.isSubset(of: ids) else { break }
            ids.formUnion(found)
        }
        try await delete(on: db) { $0.filter(\.$id ~~ ids) }
    }

    /// A conflict message and, in every buddy's inbox, its copies and the disclosure messages about it.
    static func deleteWithCopies(_ ids: [Int64], on db: any Database) async throws {
        guard !ids.isEmpty else { return }
        try await delete(on: db) { $0.group(.or) { $0.filter(\.$id ~~ ids).filter(\.$originMessageID ~~ ids) } }
    }

    /// Replaces what a message says (its status, a disclosed URL), sealed again to the same inbox.
    static func reseal(_ messageID: Int64, recipient: UUID, on db: any Database, _ payload: MessagePayload) async throws {
        guard let sealed = try await seal(payload, id: messageID, to: recipient, on: db) else { return }
        try await Message.query(on: db).filter(\.$id == messageID).filter(\.$userAnonymized.$id == recipient)
            .set(\.$sealedPayload, to: sealed).update()
    }

    /// Moves a message to the state an action gives it, only if it still holds the sealed bytes the action
    /// read (sealed boxes are randomized, so equal bytes mean an unchanged message). Of two taps on the same
    /// action at once one wins; the other gets `error.message.action.not.supported`, as a later repeat does.
    /// Call it first in the action's transaction.
    static func transition(_ message: OpenedMessage, recipient: UUID, on db: any Database, _ payload: MessagePayload) async throws {
        guard let sealed = try await seal(payload, id: message.id, to: recipient, on: db) else { throw YonaError(.messageNotFound) }
        let changed = try await db.sql.raw(
            """
            UPDATE \(unsafeRaw: Message.schema) SET sealed_payload = \(bind: sealed)
            WHERE id = \(bind: message.id) AND user_anonymized_id = \(bind: recipient) AND sealed_payload = \(bind: message.record.sealedPayload)
            RETURNING id
            """
        ).first()
        guard changed != nil else { throw YonaError(.messageActionNotSupported) }
    }

    /// `payload` under message id `id`, sealed to the recipient's anonymous inbox; nil when the recipient is gone.
    private static func seal(_ payload: MessagePayload, id: Int64, to recipient: UUID, on db: any Database) async throws -> Data? {
        guard let inbox = try await UserAnonymized.find(recipient, on: db), let publicKey = inbox.anonymousInboxPublicKey else { return nil }
        var payload = payload
        payload.messageID = id
        return Data(try SealedBox.seal(Array(try JSONEncoder().encode(payload)), to: Array(publicKey)))
    }

    /// Opens a message with the owner's inbox key; a payload that names another id is refused.
    static func open(_ message: Message, with inbox: BoxKeyPair) throws -> MessagePayload {
        let plaintext = try SealedBox.open(Array(message.sealedPayload), keyPair: inbox)
        let payload = try JSONDecoder().decode(MessagePayload.self, from: Data(plaintext))
        guard payload.messageID == message.id else { throw YonaError(.decryptingData) }
        return payload
    }
}

/// Writes the push outbox; the only code that does.
enum OutboxWriter {
    static func queuePushes(messageID: Int64, recipient: UUID, on db: any Database, now: Date) async throws {
        let devices = try await DeviceAnonymized.query(on: db)
            .filter(\.$userAnonymized.$id == recipient)
            .filter(\.$firebaseInstanceID != nil)
            .filter(\.$notificationsEnabled == true)
            .all()
        for device in devices {
            try await PendingPush(id: UUID(), deviceID: device.id!, messageID: messageID, now: now).create(on: db)
        }
    }
}
