import Foundation
import Vapor
import YonaDomain

/// The frame of every console page: navigation, the sign-out form, one `h1`, a notice or an error, the content.
/// No script anywhere: every form works as plain HTML, and the CSP forbids scripts and anything from elsewhere.
package enum ConsolePage {
    package static let cookie = "yona_console"
    package static let sections: [(path: String, title: String)] = [
        ("/admin/", "Dashboard"), ("/admin/categories", "Activity categories"), ("/admin/announcements", "Announcements"),
        ("/admin/white-list", "White list"), ("/admin/lost-phone", "Lost phone"),
    ]

    /// A whole page; `signedIn` false for the sign-in page (no navigation).
    package static func render(
        _ req: Request, title: String, status: HTTPStatus = .ok, error: String? = nil, _ content: HTML
    ) -> Response {
        let session = req.consoleSessionToken
        let navigation: HTML =
            session.map { token in
                let links = sections.map { section -> HTML in
                    let current: HTML = req.url.path == section.path ? " aria-current=\"page\"" : ""
                    return "<li><a href=\"\(section.path)\"\(current)>\(section.title)</a></li>"
                }
                return """
                    <nav aria-label="Console"><ul>\(links)</ul>
                    <form method="post" action="/admin/sign-out">\(csrfField(token))<button type="submit">Sign out</button></form></nav>
                    """
            } ?? ""
        let notice: HTML = req.queryValue("notice").flatMap { Self.notices[$0] }.map { "<p class=\"notice\" role=\"status\">\($0)</p>" } ?? ""
        let problem: HTML = error.map { "<p class=\"error\" role=\"alert\">\($0)</p>" } ?? ""
        let page: HTML = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Yona console</title><link rel="stylesheet" href="/admin/console.css"></head>
            <body><header><p class="brand">Yona console</p>\(navigation)</header>
            <main><h1>\(title)</h1>\(notice)\(problem)\(content)</main></body></html>
            """
        let response = Response(status: status, body: .init(string: page.rendered))
        response.headers.replaceOrAdd(name: .contentType, value: "text/html; charset=utf-8")
        secure(response)
        return response
    }

    /// Headers every console answer carries: nothing cached, framed, sniffed, referred or loaded from elsewhere.
    package static func secure(_ response: Response) {
        response.headers.replaceOrAdd(
            name: "Content-Security-Policy",
            value: "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")
    }

    /// The hidden field every form posts back.
    package static func csrfField(_ token: String) -> HTML {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(ConsoleSessions.csrfToken(for: token))\">"
    }

    /// A form's hidden CSRF field for the signed-in request.
    package static func csrfField(_ req: Request) -> HTML { req.consoleSessionToken.map { csrfField($0) } ?? "" }

    /// After a successful post: back to a page (POST/redirect/GET), with one of the fixed notices.
    package static func redirect(_ path: String, notice: String? = nil) -> Response {
        let target = notice.map { path + (path.contains("?") ? "&" : "?") + "notice=" + $0 } ?? path
        let response = Response(status: .seeOther)
        response.headers.replaceOrAdd(name: .location, value: target)
        secure(response)
        return response
    }

    /// The only texts a `notice` query can show: a link cannot put words on a page.
    private static let notices: [String: String] = [
        "signed-out": "You are signed out.", "expired": "Your session ended; sign in again.",
        "number-added": "The number is on the white list.", "number-removed": "The number is off the white list.",
        "category-saved": "The activity category is saved.", "categories-imported": "The activity categories are imported.",
        "announcement-sent": "The announcement is on its way.", "announcement-expired": "The announcement is expired.",
        "code-sent": "If the number has an account, its owner gets a code by text.",
    ]

    /// The human text of a domain error, as the API would give it.
    package static func message(of error: any Error) -> String? {
        guard let yona = error as? YonaError else { return nil }
        return yona.code.message(in: .enUS, quoting: yona.quoted)
    }

    package static let stylesheet = """
        body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
        header{background:#24415e;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:1rem}
        header a{color:#fff}header .brand{font-weight:bold;margin:0}nav{display:flex;gap:1rem;align-items:center}
        nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;margin:0;padding:0}nav a[aria-current]{font-weight:bold}
        main{padding:1rem 2rem;max-width:70rem}table{border-collapse:collapse;margin:.5rem 0 1.5rem}
        th,td{border:1px solid #bbb;padding:.3rem .6rem;text-align:left;vertical-align:top}td.n{text-align:right}
        label{display:block;margin:.6rem 0 .2rem;font-weight:600}input[type=text],input[type=password],textarea{width:100%;max-width:36rem}
        textarea{min-height:5rem}button{margin:.5rem 0;padding:.3rem .9rem}.notice{background:#e3f4e3;padding:.5rem}
        .error{background:#fbe3e3;padding:.5rem}form.inline{display:inline}:focus{outline:3px solid #f0a000}
        svg{background:#fff;border:1px solid #ccc}figure{display:inline-block;margin:0 1.5rem 1rem 0}figcaption{font-size:.9rem}label.inline{display:inline}
        """
}

extension Request {
    /// The console session's token, once `ConsoleGuard` let the request in.
    package var consoleSessionToken: String? {
        get { storage[ConsoleSessionTokenKey.self] }
        set { storage[ConsoleSessionTokenKey.self] = newValue }
    }
}

private struct ConsoleSessionTokenKey: StorageKey {
    typealias Value = String
}
