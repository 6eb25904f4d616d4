import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import YonaDelivery
import YonaDomain
import YonaObservability

/// Apple's push service, directly, with token authentication over HTTP/2 (Apple's "Sending notification requests to
/// APNs"): a background push (`apns-push-type: background`, priority 5, `{"aps":{"content-available":1}}`) carrying
/// the same two keys as FCM's data, no alert, sound or badge. Apple sees a device token, a message id and a
/// user-less URL.
package struct APNsPushProvider: PushProvider {
    package let settings: APNsSettings
    package let tokens: APNsProviderToken
    package let client: HTTPClient
    package var timeout: TimeAmount = .seconds(10)
    package var metrics: YonaMetrics? = nil
    package var logger: Logger? = nil
    package var name: String { "apns" }

    package init(
        settings: APNsSettings, tokens: APNsProviderToken, client: HTTPClient, timeout: TimeAmount = .seconds(10), metrics: YonaMetrics? = nil,
        logger: Logger? = nil
    ) {
        self.settings = settings
        self.tokens = tokens
        self.client = client
        self.timeout = timeout
        self.metrics = metrics
        self.logger = logger
    }

    /// Time to live of a push: a day, as FCM's.
    package static let expirySeconds: TimeInterval = 86_400

    package func send(_ push: OutgoingPush) async -> PushOutcome {
        guard case .apns(let deviceToken) = push.address else { return .rejected(code: "NOT_AN_APNS_ADDRESS") }
        do {
            var token = try await tokens.token()
            var answer = try await post(push, to: deviceToken, providerToken: token)
            if answer.reason == "ExpiredProviderToken" {
                guard await tokens.expired(token) else { return .retry(after: 60, quota: false, code: "APNS_EXPIREDPROVIDERTOKEN") }
                token = try await tokens.token()
                answer = try await post(push, to: deviceToken, providerToken: token)
            }
            return Self.outcome(of: answer)
        } catch {
            logger?.warning("APNs request failed", metadata: ["error": .string(String(reflecting: type(of: error)))])
            return .retry(after: nil, quota: false, code: "NETWORK")
        }
    }

    package struct Answer: Sendable {
        package let status: UInt
        package let reason: String?
        package let retryAfter: TimeInterval?
    }

    private func post(_ push: OutgoingPush, to deviceToken: String, providerToken: String) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(settings.url)/3/device/\(deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(providerToken)")
        request.headers.add(name: "apns-topic", value: settings.topic)
        request.headers.add(name: "apns-push-type", value: "background")
        request.headers.add(name: "apns-priority", value: "5")
        request.headers.add(name: "apns-expiration", value: String(Int(Date().timeIntervalSince1970 + Self.expirySeconds)))
        request.headers.add(name: "apns-collapse-id", value: push.collapseKey)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(Self.body(push))
        let start = ContinuousClock.now
        defer { metrics?.pushRequest(provider: "apns", duration: ContinuousClock.now - start) }
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 64 * 1024)
        let reason =
            response.status == .ok
            ? nil : ((try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any])?["reason"] as? String
        return Answer(status: response.status.code, reason: reason, retryAfter: Backoff.retryAfter(response.headers.first(name: "retry-after")))
    }

    /// `{"aps":{"content-available":1},"messageId":"…","url":"…"}`: the background push and FCM's two data keys.
    package static func body(_ push: OutgoingPush) -> ByteBuffer {
        var out = ByteBuffer()
        out.writeStaticString(#"{"aps":{"content-available":1},"#)
        PushMessage.writeJSONMembers(push.data, to: &out)
        out.writeStaticString("}")
        return out
    }

    /// Apple's status codes and reasons: a dead or malformed token clears the address; our key, topic or request being
    /// wrong is an alert, not a retry; throttling and Apple's own trouble are tried again later.
    package static func outcome(of answer: Answer) -> PushOutcome {
        let reason = answer.reason ?? "HTTP_\(answer.status)"
        let code = "APNS_\(reason.uppercased())"
        switch (answer.status, reason) {
        case (200, _): return .delivered
        case (410, _), (400, "BadDeviceToken"): return .tokenInvalid(reason: code)
        case (429, _): return .retry(after: answer.retryAfter, quota: true, code: code)
        case (500..., _): return .retry(after: answer.retryAfter, quota: false, code: code)
        default: return .rejected(code: code)
        }
    }
}
