import Foundation
import Vapor
import YonaCrypto
import YonaDomain
import YonaStore

/// The operator's console at `/admin/` on the internal listener: sign-in with the internal token, then pages for
/// what Yona's admin pages did and what the admin API offers (docs/operations.md "The console").
package enum ConsoleController {
    /// Sign-in attempts per client address in 15 minutes, successful ones included.
    package static let signInLimit = RateLimiter.Limit(name: "console-sign-in", max: 10, window: 900)

    package static func register(_ routes: any RoutesBuilder) {
        let admin = routes.grouped("admin")
        admin.get("console.css", use: stylesheet)
        admin.get("sign-in", use: signInPage)
        admin.post("sign-in", use: signIn)
        let pages = admin.grouped(ConsoleGuard())
        pages.get(use: ConsoleDashboard.page)
        pages.post("sign-out", use: signOut)
        ConsoleWhiteListPage.register(pages)
        ConsoleCategoriesPage.register(pages)
        ConsoleAnnouncementsPage.register(pages)
        ConsoleLostPhonePage.register(pages)
    }

    @Sendable static func stylesheet(req: Request) -> Response {
        let response = Response(status: .ok, body: .init(string: ConsolePage.stylesheet))
        response.headers.replaceOrAdd(name: .contentType, value: "text/css; charset=utf-8")
        ConsolePage.secure(response)
        response.headers.replaceOrAdd(name: .cacheControl, value: "max-age=3600")
        return response
    }

    @Sendable static func signInPage(req: Request) -> Response {
        signInForm(req)
    }

    private static func signInForm(_ req: Request, status: HTTPStatus = .ok, error: String? = nil) -> Response {
        ConsolePage.render(
            req, title: "Sign in", status: status, error: error,
            """
            <form method="post" action="/admin/sign-in">
            <label for="token">Internal token</label>
            <input type="password" id="token" name="token" autocomplete="current-password" required autofocus>
            <p>The token is <code>YONA_INTERNAL_TOKEN</code>, or the file <code>internal-token</code> in the data directory.</p>
            <button type="submit">Sign in</button></form>
            """)
    }

    @Sendable static func signIn(req: Request) async throws -> Response {
        let address = ClientAddress.of(req, trustedProxies: req.application.yona.config.trustedProxies)
        do {
            try await RateLimiter(db: req.store, key: req.application.yona.recovery.rateLimitKey).hit([(signInLimit, address)])
        } catch let error as YonaError where error.code == .tooManyRequests {
            let response = signInForm(req, status: .tooManyRequests, error: "Too many sign-in attempts from this address; wait and try again.")
            response.headers.replaceOrAdd(name: .retryAfter, value: String(error.retryAfterSeconds ?? 60))
            return response
        }
        let presented = (try? req.content.get(String.self, at: "token")) ?? ""
        let expected = req.application.yona.internalToken
        guard SecretMemory.constantTimeEquals(Array(presented.utf8), Array(expected.utf8)) else {
            return signInForm(req, status: .unauthorized, error: "That is not the internal token.")
        }
        let token = try await req.consoleSessions.open()
        let response = ConsolePage.redirect("/admin/")
        response.cookies[ConsolePage.cookie] = HTTPCookies.Value(
            string: token, path: "/admin", isSecure: isTLS(req), isHTTPOnly: true, sameSite: .strict)
        return response
    }

    @Sendable static func signOut(req: Request) async throws -> Response {
        if let token = req.consoleSessionToken { try await req.consoleSessions.close(token) }
        let response = ConsolePage.redirect("/admin/sign-in", notice: "signed-out")
        response.cookies[ConsolePage.cookie] = clearedCookie(req)
        return response
    }

    /// The cookie that replaces an ended session's.
    static func clearedCookie(_ req: Request) -> HTTPCookies.Value {
        HTTPCookies.Value(
            string: "", expires: Date(timeIntervalSince1970: 0), maxAge: 0, path: "/admin", isSecure: isTLS(req), isHTTPOnly: true,
            sameSite: .strict)
    }

    /// Behind a TLS-terminating proxy (or on TLS) the cookie is `Secure`.
    private static func isTLS(_ req: Request) -> Bool {
        req.url.scheme == "https" || req.headers.first(name: "X-Forwarded-Proto")?.lowercased() == "https"
    }
}
