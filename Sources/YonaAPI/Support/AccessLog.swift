import Foundation
import Metrics
import NIOConcurrencyHelpers
import Vapor

/// Access log that names the route pattern (`/users/:userID`), never the concrete path, so mobile numbers,
/// Instance IDs and other values in paths or queries never reach the log; and the request metrics Vapor would
/// record (`http_requests_total`, `http_request_errors_total`, `http_request_duration_seconds`, labelled by method,
/// the same pattern and status), with their handles made once per label set instead of on every request.
package final class AccessLog: Sendable {
    private struct Labels: Hashable {
        let route: ObjectIdentifier?
        let method: String
        let status: UInt
    }

    private struct Handles {
        let requests: Counter
        let errors: Counter?
        let duration: Metrics.Timer
    }

    /// Label sets are bounded: routes × methods × the statuses the server answers (unknown paths share one set).
    private let handles = NIOLockedValueBox<[Labels: Handles]>([:])

    package init() {}

    /// Writes the access line and counts the request; `route` is the matched route's facts.
    package func record(_ request: Request, _ response: Response, route: RouteFacts?, elapsed: Duration) {
        let pattern = route?.pattern
        request.logger.info(
            "\(request.method.rawValue) \(pattern ?? "(unmatched)") \(response.status.code)",
            metadata: ["duration_ms": .string(Self.milliseconds(elapsed))])
        let labels = Labels(route: route.map(ObjectIdentifier.init), method: request.method.rawValue, status: response.status.code)
        let metrics = handles.withLockedValue { made in
            if let existing = made[labels] { return existing }
            let dimensions =
                pattern.map { [("method", request.method.rawValue), ("path", $0), ("status", String(labels.status))] }
                ?? [("method", "undefined"), ("path", "vapor_route_undefined"), ("status", String(labels.status))]
            let new = Handles(
                requests: Counter(label: "http_requests_total", dimensions: dimensions),
                errors: labels.status >= 500 ? Counter(label: "http_request_errors_total", dimensions: dimensions) : nil,
                duration: Metrics.Timer(label: "http_request_duration_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds))
            made[labels] = new
            return new
        }
        metrics.requests.increment()
        metrics.errors?.increment()
        metrics.duration.record(duration: elapsed)
    }

    /// `12.3`: milliseconds with one decimal (rounded half up), without `String(format:)`'s format parser.
    package static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return "0.0" }
        let tenths = seconds * 10_000 + (attoseconds + 50_000_000_000_000) / 100_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// What every request needs of its matched route, made once when the routes are registered (`Route.cacheFacts`):
/// one `userInfo` lookup per request instead of one per fact (each hashes its key as an `AnyHashable`, ~1% of
/// `/health` apiece in the profile).
package final class RouteFacts: Sendable {
    /// The path pattern the access log and the request metrics name (`/users/:userID`).
    package let pattern: String
    /// The one listener the route answers on; `nil` for both.
    package let listener: Listener?
    /// The largest body the route takes (`HTTPFront` collects bodies; this is the route's `collect(maxSize:)`).
    package let maxBodyBytes: Int

    init(_ route: Route, defaultMaxBodyBytes: Int) {
        pattern = Route.pattern(of: route.path)
        listener = route.listener
        maxBodyBytes = route.maxBodyBytes ?? defaultMaxBodyBytes
    }

    package func answers(on listener: Listener) -> Bool { self.listener.map { $0 == listener } ?? true }
}

extension Route {
    package var facts: RouteFacts {
        userInfo["yona.facts"] as? RouteFacts ?? RouteFacts(self, defaultMaxBodyBytes: 16 * 1024) // Vapor's default
    }

    /// A body limit other than the application's default, given where the route is registered with the same
    /// `collect(maxSize:)`.
    package var maxBodyBytes: Int? {
        get { userInfo["yona.maxBodyBytes"] as? Int }
        set { userInfo["yona.maxBodyBytes"] = newValue }
    }

    package static func pattern(of path: [PathComponent]) -> String {
        "/" + path.map(\.description).joined(separator: "/")
    }

    /// Writes each route's facts into its `userInfo`, after every route and its listener are registered.
    package static func cacheFacts(_ routes: Routes) {
        let defaultMaxBodyBytes = routes.defaultMaxBodySize.value
        for route in routes.all { route.userInfo["yona.facts"] = RouteFacts(route, defaultMaxBodyBytes: defaultMaxBodyBytes) }
    }
}
