import Foundation
import Vapor
import YonaDomain

/// The files a device downloads to set up monitoring, as Yona serves them: the OpenVPN profile and the SSL root
/// certificate (the same for everyone, no password), the Apple configuration profile with the device's own VPN
/// account (its owner's password), and `apple-app-site-association` for the iOS app's links.
package enum VPNResourcesController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.get("vpn", "profile.ovpn", use: ovpnProfile)
        routes.get("ssl", "rootcert.cer", use: sslRootCertificate)
        routes.get(".well-known", "apple-app-site-association", use: appleAppSiteAssociation)
        routes.get("users", ":userID", "devices", ":deviceID", "apple.mobileconfig", use: appleMobileConfig)
    }

    @Sendable package static func ovpnProfile(req: Request) async throws -> Response {
        try file(req.application.yona.vpnResources.ovpnProfile, type: "application/x-openvpn-profile")
    }

    @Sendable package static func sslRootCertificate(req: Request) async throws -> Response {
        try file(req.application.yona.vpnResources.sslRootCertificate, type: "application/pkix-cert")
    }

    @Sendable package static func appleAppSiteAssociation(req: Request) async throws -> Response {
        let body = try JSONEncoder().encode(req.application.yona.vpnResources.appleAppSiteAssociation)
        return try file(Array(body), type: "application/json")
    }

    /// The device's own profile: its VPN login and password filled in, signed when a signing key is configured.
    @Sendable package static func appleMobileConfig(req: Request) async throws -> Response {
        let user = try await req.unlockPathUser()
        let device = try await req.devices.device(try req.uuidParameter("deviceID"), of: user)
        let profile = try req.application.yona.vpnResources.mobileConfig(
            loginID: VPNLogin.id(user.privateData.userAnonymizedID, deviceIndex: device.deviceIndex), password: device.device.vpnPassword ?? "")
        return try file(profile, type: "application/x-apple-aspen-config")
    }

    /// A configured file, or Yona's unknown-path answer when the operator has not configured it.
    private static func file(_ bytes: [UInt8]?, type: String) throws -> Response {
        guard let bytes else { throw YonaError(.unknownPath) }
        var headers = HTTPHeaders()
        headers.add(name: .contentType, value: type)
        return Response(status: .ok, headers: headers, body: .init(data: Data(bytes)))
    }
}
