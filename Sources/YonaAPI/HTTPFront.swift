import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import Vapor
import YonaObservability

/// One HTTP/1.1 listener in front of Vapor's responder (the same routes, middleware and `Request`s), in place of
/// Vapor's `HTTPServer`. Why: under `/health` Vapor's server spent more than the request itself in what this
/// server does not use (docs/decisions.md, docs/performance.md "The request pipeline"): a `UUID()` per request
/// for the request id (FoundationEssentials opens, reads and closes `/dev/urandom` each time; 9–15% of
/// `/health`'s throughput), and a response compressor, a request decompressor and an upgrade handler that every
/// request passes through. What it keeps of Vapor's server: pipelining (NIO's `HTTPServerPipelineHandler`), 400
/// and a close for what does not parse, keep-alive as the request asks, `Date` and `Connection` on every answer,
/// no body for `HEAD` and 204, half-closing after a `Connection: close` answer, and a graceful shutdown that lets
/// requests in flight finish (NIOExtras' `ServerQuiescingHelper`, as Vapor's). Bodies are collected before the
/// route runs (every route of this server collects its body anyway), up to the largest limit of any route.
package final class HTTPFront: Server, Sendable {
    package struct Settings: Sendable {
        package var host: String
        package var port: Int
        /// The largest body any route takes; a larger one is dropped and answered 413 (`BodyLimit`).
        package var maxBodyBytes: Int
        /// How long a graceful shutdown waits for requests in flight.
        package var shutdownTimeout: TimeAmount = .seconds(10)
    }

    private struct ShutdownTimedOut: Error {}
    private struct UnixSocketUnsupported: Error, CustomStringConvertible {
        var description: String { "the listeners bind TCP addresses only" }
    }

    private struct Running {
        let channel: any Channel
        let quiesce: ServerQuiescingHelper
    }

    private let application: Application
    private let responder: any Responder
    private let settings: Settings
    private let running = NIOLockedValueBox<Running?>(nil)
    private let stopped: EventLoopPromise<Void>
    private let inFlight: RespondersInFlight

    package init(application: Application, responder: any Responder, settings: Settings) {
        self.application = application
        self.responder = responder
        self.settings = settings
        inFlight = RespondersInFlight(group: application.eventLoopGroup)
        stopped = application.eventLoopGroup.any().makePromise()
    }

    package var onShutdown: EventLoopFuture<Void> { stopped.futureResult }

    /// The bound address (tests bind port 0).
    package var localAddress: SocketAddress? { running.withLockedValue { $0?.channel.localAddress } }

    package func start(address: BindAddress?) async throws {
        let host: String
        let port: Int
        switch address {
        case .none: (host, port) = (settings.host, settings.port)
        case .hostname(let named, let numbered): (host, port) = (named ?? settings.host, numbered ?? settings.port)
        case .unixDomainSocket: throw UnixSocketUnsupported()
        }
        let quiesce = ServerQuiescingHelper(group: application.eventLoopGroup)
        let bootstrap = ServerBootstrap(group: application.eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelInitializer { [application, responder, settings, inFlight] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPFrontHandler(
                            application: application, responder: responder, maxBodyBytes: settings.maxBodyBytes,
                            inFlight: inFlight.onLoop(channel.eventLoop)))
                }
            }
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 1)
        do {
            let channel = try await bootstrap.bind(host: host, port: port).get()
            running.withLockedValue { $0 = Running(channel: channel, quiesce: quiesce) }
            application.logger.notice("listening on http://\(host):\(channel.localAddress?.port ?? port)")
        } catch {
            quiesce.initiateShutdown(promise: nil)
            throw error
        }
    }

    @available(*, noasync, message: "Use the async start(address:)")
    package func start(address: BindAddress?) throws {
        let promise = application.eventLoopGroup.any().makePromise(of: Void.self)
        promise.completeWithTask { try await self.start(address: address) }
        try promise.futureResult.wait()
    }

    /// Stops accepting, lets the requests in flight finish (each connection closes after its answer) and waits
    /// for them up to `shutdownTimeout`: for their connections to close, and for every route still running to
    /// end, since a client that gave up has closed its connection while its route goes on (the application shut
    /// down under a running route traps in Vapor's "Core not configured").
    package func shutdown() async {
        guard
            let running = running.withLockedValue({ state in
                defer { state = nil }
                return state
            })
        else {
            stopped.succeed() // never started (or already stopped): nothing to wait for
            return
        }
        let loop = running.channel.eventLoop
        let quiesced = loop.makePromise(of: Void.self)
        running.quiesce.initiateShutdown(promise: quiesced)
        let finished = loop.makePromise(of: Void.self)
        quiesced.futureResult.flatMap { [inFlight] in inFlight.drained(on: loop) }.whenComplete { finished.completeWith($0) }
        let deadline = loop.scheduleTask(in: settings.shutdownTimeout) {
            finished.fail(ShutdownTimedOut())
        }
        do {
            try await finished.futureResult.get()
        } catch {
            application.logger.warning("requests still in flight after the listener's shutdown timeout")
        }
        deadline.cancel()
        stopped.succeed()
    }

    @available(*, noasync, message: "Use the async shutdown()")
    package func shutdown() {
        let promise = application.eventLoopGroup.any().makePromise(of: Void.self)
        promise.completeWithTask { await self.shutdown() }
        try? promise.futureResult.wait()
    }
}

