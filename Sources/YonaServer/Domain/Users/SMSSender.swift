import Foundation
import Logging

/// Sends texts to mobile numbers. Implementations must never log a number or a code.
protocol SMSSender: Sendable {
    func sendConfirmationCode(_ code: String, to number: MobileNumber) async
    /// The text that invites a number a buddy named; `link` carries the temporary password.
    func sendBuddyInvitation(_ invitation: BuddyInvitation, to number: MobileNumber) async
    /// The code that lets a new phone overwrite the account of a lost one.
    func sendOverwriteCode(_ code: String, to number: MobileNumber) async
    /// That a direct message (buddy request, answer, disconnect) waits in the app; content-free.
    func sendMessageNotice(to number: MobileNumber) async
}

/// The embedded default: records that a text would have gone out, and nothing of what or to whom.
struct LogSMSSender: SMSSender {
    let logger: Logger

    func sendConfirmationCode(_ code: String, to number: MobileNumber) async {
        logger.info("sms: confirmation code sent", metadata: ["sms_provider": "log"])
    }

    func sendBuddyInvitation(_ invitation: BuddyInvitation, to number: MobileNumber) async {
        logger.info("sms: buddy invitation sent", metadata: ["sms_provider": "log"])
    }

    func sendOverwriteCode(_ code: String, to number: MobileNumber) async {
        logger.info("sms: account-overwrite code sent", metadata: ["sms_provider": "log"])
    }

    func sendMessageNotice(to number: MobileNumber) async {
        logger.info("sms: message notice sent", metadata: ["sms_provider": "log"])
    }
}
