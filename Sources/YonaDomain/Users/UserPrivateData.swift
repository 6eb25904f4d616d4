import Foundation
import YonaCrypto

/// The plaintext of a user's private part. It exists only in memory, decrypted for one request,
/// and is stored only as `EncryptedBlob` under the user's key.
package struct UserPrivateData: Codable, Sendable {
    package var firstName: String
    package var lastName: String
    package var nickname: String
    package var creationTime: Date
    /// The only link from identity to the anonymized side.
    package var userAnonymizedID: UUID
    package var devices: [UserDevice]
    /// X25519 secret keys of the two inboxes (nil only for users made before inboxes existed).
    package var namedInboxSecretKey: Data?
    package var anonymousInboxSecretKey: Data?
    /// The user's buddies as the user knows them (names, number, and the hidden anonymized links).
    package var buddies: [PrivateBuddy]
    /// A pending pin reset (Yona's pin-reset request): when its code may be used, until when, and whether it was
    /// verified. Kept here, encrypted, so no identity-side column carries its times.
    package var pinReset: PinReset? = nil
    /// The id of the user's profile photo (`/userPhotos/{id}`), the only key to it (`UserPhotoService`).
    package var photoID: UUID? = nil

    package struct PinReset: Codable, Sendable, Equatable {
        package var availableFrom: Date
        package var expiresAt: Date
        package var verified: Bool
    }

    package enum CodingKeys: String, CodingKey {
        case firstName, lastName, nickname, creationTime, userAnonymizedID, devices, namedInboxSecretKey, anonymousInboxSecretKey, buddies
        case pinReset, photoID
    }

    package init(
        firstName: String, lastName: String, nickname: String, creationTime: Date, userAnonymizedID: UUID,
        devices: [UserDevice], namedInboxSecretKey: Data?, anonymousInboxSecretKey: Data?, buddies: [PrivateBuddy] = []
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.nickname = nickname
        self.creationTime = creationTime
        self.userAnonymizedID = userAnonymizedID
        self.devices = devices
        self.namedInboxSecretKey = namedInboxSecretKey
        self.anonymousInboxSecretKey = anonymousInboxSecretKey
        self.buddies = buddies
    }

    /// Private data written before a field existed still opens.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        firstName = try c.decode(String.self, forKey: .firstName)
        lastName = try c.decode(String.self, forKey: .lastName)
        nickname = try c.decode(String.self, forKey: .nickname)
        creationTime = try c.decode(Date.self, forKey: .creationTime)
        userAnonymizedID = try c.decode(UUID.self, forKey: .userAnonymizedID)
        devices = try c.decode([UserDevice].self, forKey: .devices)
        namedInboxSecretKey = try c.decodeIfPresent(Data.self, forKey: .namedInboxSecretKey)
        anonymousInboxSecretKey = try c.decodeIfPresent(Data.self, forKey: .anonymousInboxSecretKey)
        buddies = try c.decodeIfPresent([PrivateBuddy].self, forKey: .buddies) ?? []
        pinReset = try c.decodeIfPresent(PinReset.self, forKey: .pinReset)
        photoID = try c.decodeIfPresent(UUID.self, forKey: .photoID)
    }
}

/// A buddy as its owner knows it.
package struct PrivateBuddy: Codable, Sendable, Equatable {
    package enum Status: String, Codable, Sendable {
        case notRequested = "NOT_REQUESTED"
        case requested = "REQUESTED"
        case accepted = "ACCEPTED"
        case rejected = "REJECTED"
    }

    package var id: UUID
    package var userID: UUID
    package var firstName: String
    package var lastName: String
    package var nickname: String
    package var mobileNumber: String
    package var sendingStatus: Status
    package var receivingStatus: Status
    package var lastStatusChangeTime: Date
    /// The owner's own anonymized half of the relation.
    package var buddyAnonymizedID: UUID
    /// The buddy's anonymized user, known once the relation is accepted.
    package var buddyUserAnonymizedID: UUID?
    /// The buddy's device names as the buddy last announced them (nil until the first announcement).
    package var deviceNames: [String]? = nil
    /// The anonymized rows of those devices, in the same order (nil until an announcement carried them).
    package var deviceAnonymizedIDs: [UUID]? = nil
    /// The buddy's profile photo as the buddy last announced it.
    package var photoID: UUID? = nil
}

extension PrivateBuddy {
    /// The buddy's own names and photo, as the buddy sent them (an acceptance, a change of personal info).
    package mutating func takeNames(from sender: MessagePayload.Sender) {
        firstName = sender.firstName
        lastName = sender.lastName
        nickname = sender.nickname
        photoID = sender.photoID
    }
}

/// A device as its owner knows it: the name, the hidden link to its anonymized row, and the password of its
/// VPN account (shown to the owner's own devices only).
package struct UserDevice: Codable, Sendable, Equatable {
    package var id: UUID
    package var name: String
    package var deviceAnonymizedID: UUID
    package var registrationTime: Date
    /// Nil only for devices registered before VPN passwords existed; the next unlock gives them one.
    package var vpnPassword: String? = nil

    /// A device registered now, with a fresh VPN password.
    package static func registered(name: String) -> UserDevice {
        UserDevice(id: UUID(), name: name, deviceAnonymizedID: UUID(), registrationTime: Date(), vpnPassword: VPNPassword.generate())
    }
}

/// The password of a device's VPN account: 32 random letters and digits, as Yona's apps expect.
package enum VPNPassword {
    package static let length = 32
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    package static func generate() -> String {
        String((0..<length).map { _ in alphabet[Int(SecureRandom.uniform(UInt32(alphabet.count)))] })
    }
}
