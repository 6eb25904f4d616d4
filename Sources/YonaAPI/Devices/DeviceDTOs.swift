import Foundation
import YonaDomain

/// `PUT /users/{u}/devices/{d}` body: a (new) name and, optionally, the app's current push address.
package struct UpdateDeviceRequest: StrictBody {
    package let name: String?
    package let firebaseInstanceId: String?
    /// Extensions of the Yona format: a direct push address instead of the Instance ID, and the notification switch.
    package let apnsToken: String?
    package let webPushSubscription: WebPushSubscription?
    package let notificationsEnabled: Bool?
    package static let allowedKeys: Set<String> = ["name", "firebaseInstanceId", "apnsToken", "webPushSubscription", "notificationsEnabled"]

    package var pushAddress: PushAddressFields {
        PushAddressFields(firebaseInstanceId: firebaseInstanceId, apnsToken: apnsToken, webPushSubscription: webPushSubscription)
    }
}

/// `POST /users/{u}/devices/{d}/openApp` body. Empty (`{}`) only records the day, as Yona; otherwise the
/// three fields come together.
package struct OpenAppRequest: StrictBody {
    package let operatingSystem: String?
    package let appVersion: String?
    package let appVersionCode: LenientInt?
    package static let allowedKeys: Set<String> = ["operatingSystem", "appVersion", "appVersionCode"]

    /// The app's report, or nil for an empty body. A version code of 0 counts as none (Yona's field was an `int`).
    package func appInfo() throws -> AppReport? {
        let appVersionCode = appVersionCode.unlessZero
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
package struct VPNStatusRequest: StrictBody {
    package let vpnConnected: LenientBool?
    package static let allowedKeys: Set<String> = ["vpnConnected"]

    package func connected() throws(YonaError) -> Bool {
        guard let vpnConnected else { throw YonaError(.missingProperty, quoting: "vpnConnected") }
        return vpnConnected.value
    }
}

/// Version codes are positive, as Yona requires (`error.device.invalid.version.code`).
package enum AppVersionCode {
    package static func validated(_ code: Int) throws(YonaError) -> Int {
        guard code >= 0 else { throw YonaError(.invalidVersionCode, quoting: String(code)) }
        return code
    }
}

/// `POST /users/{u}/devices/` body (new-device flow).
package struct RegisterDeviceRequest: StrictBody {
    package let name: String?
    package let operatingSystem: String?
    package let appVersion: String?
    package let appVersionCode: LenientInt?
    package let firebaseInstanceId: String?
    package let apnsToken: String?
    package let webPushSubscription: WebPushSubscription?
    package static let allowedKeys: Set<String> = [
        "name", "operatingSystem", "appVersion", "appVersionCode", "firebaseInstanceId", "apnsToken", "webPushSubscription",
    ]

    package func toNewDevice(allowPrivateEndpoints: Bool) async throws -> NewDevice {
        let name = try requireText(name, property: "name")
        let operatingSystem = try requireText(operatingSystem, property: "operatingSystem")
        let appVersion = try requireText(appVersion, property: "appVersion")
        // 0 counts as none, as Yona's `int` field did.
        guard let appVersionCode = appVersionCode.unlessZero else { throw YonaError(.missingProperty, quoting: "appVersionCode") }
        return NewDevice(
            name: try NewDevice.validName(name),
            operatingSystem: try OperatingSystem(reported: operatingSystem),
            appVersion: appVersion, appVersionCode: try AppVersionCode.validated(appVersionCode.value),
            pushAddress: try await PushAddressFields(
                firebaseInstanceId: firebaseInstanceId, apnsToken: apnsToken, webPushSubscription: webPushSubscription
            )
            .resolve(allowPrivateEndpoints: allowPrivateEndpoints))
    }
}

/// `PUT /newDeviceRequests/{mobileNumber}` body.
package struct SetNewDeviceRequestBody: StrictBody {
    package let newDeviceRequestPassword: String?
    package static let allowedKeys: Set<String> = ["newDeviceRequestPassword"]
}

/// The new-device request as the apps read it; `yonaPassword` only for the caller that proved the OTP, an
/// explicit `null` otherwise (the apps test it for null).
package struct NewDeviceRequestDTO: Encodable {
    package let yonaPassword: String?
    package let _links: HALLinks

    package enum CodingKeys: String, CodingKey { case yonaPassword, _links }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(yonaPassword, forKey: .yonaPassword)
        try c.encode(_links, forKey: ._links)
    }
}

extension LenientInt? {
    /// Yona's app-version code was an `int`: 0 was no code.
    fileprivate var unlessZero: LenientInt? { flatMap { $0.value == 0 ? nil : $0 } }
}
