import Foundation
import Logging

/// How a text leaves the server; implementations never log a number or any content.
package protocol SMSTransport: Sendable {
    /// The provider's name, for logs and metrics (`log`, `http`, `plivo`, `twilio`).
    var name: String { get }
    func deliver(_ text: String, to number: String, kind: String) async -> DeliveryOutcome
}

/// The embedded default: records that a text would have gone out, and nothing of what or to whom.
package struct LogSMSTransport: SMSTransport {
    package let logger: Logger
    package var name: String { "log" }

    package func deliver(_ text: String, to number: String, kind: String) async -> DeliveryOutcome {
        logger.info("sms: \(kind) sent", metadata: ["sms_provider": "log"])
        return .delivered
    }

    package init(logger: Logger) {
        self.logger = logger
    }
}
