import AsyncHTTPClient
import Foundation
import Logging

/// Texts through Plivo's Send Message API (Yona's provider): `POST {api}/v1/Account/{auth_id}/Message/` with
/// HTTP Basic auth (auth id, auth token) and a JSON body `{"src","dst","text","type":"sms","log":"false"}`.
/// `log: "false"` asks Plivo not to keep the text and to mask the number in its records (privacy.md).
///
/// Plivo's answers: 202 `{"api_id","message","message_uuid":[…]}` is queued at Plivo (delivered, for us); 400
/// `{"api_id","error"}` names the parameter it refuses (`dst`: the number is invalid; `src`: our sender is wrong);
/// 401 a wrong auth id or token, 404 an auth id that names no account; 429 and 5xx a Plivo under load or down.
package struct PlivoSMSTransport: SMSTransport {
    package static let defaultAPI = "https://api.plivo.com"
    package let authID: String
    package let authToken: String
    package let from: String
    package let api: String
    package let http: ProviderHTTP
    package let logger: Logger
    package var name: String { "plivo" }

    private struct Body: Encodable {
        let src: String
        let dst: String
        let text: String
        let type = "sms"
        let log = "false"
    }

    package func deliver(_ text: String, to number: String, kind: String) async -> DeliveryOutcome {
        await http.deliverText(
            provider: name, kind: kind, to: "\(api)/v1/Account/\(authID)/Message/",
            body: (try? JSONEncoder().encode(Body(src: from, dst: number, text: text))) ?? Data(), contentType: "application/json",
            headers: [ProviderHTTP.basic(authID, authToken)], logger: logger, outcome: Self.outcome(of:))
    }

    /// Plivo's answer in the outbox's terms. Its 400 error is free text naming the parameter; only which parameter
    /// is kept, never the text (it may quote the number).
    package static func outcome(of answer: ProviderHTTP.Answer) -> DeliveryOutcome {
        guard answer.status == 400 else { return answer.byStatus("PLIVO_\(answer.status)") }
        let error = ((answer.json?["error"] as? String) ?? "").lowercased()
        if error.contains("dst") || error.contains("destination") { return .deadAddress("PLIVO_INVALID_DST") }
        if error.contains("src") || error.contains("source") { return .misconfigured("PLIVO_INVALID_SRC") }
        return .rejected("PLIVO_400")
    }

    package init(authID: String, authToken: String, from: String, api: String = Self.defaultAPI, client: HTTPClient, logger: Logger) {
        self.authID = authID
        self.authToken = authToken
        self.from = from
        self.api = api
        self.http = ProviderHTTP(client: client)
        self.logger = logger
    }
}
