import Foundation
import Vapor
import YonaCrypto
import YonaDomain

/// Per-request facts every layer may need: the correlation id and the locale.
package struct RequestContext: Sendable {
    package let correlationID: String
    package let locale: YonaLocale
}

private struct RequestContextKey: StorageKey {
    package typealias Value = RequestContext
}

extension Request {
    package var context: RequestContext {
        storage[RequestContextKey.self] ?? RequestContext(correlationID: "unknown", locale: .fallback)
    }
}

/// The outermost middleware: fixes the correlation id (the caller's `x-b3-traceid` when it sends a sane
/// one) and the locale, tags the logger, and stamps both on every response, errors included.
package struct RequestContextMiddleware: AsyncMiddleware {
    package static let correlationHeader = "X-Correlation-Id"

    package func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let traced = request.headers.first(name: "x-b3-traceid")
        let id =
            traced.flatMap { $0.count <= 32 && !$0.isEmpty && $0.allSatisfy(\.isHexDigit) ? $0.lowercased() : nil }
            ?? UUID().lowercasedString
        let context = RequestContext(
            correlationID: id,
            locale: YonaLocale.pick(acceptLanguage: request.headers.first(name: .acceptLanguage)))
        request.storage[RequestContextKey.self] = context
        request.logger[metadataKey: "correlation_id"] = .string(id)
        let response = try await next.respond(to: request)
        response.headers.replaceOrAdd(name: Self.correlationHeader, value: id)
        response.headers.replaceOrAdd(name: .contentLanguage, value: context.locale.rawValue)
        return response
    }

    package init() {}
}

/// Refuses a malformed `Yona-App-Version: <ANDROID|IOS>/<versionCode>/<versionName>`.
package struct AppVersionHeaderMiddleware: AsyncMiddleware {
    package func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if let value = request.headers.first(name: "Yona-App-Version") { try Self.check(value) }
        return try await next.respond(to: request)
    }

    /// Yona's rules and codes: three parts, a known platform, a version code above 0; the version name is free
    /// text (`1.2 build 360`, `1.2 (I'm Rich)`) within limits.
    package static func check(_ value: String) throws(YonaError) {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[2].isEmpty, parts[2].count <= 64,
            !parts[2].unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else {
            throw YonaError(.invalidAppVersionHeader, quoting: value)
        }
        guard parts[0] == "ANDROID" || parts[0] == "IOS" else { throw YonaError(.unknownOperatingSystem) }
        guard parts[1].count <= 9, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let code = Int(parts[1]), code > 0 else {
            throw YonaError(.invalidVersionCodeInHeader, quoting: String(parts[1]))
        }
    }

    package init() {}
}
