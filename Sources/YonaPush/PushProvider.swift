import Foundation
import Logging
import YonaCrypto
import YonaDomain

/// What became of one push, in the terms the outbox needs (push.md's error table).
package enum PushOutcome: Sendable, Equatable {
    case delivered
    /// Transient: try again, after `after` seconds if the provider said so. `quota` means FCM's 429.
    case retry(after: TimeInterval?, quota: Bool, code: String)
    /// The token is dead or malformed: clear it on the device, do not retry.
    case tokenInvalid(reason: String)
    /// Our request or our Firebase set-up is wrong: do not retry, keep the token, alert.
    case rejected(code: String)
}

/// One push as the drain hands it to a provider: where to (the device's address, nothing about whose it is) and the
/// content-free data (push.md "The payload": the message id and the user-less message URL).
package struct OutgoingPush: Sendable, Equatable {
    package let address: PushAddress
    package let messageID: Int64
    package let publicBaseURL: String

    package init(address: PushAddress, messageID: Int64, publicBaseURL: String) {
        self.address = address
        self.messageID = messageID
        self.publicBaseURL = publicBaseURL
    }

    /// The same two keys every provider carries: `messageId` (the key the Yona apps read) and `url`.
    package var data: [String: String] { ["messageId": String(messageID), "url": "\(publicBaseURL)/messages/\(messageID)"] }
    /// The collapse key (FCM `collapse_key`, APNs `apns-collapse-id`, Web Push `Topic`), the same for every push: a
    /// push the provider still holds for an offline device is replaced by the next one, which names a newer message,
    /// as the outbox keeps one push waiting per device. Content-free, and a repeat replaces, never adds.
    package var collapseKey: String { Self.collapseKey }
    package static let collapseKey = "inbox"
}

/// Sends one push. Implementations never see who the recipient is: only an address and the payload.
package protocol PushProvider: Sendable {
    var name: String { get }
    func send(_ push: OutgoingPush) async -> PushOutcome
}

/// Each device's pushes through the provider of its address's kind: Firebase (or the log without a service account),
/// APNs (or the log without a key), Web Push (always direct: it needs no account).
package struct PushProviders: PushProvider {
    package let firebase: any PushProvider
    package let apns: any PushProvider
    package let webPush: WebPushPushProvider
    package var name: String { [firebase.name, apns.name, webPush.name].joined(separator: "+") }

    package init(firebase: any PushProvider, apns: any PushProvider, webPush: WebPushPushProvider) {
        self.firebase = firebase
        self.apns = apns
        self.webPush = webPush
    }

    package func send(_ push: OutgoingPush) async -> PushOutcome {
        switch push.address {
        case .firebase: await firebase.send(push)
        case .apns: await apns.send(push)
        case .webPush: await webPush.send(push)
        }
    }
}

/// The embedded default: records the push in the log (address hashed) instead of sending it, so the server
/// runs without a Firebase project or an APNs key.
package struct LogPushProvider: PushProvider {
    package let logger: Logger
    package var name: String { "log" }

    package func send(_ push: OutgoingPush) async -> PushOutcome {
        logger.info(
            "push recorded",
            metadata: [
                "push_provider": "log", "push_kind": .string(push.address.kind), "token_hash": .string(TokenHash.of(push.address.secret)),
                "message_id": .string(String(push.messageID)),
            ])
        return .delivered
    }

    package init(logger: Logger) {
        self.logger = logger
    }
}

/// A short, keyed hash of an Instance ID: what logs and the test endpoint's table may hold instead of it.
package enum TokenHash {
    package static func of(_ token: String) -> String {
        Hex.lowercase(KeyedHash.hash(Array(token.utf8), key: Array("yona/token-hash/v1".utf8), outputLength: 16).prefix(8))
    }
}
