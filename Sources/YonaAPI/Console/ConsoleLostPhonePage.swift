import Foundation
import Vapor
import YonaDomain

/// `/admin/lost-phone`: the first step of a lost-phone recovery started by the operator (a user who calls for help),
/// as `POST /admin/requestUserOverwrite/` does: the number's owner gets a code by text to enter in the app on the new
/// phone. The page never says whether the number has an account.
enum ConsoleLostPhonePage {
    static func register(_ pages: any RoutesBuilder) {
        pages.get("lost-phone", use: page)
        pages.post("lost-phone", use: requestCode)
    }

    @Sendable static func page(req: Request) -> Response {
        render(req)
    }

    private static func render(_ req: Request, status: HTTPStatus = .ok, error: String? = nil) -> Response {
        ConsolePage.render(
            req, title: "Lost phone", status: status, error: error,
            """
            <p>Sends the owner of a number a code by text. Entered in the Yona app on a new phone, the code replaces the
            account on that number by a new one (the old one, its goals and its messages are gone; buddies are told).</p>
            <form method="post" action="/admin/lost-phone">\(ConsolePage.csrfField(req))
            <label for="mobileNumber">Mobile number</label>
            <input type="text" id="mobileNumber" name="mobileNumber" inputmode="tel" required autocomplete="off">
            <button type="submit">Send the code</button></form>
            """)
    }

    @Sendable static func requestCode(req: Request) async throws -> Response {
        let raw = ((try? req.content.get(String.self, at: "mobileNumber")) ?? "").trimmingCharacters(in: .whitespaces)
        do {
            let number = try MobileNumber(raw)
            try await req.limitAttempts(number: number.value)
            try await req.overwrites.requestCode(for: number)
        } catch let error as YonaError where error.code != .tooManyRequests {
            return render(req, status: .badRequest, error: ConsolePage.message(of: error))
        } catch let error as YonaError {
            return render(req, status: .tooManyRequests, error: ConsolePage.message(of: error))
        }
        return ConsolePage.redirect("/admin/lost-phone", notice: "code-sent")
    }
}
