import FluentKit
import Foundation
import Logging
import YonaStore

/// privacy.md "What leaves the server": a direct message between identities (a buddy request, its answer, a
/// disconnect) cannot reach the recipient's devices, which live on the anonymized side, so the recipient's
/// phone gets a text instead. The text is content-free: who wrote and what stays in the app. At most
/// `limit` (3 an hour) texts per number, so buddy requests cannot be used to flood a phone; the rest are
/// dropped (the messages still wait in the app). Accounts created on a buddy request have no app yet and got the
/// invitation; they get no notice.
package struct MessageNotices: Sendable {
    package static let text = "You have a new message on Yona. Open the app to read it."
    package static let limit = RateLimiter.Limit(name: "message-notice", max: 3, window: 3600)

    package let db: any Database
    package let sms: any SMSSender
    package let rateLimitKey: [UInt8]

    /// Sends after the messages are committed; a failure to text never fails the request.
    package func send(to userIDs: [UUID]) async {
        for userID in Set(userIDs) {
            do {
                guard let user = try await User.find(userID, on: db), !user.createdOnBuddyRequest,
                    let number = try? MobileNumber(user.mobileNumber),
                    try await RateLimiter(db: db, key: rateLimitKey).allows(Self.limit, number.value)
                else { continue }
                try await sms.sendMessageNotice(to: number)
            } catch {
                // The message itself is stored; only its notice is lost. Said, with the cause, never the number.
                Self.logger.warning("sms: message notice not sent", metadata: ["error": .string(String(reflecting: type(of: error)))])
            }
        }
    }

    private static let logger = Logger(label: "yona.message-notices")
}
