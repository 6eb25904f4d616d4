import Foundation
import YonaDomain

/// `POST /users/` body. Device fields come all together or not at all.
struct CreateUserRequest: StrictBody {
    let firstName: String?
    let lastName: String?
    let nickname: String?
    let mobileNumber: String?
    let deviceName: String?
    let deviceOperatingSystem: String?
    let deviceAppVersion: String?
    let deviceAppVersionCode: LenientInt?
    let deviceFirebaseInstanceId: String?

    static let allowedKeys: Set<String> = [
        "firstName", "lastName", "nickname", "mobileNumber", "deviceName", "deviceOperatingSystem",
        "deviceAppVersion", "deviceAppVersionCode", "deviceFirebaseInstanceId",
    ]
    static let ignoredKeys: Set<String> = ["_links", "yonaPassword"]

    func toNewUser() throws -> NewUser {
        let firstName = try PersonName.validated(firstName, or: .firstNameMissing, property: "firstName")
        let lastName = try PersonName.validated(lastName, or: .lastNameMissing, property: "lastName")
        let nickname = try PersonName.validated(nickname, or: .nicknameMissing, property: "nickname")
        let mobileNumber = try MobileNumber(try requireText(mobileNumber, or: .mobileNumberMissing))
        let deviceFields: [Any?] = [deviceName, deviceOperatingSystem, deviceAppVersion, deviceAppVersionCode]
        let device: NewDevice
        if deviceFields.allSatisfy({ $0 == nil }) {
            guard deviceFirebaseInstanceId == nil else { throw YonaError(.missingProperty) }
            device = .default
        } else {
            let fields: [(String, Any?)] = [
                ("deviceName", deviceName), ("deviceOperatingSystem", deviceOperatingSystem),
                ("deviceAppVersion", deviceAppVersion), ("deviceAppVersionCode", deviceAppVersionCode),
            ]
            guard let deviceName, let deviceOperatingSystem, let deviceAppVersion, let deviceAppVersionCode else {
                throw YonaError(.missingProperty, quoting: fields.first { $0.1 == nil }?.0)
            }
            device = NewDevice(
                name: try NewDevice.validName(deviceName),
                operatingSystem: try OperatingSystem(reported: deviceOperatingSystem),
                appVersion: try requireText(deviceAppVersion), appVersionCode: try AppVersionCode.validated(deviceAppVersionCode.value),
                firebaseInstanceID: try deviceFirebaseInstanceId.map(FirebaseInstanceID.validated))
        }
        return NewUser(firstName: firstName, lastName: lastName, nickname: nickname, mobileNumber: mobileNumber, device: device)
    }
}

/// `PUT /users/{u}` body. `creationTime` only on a test server (Yona's tests date users in the past).
struct UpdateUserRequest: StrictBody {
    let firstName: String?
    let lastName: String?
    let nickname: String?
    let mobileNumber: String?
    let creationTime: String?

    static let allowedKeys: Set<String> = ["firstName", "lastName", "nickname", "mobileNumber", "creationTime"]
    /// Device fields belong to a creation, not an update; Yona names `deviceName`.
    static let extraKeyPriority = ["deviceName"]

    func creationTime(testServer: Bool) throws -> Date? {
        guard let creationTime else { return nil }
        guard testServer else { throw YonaError(.extraProperty) }
        guard let date = YonaDateFormat.parseTimestamp(creationTime) else { throw YonaError(.invalidJSON) }
        return date
    }
    static let ignoredKeys: Set<String> = ["_links", "yonaPassword"]
}

/// `POST /users/{u}/confirmMobileNumber` body.
struct ConfirmationCodeRequest: StrictBody {
    let code: String
    static let allowedKeys: Set<String> = ["code"]
}

/// Instance IDs are opaque tokens from Firebase; as Yona, any non-empty text is taken (its tests send
/// "New firebase instance id"), within a size limit and without control characters.
enum FirebaseInstanceID {
    static func validated(_ raw: String) throws -> String {
        guard !raw.isEmpty, raw.utf8.count <= 4096,
            !raw.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else {
            throw YonaError(.invalidJSON)
        }
        return raw
    }
}

/// The user as its owner sees it.
struct OwnUserDTO: Encodable {
    let creationTime: String
    let appLastOpenedDate: String?
    /// The day of the latest monitored activity; absent until there is one (Yona's).
    let lastMonitoredActivityDate: String?
    let firstName: String
    let lastName: String
    let nickname: String
    let mobileNumber: String
    let yonaPassword: String?
    let _embedded: Embedded?
    let _links: HALLinks

    struct Embedded: Encodable {
        let devices: HALCollection<OwnDeviceDTO>
        let goals: HALCollection<GoalDTO>
        let buddies: HALCollection<BuddyDTO>

        enum CodingKeys: String, CodingKey {
            case devices = "yona:devices"
            case goals = "yona:goals"
            case buddies = "yona:buddies"
        }
    }

}

/// A device as its owner sees it.
struct OwnDeviceDTO: Encodable, Sendable {
    let name: String
    let operatingSystem: String
    let registrationTime: String
    let appLastOpenedDate: String?
    let lastMonitoredActivityDate: String?
    /// Whether the app last reported its VPN connected (`POST .../vpnStatus/`).
    let vpnConnected: Bool
    let requestingDevice: Bool
    /// On the requesting device only: the issuer name of the root certificate at `yona:sslRootCert`.
    let sslRootCertCN: String?
    let firebaseInstanceId: String?
    let notificationsEnabled: Bool
    let vpnProfile: VPNProfile
    let _links: HALLinks

    struct VPNProfile: Encodable, Sendable {
        let vpnLoginID: String
        let vpnPassword: String
        let _links: Links

        struct Links: Encodable, Sendable {
            let ovpnProfile: HALLink
            enum CodingKeys: String, CodingKey { case ovpnProfile = "yona:ovpnProfile" }
        }
    }
}

/// A buddy's user, as the buddy list embeds it and as `GET /users/{buddy}?requestingUserId={me}` answers: names,
/// number, nickname, when the account was made and last opened, and, once the buddy shares, the goals and device
/// names (never tokens, operating systems or versions).
struct BuddyUserDTO: Encodable, Sendable {
    struct Embedded: Encodable, Sendable {
        let goals: HALCollection<GoalDTO>
        let devices: HALCollection<BuddyDeviceDTO>
        enum CodingKeys: String, CodingKey {
            case goals = "yona:goals"
            case devices = "yona:devices"
        }
    }
    /// A buddy's device: its name, and Yona's VPN flag.
    struct BuddyDeviceDTO: Encodable, Sendable {
        let name: String
        let vpnConnected: Bool
    }
    let firstName: String
    let lastName: String
    let nickname: String
    let mobileNumber: String
    let creationTime: String?
    let appLastOpenedDate: String?
    let _embedded: Embedded?
    let _links: HALLinks
}
