import FluentKit
import Foundation
import Logging
import YonaDelivery

/// What the server texts a person. Implementations queue the text in the outbox (`QueuedSMSSender`); a failure to
/// queue fails the operation, a failure to deliver never does.
package protocol SMSSender: Sendable {
    func sendConfirmationCode(_ code: String, to number: MobileNumber) async throws
    /// The text that invites a number a buddy named; `link` carries the temporary password.
    func sendBuddyInvitation(_ invitation: BuddyInvitation, to number: MobileNumber) async throws
    /// The code that lets a new phone overwrite the account of a lost one.
    func sendOverwriteCode(_ code: String, to number: MobileNumber) async throws
    /// That a direct message (buddy request, answer, disconnect) waits in the app; content-free.
    func sendMessageNotice(to number: MobileNumber) async throws
    /// A pin reset's code, texted not before `notBefore` (Yona waits a day, so a thief holding the phone for a
    /// moment cannot reset the pin).
    func sendPinResetCode(_ code: String, to number: MobileNumber, notBefore: Date) async throws
    /// The same texts queued in a caller's transaction `tx` and only queued (issue 13): they exist exactly when the
    /// change that causes them commits. `afterCommit` then tries them at once; what it cannot deliver the
    /// `text-outbox` job delivers later.
    func inTransaction(_ tx: any Database) -> TransactionTexts
}

/// Texts queued inside a transaction (`SMSSender.inTransaction`).
package struct TransactionTexts: Sendable {
    package let sender: any SMSSender
    package let afterCommit: @Sendable () async -> Void
}

/// The ids of texts queued in a transaction, for trying them once it committed.
package final class QueuedTextIDs: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [UUID] = []

    package func add(_ id: UUID) { lock.withLock { ids.append(id) } }
    package var all: [UUID] { lock.withLock { ids } }
}

/// The texts themselves, in the language of the request that causes them (as Yona's, which chose its SMS template
/// by the request's locale: the apps send `Accept-Language`); only the inviter's names are user-typed (issue 13).
/// The message notice (`MessageNotices.text`) stays English: it goes to a buddy, and the sender's language would
/// be something about the sender in a text meant to say nothing.
package enum SMSTexts {
    package static func confirmationCode(_ code: String, in locale: YonaLocale) -> String {
        locale == .nlNL ? "Je Yona-bevestigingscode: \(code)" : "Your Yona confirmation code: \(code)"
    }

    package static func invitation(_ invitation: BuddyInvitation, in locale: YonaLocale) -> String {
        let inviter = "\(invitation.inviterFirstName) \(invitation.inviterLastName)"
        return locale == .nlNL
            ? "\(inviter) nodigt je uit om buddy's te worden op Yona: \(invitation.link)"
            : "\(inviter) invites you to become buddies on Yona: \(invitation.link)"
    }

    package static func overwriteCode(_ code: String, in locale: YonaLocale) -> String {
        locale == .nlNL
            ? "Je Yona-code om je account naar een nieuwe telefoon te verhuizen: \(code)"
            : "Your Yona code to move your account to a new phone: \(code)"
    }

    package static func pinResetCode(_ code: String, in locale: YonaLocale) -> String {
        locale == .nlNL ? "Je Yona-code om je pincode opnieuw in te stellen: \(code)" : "Your Yona pin reset code: \(code)"
    }

}

/// Queues each text in the outbox and tries it at once (`TextOutbox.sendNow`): the text goes out with the request
/// as before, and when the provider is down the `text-outbox` job delivers it later.
package struct QueuedSMSSender: SMSSender {
    package let outbox: TextOutbox
    /// Set inside a transaction: texts are only queued, their ids kept for after the commit.
    package var queuedInTransaction: QueuedTextIDs? = nil
    /// The language of the texts: the causing request's.
    package var locale: YonaLocale = .enUS

    package func inTransaction(_ tx: any Database) -> TransactionTexts {
        let ids = QueuedTextIDs()
        let outbox = self.outbox
        return TransactionTexts(
            sender: QueuedSMSSender(outbox: outbox.on(tx), queuedInTransaction: ids, locale: locale),
            afterCommit: { for id in ids.all { await outbox.sendNow(id) } })
    }

    /// Queues and tries at once, or, inside a transaction, only queues.
    private func send(_ text: OutgoingText) async throws {
        if let queuedInTransaction {
            queuedInTransaction.add(try await outbox.queue(text))
        } else {
            try await outbox.send(text)
        }
    }

    package func sendConfirmationCode(_ code: String, to number: MobileNumber) async throws {
        try await send(.sms(to: number.value, text: SMSTexts.confirmationCode(code, in: locale), kind: "confirmation code"))
    }

    package func sendBuddyInvitation(_ invitation: BuddyInvitation, to number: MobileNumber) async throws {
        try await send(.sms(to: number.value, text: SMSTexts.invitation(invitation, in: locale), kind: "buddy invitation"))
    }

    package func sendOverwriteCode(_ code: String, to number: MobileNumber) async throws {
        try await send(.sms(to: number.value, text: SMSTexts.overwriteCode(code, in: locale), kind: "account-overwrite code"))
    }

    package func sendMessageNotice(to number: MobileNumber) async throws {
        try await send(.sms(to: number.value, text: MessageNotices.text, kind: "message notice"))
    }

    package func sendPinResetCode(_ code: String, to number: MobileNumber, notBefore: Date) async throws {
        let text = OutgoingText.sms(to: number.value, text: SMSTexts.pinResetCode(code, in: locale), kind: "pin reset code")
        if notBefore <= Date() {
            try await send(text)
        } else {
            try await outbox.queue(text, notBefore: notBefore)
        }
    }

    package init(outbox: TextOutbox, queuedInTransaction: QueuedTextIDs? = nil, locale: YonaLocale = .enUS) {
        self.outbox = outbox
        self.queuedInTransaction = queuedInTransaction
        self.locale = locale
    }
}
