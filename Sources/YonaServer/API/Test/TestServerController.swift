import Fluent
import Foundation
import Vapor

/// Test-server endpoints (`YONA_TEST_SERVER=true` only; absent otherwise).
enum TestServerController {
    static func register(_ routes: any RoutesBuilder) {
        routes.get("test", "firebase", "messages", "last", ":instanceId", use: lastPush)
        routes.delete("test", "firebase", "messages", "last", ":instanceId", use: clearLastPush)
        routes.get("test", "emails", "last", use: lastEmail)
        routes.get("test", "passThroughHeaders", use: passThroughHeaders)
    }

    /// The request-scoped headers this request carried, as Yona's test endpoint shows them (FirebaseTest checks that
    /// two requests at once each see their own).
    @Sendable static func passThroughHeaders(req: Request) async throws -> Response {
        struct Body: Encodable { let passThroughHeaders: [String: String] }
        var headers: [String: String] = [:]
        for name in ["Yona-App-Version", "x-b3-traceid"] {
            if let value = req.headers.first(name: name) { headers[name] = value }
        }
        let response = Response(status: .ok)
        try response.content.encode(Body(passThroughHeaders: headers), as: .json)
        return response
    }

    /// The last e-mail the server sent (Yona's test endpoint; the invitation link is in `body`).
    @Sendable static func lastEmail(req: Request) async throws -> Response {
        guard let email = req.application.yona.emailTransport.lastSent else { throw YonaError(.messageNotFound) }
        let response = Response(status: .ok)
        try response.content.encode(email, as: .json)
        return response
    }

    /// Forgets the last push to an Instance ID, so a test can wait for the next one (Yona's `clearLastFirebaseMessage`).
    @Sendable static func clearLastPush(req: Request) async throws -> HTTPStatus {
        try await PushDelivery.query(on: req.db).filter(\.$tokenHash == TokenHash.of(req.parameters.get("instanceId") ?? "")).delete()
        return .noContent
    }

    /// The last push delivered to an Instance ID, whatever the provider: `{"data": {...}}`.
    @Sendable static func lastPush(req: Request) async throws -> Response {
        let token = req.parameters.get("instanceId") ?? ""
        guard let delivery = try await PushDelivery.query(on: req.db).filter(\.$tokenHash == TokenHash.of(token)).first() else {
            throw YonaError(.messageNotFound)
        }
        struct Body: Encodable { let data: [String: String] }
        let response = Response(status: .ok)
        try response.content.encode(Body(data: delivery.data), as: .json)
        return response
    }
}
