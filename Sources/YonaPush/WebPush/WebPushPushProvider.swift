import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import YonaDelivery
import YonaDomain
import YonaObservability

/// Web Push (RFC 8030) to a subscription's endpoint: the data encrypted for the subscriber (RFC 8291, `aes128gcm`)
/// and signed for the push service (VAPID, RFC 8292). The push service sees an endpoint, a size and a time; only the
/// device can read the message id and the user-less URL inside. Before every post the endpoint's host must still
/// resolve to public addresses only (`PublicEndpoint`), and redirects are never followed.
package struct WebPushPushProvider: PushProvider {
    package let vapid: VAPID
    package let client: HTTPClient
    package let endpoints: EndpointCheck
    private let receivers = ReceiverKeysCache()
    package var timeout: TimeAmount = .seconds(10)
    package var metrics: YonaMetrics? = nil
    package var logger: Logger? = nil
    package var name: String { "webpush" }

    package init(
        vapid: VAPID, client: HTTPClient, endpoints: EndpointCheck, timeout: TimeAmount = .seconds(10), metrics: YonaMetrics? = nil,
        logger: Logger? = nil
    ) {
        self.vapid = vapid
        self.client = client
        self.endpoints = endpoints
        self.timeout = timeout
        self.metrics = metrics
        self.logger = logger
    }

    /// How long a push service keeps an undelivered push: a day, as FCM's and APNs's.
    package static let ttlSeconds = 86_400

    package func send(_ push: OutgoingPush) async -> PushOutcome {
        guard case .webPush(let subscription) = push.address else { return .rejected(code: "NOT_A_WEBPUSH_ADDRESS") }
        guard let receiver = receivers.keys(of: subscription) else { return .tokenInvalid(reason: "WEBPUSH_BAD_KEYS") }
        let url: URL
        do {
            url = try await endpoints.check(subscription.endpoint)
        } catch let refused {
            // a name that no longer resolves may come back; one that leads inside never should
            if refused.reason == "UNRESOLVABLE" { return .retry(after: nil, quota: false, code: "WEBPUSH_UNRESOLVABLE") }
            logger?.warning("web push endpoint refused", metadata: ["reason": .string(refused.reason)])
            return .tokenInvalid(reason: "WEBPUSH_\(refused.reason)")
        }
        do {
            var request = HTTPClientRequest(url: subscription.endpoint)
            request.method = .POST
            request.headers.add(name: "Authorization", value: try await vapid.authorization(origin: Self.origin(of: url)))
            request.headers.add(name: "TTL", value: String(Self.ttlSeconds))
            request.headers.add(name: "Urgency", value: "high")
            // RFC 8030 5.4: an undelivered push of the same topic is replaced (at most 32 URL-safe base64 characters)
            request.headers.add(name: "Topic", value: push.collapseKey)
            request.headers.add(name: "Content-Encoding", value: "aes128gcm")
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            let body = try WebPushEncryption.encrypt(Self.plaintext(push).readableBytesView, to: receiver)
            request.body = .bytes(ByteBuffer(bytes: body))
            let start = ContinuousClock.now
            defer { metrics?.pushRequest(provider: "webpush", duration: ContinuousClock.now - start) }
            let response = try await client.execute(request, timeout: timeout)
            _ = try await response.body.collect(upTo: 64 * 1024)
            return Self.outcome(status: response.status.code, retryAfter: Backoff.retryAfter(response.headers.first(name: "Retry-After")))
        } catch {
            logger?.warning("web push request failed", metadata: ["error": .string(String(reflecting: type(of: error)))])
            return .retry(after: nil, quota: false, code: "NETWORK")
        }
    }

    /// `{"messageId":"…","url":"…"}`: FCM's two data keys, as the encrypted body.
    package static func plaintext(_ push: OutgoingPush) -> ByteBuffer {
        var out = ByteBuffer()
        PushMessage.writeJSONObject(push.data, to: &out)
        return out
    }

    /// The VAPID audience: the endpoint's origin (scheme, host and a port other than the default).
    package static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? "https"
        let host = url.host.map { $0.contains(":") && !$0.hasPrefix("[") ? "[\($0)]" : $0 } ?? ""
        let defaultPort = scheme == "https" ? 443 : 80
        return url.port.map { $0 == defaultPort ? "\(scheme)://\(host)" : "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
    }

    /// RFC 8030 §5 and the push services' documented answers: 201 accepted; 404 and 410 the subscription is gone;
    /// 429 and 5xx later; anything else is our request or our VAPID key being wrong (alert, no retry).
    package static func outcome(status: UInt, retryAfter: TimeInterval?) -> PushOutcome {
        switch status {
        case 200..<300: .delivered
        case 404, 410: .tokenInvalid(reason: "WEBPUSH_HTTP_\(status)")
        case 429: .retry(after: retryAfter, quota: true, code: "WEBPUSH_HTTP_429")
        case 500...: .retry(after: retryAfter, quota: false, code: "WEBPUSH_HTTP_\(status)")
        default: .rejected(code: "WEBPUSH_HTTP_\(status)")
        }
    }
}

/// `PublicEndpoint` at send time, with each host's verdict kept for a minute (a push service's host is the same for
/// thousands of subscriptions; a lookup per push would queue on the resolver). The verdicts sit behind a lock, not in an
/// actor: a remembered verdict is read without a hop to another executor, once per push.
package final class EndpointCheck: Sendable {
    private let allowPrivate: Bool
    private let verdicts = NIOLockedValueBox([String: (refusal: PublicEndpoint.Refused?, until: Date)]())
    package static let memory: TimeInterval = 60

    package init(allowPrivate: Bool) {
        self.allowPrivate = allowPrivate
    }

    package func check(_ endpoint: String, now: Date = Date()) async throws(PublicEndpoint.Refused) -> URL {
        let url = try PublicEndpoint.parse(endpoint, allowPrivate: allowPrivate)
        if allowPrivate { return url }
        let host = url.host!.lowercased()
        if let verdict = verdicts.withLockedValue({ $0[host] }), verdict.until > now {
            if let refusal = verdict.refusal { throw refusal }
            return url
        }
        do {
            _ = try await PublicEndpoint.check(endpoint, allowPrivate: false)
            remember(host, nil, now: now)
            return url
        } catch {
            // an unresolvable name is asked again next time, not remembered
            if error.reason != "UNRESOLVABLE" { remember(host, error, now: now) }
            throw error
        }
    }

    private func remember(_ host: String, _ refusal: PublicEndpoint.Refused?, now: Date) {
        verdicts.withLockedValue {
            if $0.count > 10_000 { $0.removeAll() }
            $0[host] = (refusal, now.addingTimeInterval(Self.memory))
        }
    }
}

/// Subscribers' keys as parsed points, by subscription: a device gets many pushes, and reading its key (a point
/// decompressed and checked) was a few percent of a push's CPU. Bounded; cleared when full.
final class ReceiverKeysCache: Sendable {
    private let parsed = NIOLockedValueBox([String: WebPushEncryption.ReceiverKeys]())

    func keys(of subscription: WebPushSubscription) -> WebPushEncryption.ReceiverKeys? {
        let key = subscription.keys.p256dh + " " + subscription.keys.auth
        if let hit = parsed.withLockedValue({ $0[key] }) { return hit }
        guard let keys = try? WebPushEncryption.ReceiverKeys(p256dh: subscription.keys.p256dh, auth: subscription.keys.auth) else { return nil }
        parsed.withLockedValue {
            if $0.count > 10_000 { $0.removeAll() }
            $0[key] = keys
        }
        return keys
    }
}
