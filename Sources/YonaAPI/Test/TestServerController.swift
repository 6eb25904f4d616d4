import Fluent
import Foundation
import SQLKit
import Vapor
import YonaDelivery
import YonaDomain
import YonaPush
import YonaStore

/// Test-server endpoints (`YONA_TEST_SERVER=true` only; absent otherwise).
package enum TestServerController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.get("test", "firebase", "messages", "last", ":instanceId", use: lastPush)
        routes.delete("test", "firebase", "messages", "last", ":instanceId", use: clearLastPush)
        routes.get("test", "emails", "last", use: lastEmail)
        routes.get("test", "passThroughHeaders", use: passThroughHeaders)
    }

    /// The request-scoped headers this request carried, as Yona's test endpoint shows them (FirebaseTest checks that
    /// two requests at once each see their own).
    @Sendable package static func passThroughHeaders(req: Request) async throws -> Response {
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
    @Sendable package static func lastEmail(req: Request) async throws -> Response {
        guard let email = req.application.yona.lastEmail?.lastSent else { throw YonaError(.messageNotFound) }
        struct Body: Encodable { let from, to, subject, body: String }
        let response = Response(status: .ok)
        try response.content.encode(Body(from: email.from, to: email.to, subject: email.subject, body: email.body), as: .json)
        return response
    }

    /// Forgets the last push to an Instance ID, as Yona's `clearLastFirebaseMessage`: 200 with the push it forgot, 404
    /// when none came since the last clear.
    @Sendable package static func clearLastPush(req: Request) async throws -> Response {
        let token = req.parameters.get("instanceId") ?? ""
        try await settle(token, on: req.store)
        let response = try await lastPushResponse(token, on: req.store)
        try await PushDelivery.query(on: req.store).filter(\.$tokenHash == TokenHash.of(token)).delete()
        return response
    }

    /// The last push delivered to an Instance ID, whatever the provider: `{"data": {...}}`.
    @Sendable package static func lastPush(req: Request) async throws -> Response {
        let token = req.parameters.get("instanceId") ?? ""
        try await settle(token, on: req.store)
        return try await lastPushResponse(token, on: req.store)
    }

    private static func lastPushResponse(_ token: String, on db: any Database) async throws -> Response {
        guard let delivery = try await PushDelivery.query(on: db).filter(\.$tokenHash == TokenHash.of(token)).first() else {
            throw YonaError(.messageNotFound)
        }
        struct Body: Encodable { let data: [String: String] }
        let response = Response(status: .ok)
        try response.content.encode(Body(data: delivery.data), as: .json)
        return response
    }

    /// Pushes go out through the outbox after the request that caused them answered; Yona sent them in the request.
    /// So that a test asking right after sees what Yona's would, this waits (up to 5 s) while a push to the Instance
    /// ID is due and unsent.
    private static func settle(_ token: String, on db: any Database) async throws {
        for _ in 0..<100 {
            guard try await PushOutbox.isWaiting(forToken: token, dueBy: Date().addingTimeInterval(1), on: db) else { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
