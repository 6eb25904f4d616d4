import Foundation
import YonaCrypto
import YonaStore

/// A user whose private part has been decrypted with the password of the current request.
/// It lives for that request only.
package struct UnlockedUser: Sendable {
    package let record: User
    package let key: UserKey
    package var privateData: UserPrivateData

    package var id: UUID { record.id! }
    package var isConfirmed: Bool { record.mobileNumberConfirmed }
    package var mobileNumber: String { record.mobileNumber }

    /// The anonymous inbox's key pair, rebuilt from the secret key in the private data.
    package func anonymousInbox() throws -> BoxKeyPair {
        guard let secret = privateData.anonymousInboxSecretKey else { throw YonaError(.unexpected) }
        return BoxKeyPair(secretKey: try SymmetricKey(bytes: Array(secret)))
    }
}

/// A device of the user joined with its anonymized row; what the owner may see of it.
package struct OwnDevice: Sendable {
    package let device: UserDevice
    package let deviceIndex: Int
    package let operatingSystem: OperatingSystem
    package let appLastOpenedDate: String?
    package let lastMonitoredActivityDate: String?
    package let firebaseInstanceID: String?
    package let notificationsEnabled: Bool
    /// Whether the app last reported its VPN connected.
    package let vpnConnected: Bool
}
