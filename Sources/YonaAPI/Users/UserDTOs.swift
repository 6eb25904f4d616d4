import Foundation
import YonaDomain

/// `POST /users/` body. Device fields come all together or not at all.
package struct CreateUserRequest: StrictBody {
    package let firstName: String?
    package let lastName: String?
    package let nickname: String?
    package let mobileNumber: String?
    package let deviceName: String?
    package let deviceOperatingSystem: String?
    package let deviceAppVersion: String?
    package let deviceAppVersionCode: LenientInt?
    package let deviceFirebaseInstanceId: String?
    /// Extensions of the Yona format: the first device's direct push address instead of its Instance ID.
    package let deviceApnsToken: String?
    package let deviceWebPushSubscription: WebPushSubscription?

    package static let allowedKeys: Set<String> = [
        "firstName", "lastName", "nickname", "mobileNumber", "deviceName", "deviceOperatingSystem",
        "deviceAppVersion", "deviceAppVersionCode", "deviceFirebaseInstanceId", "deviceApnsToken", "deviceWebPushSubscription",
    ]
    /// What the apps send back of a user they read: an invitee's app takes the account over with the body its
    /// invitation link's GET answered (Yona's `CreateUserOnBuddyRequestTest`), creation time included.
    package static let ignoredKeys: Set<String> = ["_links", "yonaPassword", "creationTime"]

    /// `refusingStrayDeviceFields`: a creation refuses device fields without a device name; a take-over (a `PUT`)
    /// drops them unread, as Yona's `updateUser` did.
    package func toNewUser(refusingStrayDeviceFields: Bool = true, allowPrivateEndpoints: Bool) async throws -> NewUser {
        let firstName = try PersonName.validated(firstName, or: .firstNameMissing, property: "firstName")
        let lastName = try PersonName.validated(lastName, or: .lastNameMissing, property: "lastName")
        let nickname = try PersonName.validated(nickname, or: .nicknameMissing, property: "nickname")
        let mobileNumber = try MobileNumber(try requireText(mobileNumber, or: .mobileNumberMissing))
        // As Yona's UserController: without a device name the other device fields are extra (an Instance ID alone is
        // ignored); with one, they are mandatory.
        let fields: [(String, Any?)] = [
            ("deviceOperatingSystem", deviceOperatingSystem), ("deviceAppVersion", deviceAppVersion),
            ("deviceAppVersionCode", deviceAppVersionCode),
        ]
        let device: NewDevice
        if deviceName == nil {
            if refusingStrayDeviceFields, let extra = fields.first(where: { $0.1 != nil }) {
                throw YonaError(.extraProperty, quoting: extra.0)
            }
            device = .default
        } else {
            guard let deviceName, let deviceOperatingSystem, let deviceAppVersion, let deviceAppVersionCode else {
                throw YonaError(.missingProperty, quoting: fields.first { $0.1 == nil }?.0)
            }
            device = NewDevice(
                name: try NewDevice.validName(deviceName),
                operatingSystem: try OperatingSystem(reported: deviceOperatingSystem),
                appVersion: try requireText(deviceAppVersion), appVersionCode: try AppVersionCode.validated(deviceAppVersionCode.value),
                pushAddress: try await PushAddressFields(
                    firebaseInstanceId: deviceFirebaseInstanceId, apnsToken: deviceApnsToken, webPushSubscription: deviceWebPushSubscription,
                    names: ("deviceFirebaseInstanceId", "deviceApnsToken", "deviceWebPushSubscription")
                ).resolve(allowPrivateEndpoints: allowPrivateEndpoints))
        }
        return NewUser(firstName: firstName, lastName: lastName, nickname: nickname, mobileNumber: mobileNumber, device: device)
    }
}

/// `PUT /users/{u}` body. `creationTime` only on a test server (Yona's tests date users in the past).
package struct UpdateUserRequest: StrictBody {
    package let firstName: String?
    package let lastName: String?
    package let nickname: String?
    package let mobileNumber: String?
    package let creationTime: String?

    package static let allowedKeys: Set<String> = ["firstName", "lastName", "nickname", "mobileNumber", "creationTime"]
    /// Device fields belong to a creation, not an update: a `deviceName` is refused (Yona names it); without one, Yona
    /// dropped the other device fields unread, and so do we (`ignoredKeys`).
    package static let extraKeyPriority = ["deviceName"]

    package func creationTime(testServer: Bool) throws -> Date? {
        guard let creationTime else { return nil }
        guard testServer else { throw YonaError(.extraProperty) }
        guard let date = YonaDateFormat.parseTimestamp(creationTime) else { throw YonaError(.invalidJSON) }
        return date
    }
    package static let ignoredKeys: Set<String> = [
        "_links", "yonaPassword", "deviceOperatingSystem", "deviceAppVersion", "deviceAppVersionCode", "deviceFirebaseInstanceId",
    ]
}

