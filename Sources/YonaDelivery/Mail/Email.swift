import Foundation
import Logging
import NIOConcurrencyHelpers

/// One e-mail as it goes out: `from` and `to` as mailboxes (`Name <address>`), the subject, the HTML `body`, and
/// the same as plain `text` (absent in mails queued before the text part existed).
package struct Email: Sendable, Codable, Equatable {
    package let from: String
    package let to: String
    package let subject: String
    package let body: String
    package let text: String?

    package init(from: String, to: String, subject: String, body: String, text: String? = nil) {
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
        self.text = text
    }

    /// A mailbox `Display Name <address>` split at its last `<`: the address is what we appended, a display name
    /// (typed by a user) may hold anything.
    package static func mailbox(_ mailbox: String) -> (name: String, address: String) {
        guard let open = mailbox.lastIndex(of: "<"), mailbox.hasSuffix(">") else { return ("", mailbox) }
        let name = mailbox[..<open].trimmingCharacters(in: .whitespaces)
        return (name, String(mailbox[mailbox.index(after: open)..<mailbox.index(before: mailbox.endIndex)]))
    }
}

/// How a mail leaves the server; implementations never log an address or any content.
package protocol EmailTransport: Sendable {
    /// The provider's name, for logs and metrics (`log`, `smtp`).
    var name: String { get }
    func deliver(_ email: Email) async -> DeliveryOutcome
}

/// The embedded default: records that a mail would have gone out, and nothing of what or to whom.
package struct LogEmailTransport: EmailTransport {
    package let logger: Logger
    package var name: String { "log" }

    package init(logger: Logger) {
        self.logger = logger
    }

    package func deliver(_ email: Email) async -> DeliveryOutcome {
        logger.info("email: sent", metadata: ["email_provider": "log"])
        return .delivered
    }
}

/// On a test server, whatever the transport: keeps the last mail it delivered, for `GET /test/emails/last`.
package final class RecordingEmailTransport: EmailTransport {
    private let inner: any EmailTransport
    private let last = NIOLockedValueBox<Email?>(nil)
    package var name: String { inner.name }

    package init(_ inner: any EmailTransport) {
        self.inner = inner
    }

    package func deliver(_ email: Email) async -> DeliveryOutcome {
        let outcome = await inner.deliver(email)
        if outcome == .delivered { last.withLockedValue { $0 = email } }
        return outcome
    }

    package var lastSent: Email? { last.withLockedValue { $0 } }
}
