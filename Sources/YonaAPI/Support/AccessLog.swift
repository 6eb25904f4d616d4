import Foundation
import Vapor

/// Access log that names the route pattern (`/users/:userID`), never the concrete path, so mobile numbers,
/// Instance IDs and other values in paths or queries never reach the log. Request counts and latencies are
/// Vapor's own swift-metrics (`http_requests_total`, labelled by the same pattern).
package struct AccessLogMiddleware: AsyncMiddleware {
    package func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next.respond(to: request)
        let elapsed = ContinuousClock.now - start
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") } ?? "(unmatched)"
        request.logger.info(
            "\(request.method.rawValue) \(route) \(response.status.code)",
            metadata: [
                "duration_ms": .string(
                    String(format: "%.1f", Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000))
            ])
        return response
    }

    package init() {}
}
