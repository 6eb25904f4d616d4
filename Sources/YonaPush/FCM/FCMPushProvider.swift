import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import YonaDomain
import YonaObservability

/// The Firebase Cloud Messaging HTTP v1 client (push.md): one message per request, decisions on the
/// `errorCode` of the error details rather than on the HTTP status.
package struct FCMPushProvider: PushProvider {
    package let endpoint: String
    package let projectID: String
    package let tokens: FCMAccessTokens
    package let client: HTTPClient
    package var timeout: TimeAmount = .seconds(10)
    package var metrics: YonaMetrics? = nil
    /// Says why a request failed on the way (a refused connection, a TLS failure, a timeout): the outcome the outbox
    /// sees is only "NETWORK". Nothing personal is in these errors (no body, no token).
    package var logger: Logger? = nil
    package var name: String { "fcm" }

    package func send(_ push: OutgoingPush) async -> PushOutcome {
        guard case .firebase(let token) = push.address else { return .rejected(code: "NOT_A_FIREBASE_ADDRESS") }
        return await send(PushMessage.make(token: token, push: push))
    }

    package func send(_ message: PushMessage) async -> PushOutcome {
        do {
            var answer = try await post(message, accessToken: try await tokens.token())
            if answer.isBareUnauthorized {
                // The access token expired early: refresh it once, then try once more.
                await tokens.invalidate(answer.accessToken)
                answer = try await post(message, accessToken: try await tokens.token())
                if answer.isBareUnauthorized { return .retry(after: nil, quota: false, code: "UNAUTHENTICATED") }
            }
            return Self.outcome(of: answer)
        } catch is FCMAccessTokens.GrantFailed {
            return .retry(after: nil, quota: false, code: "OAUTH_GRANT_FAILED")
        } catch {
            logger?.warning("FCM request failed", metadata: ["error": .string(String(reflecting: error))])
            return .retry(after: nil, quota: false, code: "NETWORK")
        }
    }

    package struct Answer {
        package let status: UInt
        package let retryAfter: TimeInterval?
        package let error: FCMErrorBody.Body?
        package let accessToken: String

        package var isBareUnauthorized: Bool { status == 401 && (error?.fcmErrorCode == nil) }
    }

    private func post(_ message: PushMessage, accessToken: String) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(endpoint)/v1/projects/\(projectID)/messages:send")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(message.body())
        let start = ContinuousClock.now
        defer { metrics?.fcmRequest(duration: ContinuousClock.now - start) }
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: 256 * 1024)
        let error = response.status == .ok ? nil : (try? JSONDecoder().decode(FCMErrorBody.self, from: Data(body.readableBytesView)))?.error
        return Answer(
            status: response.status.code, retryAfter: Self.retryAfter(response.headers.first(name: "Retry-After")),
            error: error, accessToken: accessToken)
    }

    /// push.md's table.
    package static func outcome(of answer: Answer) -> PushOutcome {
        if answer.status == 200 { return .delivered }
        let code = answer.error?.fcmErrorCode ?? answer.error?.status ?? "HTTP_\(answer.status)"
        if let reason = answer.error?.apnsReason, reason == "Unregistered" || reason == "BadDeviceToken" {
            return .tokenInvalid(reason: "APNS_\(reason.uppercased())")
        }
        switch code {
        case "UNREGISTERED":
            return .tokenInvalid(reason: code)
        case "INVALID_ARGUMENT":
            return answer.error?.hasBadRequest == true ? .rejected(code: "INVALID_ARGUMENT_PAYLOAD") : .tokenInvalid(reason: code)
        case "SENDER_ID_MISMATCH", "THIRD_PARTY_AUTH_ERROR":
            return .rejected(code: code)
        case "QUOTA_EXCEEDED":
            return .retry(after: answer.retryAfter, quota: true, code: code)
        default:
            return .retry(after: answer.retryAfter, quota: false, code: code)
        }
    }

    /// `Retry-After` in seconds or as an HTTP date.
    package static func retryAfter(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        if let seconds = TimeInterval(header.trimmingCharacters(in: .whitespaces)) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: header).map { max(0, $0.timeIntervalSinceNow) }
    }

    package init(
        endpoint: String, projectID: String, tokens: FCMAccessTokens, client: HTTPClient, timeout: TimeAmount = .seconds(10),
        metrics: YonaMetrics? = nil, logger: Logger? = nil
    ) {
        self.endpoint = endpoint
        self.projectID = projectID
        self.tokens = tokens
        self.client = client
        self.timeout = timeout
        self.metrics = metrics
        self.logger = logger
    }
}

/// FCM's error body: `{"error":{"code","message","status","details":[{"@type", "errorCode"|"reason"|...}]}}`.
package struct FCMErrorBody: Decodable {
    package struct Detail: Decodable {
        package let type: String
        package let errorCode: String?
        package let reason: String?
        package enum CodingKeys: String, CodingKey {
            case type = "@type"
            case errorCode, reason
        }
    }
    package struct Body: Decodable {
        package let code: Int?
        package let status: String?
        package let details: [Detail]?

        package var fcmErrorCode: String? { details?.first { $0.type.hasSuffix("google.firebase.fcm.v1.FcmError") }?.errorCode }
        package var apnsReason: String? { details?.first { $0.type.hasSuffix("google.firebase.fcm.v1.ApnsError") }?.reason }
        package var hasBadRequest: Bool { details?.contains { $0.type.hasSuffix("google.rpc.BadRequest") } ?? false }
    }
    package let error: Body
}
