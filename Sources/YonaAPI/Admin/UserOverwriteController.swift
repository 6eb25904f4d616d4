import Foundation
import Vapor
import YonaDomain

/// `POST /admin/requestUserOverwrite/?mobileNumber=`: the first step of lost-phone recovery. Public, as the
/// Yona app calls it from a new phone that has no password yet; rate-limited per client and per number.
package enum UserOverwriteController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.grouped("admin", "requestUserOverwrite").post(use: requestCode)
    }

    @Sendable package static func requestCode(req: Request) async throws -> HTTPStatus {
        guard let raw = req.queryValue("mobileNumber") else { throw YonaError(.missingRequestParameter) }
        let number = try MobileNumber(raw)
        try await req.limitAttempts(number: number.value)
        try await req.overwrites.requestCode(for: number)
        return .noContent
    }
}
