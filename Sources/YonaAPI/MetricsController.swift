import Foundation
import Vapor
import YonaDomain
import YonaObservability

/// `GET /metrics`: Prometheus text exposition (counts and durations only, nothing personal).
package enum MetricsController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.get("metrics", use: metrics)
    }

    @Sendable package static func metrics(req: Request) async throws -> Response {
        req.application.yona.metrics.setOutboxGauges(try await OutboxDepths.read(on: req.store))
        let response = Response(status: .ok, body: .init(string: req.application.yona.metrics.exposition()))
        response.headers.replaceOrAdd(name: .contentType, value: "text/plain; version=0.0.4; charset=utf-8")
        return response
    }
}
