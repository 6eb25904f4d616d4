import Fluent
import Foundation
import Logging
import NIOConcurrencyHelpers

/// What an invitation says: who invites and the link that carries the temporary password. The inviter's typed
/// message is not part of it: that reaches the invitee inside the app, sealed, as the connect request's text.
/// A text or mail carries no user-typed text beyond the (capped, control-free) names (issue 13; Yona's mail had
/// no message either).
package struct BuddyInvitation: Sendable {
    package let inviterFirstName: String
    package let inviterLastName: String
    package let inviteeFirstName: String
    package let inviteeLastName: String
    package let link: String
}

/// One e-mail as it would go out.
package struct Email: Sendable, Codable, Equatable {
    package let from: String
    package let to: String
    package let subject: String
    package let body: String

    /// The Yona invitation mail: the app's integration tests find the link after "click <a href=".
    package static func invitation(_ invitation: BuddyInvitation, to address: String) -> Email {
        let inviter = "\(invitation.inviterFirstName) \(invitation.inviterLastName)"
        return Email(
            from: "\(inviter) <noreply@yona.nu>",
            to: "\(invitation.inviteeFirstName) \(invitation.inviteeLastName) <\(address)>",
            subject: "Become friend of \(inviter) on Yona!",
            body: """
                <p>\(Self.escaped(inviter)) invites you to become buddies on Yona.</p>
                <p>Install the Yona app. Return to this mail and click <a href="\(Self.attribute(invitation.link))">this link</a> on your phone to accept.</p>
                """)
    }

    /// A URL in an attribute: its `&` stays as it is (as in Yona's mail, whose readers take the href verbatim; no
    /// named character reference starts like a query parameter of ours), what could end the attribute is escaped.
    private static func attribute(_ url: String) -> String {
        url.replacingOccurrences(of: "<", with: "%3C").replacingOccurrences(of: ">", with: "%3E").replacingOccurrences(of: "\"", with: "%22")
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Sends e-mail. Implementations queue it in the outbox (`QueuedEmailSender`).
package protocol EmailSender: Sendable {
    func send(_ email: Email) async throws
    /// Queues mails in the caller's transaction, as `SMSSender.inTransaction` does texts.
    func queue(_ email: Email, in tx: any Database) async throws -> @Sendable () async -> Void
}

/// Queues the mail and tries it at once, as `QueuedSMSSender` does texts.
package struct QueuedEmailSender: EmailSender {
    let outbox: TextOutbox

    package func send(_ email: Email) async throws { try await outbox.send(.email(email)) }

    package func queue(_ email: Email, in tx: any Database) async throws -> @Sendable () async -> Void {
        let id = try await outbox.on(tx).queue(.email(email))
        let outbox = self.outbox
        return { await outbox.sendNow(id) }
    }

    package init(outbox: TextOutbox) {
        self.outbox = outbox
    }
}

/// How a mail leaves the server; implementations never log an address or any content.
package protocol EmailTransport: Sendable {
    func deliver(_ email: Email) async -> DeliveryOutcome
}

/// The embedded default (and the only transport yet): records that a mail would have gone out, and nothing of
/// what or to whom. On a test server it also keeps the last mail for `GET /test/emails/last`.
package final class LogEmailTransport: EmailTransport {
    private let logger: Logger
    private let keepLast: Bool
    private let last = NIOLockedValueBox<Email?>(nil)

    package init(logger: Logger, keepLast: Bool) {
        self.logger = logger
        self.keepLast = keepLast
    }

    package func deliver(_ email: Email) async -> DeliveryOutcome {
        if keepLast { last.withLockedValue { $0 = email } }
        logger.info("email: sent", metadata: ["email_provider": "log"])
        return .delivered
    }

    package var lastSent: Email? { last.withLockedValue { $0 } }
}
