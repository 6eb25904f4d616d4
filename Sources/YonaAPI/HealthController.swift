import Fluent
import Foundation
import Vapor

/// `/health` (the process answers) and `/ready` (the database answers and the schema is current).
package enum HealthController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.get("health", use: health)
        routes.get("ready", use: ready)
    }

    package struct Status: Content {
        package let status: String
    }

    /// Synchronous, with its body written once: `/health` is every bench's floor, so it pays no task, no encoder.
    @Sendable package static func health(req: Request) -> Response {
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: .ok, headers: headers, body: .init(staticString: #"{"status":"UP"}"#))
    }

    @Sendable package static func ready(req: Request) async throws -> Response {
        let ready: Bool
        do {
            ready = try await req.application.migrator.previewPrepareBatch().get().isEmpty
        } catch {
            ready = false
        }
        let response = Response(status: ready ? .ok : .serviceUnavailable)
        try response.content.encode(Status(status: ready ? "UP" : "DOWN"))
        return response
    }
}
