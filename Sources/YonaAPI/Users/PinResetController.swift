import Foundation
import Vapor
import YonaDomain

/// `/users/{u}/pinResetRequest/request|verify|resend|clear`: Yona's pin reset.
package enum PinResetController {
    package static func register(_ routes: any RoutesBuilder) {
        let pinReset = routes.grouped("users", ":userID", "pinResetRequest")
        pinReset.post("request", use: request)
        pinReset.post("verify", use: verify)
        pinReset.post("resend", use: resend)
        pinReset.post("clear", use: clear)
    }

    /// Answers Yona's `{"delay": "PT10S"}`: how long until the code comes.
    @Sendable package static func request(req: Request) async throws -> Response {
        _ = try req.decodeStrict(EmptyBody.self)
        let user = try await req.unlockPathUser()
        try await req.limitAttempts(number: user.mobileNumber)
        let delay = try await req.pinReset.request(user)
        return try await DelayDTO(delay: isoDuration(delay)).encodeResponse(for: req)
    }

    @Sendable package static func verify(req: Request) async throws -> HTTPStatus {
        let body = try req.decodeStrict(PinResetVerification.self)
        let user = try await req.unlockPathUser()
        try await req.pinReset.verify(user, code: try requireText(body.code, property: "code"))
        return .noContent
    }

    @Sendable package static func resend(req: Request) async throws -> HTTPStatus {
        _ = try req.decodeStrict(EmptyBody.self)
        let user = try await req.unlockPathUser()
        try await req.limitAttempts(number: user.mobileNumber)
        try await req.pinReset.resend(user)
        return .noContent
    }

    @Sendable package static func clear(req: Request) async throws -> HTTPStatus {
        _ = try req.decodeStrict(EmptyBody.self)
        try await req.pinReset.clear(try await req.unlockPathUser())
        return .noContent
    }

    /// A duration as Java's `Duration.toString` writes it, which Yona's apps parse: `PT10S`, `PT24H`, `PT1M30S`.
    package static func isoDuration(_ interval: TimeInterval) -> String {
        let total = Int(interval.rounded())
        let (hours, minutes, seconds) = (total / 3600, total % 3600 / 60, total % 60)
        guard total > 0 else { return "PT0S" }
        return "PT" + (hours > 0 ? "\(hours)H" : "") + (minutes > 0 ? "\(minutes)M" : "") + (seconds > 0 ? "\(seconds)S" : "")
    }

    package struct DelayDTO: Content {
        package let delay: String
    }

    package struct EmptyBody: StrictBody {
        package static let allowedKeys: Set<String> = []
    }

    package struct PinResetVerification: StrictBody {
        package let code: String?
        package static let allowedKeys: Set<String> = ["code"]
    }
}

extension Request {
    package var pinReset: PinResetService { PinResetService(users: users, delay: application.yona.config.effectivePinResetDelay) }
}
