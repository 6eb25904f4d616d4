import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaDelivery
import YonaStore

/// The one way a message comes to exist: sealed to the recipient's anonymous inbox and, in the same
/// transaction, a push queued for each of the recipient's devices that has an Instance ID.
package enum MessageWriter {
    /// Random positive ids below 2^53 (api.md): unique in practice, and they reveal no count.
    package static func newMessageID() -> Int64 {
        let bytes = SecureRandom.bytes(8)
        let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & ((1 << 53) - 1)
        return value == 0 ? 1 : Int64(value)
    }

    @discardableResult
    package static func deliver(
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
    package static func deliver(
        to recipient: UUID, id: Int64, on db: any Database, now: Date, push: Bool = true, payload: MessagePayload,
        relate: @escaping (Message) -> Void = { _ in }
    ) async throws -> Int64? {
        let delivery = Delivery(recipient: recipient, id: id, payload: payload, push: push, relate: relate)
        return try await deliver([delivery], keys: try await inboxKeys(of: [recipient], on: db), on: db, now: now).first
    }

    /// One message to write.
    package struct Delivery {
        package let recipient: UUID
        package let id: Int64
        package let payload: MessagePayload
        package var push = true
        package var relate: (Message) -> Void = { _ in }
    }

    /// The anonymous inbox keys of `recipients` that have one.
    package static func inboxKeys(of recipients: [UUID], on db: any Database) async throws -> [UUID: [UInt8]] {
        guard !recipients.isEmpty else { return [:] }
        var keys: [UUID: [UInt8]] = [:]
        for row in try await db.sql.raw(
            """
            SELECT id, anonymous_inbox_public_key FROM \(unsafeRaw: UserAnonymized.schema)
            WHERE id IN (\(binds: Array(Set(recipients)))) AND anonymous_inbox_public_key IS NOT NULL
            """
        ).all() {
            keys[try row.decode(column: "id", as: UUID.self)] = Array(try row.decode(column: "anonymous_inbox_public_key", as: Data.self))
        }
        return keys
    }

    /// Writes the messages whose recipients have an inbox key in `keys`, and queues their pushes: one insert for the
    /// messages, one read of the recipients' devices, one insert for the pushes. Returns the ids written, in order.
    package static func deliver(_ deliveries: [Delivery], keys: [UUID: [UInt8]], on db: any Database, now: Date) async throws -> [Int64] {
        let sendable = deliveries.filter { keys[$0.recipient] != nil }
        return try await write(sendable, sealed: try seal(sendable.map { ($0.recipient, $0.payload) }, keys: keys), on: db, now: now)
    }

    /// Seals each payload to its recipient's inbox key (which `keys` must hold). Only CPU: a caller may run it
    /// beside its database work.
    package static func seal(_ payloads: [(recipient: UUID, payload: MessagePayload)], keys: [UUID: [UInt8]]) throws -> [Data] {
        try payloads.map { item in
            guard let key = keys[item.recipient] else { throw YonaError(.userNotFound) }
            return Data(try SealedBox.seal(Array(try CompactJSONEncoder.data(item.payload)), to: key))
        }
    }

    /// Writes `deliveries` with their sealed payloads (`sealed[i]` belongs to `deliveries[i]`) and queues their pushes;
    /// `pushDevices`, when the caller read them already in this transaction, are the recipients' devices that can get one.
    package static func write(
        _ deliveries: [Delivery], sealed: [Data], on db: any Database, now: Date, pushDevices: [UUID: [UUID]]? = nil
    ) async throws -> [Int64] {
        precondition(deliveries.count == sealed.count)
        guard !deliveries.isEmpty else { return [] }
        var rows: [SQLQueryString] = []
        for (delivery, sealed) in zip(deliveries, sealed) {
            let payload = delivery.payload
            let message = Message(id: delivery.id, userAnonymizedID: delivery.recipient, sealedPayload: sealed, creationTime: now)
            if payload.relatesAcceptedBuddies, payload.subjectUserAnonymizedID != delivery.recipient {
                message.senderAnonymizedID = payload.subjectUserAnonymizedID
            }
            message.originMessageID = payload.originalMessageID
            if payload.kind == .goalConflict, payload.subjectUserAnonymizedID == delivery.recipient { message.goalID = payload.goalID }
            delivery.relate(message)
            rows.append(
                """
                (\(bind: delivery.id), \(bind: delivery.recipient), \(bind: now), \(bind: sealed), \(bind: message.isRead), \(bind: message.isSentItem), \
                \(bind: message.announcementID), \(bind: message.senderAnonymizedID), \(bind: message.originMessageID), \(bind: message.goalID), \
                \(bind: message.activityInterval), \(bind: message.repliedMessageID))
                """)
        }
        // One statement for all (raw SQL: Fluent's model encoding cost more than the insert itself).
        try await db.sql.raw(
            """
            INSERT INTO \(unsafeRaw: Message.schema) (id, user_anonymized_id, creation_time, sealed_payload, is_read, is_sent_item, announcement_id,
            sender_anonymized_id, origin_message_id, goal_id, activity_interval, replied_message_id) VALUES \(rows.joined(separator: ", "))
            """
        ).run()
        try await OutboxWriter.queuePushes(deliveries.filter(\.push).map { ($0.id, $0.recipient) }, on: db, now: now, devices: pushDevices)
        return deliveries.map(\.id)
    }

    /// Seals a direct message from one identity to another's named inbox; it gets its message id when the
    /// recipient's next call moves it into the anonymous inbox (and only then is it pushed).
    package static func deliverNamed(to userID: UUID, on db: any Database, now: Date, _ payload: MessagePayload) async throws {
        guard let recipient = try await User.find(userID, on: db), let publicKey = recipient.namedInboxPublicKey else { return }
        var dated = payload
        dated.sentAt = now
        let sealed = try SealedBox.seal(Array(try CompactJSONEncoder.data(dated)), to: Array(publicKey))
        // The plain column says only the day: the instant, which the anonymized side writes too (the moved message's
        // creation time, a conflict of the same moment), stays sealed (privacy.md, no join by timestamp).
        try await NamedMessage(id: UUID(), userID: userID, sealedPayload: Data(sealed), createdAt: InvitationService.day(of: now))
            .create(on: db)
    }

    /// Deletes messages (and the pushes still queued for them) matched by their plain relations; returns their ids.
    @discardableResult
    package static func delete(on db: any Database, _ filter: (QueryBuilder<Message>) -> QueryBuilder<Message>) async throws -> [Int64] {
        let ids = try await filter(Message.query(on: db)).all(\.$id)
        guard !ids.isEmpty else { return [] }
        try await Message.query(on: db).filter(\.$id ~~ ids).delete()
        try await PushOutbox.withdraw(messageIDs: ids, on: db)
        return ids
    }

    /// What leaves `recipient`'s inbox when it stops being `sender`'s buddy: everything from or about the sender.
    package static func deleteAll(from sender: UUID, in recipient: UUID, on db: any Database) async throws {
        try await delete(on: db) { $0.filter(\.$userAnonymized.$id == recipient).filter(\.$senderAnonymizedID == sender) }
    }

    /// A comment and what goes with it, in both inboxes: its counterpart, and every reply to either, and so on.
    package static func deleteCommentThread(from id: Int64, on db: any Database) async throws {
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
    package static func deleteWithCopies(_ ids: [Int64], on db: any Database) async throws {
        guard !ids.isEmpty else { return }
        try await delete(on: db) { $0.group(.or) { $0.filter(\.$id ~~ ids).filter(\.$originMessageID ~~ ids) } }
    }

    /// Replaces what a message says (its status, a disclosed URL), sealed again to the same inbox.
    package static func reseal(_ messageID: Int64, recipient: UUID, on db: any Database, _ payload: MessagePayload) async throws {
        guard let sealed = try await seal(payload, id: messageID, to: recipient, on: db) else { return }
        try await Message.query(on: db).filter(\.$id == messageID).filter(\.$userAnonymized.$id == recipient)
            .set(\.$sealedPayload, to: sealed).update()
    }

    /// Moves a message to the state an action gives it, only if it still holds the sealed bytes the action
    /// read (sealed boxes and envelopes are randomized, so equal bytes mean an unchanged message). Of two taps on the
    /// same action at once one wins; the other gets `error.message.action.not.supported`, as a later repeat does.
    /// A listing that stored the message as an envelope meanwhile (`storeEnvelopes`) changed its bytes, not what it
    /// says: then the action goes ahead over the new bytes. `inbox` is the recipient's, who acts.
    /// Call it first in the action's transaction.
    package static func transition(
        _ message: OpenedMessage, recipient: UUID, inbox: BoxKeyPair, on db: any Database, _ payload: MessagePayload
    ) async throws {
        guard let sealed = try await seal(payload, id: message.id, to: recipient, on: db) else { throw YonaError(.messageNotFound) }
        func replace(_ expected: Data) async throws -> Bool {
            try await db.sql.raw(
                """
                UPDATE \(unsafeRaw: Message.schema) SET sealed_payload = \(bind: sealed)
                WHERE id = \(bind: message.id) AND user_anonymized_id = \(bind: recipient) AND sealed_payload = \(bind: expected)
                RETURNING id
                """
            ).first() != nil
        }
        if try await replace(message.record.sealedPayload) { return }
        guard let current = try await Message.query(on: db).filter(\.$id == message.id).filter(\.$userAnonymized.$id == recipient).first(),
            current.sealedPayload != message.record.sealedPayload, (try? open(current, with: inbox)) == message.payload,
            try await replace(current.sealedPayload)
        else { throw YonaError(.messageActionNotSupported) }
    }

    /// `payload` under message id `id`, sealed to the recipient's anonymous inbox; nil when the recipient is gone.
    private static func seal(_ payload: MessagePayload, id: Int64, to recipient: UUID, on db: any Database) async throws -> Data? {
        let keys = try await inboxKeys(of: [recipient], on: db)
        guard keys[recipient] != nil else { return nil }
        var payload = payload
        payload.messageID = id
        return try seal([(recipient, payload)], keys: keys).first
    }

    /// Opens a message with the owner's inbox key; a payload that names another id is refused.
    package static func open(_ message: Message, with inbox: BoxKeyPair) throws -> MessagePayload {
        try open(message, with: inbox, envelopeKey: envelopeKey(of: inbox)).payload
    }

    /// A message is written as a sealed box to its inbox's public key (the writer holds no secret). Opening one
    /// costs an X25519 agreement, most of an inbox page's CPU; so the first listing that opens it stores it again
    /// under a symmetric key derived from the same inbox secret (XChaCha20-Poly1305 with the message id as
    /// associated data, after `envelopeMarker`), which later reads open for a fraction of that. Whoever could open the
    /// sealed box can open the envelope, nobody else (docs/performance.md, "Messages opened once").
    static let envelopeMarker: [UInt8] = Array("YE1".utf8)
    static let envelopeContext: [UInt8] = Array("yona/inbox/message-envelope/v1".utf8)

    package static func envelopeKey(of inbox: BoxKeyPair) -> SymmetricKey { inbox.derivedKey(context: envelopeContext) }

    /// Opens a message either way; for a sealed box also returns its envelope, for the caller to store. A sealed box
    /// starts with a random public key: one that happens to start with the marker fails the envelope's tag and is
    /// opened as what it is.
    package static func open(_ message: Message, with inbox: BoxKeyPair, envelopeKey: SymmetricKey) throws -> (
        payload: MessagePayload, envelope: Data?
    ) {
        let stored = Array(message.sealedPayload)
        let associatedData = messageIDBytes(message.id ?? 0)
        if stored.starts(with: envelopeMarker),
            let plaintext = try? AEAD.open(Array(stored.dropFirst(envelopeMarker.count)), key: envelopeKey, associatedData: associatedData)
        {
            return (try payload(plaintext, of: message), nil)
        }
        let plaintext = try SealedBox.open(stored, keyPair: inbox)
        return (try payload(plaintext, of: message), Data(envelopeMarker + AEAD.seal(plaintext, key: envelopeKey, associatedData: associatedData)))
    }

    private static func payload(_ plaintext: [UInt8], of message: Message) throws -> MessagePayload {
        let payload = try CompactJSONDecoder.decode(MessagePayload.self, from: plaintext)
        guard payload.messageID == message.id else { throw YonaError(.decryptingData) }
        return payload
    }

    private static func messageIDBytes(_ id: Int64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: id >> (56 - 8 * $0)) } }

    /// Stores envelopes made while listing, each only over the sealed box it replaces (a message changed or deleted
    /// meanwhile keeps what it has). An optimisation: on failure the sealed boxes stay for the next listing. On
    /// SQLite one transaction (one writer, one commit); on PostgreSQL each row on its own, so a listing never holds
    /// one row's lock while it waits for another's (no deadlock with a delete of several messages).
    package static func storeEnvelopes(_ envelopes: [(message: Message, envelope: Data)], on db: any Database) async throws {
        guard !envelopes.isEmpty else { return }
        @Sendable func store(on db: any Database) async throws {
            for (message, envelope) in envelopes.sorted(by: { ($0.message.id ?? 0) < ($1.message.id ?? 0) }) {
                try await db.sql.raw(
                    """
                    UPDATE \(unsafeRaw: Message.schema) SET sealed_payload = \(bind: envelope)
                    WHERE id = \(bind: message.id ?? 0) AND sealed_payload = \(bind: message.sealedPayload)
                    """
                ).run()
            }
        }
        if db.sql.dialect.name == "sqlite" {
            try await db.transaction { tx in try await store(on: tx) }
        } else {
            try await store(on: db)
        }
    }
}

