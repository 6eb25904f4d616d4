import Foundation
import Vapor
import YonaCrypto
import YonaDomain

/// Guards the analyzer and admin APIs: `Authorization: Bearer <YONA_INTERNAL_TOKEN>`, compared in constant time.
package struct InternalTokenMiddleware: Middleware {
    package let token: String

    package func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard let presented = request.headers.bearerAuthorization?.token,
            SecretMemory.constantTimeEquals(Array(presented.utf8), Array(token.utf8))
        else {
            return request.eventLoop.makeFailedFuture(YonaError(.unauthorized))
        }
        return next.respond(to: request)
    }
}

/// The internal token when none is configured: made once and kept in the data directory (mode 600); the start-up
/// line names the file, never the token (a console or log collector must not hold it).
package enum InternalToken {
    /// `keep: false` (a one-off command): a stored token is used, a missing one is not made.
    package static func resolve(configured: String?, dataDirectory: URL, keep: Bool = true) throws -> String {
        if let configured { return configured }
        let secret = try DataDirectorySecret.loadOrCreate(
            file: "internal-token", in: dataDirectory, variable: "YONA_INTERNAL_TOKEN", keep: keep, isValid: { !$0.isEmpty },
            generate: { Hex.lowercase(SecureRandom.bytes(32)) })
        if secret.created {
            FileHandle.standardError.write(
                Data(
                    "Generated the internal token for the analyzer and admin APIs; it is in \(secret.file.path) (readable by this user only).\n".utf8)
            )
        }
        return secret.value
    }
}
