import Foundation
import ServiceLifecycle
import Vapor
import YonaDomain

/// The server's HTTP listeners as one `Service`: the public one (the app API) and, when `YONA_INTERNAL_PORT` is
/// set, the internal one (the analyzer and admin APIs and `/metrics`), as Yona ran them on ports of their own.
/// Graceful shutdown closes the public listener first, so no new request arrives while the internal one and the
/// background jobs finish.
package final class HTTPListeners: Service, CustomStringConvertible, @unchecked Sendable {
    private let app: Application
    private let publicServer: (any Server)?
    private let internalServer: HTTPServer?
    package var description: String { "http-listeners" }

    /// `publicListener: false` is `workers`: the internal listener only (its `/health` and `/metrics`), if set.
    package init(_ app: Application, publicListener: Bool = true) {
        self.app = app
        // Made first: Vapor's shared server copies the public configuration when it is made, and a second
        // HTTPServer of the same application writes its own configuration back into the application's storage.
        publicServer = publicListener ? app.server : nil
        internalServer = app.yona.config.internalPort.map { port in
            var configuration = app.http.server.configuration
            configuration.address = .hostname(app.yona.config.internalHost, port: port)
            return HTTPServer(
                application: app, responder: InternalListenerResponder(inner: app.responder.current),
                configuration: configuration, on: app.eventLoopGroup)
        }
    }

    /// Binds the internal listener, then the public one.
    package func start(publicAddress: BindAddress? = nil) async throws {
        if let internalServer {
            let publicConfiguration = app.http.server.configuration
            try await internalServer.start(address: nil)
            if publicServer != nil { app.http.server.configuration = publicConfiguration }
        }
        try await publicServer?.start(address: publicAddress)
    }

    package func shutdown() async {
        await publicServer?.shutdown()
        await internalServer?.shutdown()
    }

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

    package func answers(on listener: Listener) -> Bool { self.listener.map { $0 == listener } ?? true }
}

/// Keeps each route to its listener: on the other one it answers 404 `error.request.unknown.path` like a path
/// that does not exist (and `ErrorMapping` offers no 405 for it), so the public port does not even confirm that
/// the internal APIs are there.
package enum ListenerGate {
    package static func check(_ request: Request) throws(YonaError) {
        if let route = request.route, !route.answers(on: request.listener) { throw YonaError(.unknownPath) }
    }
}
