import Foundation
import NIOConcurrencyHelpers
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

extension RequestContext {
    package static let correlationHeader = "X-Correlation-Id"

    /// Fixes the correlation id (the caller's `x-b3-traceid` when it sends a sane one) and the locale, and tags the
    /// logger; `stamp` puts both on the response, errors included.
    package static func begin(_ request: Request) -> RequestContext {
        let traced = request.headers.first(name: "x-b3-traceid")
        let id =
            traced.flatMap { $0.count <= 32 && !$0.isEmpty && $0.allSatisfy(\.isHexDigit) ? $0.lowercased() : nil }
            ?? CorrelationIDs.next()
        let context = RequestContext(
            correlationID: id,
            locale: YonaLocale.pick(acceptLanguage: request.headers.first(name: .acceptLanguage)))
        request.storage[RequestContextKey.self] = context
        request.logger[metadataKey: "correlation_id"] = .string(id)
        return context
    }

    package func stamp(_ response: Response) {
        response.headers.replaceOrAdd(name: Self.correlationHeader, value: correlationID)
        response.headers.replaceOrAdd(name: .contentLanguage, value: locale.rawValue)
    }
}

/// Correlation ids (and the request ids `HTTPFront` gives Vapor): random version-4 UUIDs, lowercased, as `UUID()`
/// made them, but drawn from a pool of 256 refilled by libsodium (a `getrandom(2)` per 256 bytes; the standard
/// library's `SystemRandomNumberGenerator` made one per 8 bytes). Foundation's `UUID()` opens, reads and closes
/// `/dev/urandom` for every one.
package enum CorrelationIDs {
    private static let pool = NIOLockedValueBox(Pool())

    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var next = 4096

        mutating func take() -> uuid_t {
            if next == bytes.count {
                bytes = SecureRandom.bytes(bytes.count)
                next = 0
            }
            defer { next += 16 }
            return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: next, as: uuid_t.self) }
        }
    }

    package static func next() -> String {
        var uuid = pool.withLockedValue { $0.take() }
        uuid.6 = (uuid.6 & 0x0f) | 0x40 // version 4
        uuid.8 = (uuid.8 & 0x3f) | 0x80 // RFC 4122 variant
        return UUID(uuid: uuid).lowercasedString
    }
}

/// Refuses a malformed `Yona-App-Version: <ANDROID|IOS>/<versionCode>/<versionName>`.
package enum AppVersionHeader {
    package static func check(_ request: Request) throws(YonaError) {
        if let value = request.headers.first(name: "Yona-App-Version") { try check(value) }
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
}
