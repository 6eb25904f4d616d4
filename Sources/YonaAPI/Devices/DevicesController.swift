import Foundation
import Vapor
import YonaDomain
import YonaStore

/// `/users/{u}/devices/...`: the owner's devices, the Instance ID the app sends, app-opened events, and
/// registering a new device with the one-time password.
package enum DevicesController {
    package static let otpHeader = "Yona-NewDeviceRequestPassword"

    package static func register(_ routes: any RoutesBuilder) {
        let devices = routes.grouped("users", ":userID", "devices")
        devices.get(use: list)
        devices.post(use: registerWithOneTimePassword)
        devices.get(":deviceID", use: get)
        devices.put(":deviceID", use: update)
        devices.delete(":deviceID", use: delete)
        devices.post(":deviceID", "openApp", use: openApp)
        devices.post(":deviceID", "appActivity", use: AnalysisController.appActivity)
        devices.post(":deviceID", "vpnStatus", use: vpnStatus)
    }

    @Sendable package static func list(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let requestingDeviceID = try req.optionalUUIDQuery("requestingDeviceId")
        let items = try await req.users.devices(of: user).map {
            req.rendering.ownDevice($0, of: user, requestingDeviceID: requestingDeviceID, topLevel: false)
        }
        let links = req.rendering.links
        return try .hal(
            HALCollection(
                rel: "yona:devices", items: items,
                links: HALLinks(self: links.withRequestingDevice(links.devices(user.id), requestingDeviceID))))
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let deviceID = try req.uuidParameter("deviceID")
        let requestingDeviceID = try req.optionalUUIDQuery("requestingDeviceId")
        let device = try await req.devices.device(deviceID, of: user)
        return try .hal(req.rendering.ownDevice(device, of: user, requestingDeviceID: requestingDeviceID, topLevel: true))
    }

    @Sendable package static func update(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let deviceID = try req.uuidParameter("deviceID")
        let requestingDeviceID = try req.optionalUUIDQuery("requestingDeviceId")
        let body = try req.decodeStrict(UpdateDeviceRequest.self)
        let name = try NewDevice.validName(try requireText(body.name, property: "name"))
        let address = try await body.pushAddress.resolve(allowPrivateEndpoints: req.application.yona.config.webPushAllowPrivateEndpoints)
        let updated = try await req.devices.update(
            deviceID, of: user, name: name, pushAddress: address,
            notificationsEnabled: body.notificationsEnabled)
        let device = try await req.devices.device(deviceID, of: updated)
        return try .hal(req.rendering.ownDevice(device, of: updated, requestingDeviceID: requestingDeviceID, topLevel: true))
    }

    @Sendable package static func delete(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        try await req.devices.delete(try req.uuidParameter("deviceID"), of: user)
        return .noContent
    }

    @Sendable package static func openApp(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        let deviceID = try req.uuidParameter("deviceID")
        let app = try req.decodeStrict(OpenAppRequest.self).appInfo()
        if let app { try req.checkAppVersion(app.operatingSystem, version: app.version, code: app.versionCode) }
        try await req.devices.recordAppOpened(
            deviceID, of: user, app: app,
            locale: req.context.locale.rawValue, on: UserCalendar.day(Date()))
        return .noContent
    }

    /// The app reports its VPN up or down (Yona's `postVpnStatusEvent`).
    @Sendable package static func vpnStatus(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        let deviceID = try req.uuidParameter("deviceID")
        let body = try req.decodeStrict(VPNStatusRequest.self)
        try await req.devices.recordVPNStatus(deviceID, of: user, connected: try body.connected())
        return .noContent
    }

    /// Step 4 of the new-device flow: the OTP recovers the password, which unlocks the user to add the device.
    @Sendable package static func registerWithOneTimePassword(req: Request) async throws -> Response {
        let userID = try req.uuidParameter("userID")
        guard let record = try await User.find(userID, on: req.store) else { throw YonaError(.userNotFound) }
        try await req.limitAttempts(number: record.mobileNumber)
        let new = try await req.decodeStrict(RegisterDeviceRequest.self).toNewDevice(
            allowPrivateEndpoints: req.application.yona.config.webPushAllowPrivateEndpoints)
        try req.checkAppVersion(new)
        let password = try await req.newDeviceRequests.open(userID: userID, oneTimePassword: req.headers.first(name: otpHeader))
        let user = try await req.users.unlock(userID: userID, password: password)
        let (updated, device) = try await req.devices.add(new, to: user)
        return try await req.ownUserResponse(updated, password: password.wireValue, requestingDeviceID: device.id, status: .created)
    }
}