/// A connection's requests: collects each one's head and body, hands it to the responder as Vapor's `Request`,
/// and writes the answer. One per connection, on its event loop.
private final class HTTPFrontHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let application: Application
    private let responder: any Responder
    private let maxBodyBytes: Int
    private let inFlight: RespondersInFlight.OnLoop?
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var bodyDropped = false
    /// Set when the server shuts down: answers then close their connection.
    private var quiescing = false
    /// The `Date` header (RFC 9110's IMF-fixdate).
    private var date = SecondStamp(format: "%a, %d %b %Y %H:%M:%S GMT", utc: true)

    init(application: Application, responder: any Responder, maxBodyBytes: Int, inFlight: RespondersInFlight.OnLoop?) {
        self.application = application
        self.responder = responder
        self.maxBodyBytes = maxBodyBytes
        self.inFlight = inFlight
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = nil
            bodyDropped = false
        case .body(var chunk):
            guard !bodyDropped else { return }
            if (body?.readableBytes ?? 0) + chunk.readableBytes > maxBodyBytes {
                // answered (413) at once, and the connection half-closed after it: the rest is read and dropped
                bodyDropped = true
                body = nil
                if let head {
                    self.head = nil
                    respond(to: head, body: nil, bodyDropped: true, context: context)
                }
            } else if body == nil {
                body = chunk
            } else {
                body?.writeBuffer(&chunk)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            respond(to: head, body: body, bodyDropped: bodyDropped, context: context)
            body = nil
        }
    }

    private func respond(to head: HTTPRequestHead, body: ByteBuffer?, bodyDropped: Bool, context: ChannelHandlerContext) {
        var headers = head.headers
        // Vapor makes the request id with `UUID()` unless the request carries one.
        if !headers.contains(name: "X-Request-Id") { headers.add(name: "X-Request-Id", value: CorrelationIDs.next()) }
        let request = Request(
            application: application, method: head.method, url: URI(path: head.uri), version: head.version,
            headersNoUpdate: headers, collectedBody: body, remoteAddress: context.channel.remoteAddress,
            logger: application.logger, byteBufferAllocator: context.channel.allocator, on: context.eventLoop)
        if bodyDropped { BodyLimit.markDropped(request) }
        let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
        inFlight?.enter()
        responder.respond(to: request).hop(to: context.eventLoop).whenComplete { [inFlight] result in
            inFlight?.leave()
            let (context, handler) = bound.value
            switch result {
            case .success(let response):
                // a dropped body was never read by anyone: the connection's state is not worth keeping
                handler.write(response, for: head, keepAlive: head.isKeepAlive && !bodyDropped, context: context)
            case .failure:
                // RequestPipeline answers every error; a responder that still fails leaves nothing to say
                context.close(promise: nil)
            }
        }
    }

    private func write(_ response: Response, for head: HTTPRequestHead, keepAlive asked: Bool, context: ChannelHandlerContext) {
        guard response.body.count >= 0 || head.method == .HEAD else {
            // a streamed body (none of this server's routes answers one): collected, then written with its length
            let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
            response.body.collect(on: context.eventLoop).whenComplete { result in
                let (context, handler) = bound.value
                guard case .success(let collected) = result else { return context.close(promise: nil) }
                response.body = .init(buffer: collected ?? ByteBuffer())
                handler.write(response, for: head, keepAlive: asked, context: context)
            }
            return
        }
        let keepAlive = asked && !quiescing
        var headers = response.headers
        headers.add(name: "date", value: date.current())
        headers.add(name: .connection, value: keepAlive ? "keep-alive" : "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: response.version, status: response.status, headers: headers))), promise: nil)
        if head.method != .HEAD, response.status != .noContent, let buffer = response.body.buffer, buffer.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            // half-close: the client still reads the whole answer, then closes its side
            written.whenComplete { _ in bound.value.close(mode: .output, promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            quiescing = true
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// How many routes are running, whatever became of their connections; a shutdown waits until none is. One count per
/// event loop, touched only on its loop, so a request takes no lock (one lock shared by the loops cost about a tenth
/// of `/health`'s rate: docs/performance.md "The request pipeline").
final class RespondersInFlight: Sendable {
    fileprivate struct Count {
        var running = 0
        var waiting: [EventLoopPromise<Void>] = []
    }

    /// One event loop's count, for the handlers of the connections on that loop; used only there.
    struct OnLoop: Sendable {
        fileprivate let loop: any EventLoop
        fileprivate let count: NIOLoopBoundBox<Count?>

        func enter() {
            var current = count.value ?? Count()
            current.running += 1
            count.value = current
        }

        func leave() {
            guard var current = count.value else { return }
            current.running -= 1
            var done: [EventLoopPromise<Void>] = []
            if current.running == 0 { swap(&done, &current.waiting) }
            count.value = current
            for promise in done { promise.succeed() }
        }

        /// Succeeds once no route of this loop runs (at once if none does).
        fileprivate func drained() -> EventLoopFuture<Void> {
            guard var current = count.value, current.running > 0 else { return loop.makeSucceededVoidFuture() }
            let promise = loop.makePromise(of: Void.self)
            current.waiting.append(promise)
            count.value = current
            return promise.futureResult
        }
    }

    private let loops: [ObjectIdentifier: OnLoop]

    init(group: any EventLoopGroup) {
        var loops: [ObjectIdentifier: OnLoop] = [:]
        for loop in group.makeIterator() {
            loops[ObjectIdentifier(loop)] = OnLoop(loop: loop, count: .makeEmptyBox(valueType: Count.self, eventLoop: loop))
        }
        self.loops = loops
    }

    /// The count of a connection's loop: one of the group's (the listener's bootstrap takes its loops from there).
    func onLoop(_ loop: any EventLoop) -> OnLoop? { loops[ObjectIdentifier(loop)] }

    /// Succeeds once no route runs on any loop.
    func drained(on loop: any EventLoop) -> EventLoopFuture<Void> {
        .andAllSucceed(loops.values.map { counted in counted.loop.flatSubmit { counted.drained() } }, on: loop)
    }
}
