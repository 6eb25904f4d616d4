import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Sends texts through an HTTP SMS gateway: `POST {url}` with `{"from","to","text"}` (JSON) and the bearer
/// token when one is set. A 2xx is delivered; 429, 5xx and an unreachable gateway are tried again later (the text
/// waits in the outbox); another 4xx is refused for good. Logged by status only, never the number or the text.
package struct HTTPSMSTransport: SMSTransport {
    package let url: String
    package let token: String?
    package let from: String
    package let client: HTTPClient
    package let logger: Logger
    package var timeout: TimeAmount = .seconds(10)

    private struct Body: Encodable {
        package let from: String
        package let to: String
        package let text: String
    }

    package func deliver(_ text: String, to number: String, kind: String) async -> DeliveryOutcome {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        do {
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(Body(from: from, to: number, text: text))))
            let response = try await client.execute(request, timeout: timeout)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            let status = response.status.code
            if (200..<300).contains(status) {
                logger.info("sms: \(kind) sent", metadata: ["sms_provider": "http"])
                return .delivered
            }
            logger.warning("sms: gateway refused a \(kind)", metadata: ["sms_provider": "http", "status": "\(status)"])
            return status == 429 || status >= 500 ? .retry("HTTP_\(status)") : .rejected("HTTP_\(status)")
        } catch {
            logger.warning("sms: gateway unreachable for a \(kind)", metadata: ["sms_provider": "http", "error_type": "\(type(of: error))"])
            return .retry("UNREACHABLE")
        }
    }

    package init(url: String, token: String?, from: String, client: HTTPClient, logger: Logger, timeout: TimeAmount = .seconds(10)) {
        self.url = url
        self.token = token
        self.from = from
        self.client = client
        self.logger = logger
        self.timeout = timeout
    }
}
