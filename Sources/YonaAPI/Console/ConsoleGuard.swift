import Foundation
import Vapor
import YonaDomain

/// Lets a console request in only with a live session; every form post must also carry the session's CSRF token.
/// Without a session the browser is sent to sign in (an ended session says so there).
package struct ConsoleGuard: AsyncMiddleware {
    package func respond(to req: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let token = req.cookies[ConsolePage.cookie]?.string, !token.isEmpty else {
            return ConsolePage.redirect("/admin/sign-in")
        }
        guard try await req.consoleSessions.resume(token) else {
            let response = ConsolePage.redirect("/admin/sign-in", notice: "expired")
            response.cookies[ConsolePage.cookie] = ConsoleController.clearedCookie(req)
            return response
        }
        req.consoleSessionToken = token
        if req.method == .POST {
            // Middleware runs before the route collects the body: a form larger than the first chunk (an import)
            // would otherwise be read in part.
            _ = try await req.body.collect(max: req.application.yona.config.maxBodyBytes).get()
            // a NUL cannot be stored (PostgreSQL refuses it in text) and no form needs one
            if let body = req.body.data, Self.holdsNUL(String(buffer: body)) {
                return ConsolePage.render(
                    req, title: "Refused", status: .badRequest, error: "A field holds a NUL character, which cannot be stored.",
                    "<p><a href=\"/admin/\">Back to the dashboard</a></p>")
            }
            let presented = try? req.content.get(String.self, at: "csrf")
            guard ConsoleSessions.isValid(csrf: presented, for: token) else {
                return ConsolePage.render(
                    req, title: "Refused", status: .forbidden,
                    error: "This form was not sent from a page of this console (no valid CSRF token). Open the page again and repeat.",
                    "<p><a href=\"/admin/\">Back to the dashboard</a></p>")
            }
        }
        return try await next.respond(to: req)
    }

    /// A NUL, raw or form-encoded (`%00`).
    private static func holdsNUL(_ body: String) -> Bool { body.contains("\u{0}") || body.contains("%00") }
}

extension Request {
    package var consoleSessions: ConsoleSessions {
        ConsoleSessions(db: db, idleTimeout: application.yona.config.consoleIdleTimeout)
    }
}
