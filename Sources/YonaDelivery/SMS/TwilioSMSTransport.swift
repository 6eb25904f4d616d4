import AsyncHTTPClient
import Foundation
import Logging

/// Texts through Twilio's Messages API: `POST {api}/2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic
/// auth (account SID, auth token), form-encoded `To`, `Body` and `From` (a number or alphanumeric sender id) or
/// `MessagingServiceSid` (a sender `MG…`).
///
/// Twilio's answers: 201 with the Message resource (`sid` `SM…`, `status` `queued`); errors as
/// `{"code","message","more_info","status"}` where `code` says why: 21211, 21214, 21612, 21614 a number that cannot
/// take texts, 21610 a recipient who replied STOP; 20003 (401) wrong credentials, 20404 an unknown account, 21408,
/// 21606 and 21608 a sender or account not allowed to send; 20429 (429) and 5xx: later.
package struct TwilioSMSTransport: SMSTransport {
    package static let defaultAPI = "https://api.twilio.com"
    package let accountSID: String
    package let authToken: String
    package let from: String
    package let api: String
    package let http: ProviderHTTP
    package let logger: Logger
    package var name: String { "twilio" }

    /// A Messaging Service SID: `MG` and 32 hexadecimal digits.
    package static func isMessagingService(_ sender: String) -> Bool {
        sender.count == 34 && sender.hasPrefix("MG") && sender.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    package func deliver(_ text: String, to number: String, kind: String) async -> DeliveryOutcome {
        let sender = Self.isMessagingService(from) ? ("MessagingServiceSid", from) : ("From", from)
        return await http.deliverText(
            provider: name, kind: kind, to: "\(api)/2010-04-01/Accounts/\(accountSID)/Messages.json",
            body: ProviderHTTP.formEncoded([("To", number), sender, ("Body", text)]), contentType: "application/x-www-form-urlencoded",
            headers: [ProviderHTTP.basic(accountSID, authToken)], logger: logger, outcome: Self.outcome(of:))
    }

    /// Twilio's answer in the outbox's terms, by its error code first and its HTTP status otherwise.
    package static func outcome(of answer: ProviderHTTP.Answer) -> DeliveryOutcome {
        if (200..<300).contains(answer.status) { return .delivered }
        let code = (answer.json?["code"] as? Int) ?? 0
        let name = code == 0 ? "TWILIO_\(answer.status)" : "TWILIO_\(code)"
        switch code {
        case 21211, 21214, 21612, 21614, 21610: return .deadAddress(name)
        case 20003, 20404, 21408, 21606, 21608, 21659: return .misconfigured(name)
        case 20429: return .retry(name, after: answer.retryAfter)
        default: return answer.byStatus(name)
        }
    }

    package init(accountSID: String, authToken: String, from: String, api: String = Self.defaultAPI, client: HTTPClient, logger: Logger) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.from = from
        self.api = api
        self.http = ProviderHTTP(client: client)
        self.logger = logger
    }
}
