import Foundation
import Vapor
import YonaDomain
import YonaStore

/// `/admin/announcements`: compose an announcement in both languages with an optional expiry, preview it, send it;
/// follow each one's fan-out and expire one early (Yona's system-message page sent and forgot).
enum ConsoleAnnouncementsPage {
    static func register(_ pages: any RoutesBuilder) {
        pages.get("announcements", use: page)
        pages.post("announcements", "preview", use: preview)
        pages.post("announcements", use: send)
        pages.post("announcements", "expire", use: expire)
    }

    struct Form: Content {
        var textEN: String?
        var textNL: String?
        /// `yyyy-MM-ddTHH:mm` in UTC, as a `datetime-local` field sends it.
        var expiresAt: String?
    }

    @Sendable static func page(req: Request) async throws -> Response {
        try await render(req, form: Form())
    }

    private static func render(_ req: Request, form: Form, status: HTTPStatus = .ok, error: String? = nil, preview: HTML = "")
        async throws -> Response
    {
        let announcements = AnnouncementService(db: req.store)
        let fanOut = AnnouncementFanOut(db: req.store, skipLocked: false)
        let now = Date()
        var rows: [HTML] = []
        for announcement in try await announcements.recent() {
            let id = announcement.id?.uuidString.lowercased() ?? ""
            let expired = announcement.expiresAt.map { $0 <= now } ?? false
            let progress: String
            if !announcement.snapshotTaken {
                progress = "waiting for the workers"
            } else {
                let pending = try await fanOut.pending(of: announcement.id!)
                progress = pending == 0 ? "delivered" : "\(pending) users still to reach"
            }
            let action: HTML =
                expired
                ? "expired"
                : """
                <form class="inline" method="post" action="/admin/announcements/expire">\(ConsolePage.csrfField(req))
                <input type="hidden" name="id" value="\(id)"><button type="submit">Expire now</button></form>
                """
            rows.append(
                """
                <tr><td>\(Self.format(announcement.createdAt))</td><td>\(announcement.expiresAt.map(Self.format) ?? "never")</td>
                <td>\(announcement.translations["en-US"] ?? "")</td><td>\(announcement.translations["nl-NL"] ?? "")</td>
                <td>\(progress)</td><td>\(action)</td></tr>
                """)
        }
        let list: HTML =
            rows.isEmpty
            ? "<p>None yet.</p>"
            : """
            <table><thead><tr><th scope="col">Sent (UTC)</th><th scope="col">Expires (UTC)</th><th scope="col">English</th>
            <th scope="col">Dutch</th><th scope="col">Fan-out</th><th scope="col">Action</th></tr></thead><tbody>\(rows)</tbody></table>
            """
        return ConsolePage.render(
            req, title: "Announcements", status: status, error: error,
            """
            \(preview)
            <h2>Compose</h2>
            <form method="post" action="/admin/announcements/preview">\(ConsolePage.csrfField(req))
            <label for="textEN">Text in English (required)</label><textarea id="textEN" name="textEN" maxlength="4000" required>\(form.textEN ?? "")</textarea>
            <label for="textNL">Text in Dutch (users with the app in Dutch get this one)</label>
            <textarea id="textNL" name="textNL" maxlength="4000">\(form.textNL ?? "")</textarea>
            <label for="expiresAt">Expires at (UTC; empty: only today's users get it, and it stays)</label>
            <input type="datetime-local" id="expiresAt" name="expiresAt" value="\(form.expiresAt ?? "")">
            <button type="submit">Preview</button></form>
            <h2>Sent</h2>
            \(list)
            """)
    }

    @Sendable static func preview(req: Request) async throws -> Response {
        let form = (try? req.content.decode(Form.self)) ?? Form()
        do {
            _ = try validated(form)
        } catch let error as YonaError {
            return try await render(req, form: form, status: .badRequest, error: ConsolePage.message(of: error))
        }
        let dutch: HTML = nonEmpty(form.textNL).map { "<h3>In Dutch</h3><blockquote lang=\"nl\">\($0)</blockquote>" } ?? ""
        let preview: HTML = """
            <section aria-labelledby="preview"><h2 id="preview">Preview</h2>
            <p>Every user gets this as a message from Yona\(nonEmpty(form.expiresAt).map { " until \($0) UTC" } ?? ""):</p>
            <h3>In English</h3><blockquote lang="en">\(form.textEN ?? "")</blockquote>\(dutch)
            <form method="post" action="/admin/announcements">\(ConsolePage.csrfField(req))
            <input type="hidden" name="textEN" value="\(form.textEN ?? "")"><input type="hidden" name="textNL" value="\(form.textNL ?? "")">
            <input type="hidden" name="expiresAt" value="\(form.expiresAt ?? "")">
            <button type="submit">Send to every user</button></form></section>
            """
        return try await render(req, form: form, preview: preview)
    }

    @Sendable static func send(req: Request) async throws -> Response {
        let form = (try? req.content.decode(Form.self)) ?? Form()
        do {
            let (translations, expiresAt) = try validated(form)
            try await req.announcements.announce(translations: translations, expiresAt: expiresAt)
        } catch let error as YonaError {
            return try await render(req, form: form, status: .badRequest, error: ConsolePage.message(of: error))
        }
        return ConsolePage.redirect("/admin/announcements", notice: "announcement-sent")
    }

    @Sendable static func expire(req: Request) async throws -> Response {
        let raw = (try? req.content.get(String.self, at: "id")) ?? ""
        guard let id = UUID(uuidString: raw) else {
            return try await render(req, form: Form(), status: .badRequest, error: "No such announcement.")
        }
        try await req.announcements.expire(id)
        return ConsolePage.redirect("/admin/announcements", notice: "announcement-expired")
    }

    /// The form as `announce` takes it, checked by its rules (`AnnouncementService.check`); nothing is stored.
    private static func validated(_ form: Form) throws -> ([String: String], Date?) {
        var translations: [String: String] = [:]
        if let english = nonEmpty(form.textEN) { translations["en-US"] = english }
        if let dutch = nonEmpty(form.textNL) { translations["nl-NL"] = dutch }
        var expiresAt: Date?
        if let raw = nonEmpty(form.expiresAt) {
            guard let date = localFormat.date(from: raw) ?? localFormat.date(from: raw + ":00") else {
                throw YonaError(.invalidParameter, quoting: "expiresAt")
            }
            expiresAt = date
        }
        try AnnouncementService.check(translations: translations, expiresAt: expiresAt)
        return (translations, expiresAt)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        return text
    }

    private static func format(_ date: Date) -> String {
        String(localFormat.string(from: date).replacingOccurrences(of: "T", with: " ").prefix(16))
    }

    /// `datetime-local`'s format, read as UTC.
    private static var localFormat: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter
    }
}
