import Foundation
import Logging
import YonaCrypto

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

/// Sends one push. Implementations never see who the recipient is: only a token and the payload.
package protocol PushProvider: Sendable {
    var name: String { get }
    func send(_ message: PushMessage) async -> PushOutcome
}

/// The embedded default: records the push in the log (token hashed) instead of sending it, so the server
/// runs without a Firebase project.
package struct LogPushProvider: PushProvider {
    package let logger: Logger
    package var name: String { "log" }

    package func send(_ message: PushMessage) async -> PushOutcome {
        logger.info(
            "push recorded",
            metadata: [
                "push_provider": "log", "token_hash": .string(TokenHash.of(message.message.token)),
                "message_id": .string(message.data["messageId"] ?? ""),
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
