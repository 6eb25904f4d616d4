import Foundation
import YonaCrypto
import YonaStore

/// A user whose private part has been decrypted with the password of the current request.
/// It lives for that request only.
struct UnlockedUser: Sendable {
    let record: User
    let key: UserKey
    var privateData: UserPrivateData

    var id: UUID { record.id! }
    var isConfirmed: Bool { record.mobileNumberConfirmed }
    var mobileNumber: String { record.mobileNumber }

    /// The anonymous inbox's key pair, rebuilt from the secret key in the private data.
    func anonymousInbox() throws -> BoxKeyPair {
        guard let secret = privateData.anonymousInboxSecretKey else { throw YonaError(.unexpected) }
        return BoxKeyPair(secretKey: try SymmetricKey(bytes: Array(secret)))
    }
}

/// A device of the user joined with its anonymized row; what the owner may see of it.
struct OwnDevice: Sendable {
    let device: UserDevice
    let deviceIndex: Int
    let operatingSystem: OperatingSystem
    let appLastOpenedDate: String?
    let lastMonitoredActivityDate: String?
    let firebaseInstanceID: String?
    let notificationsEnabled: Bool
    /// Whether the app last reported its VPN connected.
    let vpnConnected: Bool
}
