import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing
import Vapor

@testable import YonaAPI
@testable import YonaServer

/// The listeners' HTTP/1.1 as a client sees it on the wire (`HTTPFront`): written as raw bytes on a socket, so what
/// an HTTP client library would smooth over (pipelining, half-closes, HTTP/1.0, malformed heads) is seen as sent.
@Suite struct HTTPFrontTests {
    @Test func pipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        try await withServer(.sqlite) { server in
            let answer = try await RawHTTP.exchange(
                port: Int(URL(string: server.baseURL)!.port!),
                "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\nHEAD /health HTTP/1.1\r\nHost: x\r\n\r\n",
                until: { $0.components(separatedBy: "HTTP/1.1 ").count > 3 })
            let responses: [String] = Array(answer.text.components(separatedBy: "HTTP/1.1 ").dropFirst())
            #expect(responses.count == 3, "\(answer.text)")
            #expect(responses.first?.hasPrefix("200 OK") == true && responses.first?.contains("{\"status\":\"UP\"}") == true)
            let unknown = responses.count > 1 ? responses[1] : ""
            #expect(unknown.hasPrefix("404") && unknown.contains("error.request.unknown.path"), "\(unknown)")
            // HEAD: GET's headers, its length included, and no body
            let head = try #require(responses.last)
            #expect(head.hasPrefix("200 OK") && head.lowercased().contains("content-length: 15\r\n") && head.hasSuffix("\r\n\r\n"), "\(head)")
            for response in responses {
                let lower = response.lowercased()
                #expect(lower.contains("\r\nconnection: keep-alive\r\n") && lower.contains("\r\ndate: ") && lower.contains(" gmt\r\n"), "\(response)")
                #expect(lower.contains("\r\nx-correlation-id: "), "every answer names its correlation id")
            }
            #expect(!answer.closed, "a keep-alive connection stays open")
        }
    }

    @Test func aConnectionThatAsksToCloseIsClosedAfterItsAnswer() async throws {
        try await withServer(.sqlite) { server in
            for request in ["GET /health HTTP/1.0\r\n\r\n", "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"] {
                let answer = try await RawHTTP.exchange(port: Int(URL(string: server.baseURL)!.port!), request, until: { _ in false })
                #expect(answer.text.contains(" 200 OK\r\n") && answer.text.lowercased().contains("\r\nconnection: close\r\n"), "\(answer.text)")
                #expect(answer.text.hasSuffix("{\"status\":\"UP\"}"), "the whole body before the close")
                #expect(answer.closed, "\(request)")
            }
        }
    }

    @Test func aMalformedRequestGets400AndTheConnectionCloses() async throws {
        try await withServer(.sqlite) { server in
            let answer = try await RawHTTP.exchange(
                port: Int(URL(string: server.baseURL)!.port!), "GET /health HTTP/1.1\r\nHost x\r\n\r\n", until: { _ in false })
            #expect(answer.text.hasPrefix("HTTP/1.1 400 "), "\(answer.text)")
            #expect(answer.closed)
            // the server still answers others
            let health = try await server.request(.GET, "/health")
            #expect(health.status == 200)
        }
    }

    /// A body over what any route takes is answered 413 as soon as it is over, not after the client sent the rest;
    /// the connection is half-closed after the answer, and the body never reaches a route.
    @Test func aBodyOverEveryLimitIsAnswered413BeforeItEnds() async throws {
        try await withServer(.sqlite) { server in
            let chunk = String(repeating: "a", count: 64 * 1024)
            // chunked, and never ended: only an answer before the end can arrive
            var request = "POST /users/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            for _ in 0..<4 { request += String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n" }
            let answer = try await RawHTTP.exchange(
                port: Int(URL(string: server.baseURL)!.port!), request, until: { $0.contains("error.request.too.large") })
            #expect(answer.text.hasPrefix("HTTP/1.1 413 "), "\(answer.text.prefix(300))")
            #expect(answer.text.contains("\"code\":\"error.request.too.large\"") || answer.text.contains("error.request.too.large"))
            #expect(answer.text.lowercased().contains("\r\nconnection: close\r\n"))
            // the route's own limit, under every route's: 70 KB of JSON to a route taking 64 KiB
            let overRoute = try await server.request(
                .POST, "/users/", body: Data(("{\"firstName\":\"" + String(repeating: "a", count: 70_000) + "\"}").utf8),
                contentType: "application/json")
            #expect(overRoute.status == 413 && overRoute.errorCode == "error.request.too.large", "\(overRoute.text)")
        }
    }

    /// A compressed body is refused (415), not inflated: Yona never inflated one, and a small gzip can inflate to
    /// far more than any route takes.
    @Test func aCompressedBodyIsRefusedNotInflated() async throws {
        try await withServer(.sqlite) { server in
            let body = try ExternalTool.run("/bin/sh", ["-c", "printf '{\"firstName\":\"A\"}' | gzip -c"])
            #expect(body.starts(with: [0x1f, 0x8b]), "a gzip stream")
            let refused = try await server.request(
                .POST, "/users/", headers: [("Content-Encoding", "gzip")], body: body, contentType: "application/json")
            #expect(refused.status == 415 && refused.errorCode == "error.request.unsupported.media.type", "\(refused.text)")
            let identity = try await server.request(
                .POST, "/users/", headers: [("Content-Encoding", "identity")], body: Data("{}".utf8), contentType: "application/json")
            #expect(identity.status == 400 && identity.errorCode == "error.user.firstname", "identity is no coding: \(identity.text)")
        }
    }

    /// A client that gives up closes its connection while its route still runs: the listener's shutdown waits for
    /// the route as well, so the application is never shut down under it (Vapor traps then, "Core not configured",
    /// and takes the whole process with it).
    @Test func shutdownWaitsForARouteWhoseClientHasGoneAway() async throws {
        let (app, front, route) = try await HeldRoute.runningAfterItsClientLeft()
        let release = Task {
            try await Task.sleep(for: .milliseconds(800))
            route.release()
        }
        await front.shutdown()
        #expect(route.ended, "the listener's shutdown returned while the route was still running")
        try await release.value
        try await app.asyncShutdown()
    }

    /// The wait has its bound: a route that never ends does not hold a shutdown past `shutdownTimeout`.
    @Test func shutdownWaitsForRunningRoutesNoLongerThanItsTimeout() async throws {
        let (app, front, route) = try await HeldRoute.runningAfterItsClientLeft(shutdownTimeout: .milliseconds(300))
        let clock = ContinuousClock()
        let started = clock.now
        await front.shutdown()
        #expect(clock.now - started < .seconds(5), "\(clock.now - started)")
        #expect(!route.ended)
        route.release()
        try await app.asyncShutdown()
    }
}

