import FluentKit
import Foundation

/// A profile photo at rest. The row is found by a hash of the photo's id and its PNG is sealed under a key
/// derived from that id, so a dump (which holds neither the ids, kept in users' sealed data and messages, nor a
/// way to derive them) opens no photo and ties none to anyone. No owner, no creation time.
package final class UserPhotoRecord: Model, @unchecked Sendable {
    package static let schema = "user_photos"

    @ID(key: .id) package var id: UUID?
    @Field(key: "sealed_png") package var sealedPNG: Data
    /// The day (`yyyy-MM-dd`) after which a replaced or removed photo is purged; nil while it is someone's photo.
    @OptionalField(key: "expires_on") package var expiresOn: String?

    package init() {}

    package init(id: UUID, sealedPNG: Data) {
        self.id = id
        self.sealedPNG = sealedPNG
    }
}
