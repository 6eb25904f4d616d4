import Foundation
import NIOConcurrencyHelpers
import Vapor

@testable import YonaConfig

/// A local stand-in for Plivo's Send Message API and Twilio's Messages API over real HTTP, written from their public
/// API references (operations.md "Texts and mail") and proven against their official Python clients
/// (`SMSProviderTests.officialClients…`): HTTP Basic auth against the account in the path, the request encoding
/// (JSON for Plivo, a form for Twilio), the success answers (Plivo 202 with `message_uuid`, Twilio 201 with a
/// Message `SM…`), and the documented errors, chosen by the test: numbers that are refused (Plivo 400, Twilio
/// 21211) or unsubscribed (Twilio 21610), an outage (503), throttling (429 with Retry-After), wrong credentials (401).
final class SMSProviderEmulator: Sendable {
    enum Provider: String, Sendable {
        case plivo, twilio
    }

    struct Received: Sendable {
        let provider: Provider
        /// The request's fields: Plivo's JSON body or Twilio's form.
        let fields: [String: String]
        let accepted: Bool
        /// When it came (this machine's clock, which the server under test shares).
        var at = Date()
        var to: String? { fields["dst"] ?? fields["To"] }
        var text: String? { fields["text"] ?? fields["Body"] }
    }

    enum Mode: Sendable, Equatable {
        case up
        case down
        case throttled(retryAfter: Int)
    }

    struct State {
        var received: [Received] = []
        var mode = Mode.up
        /// While set, a text is held unanswered (as a provider that stopped answering), then dropped with a 503
        /// and not recorded as accepted; `hung` counts them.
        var hanging = false
        var hung = 0
        var refusing: Set<String> = []
        var unsubscribed: Set<String> = []
    }

    static let plivoAuthID = "MAZDQ1ZJIYMDZKMTIZZW"
    static let twilioAccountSID = "AC" + String(repeating: "0123456789abcdef", count: 2)
    static let authToken = "emulator-auth-token-0123456789"

    let app: Application
    let baseURL: String
    let state = NIOLockedValueBox(State())

    private init(app: Application, baseURL: String) {
        self.app = app
        self.baseURL = baseURL
    }

