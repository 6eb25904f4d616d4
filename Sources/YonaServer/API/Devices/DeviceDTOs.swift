import Foundation

/// `PUT /users/{u}/devices/{d}` body: a (new) name and, optionally, the app's current Instance ID.
struct UpdateDeviceRequest: StrictBody {
    let name: String?
    let firebaseInstanceId: String?
    /// An extension of the Yona format: the device's notification switch.
    let notificationsEnabled: Bool?
    static let allowedKeys: Set<String> = ["name", "firebaseInstanceId", "notificationsEnabled"]
}

/// `POST /users/{u}/devices/{d}/openApp` body.
struct OpenAppRequest: StrictBody {
    let operatingSystem: String?
    let appVersion: String?
    let appVersionCode: Int?
    static let allowedKeys: Set<String> = ["operatingSystem", "appVersion", "appVersionCode"]
}

/// `POST /users/{u}/devices/` body (new-device flow).
struct RegisterDeviceRequest: StrictBody {
    let name: String?
    let operatingSystem: String?
    let appVersion: String?
    let appVersionCode: Int?
    let firebaseInstanceId: String?
    static let allowedKeys: Set<String> = ["name", "operatingSystem", "appVersion", "appVersionCode", "firebaseInstanceId"]

    func toNewDevice() throws -> NewDevice {
        guard let appVersionCode else { throw YonaError(.missingProperty) }
        return NewDevice(
            name: try NewDevice.validName(try requireText(name)),
            operatingSystem: try OperatingSystem(reported: try requireText(operatingSystem)),
            appVersion: try requireText(appVersion), appVersionCode: appVersionCode,
            firebaseInstanceID: try firebaseInstanceId.map(FirebaseInstanceID.validated))
    }
}

/// `PUT /newDeviceRequests/{mobileNumber}` body.
struct SetNewDeviceRequestBody: StrictBody {
    let newDeviceRequestPassword: String?
    static let allowedKeys: Set<String> = ["newDeviceRequestPassword"]
}

/// The new-device request as the apps read it; `yonaPassword` only for the caller that proved the OTP.
struct NewDeviceRequestDTO: Encodable {
    let yonaPassword: String?
    let _links: HALLinks
}
