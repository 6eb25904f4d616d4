import Foundation
import Vapor
import YonaDomain

/// `POST /admin/systemMessages/`: an announcement to every user, fanned out by the push workers.
package enum SystemMessagesController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.grouped("systemMessages").post(use: create)
    }

    package struct Body: StrictBody {
        package let translations: [String: String]?
        package let expiresAt: String?
        package static let allowedKeys: Set<String> = ["translations", "expiresAt"]
    }

    @Sendable package static func create(req: Request) async throws -> Response {
        let body = try req.decodeStrict(Body.self)
        guard let translations = body.translations else { throw YonaError(.missingProperty) }
        let expiresAt = try body.expiresAt.map { raw in
            guard let date = YonaDateFormat.parseTimestamp(raw) else { throw YonaError(.invalidJSON) }
            return date
        }
        try await req.announcements.announce(translations: translations, expiresAt: expiresAt)
        return Response(status: .accepted)
    }
}
