import Foundation
import Vapor
import YonaDomain

/// `/admin/white-list`: the numbers allowed to sign up while sign-up is limited (Yona's white-listed numbers page,
/// which could not remove one).
enum ConsoleWhiteListPage {
    static func register(_ pages: any RoutesBuilder) {
        pages.get("white-list", use: page)
        pages.post("white-list", use: add)
        pages.post("white-list", "remove", use: remove)
    }

    @Sendable static func page(req: Request) async throws -> Response {
        try await render(req)
    }

    private static func render(_ req: Request, status: HTTPStatus = .ok, error: String? = nil) async throws -> Response {
        let numbers = try await WhiteList(db: req.store).numbers()
        let rows = numbers.map { number -> HTML in
            """
            <tr><td>\(number)</td><td><form class="inline" method="post" action="/admin/white-list/remove">\(ConsolePage.csrfField(req))
            <input type="hidden" name="mobileNumber" value="\(number)"><button type="submit" aria-label="Remove \(number)">Remove</button></form></td></tr>
            """
        }
        let list: HTML =
            numbers.isEmpty
            ? "<p>No numbers yet.</p>"
            : "<table><thead><tr><th scope=\"col\">Mobile number</th><th scope=\"col\">Action</th></tr></thead><tbody>\(rows)</tbody></table>"
        return ConsolePage.render(
            req, title: "White list", status: status, error: error,
            """
            \(list)
            <h2>Add a number</h2>
            <form method="post" action="/admin/white-list">\(ConsolePage.csrfField(req))
            <label for="mobileNumber">Mobile number (international form, e.g. +31612345678)</label>
            <input type="text" id="mobileNumber" name="mobileNumber" inputmode="tel" required>
            <button type="submit">Add</button></form>
            """)
    }

    @Sendable static func add(req: Request) async throws -> Response {
        let number = ((try? req.content.get(String.self, at: "mobileNumber")) ?? "").trimmingCharacters(in: .whitespaces)
        do {
            try await WhiteList(db: req.store).add(number)
        } catch let error as YonaError {
            return try await render(req, status: .badRequest, error: ConsolePage.message(of: error))
        }
        return ConsolePage.redirect("/admin/white-list", notice: "number-added")
    }

    @Sendable static func remove(req: Request) async throws -> Response {
        let number = (try? req.content.get(String.self, at: "mobileNumber")) ?? ""
        do {
            try await WhiteList(db: req.store).remove(number)
        } catch let error as YonaError {
            return try await render(req, status: .badRequest, error: ConsolePage.message(of: error))
        }
        return ConsolePage.redirect("/admin/white-list", notice: "number-removed")
    }
}
