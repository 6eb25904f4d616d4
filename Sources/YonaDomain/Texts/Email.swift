import FluentKit
import Foundation
import YonaDelivery

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

extension Email {
    /// The address mails come from when the operator names none (Yona's).
    package static let defaultFromAddress = "noreply@yona.nu"

    /// The Yona invitation mail, in the language of the request that causes it, as HTML and as plain text. Yona's
    /// integration tests find the English link after "Return to this mail and click <a href=". Unlike Yona's, it
    /// does not repeat the inviter's mobile number (the invitee's phone shows it with the text).
    package static func invitation(
        _ invitation: BuddyInvitation, to address: String, from fromAddress: String = defaultFromAddress, in locale: YonaLocale = .enUS
    ) -> Email {
        let inviter = "\(invitation.inviterFirstName) \(invitation.inviterLastName)"
        let dutch = locale == .nlNL
        let subject = dutch ? "Word vriend van \(inviter) op Yona!" : "Become friend of \(inviter) on Yona!"
        let intro =
            dutch
            ? "\(inviter) nodigt je uit om vrienden te worden op Yona."
            : "\(inviter) invites you to become buddies on Yona."
        let install = dutch ? "Installeer de Yona-app." : "Install the Yona app."
        let link = attribute(invitation.link)
        let step =
            dutch
            ? "Ga terug naar deze mail en klik op je telefoon op <a href=\"\(link)\">deze link</a> om te accepteren."
            : "Return to this mail and click <a href=\"\(link)\">this link</a> on your phone to accept."
        let textStep =
            dutch
            ? "Open daarna deze link op je telefoon om te accepteren:" : "Then open this link on your phone to accept:"
        return Email(
            from: "\(inviter) <\(fromAddress)>",
            to: "\(invitation.inviteeFirstName) \(invitation.inviteeLastName) <\(address)>",
            subject: subject,
            body: "<p>\(escaped(intro))</p>\n<p>\(escaped(install)) \(step)</p>",
            text: "\(intro)\n\n\(install) \(textStep)\n\(invitation.link)\n")
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
    /// Queues the invitation mail in the caller's transaction, as `SMSSender.inTransaction` does texts; the returned
    /// closure tries it once the transaction committed.
    func queueInvitation(_ invitation: BuddyInvitation, to address: String, in tx: any Database) async throws -> @Sendable () async -> Void
}

/// Queues the mail and tries it at once, as `QueuedSMSSender` does texts.
package struct QueuedEmailSender: EmailSender {
    let outbox: TextOutbox
    /// The address mails come from (`YONA_EMAIL_FROM`).
    let fromAddress: String
    /// The language of the mail: the causing request's.
    let locale: YonaLocale

    package func queueInvitation(_ invitation: BuddyInvitation, to address: String, in tx: any Database) async throws
        -> @Sendable () async -> Void
    {
        let email = Email.invitation(invitation, to: address, from: fromAddress, in: locale)
        let id = try await outbox.on(tx).queue(.email(email))
        let outbox = self.outbox
        return { await outbox.sendNow(id) }
    }

    package init(outbox: TextOutbox, fromAddress: String = Email.defaultFromAddress, locale: YonaLocale = .enUS) {
        self.outbox = outbox
        self.fromAddress = fromAddress
        self.locale = locale
    }
}
