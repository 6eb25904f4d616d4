import Foundation
import Vapor

/// Every request's way in and out, in this order: its context (correlation id, locale), the listener gate, the
/// app-version check, the route; then the one error mapping, HAL's content negotiation, the context's headers, the
/// access line and the request metrics. One event-loop `Middleware` with one callback on the route's answer: six
/// `AsyncMiddleware`s each started a task and hopped to the cooperative pool and back, which was most of what
/// `/health` cost (docs/performance.md, "The request pipeline").
package struct RequestPipeline: Middleware {
    private let accessLog = AccessLog()

    package init() {}

    package func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let start = ContinuousClock.now
        let context = RequestContext.begin(request)
        let answer: EventLoopFuture<Response>
        do {
            try ListenerGate.check(request)
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
            accessLog.record(request, response, elapsed: ContinuousClock.now - start)
            promise.succeed(response)
        }
        return promise.futureResult
    }
}
