import Foundation
import ServiceLifecycle
import Vapor
import YonaDomain

/// The server's HTTP listeners as one `Service`: the public one (the app API) and, when `YONA_INTERNAL_PORT` is
/// set, the internal one (the analyzer and admin APIs and `/metrics`), as Yona ran them on ports of their own.
/// Graceful shutdown closes the public listener first, so no new request arrives while the internal one and the
/// background jobs finish.
package final class HTTPListeners: Service, CustomStringConvertible, Sendable {
    private let publicServer: HTTPFront?
    private let internalServer: HTTPFront?
    package var description: String { "http-listeners" }

    /// `publicListener: false` is `workers`: the internal listener only (its `/health` and `/metrics`), if set.
    /// Made after the routes are registered: the listeners collect bodies up to the largest route's limit.
    package init(_ app: Application, publicListener: Bool = true) {
        let config = app.yona.config
        let maxBodyBytes = app.routes.all.map(\.facts.maxBodyBytes).max() ?? config.maxBodyBytes
        let responder = app.responder.current
        publicServer =
            publicListener
            ? HTTPFront(
                application: app, responder: responder,
                settings: .init(host: config.host, port: config.port, maxBodyBytes: maxBodyBytes))
            : nil
        internalServer = config.internalPort.map { port in
            HTTPFront(
                application: app, responder: InternalListenerResponder(inner: responder),
                settings: .init(host: config.internalHost, port: port, maxBodyBytes: maxBodyBytes))
        }
    }

    /// Binds the internal listener, then the public one.
    package func start(publicAddress: BindAddress? = nil) async throws {
        try await internalServer?.start(address: nil)
        try await publicServer?.start(address: publicAddress)
    }

    package func shutdown() async {
        await publicServer?.shutdown()
        await internalServer?.shutdown()
    }

    /// The public listener's port once it is bound (tests bind port 0).
    package var publicPort: Int? { publicServer?.localAddress?.port }

    /// The internal listener's port once it is bound (tests bind port 0).
    package var internalPort: Int? { internalServer?.localAddress?.port }

    package func run() async throws {
        try await start()
        // Returns on graceful shutdown; throws when the group is cancelled. Either way the listeners close.
        try? await gracefulShutdown()
        await shutdown()
    }
}

/// Which listener a request came in on; routes of the other one answer as unknown paths.
package enum Listener: Sendable {
    case `public`
    case `internal`
}

private struct ListenerKey: StorageKey {
    package typealias Value = Listener
}

extension Request {
    package var listener: Listener { storage[ListenerKey.self] ?? .public }
}

/// The internal listener's responder: Vapor's own (the same routes, middleware and request metrics), with each
/// request marked as internal first.
private struct InternalListenerResponder: Responder {
    package let inner: any Responder

    package func respond(to request: Request) -> EventLoopFuture<Response> {
        request.storage[ListenerKey.self] = .internal
        return inner.respond(to: request)
    }
}

extension Route {
    /// The one listener this route answers on; `nil` for both (`/health`, `/ready`, and every route when the
    /// internal APIs share the public port).
    package var listener: Listener? {
        get { userInfo["yona.listener"] as? Listener }
        set { userInfo["yona.listener"] = newValue }
    }

    package func answers(on listener: Listener) -> Bool { facts.answers(on: listener) }
}

/// Keeps each route to its listener: on the other one it answers 404 `error.request.unknown.path` like a path
/// that does not exist (and `ErrorMapping` offers no 405 for it), so the public port does not even confirm that
/// the internal APIs are there.
package enum ListenerGate {
    package static func check(_ request: Request, route: RouteFacts?) throws(YonaError) {
        if let route, !route.answers(on: request.listener) { throw YonaError(.unknownPath) }
    }
}
