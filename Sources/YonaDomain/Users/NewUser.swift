import Foundation
import YonaStore

/// Operating systems a device can report; `UNKNOWN` only for the default device made without device fields.
package enum OperatingSystem: String, Codable, Sendable {
    case android = "ANDROID"
    case ios = "IOS"
    case unknown = "UNKNOWN"

    /// What an app may send: only a real platform.
    package init(reported raw: String) throws(YonaError) {
        guard let os = OperatingSystem(rawValue: raw), os != .unknown else { throw YonaError(.unknownOperatingSystem) }
        self = os
    }
}

/// What an app reports when it opens: its platform and version.
package struct AppReport: Sendable {
    package let operatingSystem: OperatingSystem
    package let version: String
    package let versionCode: Int

    package init(operatingSystem: OperatingSystem, version: String, versionCode: Int) {
        self.operatingSystem = operatingSystem
        self.version = version
        self.versionCode = versionCode
    }
}

/// A device as the app registers it.
package struct NewDevice: Sendable {
    package static let defaultName = "First device"

    package let name: String
    package let operatingSystem: OperatingSystem
    package let appVersion: String?
    package let appVersionCode: Int?
    /// Where the device's pushes go (the Yona apps send a Firebase Instance ID), if the app sent one.
    package let pushAddress: PushAddress?

    /// Name rules of api.md: at most 20 characters, no `:`.
    package static func validName(_ name: String) throws(YonaError) -> String {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 20, !name.contains(":") else {
            throw YonaError(.invalidDeviceName)
        }
        return name
    }

    package static let `default` = NewDevice(
        name: defaultName, operatingSystem: .unknown, appVersion: nil, appVersionCode: nil, pushAddress: nil)

    package init(name: String, operatingSystem: OperatingSystem, appVersion: String?, appVersionCode: Int?, pushAddress: PushAddress?) {
        self.name = name
        self.operatingSystem = operatingSystem
        self.appVersion = appVersion
        self.appVersionCode = appVersionCode
        self.pushAddress = pushAddress
    }
}

/// Everything needed to create a user.
package struct NewUser: Sendable {
    package let firstName: String
    package let lastName: String
    package let nickname: String
    package let mobileNumber: MobileNumber
    package let device: NewDevice

    package init(firstName: String, lastName: String, nickname: String, mobileNumber: MobileNumber, device: NewDevice) {
        self.firstName = firstName
        self.lastName = lastName
        self.nickname = nickname
        self.mobileNumber = mobileNumber
        self.device = device
    }
}

extension DeviceAnonymized {
    /// The anonymized row of a device the app registers (first device, added device, taken-over account).
    package convenience init(_ device: NewDevice, id: UUID, userAnonymizedID: UUID, deviceIndex: Int) {
        self.init(
            id: id, userAnonymizedID: userAnonymizedID, deviceIndex: deviceIndex,
            operatingSystem: device.operatingSystem.rawValue, appVersion: device.appVersion,
            appVersionCode: device.appVersionCode, firebaseInstanceID: nil)
        device.pushAddress?.apply(to: self, at: Date())
        // Registering a device is opening the app on it (as Yona).
        appLastOpenedDate = UserCalendar.day(Date())
    }
}