/// `POST /users/{u}/confirmMobileNumber` body.
package struct ConfirmationCodeRequest: StrictBody {
    package let code: String
    package static let allowedKeys: Set<String> = ["code"]
}

/// Instance IDs are opaque tokens from Firebase; as Yona, any non-empty text is taken (its tests send
/// "New firebase instance id"), within a size limit and without control characters.
package enum FirebaseInstanceID {
    package static func validated(_ raw: String) throws -> String {
        guard !raw.isEmpty, raw.utf8.count <= 4096,
            !raw.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else {
            throw YonaError(.invalidJSON)
        }
        return raw
    }
}

/// The user as its owner sees it.
package struct OwnUserDTO: Encodable {
    package let creationTime: String
    package let appLastOpenedDate: String?
    /// The day of the latest monitored activity; absent until there is one (Yona's).
    package let lastMonitoredActivityDate: String?
    package let firstName: String
    package let lastName: String
    package let nickname: String
    package let mobileNumber: String
    package let yonaPassword: String?
    package let _embedded: Embedded?
    package let _links: HALLinks

    package struct Embedded: Encodable {
        package let devices: HALCollection<OwnDeviceDTO>
        package let goals: HALCollection<GoalDTO>
        package let buddies: HALCollection<BuddyDTO>

        package enum CodingKeys: String, CodingKey {
            case devices = "yona:devices"
            case goals = "yona:goals"
            case buddies = "yona:buddies"
        }
    }

}

/// A device as its owner sees it.
package struct OwnDeviceDTO: Encodable, Sendable {
    package let name: String
    package let operatingSystem: String
    package let registrationTime: String
    package let appLastOpenedDate: String?
    package let lastMonitoredActivityDate: String?
    /// Whether the app last reported its VPN connected (`POST .../vpnStatus/`).
    package let vpnConnected: Bool
    package let requestingDevice: Bool
    /// On the requesting device only: the issuer name of the root certificate at `yona:sslRootCert`.
    package let sslRootCertCN: String?
    package let firebaseInstanceId: String?
    package let notificationsEnabled: Bool
    package let vpnProfile: VPNProfile
    package let _links: HALLinks

    package struct VPNProfile: Encodable, Sendable {
        package let vpnLoginID: String
        package let vpnPassword: String
        /// Left out when no OpenVPN profile is served.
        package let _links: Links?

        package struct Links: Encodable, Sendable {
            package let ovpnProfile: HALLink
            package enum CodingKeys: String, CodingKey { case ovpnProfile = "yona:ovpnProfile" }
        }
    }
}

/// A buddy's user, as the buddy list embeds it and as `GET /users/{buddy}?requestingUserId={me}` answers: names,
/// number, nickname, when the account was made and last opened, and, once the buddy shares, the goals and device
/// names (never tokens, operating systems or versions).
package struct BuddyUserDTO: Encodable, Sendable {
    package struct Embedded: Encodable, Sendable {
        package let goals: HALCollection<GoalDTO>
        package let devices: HALCollection<BuddyDeviceDTO>
        package enum CodingKeys: String, CodingKey {
            case goals = "yona:goals"
            case devices = "yona:devices"
        }
    }
    /// A buddy's device: its name, and Yona's VPN flag.
    package struct BuddyDeviceDTO: Encodable, Sendable {
        package let name: String
        package let vpnConnected: Bool
    }
    package let firstName: String
    package let lastName: String
    package let nickname: String
    package let mobileNumber: String
    /// Always there and always null, as Yona's for a buddy's user ("not available for buddies": the buddy's account
    /// age is not the requester's to know).
    package let creationTime = AlwaysNull()
    package let appLastOpenedDate: String?
    package let _embedded: Embedded?
    package let _links: HALLinks
}

/// A property Yona's apps expect as an explicit `null`.
package struct AlwaysNull: Encodable, Sendable {
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encodeNil()
    }
}
