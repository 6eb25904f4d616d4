import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Sends texts through an HTTP SMS gateway: `POST {url}` with `{"from","to","text"}` (JSON) and the bearer
/// token when one is set. A failed text is logged by status only (never the number or the text) and not
/// retried: the user asks for a new code (resend, new request) and that sends again.
struct HTTPSMSSender: SMSSender {
    let url: String
    let token: String?
    let from: String
    let client: HTTPClient
    let logger: Logger
    var timeout: TimeAmount = .seconds(10)

    func sendConfirmationCode(_ code: String, to number: MobileNumber) async {
        await send("Your Yona confirmation code: \(code)", to: number, kind: "confirmation code")
    }

    func sendBuddyInvitation(_ invitation: BuddyInvitation, to number: MobileNumber) async {
        await send(
            "\(invitation.inviterFirstName) \(invitation.inviterLastName) invites you to become buddies on Yona: \(invitation.link)",
            to: number, kind: "buddy invitation")
    }

    func sendOverwriteCode(_ code: String, to number: MobileNumber) async {
        await send("Your Yona code to move your account to a new phone: \(code)", to: number, kind: "account-overwrite code")
    }

    func sendMessageNotice(to number: MobileNumber) async {
        await send(MessageNotices.text, to: number, kind: "message notice")
    }

    private struct Body: Encodable {
        let from: String
        let to: String
        let text: String
    }

    private func send(_ text: String, to number: MobileNumber, kind: String) async {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        do {
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(Body(from: from, to: number.value, text: text))))
            let response = try await client.execute(request, timeout: timeout)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) {
                logger.info("sms: \(kind) sent", metadata: ["sms_provider": "http"])
            } else {
                logger.warning("sms: gateway refused a \(kind)", metadata: ["sms_provider": "http", "status": "\(response.status.code)"])
            }
        } catch {
            logger.warning("sms: gateway unreachable for a \(kind)", metadata: ["sms_provider": "http", "error_type": "\(type(of: error))"])
        }
    }
}
