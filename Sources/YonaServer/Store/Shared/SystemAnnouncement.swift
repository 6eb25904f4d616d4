import Fluent
import Foundation

/// A broadcast from the operator (`POST /admin/systemMessages/`). Its text is the operator's, not anyone's
/// personal data; each user's copy is a sealed `SystemMessage` in the user's inbox.
final class SystemAnnouncement: Model, @unchecked Sendable {
    static let schema = "system_announcements"

    // managed
    @ID(key: .id) var id: UUID?
    @Field(key: "created_at") var createdAt: Date

    // data
    /// Texts by locale (`en-US` always present).
    @Field(key: "translations") var translations: [String: String]
    /// After this the announcement and every copy of it are gone; until then new users get it too.
    @OptionalField(key: "expires_at") var expiresAt: Date?
    /// Whether the workers have copied the recipients (every anonymized user at that moment) into the fan-out's
    /// snapshot. Until then a new user is left to the snapshot, after it `deliverActive` gives them an expiring one.
    @Field(key: "snapshot_taken") var snapshotTaken: Bool

    init() {}

    init(id: UUID, translations: [String: String], expiresAt: Date?, createdAt: Date, snapshotTaken: Bool = false) {
        self.id = id
        self.translations = translations
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.snapshotTaken = snapshotTaken
    }
}
