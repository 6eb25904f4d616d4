import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// One request to a provider's HTTP API and its answer, or why there was none. Shared by the SMS providers so
/// each says only what its API means: the URL, the body, and how its answers map to a `DeliveryOutcome`.
package struct ProviderHTTP: Sendable {
    package let client: HTTPClient
    package var timeout: TimeAmount = .seconds(10)

    package struct Answer: Sendable {
        package let status: Int
        package let headers: HTTPHeaders
        package let body: Data

        /// The provider's Retry-After, in seconds.
        package var retryAfter: TimeInterval? { Backoff.retryAfter(headers.first(name: "Retry-After")) }

        /// The body as a JSON object, when it is one.
        package var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }

        /// The answer by its status alone, named `code`: 2xx delivered; 429 and 5xx later, not before the Retry-After;
        /// `misconfiguredOn` our credentials or account; any other status refused for good.
        package func byStatus(_ code: String, misconfiguredOn: Set<Int> = [401, 403, 404]) -> DeliveryOutcome {
            switch status {
            case 200..<300: .delivered
            case 429, 500...: .retry(code, after: retryAfter)
            case _ where misconfiguredOn.contains(status): .misconfigured(code)
            default: .rejected(code)
            }
        }
    }

    /// The client the providers share: one connection attempt per send, so an unreachable provider fails the attempt
    /// at once and the outbox tries again later (AsyncHTTPClient otherwise retries connecting until the request's
    /// deadline, which held every sign-up 10 s while a provider was down: `scripts/bench texts`), 5 s to connect.
    package static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(10))
        configuration.tracing.tracer = nil // no traces are exported (PushHTTPClient says what the default costs)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package init(client: HTTPClient, timeout: TimeAmount = .seconds(10)) {
        self.client = client
        self.timeout = timeout
    }

    /// `POST url` with `body` of `contentType`; `nil` when no answer came (refused connection, TLS, timeout), and why
    /// in `failure` (the client's error: it names the provider's host at most, never the request's body or headers).
    package func post(
        _ url: String, body: Data, contentType: String, headers: [(String, String)], failure: ((any Error) -> Void)? = nil
    ) async -> Answer? {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(data: body))
        do {
            let response = try await client.execute(request, timeout: timeout)
            let bytes = try await response.body.collect(upTo: 256 * 1024)
            return Answer(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
        } catch {
            failure?(error)
            return nil
        }
    }

    /// Posts one text to an SMS provider and maps its answer with `outcome` (no answer at all: later); logs what
    /// became of it by provider, kind of text and error code, never the number or the text.
    package func deliverText(
        provider: String, kind: String, to url: String, body: Data, contentType: String, headers: [(String, String)], logger: Logger,
        outcome: (Answer) -> DeliveryOutcome
    ) async -> DeliveryOutcome {
        var reason = ""
        guard let answer = await post(url, body: body, contentType: contentType, headers: headers, failure: { reason = "\($0)" }) else {
            logger.warning("sms: provider unreachable for a \(kind)", metadata: ["sms_provider": .string(provider), "error": .string(reason)])
            return .retry("UNREACHABLE")
        }
        let result = outcome(answer)
        if result == .delivered {
            logger.info("sms: \(kind) sent", metadata: ["sms_provider": .string(provider)])
        } else {
            logger.warning(
                "sms: provider refused a \(kind)",
                metadata: ["sms_provider": .string(provider), "status": "\(answer.status)", "error_code": .string(result.code ?? "")])
        }
        return result
    }

    /// `Authorization: Basic …` for an id and a secret (both Plivo and Twilio authenticate so).
    package static func basic(_ user: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
    }

    /// `application/x-www-form-urlencoded` as RFC 3986 unreserved characters and `%XX` for everything else.
    package static func formEncoded(_ fields: [(String, String)]) -> Data {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }
        return Data(fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&").utf8)
    }
}
