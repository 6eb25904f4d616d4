import Foundation
import YonaStore

/// Operating systems a device can report; `UNKNOWN` only for the default device made without device fields.
enum OperatingSystem: String, Codable, Sendable {
    case android = "ANDROID"
    case ios = "IOS"
    case unknown = "UNKNOWN"

    /// What an app may send: only a real platform.
    init(reported raw: String) throws(YonaError) {
        guard let os = OperatingSystem(rawValue: raw), os != .unknown else { throw YonaError(.unknownOperatingSystem) }
        self = os
    }
}

/// What an app reports when it opens: its platform and version.
struct AppReport: Sendable {
    let operatingSystem: OperatingSystem
    let version: String
    let versionCode: Int
}

/// A device as the app registers it.
struct NewDevice: Sendable {
    static let defaultName = "First device"

    let name: String
    let operatingSystem: OperatingSystem
    let appVersion: String?
    let appVersionCode: Int?
    let firebaseInstanceID: String?

    /// Name rules of api.md: at most 20 characters, no `:`.
    static func validName(_ name: String) throws(YonaError) -> String {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 20, !name.contains(":") else {
            throw YonaError(.invalidDeviceName)
        }
        return name
    }

    static let `default` = NewDevice(
        name: defaultName, operatingSystem: .unknown, appVersion: nil, appVersionCode: nil, firebaseInstanceID: nil)
}

/// Everything needed to create a user.
struct NewUser: Sendable {
    let firstName: String
    let lastName: String
    let nickname: String
    let mobileNumber: MobileNumber
    let device: NewDevice
}

extension DeviceAnonymized {
    /// The anonymized row of a device the app registers (first device, added device, taken-over account).
    convenience init(_ device: NewDevice, id: UUID, userAnonymizedID: UUID, deviceIndex: Int) {
        self.init(
            id: id, userAnonymizedID: userAnonymizedID, deviceIndex: deviceIndex,
            operatingSystem: device.operatingSystem.rawValue, appVersion: device.appVersion,
            appVersionCode: device.appVersionCode, firebaseInstanceID: device.firebaseInstanceID)
        // Registering a device is opening the app on it (as Yona).
        appLastOpenedDate = UserCalendar.day(Date())
    }
}
