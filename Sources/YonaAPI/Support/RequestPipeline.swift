import Foundation
import Vapor
import YonaDomain

/// Every request's way in and out, in this order: its context (correlation id, locale), the listener gate, the
/// body limit, the app-version check, the route; then the one error mapping, HAL's content negotiation, the context's headers, the
/// access line and the request metrics. One event-loop `Middleware` with one callback on the route's answer: six
/// `AsyncMiddleware`s each started a task and hopped to the cooperative pool and back, which was most of what
/// `/health` cost (docs/performance.md, "The request pipeline").
package struct RequestPipeline: Middleware {
    private let accessLog = AccessLog()

    package init() {}

    package func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let start = ContinuousClock.now
        let context = RequestContext.begin(request)
        let route = request.route?.facts
        let answer: EventLoopFuture<Response>
        do {
            try ListenerGate.check(request, route: route)
            try BodyLimit.check(request, route: route)
            try BodyLimit.checkCoding(request)
            try AppVersionHeader.check(request)
            answer = next.respond(to: request)
        } catch {
            answer = request.eventLoop.makeFailedFuture(error)
        }
        let promise = request.eventLoop.makePromise(of: Response.self)
        answer.whenComplete { result in
            let response: Response
            switch result {
            case .success(let answered):
                response = answered
                HALContentNegotiation.relabel(response, for: request)
            case .failure(let error):
                response = ErrorMapping.answer(for: error, request: request)
            }
            context.stamp(response)
            accessLog.record(request, response, route: route, elapsed: ContinuousClock.now - start)
            promise.succeed(response)
        }
        return promise.futureResult
    }
}

/// A matched route's body limit: `HTTPFront` collects every body up to the largest limit of any route (and drops
/// a larger one, marking the request); a route taking less refuses what is over its own with 413, as Vapor's
/// `collect(maxSize:)` did for bodies it streamed.
package enum BodyLimit {
    private struct DroppedKey: StorageKey {
        typealias Value = Bool
    }

    /// Marks a request whose body `HTTPFront` dropped for being over every route's limit.
    package static func markDropped(_ request: Request) { request.storage[DroppedKey.self] = true }

    /// A compressed body (`Content-Encoding` other than `identity`) is refused with 415, as RFC 9110 (8.4) offers:
    /// Vapor's server inflated one (up to 25 times its size), Yona's never did, and no app sends one.
    package static func checkCoding(_ request: Request) throws(YonaError) {
        if let coding = request.headers.first(name: .contentEncoding), coding.lowercased() != "identity" {
            throw YonaError(.unsupportedMediaType)
        }
    }

    package static func check(_ request: Request, route: RouteFacts?) throws(YonaError) {
        guard let route else { return }
        if request.storage[DroppedKey.self] == true || (request.body.data?.readableBytes ?? 0) > route.maxBodyBytes {
            throw YonaError(.tooLarge)
        }
    }
}
