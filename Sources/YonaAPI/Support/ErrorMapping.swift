import AsyncKit
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO
import SQLiteNIO
import Vapor
import YonaDomain
import YonaStore

/// The one place where an error becomes a response: `{"code","message","correlationId"}` with the
/// contract's status. Nothing internal reaches the body.
package enum ErrorMapping {
    /// The answer for an error a request met (`RequestPipeline`); what is not the client's doing is logged.
    package static func answer(for error: any Error, request: Request) -> Response {
        let yonaError = classify(error, request: request)
        if yonaError.code == .unexpected {
            request.logger.error("unexpected error", metadata: ["error_type": .string(String(reflecting: type(of: error)))])
        } else if yonaError.code == .serviceUnavailable, let unlogged = unavailableLog.note() {
            request.logger.warning(
                "overloaded", metadata: ["cause": .string(cause(of: error)), "unlogged_503s_since": .stringConvertible(unlogged)])
        }
        return response(for: yonaError, request: request)
    }

    /// Every request answers 503 during a database outage: one line per 10 s tells the operator, not one per request.
    package static let unavailableLog = UnavailableLog()

    package static func classify(_ error: any Error, request: Request) -> YonaError {
        switch error {
        case let error as YonaError:
            return error
        case is Abandoning.DeadlineExceeded:
            // The round of writes the request waited for outlived its deadline: the store is stuck or gone.
            return YonaError(.serviceUnavailable, retryAfterSeconds: 1)
        case is ConnectionPoolTimeoutError:
            // Overload, not a bug: tell the client to come back shortly.
            return YonaError(.serviceUnavailable, retryAfterSeconds: 1)
        case let postgres as PSQLError where isUnavailable(postgres):
            // The database went away or is restarting: nothing this request did was committed, and the pool
            // reconnects on its own once it is back. Tell the client to come back shortly, not that we have a bug.
            return YonaError(.serviceUnavailable, retryAfterSeconds: 1)
        case is NIOConnectionError, is ChannelError:
            // A connection to the database could not be made or broke under the request.
            return YonaError(.serviceUnavailable, retryAfterSeconds: 1)
        case let sqlite as SQLiteError where isContention(sqlite.reason):
            // Another process writes the same SQLite file (this process serializes its own writes, see
            // SerializedWritesDatabase). Nothing was written (the transaction rolled back): a retry succeeds.
            return YonaError(.serviceUnavailable, retryAfterSeconds: 1)
        case let abort as any AbortError:
            switch abort.status {
            case .notFound where request.route == nil:
                return YonaError(RouteTable.hasOtherMethod(for: request) ? .methodNotAllowed : .unknownPath)
            case .methodNotAllowed: return YonaError(.methodNotAllowed)
            case .payloadTooLarge: return YonaError(.tooLarge)
            case .unsupportedMediaType: return YonaError(.unsupportedMediaType)
            case .badRequest, .unprocessableEntity: return YonaError(.invalidJSON)
            default: return YonaError(.unexpected)
            }
        default:
            return YonaError(.unexpected)
        }
    }

    /// What made a request answer 503, for the operator: the error's type and, for SQLite, its reason (never a
    /// message, which could quote a value).
    package static func cause(of error: any Error) -> String {
        if let sqlite = error as? SQLiteError { return "sqlite: \(sqlite.reason)" }
        if let postgres = error as? PSQLError { return "postgres: \(postgres.code)" }
        return String(reflecting: type(of: error))
    }

    /// PostgreSQL unreachable, closing connections, shutting down or starting up (SQLSTATE classes 08 and 57P, too
    /// many connections 53300): conditions a retry after the database is back resolves.
    package static func isUnavailable(_ error: PSQLError) -> Bool {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed, .failedToAddSSLHandler:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300"
        default:
            return false
        }
    }

    /// SQLite's answers for "another connection holds the lock", which a retry resolves.
    package static func isContention(_ reason: SQLiteError.Reason) -> Bool {
        switch reason {
        case .busy, .busyInSnapshot, .busyTimeout, .busyInRecovery, .locked, .lockedBySharedCache: true
        default: false
        }
    }

    package static func response(for error: YonaError, request: Request) -> Response {
        struct Body: Encodable {
            package let code: String
            package let message: String
            package let correlationId: String
            package let remainingAttempts: Int?
        }
        let body = Body(
            code: error.code.rawValue, message: error.code.message(in: request.context.locale, quoting: error.quoted),
            correlationId: request.context.correlationID, remainingAttempts: error.remainingAttempts)
        let response = Response(status: error.code.status)
        response.headers.contentType = .json
        if let retry = error.retryAfterSeconds { response.headers.replaceOrAdd(name: .retryAfter, value: String(retry)) }
        response.body = .init(data: (try? JSONEncoder().encode(body)) ?? Data())
        return response
    }
}

extension ErrorCode {
    package var status: HTTPResponseStatus {
        switch self {
        case .deviceNotFound, .userPhotoNotFound, .activityCategoryNotFound, .messageNotFound, .buddyNotFound, .buddyNotFoundForUser,
            .buddyListEmpty:
            .notFound
        case .unauthorized: .unauthorized
        case .unknownPath: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .tooLarge: .payloadTooLarge
        case .unsupportedMediaType: .unsupportedMediaType
        case .tooManyRequests: .tooManyRequests
        case .unexpected: .internalServerError
        case .serviceUnavailable: .serviceUnavailable
        default: .badRequest
        }
    }
}

/// Tells an unknown path from a known path asked with the wrong method.
package enum RouteTable {
    package static func hasOtherMethod(for request: Request) -> Bool {
        let segments = request.url.path.split(separator: "/").map(String.init)
        return request.application.routes.all.contains { route in
            route.method != request.method && route.answers(on: request.listener) && matches(route.path, segments)
        }
    }

    private static func matches(_ pattern: [PathComponent], _ segments: [String]) -> Bool {
        if pattern.last == .catchall { return segments.count >= pattern.count - 1 }
        guard pattern.count == segments.count else { return false }
        return zip(pattern, segments).allSatisfy { component, segment in
            switch component {
            case .constant(let constant): constant == segment
            case .parameter, .anything: true
            case .catchall: true
            }
        }
    }
}

/// At most one log line per `interval` for requests answered 503: an outage of the store or an overload answers
/// every request so, and a line per request buried everything else in the log (issue 36: 160 lines in 8 s). Each
/// line says how many 503s went unlogged since the one before; `http_request_errors_total{status="503"}` counts all.
package final class UnavailableLog: Sendable {
    private struct State {
        var lastLogged: Date?
        var unlogged = 0
    }

    private let state = NIOLockedValueBox(State())
    package let interval: TimeInterval

    package init(interval: TimeInterval = 10) {
        self.interval = interval
    }

    /// Notes one 503: the number answered without a line since the last one when this one is to be logged, else nil.
    package func note(now: Date = Date()) -> Int? {
        state.withLockedValue { state in
            if let last = state.lastLogged, now.timeIntervalSince(last) < interval {
                state.unlogged += 1
                return nil
            }
            defer {
                state.lastLogged = now
                state.unlogged = 0
            }
            return state.unlogged
        }
    }
}