    static func start() async throws -> SMSProviderEmulator {
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        let box = NIOLockedValueBox<SMSProviderEmulator?>(nil)
        // Answers on the event loop: an async route waits for the cooperative pool, which the suite's parallel
        // Argon2id tests can hold for longer than the server's 10 s read timeout (a CI run saw UNREACHABLE so).
        @Sendable func answer(_ req: Request, _ provider: Provider) -> EventLoopFuture<Response> {
            let emulator = box.withLockedValue { $0! }
            guard emulator.state.withLockedValue({ $0.hanging }) else {
                return req.eventLoop.makeSucceededFuture(provider == .plivo ? emulator.plivo(req) : emulator.twilio(req))
            }
            return req.eventLoop.makeFutureWithTask { try await emulator.heldWhileHanging() }
        }
        app.on(.POST, "v1", "Account", ":account", "Message", body: .collect(maxSize: "64kb")) { req -> EventLoopFuture<Response> in
            answer(req, .plivo)
        }
        app.on(.POST, "2010-04-01", "Accounts", ":account", "Messages.json", body: .collect(maxSize: "64kb")) {
            req -> EventLoopFuture<Response> in answer(req, .twilio)
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let emulator = SMSProviderEmulator(app: app, baseURL: "http://127.0.0.1:\(app.http.server.shared.localAddress!.port!)")
        box.withLockedValue { $0 = emulator }
        return emulator
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    /// Holds the request while `hanging` is set; then answers 503.
    private func heldWhileHanging() async throws -> Response {
        state.withLockedValue { $0.hung += 1 }
        while state.withLockedValue({ $0.hanging }) { try await Task.sleep(for: .milliseconds(50)) }
        return json(.serviceUnavailable, ["error": "dropped"])
    }

    func texts(to number: String) -> [Received] { state.withLockedValue { $0.received.filter { $0.to == number } } }

    /// Points a test server's texts at this emulator as `provider`.
    func configure(_ provider: Provider, token: String = authToken) -> (inout AppConfig) -> Void {
        { config in
            switch provider {
            case .plivo: config.sms = .plivo(authID: Self.plivoAuthID, authToken: token, from: "+31850000000", api: self.baseURL)
            case .twilio: config.sms = .twilio(accountSID: Self.twilioAccountSID, authToken: token, from: "+31850000000", api: self.baseURL)
            }
        }
    }

    private func authorized(_ req: Request, user: String) -> Bool {
        guard let basic = req.headers.basicAuthorization else { return false }
        return basic.username == user && basic.password == Self.authToken && req.parameters.get("account") == user
    }

    private func json(_ status: HTTPResponseStatus, _ object: [String: Any], headers: [(String, String)] = []) -> Response {
        var responseHeaders = HTTPHeaders([("Content-Type", "application/json")])
        for (name, value) in headers { responseHeaders.add(name: name, value: value) }
        let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(status: status, headers: responseHeaders, body: .init(data: body))
    }

    /// Records the request and answers what the mode and the number call for; nil when it is accepted.
    private func refusal(_ provider: Provider, _ fields: [String: String], number: String) -> Response? {
        let answer: Response? = state.withLockedValue { state in
            switch state.mode {
            case .down:
                return json(
                    .serviceUnavailable,
                    provider == .plivo
                        ? ["api_id": UUID().uuidString.lowercased(), "error": "service unavailable"] : twilioError(20500, "Service unavailable", 503))
            case .throttled(let seconds):
                return json(
                    .tooManyRequests,
                    provider == .plivo
                        ? ["api_id": UUID().uuidString.lowercased(), "error": "too many requests"] : twilioError(20429, "Too Many Requests", 429),
                    headers: [("Retry-After", "\(seconds)")])
            case .up: break
            }
            if state.unsubscribed.contains(number), provider == .twilio {
                return json(.badRequest, twilioError(21610, "Attempt to send to unsubscribed recipient", 400))
            }
            if state.refusing.contains(number) {
                return provider == .plivo
                    ? json(.badRequest, ["api_id": UUID().uuidString.lowercased(), "error": "invalid dst parameter"])
                    : json(.badRequest, twilioError(21211, "Invalid 'To' Phone Number", 400))
            }
            return nil
        }
        state.withLockedValue { $0.received.append(Received(provider: provider, fields: fields, accepted: answer == nil)) }
        return answer
    }

    private func twilioError(_ code: Int, _ message: String, _ status: Int) -> [String: Any] {
        ["code": code, "message": message, "more_info": "https://www.twilio.com/docs/errors/\(code)", "status": status]
    }

    private func plivo(_ req: Request) -> Response {
        let apiID = UUID().uuidString.lowercased()
        guard authorized(req, user: Self.plivoAuthID) else { return json(.unauthorized, ["api_id": apiID, "error": "Authentication failed"]) }
        guard req.headers.contentType == .json, let data = req.body.data,
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: data)) as? [String: Any]
        else { return json(.badRequest, ["api_id": apiID, "error": "invalid json data"]) }
        let fields = object.compactMapValues { $0 as? String }
        for name in ["src", "dst", "text"] where (fields[name] ?? "").isEmpty {
            return json(.badRequest, ["api_id": apiID, "error": "\(name) parameter is required"])
        }
        if let type = fields["type"], type != "sms" { return json(.badRequest, ["api_id": apiID, "error": "invalid type"]) }
        let number = fields["dst"]!
        guard number.drop(while: { $0 == "+" }).allSatisfy(\.isNumber), number.count >= 8 else {
            return json(.badRequest, ["api_id": apiID, "error": "invalid dst parameter"])
        }
        if let refused = refusal(.plivo, fields, number: number) { return refused }
        return json(.accepted, ["api_id": apiID, "message": "message(s) queued", "message_uuid": [UUID().uuidString.lowercased()]])
    }

    private func twilio(_ req: Request) -> Response {
        guard authorized(req, user: Self.twilioAccountSID) else { return json(.unauthorized, twilioError(20003, "Authenticate", 401)) }
        guard req.headers.contentType == .urlEncodedForm, let fields = try? req.content.decode([String: String].self) else {
            return json(.badRequest, twilioError(20001, "Bad request", 400))
        }
        guard let to = fields["To"], !to.isEmpty else { return json(.badRequest, twilioError(21604, "A 'To' phone number is required.", 400)) }
        guard let body = fields["Body"], !body.isEmpty else { return json(.badRequest, twilioError(21602, "Message body is required.", 400)) }
        guard fields["From"] != nil || fields["MessagingServiceSid"] != nil else {
            return json(.badRequest, twilioError(21603, "A 'From' phone number is required.", 400))
        }
        guard to.hasPrefix("+"), to.dropFirst().allSatisfy(\.isNumber), to.count >= 9 else {
            return json(.badRequest, twilioError(21211, "Invalid 'To' Phone Number", 400))
        }
        if let refused = refusal(.twilio, fields, number: to) { return refused }
        let sid = "SM" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let account = Self.twilioAccountSID
        return json(
            .created,
            [
                "sid": sid, "account_sid": account, "to": to, "from": fields["From"] as Any? ?? NSNull(),
                "messaging_service_sid": fields["MessagingServiceSid"] as Any? ?? NSNull(), "body": body, "status": "queued",
                "num_segments": "1", "num_media": "0", "direction": "outbound-api", "api_version": "2010-04-01",
                "date_created": "Sat, 28 Nov 2026 12:00:00 +0000", "date_updated": "Sat, 28 Nov 2026 12:00:00 +0000", "date_sent": NSNull(),
                "price": NSNull(), "price_unit": "USD", "error_code": NSNull(), "error_message": NSNull(),
                "uri": "/2010-04-01/Accounts/\(account)/Messages/\(sid).json",
                "subresource_uris": ["media": "/2010-04-01/Accounts/\(account)/Messages/\(sid)/Media.json"],
            ])
    }
}
