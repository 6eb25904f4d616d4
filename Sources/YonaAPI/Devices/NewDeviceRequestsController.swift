import Foundation
import Vapor
import YonaDomain

/// `/newDeviceRequests/{mobileNumber}`: the existing phone leaves the password under a one-time password;
/// the new phone checks for the request and, with the OTP, gets the password.
package enum NewDeviceRequestsController {
    package static func register(_ routes: any RoutesBuilder) {
        let requests = routes.grouped("newDeviceRequests")
        requests.put(":mobileNumber", use: set)
        requests.get(":mobileNumber", use: get)
        requests.delete(":mobileNumber", use: delete)
    }

    @Sendable package static func set(req: Request) async throws -> HTTPStatus {
        let number = try mobileNumber(req)
        let user = try await req.newDeviceRequests.unlockByNumber(number, passwordHeader: req.yonaPasswordHeader)
        let body = try req.decodeStrict(SetNewDeviceRequestBody.self)
        let oneTimePassword = try requireText(body.newDeviceRequestPassword)
        guard oneTimePassword.count <= 64 else { throw YonaError(.deviceRequestInvalidPassword) }
        guard let password = req.yonaPasswordHeader.flatMap(YonaPassword.init(header:)) else { throw YonaError(.decryptingData) }
        try await req.newDeviceRequests.set(for: user, password: password, oneTimePassword: oneTimePassword)
        return .noContent
    }

    @Sendable package static func get(req: Request) async throws -> Response {
        let number = try mobileNumber(req)
        try await req.limitAttempts(number: number.value)
        let found = try await req.newDeviceRequests.find(number: number, oneTimePassword: req.headers.first(name: DevicesController.otpHeader))
        let links = req.rendering.links
        var halLinks = HALLinks(self: links.newDeviceRequest(number.value))
        halLinks.add("edit", links.newDeviceRequest(number.value))
        // Followable as given with the password just recovered (the Android app's older new-phone flow does).
        halLinks.add("yona:user", links.user(found.userID, requestingUserID: found.userID, requestingDeviceID: nil))
        halLinks.add("yona:registerDevice", links.devices(found.userID))
        return try .hal(NewDeviceRequestDTO(yonaPassword: found.password?.wireValue, _links: halLinks))
    }

    @Sendable package static func delete(req: Request) async throws -> HTTPStatus {
        let user = try await req.newDeviceRequests.unlockByNumber(try mobileNumber(req), passwordHeader: req.yonaPasswordHeader)
        try await req.newDeviceRequests.delete(for: user)
        return .noContent
    }

    private static func mobileNumber(_ req: Request) throws -> MobileNumber {
        let raw = req.parameters.get("mobileNumber") ?? ""
        return try MobileNumber(raw.removingPercentEncoding ?? raw)
    }
}
