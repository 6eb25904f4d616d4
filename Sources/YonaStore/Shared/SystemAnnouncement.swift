import FluentKit
import Foundation

/// A broadcast from the operator (`POST /admin/systemMessages/`). Its text is the operator's, not anyone's
/// personal data; each user's copy is a sealed `SystemMessage` in the user's inbox.
package final class SystemAnnouncement: Model, @unchecked Sendable {
    package static let schema = "system_announcements"
    /// Who still has to get each announcement: the snapshot the workers take and drain (`AnnouncementFanOut`).
    package static let recipientsTable = "system_announcement_recipients"

    // managed
    @ID(key: .id) package var id: UUID?
    @Field(key: "created_at") package var createdAt: Date

    // data
    /// Texts by locale (`en-US` always present).
    @Field(key: "translations") package var translations: [String: String]
    /// After this the announcement and every copy of it are gone; until then new users get it too.
    @OptionalField(key: "expires_at") package var expiresAt: Date?
    /// Whether the workers have copied the recipients (every anonymized user at that moment) into the fan-out's
    /// snapshot. Until then a new user is left to the snapshot, after it `deliverActive` gives them an expiring one.
    @Field(key: "snapshot_taken") package var snapshotTaken: Bool

    package init() {}

    package init(id: UUID, translations: [String: String], expiresAt: Date?, createdAt: Date, snapshotTaken: Bool = false) {
        self.id = id
        self.translations = translations
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.snapshotTaken = snapshotTaken
    }
}
