import Foundation
import YonaDomain

/// `PUT /users/{u}/devices/{d}` body: a (new) name and, optionally, the app's current Instance ID.
struct UpdateDeviceRequest: StrictBody {
    let name: String?
    let firebaseInstanceId: String?
    /// An extension of the Yona format: the device's notification switch.
    let notificationsEnabled: Bool?
    static let allowedKeys: Set<String> = ["name", "firebaseInstanceId", "notificationsEnabled"]
}

/// `POST /users/{u}/devices/{d}/openApp` body. Empty (`{}`) only records the day, as Yona; otherwise the
/// three fields come together.
struct OpenAppRequest: StrictBody {
    let operatingSystem: String?
    let appVersion: String?
    let appVersionCode: LenientInt?
    static let allowedKeys: Set<String> = ["operatingSystem", "appVersion", "appVersionCode"]

    /// The app's report, or nil for an empty body.
    func appInfo() throws -> AppReport? {
        guard let operatingSystem else {
            // Yona: version fields without the operating system are not supported in this context.
            guard appVersion == nil, appVersionCode == nil else {
                throw YonaError(.extraProperty, quoting: appVersion != nil ? "appVersion" : "appVersionCode")
            }
            return nil
        }
        let appVersion = try requireText(appVersion, property: "appVersion")
        guard let appVersionCode else { throw YonaError(.missingProperty, quoting: "appVersionCode") }
        return AppReport(
            operatingSystem: try OperatingSystem(reported: try requireText(operatingSystem, property: "operatingSystem")),
            version: appVersion, versionCode: try AppVersionCode.validated(appVersionCode.value))
    }
}

/// `POST /users/{u}/devices/{d}/vpnStatus/` body.
struct VPNStatusRequest: StrictBody {
    let vpnConnected: LenientBool?
    static let allowedKeys: Set<String> = ["vpnConnected"]

    func connected() throws(YonaError) -> Bool {
        guard let vpnConnected else { throw YonaError(.missingProperty, quoting: "vpnConnected") }
        return vpnConnected.value
    }
}

/// Version codes are positive, as Yona requires (`error.device.invalid.version.code`).
enum AppVersionCode {
    static func validated(_ code: Int) throws(YonaError) -> Int {
        guard code >= 0 else { throw YonaError(.invalidVersionCode, quoting: String(code)) }
        return code
    }
}

/// `POST /users/{u}/devices/` body (new-device flow).
struct RegisterDeviceRequest: StrictBody {
    let name: String?
    let operatingSystem: String?
    let appVersion: String?
    let appVersionCode: LenientInt?
    let firebaseInstanceId: String?
    static let allowedKeys: Set<String> = ["name", "operatingSystem", "appVersion", "appVersionCode", "firebaseInstanceId"]

    func toNewDevice() throws -> NewDevice {
        let name = try requireText(name, property: "name")
        let operatingSystem = try requireText(operatingSystem, property: "operatingSystem")
        let appVersion = try requireText(appVersion, property: "appVersion")
        guard let appVersionCode else { throw YonaError(.missingProperty, quoting: "appVersionCode") }
        return NewDevice(
            name: try NewDevice.validName(name),
            operatingSystem: try OperatingSystem(reported: operatingSystem),
            appVersion: appVersion, appVersionCode: try AppVersionCode.validated(appVersionCode.value),
            firebaseInstanceID: try firebaseInstanceId.map(FirebaseInstanceID.validated))
    }
}

/// `PUT /newDeviceRequests/{mobileNumber}` body.
struct SetNewDeviceRequestBody: StrictBody {
    let newDeviceRequestPassword: String?
    static let allowedKeys: Set<String> = ["newDeviceRequestPassword"]
}

/// The new-device request as the apps read it; `yonaPassword` only for the caller that proved the OTP, an
/// explicit `null` otherwise (the apps test it for null).
struct NewDeviceRequestDTO: Encodable {
    let yonaPassword: String?
    let _links: HALLinks

    enum CodingKeys: String, CodingKey { case yonaPassword, _links }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(yonaPassword, forKey: .yonaPassword)
        try c.encode(_links, forKey: ._links)
    }
}
