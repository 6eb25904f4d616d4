import Foundation
import Vapor
import YonaDomain

/// `/admin/whiteListedNumbers/`: the numbers that may sign up while sign-up is limited to the white list
/// (`YONA_WHITE_LIST_FREE_SIGN_UP`, `YONA_WHITE_LIST_INVITED_USERS`). Yona kept them on an admin page only; here the
/// console and operators' scripts share one JSON API.
package enum WhiteListController {
    package static func register(_ routes: any RoutesBuilder) {
        let numbers = routes.grouped("whiteListedNumbers")
        numbers.get(use: list)
        numbers.post(use: add)
        numbers.delete(use: remove)
    }

    package struct Numbers: Content {
        package let mobileNumbers: [String]
    }

    package struct Body: StrictBody, Content {
        package let mobileNumber: String?
        package static let allowedKeys: Set<String> = ["mobileNumber"]
    }

    @Sendable package static func list(req: Request) async throws -> Numbers {
        Numbers(mobileNumbers: try await WhiteList(db: req.store).numbers())
    }

    @Sendable package static func add(req: Request) async throws -> Response {
        let body = try req.decodeStrict(Body.self)
        let number = try requireText(body.mobileNumber, or: .mobileNumberMissing)
        try await WhiteList(db: req.store).add(number)
        let response = Response(status: .created)
        try response.content.encode(Body(mobileNumber: number))
        return response
    }

    /// `DELETE ?mobileNumber=` (the `+` of a number percent-encoded as `%2B`).
    @Sendable package static func remove(req: Request) async throws -> HTTPStatus {
        guard let number = req.queryValue("mobileNumber") else { throw YonaError(.missingRequestParameter, quoting: "mobileNumber") }
        try await WhiteList(db: req.store).remove(number)
        return .noContent
    }
}
