import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import YonaDomain

/// The Firebase Cloud Messaging HTTP v1 client (push.md): one message per request, decisions on the
/// `errorCode` of the error details rather than on the HTTP status.
struct FCMPushProvider: PushProvider {
    let endpoint: String
    let projectID: String
    let tokens: FCMAccessTokens
    let client: HTTPClient
    var timeout: TimeAmount = .seconds(10)
    var metrics: YonaMetrics? = nil
    /// Says why a request failed on the way (a refused connection, a TLS failure, a timeout): the outcome the outbox
    /// sees is only "NETWORK". Nothing personal is in these errors (no body, no token).
    var logger: Logger? = nil
    var name: String { "fcm" }

    /// The provider's own HTTP client. The shared client keeps at most 8 HTTP/1.1 connections per host, which capped
    /// the drain far below `concurrency` requests in flight; this one allows that many. Over TLS it negotiates HTTP/2
    /// by ALPN (fcm.googleapis.com speaks it: one connection carries ~100 streams). FCM's answers are small and not
    /// compressed, so there is no decompressor in the pipeline. `trustRootsPEM` adds roots to the system's.
    static func makeClient(concurrency: Int, trustRootsPEM: String?) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRootsPEM {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(trustRootsPEM.utf8)))]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, concurrency)),
            decompression: .disabled)
        configuration.httpVersion = .automatic
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    func send(_ message: PushMessage) async -> PushOutcome {
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

    struct Answer {
        let status: UInt
        let retryAfter: TimeInterval?
        let error: FCMErrorBody.Body?
        let accessToken: String

        var isBareUnauthorized: Bool { status == 401 && (error?.fcmErrorCode == nil) }
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
    static func outcome(of answer: Answer) -> PushOutcome {
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
    static func retryAfter(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        if let seconds = TimeInterval(header.trimmingCharacters(in: .whitespaces)) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: header).map { max(0, $0.timeIntervalSinceNow) }
    }
}

/// FCM's error body: `{"error":{"code","message","status","details":[{"@type", "errorCode"|"reason"|...}]}}`.
struct FCMErrorBody: Decodable {
    struct Detail: Decodable {
        let type: String
        let errorCode: String?
        let reason: String?
        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case errorCode, reason
        }
    }
    struct Body: Decodable {
        let code: Int?
        let status: String?
        let details: [Detail]?

        var fcmErrorCode: String? { details?.first { $0.type.hasSuffix("google.firebase.fcm.v1.FcmError") }?.errorCode }
        var apnsReason: String? { details?.first { $0.type.hasSuffix("google.firebase.fcm.v1.ApnsError") }?.reason }
        var hasBadRequest: Bool { details?.contains { $0.type.hasSuffix("google.rpc.BadRequest") } ?? false }
    }
    let error: Body
}