/// Writes the push outbox; the only code that does.
package enum OutboxWriter {
    /// Whether a device row (`alias.`, when the query names it) can get a push: it has a push address (of any kind,
    /// `PushAddress`) and notifications on.
    package static func canGetPushes(_ alias: String = "") -> String {
        let c = alias.isEmpty ? "" : "\(alias)."
        return
            "(\(c)firebase_instance_id IS NOT NULL OR \(c)apns_token IS NOT NULL OR \(c)web_push_subscription IS NOT NULL) AND \(c)notifications_enabled"
    }

    package static func queuePushes(messageID: Int64, recipient: UUID, on db: any Database, now: Date) async throws {
        try await queuePushes([(messageID, recipient)], on: db, now: now)
    }

    /// A push for each message to each of its recipient's devices that can get one: one read (none when the caller
    /// knows the `devices`: every recipient's, by `canGetPushes`), one insert.
    package static func queuePushes(
        _ messages: [(id: Int64, recipient: UUID)], on db: any Database, now: Date, devices known: [UUID: [UUID]]? = nil
    ) async throws {
        guard !messages.isEmpty else { return }
        var devices: [UUID: [UUID]] = known ?? [:]
        if known == nil {
            for row in try await db.sql.raw(
                """
                SELECT id, user_anonymized_id FROM \(unsafeRaw: DeviceAnonymized.schema)
                WHERE user_anonymized_id IN (\(binds: Array(Set(messages.map(\.recipient))))) AND \(unsafeRaw: canGetPushes())
                """
            ).all() {
                devices[try row.decode(column: "user_anonymized_id", as: UUID.self), default: []].append(try row.decode(column: "id", as: UUID.self))
            }
        }
        let pushes = messages.flatMap { message in devices[message.recipient, default: []].map { (device: $0, messageID: message.id) } }
        try await PushOutbox.queue(pushes, now: now, on: db)
    }
}
