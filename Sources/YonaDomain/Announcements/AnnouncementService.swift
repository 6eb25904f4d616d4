import FluentKit
import Foundation
import SQLKit
import YonaCrypto
import YonaDelivery
import YonaStore

/// System announcements (api.md "Admin API"). Posting one stores it, and nothing else: the push workers take the
/// snapshot of the anonymized users that exist then (normally within a poll interval of the `POST`) and turn it into
/// sealed `SystemMessage`s and pushes in batches (`AnnouncementFanOut`), so the `POST` costs the same at any user
/// count. An announcement with `expiresAt` also reaches users created before it expires, and disappears from every
/// inbox when it does.
package struct AnnouncementService: Sendable {
    package static let maxTextLength = 4000

    package let db: any Database

    /// Validates and stores an announcement; the workers take its recipient snapshot.
    @discardableResult
    package func announce(translations: [String: String], expiresAt: Date?, now: Date = Date()) async throws -> UUID {
        try Self.check(translations: translations, expiresAt: expiresAt, now: now)
        let id = UUID()
        try await SystemAnnouncement(id: id, translations: translations, expiresAt: expiresAt, createdAt: now).create(on: db)
        return id
    }

    /// What `announce` accepts (the console's preview checks it without storing): an en-US text, only supported
    /// locales, no blank or over-long text, an expiry in the future.
    package static func check(translations: [String: String], expiresAt: Date?, now: Date = Date()) throws(YonaError) {
        guard let english = translations[YonaLocale.fallback.rawValue], !english.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw YonaError(.missingProperty)
        }
        guard
            translations.allSatisfy({ key, text in
                YonaLocale(rawValue: key) != nil && !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty && text.count <= maxTextLength
            })
        else {
            throw YonaError(.invalidParameter)
        }
        if let expiresAt, expiresAt <= now { throw YonaError(.invalidParameter) }
    }

    /// Gives a user created now every announcement that has not expired yet (inside the creating transaction).
    /// Announcements without `expiresAt` went only to the users that existed when their snapshot was taken. One
    /// whose snapshot is still to be taken is left to it: the user will be in it. On PostgreSQL the announcements
    /// are read `FOR SHARE`, so a snapshot being taken at this moment either waits for this user (and includes them)
    /// or is seen as taken (and this user gets the copy here): never both, never neither.
    package func deliverActive(to userAnonymizedID: UUID, on tx: any Database, now: Date = Date()) async throws {
        if tx.sql.dialect.name != "sqlite" {
            _ = try await tx.sql.raw("SELECT id FROM system_announcements WHERE expires_at > \(bind: now) FOR SHARE").all()
        }
        let active = try await SystemAnnouncement.query(on: tx).filter(\.$expiresAt > now).filter(\.$snapshotTaken == true).all()
        for announcement in active {
            try await MessageWriter.deliver(to: userAnonymizedID, on: tx, now: now, announcementID: announcement.id) { id in
                Self.payload(announcement, messageID: id, recipient: userAnonymizedID)
            }
        }
    }

    /// Ends an announcement now (the console's "expire early"): its copies are hidden at once and purged with the
    /// other expired ones. An unknown or already expired one is left as it is.
    package func expire(_ id: UUID, now: Date = Date()) async throws {
        try await SystemAnnouncement.query(on: db).filter(\.$id == id)
            .group(.or) { $0.filter(\.$expiresAt == nil).filter(\.$expiresAt > now) }
            .set(\.$expiresAt, to: now).update()
    }

    /// The newest announcements, for the console.
    package func recent(limit: Int = 50) async throws -> [SystemAnnouncement] {
        try await SystemAnnouncement.query(on: db).sort(\.$createdAt, .descending).limit(limit).all()
    }

    /// Ids of announcements that have expired; their copies are hidden at once and purged soon after.
    package func expiredIDs(now: Date = Date()) async throws -> [UUID] {
        try await SystemAnnouncement.query(on: db).filter(\.$expiresAt <= now).all(\.$id)
    }

    /// Deletes expired announcements with their copies, their unsent pushes and any recipients not reached.
    /// Idempotent; every instance runs it now and then.
    package func purgeExpired(now: Date = Date()) async throws {
        for id in try await expiredIDs(now: now) {
            try await db.transaction { tx in
                try await PushOutbox.withdraw(
                    messagesIn: "SELECT id FROM \(unsafeRaw: Message.schema) WHERE announcement_id = \(bind: id)", on: tx)
                try await Message.query(on: tx).filter(\.$announcementID == id).delete()
                try await SystemAnnouncement.query(on: tx).filter(\.$id == id).delete()
            }
        }
    }

    package static func payload(_ announcement: SystemAnnouncement, messageID: Int64, recipient: UUID) -> MessagePayload {
        MessagePayload(
            kind: .systemMessage, messageID: messageID, subjectUserAnonymizedID: recipient,
            translations: announcement.translations)
    }

    package init(db: any Database) {
        self.db = db
    }
}
