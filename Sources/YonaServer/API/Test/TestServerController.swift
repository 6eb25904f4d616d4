import Foundation
import Fluent
import Vapor

/// Test-server endpoints (`YONA_TEST_SERVER=true` only; absent otherwise).
enum TestServerController {
    static func register(_ routes: any RoutesBuilder) {
        routes.get("test", "firebase", "messages", "last", ":instanceId", use: lastPush)
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