/// A route that runs until the test releases it, then answers 200.
private final class HeldRoute: Responder, Sendable {
    private struct State {
        var running = false
        var ended = false
        var held: EventLoopPromise<Response>?
    }

    private let state = NIOLockedValueBox(State())

    func respond(to request: Request) -> EventLoopFuture<Response> {
        let promise = request.eventLoop.makePromise(of: Response.self)
        state.withLockedValue {
            $0.running = true
            $0.held = promise
        }
        return promise.futureResult
    }

    /// A listener whose one request is held in this route, its client already gone (the request sent, the
    /// connection closed without waiting for the answer).
    static func runningAfterItsClientLeft(
        shutdownTimeout: TimeAmount = .seconds(10)
    ) async throws -> (Application, HTTPFront, HeldRoute) {
        let app = try await Application.make(.testing)
        let route = HeldRoute()
        var settings = HTTPFront.Settings(host: "127.0.0.1", port: 0, maxBodyBytes: 1024)
        settings.shutdownTimeout = shutdownTimeout
        let front = HTTPFront(application: app, responder: route, settings: settings)
        try await front.start(address: nil)
        let port = try #require(front.localAddress?.port)
        _ = try await RawHTTP.exchange(port: port, "GET /held HTTP/1.1\r\nHost: x\r\n\r\n", until: { _ in true })
        // by the clock, not by a count of polls: under the whole suite's load a poll can take far longer than asked
        let deadline = ContinuousClock.now + .seconds(30)
        while !route.state.withLockedValue({ $0.running }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(route.state.withLockedValue { $0.running }, "the route never ran")
        return (app, front, route)
    }

    func release() {
        let held = state.withLockedValue { state -> EventLoopPromise<Response>? in
            state.ended = true
            defer { state.held = nil }
            return state.held
        }
        held?.succeed(Response(status: .ok))
    }

    var ended: Bool { state.withLockedValue { $0.ended } }
}

/// A blocking TCP client for the wire tests: writes the bytes, reads until `until` holds for what arrived, the
/// server closes, or 5 s pass.
enum RawHTTP {
    struct Answer {
        var text: String
        /// The server closed (or half-closed) the connection.
        var closed: Bool
    }

    static func exchange(port: Int, _ request: String, until done: @escaping @Sendable (String) -> Bool) async throws -> Answer {
        try await ExternalTool.detached {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw RawHTTPError.socket(errno) }
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw RawHTTPError.connect(errno) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(request.utf8)
            var sent = 0
            while sent < bytes.count {
                let result = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                // the server may answer and stop reading before the whole request is sent (413)
                guard result > 0 else { break }
                sent += result
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !done(String(decoding: received, as: UTF8.self)) {
                let count = recv(socket, &buffer, buffer.count, 0)
                if count == 0 { return Answer(text: String(decoding: received, as: UTF8.self), closed: true) }
                if count < 0 { break } // the timeout, or a reset
                received += buffer[0..<count]
            }
            return Answer(text: String(decoding: received, as: UTF8.self), closed: false)
        }
    }

    enum RawHTTPError: Error {
        case socket(Int32)
        case connect(Int32)
    }
}
