import Foundation

/// The plaintext of a user's private part. It exists only in memory, decrypted for one request,
/// and is stored only as `EncryptedBlob` under the user's key.
struct UserPrivateData: Codable, Sendable {
    var firstName: String
    var lastName: String
    var nickname: String
    var creationTime: Date
    /// The only link from identity to the anonymized side.
    var userAnonymizedID: UUID
    var devices: [UserDevice]
    /// X25519 secret keys of the two inboxes (nil only for users made before inboxes existed).
    var namedInboxSecretKey: Data?
    var anonymousInboxSecretKey: Data?
}

/// A device as its owner knows it: the name and the hidden link to its anonymized row.
struct UserDevice: Codable, Sendable, Equatable {
    var id: UUID
    var name: String
    var deviceAnonymizedID: UUID
    var registrationTime: Date
}
