import AsyncHTTPClient
import Foundation
import Logging

/// Sends texts through an HTTP SMS gateway: `POST {url}` with `{"from","to","text"}` (JSON) and the bearer
/// token when one is set. A 2xx is delivered; 429, 5xx and an unreachable gateway are tried again later (the text
/// waits in the outbox, not before the gateway's Retry-After); 401 and 403 say our token is wrong; another 4xx is
/// refused for good. Logged by status only, never the number or the text.
package struct HTTPSMSTransport: SMSTransport {
    package let url: String
    package let token: String?
    package let from: String
    package let http: ProviderHTTP
    package let logger: Logger
    package var name: String { "http" }

    private struct Body: Encodable {
        let from: String
        let to: String
        let text: String
    }

    package func deliver(_ text: String, to number: String, kind: String) async -> DeliveryOutcome {
        await http.deliverText(
            provider: name, kind: kind, to: url, body: (try? JSONEncoder().encode(Body(from: from, to: number, text: text))) ?? Data(),
            contentType: "application/json", headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], logger: logger,
            outcome: Self.outcome(of:))
    }

    /// A gateway's answer: 2xx delivered; 429 and 5xx later (not before its Retry-After); 401 and 403 our token is
    /// wrong; another 4xx refused for good.
    package static func outcome(of answer: ProviderHTTP.Answer) -> DeliveryOutcome {
        answer.byStatus("HTTP_\(answer.status)", misconfiguredOn: [401, 403])
    }

    package init(url: String, token: String?, from: String, client: HTTPClient, logger: Logger) {
        self.url = url
        self.token = token
        self.from = from
        self.http = ProviderHTTP(client: client)
        self.logger = logger
    }
}
