import FluentKit
import Foundation
import YonaCrypto
import YonaStore

/// Profile photos as Yona's apps use them: the owner sets or removes one; anyone holding a photo's link (the owner,
/// the buddies it was announced to, the readers of the owner's messages) downloads it without a password. Here the
/// link is also the key: the stored row is found by a hash of the photo id and sealed under a key derived from it
/// (`UserPhotoRecord`). As Yona, a replaced or removed photo stays reachable for messages that show it, but only
/// for `retentionDays`, then it is purged (Yona kept them for ever).
package struct UserPhotoService: Sendable {
    package let db: any Database
    package let users: UserService

    package static let retentionDays = 30

    /// Stores `png` as the user's photo and tells the buddies (Yona's `BuddyInfoChangeMessage`).
    package func set(_ png: [UInt8], for user: UnlockedUser) async throws -> (UnlockedUser, UUID) {
        let photoID = UUID()
        let updated = try await db.transaction { tx in
            try await UserPhotoRecord(id: Self.lookupID(photoID), sealedPNG: Data(try Self.seal(png, photoID: photoID))).create(on: tx)
            return try await replacePhoto(of: user, with: photoID, on: tx)
        }
        return (updated, photoID)
    }

    /// Unlinks the user's photo (it stays downloadable for the retention period) and tells the buddies.
    package func remove(for user: UnlockedUser) async throws -> UnlockedUser {
        guard user.privateData.photoID != nil else { return user }
        return try await db.transaction { tx in try await replacePhoto(of: user, with: nil, on: tx) }
    }

    /// Makes `photoID` the user's photo (nil: none), starts the retention period of the one it replaces and
    /// tells the accepted buddies, in the caller's transaction.
    private func replacePhoto(of user: UnlockedUser, with photoID: UUID?, on tx: any Database) async throws -> UnlockedUser {
        var previous: UUID?
        let updated = try await users.modifyPrivateData(user, on: tx) { data in
            previous = data.photoID
            data.photoID = photoID
        }
        if let previous { try await Self.retire(previous, on: tx) }
        try await BuddyService.announceInfoChange(updated, on: tx)
        return updated
    }

    /// The PNG of a photo, or `error.user.photo.not.found.id`.
    package func png(_ photoID: UUID) async throws -> [UInt8] {
        guard let record = try await UserPhotoRecord.find(Self.lookupID(photoID), on: db),
            record.expiresOn.map({ $0 >= UserCalendar.day(Date()) }) ?? true,
            let png = try? AEAD.open(Array(record.sealedPNG), key: try Self.key(photoID), associatedData: Self.associatedData(photoID))
        else { throw YonaError(.userPhotoNotFound) }
        return png
    }

    /// Starts the retention period of a photo nobody has as theirs any more (replaced, removed, account deleted).
    package static func retire(_ photoID: UUID, on db: any Database) async throws {
        let until = UserCalendar.day(Date().addingTimeInterval(Double(retentionDays) * 86_400))
        try await UserPhotoRecord.query(on: db).filter(\.$id == lookupID(photoID)).filter(\.$expiresOn == nil)
            .set(\.$expiresOn, to: until).update()
    }

    /// Deletes the photos whose retention period is over.
    package static func purgeExpired(on db: any Database) async throws {
        try await UserPhotoRecord.query(on: db).filter(\.$expiresOn < UserCalendar.day(Date())).delete()
    }

    // MARK: the photo id as lookup and key

    private static let lookupContext = Array("yona user photo lookup v1".utf8)
    private static let keyContext = Array("yona user photo key v1".utf8)

    package static func idBytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }

    /// The row's id: 16 bytes of BLAKE2b of the photo id, so the stored id does not lead to the link.
    package static func lookupID(_ photoID: UUID) -> UUID {
        let hash = KeyedHash.hash(idBytes(photoID), key: lookupContext, outputLength: 16)
        return UUID(
            uuid: (
                hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7], hash[8], hash[9], hash[10], hash[11], hash[12], hash[13],
                hash[14], hash[15]
            ))
    }

    package static func key(_ photoID: UUID) throws -> SymmetricKey {
        try KeyedHash.deriveKey(fromSecret: idBytes(photoID), context: keyContext)
    }

    private static func associatedData(_ photoID: UUID) -> [UInt8] { idBytes(lookupID(photoID)) }

    package static func seal(_ png: [UInt8], photoID: UUID) throws -> [UInt8] {
        AEAD.seal(png, key: try key(photoID), associatedData: associatedData(photoID))
    }

    package init(db: any Database, users: UserService) {
        self.db = db
        self.users = users
    }
}
